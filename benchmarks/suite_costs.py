"""Where the project's own suite spends its time: CPU seconds per test module, on a busy machine too.

    python benchmarks/suite_costs.py tests/test_oracle.py tests/test_prove.py   # some modules
    python benchmarks/suite_costs.py --out costs.json tests                     # the whole suite
    python benchmarks/suite_costs.py --compare before.json after.json           # two runs side by side
    python benchmarks/suite_costs.py --costs tests/suite_costs.json tests       # the table the order reads
    python benchmarks/suite_costs.py --progress costs.json                      # how even `-n 2` runs

Wall time on a shared machine says more about the neighbours than about the tests, so each test's
cost here is CPU time: its process's (the worker's threads, the tool servers in them) plus that of
the child processes it waited for (the pytest runs and servers it started), setup and teardown
included, so a module's session and module fixtures are charged to the test that first needed them.
Runs with `-n 0`, one process, so that every second is counted once. Prints the modules by cost,
their share of the whole, and the costliest tests; `--out` keeps the figures for `--compare`.

`--costs` writes the per-module table that orders the work of `pytest tests -n N` (tests/suite_order.py).
`--progress` plays that order and xdist's own (largest units first) over the measured costs of a
whole-suite `--out` file, on two workers, and prints how much of the suite each has done a tenth, a
quarter and half of the way through: what someone watching the progress figure sees.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


class CostRecorder:
    """A pytest plugin: each test's CPU and wall seconds over setup, call and teardown."""

    def __init__(self, out: Path):
        self.out = out
        self.tests: dict[str, dict[str, float]] = {}

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cpu, wall = cpu_seconds(), time.monotonic()
        yield
        self.tests[item.nodeid] = {"cpu": cpu_seconds() - cpu, "wall": time.monotonic() - wall}

    def pytest_sessionfinish(self, session):
        self.out.write_text(json.dumps({"tests": self.tests}, indent=1))


def module_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def summarise(tests: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    modules: dict[str, dict[str, float]] = defaultdict(lambda: {"cpu": 0.0, "wall": 0.0, "tests": 0})
    for nodeid, cost in tests.items():
        module = modules[module_of(nodeid)]
        module["cpu"] += cost["cpu"]
        module["wall"] += cost["wall"]
        module["tests"] += 1
    return dict(modules)


def report(tests: dict[str, dict[str, float]], top: int) -> None:
    modules = summarise(tests)
    total = sum(m["cpu"] for m in modules.values()) or 1.0
    print(f"{'module':<44} {'tests':>5} {'CPU s':>8} {'share':>6} {'wall s':>8}")
    for name, m in sorted(modules.items(), key=lambda kv: -kv[1]["cpu"]):
        print(f"{name:<44} {m['tests']:>5} {m['cpu']:>8.1f} {m['cpu'] / total:>6.1%} {m['wall']:>8.1f}")
    print(f"{'all':<44} {len(tests):>5} {total:>8.1f}")
    print(f"\nthe {top} costliest tests (CPU s):")
    for nodeid, cost in sorted(tests.items(), key=lambda kv: -kv[1]["cpu"])[:top]:
        print(f"{cost['cpu']:>8.1f}  {nodeid}")


def compare(before: Path, after: Path) -> None:
    old = summarise(json.loads(before.read_text())["tests"])
    new = summarise(json.loads(after.read_text())["tests"])
    print(f"{'module':<44} {'before':>8} {'after':>8} {'ratio':>6}  (CPU s; tests before -> after)")
    for name in sorted(set(old) | set(new), key=lambda n: -old.get(n, {"cpu": 0})["cpu"]):
        a, b = old.get(name, {"cpu": 0.0, "tests": 0}), new.get(name, {"cpu": 0.0, "tests": 0})
        ratio = f"{b['cpu'] / a['cpu']:.2f}" if a["cpu"] else "-"
        print(f"{name:<44} {a['cpu']:>8.1f} {b['cpu']:>8.1f} {ratio:>6}  ({a['tests']} -> {b['tests']})")
    ta, tb = sum(m["cpu"] for m in old.values()), sum(m["cpu"] for m in new.values())
    print(f"{'all':<44} {ta:>8.1f} {tb:>8.1f} {tb / ta:>6.2f}")


def write_costs(tests: dict[str, dict[str, float]], path: Path) -> None:
    modules = summarise(tests)
    lines = [f'  {json.dumps(name)}: {{"tests": {m["tests"]}, "cpu_s": {m["cpu"]:.2f}}}'
             for name, m in sorted(modules.items())]  # a module a line: a new measurement diffs by module
    path.write_text('{"measured_by": "python benchmarks/suite_costs.py --costs (CPU seconds, -n 0)",\n'
                    ' "modules": {\n' + ",\n".join(lines) + "\n }\n}\n")


def progress(path: Path, workers: int = 2) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from suite_order import done_at, one_unit, play, spread

    tests = json.loads(path.read_text())["tests"]
    grouped = {m for m in {module_of(t) for t in tests} if one_unit(ROOT / m)}
    units: dict[str, list[str]] = {}
    for nodeid in tests:
        units.setdefault(module_of(nodeid) if module_of(nodeid) in grouped else nodeid, []).append(nodeid)
    cost = {t: c["cpu"] for t, c in tests.items()}
    per_test = {name: m["cpu"] / m["tests"] for name, m in summarise(tests).items()}
    orders = {"largest units first (xdist's own)": sorted(units, key=lambda u: -len(units[u])),
              "spread (tests/suite_order.py)": spread(units, per_test)}
    print(f"{len(tests)} tests in {len(units)} units on {workers} workers, each test costing what it cost here")
    print(f"{'order':<36} {'end':>7}  share of tests done at 10 % / 25 % / 50 % of the end")
    for label, order in orders.items():
        ends = play(order, units, cost, workers)
        shares = done_at(ends, (0.1, 0.25, 0.5))
        print(f"{label:<36} {ends[-1] / 60:>5.1f} m  " + " / ".join(f"{s:.0%}" for s in shares))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="keep the per-test figures in this JSON file")
    parser.add_argument("--top", type=int, default=25, help="how many of the costliest tests to list (default 25)")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"), help="compare two --out files")
    parser.add_argument("--costs", type=Path, help="write the per-module table the suite's order reads here")
    parser.add_argument("--progress", type=Path, metavar="OUT", help="play the hand-out orders over an --out file")
    parser.add_argument("--record", type=Path, help=argparse.SUPPRESS)  # inside the pytest run
    parser.add_argument("paths", nargs="*", help="test paths and pytest options (after --)")
    args = parser.parse_args(argv)
    if args.compare:
        compare(*args.compare)
        return 0
    if args.progress:
        progress(args.progress)
        return 0
    if args.record:  # the pytest process itself
        return pytest.main([*args.paths, "-n", "0", "-q", "-p", "no:cacheprovider"], plugins=[CostRecorder(args.record)])
    out = args.out or ROOT / ".suite-costs.json"
    # A fresh process, so that RUSAGE_CHILDREN starts at nought and no import made here is counted.
    proc = subprocess.run([sys.executable, __file__, "--record", str(out.resolve()), "--", *(args.paths or ["tests"])],
                          cwd=ROOT, env={**os.environ})
    if not out.exists():
        print("no figures were written (the run ended before its finish)", file=sys.stderr)
        return proc.returncode or 1
    tests = json.loads(out.read_text())["tests"]
    report(tests, args.top)
    if args.costs:
        write_costs(tests, args.costs)
        print(f"\nper-module costs written to {args.costs}")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
