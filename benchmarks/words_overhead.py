"""What the words gate adds to the oracle run's CPU time (issue 36: at most 20 %).

Plays every locked task's answer key once with the oracle, in process (engine, tool server and
verifier in this one process, as `callm prove` plays them), and measures this process's CPU time:

  1. the oracle run as the paper scores it: every call played and scored on the three gates;
  2. the words gate alone, read again over the same trajectories (speech and free text, rule classes,
     claims, results, grounding, disclosure);

and prints both with their ratio. A pytest oracle run (five attempts a task) scores each trajectory
once as well, so the ratio is the share the gate adds there, less the process start-up it leaves out.
Run from the repository root:  python benchmarks/words_overhead.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from pytest_callm.authoring.lock import find_task_files  # noqa: E402
from pytest_callm.call.oracle import OracleModel, ScriptedCaller  # noqa: E402
from pytest_callm.phone.line import CleanLine  # noqa: E402
from pytest_callm.runs.runtime import Participants, Runtime  # noqa: E402
from pytest_callm.scoring.verify import verify  # noqa: E402
from pytest_callm.scoring.verify import check_words  # noqa: E402
from pytest_callm.task.pack import PackRegistry  # noqa: E402
from pytest_callm.task.task_file import load_task  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="times the words gate reads every trajectory (best kept)")
    args = parser.parse_args()
    packs = PackRegistry([REPO / "industries"])
    tasks = [load_task(p, packs)[1:] for p in find_task_files([REPO / "tasks"])]
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        started = time.process_time()
        played = []
        for task, pack in tasks:
            model = OracleModel(task, pack)
            traj = runtime.play(task, pack, 1, Participants(model, ScriptedCaller(model), CleanLine()), rerun=False)
            verdict = verify(task, pack, traj, words=False)
            assert verdict.passed, f"{task.task_id}: the oracle fails the paper's gates"
            played.append((task, pack, traj))
        oracle_cpu = time.process_time() - started
    finally:
        runtime.close()
    best = None
    for _ in range(args.repeat):
        started = time.process_time()
        failing = sum(not check_words(task, pack, traj).passed for task, pack, traj in played)
        took = time.process_time() - started
        best = took if best is None else min(best, took)
    print(f"{len(played)} answer keys played and scored on the paper's three gates: {oracle_cpu:.2f} s of CPU "
          f"({1000 * oracle_cpu / len(played):.1f} ms a call)")
    print(f"the words gate over the same trajectories: {best:.2f} s of CPU ({1000 * best / len(played):.2f} ms a call; "
          f"best of {args.repeat}); {failing} failing")
    print(f"the words gate adds {100 * best / oracle_cpu:.1f} % to the oracle's CPU time (aim: at most 20 %)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
