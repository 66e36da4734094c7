"""SIGTERM stops a run as Ctrl-C does: calls in flight cancelled, tool servers stopped, the
interrupted line printed (`callm: interrupted: N of M attempts saved; resume with ...`).

Without it, SIGTERM to the main pytest process alone killed it at once: no line, and its xdist workers
(and their tool servers) went on writing for about 10 s until they noticed their controller was gone.
The main process passes the stop on to each worker (each wrote its pid at start), then stops
itself with KeyboardInterrupt; a worker stops the same way, as does one that gets SIGTERM itself (a
whole process group signalled). A second SIGTERM is not caught: it ends the process at once. The
interrupt's traceback is cut to the frame the signal arrived in: pytest formats every frame of it with
its source (about a second on a busy machine), which says nothing about a stop someone asked for.

A handler someone else installed is left alone, and the previous one is put back at the end.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

PID_FILE = "pid-{worker}"  # in the run's shared temporary folder, one per xdist worker


class StopOnTerm:
    def __init__(self, pids_dir: Path | None = None):
        self.pids_dir = pids_dir  # where workers left their pids (the controller's; None: no workers)
        self._previous = None
        self._installed = False
        self.fired = False  # a SIGTERM stopped this process

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return  # someone else's handler
        self._previous = signal.signal(signal.SIGTERM, self._stop)
        self._installed = True

    def uninstall(self) -> None:
        if self._installed and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._previous if self._previous is not None else signal.SIG_DFL)
            self._installed = False

    def worker_pids(self) -> list[int]:
        if self.pids_dir is None:
            return []
        pids = []
        for path in self.pids_dir.glob(PID_FILE.format(worker="*")):
            try:
                pids.append(int(path.read_text()))
            except (OSError, ValueError):
                continue
        return pids

    def _stop(self, signum, frame) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second SIGTERM ends the process at once
        self._installed = False
        self.fired = True
        for pid in self.worker_pids():
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass  # already gone
        raise KeyboardInterrupt("SIGTERM")

    def shorten(self, excinfo) -> None:
        """The interrupt's traceback, cut to its last frame when it was this SIGTERM's."""
        if self.fired and len(excinfo.traceback) > 1:
            excinfo.traceback = excinfo.traceback[-1:]


def leave_pid(folder: Path, worker: str) -> None:
    """A worker's pid, for its controller to pass a stop on to."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / PID_FILE.format(worker=worker)).write_text(str(os.getpid()))
