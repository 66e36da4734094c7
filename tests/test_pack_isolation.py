"""What a team's pack may do to the process that runs it: nothing beyond its own call.

A copy of the example pack gains hostile tools: one that waits on a FIFO (it hangs until the test
writes to it, an event, never a timer), one that calls sys.exit(). They run on a real tool server on
loopback. One hung tool stalled the whole server (its tools ran on the event loop); sys.exit() in a
tool gave a 500 outside the envelope, and in tools.py ended the run with INTERNALERROR; a prompt path
could read any file of the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from pytest_callm.task.pack import PackError, load_pack
from pytest_callm.toolserver.client import ToolServerError
from pytest_callm.toolserver.in_process import InProcessTools
from pytest_callm.toolserver.lanes import Lanes
from pytest_callm.toolserver.server import CALL_ID_HEADER, ToolServer

DANA = {"full_name": "Dana Whitfield", "phone": "5035550142"}
HOSTILE_TOOLS = '''

import sys as _sys


@tools.tool
def wait_for(ctx: ToolContext, note: str) -> dict:
    with open(note, encoding="utf-8") as fifo:  # blocks until someone writes to the FIFO and closes it
        return {"heard": fifo.read()}


@tools.tool
def exit_now(ctx: ToolContext, note: str) -> dict:
    _sys.exit(note)


@tools.tool
def interrupt_now(ctx: ToolContext, note: str) -> dict:
    raise KeyboardInterrupt(note)
'''


def note_tool(name: str) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": f"Test tool {name}.",
        "parameters": {"type": "object", "properties": {"note": {"type": "string"}},
                       "required": ["note"], "additionalProperties": False}}}


def copy_pack(root: Path, name: str = "vet_clinic") -> Path:
    pack = root / name
    shutil.copytree(EXAMPLE_PACK, pack)
    return pack


@pytest.fixture(scope="module")
def hostile_pack(tmp_path_factory):
    root = copy_pack(tmp_path_factory.mktemp("packs"), "hostile_clinic")
    with open(root / "tools.py", "a", encoding="utf-8") as f:
        f.write(HOSTILE_TOOLS)
    tools = json.loads((root / "tools.json").read_text()) + [note_tool("wait_for"), note_tool("exit_now"),
                                                          note_tool("interrupt_now")]
    (root / "tools.json").write_text(json.dumps(tools))
    blueprint = json.loads((root / "agent_blueprint.json").read_text())
    blueprint["agents"]["records"]["tools"] += ["wait_for", "exit_now", "interrupt_now"]
    (root / "agent_blueprint.json").write_text(json.dumps(blueprint))
    return load_pack(root)


def served(pack, *extra: str) -> ToolServer:
    return ToolServer({pack.name: pack}, extra_args=extra)


def post(http: httpx.Client, pack: str, call_id: str, tool: str, args: dict) -> httpx.Response:
    return http.post(f"/packs/{pack}/tools/{tool}", json=args, headers={CALL_ID_HEADER: call_id})


def release(fifo: Path, text: str = "go") -> None:
    """Let a tool waiting on `fifo` go on (opening it for writing waits for the tool to open it too)."""
    with open(fifo, "w", encoding="utf-8") as f:
        f.write(text)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_other_calls_are_answered_while_one_tool_hangs(hostile_pack, tmp_path):
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    hung_call = uuid.uuid4().hex
    with served(hostile_pack) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        answer: dict = {}
        hung = threading.Thread(target=lambda: answer.setdefault(
            "r", post(http, hostile_pack.name, hung_call, "wait_for", {"note": str(fifo)})))
        hung.start()
        try:
            with httpx.Client(base_url=server.url, timeout=60) as other:  # its own connection
                for _ in range(3):  # other calls, one after another, all while the tool waits
                    r = post(other, hostile_pack.name, uuid.uuid4().hex, "verify_owner", DANA)
                    assert r.status_code == 200 and r.json()["ok"] is True, r.text
                assert other.get("/health").status_code == 200
            assert hung.is_alive() and "r" not in answer  # the hung tool is still waiting: proven concurrent
        finally:
            release(fifo, "released")
            hung.join()
        assert answer["r"].status_code == 200 and answer["r"].json()["data"] == {"heard": "released"}


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_tool_past_its_time_bound_is_the_tools_failure_in_the_envelope(hostile_pack, tmp_path):
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    call_id = uuid.uuid4().hex
    with served(hostile_pack, "--tool-time-bound-s", "0.5") as server, \
            httpx.Client(base_url=server.url, timeout=60) as http:
        try:
            r = post(http, hostile_pack.name, call_id, "wait_for", {"note": str(fifo)})
            assert r.status_code == 500, r.text
            body = r.json()
            assert set(body) == {"ok", "data", "error_code", "caller_safe_message"}
            assert body["ok"] is False and body["error_code"] == "tool_timed_out"
            assert "hostile_clinic.wait_for: it ran past the tool time bound of 0.5 s" in body["caller_safe_message"]
            # The call stays held by its tool (its database is in use there); other calls go on.
            again = post(http, hostile_pack.name, call_id, "verify_owner", DANA)
            assert again.status_code == 500 and again.json()["error_code"] == "tool_timed_out"
            assert post(http, hostile_pack.name, uuid.uuid4().hex, "verify_owner", DANA).json()["ok"] is True
        finally:
            release(fifo)


def test_hundreds_of_calls_in_flight_share_a_runner_thread_not_one_each():
    """An RL environment plays hundreds of episodes at once. With a thread for each request in flight,
    hundreds of threads contended for the GIL and a third of the tool server's CPU went to the kernel
    handing it between them. The work runs on one runner thread in turn (a fresh one only when a piece
    holds it past a few hundredths of a second, as a hung tool does above)."""
    before, peak = threading.active_count(), [0]

    def work() -> bool:
        peak[0] = max(peak[0], threading.active_count())
        time.sleep(0.001)  # lets the GIL go, as SQLite does
        return True

    async def play() -> list:
        lanes = Lanes()
        return await asyncio.gather(*(lanes.run(i, work) for i in range(300)))

    assert asyncio.run(play()) == [True] * 300
    # A thread a request took 47 more here; on a loaded machine a piece held past the hand-off by the
    # scheduler adds one for a moment: a margin, far below one each.
    assert peak[0] - before <= 12, f"{peak[0] - before} threads more for 300 calls in flight"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_process_runs_its_calls_work_on_a_runner_of_its_own():
    """A trainer may fork after using an environment: the parent's runner thread is not in the child."""
    async def pid_in_lane() -> int:
        return await asyncio.wait_for(Lanes().run("call", os.getpid), 60)

    assert asyncio.run(pid_in_lane()) == os.getpid()  # the parent has a runner now
    child = os.fork()
    if child == 0:  # the child: exit 0 only if its work ran, in the child
        ok = False
        try:
            ok = asyncio.run(pid_in_lane()) == os.getpid()
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_in_process_a_tool_past_its_time_bound_is_the_tools_failure_and_other_calls_go_on(hostile_pack, tmp_path):
    """The tools run in this process (`callm prove`, `callm generate`, the RL environments with
    `tools_in_process`): a hung tool ran on the caller's event loop and froze every episode on it, for
    ever. Now it runs in its call's lane: the other calls are answered meanwhile, and past the bound
    the call fails as behind the server, `tool_timed_out`, the error the engine plays again."""
    fifo = tmp_path / "never"
    os.mkfifo(fifo)
    # Were the tool on the loop, the test would hang on the FIFO: this lets it go, late, so it fails instead.
    unblock = threading.Timer(120, release, (fifo, "released by the test's watchdog"))
    unblock.start()
    tools = InProcessTools({hostile_pack.name: hostile_pack}, tool_time_bound_s=0.5)
    pack, hung, other = hostile_pack.name, uuid.uuid4().hex, uuid.uuid4().hex

    async def play() -> None:
        await tools.start_call(pack, hung)
        await tools.start_call(pack, other)
        waiting = asyncio.create_task(tools.call(pack, hung, "wait_for", {"note": str(fifo)}))
        await asyncio.sleep(0)  # the hung tool has started
        for _ in range(3):  # another call's tools, answered while that one waits
            assert (await tools.call(pack, other, "verify_owner", DANA))["ok"] is True
        with pytest.raises(ToolServerError, match=r"^tool_timed_out: hostile_clinic\.wait_for: it ran past the "
                                                  r"tool time bound of 0\.5 s$"):
            await waiting
        # The call stays held by its tool (its database is in use there), as behind the server.
        with pytest.raises(ToolServerError, match="tool_timed_out: hostile_clinic.verify_owner"):
            await tools.call(pack, hung, "verify_owner", DANA)

    try:
        asyncio.run(play())
        # Closing the tools while that tool still runs leaves its call's connection to it: closed under
        # it, the tool's COMMIT crashed the process (a segfault; an xdist worker of the suite died of it).
        asyncio.run(tools.aclose())
        assert tools.stores[pack].open_calls() == [hung]
    finally:
        if unblock.is_alive():
            unblock.cancel()
            release(fifo)
        asyncio.run(tools.aclose())


