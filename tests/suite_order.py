"""The order in which `pytest tests -n N` hands its work to the workers: the costly spread through the cheap.

Left to itself, xdist gave out the largest units first (the words gate's audit files, each one
unit: see `pytest_xdist_make_scheduler` in conftest.py), so the first minutes ran the slowest tests
and a newcomer who stopped the run early read "7 % after 3 minutes" as "45 minutes in all". Here
each unit's cost is estimated from `suite_costs.json` (a test's CPU seconds, on average, in its
module, as `python benchmarks/suite_costs.py --costs tests/suite_costs.json` measured them), and the
units are handed out so that the share of tests done keeps pace with the share of time gone: the
hand-out is played beforehand on the workers with those costs, and a worker asking for work gets the
largest unit left whenever the count has run ahead of the time (or that unit would otherwise end
late), else the cheapest tests left. The large units still start early enough that no worker is
left alone with one at the end.

A module missing from the table (a new one) counts as the median module's tests; stale figures only
make the progress less even, never a test pass or fail. `play` replays a hand-out on N workers with
given costs: what the tests here and `benchmarks/suite_costs.py --progress` measure an order by.
"""

from __future__ import annotations

import heapq
import json
import re
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

COSTS = Path(__file__).resolve().parent / "suite_costs.json"
# A module whose fixture plays whole runs declares `pytestmark = pytest.mark.xdist_group(...)`: under
# `-n`, its tests go to one worker, so the runs are played once, not once on each worker that draws
# one of its tests. xdist's own `--dist loadgroup` groups nothing with pytest 9 (it renames items
# through an attribute pytest no longer reads), so the controller groups them (conftest.py), by module.
GROUPED = re.compile(r"^pytestmark = .*pytest\.mark\.xdist_group\(", re.M)
# A module-scoped fixture asks the same: split over two workers, each built it (a tool server, an
# environment of every task, a blind auditor's servers). Its own, or one of conftest.py's.
MODULE_FIXTURE = re.compile(r'@pytest\.fixture\(scope="module"\)\s*\ndef (\w+)')
_SHARED = MODULE_FIXTURE.findall((Path(__file__).resolve().parent / "conftest.py").read_text(encoding="utf-8"))


def one_unit(module: Path) -> bool:
    """Whether a test module's tests go to one worker together."""
    if module.suffix != ".py" or not module.is_file():
        return False
    text = module.read_text(encoding="utf-8")
    return bool(GROUPED.search(text) or MODULE_FIXTURE.search(text)
                or any(re.search(rf"\b{name}\b", text) for name in _SHARED))


def per_test_costs(path: Path = COSTS) -> dict[str, float]:
    """Module path (as in node ids, `tests/test_x.py`) -> CPU seconds a test of it takes on average."""
    try:
        modules = json.loads(path.read_text(encoding="utf-8"))["modules"]
        return {name: m["cpu_s"] / m["tests"] for name, m in modules.items() if m["tests"]}
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return {}  # no table: every test counts the same


def spread(units: Mapping[str, Sequence[str]], per_test: Mapping[str, float], workers: int = 2) -> list[str]:
    """The units' names in the order to hand them out (`units`: name -> its tests' node ids): the
    hand-out is played on `workers` with the estimated costs, and each time a worker asks for work it
    gets the largest unit left if the share of tests done is ahead of the share of the time gone, else
    the cheapest tests left."""
    known = sorted(per_test.values())
    default = statistics.median(known) if known else 1.0
    cost = {t: per_test.get(t.split("::", 1)[0], default) for tests in units.values() for t in tests}
    unit_cost = {name: sum(cost[t] for t in tests) for name, tests in units.items()}
    total_count = sum(len(tests) for tests in units.values()) or 1
    end = sum(unit_cost.values()) / workers or 1.0  # the run's end, were the workers always busy
    # Two views of the same pool: the largest units first, and the cheapest tests first (collection
    # order breaks ties, so the cheap end keeps a module's tests together).
    largest = sorted(units, key=lambda n: -unit_cost[n])
    position = {name: i for i, name in enumerate(units)}
    cheapest = sorted(units, key=lambda n: (unit_cost[n] / max(len(units[n]), 1), position[n]))
    largest.reverse()
    cheapest.reverse()  # both popped from their ends
    taken: set[str] = set()

    def next_unit(now: float, done: int) -> str | None:
        if len(taken) == len(units):
            return None
        for pool in (largest, cheapest):
            while pool[-1] in taken:
                pool.pop()
        # The largest left goes now if the count is ahead, or if it would not end in time otherwise.
        ahead = done / total_count > now / end or unit_cost[largest[-1]] >= (end - now) / 2
        pool = largest if ahead else cheapest
        taken.add(pool[-1])
        return pool.pop()

    return _hand_out(units, cost, workers, next_unit)[0]


def play(order: Sequence[str], units: Mapping[str, Sequence[str]], cost: Mapping[str, float],
         workers: int = 2) -> list[float]:
    """When each test ends (sorted), handed out in `order` as xdist's LoadScopeScheduling does; `cost`:
    a test's node id -> its seconds."""
    queue = list(reversed(order))
    return _hand_out(units, cost, workers, lambda now, done: queue.pop() if queue else None)[1]


def _hand_out(units: Mapping[str, Sequence[str]], cost: Mapping[str, float], workers: int,
              next_unit: Callable[[float, int], str | None]) -> tuple[list[str], list[float]]:
    """xdist's LoadScopeScheduling, played: a unit to each worker, and another to a worker once two or
    fewer of its tests are left. `next_unit(now, tests done)` names the unit handed out. Returns the
    units in the order handed out, and when each test ended (sorted)."""
    order: list[str] = []
    pending: list[list[str]] = [[] for _ in range(workers)]
    ends: list[float] = []

    def give(w: int, now: float) -> None:
        name = next_unit(now, len(ends))
        if name is not None:
            order.append(name)
            pending[w].extend(units[name])

    for w in range(workers):
        give(w, 0.0)
    clock = [(0.0, w) for w in range(workers)]
    while clock:
        now, w = heapq.heappop(clock)
        if not pending[w]:
            give(w, now)
            if not pending[w]:
                continue  # nothing left: this worker is done
        now += cost[pending[w].pop(0)]
        ends.append(now)
        if len(pending[w]) <= 2:
            give(w, now)
        heapq.heappush(clock, (now, w))
    return order, sorted(ends)


def done_at(ends: Sequence[float], fractions: Sequence[float]) -> list[float]:
    """The share of tests done at each fraction of the run's end."""
    return [sum(1 for e in ends if e <= ends[-1] * f) / len(ends) for f in fractions]
