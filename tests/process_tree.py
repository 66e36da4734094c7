"""Processes as /proc shows them, for tests and benchmarks that stop runs and servers: who is below
a process, who is in a session, who is still alive; and the SIGTERM-mid-call scenario that
tests/test_signals.py checks and benchmarks/stop_time.py times."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


def _stats() -> Iterator[tuple[int, list[str]]]:
    """(pid, the fields of /proc/PID/stat after the command name, which may hold spaces)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        yield int(entry.name), stat[stat.rindex(")") + 2:].split()


def descendants(pid: int) -> set[int]:
    """Every live process below `pid`."""
    children: dict[int, list[int]] = {}
    for child, fields in _stats():
        children.setdefault(int(fields[1]), []).append(child)
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def session_pids(sid: int) -> dict[int, str]:
    """Live processes of session `sid`, pid -> the start of its command line; zombies left out."""
    found = {}
    for pid, fields in _stats():
        if int(fields[3]) == sid and fields[0] != "Z":
            try:
                found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()[:80].strip()
            except OSError:
                continue
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def wait_for(what, timeout: float = 120.0, every: float = 0.05) -> None:
    """Until `what()` is true; its docstring names it when the wait gives up."""
    deadline = time.monotonic() + timeout
    while not what():
        if time.monotonic() > deadline:
            raise TimeoutError(f"waited {timeout:.0f} s for {what.__doc__ or what}")
        time.sleep(every)


@dataclass
class Stopped:
    started: set[int]  # the run's other processes when SIGTERM was sent (workers, tool servers)
    outlived: list[int]  # those still alive when the main process had exited
    gone_s: float  # SIGTERM to the last of `started` gone
    exited_s: float  # SIGTERM to the main process's exit
    returncode: int
    text: str  # what the run printed


def sigterm_mid_call(cmd: list[str], cwd: Path, run: Path, server, log: Path, env: dict | None = None) -> Stopped:
    """Start the pytest run `cmd` against the scripted `server`; once an attempt is saved in `run`,
    make every request hang; once one hangs, send SIGTERM to the main process alone (not its group),
    as a job runner or `kill PID` does. Its output goes to `log`."""
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        def saved():
            """an attempt saved"""
            return any(run.glob("trajectories/*/*/attempt-*.json"))

        wait_for(saved)
        server.state.delay_ms = 600_000  # every request from now on hangs
        asked = len(server.log)

        def hanging():
            """a request hanging"""
            return any(r["end"] is None for r in server.log[asked:])

        wait_for(hanging)
        started = descendants(proc.pid)
        began = time.monotonic()
        os.kill(proc.pid, signal.SIGTERM)
        gone = None
        while proc.poll() is None:
            if gone is None and not any(alive(p) for p in started):
                gone = time.monotonic() - began
            if time.monotonic() - began > 120:
                raise TimeoutError("the run did not stop within 120 s of SIGTERM")
            time.sleep(0.005)
        exited = time.monotonic() - began
        outlived = [p for p in started if alive(p)]

        def all_gone():
            """the run's other processes gone"""
            return not any(alive(p) for p in started)

        wait_for(all_gone, timeout=60, every=0.01)
        gone = gone if gone is not None else time.monotonic() - began
    finally:
        if proc.poll() is None:
            proc.kill()
    return Stopped(started, outlived, gone, exited, proc.returncode, log.read_text())
