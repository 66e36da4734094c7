"""The fixtures a call is made of; `pytest --fixtures` lists them.

Every task item's body (`collect.play_task_attempt`) is a plain function of these. A team replaces
a part the pytest way: a fixture of the same name in its `conftest.py` (or test module) wins, e.g.

    @pytest.fixture
    def callm_caller(callm_task, callm_model):
        return MyCaller(callm_task.task)

Scopes keep a run fast: the event loop, tool server and model clients are per process (an xdist
worker); the call's database, model state, caller and line are per attempt. For an attempt that is
resumed or rescored nothing is played, and the per-attempt fixtures are None; so they are for an
attempt whose call was played ahead (`--callm-concurrency`, only when none of these is overridden).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn

import pytest

from pytest_callm.call.caller import Caller
from pytest_callm.model import redact
from pytest_callm.model.protocol import Model, ModelAccessError
from pytest_callm.phone.line import Line
from pytest_callm.runs.attempts import AttemptRunner, Played
from pytest_callm.runs.runtime import Participants, make_call_id
from pytest_callm.saved.rundir import RunDirWriteError
from pytest_callm.toolserver.client import ToolServerMismatch
from pytest_callm.pytest_plugin.collect import TaskAttempt, callm_state
from pytest_callm.pytest_plugin.live_calls import live_calls
from pytest_callm.pytest_plugin.python_tasks import PythonTask, python_task_attempt

PLUGIN_MODULE = "pytest_callm.pytest_plugin.plugin"
DEFAULTS = "callm_defaults"  # item attribute: the model and caller our fixtures built (reruns need fresh ones)


@dataclass(frozen=True)
class CallDatabase:
    """One call's own SQLite database on the tool server, named by its call id."""

    pack: str
    call_id: str


def custom_caller(config: pytest.Config) -> str | None:
    """Who plugs in a caller of their own, if anyone: a `callm_caller` fixture in a conftest or
    plugin (found once conftests are loaded, before any worker starts), or the hook (its alias).
    Such a run needs no caller model and no caller key."""
    for plugin in config.pluginmanager.get_plugins():
        # This module's fixture, and the plugin module that imports it so pytest finds it, are ours.
        if getattr(plugin, "__name__", "") not in (__name__, PLUGIN_MODULE) \
                and callable(getattr(plugin, "callm_caller", None)):
            return "callm_caller fixture"
    if config.hook.pytest_callm_make_caller.get_hookimpls():
        return "pytest_callm_make_caller"
    return None


@pytest.fixture(scope="session")
def callm_runtime(request: pytest.FixtureRequest):
    """Per process (per xdist worker): plays, resumes or rescores attempts. Starts the event loop,
    tool server and model clients only when an attempt has to be played."""
    state = callm_state(request.config)
    runner = state.run.attempt_runner()
    runner.watch = live_calls(request.config, state.run)  # a small run's calls shown as they play
    yield runner
    try:
        state.keep_latency_sample(runner.latency_sample())
    finally:
        runner.close()


@pytest.fixture
def callm_task(request: pytest.FixtureRequest, callm_runtime: AttemptRunner) -> TaskAttempt:
    """The task, pack and attempt of this item: a task.json item's, or a Python test's marked
    `@pytest.mark.callm_task(data)` (see `pytest_callm.pytest_plugin.python_tasks`)."""
    attempt = getattr(request.node, "callm_attempt", None)
    if attempt is None:
        if not isinstance(getattr(request, "param", None), PythonTask):
            pytest.fail(f"{request.node.nodeid}: callm_task needs a task: mark the test "
                        "@pytest.mark.callm_task(data) with a task file's fields", pytrace=False)
        attempt = python_task_attempt(request, callm_runtime)
        request.node.callm_attempt = attempt  # the summary counts this test as an attempt of the task
    return attempt


@pytest.fixture
def callm_play(request: pytest.FixtureRequest, callm_task: TaskAttempt, callm_runtime: AttemptRunner,
               callm_model, callm_caller, callm_line, callm_call_db):
    """`call = callm_play()` plays this item's call once (resumes or rescores it when the run says
    so) with the fixtures' model, caller and line on the call's own database, and gives what a test
    asserts on: `call.passed`, `call.explain()`, `call.tool_calls`, `call.handoffs`,
    `call.final_state`, `call.trajectory`, `call.verdict`."""
    item = request.node
    played: list[Played] = []

    def play() -> Played:
        if played:
            return played[0]
        who = Participants(callm_model, callm_caller, callm_line) if callm_call_db is not None else None
        ours = item.__dict__.get(DEFAULTS, {})
        # A rerun after an infrastructure failure needs a fresh model and caller: ours can be rebuilt.
        rerun = ours.get("model") is callm_model and ours.get("caller") is callm_caller
        try:
            done = callm_runtime.play(callm_task.task, callm_task.pack, callm_task.attempt, who,
                                      callm_call_db.call_id if callm_call_db is not None else None, rerun=rerun)
        except ModelAccessError as e:
            # Every other attempt would fail the same way: stop the whole run (all xdist workers) with
            # this one message, and leave this attempt unplayed rather than failed.
            request.session.shouldstop = redact.text(f"callm stopped the run: {e}")
            pytest.skip("not played: the model server refused the run or died (see the message at the end)")
        except ToolServerMismatch as e:  # so would every attempt played against another server's packs
            stop_for_tool_server(request, e)
        except RunDirWriteError as e:
            # The run folder takes no more: every later attempt would be lost the same way. What was
            # saved is intact; the run stops with one line saying so, and a resume plays the rest.
            callm_state(request.config).run.write_failure = e
            request.session.shouldstop = f"callm stopped the run: {e}"
            pytest.skip(f"not saved: {e} (see the message at the end)")
        item.trajectory, item.verdict, item.usage = done.trajectory, done.verdict, done.usage
        played.append(done)
        return done

    return play


