"""pass@1, pass^k and their grouping (metrics.py), and the end-of-run table (summary.py)."""

from __future__ import annotations

import json
from math import comb

import pytest

from pytest_callm.scoring.metrics import pass_hat_k, summarize
from pytest_callm.report.summary import render


def attempt(task_id: str, passed, *, industry: str = "vet_clinic", category: str = "Appointments",
            difficulty: str = "easy", gates: dict | None = None, error_kind: str | None = None) -> dict:
    r = {"task_id": task_id, "industry": industry, "category": category, "difficulty": difficulty,
         "passed": passed}
    if passed is not None:
        r["gates"] = gates if gates is not None else {"tools": bool(passed), "handoff": True, "database": True}
    if error_kind:
        r["error_kind"] = error_kind
    return r


def attempts(task_id: str, passes: int, fails: int, **kw) -> list[dict]:
    return [attempt(task_id, True, **kw) for _ in range(passes)] + [attempt(task_id, False, **kw) for _ in range(fails)]


# --- pass_hat_k --------------------------------------------------------------------------------

def test_pass_hat_k_is_one_when_every_attempt_passes():
    assert pass_hat_k(5, 5, 5) == 1.0


def test_pass_hat_k_is_zero_when_one_of_k_attempts_fails():
    assert pass_hat_k(5, 4, 5) == 0.0


def test_pass_hat_k_is_the_combinatorial_estimate_for_n_above_k():
    assert pass_hat_k(5, 3, 2) == pytest.approx(comb(3, 2) / comb(5, 2))
    assert pass_hat_k(5, 3, 2) == pytest.approx(0.3)


def test_pass_hat_1_is_the_pass_rate():
    assert pass_hat_k(4, 3, 1) == pytest.approx(0.75)


def test_pass_hat_k_is_none_with_fewer_than_k_attempts():
    assert pass_hat_k(3, 3, 5) is None


# --- summarize ---------------------------------------------------------------------------------

def test_pass_at_1_is_pooled_over_attempts():
    # 5/5 and 0/3: pooled 5/8, not the task mean 0.5
    s = summarize(attempts("A", 5, 0) + attempts("B", 0, 3), k=3)
    g = s.industries["vet_clinic"]
    assert g.attempts == 8
    assert g.passes == 5
    assert g.pass_at_1 == pytest.approx(5 / 8)


def test_pass_k_is_the_mean_over_tasks_with_equal_weight():
    s = summarize(attempts("A", 5, 0) + attempts("B", 0, 5), k=5)
    g = s.industries["vet_clinic"]
    assert g.tasks == 2
    assert g.pass_k == pytest.approx(0.5)


def test_pass_k_of_a_task_uses_all_its_attempts():
    s = summarize(attempts("A", 3, 2), k=2)
    assert s.industries["vet_clinic"].pass_k == pytest.approx(0.3)
    assert s.to_json()["tasks"]["vet_clinic/A"]["pass_k"] == pytest.approx(0.3)


def test_results_are_grouped_by_category():
    results = (attempts("A", 2, 0, category="Records") + attempts("B", 0, 2, category="Records")
               + attempts("C", 1, 1, category="Billing"))
    s = summarize(results, k=2)
    assert set(s.categories) == {("vet_clinic", "Records"), ("vet_clinic", "Billing")}
    records = s.categories[("vet_clinic", "Records")]
    assert (records.tasks, records.attempts, records.passes) == (2, 4, 2)
    assert records.pass_k == pytest.approx(0.5)
    assert records.label == "Records"  # shown under its industry in the table
    billing = s.categories[("vet_clinic", "Billing")]
    assert billing.pass_at_1 == pytest.approx(0.5)
    assert billing.pass_k == pytest.approx(0.0)


def test_results_are_grouped_by_difficulty():
    results = attempts("A", 2, 0, difficulty="easy") + attempts("B", 1, 1, difficulty="hard")
    s = summarize(results, k=2)
    assert set(s.difficulties) == {("vet_clinic", "easy"), ("vet_clinic", "hard")}
    assert s.difficulties[("vet_clinic", "easy")].pass_k == pytest.approx(1.0)
    assert s.difficulties[("vet_clinic", "hard")].pass_k == pytest.approx(0.0)
    assert s.difficulties[("vet_clinic", "hard")].pass_at_1 == pytest.approx(0.5)


