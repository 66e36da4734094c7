"""How many distinct scenarios each pack's composer makes, and how fast it composes them.

Composes `--draws` tries per pack (seeded as `callm generate` seeds them), keeps those the engine
accepts (the tools gave what the draw meant; every key value is said or returned), and counts the
distinct scenarios among them: the pack's sub-goals, branches, complications and the values that
decide the answer (`generated.scenario`, which names no person). It also counts the distinct masked
answer keys (identities masked, as split-check reads them). Composing is the cheap part of
`callm generate`; the lock, the oracle, split-check and `callm prove` follow for each kept task.

Run from the repository root:  python benchmarks/scenario_space.py [--draws 2000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pytest_callm.authoring.compose import Bench, load_composer
from pytest_callm.authoring.generate import Pools, compose_task
from pytest_callm.authoring.lock import find_task_files
from pytest_callm.rl.memorisation import people_dates
from pytest_callm.task.pack import PackRegistry, default_industries
from pytest_callm.task.task_file import read_task_json

LOCKED_A_PACK = 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("packs", nargs="*", default=["legal", "healthcare", "customer_support"])
    args = parser.parse_args()
    packs = PackRegistry(default_industries(Path.cwd()))
    locked = [read_task_json(f) for f in find_task_files([Path("tasks")])]
    for name in args.packs:
        pack = packs.get(name)
        compose, pools, bench = load_composer(pack), Pools.load(pack, locked), Bench(pack)
        births = people_dates(pack)  # a date of birth is who the caller is: masked like a name
        started = time.perf_counter()
        scenarios, keys, kept = set(), set(), 0
        for i in range(args.draws):
            data, _ = compose_task(pack, compose, pools, 0, i, 0, bench)
            if data is None:
                continue
            kept += 1
            scenarios.add(data["generated"]["scenario"])
            keys.add(tuple((c["name"], tuple(sorted((k, str(v)) for k, v in (c.get("parameters") or {}).items()
                                                    if pack.tools[c["name"]].kinds.get(k) not in
                                                    ("person", "phone", "email", "identifier", "party")
                                                    and k not in pack.tools[c["name"]].free_text and k not in births)))
                           for c in data["exp_tool_calls"]))
        seconds = time.perf_counter() - started
        bench.close()
        print(f"{name}: {args.draws} draws, {kept} accepted; {len(scenarios)} distinct scenarios "
              f"({len(scenarios) / LOCKED_A_PACK:.1f}x the {LOCKED_A_PACK} locked tasks), {len(keys)} distinct keys "
              f"with identities masked; composing {1000 * seconds / max(kept, 1):.0f} s per 1,000 accepted")


if __name__ == "__main__":
    main()
