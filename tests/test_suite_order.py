"""The suite's own hand-out order (suite_order.py): the costly spread through the cheap, so that the
share of tests done keeps pace with the time spent, and the large units still start early."""

from __future__ import annotations

import json
import re

from suite_order import COSTS, done_at, per_test_costs, play, spread


def planted() -> tuple[dict[str, list[str]], dict[str, float]]:
    """One audit file played as a unit (60 tests of 1 s), 20 pytest runs (5 s each) and 900 quick tests
    (10 ms), in the order a collection gives them: the slow ones first."""
    units = {"tests/test_audit.py": [f"tests/test_audit.py::case[{i}]" for i in range(60)]}
    units |= {f"tests/test_runs.py::run[{i}]": [f"tests/test_runs.py::run[{i}]"] for i in range(20)}
    units |= {f"tests/test_quick.py::q[{i}]": [f"tests/test_quick.py::q[{i}]"] for i in range(900)}
    return units, {"tests/test_audit.py": 1.0, "tests/test_runs.py": 5.0, "tests/test_quick.py": 0.01}


def cost_of(units, per_test) -> dict[str, float]:
    return {t: per_test[t.split("::")[0]] for tests in units.values() for t in tests}


def test_every_unit_is_handed_out_once():
    units, per_test = planted()
    order = spread(units, per_test)
    assert sorted(order) == sorted(units)


def test_on_two_workers_the_share_of_tests_done_keeps_pace_with_the_time_and_the_end_does_not_move():
    units, per_test = planted()
    cost = cost_of(units, per_test)
    largest_first = play(sorted(units, key=lambda u: -len(units[u])), units, cost)  # xdist's own order
    spread_out = play(spread(units, per_test), units, cost)
    # Largest first, the slow tests fill the first half: few tests are done a quarter of the way.
    assert done_at(largest_first, [0.25, 0.5]) < [0.1, 0.2]
    quarter, half = done_at(spread_out, [0.25, 0.5])
    assert 0.15 <= quarter <= 0.4 and 0.35 <= half <= 0.65
    assert spread_out[-1] <= largest_first[-1] * 1.05  # the large unit still starts early


def test_a_module_missing_from_the_table_counts_as_the_median_one():
    units, per_test = planted()
    units["tests/test_new.py::t"] = ["tests/test_new.py::t"]
    assert sorted(spread(units, per_test)) == sorted(units)


def test_the_table_is_read_from_its_file_and_a_missing_or_broken_one_orders_by_count(tmp_path):
    costs = per_test_costs()
    if COSTS.is_file():
        table = json.loads(COSTS.read_text())["modules"]
        name, module = next(iter(table.items()))
        assert costs[name] == module["cpu_s"] / module["tests"]
    assert per_test_costs(tmp_path / "absent.json") == {}
    (tmp_path / "broken.json").write_text("{")
    assert per_test_costs(tmp_path / "broken.json") == {}
    units, _ = planted()
    assert sorted(spread(units, {})) == sorted(units)


CRASH = '''
import os
import signal


def test_this_one_kills_its_worker():
    os.kill(os.getpid(), signal.SIGKILL)
'''


def test_a_test_that_kills_its_worker_is_reported_once_and_the_run_ends(tmp_path):
    """xdist's LoadScope put a crashed test back in the queue: it killed the next worker as well, and the
    run then hung with every worker idle (seen once in the suite, hours of CI lost). The scheduler here
    (conftest.py) reports it once, as crashed, and plays the rest."""
    import subprocess
    import sys

    from conftest import REPO

    crash = tmp_path / "test_crash_here.py"
    crash.write_text(CRASH)
    proc = subprocess.run([sys.executable, "-m", "pytest", str(crash), "tests/test_stats.py", "-n", "2", "-q",
                           "-p", "no:cacheprovider"], cwd=REPO, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out[-3000:]
    assert out.count("node down") == 1 and re.search(r"\b1 failed, \d+ passed", out), out[-3000:]


DIES_AFTER_EIGHT = '''
import os
import signal
from pathlib import Path

import pytest

finished = []  # this worker's tests


@pytest.fixture(autouse=True)
def the_first_worker_past_eight_tests_dies():
    if len(finished) == 8:
        try:  # only one worker dies: the first to create the file
            os.close(os.open(Path(__file__).with_name("died"), os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.kill(os.getpid(), signal.SIGKILL)
    yield
    finished.append(1)


@pytest.mark.parametrize("i", range(40))
def test_quick(i):
    pass
'''


def test_a_worker_that_dies_after_finishing_tests_leaves_the_others_to_end_the_run(tmp_path):
    """xdist put a crashed worker's whole workload back in the queue, the tests it had finished too: a
    worker handed one of those got nothing to run, and kept waiting for a next test while holding its
    last one (a worker runs a test once it holds the next). The suite hung at 98 % with every worker
    idle, twice. Now only what is left to play goes back."""
    import subprocess
    import sys

    from conftest import REPO

    dies = tmp_path / "test_dies_after_eight.py"
    dies.write_text(DIES_AFTER_EIGHT)
    proc = subprocess.run([sys.executable, "-m", "pytest", str(dies), "tests/test_stats.py", "-n", "2", "-q",
                           "-p", "no:cacheprovider"], cwd=REPO, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and out.count("node down") == 1, out[-3000:]
    assert re.search(r"\b1 failed, \d+ passed", out), out[-3000:]
    assert (tmp_path / "died").is_file()
