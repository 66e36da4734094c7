"""The project's own suite, run with CPU-bound processes beside it: does it hold under load?

    python benchmarks/suite_under_load.py                    # 3 runs of `pytest tests -n 3`, 2 burners
    python benchmarks/suite_under_load.py --runs 1 --burners 4 -- tests/test_concurrency.py -n 2

Each burner is a process spinning in a tight loop for as long as the runs last (on a 2-core machine,
two of them double the load). Every run's exit code, time and failed tests are printed; the script
exits non-zero when any run failed. Tests that depend on timing must wait on events, not on speed:
a test that passes alone and fails here is a bug in the test (or in what it tests).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def burn() -> None:  # pragma: no cover - runs in the burner processes
    x = 0
    while True:
        x = (x * 1_103_515_245 + 12_345) % 2**31


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of the suite, one after the other (default 3)")
    parser.add_argument("--burners", type=int, default=2, help="CPU-bound processes beside it (default 2)")
    parser.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: tests -n 3 -q)")
    args = parser.parse_args(argv)
    pytest_args = args.pytest_args or ["tests", "-n", "3", "-q", "-p", "no:cacheprovider"]
    burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(args.burners)]
    for b in burners:
        b.start()
    results = []
    try:
        for run in range(1, args.runs + 1):
            began = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "pytest", *pytest_args], cwd=ROOT, capture_output=True,
                                  text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            took = time.monotonic() - began
            tail = (proc.stdout.strip().splitlines() or [""])[-1]
            failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", proc.stdout, re.M)
            load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
            print(f"run {run}: exit {proc.returncode} in {took / 60:.1f} min (load {load:.1f}): {tail}", flush=True)
            for name in failed:
                print(f"    {name}", flush=True)
            results.append(proc.returncode)
    finally:
        for b in burners:
            b.terminate()
        for b in burners:
            b.join()
    held = sum(1 for r in results if r == 0)
    print(f"{held} of {len(results)} runs passed with {args.burners} CPU-bound processes beside them")
    return 0 if held == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
