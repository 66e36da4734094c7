"""Does the offline caller give a policy what it asks for? The question-asking key on every task.

Plays the question-asking key (`pytest_callm.rl.asking.QuestionAskingModel`: the answer key, but
each value the caller is to give is asked for in words and used only once the caller's heard words
hold it) against the offline caller (`pytest_callm.call.script_caller.ScriptCaller`) through the RL
environment, on every task of the given folders, and prints the share of calls that pass, per
industry and in all, with each failing task's first failing gate. `--caller opening` plays the
opening-line-only caller instead (the smoke test: asking gets nothing, so the share falls).

Run from the repository root:  python benchmarks/asking_policy.py [--tasks tasks] [--seed 1]
                                   [--line default|clean] [--caller script|opening] [-v]
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pytest_callm.rl.asking import QuestionAskingModel  # noqa: E402
from pytest_callm.rl.environment import CallEnvironment, gather_on, play_policy  # noqa: E402


def play_all(tasks: list[str], seed: int, line: str, caller: str, root: Path | None = None):
    """(task name, step result) for every task, played at `seed`."""
    with CallEnvironment(tasks, root=root, line=line, offline_caller=caller, tools_in_process=True) as env:
        names = env.task_names()
        policies = {n: QuestionAskingModel(*env.task(n)) for n in names}
        results = gather_on(env, [play_policy(env, n, policies[n], seed) for n in names])
    return list(zip(names, results))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="*", default=["tasks"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--line", default="default")
    ap.add_argument("--caller", default="script", choices=["script", "opening"])
    ap.add_argument("-v", "--verbose", action="store_true", help="print each failing call's explanation")
    args = ap.parse_args()
    started = time.perf_counter()
    played = play_all(args.tasks, args.seed, args.line, args.caller)
    wall = time.perf_counter() - started
    by_pack: dict[str, list[bool]] = collections.defaultdict(list)
    for name, result in played:
        by_pack[name.split("/")[0]].append(result.reward == 1.0)
        if result.reward != 1.0:
            reason = result.info.get("infrastructure_error") or ", ".join(result.info["progress"]["failed_gates"])
            print(f"FAIL {name}: {reason} (ended: {result.info.get('end_reason')})")
            if args.verbose and "explanation" in result.info:
                print("   ", result.info["explanation"].replace("\n", "\n    "))
    passed = sum(sum(v) for v in by_pack.values())
    total = sum(len(v) for v in by_pack.values())
    print(f"question-asking key, {args.caller} caller, line={args.line}, seed {args.seed}:")
    for pack, oks in sorted(by_pack.items()):
        print(f"  {pack:18} {sum(oks):4} / {len(oks):<4} {sum(oks) / len(oks):6.1%}")
    print(f"  {'all':18} {passed:4} / {total:<4} {passed / total:6.1%}   ({wall:.0f} s)")


if __name__ == "__main__":
    main()
