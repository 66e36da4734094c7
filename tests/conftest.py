"""Shared fixtures of the project's own tests: the example pack, its tasks, a real tool server."""

from __future__ import annotations

import asyncio
import atexit
import faulthandler
import json
import os
import re
import uuid
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from pytest_callm import gc_pace
from pytest_callm.task.pack import load_pack
from pytest_callm.task.task_file import build_task, read_task_json
from pytest_callm.toolserver.process import ToolServer  # not server.py's re-export: FastAPI stays unimported

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parent.parent
# pytester gives each run it starts a HOME of its own (a fresh folder per test), and with it a fresh
# ~/.cache: every run that played a phone line parsed the pronouncing dictionary again and wrote its
# 10 MB index (`phone/sounds.py`), about a second of CPU each. The runs share the user's cache, as a
# user's runs do; tests of the cache itself point XDG_CACHE_HOME elsewhere.
os.environ.setdefault("XDG_CACHE_HOME", str(Path.home() / ".cache"))
# The workers play thousands of calls in their own process and keep large module fixtures (an
# environment of every task): the collector at a run's pace, as in the runs they start.
gc_pace.pace()


# Tests marked slow take minutes: the wheel built and installed from a package index (test_wheel.py), a
# real model on the CPU (test_local_model.py), NeMo Gym's own processes (test_rl_nemo_gym_real.py,
# test_rl_ng_run.py), an optimizer step (test_train_example.py). CI runs them in steps of their own (.ci/run).
def pytest_addoption(parser):
    parser.addoption("--run-slow", action="store_true", default=False, help="run the tests marked slow")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes minutes (a wheel, a real model, NeMo Gym, a training step); runs only with --run-slow")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "load":  # `-n` alone; another --dist is the caller's choice
        return None
    from xdist.scheduler import LoadScopeScheduling

    from suite_order import one_unit, per_test_costs, spread

    whole: dict[str, bool] = {}

    class ModulesThatAskForOneWorker(LoadScopeScheduling):
        """Each test is its own unit of work, but a module that asks for one worker is one unit
        (suite_order.one_unit); the units are handed out with the costly spread through the cheap
        (suite_order.spread), so that the share of tests done keeps pace with the time spent."""

        spread_out = False

        def _split_scope(self, nodeid: str) -> str:
            path = nodeid.split("::", 1)[0]
            if path not in whole:
                whole[path] = one_unit(config.rootpath / path)
            return path if whole[path] else nodeid

        def remove_node(self, node):
            """A crashed worker's test is reported once, as crashed, and not played again (xdist's
            LoadScope put it back in the queue with the rest of its unit: it killed the next worker
            too). And only the units it left unfinished go back in the queue: xdist put back the
            finished ones as well, and a worker handed one got nothing to run, so it waited for ever
            for the next test it needs before it runs the one it holds (the run hung, every worker idle)."""
            workload = self.assigned_work.get(node) or {}
            crashed = next((nodeid for unit in workload.values() for nodeid, done in unit.items() if not done), None)
            if crashed is None:
                return super().remove_node(node)
            for scope, unit in list(workload.items()):
                unit.pop(crashed, None)
                if all(unit.values()):  # nothing left to play in it
                    del workload[scope]
            super().remove_node(node)  # the rest goes back in the queue
            return crashed

        def schedule(self) -> None:
            """A worker started after the first hand-out (a crashed one's replacement) is given two
            units, as the first hand-out gives each: with one test it would wait for a second."""
            late = self.collection is not None
            super().schedule()
            if late:
                for node in self.nodes:
                    self._reschedule(node)

        def _assign_work_unit(self, node) -> None:
            if not self.spread_out:  # the first hand-out: the queue holds every unit, none given yet
                self.spread_out = True
                units = dict(self.workqueue)
                self.workqueue.clear()
                for name in spread(units, per_test_costs(), workers=max(len(self.nodes), 1)):
                    self.workqueue[name] = units[name]
            super()._assign_work_unit(node)

    return ModulesThatAskForOneWorker(config, log)


# Plugins installed beside ours that none of the runs the tests start uses (see `lean_pytest_runs`).
UNUSED_PLUGINS = "-p no:hypothesispytest -p no:anyio -p no:xdist.looponfail"