@pytest.mark.parametrize("tool, said", [("exit_now", "hostile_clinic.exit_now called sys.exit('bye')"),
                                         ("interrupt_now", "hostile_clinic.interrupt_now raised KeyboardInterrupt: bye")],
                         ids=["sys.exit", "KeyboardInterrupt"])
def test_a_tool_that_exits_or_interrupts_is_a_crash_in_the_envelope_and_the_server_serves_on(hostile_pack, tool, said):
    """A real Ctrl-C reaches the main thread only; a KeyboardInterrupt in the thread that runs tools is
    the pack's own code, as sys.exit() is."""
    call_id = uuid.uuid4().hex
    with served(hostile_pack) as server, httpx.Client(base_url=server.url, timeout=60) as http:
        r = post(http, hostile_pack.name, call_id, tool, {"note": "bye"})
        assert r.status_code == 500, r.text
        body = r.json()
        assert body["ok"] is False and body["error_code"] == "tool_crashed"
        assert said in body["caller_safe_message"]
        assert post(http, hostile_pack.name, call_id, "verify_owner", DANA).json()["ok"] is True
        assert http.get("/health").status_code == 200


def test_sys_exit_in_tools_py_is_the_packs_problem_not_the_runs_end(pytester):
    pack = copy_pack(pytester.path / "industries")
    with open(pack / "tools.py", "a", encoding="utf-8") as f:
        f.write("\nimport sys\nsys.exit(3)\n")
    with pytest.raises(PackError) as info:
        load_pack(pack)
    assert "tools.py failed to import: PackCodeExited: vet_clinic/tools.py called sys.exit(3)" in str(info.value)
    shutil.copytree(EXAMPLE_TASKS / "C2-E1", pytester.path / "tasks" / "vet_clinic" / "C2-E1")
    pytester.makeini("[pytest]\n")
    result = pytester.runpytest_subprocess("--callm-model=oracle", "--callm-attempts=1", "-p", "no:cacheprovider")
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and result.ret not in (0, 3), text
    assert "called sys.exit(3)" in text, text


@pytest.mark.parametrize("prompt", ["../../etc/passwd", "/etc/passwd", "prompts/../../outside.md"])
def test_a_prompt_path_outside_the_pack_is_refused_naming_file_and_field(tmp_path, prompt):
    pack = copy_pack(tmp_path / "industries")
    (tmp_path / "industries" / "outside.md").write_text("You are a system prompt read from outside the pack.")
    blueprint = json.loads((pack / "agent_blueprint.json").read_text())
    blueprint["agents"]["records"]["prompt"] = prompt
    (pack / "agent_blueprint.json").write_text(json.dumps(blueprint))
    with pytest.raises(PackError) as info:
        load_pack(pack)
    assert f"agent_blueprint.json: agents.records.prompt: {prompt!r} is outside the pack's folder" in str(info.value)
