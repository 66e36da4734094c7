"""Oracle throughput: how much time the harness itself spends per call (no model, no caller).

Prints, for the example pack:
  1. in process: milliseconds per oracle call (engine + tool server over loopback + verifier) and
     per tool request, from replaying every task many times through one Runtime;
  2. through pytest with -n 0 and -n 2: calls per second over the whole session (start-up included).

Run from the repository root:  python benchmarks/oracle_throughput.py [--attempts 25]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_callm.cli import default_industries  # noqa: E402
from pytest_callm.lock import find_task_files  # noqa: E402
from pytest_callm.pack import PackRegistry  # noqa: E402
from pytest_callm.runtime import Runtime  # noqa: E402
from pytest_callm.task import load_task  # noqa: E402

TASKS = REPO / "examples" / "tasks"


def in_process(attempts: int) -> None:
    packs = PackRegistry(default_industries(REPO))
    tasks = [(pack, task) for _, task, pack in (load_task(p, packs) for p in find_task_files([TASKS]))]
    runtime = Runtime("oracle", packs.loaded())
    try:
        for pack, task in tasks:  # warm up: first call of each task creates files, JITs nothing
            runtime.run_attempt(task, pack, 1)
        per_call, requests = [], 0
        for attempt in range(attempts):
            for pack, task in tasks:
                start = time.perf_counter()
                trajectory, verdict = runtime.run_attempt(task, pack, attempt + 1)
                per_call.append((time.perf_counter() - start) * 1000)
                assert verdict.passed, task.task_id
                # tool server requests: industry tools plus the final state read
                requests += sum(1 for c in trajectory.tool_calls if c.kind == "industry") + 1
    finally:
        runtime.close()
    calls = len(per_call)
    print(f"in process: {calls} oracle calls, {requests / calls:.1f} tool-server requests per call")
    print(f"  ms per call: median {statistics.median(per_call):.2f}, mean {statistics.mean(per_call):.2f}, "
          f"p90 {statistics.quantiles(per_call, n=10)[-1]:.2f}")
    print(f"  ms per tool-server request (mean call time / requests): {sum(per_call) / requests:.2f}")
    print(f"  calls per second: {1000 * calls / sum(per_call):.0f}")


def through_pytest(workers: int, attempts: int) -> None:
    cmd = [sys.executable, "-m", "pytest", str(TASKS), "--callm-model=oracle", f"--callm-attempts={attempts}",
           "-n", str(workers), "-q", "-p", "no:cacheprovider"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        print(proc.stdout[-3000:], proc.stderr[-3000:])
        raise SystemExit(f"pytest -n {workers} failed")
    calls = attempts * len(find_task_files([TASKS]))
    print(f"pytest -n {workers}: {calls} calls in {wall:.2f} s wall (start-up included): "
          f"{calls / wall:.0f} calls/s, {1000 * wall / calls:.1f} ms per call")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=25, help="attempts per task (default 25)")
    args = parser.parse_args()
    in_process(args.attempts)
    for workers in (0, 2):
        through_pytest(workers, args.attempts)


if __name__ == "__main__":
    main()
