"""The memorisation check (issue 38): a policy that remembers the other set's answers, played here.

On each training task it plays the answer key of the nearest locked task (masked similarity),
with the training task's identities put in (`pytest_callm.rl.memorisation`), and counts the
training tasks that passes; then the other way round (the nearest training key on each locked
task). A training set that teaches the test lets the memorised keys pass; the aim is at most 5%
each way. It also prints the masked distance of every training task to its nearest locked task.

Run from the repository root:  python benchmarks/memorisation.py [TRAINING...] [--eval tasks]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from pytest_callm.rl.memorisation import memorisation
from pytest_callm.rl.splits import load_tasks, nearest_evaluation
from pytest_callm.task.pack import PackRegistry, default_industries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("training", nargs="*", type=Path, default=[Path("training")])
    parser.add_argument("--eval", dest="evaluation", type=Path, default=Path("tasks"))
    args = parser.parse_args()
    packs = PackRegistry(default_industries(Path.cwd()))
    training, p1 = load_tasks(args.training, packs)
    locked, p2 = load_tasks([args.evaluation], packs)
    if p1 or p2:
        raise SystemExit("\n".join(p1 + p2))
    started = time.perf_counter()
    near = nearest_evaluation(training, locked)
    distances = sorted(1 - n.similarity for n in near)
    print(f"masked distance of {len(training)} training tasks to the nearest of {len(locked)} locked: least "
          f"{distances[0]:.2f}, median {statistics.median(distances):.2f}, most {distances[-1]:.2f}")
    for label, on, memorised in (("locked keys on training tasks", training, locked),
                                 ("training keys on locked tasks", locked, training)):
        played = memorisation(on, memorised, packs.loaded())
        passed = [p for p in played if p.passed]
        by_industry: dict[str, list[int]] = {}
        for p in played:
            counts = by_industry.setdefault(p.played_on.task.industry, [0, 0])
            counts[0] += p.passed
            counts[1] += 1
        print(f"{label}: {len(passed)} of {len(played)} pass ({100 * len(passed) / max(1, len(played)):.1f}%); "
              + ", ".join(f"{k} {a}/{b}" for k, (a, b) in sorted(by_industry.items())))
        for p in passed[:5]:
            print(f"  passes: {p.memorised.name}'s key on {p.played_on.name}")
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
