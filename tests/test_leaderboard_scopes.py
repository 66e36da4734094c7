"""Ranking by scope, the evidence between neighbours, and the board's layout, on a planted example.

An oracle run of nine suite tasks (C1-E1, C2-E1 and R-E1 of each industry, 3 attempts, pass^3) is copied
into two models whose attempts are made to fail by plan, their figures recomputed as a run computes them
(saved/merge.build_report: the real summary and bootstrap):

- `generalist` fails every healthcare attempt and passes everything else: 66.7% across industries;
- `clinic` passes all of healthcare, one task in three of legal and nothing of customer support: 44.4%.

Across industries `generalist` comes first; by healthcare `clinic` does, its interval clear of the other's.
The oracle run itself is listed apart (the offline caller), so the pages hold a "why not ranked" line too.
"""

from __future__ import annotations

import html
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO
from devtools import DevTools, find_chromium
from pytest_callm.cli import main as callm
from pytest_callm.report import evidence, scopes
from pytest_callm.report.leaderboard import Figure, load, ranking

pytestmark = pytest.mark.xdist_group("leaderboard_scopes")  # its module fixture plays a run once, on one worker

TASKS = [f"tasks/{industry}/{task}" for industry in ("customer_support", "healthcare", "legal")
         for task in ("C1-E1", "C2-E1", "R-E1")]
PLAN = {  # model -> (industry, category) -> passes?
    "generalist": lambda industry, category: industry != "healthcare",
    "clinic": lambda industry, category: industry == "healthcare" or (industry == "legal" and category == "C1"),
}
WIDTHS = (1280, 1920)


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    from pytest_callm.saved.merge import build_report
    from pytest_callm.saved.rundir import RunDir, write_json

    root = tmp_path_factory.mktemp("scopes")
    oracle = root / "oracle"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *TASKS,
                           "--callm-model=oracle", "--callm-attempts=3", "--callm-k=3", f"--callm-out={oracle}"],
                          cwd=REPO, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    manifest = json.loads((oracle / "manifest.json").read_text())
    report = json.loads((oracle / "report.json").read_text())
    out = {"oracle": oracle}
    for name, passes in PLAN.items():
        run = root / name
        run.mkdir()
        attempts = []
        for a in report["attempts"]:
            ok = passes(a["industry"], a["category"])
            attempts.append({**a, "passed": ok, "paper_passed": ok,
                             "gates": {**a["gates"], "database": ok}})
        # A CALLM result: a simulated caller on a model of its own, so it is ranked.
        write_json(run / "manifest.json", {**manifest, "caller": {"kind": "model", "name": "caller-model"},
                                           "comparable": {**manifest["comparable"], "model": name}})
        RunDir(run).write_report(build_report(attempts, name, report["k"], "clean"))
        assert callm(["report", str(run)]) == 0  # its pages, for the board's copies (the frames of the choice page)
        out[name] = run
    return out


