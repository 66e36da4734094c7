"""Calls in flight: how busy a run keeps the model's slots, by how the calls are spread.

A local OpenAI-compatible server (the stand-in server, pytest_callm/standin/, in a thread of this script) answers every
chat request in `--total-ms` (default 1,000 ms), its first token after `--ttft-ms` (300 ms). The run
is `--calls` calls (64) of one example task, each of five model requests: a caller plugged in through
`pytest_callm_make_caller` says five lines and hangs up, the agent (the server) answers each with a
line, and the default phone line sits between them. Each setup keeps `--slots` (32) calls in flight:

  -n 32                          32 workers, one call each (every slot a whole process)
  -n 2 --callm-concurrency 16    2 workers, 16 calls each on their event loops
  -n 0 --callm-concurrency 32    one process

and prints, side by side, from the server's own log of every request:

  wall          the pytest run, start to exit, against the ideal: calls x requests x total / slots
  ideal/wall    the share of the whole run's slot time the model was busy (start-up included)
  utilization   request-seconds served / (slots x (last reply - first request)): how busy the slots
                are once the calls have started
  first req     seconds from starting pytest to the first chat request
  CPU           user + system seconds of pytest and its workers
  TTFT median   the time to first token the run recorded (from its saved trajectories) minus the
                served delay: the client's own overhead under load

Run from the repository root:  python benchmarks/concurrency.py [--calls 64] [--slots 32]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_callm.standin.server import ScriptedServer

REPO = Path(__file__).resolve().parent.parent

TASK = REPO / "examples" / "tasks" / "vet_clinic" / "C2-E2"
PACK = REPO / "examples" / "industries" / "vet_clinic"
REQUESTS_PER_CALL = 5
CALLER = f'''
from pytest_callm.call.caller import CallerTurn


class FiveLines:
    def __init__(self):
        self.said = 0

    async def respond(self, agent_said):
        self.said += 1
        return CallerTurn("Could you tell me more about that, please?", hang_up=self.said > {REQUESTS_PER_CALL})


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FiveLines()
'''


def project(folder: Path, calls: int) -> None:
    shutil.copytree(PACK, folder / "industries" / "vet_clinic")
    shutil.copytree(TASK, folder / "tasks" / "vet_clinic" / TASK.name)
    (folder / "conftest.py").write_text(CALLER)
    (folder / "pytest.ini").write_text(f"[pytest]\ncallm_attempts = {calls}\nasyncio_default_fixture_loop_scope = function\n")


def run(folder: Path, server: ScriptedServer, name: str, args: list[str], slots: int, calls: int,
        ttft_ms: float, total_ms: float) -> dict:
    server.log.clear()
    out = folder / f"run-{name.replace(' ', '_')}"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
           "--callm-model=scripted", f"--callm-base-url={server.base_url}", "--callm-api-key-env=none",
           f"--callm-out={out}", *args]
    # Bytecode cached as on a usual install (some sandboxes set PYTHONDONTWRITEBYTECODE, and every
    # process, worker and tool server would then compile pytest, hypothesis and the plugin afresh).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0, 1):  # 1: the agent's lines fail the task's gates, as they should
        sys.exit(f"{name}: pytest exited {proc.returncode}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    log = [r for r in server.log if r.get("end") is not None]
    missing = calls * REQUESTS_PER_CALL - len(log)
    if missing:  # e.g. workers whose tool server did not start in time on a crowded machine
        unscored = [line for line in proc.stdout.splitlines() if "not scored" in line or "Error" in line][:3]
        print(f"  {name}: {missing} of {calls * REQUESTS_PER_CALL} requests never made; pytest said:\n    "
              + "\n    ".join(unscored), file=sys.stderr)
    first, last = min(r["start"] for r in log), max(r["end"] for r in log)
    served = sum(r["end"] - r["start"] for r in log)
    ttfts = [req["ttft_ms"] for path in out.rglob("trajectories/**/*.json")
             for req in json.loads(path.read_text())["trajectory"]["requests"] if req.get("ttft_ms") is not None]
    return {"setup": name, "wall": wall, "ideal": calls * REQUESTS_PER_CALL * total_ms / 1000 / slots,
            "utilization": served / (slots * (last - first)), "first": first - started,
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "ttft_over": statistics.median(ttfts) - ttft_ms if ttfts else float("nan"), "missing": missing}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=64)
    parser.add_argument("--slots", type=int, default=32, help="calls in flight in every setup")
    parser.add_argument("--ttft-ms", type=float, default=300)
    parser.add_argument("--total-ms", type=float, default=1000)
    parser.add_argument("--only", help="run only the setups whose name contains this")
    args = parser.parse_args()
    slots = args.slots
    setups = [(f"-n {slots}", ["-n", str(slots), "--callm-concurrency=1"]),
              (f"-n 2 --callm-concurrency {slots // 2}", ["-n", "2", f"--callm-concurrency={slots // 2}"]),
              (f"-n 0 --callm-concurrency {slots}", ["-n", "0", f"--callm-concurrency={slots}"])]
    if args.only:
        setups = [s for s in setups if args.only in s[0]]
    print(f"{args.calls} calls x {REQUESTS_PER_CALL} requests, each {args.total_ms:g} ms "
          f"({args.ttft_ms:g} ms to first token), {slots} in flight, {os.cpu_count()} cores")
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer(delay_ms=args.ttft_ms, total_ms=args.total_ms) as server:
        folder = Path(tmp)
        project(folder, args.calls)
        warm = [sys.executable, "-m", "pytest", "--co", "-q", "--callm-model=oracle", str(folder)]
        subprocess.run(warm, capture_output=True, env={k: v for k, v in os.environ.items()
                                                      if k != "PYTHONDONTWRITEBYTECODE"})  # caches bytecode
        for name, extra in setups:
            rows.append(run(folder, server, name, extra, slots, args.calls, args.ttft_ms, args.total_ms))
            r = rows[-1]
            print(f"  done: {name} in {r['wall']:.1f} s", file=sys.stderr, flush=True)
    print(f"{'setup':<30} {'wall (ideal)':>14} {'ideal/wall':>10} {'utilization':>11} {'first req':>9} {'CPU':>7} "
          f"{'TTFT - served':>13} {'requests lost':>13}")
    for r in rows:
        print(f"{r['setup']:<30} {r['wall']:>6.1f} s ({r['ideal']:.0f} s) {r['ideal'] / r['wall']:>10.2f} "
              f"{r['utilization']:>11.2f} {r['first']:>7.1f} s {r['cpu']:>5.0f} s {r['ttft_over']:>10.1f} ms "
              f"{r['missing']:>13}")


if __name__ == "__main__":
    main()
