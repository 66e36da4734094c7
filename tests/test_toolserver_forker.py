"""Tool servers forked from one that has imported the server (toolserver/forker.py): they serve, fail,
stop and end with their requester as servers started with subprocess do."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import httpx
import pytest

from conftest import REPO
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver import process
from pytest_callm.toolserver.calldb import TOKEN_HEADER
from pytest_callm.toolserver.client import ToolServerError
from pytest_callm.toolserver.forker import Forker, ForkedServer
from pytest_callm.toolserver.process import ToolServer

LEGAL = REPO / "industries" / "legal"

# Started in a process of its own, so the first server there is its first: three servers, one after the
# other, each asked for its health and for a call without and with the token.
THREE_SERVERS = f"""
import json, httpx
from pathlib import Path
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver.process import ToolServer
packs = {{"legal": load_pack(Path({str(LEGAL)!r}))}}
seen = []
for i in range(3):
    server = ToolServer(packs, token="secret-{{}}".format(i)).start()
    call = server.url + "/packs/legal/call"
    seen.append({{"kind": type(server._proc).__name__, "health": httpx.get(server.url + "/health").json(),
                 "without": httpx.post(call, headers={{"X-Call-Id": "a" * 32}}).status_code,
                 "with": httpx.post(call, headers={{"X-Call-Id": "a" * 32, "{TOKEN_HEADER}": "secret-{{}}".format(i)}}).status_code}})
    proc = server._proc
    server.stop()
    seen[-1]["code"] = proc.wait(timeout=30)
print(json.dumps(seen))
"""


def test_servers_after_a_processs_first_are_forked_and_serve_and_stop_as_it_does():
    done = subprocess.run([sys.executable, "-c", THREE_SERVERS], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout)
    assert [s["kind"] for s in seen] == ["Popen", "ForkedServer", "ForkedServer"]
    for s in seen:  # the same answers: packs served, the token its own (passed in the environment), a clean stop
        assert s["health"] == {"status": "ok", "packs": ["legal"]}
        assert (s["without"], s["with"], s["code"]) == (403, 200, 0)


@pytest.fixture
def forked(monkeypatch):
    """Every ToolServer start in this test goes to this process's forker."""
    monkeypatch.setattr(process, "_started", 1)


def test_a_forked_server_that_dies_before_it_serves_is_named_with_its_exit_code_and_error(forked, tmp_path, capfd):
    (tmp_path / "broken").mkdir()  # no pack.json
    packs = {"legal": load_pack(LEGAL)}
    server = ToolServer(packs)
    server.pack_dirs = [tmp_path / "broken"]
    with pytest.raises(ToolServerError, match=r"exited with code [1-9]\d* before it was ready"):
        server.start()
    assert "broken" in capfd.readouterr().err  # its error went where this process's stderr is


def test_a_killed_forker_is_replaced_and_its_servers_still_stop(forked):
    packs = {"legal": load_pack(LEGAL)}
    before = ToolServer(packs).start()
    assert isinstance(before._proc, ForkedServer)
    old = Forker.shared(ToolServer.ENTRY)
    old.proc.kill()
    old.proc.wait()
    after = ToolServer(packs).start()  # a new forker, or (if it could not start) a usual child
    try:
        assert httpx.get(after.url + "/health").status_code == 200
        assert httpx.get(before.url + "/health").status_code == 200  # the old server is still there
        assert Forker.shared(ToolServer.ENTRY) is not old
    finally:
        proc = before._proc
        before.stop()  # its stdin closed: it ends though nobody reports its exit code any more
        after.stop()
    with pytest.raises(ProcessLookupError):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            os.kill(proc.pid, 0)
            time.sleep(0.05)  # a zombie until its new parent reaps it


# A requester that dies: its forked server (the second) must end too, as a usual child does once its stdin closes.
DYING = f"""
import os, signal
from pathlib import Path
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver.process import ToolServer
packs = {{"legal": load_pack(Path({str(LEGAL)!r}))}}
first = ToolServer(packs).start()
second = ToolServer(packs).start()
print(type(second._proc).__name__, first.url, second.url, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_the_servers_of_a_killed_requester_stop():
    done = subprocess.run([sys.executable, "-c", DYING], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == -signal.SIGKILL, done.stderr[-3000:]
    kind, *urls = done.stdout.split()
    assert kind == "ForkedServer"
    deadline = time.monotonic() + 60
    while urls and time.monotonic() < deadline:
        try:
            httpx.get(urls[-1] + "/health", timeout=5)
            time.sleep(0.1)
        except httpx.TransportError:
            urls.pop()  # refused: that one has stopped
    assert not urls, f"still serving after the requester died: {urls}"