@pytest.fixture(scope="module")
def board(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("board") / "board"
    assert callm(["leaderboard", *(str(p) for p in runs.values()), "--out", str(out)]) == 0
    return out


@pytest.fixture(scope="module")
def chromium() -> str:
    found = find_chromium()
    if not found:
        pytest.skip("Chromium is not installed (Debian's chromium package)")
    return found


def order(rows, scope: scopes.Scope) -> list[tuple[str, str]]:
    return [(p.row.name, p.rank_label) for p in ranking(rows, scope) if p.row.apart is None]


def test_ranking_by_healthcare_reorders_the_planted_example(runs):
    rows, _ = load(list(runs.values()), force=False)
    across = ranking(rows, scopes.Scope())
    assert [p.row.name for p in across if p.row.apart is None] == ["generalist", "clinic"]
    assert [round(p.figures.pass_k.estimate, 3) for p in across[:2]] == [0.667, 0.444]
    assert order(rows, scopes.Scope(industry="healthcare")) == [("clinic", "1"), ("generalist", "2")]
    # A category across industries is the mean of its industries; legal's C1 is the one clinic passes there.
    c1 = {p.row.name: p.figures.pass_k.estimate for p in ranking(rows, scopes.Scope(category="C1"))}
    assert c1["clinic"] == pytest.approx(2 / 3) and c1["generalist"] == pytest.approx(2 / 3)
    one = {p.row.name: p.figures for p in ranking(rows, scopes.Scope(industry="legal", category="C1"))}
    assert one["clinic"].pass_k.estimate == 1.0 and one["clinic"].tasks == 1


def test_the_command_ranks_by_a_scope_and_names_its_categories(runs, board, tmp_path, capsys):
    assert callm(["leaderboard", *(str(p) for p in runs.values()), "--out", str(tmp_path / "b"),
                  "--scope", "healthcare"]) == 0
    printed = capsys.readouterr().out
    lines = printed.split("ranked by pass^3 in healthcare", 1)[1].splitlines()[1:3]
    assert lines[0].split()[:2] == ["1", "clinic:"] and lines[1].split()[:2] == ["2", "generalist:"]
    md = (tmp_path / "b" / "leaderboard.md").read_text()
    assert "Ranked by pass^3 in healthcare." in md and md.index("| 1 | clinic") < md.index("| 2 | generalist")
    # Category names come from the packs: a code is never shown without them.
    packs = {i: json.loads((REPO / "industries" / i / "pack.json").read_text())["suite"]["categories"]
             for i in ("customer_support", "healthcare", "legal")}
    assert f"healthcare {packs['healthcare']['C1']}" in md
    assert callm(["leaderboard", *(str(p) for p in runs.values()), "--out", str(tmp_path / "c"),
                  "--scope", "healthcare/c2"]) == 0
    assert f"in healthcare, C2 {packs['healthcare']['C2']}" in capsys.readouterr().out
    assert '<option value="healthcare/C2" selected>' in (tmp_path / "c" / "choose.html").read_text()
    assert callm(["leaderboard", *(str(p) for p in runs.values()), "--out", str(tmp_path / "d"),
                  "--scope", "dentistry"]) == 2
    err = capsys.readouterr().err
    assert "'dentistry' is not an industry, category or difficulty of these runs" in err
    assert "industries: customer_support, healthcare, legal" in err


def test_every_scope_has_its_page_and_the_failure_view_names_categories(runs, board):
    for name in ("index.html", "rank-healthcare.html", "rank-C1.html", "rank-R.html", "rank-easy.html",
                 "failures.html", "choose.html"):
        assert (board / name).is_file(), name
    page = (board / "rank-healthcare.html").read_text()
    assert page.index('data-model="clinic"') < page.index('data-model="generalist"')
    failures = html.unescape((board / "failures.html").read_text())
    for industry in ("customer_support", "healthcare", "legal"):
        names = json.loads((REPO / "industries" / industry / "pack.json").read_text())["suite"]["categories"]
        for code in ("C1", "C2", "R"):
            assert f"{industry}: {names[code]}" in failures, (industry, code)


def test_evidence_says_whether_neighbours_separate_and_how_many_tasks_would(runs, board):
    rows, _ = load(list(runs.values()), force=False)
    healthcare = evidence.pairs(ranking(rows, scopes.Scope(industry="healthcare")), "pass^3")
    assert len(healthcare) == 1 and healthcare[0].separated and "separate" in healthcare[0].sentence
    across = evidence.pairs(ranking(rows, scopes.Scope()), "pass^3")
    assert len(across) == 1 and not across[0].separated
    assert across[0].more_tasks > 0 and across[0].more_attempts == across[0].more_tasks * 3
    assert f"about {across[0].more_tasks:,} more tasks" in across[0].sentence
    assert across[0].sentence in (board / "index.html").read_text().replace("&#39;", "'")
    # The rule: intervals narrow as one over the square root of the tasks.
    upper, lower = Figure(0.6, 0.4, 0.8), Figure(0.4, 0.2, 0.6)  # half-widths 0.2 each, a gap of 0.2
    assert evidence.tasks_to_separate(upper, lower, 10) == 40
    assert evidence.tasks_to_separate(Figure(0.5, 0.3, 0.7), Figure(0.5, 0.3, 0.7), 10) is None


def test_ranking_by_healthcare_in_chromium_reorders_and_the_address_keeps_it(board, chromium, tmp_path):
    browser = DevTools(chromium, tmp_path / "profile")
    ranked = "[...document.querySelectorAll('#ranking tbody tr')].map(tr => tr.dataset.model + ' ' + tr.dataset.rank)"
    try:
        browser.open((board / "index.html").as_uri(), width=1280)
        assert browser.evaluate(ranked) == ["generalist =1", "clinic =1"]
        browser.click("#scopes a[data-scope='healthcare']")
        assert browser.evaluate("location.pathname").endswith("/rank-healthcare.html")
        assert browser.evaluate(ranked) == ["clinic 1", "generalist 2"]
        browser.click("a[href^='choose.html?scope=healthcare']")  # the choice page, at the same scope
        assert browser.evaluate("document.getElementById('scope').value") == "healthcare"
        chosen = "[...document.querySelectorAll('#chosen tbody tr')].map(tr => tr.dataset.model + ' ' + tr.dataset.rank)"
        assert browser.evaluate(chosen) == ["clinic 1", "generalist 2"]
        browser.evaluate("const s = document.getElementById('scope'); s.value = 'all';"
                         "s.dispatchEvent(new Event('change', {bubbles: true}))")
        assert browser.evaluate(chosen) == ["generalist =1", "clinic =1"]
        assert "scope=all" in browser.evaluate("location.search")  # the address follows the form
    finally:
        browser.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_pages_fit_the_window_without_horizontal_overflow(board, chromium, tmp_path, width):
    """Each page of the board at 1,280 and 1,920 px: nothing wider than the window, no table wider than its
    box, and the "why not ranked" line reads as a line (not one word under another)."""
    browser = DevTools(chromium, tmp_path / "profile")
    try:
        for page in ("index.html", "rank-healthcare.html", "choose.html", "failures.html", "models/clinic.html"):
            browser.open((board / page).as_uri(), width=width)
            found = browser.evaluate("document.documentElement.scrollWidth") and browser.overflow()
            assert found["window"] == width
            assert found["page"] <= 0 and found["boxes"] == [], (page, found)
        browser.open((board / "index.html").as_uri(), width=width)
        why = browser.evaluate("[...document.querySelectorAll('td.why')].map(td => td.getBoundingClientRect().width)")
        assert why and min(why) > 400, why
    finally:
        browser.close()


def test_the_side_by_side_frames_show_their_whole_tables(board, chromium, tmp_path):
    """The two frames of the choice page at 1,280 px: the attempt pages they hold fit their width."""
    browser = DevTools(chromium, tmp_path / "profile")
    try:
        query = "?task=healthcare%2FC1-E1&attempt=1&a=clinic&b=generalist"
        browser.open((board / "choose.html").as_uri() + query, width=1280)
        frame = browser.evaluate("document.getElementById('frame-a').clientWidth")
        src = browser.evaluate("document.getElementById('frame-a').getAttribute('src')")
        assert src and frame > 300
        browser.open((board / src.split("#")[0]).as_uri(), width=frame)
        widths = browser.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert widths[0] <= widths[1], widths
    finally:
        browser.close()