@pytest.fixture(scope="session", autouse=True)
def lean_pytest_runs():
    """The pytest runs the tests start (hundreds, and their xdist workers) load no plugin that none
    of them uses: hypothesis's imports all of hypothesis, its asserts rewritten from source, at every
    run's end (about 1.3 s of CPU a run); anyio's and xdist's looponfail cost 0.1 s and 0.04 s a process
    to import. And they may cache bytecode, as a usual install does (some sandboxes set
    PYTHONDONTWRITEBYTECODE): else every process compiles every module it imports, about 0.5 s of CPU
    each. A test that needs either setting sets it for its own run."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_ADDOPTS", " ".join(filter(None, [os.environ.get("PYTEST_ADDOPTS"), UNUSED_PLUGINS])))
        patch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
        yield


# Far past any test's time, on a loaded machine too: a test that takes longer hangs.
HANG_GUARD_S = 600


@pytest.fixture(scope="session")
def _imported_before_runs():
    """The openai SDK's HTTP stack, imported before any in-process pytester run: such a run takes
    modules it imported out of sys.modules again, and a later import made a second httpcore2 whose
    errors httpx2 (holding the first one's classes) no longer mapped, so a dropped stream or a timeout
    in a later test escaped as a raw httpcore2 error. So are the modules a run imports only when it
    needs them (the tool client's aiohttp, the model client's openai, the report's pages): else every
    in-process run imported them again, about half a second of CPU a run. A session fixture of
    `pytester`, not imports of this file: a pytest run of tests/ that starts no pytester (the suite
    order's own checks, each worker of theirs) spends no second on them."""
    import aiohttp  # noqa: F401
    import httpcore2  # noqa: F401
    import httpx2  # noqa: F401
    import jinja2  # noqa: F401

    import pytest_callm.model.client  # noqa: F401
    import pytest_callm.report.compare  # noqa: F401
    import pytest_callm.report.report_html  # noqa: F401
    import pytest_callm.saved.reader  # noqa: F401
    import pytest_callm.task.task_records  # noqa: F401


@pytest.fixture
def pytester(_imported_before_runs, pytester, monkeypatch):
    """pytest's own `pytester`, whose runs load no unused plugin either: it clears PYTEST_ADDOPTS for
    each test, and its runs then imported hypothesis again and again (in process, it takes what a run
    imported out of sys.modules afterwards).

    A run in process has no timeout, as a run in a process of its own had: a test that hangs past
    HANG_GUARD_S ends its worker with every thread's traceback (xdist reports the test failed and
    starts another) instead of stalling the suite."""
    monkeypatch.setenv("PYTEST_ADDOPTS", UNUSED_PLUGINS)
    faulthandler.dump_traceback_later(HANG_GUARD_S, exit=True)
    yield pytester
    faulthandler.cancel_dump_traceback_later()


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-slow"):
        return
    for item in items:
        if item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.skip(reason="slow: run with --run-slow (CI runs it in a step of its own)"))
EXAMPLE_PACK = REPO / "examples" / "industries" / "vet_clinic"
EXAMPLE_TASKS = REPO / "examples" / "tasks" / "vet_clinic"


class PackCall:
    """One phone call against a pack on a real tool server (`pack` names it in a subclass):
    `call.tool(name, **args)` returns the envelope, `ok` its data, `error` its error code."""

    pack = ""

    def __init__(self, http: httpx.Client):
        self.http = http
        self.id = uuid.uuid4().hex

    def tool(self, name: str, **arguments):
        response = self.http.post(f"/packs/{self.pack}/tools/{name}", json=arguments, headers={"X-Call-Id": self.id})
        assert response.status_code == 200, response.text
        return response.json()

    def start(self):
        response = self.http.post(f"/packs/{self.pack}/call", headers={"X-Call-Id": self.id})
        assert response.status_code == 200, response.text

    def state(self):
        response = self.http.get(f"/packs/{self.pack}/state", headers={"X-Call-Id": self.id})
        assert response.status_code == 200 and response.json()["ok"], response.text
        return response.json()["data"]

    def ok(self, name: str, **arguments):
        result = self.tool(name, **arguments)
        assert result["ok"], result
        return result["data"]

    def error(self, name: str, **arguments) -> str:
        result = self.tool(name, **arguments)
        assert not result["ok"], result
        return result["error_code"]


@contextmanager
def pack_server(pack_dir: Path):
    """A real tool server for one industry pack on loopback, and an HTTP client of it: the process's
    shared server for a pack it serves, else one of the pack's own."""
    if pack_dir.resolve() in {EXAMPLE_PACK, *(REPO / "industries").iterdir()}:
        with httpx.Client(base_url=shared_tool_server().url, timeout=10) as http:
            yield http
        return
    pack = load_pack(pack_dir)
    with ToolServer({pack.name: pack}) as server:
        with httpx.Client(base_url=server.url, timeout=10) as http:
            yield http


@pytest.fixture(scope="session")
def vet_pack():
    return load_pack(EXAMPLE_PACK)


_SHARED: list[ToolServer] = []


def shared_tool_server() -> ToolServer:
    """This process's real tool server on loopback, for the example pack and the shipped ones, started
    on first need and stopped as the process ends (each xdist worker has its own). The tests that
    play on unchanged packs share it: a server of their own cost each module about 1.2 s of CPU."""
    if not _SHARED:
        dirs = [EXAMPLE_PACK, *(d for d in sorted((REPO / "industries").iterdir()) if (d / "pack.json").is_file())]
        _SHARED.append(ToolServer({p.name: p for p in map(load_pack, dirs)}).start())
        atexit.register(_SHARED[0].stop)
    return _SHARED[0]


@pytest.fixture(scope="session")
def tool_server():
    """The process's shared tool server (`shared_tool_server`)."""
    return shared_tool_server()


@pytest.fixture
def example_tools(tool_server) -> str:
    """An ini line that points a project's runs at the session's tool server for the example pack:
    `callm_tool_server = URL`, the option a team uses to share one server among its runs.

    For the pytest runs the tests start on the unchanged example pack: each run starting a server of its
    own cost 0.8 s of CPU (most of it importing FastAPI), and those starts were a fifth of the suite's
    CPU. A test about the server a run starts, or whose pack differs from the example's, leaves it out."""
    return f"callm_tool_server = {tool_server.url}\n"


def own_tool_server(pytester) -> None:
    """A project made with `example_tools` whose runs start their own tool server again (a test of
    what that server does: the call databases it keeps)."""
    ini = pytester.path / "tox.ini"
    ini.write_text("".join(line for line in ini.read_text().splitlines(keepends=True)
                           if not line.startswith("callm_tool_server")))


@pytest.fixture
def runs_share_example_tools(tool_server, monkeypatch) -> None:
    """Every pytest run this test starts, in process or not, uses the session's tool server for the
    example pack (`--callm-tool-server` in PYTEST_ADDOPTS; see `example_tools`): for modules whose runs
    all play the unchanged example pack."""
    monkeypatch.setenv("PYTEST_ADDOPTS", f"{os.environ.get('PYTEST_ADDOPTS', '')} --callm-tool-server={tool_server.url}")


@pytest.fixture
def load_task(vet_pack):
    """Load an example task by id, optionally changed by `edit(data)` first."""

    def load(task_id: str, edit=None):
        path = EXAMPLE_TASKS / task_id / "task.json"
        data = read_task_json(path)
        if edit is not None:
            data = json.loads(json.dumps(data))
            edit(data)
        return build_task(path, data, vet_pack)

    return load


@pytest.fixture
def run(tool_server):
    """Run a coroutine on a fresh event loop (each test gets its own clients)."""

    def run_(coro):
        return asyncio.run(coro)

    return run_


@pytest.fixture
def play(vet_pack, tool_server):
    """Run one call through the real engine and tool server with a given model (and caller)."""
    from pytest_callm.call.engine import CallLimits, run_call
    from pytest_callm.phone.line import CleanLine
    from pytest_callm.call.oracle import ScriptedCaller
    from pytest_callm.runs.runtime import make_call_id
    from pytest_callm.toolserver.client import ToolClient

    def play_(model, caller=None, limits=CallLimits(), task_id="test", pack=None):
        async def go():
            tools = ToolClient(tool_server.url)
            try:
                return await run_call(pack=pack or vet_pack, model=model, caller=caller or ScriptedCaller(model),
                                      line=CleanLine(), tools=tools, call_id=make_call_id(task_id, 1),
                                      task_id=task_id, attempt=1, limits=limits)
            finally:
                await tools.aclose()

        return asyncio.run(go())

    return play_


@pytest.fixture(scope="module")
def auditor():
    """The blind audits' player (tests/agent_audit.py): one scripted model server and runtime per file."""
    from agent_audit import Auditor

    player = Auditor()
    yield player
    player.close()