def test_results_are_grouped_by_industry():
    results = attempts("A", 2, 0, industry="vet_clinic") + attempts("A", 0, 2, industry="dental_office")
    s = summarize(results, k=2)
    assert set(s.industries) == {"vet_clinic", "dental_office"}
    assert s.industries["vet_clinic"].pass_k == pytest.approx(1.0)
    assert s.industries["dental_office"].pass_k == pytest.approx(0.0)
    assert len(s.tasks) == 2  # the same task id in two industries is two tasks


def test_cross_industry_figures_are_the_unweighted_mean_of_industries():
    # vet: 1 task, all pass. dental: 3 tasks, all fail. Mean of industries = 0.5, not 1/4.
    results = (attempts("V1", 2, 0, industry="vet_clinic")
               + attempts("D1", 0, 2, industry="dental_office")
               + attempts("D2", 0, 2, industry="dental_office")
               + attempts("D3", 0, 2, industry="dental_office"))
    s = summarize(results, k=2)
    assert s.overall.tasks == 4
    assert s.overall.attempts == 8
    assert s.overall.passes == 2
    assert s.overall.pass_at_1 == pytest.approx(0.5)
    assert s.overall.pass_k == pytest.approx(0.5)


def test_unscored_attempts_are_counted_as_errors():
    results = attempts("A", 2, 0) + [attempt("A", None, error_kind="infrastructure"),
                                     attempt("A", None, error_kind="answer_key"),
                                     attempt("A", None, error_kind="infrastructure")]
    s = summarize(results, k=2)
    assert s.errors == {"infrastructure": 2, "answer_key": 1}
    assert s.unscored == 3
    assert s.tasks[("vet_clinic", "A")].errors == 3


def test_unscored_attempt_without_error_kind_counts_as_infrastructure():
    s = summarize(attempts("A", 1, 0) + [attempt("A", None)], k=1)
    assert s.errors == {"infrastructure": 1}


def test_unscored_attempts_are_in_no_denominator():
    results = attempts("A", 2, 1) + [attempt("A", None, error_kind="infrastructure"),
                                     attempt("A", None, error_kind="answer_key")]
    s = summarize(results, k=3)
    task = s.tasks[("vet_clinic", "A")]
    assert (task.n, task.c) == (3, 2)
    g = s.industries["vet_clinic"]
    assert g.attempts == 3
    assert g.pass_at_1 == pytest.approx(2 / 3)
    assert g.pass_k == pytest.approx(0.0)
    assert s.overall.attempts == 3
    assert s.categories[("vet_clinic", "Appointments")].attempts == 3
    assert not s.partial


def test_unscored_attempts_do_not_count_gate_failures():
    failed_gates = {"tools": False, "handoff": False, "database": False}
    results = attempts("A", 1, 0) + [dict(attempt("A", None, error_kind="infrastructure"), gates=failed_gates)]
    s = summarize(results, k=1)
    assert sum(s.gate_failures.values()) == 0


def test_task_with_fewer_than_k_scored_attempts_makes_pass_k_none_and_run_partial():
    results = attempts("A", 5, 0) + attempts("B", 2, 0) + [attempt("B", None, error_kind="infrastructure")] * 3
    s = summarize(results, k=5)
    assert s.partial
    assert s.industries["vet_clinic"].pass_k is None
    assert s.industries["vet_clinic"].short_tasks == 1
    assert s.overall.pass_k is None
    assert s.industries["vet_clinic"].pass_at_1 == pytest.approx(1.0)  # pass@1 is still reported
    assert s.to_json()["tasks"]["vet_clinic/B"]["pass_k"] is None


def test_complete_run_is_not_partial():
    s = summarize(attempts("A", 5, 0) + attempts("B", 1, 4), k=5)
    assert not s.partial
    assert s.industries["vet_clinic"].short_tasks == 0


