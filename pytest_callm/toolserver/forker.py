"""Tool servers forked from one process that has imported them already.

A tool server's process spends about 0.65 s of CPU importing FastAPI, uvicorn and the tool runner
before it serves anything. A process that starts many servers in turn (a test session, pytest runs
inside one process, an RL trainer that builds environments again and again) starts a forker once,
at its second server, and each later server is a fork of it: the imports are already done, and
so are the packs an earlier server of the process loaded (while their files stay the same).

The forker (`python -m pytest_callm.toolserver.forker FD`) reads requests on a Unix socket: the
entry module, its arguments, the environment and working directory, and the three file descriptors
the server is to have as stdin, stdout and stderr, passed over the socket. So a forked server is
seen as a child started with `subprocess` is: it announces itself on its stdout, writes its errors
where the requester's stderr is now, and exits when its stdin closes. The forker answers each
request with the server's pid and, when one ends, its exit code; when the requester goes away it
stops the servers left and reaps them, so their CPU is counted where the requester's children are.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any, TextIO

MAX_MESSAGE = 1 << 20  # a request holds the environment: tens of kB at most
STOP_S = 10.0  # how long the servers left at the end have to stop, before they are killed


def _interpreter_settings(env: dict[str, str]) -> dict[str, str]:
    """What a running interpreter cannot change for itself: a forked server keeps the forker's."""
    return {k: v for k, v in env.items() if k.startswith("PYTHON")}


# --- the requester's side --------------------------------------------------------------------


class ForkedServer:
    """A forked server, seen through the `subprocess.Popen` methods `process.ToolServer` uses."""

    def __init__(self, forker: "Forker", pid: int, stdin: TextIO, stdout: TextIO):
        self.forker, self.pid, self.stdin, self.stdout = forker, pid, stdin, stdout

    def poll(self) -> int | None:
        return self.forker.exit_code(self.pid)

    def wait(self, timeout: float | None = None) -> int:
        code = self.forker.wait_exit(self.pid, timeout)
        if code is None:
            raise subprocess.TimeoutExpired(f"tool server {self.pid}", timeout)
        return code

    def _signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)


class Forker:
    """The requester's handle on its forker process: `spawn` a server, learn when it ended."""

    _current: "Forker | None" = None
    _lock = threading.Lock()

    @classmethod
    def shared(cls, preload: str) -> "Forker | None":
        """This process's forker, started on first use with `preload` (the module every server runs,
        imported before any fork); None where none can run (not POSIX, or it did not start): the
        caller starts its server the usual way."""
        if os.name != "posix" or not hasattr(socket, "send_fds"):
            return None
        with cls._lock:
            forker = cls._current
            if forker is None or forker.owner != os.getpid() or not forker.alive:
                try:
                    forker = cls._current = cls(preload)
                except OSError:
                    cls._current = None
                    return None
            return forker

    def __init__(self, preload: str) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", __name__, str(theirs.fileno()), preload],
                                         pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL)
        finally:
            theirs.close()
        self.owner = os.getpid()
        self.settings = _interpreter_settings(dict(os.environ))
        self.sock = ours
        self.alive = True
        self._pids: dict[int, int] = {}  # request number -> the server's pid
        self._codes: dict[int, int] = {}  # pid -> exit code, once it ended
        self._next = 0
        self._changed = threading.Condition()
        self._send = threading.Lock()
        threading.Thread(target=self._read, name="callm-forker-replies", daemon=True).start()
        atexit.register(self.close)

    def suits(self, env: dict[str, str]) -> bool:
        """Whether a server with this environment may be forked from this forker (its interpreter
        settings, PYTHONPATH among them, are the forker's)."""
        return self.alive and _interpreter_settings(env) == self.settings

    def _read(self) -> None:
        while True:
            try:
                data = self.sock.recv(MAX_MESSAGE)
            except OSError:
                data = b""
            with self._changed:
                if not data:
                    self.alive = False
                    self._changed.notify_all()
                    return
                message = json.loads(data)
                if "request" in message:
                    self._pids[message["request"]] = message["pid"]
                else:
                    self._codes[message["pid"]] = message["code"]
                self._changed.notify_all()

    def spawn(self, entry: str, args: list[str], env: dict[str, str], timeout: float = 60.0) -> ForkedServer:
        """A server forked with `python -m entry args` as its command line; OSError if the forker cannot."""
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        try:
            with self._changed:
                self._next += 1
                number = self._next
            request = {"request": number, "entry": entry, "args": args, "env": env, "cwd": os.getcwd()}
            with self._send:
                socket.send_fds(self.sock, [json.dumps(request).encode()], [stdin_r, stdout_w, 2])
        except OSError:
            for fd in (stdin_w, stdout_r):
                os.close(fd)
            raise
        finally:
            os.close(stdin_r)
            os.close(stdout_w)
        with self._changed:
            self._changed.wait_for(lambda: number in self._pids or not self.alive, timeout)
            pid = self._pids.pop(number, None)
        if pid is None:
            os.close(stdin_w)
            os.close(stdout_r)
            self.proc.kill()  # stuck (a pack's code that hangs as it loads) or gone: no later server waits for it
            raise OSError("the tool server forker did not answer")
        return ForkedServer(self, pid, os.fdopen(stdin_w, "w"), os.fdopen(stdout_r, "r"))

    def exit_code(self, pid: int) -> int | None:
        with self._changed:
            if pid in self._codes or self.alive:
                return self._codes.get(pid)
        # The forker is gone, and with it the news of its servers: one that is gone too ended somehow.
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return 1
        except PermissionError:
            pass
        return None

    def wait_exit(self, pid: int, timeout: float | None) -> int | None:
        with self._changed:
            self._changed.wait_for(lambda: pid in self._codes or not self.alive, timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.exit_code(pid)) is None and (deadline is None or time.monotonic() < deadline):
            time.sleep(0.05)  # the forker is gone: only the process itself can say it ended
        return code

    def close(self) -> None:
        """Tell the forker we are done (it stops and reaps the servers left) and reap it."""
        if os.getpid() != self.owner:
            return
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.sock.close()


