"""What a run hands over at its end: where its report page is, and its figures in the JUnit XML,
serially and under xdist (where only the controller writes the XML)."""

from __future__ import annotations

import json
import os
import re
import xml.etree.ElementTree as ET

import pytest

from test_plugin import ORACLE, edit_task, project  # noqa: F401  (fixture)


def fail_c2_e2(project) -> None:
    """Every attempt of C2-E2 fails its database gate: the run's figures are not all 100%."""

    def expect_another_slot(d):
        next(r for r in d["exp_db_state"]["appointments"] if r["slot_id"] == "S-101")["slot_id"] = "S-102"

    edit_task(project, "C2-E2", expect_another_slot)


def test_the_end_of_a_run_names_its_report_page(project, tmp_path):
    out = tmp_path / "run"
    result = project.runpytest(ORACLE, "-k", "C2-E1", f"--callm-out={out}")
    result.assert_outcomes(passed=5)
    assert (out / "report.html").is_file()
    lines = result.outlines
    saved = lines.index(f"callm: run saved in {out}")
    assert lines[saved + 1] == f"callm: report page {out / 'report.html'}"  # plain: pytester writes no markup


def test_with_markup_the_report_page_is_a_terminal_link_to_the_file(project, tmp_path):
    out = tmp_path / "run"
    result = project.runpytest(ORACLE, "-k", "C2-E1 and attempt-1", f"--callm-out={out}", "--color=yes")
    page = out / "report.html"
    link = f"\x1b]8;;{page.as_uri()}\x1b\\{page}\x1b]8;;\x1b\\"
    assert f"callm: report page {link}" in result.stdout.str()


def suite_and_cases(path):
    suite = ET.parse(path).getroot().find("testsuite")
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties").iter("property")}
    cases = [{p.get("name"): p.get("value") for p in c.iter("property")} for c in suite.iter("testcase")]
    return suite_props, cases


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_junit_xml_has_category_difficulty_per_attempt_and_the_runs_figures_per_suite(project, tmp_path, workers):
    fail_c2_e2(project)
    out = tmp_path / "run"
    result = project.runpytest_subprocess(ORACLE, "-k", "C2", f"--callm-out={out}", "--junitxml=out.xml", *workers)
    result.assert_outcomes(passed=15, failed=5)
    suite, cases = suite_and_cases(project.path / "out.xml")

    assert len(cases) == 20
    for case in cases:
        level = {"E": "easy", "M": "medium", "H": "hard"}[re.match(r"C2-([EMH])", case["callm_task"])[1]]
        assert (case["callm_category"], case["callm_difficulty"]) == ("C2", level)

    report = json.loads((out / "report.json").read_text())["summary"]
    overall, intervals = report["overall"], report["intervals"]["overall"]
    assert suite["callm_model"] == "oracle" and suite["callm_caller"] == "offline" and suite["callm_k"] == "5"
    assert suite["callm_run_dir"] == str(out) and suite["callm_report_html"] == str(out / "report.html")
    assert (suite["callm_tasks"], suite["callm_attempts_scored"], suite["callm_attempts_not_scored"]) == ("4", "20", "0")
    assert suite["callm_pass_at_1"] == "0.7500" and suite["callm_pass_hat_5"] == "0.7500"
    for name, key in (("pass_at_1", "pass_at_1"), ("pass_hat_5", "pass_k")):
        low, high = float(suite[f"callm_{name}_ci_low"]), float(suite[f"callm_{name}_ci_high"])
        assert (low, high) == (round(intervals[key]["low"], 4), round(intervals[key]["high"], 4))
        assert low < 0.75 < high  # one failing task in four: the interval is not a point
    assert overall["pass_at_1"] == 0.75
    assert suite["callm_vet_clinic_pass_at_1"] == "0.7500" and suite["callm_vet_clinic_tasks"] == "4"



def test_keep_runs_removes_the_oldest_runs_and_nothing_else(project):
    runs = project.path / "callm-runs"
    for age, name in enumerate(["old-c", "old-b", "old-a"]):  # old-a is the newest of them
        (runs / name).mkdir(parents=True)
        (runs / name / "manifest.json").write_text("{}")
        os.utime(runs / name / "manifest.json", (1_000_000 + age, 1_000_000 + age))
    (runs / "notes").mkdir()  # not a run: no manifest
    result = project.runpytest(ORACLE, "-k", "C2-E1 and attempt-1", "--callm-keep-runs=2")
    result.assert_outcomes(passed=1)
    left = sorted(p.name for p in runs.iterdir())
    assert len(left) == 3 and "old-a" in left and "notes" in left  # old-a, this run, notes
    this_run = next(n for n in left if n not in ("old-a", "notes"))
    assert (runs / this_run / "report.html").is_file()
    assert "callm: removed 2 older run(s) from callm-runs/ (--callm-keep-runs=2)" in result.outlines


def test_without_keep_runs_no_run_is_removed_and_a_bad_value_is_a_usage_error(project):
    (project.path / "callm-runs" / "old").mkdir(parents=True)
    (project.path / "callm-runs" / "old" / "manifest.json").write_text("{}")
    project.runpytest(ORACLE, "-k", "C2-E1 and attempt-1").assert_outcomes(passed=1)
    assert len(list((project.path / "callm-runs").iterdir())) == 2
    result = project.runpytest(ORACLE, "--callm-keep-runs=0")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--callm-keep-runs must be at least 1, got 0" in result.stderr.str()
