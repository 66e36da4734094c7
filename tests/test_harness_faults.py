"""The harness's own faults are rerun, never scored, never silent (issue 28, item 2).

- A connection to the tool server that drops (a keep-alive connection the server closed, a reset) is
  sent again on a fresh one; a tool request carries an id, so one whose reply was lost after the tool
  ran is answered from what the server kept, and the tool does not run twice.
- An exception of the harness's own while an attempt plays (here: a pack's tool that crashes once, a
  500 from the real tool server) reruns the attempt; the trajectory and the summary say so, and an
  attempt whose rerun fails too is not scored.
- Nothing a process's threads need is imported lazily in those threads (two threads importing
  modules that pytest rewrites raced in CPython's AST code: `SystemError: AST constructor recursion
  depth mismatch`).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import threading
import uuid

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver import calldb
from pytest_callm.toolserver.client import ToolClient, ToolServerError
from pytest_callm.toolserver.server import ToolServer

pytestmark = pytest.mark.xdist_group("harness_faults")  # its module fixture plays runs once, on one worker

DANA = {"full_name": "Dana Whitfield", "phone": "503-555-0142"}


class DroppingProxy:
    """A TCP proxy on loopback in front of a server. `drop("request")` makes it close the next
    connection that sends a request, unread (a keep-alive connection the server closed); `drop("reply")`
    passes the next request on and closes the client's connection instead of returning the reply (the
    tool ran, its reply was lost). Each drop happens once, then it is a plain proxy again."""

    def __init__(self, target: str):
        host, port = target.removeprefix("http://").split(":")
        self.target = (host, int(port))
        self.armed: str | None = None
        self.dropped = threading.Event()
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.ready.wait(10)
        self.url = f"http://127.0.0.1:{self.port}"

    def drop(self, when: str) -> None:
        self.dropped.clear()
        self.armed = when

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        server = self.loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = server.sockets[0].getsockname()[1]
        self.ready.set()
        self.loop.run_forever()

    async def _serve(self, client_r, client_w) -> None:
        server_r, server_w = await asyncio.open_connection(*self.target)

        async def upstream():
            while data := await client_r.read(65536):
                if self.armed == "request":
                    self.armed = None
                    client_w.transport.abort()  # closed before the server saw the request
                    server_w.close()
                    self.dropped.set()
                    return
                server_w.write(data)
                await server_w.drain()
            server_w.close()

        async def downstream():
            while data := await server_r.read(65536):
                if self.armed == "reply":
                    self.armed = None
                    client_w.transport.abort()  # the server answered; the client never hears it
                    server_w.close()
                    self.dropped.set()
                    return
                client_w.write(data)
                await client_w.drain()
            client_w.close()

        await asyncio.gather(upstream(), downstream(), return_exceptions=True)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def proxied(tmp_path_factory):
    pack = load_pack(EXAMPLE_PACK)
    with ToolServer({pack.name: pack}) as server:
        proxy = DroppingProxy(server.url)
        try:
            yield pack, proxy
        finally:
            proxy.close()


def _run(coro):
    return asyncio.run(coro)


def test_a_tool_request_whose_reply_was_lost_is_sent_again_and_the_tool_runs_once(proxied):
    pack, proxy = proxied
    call = "drop-" + uuid.uuid4().hex

    async def go():
        client = ToolClient(proxy.url)
        try:
            assert (await client.call(pack.name, call, "verify_owner", DANA))["ok"]
            proxy.drop("reply")
            booked = await client.call(pack.name, call, "book_appointment", {"pet_name": "Biscuit", "slot_id": "S-101"})
            return booked, await client.state(pack.name, call)
        finally:
            await client.aclose()

    booked, state = _run(go())
    assert proxy.dropped.is_set()
    assert booked["ok"], booked  # the kept reply: a second booking would have found the slot taken
    assert [a["slot_id"] for a in state["appointments"] if a.get("slot_id") == "S-101"] == ["S-101"]


@pytest.mark.parametrize("method", ["state", "tool"])
def test_a_request_on_a_connection_that_dropped_is_sent_again(proxied, method):
    pack, proxy = proxied
    call = "drop-" + uuid.uuid4().hex

    async def go():
        client = ToolClient(proxy.url)
        try:
            await client.start_call(pack.name, call)  # the connection is kept alive after this
            proxy.drop("request")
            if method == "state":
                return await client.state(pack.name, call)
            return await client.call(pack.name, call, "verify_owner", DANA)
        finally:
            await client.aclose()

    answer = _run(go())
    assert proxy.dropped.is_set()
    assert answer["ok"] if method == "tool" else "appointments" in answer


def test_a_server_that_cannot_be_reached_is_an_infrastructure_error_after_three_tries():
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def go():
        client = ToolClient(f"http://127.0.0.1:{port}")
        try:
            await client.state("vet_clinic", "any")
        finally:
            await client.aclose()

    with pytest.raises(ToolServerError, match="failed 3 times"):
        _run(go())


def test_the_client_lets_an_idle_connection_go_before_the_server_would():
    # uvicorn closes an idle connection after its keep-alive; a request sent on it at that moment is
    # lost. The client's own keep-alive is shorter, so it never reuses one the server may be closing.
    assert calldb.CLIENT_KEEPALIVE_S < calldb.SERVER_KEEPALIVE_S
    import inspect

    from pytest_callm.toolserver import client, server

    assert "keepalive_timeout=CLIENT_KEEPALIVE_S" in inspect.getsource(client.ToolClient._session)
    assert "timeout_keep_alive=SERVER_KEEPALIVE_S" in inspect.getsource(server.serve)


# --- an exception of the harness's own during an attempt ---------------------------------------

CRASH_ONCE = '''

import os as _os

_CRASHES = {"left": int(_os.environ.get("CALLM_TEST_CRASHES", "1"))}


@tools.tool
def check_clinic_hours(ctx, day):
    """The same answer as the pack's, after crashing as many times as the test asks (a pack bug)."""
    if _CRASHES["left"] > 0:
        _CRASHES["left"] -= 1
        raise ZeroDivisionError("a bug in the pack, on purpose")
    return _check_clinic_hours(ctx, day)
