"""The harness's own time: how long pytest takes before the first model request and after the last reply.

A local OpenAI-compatible server (the stand-in server, pytest_callm/standin/, in a thread of this script) plays legal
C4-H3's answer key as the model and a scripted caller, every request answered in `--total-ms`
(300 ms). pytest plays the task `--attempts` times (16), `--concurrency` (8) calls in flight, in one
process, as a user would run it (a key read from the environment, the default phone line, no
--callm-latency). From the server's own log of every request, and a small plugin loaded with
`-p` that notes when pytest reaches each stage (same monotonic clock), it prints where the time
goes:

  imports            process start to pytest configured (Python, pytest, the plugin and what it imports)
  session start      configure to session start (settings, packs, key check)
  collection         session start to the items collected (task files read)
  first request      collection to the first model request (runtime: tool server, clients, line)
  playing            first request to last reply (the model's time: not the harness's)
  results            last reply to the session finished (the last items' scores and files)
  report             session finish to the terminal summary written (summary, report page, task pages)
  unconfigure        summary to the plugins unconfigured (what is still open is closed)
  exit               unconfigured to process exit (atexit handlers, threads joined, interpreter exit)

and, on a separate `-X importtime` run of the same command, the slowest imports by package.
Each figure is the best of `--repeat` runs (3): the machine may be shared.

Run from the repository root:  python benchmarks/harness_time.py [--repeat 3] [--importtime]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_callm.standin.answer_key import AnswerKeyAgent, ScriptCaller
from pytest_callm.standin.server import ScriptedServer

REPO = Path(__file__).resolve().parent.parent

TASK = REPO / "tasks" / "legal" / "C4-H3"
PACK = REPO / "industries" / "legal"
KEY_ENV = "CALLM_BENCH_KEY"
# Loaded with -p: notes, on the monotonic clock the server's log uses, when pytest reaches each stage.
TRACE = '''
import os, time, pytest
_out = open(os.environ["CALLM_TRACE"], "a")
def _note(stage):
    _out.write(f"{stage} {time.perf_counter()}\\n"); _out.flush()
_note("trace_imported")
@pytest.hookimpl(trylast=True)
def pytest_configure(config): _note("configured")
@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session): _note("session_started")
def pytest_collection_finish(session): _note("collected")
@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session): _note("session_finishing")
@pytest.hookimpl(trylast=True)
def pytest_terminal_summary(terminalreporter): _note("summary_written")
@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config): _note("unconfigured")
'''
STAGES = [("imports", "start", "configured"), ("session start", "configured", "session_started"),
          ("collection", "session_started", "collected"), ("first request", "collected", "first_request"),
          ("playing", "first_request", "last_reply"), ("results", "last_reply", "session_finishing"),
          ("report", "session_finishing", "summary_written"), ("unconfigure", "summary_written", "unconfigured"),
          ("exit", "unconfigured", "exit")]


def project(folder: Path, attempts: int) -> None:
    shutil.copytree(PACK, folder / "industries" / "legal")
    shutil.copytree(TASK, folder / "tasks" / "legal" / TASK.name)
    (folder / "callm_trace.py").write_text(TRACE)
    (folder / "pytest.ini").write_text(f"[pytest]\ncallm_attempts = {attempts}\n")


def command(server: ScriptedServer, out: Path, concurrency: int) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "callm_trace",
            "--callm-model=scripted", f"--callm-base-url={server.base_url}", f"--callm-api-key-env={KEY_ENV}",
            "--callm-caller-model=scripted-caller", f"--callm-caller-base-url={server.base_url}",
            f"--callm-caller-api-key-env={KEY_ENV}", f"--callm-concurrency={concurrency}", f"--callm-out={out}"]


def environment(folder: Path, trace: Path) -> dict[str, str]:
    # Bytecode cached as on a usual install (some sandboxes set PYTHONDONTWRITEBYTECODE).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update({KEY_ENV: "sk-bench", "CALLM_TRACE": str(trace),
                "PYTHONPATH": os.pathsep.join(p for p in (str(folder), str(REPO), env.get("PYTHONPATH")) if p)})
    return env


def run_once(folder: Path, server: ScriptedServer, n: int, concurrency: int, attempts: int) -> dict[str, float]:
    server.log.clear()
    trace = folder / f"trace-{n}.txt"
    out = folder / f"run-{n}"
    started = time.perf_counter()
    proc = subprocess.run(command(server, out, concurrency), cwd=folder, capture_output=True, text=True,
                          env=environment(folder, trace))
    ended = time.perf_counter()
    if proc.returncode != 0:
        sys.exit(f"pytest exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    log = [r for r in server.log if r.get("end") is not None]
    stamps = {"start": started, "exit": ended, "first_request": min(r["start"] for r in log),
              "last_reply": max(r["end"] for r in log)}
    for line in trace.read_text().splitlines():
        stage, at = line.split()
        stamps[stage] = float(at)
    times = {name: stamps[b] - stamps[a] for name, a, b in STAGES}
    times["wall"] = ended - started
    times["requests"] = len(log)
    return times


def import_times(folder: Path, server: ScriptedServer, concurrency: int, top: int) -> list[tuple[str, float]]:
    """The slowest packages to import (their modules' own times summed), from `-X importtime` of one run."""
    traced = command(server, folder / "run-imports", concurrency)[1:]
    proc = subprocess.run([sys.executable, "-X", "importtime", *traced],
                          cwd=folder, capture_output=True, text=True,
                          env=environment(folder, folder / "trace-imports.txt"))
    by_package: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", line)
        if m is None:
            continue
        name = m.group(4)
        package = ".".join(name.split(".")[:2]) if name.startswith("pytest_callm") else name.split(".")[0]
        by_package[package] = by_package.get(package, 0) + int(m.group(1)) / 1e6  # self time
    return sorted(by_package.items(), key=lambda kv: -kv[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attempts", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--total-ms", type=float, default=300)
    parser.add_argument("--repeat", type=int, default=3, help="runs; each figure is the best of them")
    parser.add_argument("--importtime", action="store_true", help="also list the slowest imports by package")
    args = parser.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        project(folder, args.attempts)
        agent = AnswerKeyAgent(folder / "tasks" / "legal" / TASK.name / "task.json", folder / "industries")
        caller = ScriptCaller(["Hi, I need help with a legal matter.", "Yes, that's right.", "Thank you, goodbye."])
        with ScriptedServer(delay_ms=args.total_ms / 3, total_ms=args.total_ms, api_key="sk-bench",
                            models=("scripted", "scripted-caller"), agent=agent, caller=caller) as server:
            subprocess.run([sys.executable, "-m", "pytest", "--co", "-q", "--callm-model=oracle", str(folder)],
                           capture_output=True, env=environment(folder, folder / "warm.txt"))  # caches bytecode
            for n in range(args.repeat):
                runs.append(run_once(folder, server, n, args.concurrency, args.attempts))
                print(f"  run {n + 1}: {runs[-1]['wall']:.1f} s, {runs[-1]['requests']:.0f} requests",
                      file=sys.stderr, flush=True)
            imports = import_times(folder, server, args.concurrency, 12) if args.importtime else []
    print(f"legal C4-H3 x {args.attempts}, {args.concurrency} in flight, {args.total_ms:g} ms a request, "
          f"{os.cpu_count()} cores; best of {args.repeat} (median in brackets)")
    for name in [s[0] for s in STAGES] + ["wall"]:
        values = sorted(r[name] for r in runs)
        print(f"  {name:<14} {values[0]:>6.2f} s  ({values[len(values) // 2]:.2f})")
    best = min(runs, key=lambda r: r["wall"])
    before = sum(best[s] for s in ("imports", "session start", "collection", "first request"))
    after = sum(best[s] for s in ("results", "report", "unconfigure", "exit"))
    print(f"  start to first request {before:.2f} s; last reply to exit {after:.2f} s (fastest run)")
    if imports:
        print("slowest imports (self time summed by package, one -X importtime run):")
        for package, seconds in imports:
            print(f"  {package:<32} {seconds:>6.3f} s")


if __name__ == "__main__":
    main()
