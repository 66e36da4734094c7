"""Bootstrap intervals over tasks (stats.py), carried by the summary (metrics.py) and shown in its table
(summary.py)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from fractions import Fraction
from itertools import product
from math import comb, sqrt

import pytest

from pytest_callm.scoring.metrics import summarize
from pytest_callm.scoring.stats import bootstrap, bootstrap_counts, percentile, task_counts
from pytest_callm.report.summary import render


def attempt(task_id: str, passed, *, industry: str = "vet_clinic", category: str = "C1",
            difficulty: str = "easy", error_kind: str | None = None) -> dict:
    r = {"task_id": task_id, "industry": industry, "category": category, "difficulty": difficulty,
         "passed": passed}
    if passed is not None:
        r["gates"] = {"tools": bool(passed), "handoff": True, "database": True}
    if error_kind:
        r["error_kind"] = error_kind
    return r


def attempts(task_id: str, passes: int, fails: int, **kw) -> list[dict]:
    return [attempt(task_id, True, **kw) for _ in range(passes)] + [attempt(task_id, False, **kw) for _ in range(fails)]


def run_of(rates: dict[str, list[tuple[int, int]]]) -> list[dict]:
    """industry -> [(passes, fails) per task] as per-attempt results."""
    return [r for industry, tasks in rates.items()
            for i, (p, f) in enumerate(tasks) for r in attempts(f"T{i:03d}", p, f, industry=industry)]


def random_run(seed: int, industries: int = 3, tasks: int = 20, n: int = 5, rate: float = 0.6) -> list[dict]:
    rng = random.Random(seed)
    results = []
    for i in range(industries):
        p = rng.uniform(rate - 0.2, rate + 0.2)
        for t in range(rng.randint(max(1, tasks // 2), tasks)):
            results += [attempt(f"T{t}", rng.random() < p, industry=f"ind{i}") for _ in range(n)]
    return results


# --- determinism ---------------------------------------------------------------------------------

def test_same_results_give_the_same_intervals():
    results = random_run(1)
    assert bootstrap(results, 5).to_json() == bootstrap(results, 5).to_json()


def test_the_order_of_results_does_not_matter():
    results = random_run(2)
    shuffled = list(results)
    random.Random(0).shuffle(shuffled)
    assert bootstrap(shuffled, 5).to_json() == bootstrap(results, 5).to_json()


def test_another_process_gives_the_same_intervals(tmp_path):
    results = random_run(3)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    code = ("import json, sys; from pytest_callm.scoring.stats import bootstrap; "
            "print(json.dumps(bootstrap(json.load(open(sys.argv[1])), 5).to_json()))")
    for hash_seed in ("1", "2"):  # the seeding does not go through str hashing
        out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": hash_seed})
        assert json.loads(out.stdout) == json.loads(json.dumps(bootstrap(results, 5).to_json()))


def test_another_seed_gives_other_intervals_and_the_seed_is_reported():
    results = random_run(4)
    a, b = bootstrap(results, 5, seed=1), bootstrap(results, 5, seed=2)
    assert a.to_json()["seed"] == 1
    assert a.overall.pass_at_1.estimate == b.overall.pass_at_1.estimate
    assert (a.overall.pass_at_1.low, a.overall.pass_at_1.high) != (b.overall.pass_at_1.low, b.overall.pass_at_1.high)


def test_an_industry_interval_does_not_move_when_another_industry_is_added():
    vet = run_of({"vet_clinic": [(3, 2)] * 5 + [(1, 4)] * 7})
    dental = run_of({"dental_office": [(5, 0)] * 3 + [(0, 5)] * 4})
    assert (bootstrap(vet, 5).industries["vet_clinic"]
            == bootstrap(vet + dental, 5).industries["vet_clinic"])


def test_default_is_at_least_1000_resamples():
    assert bootstrap(run_of({"vet_clinic": [(1, 1)]}), 2).resamples >= 1000


# --- the figures ---------------------------------------------------------------------------------

def test_a_perfect_run_gives_one_to_one():
    iv = bootstrap(run_of({"vet_clinic": [(5, 0)] * 8, "dental_office": [(5, 0)] * 3}), 5)
    for g in [*iv.industries.values(), iv.overall]:
        for interval in (g.pass_at_1, g.pass_k):
            assert (interval.estimate, interval.low, interval.high) == (1.0, 1.0, 1.0)


def test_a_run_that_always_fails_gives_zero_to_zero():
    iv = bootstrap(run_of({"vet_clinic": [(0, 5)] * 8}), 5)
    assert (iv.overall.pass_k.low, iv.overall.pass_k.high) == (0.0, 0.0)


@pytest.mark.parametrize("seed", range(8))
def test_intervals_contain_the_point_estimate(seed):
    iv = bootstrap(random_run(100 + seed, n=rng_n(seed)), 2)
    for g in [*iv.industries.values(), iv.overall]:
        for interval in (g.pass_at_1, g.pass_k):
            assert interval.low <= interval.estimate <= interval.high
            assert 0.0 <= interval.low <= interval.high <= 1.0


def rng_n(seed: int) -> int:
    return 2 + seed % 4


@pytest.mark.parametrize("seed", range(4))
def test_point_estimates_are_the_summary_figures(seed):
    results = random_run(200 + seed) + [attempt("T0", None, industry="ind0", error_kind="infrastructure")]
    s = summarize(results, 5, resamples=0)
    iv = bootstrap(results, 5)
    for name, g in s.industries.items():
        assert iv.industries[name].pass_at_1.estimate == pytest.approx(g.pass_at_1, abs=1e-12)
        assert iv.industries[name].pass_k.estimate == pytest.approx(g.pass_k, abs=1e-12)
        assert iv.industries[name].tasks == g.tasks
    assert iv.overall.pass_at_1.estimate == pytest.approx(s.overall.pass_at_1, abs=1e-12)
    assert iv.overall.pass_k.estimate == pytest.approx(s.overall.pass_k, abs=1e-12)


def test_more_tasks_give_a_narrower_interval_at_the_same_pass_rate():
    def widths(tasks: int) -> tuple[float, float]:
        iv = bootstrap(run_of({"vet_clinic": [(5, 0), (0, 5)] * (tasks // 2)}), 5).industries["vet_clinic"]
        assert iv.pass_at_1.estimate == 0.5 and iv.pass_k.estimate == 0.5
        return iv.pass_at_1.high - iv.pass_at_1.low, iv.pass_k.high - iv.pass_k.low
    few, many = widths(10), widths(100)
    assert many[0] < few[0] / 2  # the width shrinks like 1/sqrt(tasks): 0.6 against 0.19
    assert many[1] < few[1] / 2


def test_pass_at_1_width_matches_the_normal_approximation():
    # 60 tasks, 5 attempts each, pass@1 0.7: every task has the same n, so the pooled pass@1 of a
    # resample is the mean of 60 task rates, whose bootstrap standard error is sd / sqrt(60)
    rates = [(5, 0)] * 24 + [(4, 1)] * 13 + [(3, 2)] * 8 + [(2, 3)] * 5 + [(1, 4)] * 4 + [(0, 5)] * 6
    iv = bootstrap(run_of({"vet_clinic": rates}), 5).industries["vet_clinic"]
    values = [p / 5 for p, _ in rates]
    mean = sum(values) / len(values)
    assert mean == pytest.approx(0.7)
    se = sqrt(sum((v - mean) ** 2 for v in values) / len(values) / len(values))
    assert iv.pass_at_1.high - iv.pass_at_1.low == pytest.approx(2 * 1.96 * se, rel=0.1)
    assert (iv.pass_at_1.low + iv.pass_at_1.high) / 2 == pytest.approx(0.7, abs=0.02)


def exact_quantiles(values: list[list[Fraction]], qs: tuple[float, ...], margin: float) -> list[Fraction]:
    """Exact quantiles of the bootstrap distribution: every way of resampling each industry's tasks
    (len ** len of them per industry, all equally likely), the mean of industries' task means. Each
    quantile must sit well inside a step of the distribution function, so that a bootstrap with many
    resamples lands on it whatever its random draws."""
    dist: dict[Fraction, int] = {}
    for combo in product(*(product(v, repeat=len(v)) for v in values)):
        x = sum(sum(picks) / len(picks) for picks in combo) / len(combo)
        dist[x] = dist.get(x, 0) + 1
    total = sum(dist.values())
    steps, cdf = [], 0
    for x in sorted(dist):
        steps.append((x, cdf / total, (cdf + dist[x]) / total))
        cdf += dist[x]
    out = []
    for q in qs:
        x, before, after = next(s for s in steps if s[2] >= q)
        assert before < q - margin and after > q + margin, "a quantile on the edge of a step; pick another case"
        out.append(x)
    return out


def test_a_small_case_matches_exact_enumeration():
    tasks = {"A": (5, 5), "B": (5, 4), "C": (5, 2), "D": (5, 0)}  # (n, c)
    iv = bootstrap_counts({"x": tasks}, 2, resamples=20_000).industries["x"]
    # equal n: pooled pass@1 of a resample = mean of task rates
    low, high = exact_quantiles([[Fraction(c, n) for n, c in tasks.values()]], (0.025, 0.975), 0.004)
    assert (iv.pass_at_1.low, iv.pass_at_1.high) == (pytest.approx(float(low)), pytest.approx(float(high)))
    assert (low, high) == (Fraction(1, 5), Fraction(9, 10))
    hats = [Fraction(comb(c, 2), comb(n, 2)) for n, c in tasks.values()]  # 1, 0.6, 0.1, 0
    low, high = exact_quantiles([hats], (0.025, 0.975), 0.004)
    assert (iv.pass_k.low, iv.pass_k.high) == (pytest.approx(float(low)), pytest.approx(float(high)))


def test_cross_industry_matches_exact_enumeration():
    vet = {"A": (4, 4), "B": (4, 1), "C": (4, 0)}
    dental = {"A": (4, 3), "B": (4, 2), "C": (4, 0)}
    iv = bootstrap_counts({"vet": vet, "dental": dental}, 1, resamples=20_000).overall
    low, high = exact_quantiles([[Fraction(c, n) for n, c in ind.values()] for ind in (vet, dental)],
                                (0.025, 0.975), 0.004)
    assert (iv.pass_at_1.low, iv.pass_at_1.high) == (pytest.approx(float(low)), pytest.approx(float(high)))
    assert iv.pass_at_1.estimate == pytest.approx((5 / 12 + 5 / 12) / 2)


def test_pooled_pass_at_1_weighs_tasks_by_their_scored_attempts():
    # one task 3/3, one 0/1: every resample with both has 3/4, not 1/2
    iv = bootstrap_counts({"x": {"A": (3, 3), "B": (1, 0)}}, 1, resamples=4000).industries["x"]
    assert iv.pass_at_1.estimate == 0.75
    assert (iv.pass_at_1.low, iv.pass_at_1.high) == (0.0, 1.0)  # {B, B} and {A, A} each 1 in 4
    assert iv.pass_k.estimate == 0.5


def test_cross_industry_interval_is_the_unweighted_mean_of_industries():
    # vet: 2 tasks that always pass; dental: 40 mixed tasks. Each resample of the cross-industry figure
    # is (1 + dental's) / 2, so its interval is dental's moved half way to 1, whatever the task counts.
    results = run_of({"vet_clinic": [(5, 0)] * 2,
                      "dental_office": [(5, 0)] * 10 + [(3, 2)] * 10 + [(1, 4)] * 10 + [(0, 5)] * 10})
    iv = bootstrap(results, 5)
    dental = iv.industries["dental_office"]
    for part in ("pass_at_1", "pass_k"):
        overall, d = getattr(iv.overall, part), getattr(dental, part)
        assert overall.estimate == pytest.approx((1 + d.estimate) / 2)
        assert overall.low == pytest.approx((1 + d.low) / 2)
        assert overall.high == pytest.approx((1 + d.high) / 2)
    pooled = (10 + 90) / (42 * 5)  # what pooling all attempts would give instead
    assert iv.overall.pass_at_1.low > pooled + 0.1


# --- partial runs and unscored attempts ------------------------------------------------------------

def test_a_partial_run_has_no_pass_k_interval():
    results = (run_of({"vet_clinic": [(5, 0), (2, 1)], "dental_office": [(4, 1), (5, 0)]}))
    iv = bootstrap(results, 5)
    assert iv.industries["vet_clinic"].pass_k is None
    assert iv.industries["vet_clinic"].pass_at_1 is not None
    assert iv.industries["dental_office"].pass_k is not None  # complete on its own
    assert iv.overall.pass_k is None
    assert iv.overall.pass_at_1 is not None
    assert json.loads(json.dumps(iv.to_json()))["overall"]["pass_k"] is None


def test_unscored_attempts_are_left_out():
    scored = run_of({"vet_clinic": [(3, 2), (1, 4), (5, 0)], "dental_office": [(2, 3), (4, 1)]})
    unscored = [attempt("T000", None, error_kind="infrastructure"),
                attempt("T001", None, industry="dental_office", error_kind="answer_key"),
                attempt("T999", None)]  # a task none of whose attempts was scored
    with_errors = list(scored)
    with_errors[3:3] = unscored
    assert bootstrap(with_errors, 5).to_json() == bootstrap(scored, 5).to_json()
    assert task_counts(with_errors)["vet_clinic"]["T000"] == (5, 3)


def test_unscored_attempts_make_a_task_short_of_k():
    results = attempts("A", 5, 0) + attempts("B", 4, 0) + [attempt("B", None, error_kind="infrastructure")]
    assert bootstrap(results, 5).industries["vet_clinic"].pass_k is None
    assert bootstrap(results, 4).industries["vet_clinic"].pass_k is not None


def test_an_industry_with_nothing_scored_has_no_intervals():
    results = attempts("A", 3, 0) + [attempt("A", None, industry="dental_office")]
    iv = bootstrap(results, 3)
    assert iv.industries["dental_office"].pass_at_1 is None
    assert iv.overall.pass_at_1.estimate == 1.0  # as in summarize: the mean of industries that have one
    assert iv.overall.pass_k is None
    s = summarize(results, 3, resamples=0)
    assert s.overall.pass_at_1 == 1.0 and s.overall.pass_k is None


def test_no_results_no_intervals():
    iv = bootstrap([], 5)
    assert iv.industries == {} and iv.overall is None


def test_bad_settings_are_refused():
    with pytest.raises(ValueError):
        bootstrap(attempts("A", 1, 0), 1, resamples=0)
    with pytest.raises(ValueError):
        bootstrap(attempts("A", 1, 0), 1, confidence=1.5)


def test_percentile_interpolates_between_order_statistics():
    assert percentile([0.0, 1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([0.0, 1.0], 0.25) == 0.25
    assert percentile([0.0, 10.0], 1.0) == 10.0
    assert percentile([3.0], 0.025) == 3.0


# --- the summary and its table ---------------------------------------------------------------------

def test_summary_carries_the_intervals_and_its_json_has_them():
    results = run_of({"vet_clinic": [(5, 0), (3, 2)] * 5, "dental_office": [(4, 1), (0, 5)] * 5})
    s = summarize(results, 5)
    assert s.intervals.to_json() == bootstrap(results, 5).to_json()
    data = json.loads(json.dumps(s.to_json()))
    assert data["intervals"]["resamples"] == 2000
    assert data["intervals"]["confidence"] == 0.95
    assert set(data["intervals"]["industries"]) == {"vet_clinic", "dental_office"}
    overall = data["intervals"]["overall"]
    assert overall["pass_at_1"]["estimate"] == pytest.approx(data["overall"]["pass_at_1"])
    assert overall["pass_at_1"]["low"] < overall["pass_at_1"]["estimate"] < overall["pass_at_1"]["high"]
    assert summarize(results, 5, resamples=0).to_json()["intervals"] is None


def test_the_table_shows_intervals_for_industries_and_all_industries():
    results = run_of({"vet_clinic": [(5, 0)] * 4, "dental_office": [(5, 0), (0, 5)] * 10})
    s = summarize(results, 5)
    out = render(s, model="m", width=100)
    assert "95% CI" in out
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.startswith("│")}
    assert "[100.0, 100.0]" in rows["vet_clinic"]
    d = s.intervals.industries["dental_office"].pass_at_1
    assert f"[{d.low * 100:.1f}, {d.high * 100:.1f}]" in rows["dental_office"]
    o = s.intervals.overall.pass_k
    assert f"[{o.low * 100:.1f}, {o.high * 100:.1f}]" in rows["all industries"]
    assert "[" not in rows["category C1"] and "[" not in rows["difficulty easy"]
    assert "2,000 resamples" in out
    assert max(len(line) for line in out.splitlines()) <= 100


def test_a_narrow_terminal_gets_the_intervals_in_a_table_of_their_own():
    results = run_of({"vet_clinic": [(5, 0)] * 4, "dental_office": [(5, 0), (0, 5)] * 10})
    out = render(summarize(results, 5), model="m", width=80)
    assert max(len(line) for line in out.splitlines()) <= 80
    assert "…" not in out  # nothing cut short
    assert out.count("[100.0, 100.0]") == 2  # vet_clinic pass@1 and pass^5
    assert "all industries" in out.split("95% CI")[-1]


def test_the_table_says_n_a_for_the_pass_k_interval_of_a_partial_run():
    out = render(summarize(attempts("A", 3, 0) + attempts("B", 1, 0), k=3), model="m", width=100)
    row = next(line for line in out.splitlines() if line.startswith("│ vet_clinic"))
    assert "[100.0, 100.0]" in row and "n/a*" in row and row.rstrip("│ ").endswith("n/a")
