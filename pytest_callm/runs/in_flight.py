"""Calls played ahead: up to N calls in flight in one process, each handed to its own attempt.

A model call is almost all waiting on the network. The runner that plays attempt after attempt (pytest,
one item at a time) tells `play_ahead` how to list the attempts it runs next, in order; calls of the
first of them start on the runtime's event loop, where they progress together, up to `size` running
at once. When an attempt's turn comes, `take` gives its call's future; while the runner waits on it,
every call that ends makes room for the next attempt's call at once, so the slots stay busy even when
the attempt being waited on is the slowest. Attempts are still reported one by one, in order, each
with its own verdict.

A call ends by being saved (the runner does that as soon as it is scored), so nothing finished is lost
when the run stops: `cancel` stops the calls still in flight, each removing its database, and a resumed
run plays them again.
"""

from __future__ import annotations

import concurrent.futures
from concurrent.futures import FIRST_COMPLETED
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from pytest_callm.model.protocol import ModelAccessError
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task



class Runner(Protocol):
    """What plays the attempts (`attempts.AttemptRunner`), named by its shape: the runner keeps its
    calls in flight here, so this module must not import it back."""

    runtime: Any

    def started(self) -> Any: ...

    def play_async(self, task: Task, pack: Pack, attempt: int, who: Any) -> Awaitable[Any]: ...


Key = tuple[str, str, int]  # industry, task id, attempt
Entry = tuple[Task, Pack, int] | None  # an attempt that can be played ahead, or None for one that cannot
Upcoming = Callable[[], Sequence[Entry]]
RECHECK_S = 0.05


def key_of(task: Task, attempt: int) -> Key:
    return task.industry, task.task_id, attempt


def failed(error: BaseException) -> concurrent.futures.Future:
    """A call that could not start: its attempt takes the error as its own."""
    future = concurrent.futures.Future()
    future.set_exception(error)
    return future


def refused(future: concurrent.futures.Future) -> bool:
    """Whether the call ended on a refused key or model (then every other call would too)."""
    return future.done() and not future.cancelled() and isinstance(future.exception(), ModelAccessError)


class CallsInFlight:
    def __init__(self, runner: Runner, size: int):
        self.runner = runner
        self.size = size
        self._calls: dict[Key, concurrent.futures.Future[Any]] = {}  # started, not yet taken
        self._taken: set[Key] = set()  # handed to their attempts: never started again
        self._upcoming: Upcoming = lambda: ()

    def play_ahead(self, upcoming: Upcoming) -> None:
        """`upcoming()` lists the attempts this process runs next, in order, the current one first
        (asked again whenever a call ends: a worker's queue grows). Starts calls while fewer than
        `size` run; cancels calls whose attempt is no longer coming (taken by another worker)."""
        self._upcoming = upcoming
        self._top_up()

    def _top_up(self) -> None:
        if any(refused(f) for f in self._calls.values()):
            return  # the key or model was refused: the run stops, and no further call need try
        upcoming = self._upcoming()
        coming = {key_of(e[0], e[2]) for e in upcoming if e is not None}
        for key in [k for k in self._calls if k not in coming]:
            self._calls.pop(key).cancel()
        room = self.size - sum(1 for f in self._calls.values() if not f.done())
        start: dict[Key, tuple[Task, Pack, int]] = {}
        for entry in upcoming:
            if len(start) >= room:
                break
            key = key_of(entry[0], entry[2]) if entry is not None else None
            if key is not None and key not in self._calls and key not in self._taken:
                start.setdefault(key, entry)
        if not start:
            return
        try:
            runtime = self.runner.started()
        except Exception as e:  # e.g. the tool server did not start: each attempt fails with it, in order
            for key in start:
                self._calls[key] = failed(e)
            return
        # Built here, in the runner's thread, so a plugged-in caller factory runs where pytest's hooks
        # do (only a rerun after an infrastructure failure builds its own on the loop); all before any
        # starts, so the calls leave together.
        ready = {}
        for key, entry in start.items():
            try:
                ready[key] = (entry, runtime.participants(*entry))
            except (KeyboardInterrupt, SystemExit):
                raise
            except BaseException as e:  # no caller model, or a caller hook's pytest.skip: this attempt's own
                self._calls[key] = failed(e)
        for key, ((task, pack, attempt), who) in ready.items():
            self._calls[key] = runtime.submit(self.runner.play_async(task, pack, attempt, who))

    def has(self, task: Task, attempt: int) -> bool:
        return key_of(task, attempt) in self._calls

    def take(self, key: Key) -> concurrent.futures.Future[Any] | None:
        """The call played ahead for this attempt, ended (its `result()` is ready), or None. While
        waiting, each call that ends lets the next one start."""
        future = self._calls.get(key)
        if future is None:
            return None
        while not future.done():  # it stays in `_calls` meanwhile: it holds a slot
            running = [f for f in self._calls.values() if not f.done()]
            # Woken by any call that ends, and now and then anyway: a worker's queue grows as the
            # controller deals it more items, and those may fill free slots.
            concurrent.futures.wait(running, timeout=RECHECK_S, return_when=FIRST_COMPLETED)
            self._top_up()
        del self._calls[key]
        self._taken.add(key)
        return future

    def cancel(self) -> None:
        """Stop every call still in flight; each removes its database before this returns."""
        self._calls.clear()
        self._upcoming = lambda: ()
        if self.runner.runtime is not None:
            self.runner.runtime.cancel_all()