'''


@pytest.fixture
def crashing_project(pytester):
    pack = pytester.path / "industries" / "vet_clinic"
    shutil.copytree(EXAMPLE_PACK, pack)
    source = (pack / "tools.py").read_text()
    original = "@tools.tool\ndef check_clinic_hours(ctx: ToolContext, day: str) -> dict:"
    assert original in source
    source = source.replace(original, "def _check_clinic_hours(ctx: ToolContext, day: str) -> dict:")
    (pack / "tools.py").write_text(source + CRASH_ONCE)
    shutil.copytree(EXAMPLE_TASKS / "C2-E1", pytester.path / "tasks" / "vet_clinic" / "C2-E1")
    pytester.makeini("[pytest]\n")
    return pytester


def test_a_harness_fault_during_an_attempt_reruns_it_and_the_run_says_so(crashing_project, monkeypatch):
    monkeypatch.setenv("CALLM_TEST_CRASHES", "1")
    out = crashing_project.path / "run"
    result = crashing_project.runpytest_subprocess("--callm-model=oracle", "--callm-attempts=1", f"--callm-out={out}")
    result.assert_outcomes(passed=1)
    text = result.stdout.str()
    assert "attempts played again after a harness or model-server fault: 1" in text, text
    report = json.loads((out / "report.json").read_text())
    (attempt,) = report["attempts"]
    assert attempt["passed"] is True
    (why,) = attempt["rerun_because"]
    assert "HTTP 500" in why and "ZeroDivisionError" in why, why
    assert report["summary"]["rerun"] == 1
    saved = json.loads(next(out.glob("trajectories/*/*/attempt-1.json")).read_text())
    assert saved["trajectory"]["reruns"] == 1


def test_an_attempt_whose_rerun_fails_too_is_not_scored(crashing_project, monkeypatch):
    monkeypatch.setenv("CALLM_TEST_CRASHES", "2")
    result = crashing_project.runpytest_subprocess("--callm-model=oracle", "--callm-attempts=1")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "attempts not scored (in no denominator): 1 (infrastructure 1)" in text, text
    assert "failed 2 times on the harness's or the model server's side" in text


# --- imports and threads ------------------------------------------------------------------------

WATCH_IMPORTS = '''
import sys
import threading

