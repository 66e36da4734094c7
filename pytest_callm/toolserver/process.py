"""Starting and stopping a tool server (server.py) in a child process of its own.

Apart from server.py so that the process starting one never imports FastAPI and uvicorn: only the
child needs them, and the parent imports the model client and the line's dictionary meanwhile.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pytest_callm.toolserver.calldb import TOKEN_ENV
from pytest_callm.toolserver.client import ToolServerError

if TYPE_CHECKING:
    from pytest_callm.task.pack import Pack

# How long a tool server that is still alive may take to start. It takes about a second; 32 workers
# starting theirs on a busy 2-core machine took over 30 s (the old limit), and each worker that gave up
# lost all its attempts. One that dies is reported at once, whatever this says.
START_TIMEOUT_S = 300.0


def _load_note() -> str:
    """`, with the machine busy (load 31.5 on 2 cores)`: why a start may be slow, where it shows."""
    try:
        load, cores = os.getloadavg()[0], os.cpu_count() or 1
    except (AttributeError, OSError):
        return ""
    return f", with the machine busy (load {load:.1f} on {cores} cores)" if load > cores else ""


class ToolServer:
    """Runs the app with uvicorn on 127.0.0.1 at an ephemeral port, in a child process.

    A process rather than a thread: the engine and the server then never wait on one GIL, which
    halves the time of a tool request. The child exits when asked to, and also as soon as its
    parent's end of the stdin pipe closes, so a killed pytest worker leaves no server behind.
    """

    READY = "CALLM_TOOL_SERVER_URL "
    ENTRY = "pytest_callm.toolserver.server"

    def __init__(self, packs: dict[str, Pack], port: int = 0, data_dir: Path | None = None, *,
                 entry: str = ENTRY, extra_args: Iterable[str] = (), token: str | None = None):
        """`entry`: the module run as the child (its `main` takes this one's options plus
        `extra_args`, and serves with mounts of its own). `token`: the child serves its call routes
        only to requests carrying it (`calldb.TOKEN_HEADER`); it is passed in the child's environment."""
        self.token = token
        self.pack_dirs = [p.root for p in packs.values()]
        self.entry = entry
        self.extra_args = list(extra_args)
        self.port = port
        self.data_dir = data_dir  # None: a scratch folder, removed when the server stops
        self.url = ""
        self._proc: subprocess.Popen | None = None

    def start(self, timeout: float = START_TIMEOUT_S) -> "ToolServer":
        """Start the child and wait until it announces its URL.

        A child that is still alive is waited for up to `timeout` (generous: on a busy machine many
        workers start theirs at once, and a worker that gave up would lose every attempt it holds);
        one that exits fails at once, with its exit code (its error is on stderr, above).
        """
        cmd = [sys.executable, "-m", self.entry, "--port", str(self.port), *self.extra_args]
        if self.data_dir is not None:
            cmd += ["--data-dir", str(Path(self.data_dir).resolve())]
        for d in self.pack_dirs:
            cmd += ["--pack", str(Path(d).resolve())]
        began = time.monotonic()
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        if self.token is not None:
            env[TOKEN_ENV] = self.token
        self._proc = proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        ready: list[str] = []
        reader = threading.Thread(target=lambda: ready.append(proc.stdout.readline()), daemon=True)
        reader.start()
        while reader.is_alive() and proc.poll() is None and time.monotonic() - began < timeout:
            reader.join(0.05)
        reader.join(0.5)  # a child that printed its line and exited at once: the line is still read
        line = ready[0] if ready else ""
        if not line.startswith(self.READY):
            if not reader.is_alive():  # its stdout closed: the child is exiting, reap it for its code
                try:
                    proc.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            code = proc.poll()
            waited = time.monotonic() - began
            if code is None:
                proc.terminate()  # not serving yet: nothing to finish, and it may not be reading stdin
            self.stop()
            if code is not None:
                raise ToolServerError(f"the tool server exited with code {code} before it was ready, after "
                                      f"{waited:.1f}s (its error is above, on stderr; command: {' '.join(cmd)})")
            raise ToolServerError(f"the tool server was still starting after {timeout:.0f}s{_load_note()}; "
                                  f"it was stopped (command: {' '.join(cmd)})")
        self.url = line[len(self.READY):].strip()
        return self

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        try:
            proc.stdin.close()  # the child exits when its stdin closes
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def __enter__(self) -> "ToolServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