# --- the forker's side -----------------------------------------------------------------------


def _send(sock: socket.socket, message: dict[str, Any]) -> None:
    try:
        sock.send(json.dumps(message).encode())
    except OSError:
        pass  # the requester is gone: the loop sees it at its next read


def _reap(sock: socket.socket, children: set[int]) -> None:
    while children:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        children.discard(pid)
        _send(sock, {"pid": pid, "code": os.waitstatus_to_exitcode(status)})


def _become_server(request: dict[str, Any], fds: list[int], close: list[int]) -> None:
    """In the forked child: the request's stdio, environment and directory, then its entry's `main`, as `python -m` would run it."""
    code = 1
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        for fd in close:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        sys.path[0] = request["cwd"]  # as `python -m` sets it
        sys.argv = [request["entry"], *request["args"]]
        try:
            importlib.import_module(request["entry"]).main(request["args"])  # every entry's `main(argv)`
            code = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int):
                code = e.code or 0
            else:
                print(e.code, file=sys.stderr)
        except BaseException:  # noqa: BLE001  told as the interpreter would, then the child's exit code 1
            traceback.print_exc()
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001  a closed pipe: nothing more to say
                pass
        os._exit(code)


def _load_packs(args: list[str]) -> None:
    """The packs a request names (`--pack DIR`), loaded here before the fork: `load_pack` keeps each
    while its files stay the same, so the next server of the same packs finds them loaded (about 0.1
    to 0.3 s of CPU a pack). A pack that fails here is left to the server, which says why."""
    from pytest_callm.task.pack import load_pack

    for flag, value in zip(args, args[1:]):
        if flag == "--pack":
            try:
                load_pack(Path(value))
            except Exception:  # noqa: BLE001  the server loads it again and reports the problem
                pass


def main(argv: list[str] | None = None) -> None:
    fd, preload = (sys.argv[1:] if argv is None else argv)[:2]
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is for the servers and the run, not for this
    importlib.import_module(preload)  # what every fork shares: imported once, here
    gc.freeze()  # the forks share these pages, rather than copying them at their first collection
    sock = socket.socket(fileno=int(fd))
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)  # only to wake the select below
    children: set[int] = set()
    while True:
        readable, _, _ = select.select([sock, wake_r], [], [])
        if wake_r in readable:
            os.read(wake_r, 4096)
        _reap(sock, children)
        if sock not in readable:
            continue
        try:
            data, fds, _, _ = socket.recv_fds(sock, MAX_MESSAGE, 3)
        except OSError:
            data, fds = b"", []
        if not data:
            break
        request = json.loads(data)
        _load_packs(request["args"])
        pid = os.fork()
        if pid == 0:
            _become_server(request, fds, [sock.fileno(), wake_r, wake_w])
        children.add(pid)
        for f in fds:
            os.close(f)
        _send(sock, {"request": request["request"], "pid": pid})
    # The requester is gone or done: the servers it left are stopped (killed if one is still there
    # after STOP_S) and reaped.
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in children:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + STOP_S
        while children and time.monotonic() < deadline:
            _reap(sock, children)
            time.sleep(0.02)


if __name__ == "__main__":
    main()
