"""`--callm-serve`: start the serving command a model config names, and stop it afterwards.

For vLLM the command is `vllm serve <model> --enable-auto-tool-choice --tool-call-parser <parser>
--port {port}`; any program that serves the OpenAI API on 127.0.0.1:{port} works. The server gets a
free port, its output goes to a log file, and it is ready once `GET /v1/models` lists the config's
model (vLLM also answers `/health`, llama-cpp-python does not: the models list is what both serve). A command that exits, or is not ready in time, is a
`ServeError` quoting the end of its log. The server runs in its own process group, so stopping it
stops any workers it started.

The run stops its servers when it ends, or when SIGTERM or Ctrl-C stops it. A run that dies without
cleaning up (SIGKILL, a second SIGTERM, the out-of-memory killer, a closed terminal's SIGHUP) used to
leave them running: a server is in a session of its own, so no signal to the run reached it (two
llama-cpp-python servers held 2.8 GB). On Linux each server is therefore started through a short
launcher that asks the kernel to send it SIGTERM when the process that started it dies
(`PR_SET_PDEATHSIG`, kept across the exec into the server), so it stops with the run however the run
ends. The kernel ties this to the starting thread: `start` runs on pytest's main thread.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from pytest_callm.model.config import ModelConfig

POLL_S = 0.2
LOG_TAIL_LINES = 20
# Run as `python -c LAUNCHER <pid of the run> <command...>`: SIGTERM (15) on the death of the parent
# (prctl option 1, PR_SET_PDEATHSIG), then the command in this process's place. A run that died before
# the request took effect has left already: the launcher leaves too.
LAUNCHER = ("import ctypes, os, sys\n"
            "ctypes.CDLL(None, use_errno=True).prctl(1, 15)\n"
            "if os.getppid() != int(sys.argv[1]):\n"
            "    sys.exit(0)\n"
            "os.execvp(sys.argv[2], sys.argv[2:])\n")


def launch_argv(argv: list[str]) -> list[str]:
    """The command as started: through the launcher where the kernel offers PR_SET_PDEATHSIG (Linux)."""
    if not sys.platform.startswith("linux"):
        return argv
    return [sys.executable, "-c", LAUNCHER, str(os.getpid()), *argv]


class ServeError(Exception):
    pass


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as e:
        return e.code, b""
    except (urllib.error.URLError, OSError):
        return 0, b""


class ModelServer:
    """One served model for one pytest run."""

    def __init__(self, config: ModelConfig, ready_timeout_s: float | None = None):
        if config.serve is None:
            raise ServeError(f"model config {config.name} ({config.source}) has no [serve] command")
        self.config = config
        self.port = free_port()
        self.argv = config.serve.argv(config.model, self.port, sys.executable)
        self.timeout_s = ready_timeout_s if ready_timeout_s is not None else config.serve.ready_timeout_s
        self.url = f"http://127.0.0.1:{self.port}"
        self.base_url = self.url + "/v1"
        self.log_path: Path | None = None
        self._proc: subprocess.Popen | None = None

    def start(self) -> str:
        """Start the command and wait until it serves the model; returns the base URL."""
        if shutil.which(self.argv[0]) is None:  # said here: through the launcher it would be its exit code
            raise ServeError(f"--callm-serve: cannot run {self.argv[0]!r}: no such program")
        handle, name = tempfile.mkstemp(prefix="callm-serve-", suffix=".log")
        self.log_path = Path(name)
        with os.fdopen(handle, "wb") as log:
            try:
                self._proc = subprocess.Popen(launch_argv(self.argv), stdout=log, stderr=subprocess.STDOUT,
                                              stdin=subprocess.DEVNULL, start_new_session=True)
            except OSError as e:
                raise ServeError(f"--callm-serve: cannot run {self.argv[0]!r}: {e}") from None
        try:
            self._wait_ready()
        except BaseException:
            self.stop(keep_log=True)
            raise
        return self.base_url

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout_s
        while True:
            code = self._proc.poll()
            if code is not None:
                raise ServeError(self._problem(f"exited with code {code} before it was ready"))
            status, body = _get(self.base_url + "/models")
            if status == 200:
                served = self._model_ids(body)
                if self.config.model in served:
                    return
                raise ServeError(self._problem(f"is up but serves {', '.join(served) or 'no model'}, "
                                               f"not {self.config.model!r}"))
            if time.monotonic() > deadline:
                raise ServeError(self._problem(f"did not answer /v1/models within {self.timeout_s:.0f} s"))
            time.sleep(POLL_S)

    @staticmethod
    def _model_ids(body: bytes) -> list[str]:
        try:
            return [m["id"] for m in json.loads(body)["data"]]
        except (ValueError, KeyError, TypeError):
            return []

    def _problem(self, what: str) -> str:
        tail = ""
        if self.log_path and self.log_path.exists():
            lines = self.log_path.read_text(errors="replace").splitlines()[-LOG_TAIL_LINES:]
            tail = "\n".join("  | " + line for line in lines)
        return (f"--callm-serve: the server for {self.config.name} ({' '.join(self.argv)}) {what}; "
                f"its output is in {self.log_path}" + (f":\n{tail}" if tail else ""))

    def stop(self, keep_log: bool = False, grace_s: float = 20.0) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            self._signal(proc, signal.SIGTERM)
            try:
                proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                self._signal(proc, signal.SIGKILL)
                proc.wait()
        if not keep_log and self.log_path is not None:
            self.log_path.unlink(missing_ok=True)

    @staticmethod
    def _signal(proc: subprocess.Popen, sig: int) -> None:
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, sig)  # the whole group: vLLM starts worker processes
            else:
                proc.send_signal(sig)
        except ProcessLookupError:
            pass