@pytest.fixture(scope="session")
def callm_tool_server(request: pytest.FixtureRequest, callm_runtime: AttemptRunner):
    """Per process: the client of the tool server (started here on 127.0.0.1, or the one named by
    --callm-tool-server). Requested only by attempts that are played."""
    try:
        return callm_runtime.started().tools
    except ToolServerMismatch as e:
        stop_for_tool_server(request, e)


def stop_for_tool_server(request: pytest.FixtureRequest, e: ToolServerMismatch) -> NoReturn:
    """The server named by --callm-tool-server serves other packs than the run's: every attempt would
    be scored against them. The run stops with this one message; no attempt is played or counted."""
    request.session.shouldstop = f"callm stopped the run: --callm-tool-server: {e}"
    pytest.skip("not played: the named tool server does not serve this run's packs (see the message at the end)")


def will_play(item: pytest.Item, runner: AttemptRunner) -> bool:
    """Whether the item's attempt is played (asked once per item: resuming reads the run directory)."""
    cache = item.__dict__.setdefault(DEFAULTS, {})
    if "played" not in cache:
        attempt: TaskAttempt = item.callm_attempt
        cache["played"] = runner.will_play(attempt.task, attempt.attempt)
    return cache["played"]


def _played(request: pytest.FixtureRequest, task: TaskAttempt, runner: AttemptRunner) -> bool:
    """Whether this item's fixtures play its call: not when it is resumed, rescored or played ahead."""
    return will_play(request.node, runner) and not runner.in_flight.has(task.task, task.attempt)


@pytest.fixture
def callm_call_db(request: pytest.FixtureRequest, callm_task: TaskAttempt, callm_runtime: AttemptRunner):
    """This attempt's own database on the tool server: created from the pack's seed for the attempt,
    dropped after it (kept under `<run>/calls/` with --callm-keep-calls). None when not played."""
    if not _played(request, callm_task, callm_runtime):
        yield None
        return
    request.getfixturevalue("callm_tool_server")  # only a played attempt needs the server up
    runtime = callm_runtime.started()
    db = CallDatabase(callm_task.pack.name, make_call_id(callm_task.task.task_id, callm_task.attempt))
    runtime.start_call(callm_task.pack, db.call_id, callm_task.task.records)
    yield db
    runtime.forget_call(callm_task.pack, db.call_id)


@pytest.fixture
def callm_model(request: pytest.FixtureRequest, callm_task: TaskAttempt, callm_runtime: AttemptRunner) -> Model | None:
    """The model under test for this call: the oracle replaying the task's answer key, or the
    process's streaming client for --callm-model. None when not played."""
    if not _played(request, callm_task, callm_runtime):
        return None
    model = callm_runtime.started().model_for(callm_task.task, callm_task.pack)
    request.node.__dict__.setdefault(DEFAULTS, {})["model"] = model
    return model


@pytest.fixture
def callm_caller(request: pytest.FixtureRequest, callm_task: TaskAttempt, callm_runtime: AttemptRunner,
                 callm_model: Model | None) -> Caller | None:
    """The caller of this call (`async respond(agent_said) -> CallerTurn`): the oracle's scripted
    caller, a `pytest_callm_make_caller` hook's (kept as an alias of overriding this fixture), or the
    simulated caller on --callm-caller-model. Override it to plug in your own. None when not played."""
    if callm_model is None:
        return None
    caller = callm_runtime.started().caller_for(callm_task.task, callm_task.pack, callm_task.attempt, callm_model)
    request.node.__dict__.setdefault(DEFAULTS, {})["caller"] = caller
    return caller


@pytest.fixture
def callm_line(request: pytest.FixtureRequest, callm_task: TaskAttempt, callm_runtime: AttemptRunner) -> Line | None:
    """The phone line between caller and model (`transmit(said, turn) -> Heard`), per --callm-line:
    its draws depend only on task, attempt and turn. Override it to hear the caller your way. None
    when not played."""
    if not _played(request, callm_task, callm_runtime):
        return None
    return callm_runtime.started().line_for(callm_task.task, callm_task.attempt)
