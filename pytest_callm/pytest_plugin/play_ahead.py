"""--callm-concurrency=N: up to N calls in flight in each process, while pytest runs one item at a time.

Before each item runs, the attempts this process runs next are found (the session's items in order,
or the xdist worker's queue) and handed to `CallsInFlight.play_ahead`: their calls start on the
runtime's loop, N at a time. Each item then takes its own call's result, so items are still reported
one by one, in order, with their own verdicts, and -x, --maxfail and Ctrl-C stop the run as usual:
the calls still in flight are cancelled when the test loop ends, and a resumed run plays them.

An item is played ahead only when the call is wholly the plugin's: a task file's item whose call
fixtures (`callm_task`, `callm_play`, `callm_model`, `callm_caller`, `callm_line`, `callm_call_db`)
are not overridden, that carries no skip mark, and whose attempt is played (not resumed or rescored). Any other item plays its own call as before, while
the calls played ahead go on.

The calls started are those of the next 2N items at most, N running at a time: a call that ends frees
its slot for the next item's call at once, while pytest may still be waiting on an earlier, slower one.
Under xdist the controller deals items to workers a few at a time; `DeepQueues` keeps every worker's
queue at least 2N deep, so a worker knows enough of what comes next to keep N calls in flight. When
-x or --maxfail stops the run, it takes the queued items back from the workers (xdist alone would let
each run its whole queue first), and each worker cancels their calls.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_callm.pytest_plugin import fixtures
from pytest_callm.pytest_plugin.collect import TaskItem, callm_state

# The fixtures that make up a call: one overridden in a conftest means the item plays its own call.
CALL_FIXTURES = ("callm_task", "callm_play", "callm_model", "callm_caller", "callm_line", "callm_call_db")
AHEAD = "callm_ahead"  # item attribute: (task, pack, attempt) when the item can be played ahead, else None


def plays_own_fixtures(item: pytest.Item) -> bool:
    """Whether every call fixture the item uses is the plugin's own."""
    defs = item._fixtureinfo.name2fixturedefs
    return all(name in defs and defs[name][-1].func.__module__ == fixtures.__name__ for name in CALL_FIXTURES)


def may_be_skipped(item: pytest.Item) -> bool:
    """A skip or skipif mark, or xfail(run=False): pytest decides at setup, and a skipped item's call
    must never be played (nor paid for, nor saved)."""
    return (any(item.iter_markers("skip")) or any(item.iter_markers("skipif"))
            or any(m.kwargs.get("run") is False for m in item.iter_markers("xfail")))


def ahead_entry(item: pytest.Item, runner) -> tuple[Any, Any, int] | None:
    """(task, pack, attempt) when the item's call can be played ahead; decided once per item."""
    if AHEAD not in item.__dict__:
        try:
            ok = (isinstance(item, TaskItem) and plays_own_fixtures(item) and not may_be_skipped(item)
                  and fixtures.will_play(item, runner))
        except Exception:  # e.g. a saved attempt that cannot be read: the item's own fixtures say so
            ok = False
        item.__dict__[AHEAD] = (item.task, item.pack, item.attempt) if ok else None
    return item.__dict__[AHEAD]


def _worker_queue(config: pytest.Config):
    """The xdist worker's interactor (it holds the queue of items dealt to this worker), or None."""
    for plugin in config.pluginmanager.get_plugins():
        if hasattr(plugin, "torun") and hasattr(plugin, "nextitem_index"):
            return plugin
    return None


def upcoming_items(item: pytest.Item, count: int) -> list[pytest.Item]:
    """This item and up to `count - 1` items this process runs after it, in order."""
    session = item.session
    interactor = _worker_queue(item.config) if hasattr(item.config, "workerinput") else None
    if interactor is None:
        positions = session.__dict__.setdefault("callm_positions", {})
        if not positions:
            positions.update((id(it), i) for i, it in enumerate(session.items))
        start = positions.get(id(item))
        return [item] if start is None else session.items[start:start + count]
    indices = [interactor.nextitem_index]
    with interactor.torun.lock() as queue:
        indices += list(queue)[:count]
    # Beyond the current item, only those a worker knows; the shutdown marker is not an index.
    return [item, *(session.items[i] for i in indices if isinstance(i, int))][:count]


class PlayAhead:
    NAME = "callm-play-ahead"

    def __init__(self, size: int):
        self.size = size
        self.lookahead = 2 * size

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem) -> None:
        runner = callm_state(item.config).run.attempt_runner()
        # Looking further than N ahead lets a call start as soon as another ends, even while this
        # item's call, the one pytest waits on, is still running.
        runner.in_flight.play_ahead(lambda: [ahead_entry(it, runner) for it in upcoming_items(item, self.lookahead)])

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session):
        try:
            return (yield)
        finally:
            # A stop (-x, --maxfail, a refused key, Ctrl-C) leaves calls no item will take.
            runner = callm_state(session.config).run.runner
            if runner is not None:
                runner.in_flight.cancel()


def deep_queues(config: pytest.Config, log, depth: int):
    """xdist's load scheduling, with every worker's queue kept at least `depth` items deep."""
    from xdist.scheduler import LoadScheduling

    class DeepQueues(LoadScheduling):
        def _top_up(self, node, target: int = depth) -> None:
            short = target - len(self.node2pending[node])
            if self.pending and short > 0 and not node.shutting_down:
                self._send_tests(node, short)

        def schedule(self) -> None:
            super().schedule()
            # The first deal: an even share each, up to `depth` (the rest as workers need more).
            share = -(-len(self.collection or ()) // max(len(self.nodes), 1))
            for node in self.nodes:
                self._top_up(node, min(depth, share))

        def check_schedule(self, node, duration: float = 0) -> None:
            if getattr(config.pluginmanager.getplugin("dsession"), "shouldstop", False):
                # -x or --maxfail: xdist would let each worker run its whole (deep) queue first.
                for each in self.nodes:
                    self._take_back(each)
                return
            self._top_up(node)
            super().check_schedule(node, duration)

        def _take_back(self, node) -> None:
            # The worker holds the item it runs and the next one outside its queue; one more is left as
            # margin (a steal naming an item the worker has taken meanwhile is refused whole).
            queued = self.node2pending[node][3:]
            if queued:
                try:
                    node.send_steal(queued)
                except OSError:
                    pass  # that worker has already shut down (its run stopped: a full disk): nothing to take

        def remove_pending_tests_from_node(self, node, indices) -> None:
            # The worker's answer to a steal: those items will not run (the run is stopping).
            gone = set(indices)
            self.node2pending[node] = [i for i in self.node2pending[node] if i not in gone]

    return DeepQueues(config, log)


class DeepQueueScheduler:
    """Registered on the xdist controller when N > 1 and items are dealt by `--dist load`."""

    NAME = "callm-deep-queues"

    def __init__(self, depth: int):
        self.depth = depth

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):
        if config.getvalue("dist") != "load":
            return None
        return deep_queues(config, log, self.depth)
