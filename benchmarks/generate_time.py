"""How long `callm generate` takes: wall time, CPU time (this process and the provers it starts),
and each phase (drawing, locking with the oracle's replay, proving, split-checking).

The figures are printed, never asserted by a test: on a shared machine the wall time says more about
the neighbours than about the generator, so the CPU time is printed beside it.

Run from the repository root:  python benchmarks/generate_time.py legal --n 1000 [--seed 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_callm.cli import main as callm  # noqa: E402


def cpu_seconds() -> float:
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pack")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--out", type=Path, default=None, help="keep the tasks here (default: a temporary folder)")
    args = parser.parse_args()
    os.chdir(REPO)
    with tempfile.TemporaryDirectory(prefix="callm-generate-time-") as scratch:
        out = args.out or Path(scratch)
        argv = ["generate", args.pack, "--n", str(args.n), "--seed", str(args.seed), "--out", str(out)]
        if args.workers:
            argv += ["--workers", str(args.workers)]
        wall, cpu = time.perf_counter(), cpu_seconds()
        code = callm(argv)
        wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    load = os.getloadavg()[0]
    print(f"{args.pack}: {args.n} task(s) asked in {wall:.0f} s wall, {cpu:.0f} s CPU "
          f"({cpu / args.n:.2f} s of CPU a task) on {os.cpu_count()} core(s), load average {load:.1f} at the end")
    return code


if __name__ == "__main__":
    sys.exit(main())
