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

A server that dies while the run goes on (a llama.cpp built for another CPU dies on its first request,
SIGILL; the out-of-memory killer) is not a "Connection error": the run that started it reaps it and
writes down how it ended, and the client that finds its server gone reads that (`died`) and stops the
run with it. The requests are sent from xdist's workers, which start after the servers: the notes'
places reach them in `$CALLM_SERVED_EXITS`, inherited at their start.
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
import threading
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


# {base URL: file}: where the server serving that URL, once dead, has how it ended written down.
EXITS_ENV = "CALLM_SERVED_EXITS"


def _exit_notes() -> dict[str, str]:
    try:
        notes = json.loads(os.environ.get(EXITS_ENV) or "{}")
    except ValueError:
        return {}
    return notes if isinstance(notes, dict) else {}


def _set_exit_note(base_url: str, path: Path | None) -> None:
    notes = _exit_notes()
    if path is None:
        notes.pop(base_url, None)
    else:
        notes[base_url] = str(path)
    if notes:
        os.environ[EXITS_ENV] = json.dumps(notes)
    else:
        os.environ.pop(EXITS_ENV, None)


def died(base_url: str) -> str | None:
    """How the server this run started for `base_url` ended, if it died: None for a server that runs,
    and for one this run did not start."""
    path = _exit_notes().get(base_url)
    if not path:
        return None
    try:
        return Path(path).read_text(encoding="utf-8") or None
    except OSError:
        return None


def how_it_ended(returncode: int) -> str:
    """`killed by signal SIGILL (Illegal instruction)` or `exited with code 3`."""
    if returncode < 0:
        try:
            number = signal.Signals(-returncode)
            return f"killed by signal {number.name} ({signal.strsignal(number) or 'no description'})"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with code {returncode}"


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
        self.exit_note: Path | None = None  # how the server ended, written when it dies before `stop`
        self._proc: subprocess.Popen | None = None
        self._stopping = False

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
        self.exit_note = self.log_path.with_suffix(".exit")
        _set_exit_note(self.base_url, self.exit_note)
        threading.Thread(target=self._watch, args=(self._proc,), name="callm-serve-watch", daemon=True).start()
        return self.base_url

    def _watch(self, proc: subprocess.Popen) -> None:
        """Waits for the server's end; one that comes before `stop` is written down for the clients."""
        code = proc.wait()
        if not self._stopping and self.exit_note is not None:
            written = self.exit_note.with_suffix(".exit-part")  # whole or absent to a reader
            written.write_text(self._problem(f"died while the run went on: {how_it_ended(code)}"), encoding="utf-8")
            written.replace(self.exit_note)

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
        self._stopping = True
        proc, self._proc = self._proc, None
        if self.exit_note is not None:
            _set_exit_note(self.base_url, None)
            keep_log = keep_log or self.exit_note.exists()  # a dead server's message names its log
            self.exit_note.unlink(missing_ok=True)
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