def test_gate_failures_are_counted_per_gate():
    results = [
        attempt("A", False, gates={"tools": False, "handoff": True, "database": False}),
        attempt("A", False, gates={"tools": True, "handoff": True, "database": False}),
        attempt("A", True, gates={"tools": True, "handoff": True, "database": True}),
    ]
    s = summarize(results, k=3)
    assert s.gate_failures == {"tools": 1, "handoff": 0, "database": 2}
    assert s.most_failed_gate() == "database"


def test_no_gate_failures_means_no_most_failed_gate():
    s = summarize(attempts("A", 3, 0, gates={"tools": True, "handoff": True, "database": True}), k=3)
    assert s.gate_failures == {"tools": 0, "handoff": 0, "database": 0}
    assert s.most_failed_gate() is None


def test_empty_results_summarize_to_nothing():
    s = summarize([], k=5)
    assert s.overall is None
    assert s.industries == {}
    assert not s.partial


def test_to_json_is_json_serialisable():
    results = (attempts("A", 2, 1, category="Records", difficulty="hard")
               + attempts("B", 0, 2, industry="dental_office")
               + [attempt("A", None, error_kind="answer_key")])
    s = summarize(results, k=3)
    data = json.loads(json.dumps(s.to_json()))
    assert data["k"] == 3
    assert data["partial"] is True
    assert data["errors"] == {"answer_key": 1}
    assert data["categories"]["vet_clinic/Records"]["attempts"] == 3
    assert data["difficulties"]["dental_office/easy"]["pass_at_1"] == 0.0
    assert data["tasks"]["vet_clinic/A"]["pass_at_1"] == pytest.approx(2 / 3)
    assert data["overall"]["tasks"] == 2


# --- render ------------------------------------------------------------------------------------

def test_render_has_pass_at_1_and_pass_k_columns():
    out = render(summarize(attempts("A", 3, 0), k=3), model="gpt-test", width=120)
    assert "pass@1" in out
    assert "pass^3" in out
    assert "gpt-test" in out


def test_render_shows_100_percent_for_a_perfect_run():
    out = render(summarize(attempts("A", 3, 0) + attempts("B", 3, 0), k=3), model="m", width=120)
    assert "100.0%" in out
    assert "0.0%" not in out.replace("100.0%", "")
    assert "partial run" not in out


def test_render_notes_a_partial_run():
    results = attempts("A", 3, 0) + attempts("B", 1, 0)
    out = render(summarize(results, k=3), model="m", width=200)
    assert "partial run: 1 of 2 tasks have fewer than 3 scored attempts" in out
    assert "n/a*" in out


def test_render_reports_unscored_attempts_and_most_failed_gate():
    results = [attempt("A", False, gates={"tools": True, "handoff": False, "database": True}),
               attempt("A", None, error_kind="infrastructure")]
    out = render(summarize(results, k=1), model="m", width=200)
    assert "attempts not scored (in no denominator): 1 (infrastructure 1)" in out
    assert "most failed gate: handoff" in out


def test_the_notes_under_the_table_never_break_a_sentence_at_80_columns_and_explain_only_what_is_shown():
    one = attempts("A", 3, 2) + attempts("B", 1, 0) + [attempt("A", None, error_kind="infrastructure")]
    out = render(summarize(one, k=5), model="m", width=80)
    notes = out[out.index("scored attempts"):].splitlines()
    assert notes == ["scored attempts: 6; gate failures: tools 2, handoff 0, database 0",
                     "most failed gate: tools",
                     "attempts not scored (in no denominator): 1 (infrastructure 1)",
                     "95% CI: bootstrap over tasks (2,000 resamples, seed 20240917).",
                     "* partial run: 1 of 2 tasks have fewer than 5 scored attempts,",
                     "  so pass^5 is not computed for them (run all attempts, or set --callm-k)."]
    assert "all industries" not in out  # one industry: no mean across industries to explain
    two = render(summarize(attempts("A", 3, 0) + attempts("B", 3, 0, industry="legal"), k=3), model="m", width=80)
    assert "all industries: the unweighted mean of the industries." in two.splitlines()