LOADED_OFF_MAIN = []


class _Watch:
    """Notes every project module first loaded by a thread other than the main one."""

    def find_spec(self, name, path=None, target=None):
        if name.startswith("pytest_callm") and threading.current_thread() is not threading.main_thread():
            LOADED_OFF_MAIN.append((threading.current_thread().name, name))
        return None


sys.meta_path.insert(0, _Watch())


def pytest_unconfigure(config):
    import json
    import os

    who = getattr(config, "workerinput", {}).get("workerid", "main")
    with open(f"off_main-{who}-{os.getpid()}.json", "w") as f:
        json.dump(LOADED_OFF_MAIN, f)
'''


@pytest.mark.parametrize("how", ["oracle", "oracle -n 2", "model"])
def test_threads_never_import_project_modules(pytester, openai_server, how):
    """Every module a call's threads use is imported before they start (in the main thread): the
    tool server's starter, the event loop's thread and the workers that score and save attempts. With
    a model: its client, the simulated caller and the phone line's dictionary too."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\n")
    pytester.makeconftest(WATCH_IMPORTS)
    args = ["--callm-model=oracle", "--callm-attempts=2"]
    if how == "model":
        openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent),
                            caller=ScriptCaller(["I'd like to book a check-up for my dog Biscuit.", "Thank you."]),
                            models=("agent-model", "caller-model"))
        (pytester.path / "models").mkdir()
        for name in ("agent", "caller"):
            (pytester.path / "models" / f"{name}.toml").write_text(
                f'model = "{name}-model"\nbase_url = "{openai_server.base_url}"\napi_key_env = ""\n')
        args = ["--callm-model=agent", "--callm-caller-model=caller", "--callm-attempts=3", "-k", "C2-E2",
                "--callm-concurrency=3"]
    result = pytester.runpytest_subprocess(*args, *how.split()[1:], "-p", "no:cacheprovider")
    assert result.ret in (0, 1), result.stdout.str()
    assert "attempts not scored (in no denominator): 0" in result.stdout.str(), result.stdout.str()
    files = sorted(pytester.path.glob("off_main-*.json"))
    assert any("-main-" in f.name for f in files) and any("-gw" in f.name for f in files) == ("-n" in how), files
    off_main = [entry for f in files for entry in json.loads(f.read_text())]
    assert off_main == [], off_main


def test_an_exception_is_ours_when_our_code_raised_it_and_yours_when_yours_did():
    """Ours (rerun, the harness's fault): raised in pytest_callm, or in the standard library called
    from it. Yours (that attempt's own error): raised in a caller, line or hook of your own."""
    from pytest_callm.model.output import parse_arguments
    from pytest_callm.runs.runtime import raised_by_us

    def caught(fn):
        try:
            fn()
        except Exception as e:  # noqa: BLE001
            return e
        raise AssertionError("did not raise")

    assert raised_by_us(caught(lambda: parse_arguments(None)))  # TypeError inside pytest_callm
    from pytest_callm.model.redact import public_url

    assert raised_by_us(caught(lambda: public_url(12345)))  # urllib raised, called from pytest_callm
    assert not raised_by_us(caught(lambda: json.loads("{")))  # json raised, called from this file
    assert not raised_by_us(caught(lambda: 1 / 0))  # this test file: someone else's code
