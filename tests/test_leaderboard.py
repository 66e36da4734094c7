"""`callm leaderboard`: three real runs of the example tasks ranked into a page, a Markdown table and a
page per model; the page opened in headless Chromium from file://; mixes that cannot be ranked refused.

The runs (4 attempts per task, pass^3): the oracle; `good`, the scripted local server playing the
answer key of C2-E2 in every task (it passes C2-E2 only), with list prices; `weak`, the same server
ending every call at once, reporting no token usage, its first attempt failing on the model's side
through every retry (one attempt not scored).
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from openai_server import AnswerKeyAgent, openai_server_session  # noqa: F401  (fixture)
from pytest_callm.cli import main as callm
from pytest_callm.report import compare
from pytest_callm.report.leaderboard import TIE_RULE, Figure, rank

ATTEMPTS = ["--callm-attempts=4", "--callm-k=3"]
KEY = "CALLM_TEST_BOARD_KEY"
CONFTEST = '''
from pytest_callm.call.caller import CallerTurn


class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn("I'd like to book a check-up for my dog Biscuit, please.")


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FixedLineCaller()
'''
PRICES = "\n[prices]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n"
END_CALL = {"text": "Goodbye.", "tool_calls": [{"name": "end_call", "arguments": {"reason": "done"}}], "no_usage": True}


def _load_benchmark():
    spec = importlib.util.spec_from_file_location("leaderboard_open", REPO / "benchmarks" / "leaderboard_open.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load_benchmark()


def play(project: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), KEY: "sk-board"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tasks", *ATTEMPTS, *args],
                          cwd=project, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.fixture(scope="module")
def runs(tmp_path_factory, openai_server_session) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("board")
    project = root / "project"
    shutil.copytree(EXAMPLE_PACK, project / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, project / "tasks" / "vet_clinic")
    (project / "pytest.ini").write_text("[pytest]\ncallm_model_configs = models\n"
                                        "callm_retry_backoff = 0.001\ncallm_concurrency = 1\n")
    (project / "conftest.py").write_text(CONFTEST)
    (project / "models").mkdir()
    base = f'model = "scripted"\nbase_url = "{openai_server_session.base_url}"\napi_key_env = "{KEY}"\n'
    (project / "models" / "good.toml").write_text(base + '\n[sampling]\ntemperature = 0.2\n' + PRICES)
    (project / "models" / "weak.toml").write_text(base + PRICES)

    play(project, "--callm-model=oracle", f"--callm-out={root / 'oracle'}")
    openai_server_session.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent),
                                delay_ms=5)
    play(project, "--callm-model=good", f"--callm-out={root / 'good'}")
    openai_server_session.reset().script(*[{"status": 500}] * 10, *[END_CALL] * 60)
    play(project, "--callm-model=weak", f"--callm-out={root / 'weak'}")
    openai_server_session.reset()
    return {name: root / name for name in ("oracle", "good", "weak")}


@pytest.fixture(scope="module")
def board(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out") / "board"
    # Given in another order than the ranking: the order of the arguments does not matter.
    assert callm(["leaderboard", str(runs["weak"]), str(runs["oracle"]), str(runs["good"]), "--out", str(out),
                  "--title", "Example board"]) == 0
    return out


def report(run: Path) -> dict:
    return json.loads((run / "report.json").read_text())


def md_rows(board: Path) -> list[list[str]]:
    lines = (board / "leaderboard.md").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| Rank"))
    return [[c.strip() for c in line.strip("|").split(" | ")] for line in lines[start + 2:] if line.startswith("|")]


def fig(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def interval(iv: dict) -> str:
    return f"[{iv['low'] * 100:.1f}, {iv['high'] * 100:.1f}]"


# The ranking -----------------------------------------------------------------------------------


def test_the_runs_played_as_the_module_says(runs):
    good, weak = report(runs["good"]), report(runs["weak"])
    assert report(runs["oracle"])["summary"]["overall"]["pass_k"] == 1.0
    tasks = good["summary"]["tasks"]
    assert tasks["vet_clinic/C2-E2"]["c"] == 4 and sum(t["c"] for t in tasks.values()) == 4
    assert weak["summary"]["overall"]["passes"] == 0 and weak["summary"]["errors"] == {"infrastructure": 1}
    usages = [a["usage"] for a in weak["attempts"] if a.get("usage")]
    assert len(usages) == 31 and all(u["requests_without_usage"] == u["requests"] == 1 for u in usages)


def test_the_table_ranks_by_pass_k_with_the_reports_figures(runs, board):
    rows = md_rows(board)
    assert [r[1] for r in rows] == ["oracle", "good", "weak"]
    # The oracle's interval [100, 100] overlaps no other; weak's [0, 0] overlaps good's: they share rank 2.
    assert [r[0] for r in rows] == ["1", "=2", "=2"]
    head = (board / "leaderboard.md").read_text().splitlines()[2]
    assert head.startswith("| Rank | Model | pass^3 (95% CI) | pass@1 (95% CI) | vet_clinic pass^3 | TTFT (median) |")
    for row in rows:
        summary = report(runs[row[1]])["summary"]
        overall, iv = summary["overall"], summary["intervals"]["overall"]
        assert row[2] == f"{fig(overall['pass_k'])} {interval(iv['pass_k'])}"
        assert row[3] == f"{fig(overall['pass_at_1'])} {interval(iv['pass_at_1'])}"
        assert row[4] == fig(summary["industries"]["vet_clinic"]["pass_k"])
    good_usage = report(runs["good"])["usage"]["total"]
    assert rows[1][5] == f"{good_usage['ttft_median_ms']:,.0f} ms" and good_usage["ttft_median_ms"] >= 5
    assert rows[1][6] == f"${good_usage['cost_per_call']:,.4f}" and good_usage["cost_per_call"] > 0
    assert rows[0][5:9] == ["n/a", "no model requests", "no model requests", "0"]
    # weak's server reported no usage: its cost is unknown, never $0.
    assert rows[2][6:9] == ["usage not reported", "usage not reported", "1"]
    assert TIE_RULE.format(k=3) in (board / "leaderboard.md").read_text()


def test_the_table_is_the_same_text_each_time(runs, board, tmp_path):
    assert callm(["leaderboard", str(runs["good"]), str(runs["weak"]), str(runs["oracle"]), "--out", str(tmp_path),
                  "--title", "Example board"]) == 0
    assert (tmp_path / "leaderboard.md").read_bytes() == (board / "leaderboard.md").read_bytes()


def test_a_model_page_shows_the_settings_results_and_the_runs_report(runs, board):
    page = (board / "models" / "good.html").read_text()
    for text in ("temperature", "0.2", "cached_input", "scripted", KEY, "Results per category", "C2-E2"):
        assert text in page, text
    assert "sk-board" not in page
    categories = report(runs["good"])["summary"]["categories"]
    for key, group in categories.items():
        category = key.split("/")[1]
        assert f"<td>vet_clinic</td><td>{category}</td><td class=\"num\">{group['tasks']}</td>" in page
    link = re.search(r'id="run-report" href="([^"]+)"', page).group(1)
    assert not link.startswith(("/", "file:")) and (board / "models" / link).resolve() == runs["good"] / "report.html"
    assert 'href="../index.html"' in page


# In a browser ----------------------------------------------------------------------------------


class Dom(HTMLParser):
    """What the test looks for in Chromium's DOM: the ranking's rows and cells, the plots' models."""

    def __init__(self):
        super().__init__()
        self.rows: list[dict] = []
        self.plots: dict[str, list[str]] = {}
        self._plot: str | None = None
        self._cell: str | None = None
        self.texts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-rank" in a:
            self.rows.append({"rank": a["data-rank"], "model": a["data-model"], "cells": {}})
        elif tag == "td" and self.rows and a.get("class"):
            self._cell = a["class"].split()[1] if len(a["class"].split()) > 1 else a["class"]
            self.rows[-1]["cells"][self._cell] = ""
        elif tag == "svg" and "plot" in (a.get("class") or ""):
            self._plot = a["id"]
            self.plots[self._plot] = []
        elif tag == "g" and self._plot and "data-model" in a:
            self.plots[self._plot].append(a["data-model"])

    def handle_endtag(self, tag):
        if tag == "svg":
            self._plot = None
        elif tag == "td":
            self._cell = None
        elif tag == "table":
            self._cell = None

    def handle_data(self, data):
        if self._cell and self.rows:
            self.rows[-1]["cells"][self._cell] += data
        self.texts.append(data)


@pytest.fixture(scope="session")
def chromium() -> str:
    found = bench.find_chromium()
    if not found:
        pytest.skip("Chromium is not installed (tests/test_report_html.py installs Debian's where it can)")
    return found


def test_the_page_opens_from_file_in_chromium_with_ranking_intervals_and_plots(runs, board, chromium, tmp_path):
    dom, _ = bench._dump(chromium, tmp_path / "profile", (board / "index.html").as_uri())
    page = Dom()
    page.feed(dom)
    assert [(r["rank"], r["model"]) for r in page.rows] == [("1", "oracle"), ("=2", "good"), ("=2", "weak")]
    iv = report(runs["good"])["summary"]["intervals"]["overall"]
    assert page.rows[1]["cells"]["passk"] == f"{fig(report(runs['good'])['summary']['overall']['pass_k'])}" \
                                             f"{interval(iv['pass_k'])}"
    assert interval(iv["pass_at_1"]) in page.rows[1]["cells"]["pass1"]
    assert page.rows[2]["cells"]["cost-hour"] == "usage not reported" and page.rows[2]["cells"]["unscored"] == "1"
    assert set(page.plots) == {"plot-gap", "plot-cost", "plot-ttft", "plot-industry-vet_clinic"}
    assert page.plots["plot-gap"] == ["oracle", "good", "weak"] == page.plots["plot-industry-vet_clinic"]
    assert page.plots["plot-cost"] == ["good"]  # the others have no cost: left out, with a note naming them
    assert page.plots["plot-ttft"] == ["good", "weak"]  # the oracle made no requests
    text = " ".join(page.texts)
    assert "Left out: oracle (no cost per hour), weak (no cost per hour)." in text
    assert "Left out: oracle (no median time to first token)." in text
    assert "1,000 ms: not conversational to the right" in text and "shares that rank" in text
    assert "<script" not in (board / "index.html").read_text() and "http" not in \
        (board / "index.html").read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_thirty_models_open_in_chromium_in_under_a_second(runs, chromium, tmp_path):
    made = bench.synthetic_runs(runs["oracle"], tmp_path / "runs", 30)
    assert callm(["leaderboard", *map(str, made), "--out", str(tmp_path / "board")]) == 0
    loads = sorted(bench.load_ms(chromium, tmp_path / "board" / "index.html", tmp_path) for _ in range(3))
    print(f"\n30 models: index.html opens to its load event in {loads[1]:.0f} ms (median of 3 in Chromium)")
    assert loads[1] < 1000, loads
    rows = md_rows(tmp_path / "board")
    assert len(rows) == 30 and rows[0][1] == "model-00-a"
    by_name = {r[1]: r for r in rows}
    assert "(over 1 s)" in by_name["model-29-b"][5] and "(over 1 s)" not in by_name["model-01-b"][5]
    assert by_name["model-05-b"][6] == "no prices" and by_name["model-07-b"][6] == "usage not reported"


# Ties ------------------------------------------------------------------------------------------


class FakeRow:
    """Just what `rank` reads of a row."""

    def __init__(self, name, estimate, low=None, high=None, pass1=0.5):
        self.name, self.rank, self.shared = name, None, False
        scope = type("S", (), {})()
        scope.pass_k, scope.pass_at_1 = Figure(estimate, low, high), Figure(pass1)
        self.overall = scope


def test_ties_are_shared_with_the_first_model_of_the_rank_above_not_chained():
    rows = rank([FakeRow("c", 0.50, 0.42, 0.58), FakeRow("a", 0.70, 0.60, 0.80), FakeRow("b", 0.62, 0.55, 0.70),
                 FakeRow("d", 0.20, 0.10, 0.30), FakeRow("e", None), FakeRow("f", 0.20)])
    assert [(r.name, r.rank, r.shared) for r in rows] == [
        ("a", 1, True), ("b", 1, True),  # b's interval reaches a's
        ("c", 3, False),  # c's reaches b's but not a's, the first of rank 1: no chain
        ("d", 4, True), ("f", 4, True),  # f has no interval but the same estimate
        ("e", None, False)]  # no pass^k: listed last, unranked


# Refusals --------------------------------------------------------------------------------------


def leaderboard(capsys, *args) -> tuple[int, str]:
    code = callm(["leaderboard", *map(str, args)])
    return code, capsys.readouterr().err


def altered(run: Path, dest: Path, **comparable) -> Path:
    shutil.copytree(run, dest)
    manifest = json.loads((dest / "manifest.json").read_text())
    for key, value in comparable.items():
        if key in ("tasks", "verifier"):
            manifest["comparable"]["hashes"][key] = value
        else:
            manifest["comparable"][key] = value
    (dest / "manifest.json").write_text(json.dumps(manifest))
    return dest


def test_runs_on_another_task_set_or_verifier_are_refused_unless_forced(runs, tmp_path, capsys):
    other = altered(runs["good"], tmp_path / "other", model="other", tasks="0123456789ab" + "0" * 52)
    code, err = leaderboard(capsys, runs["oracle"], other, "--out", tmp_path / "b1")
    assert code == 2 and not (tmp_path / "b1").exists()
    assert err.startswith("callm leaderboard: refused: the task-set hash (hashes.tasks) differs between the runs")
    assert f"{other} has 0123456789ab" in err and "pass --force to rank them anyway" in err

    code, err = leaderboard(capsys, runs["oracle"], other, "--out", tmp_path / "b2", "--force")
    assert code == 0 and (tmp_path / "b2" / "index.html").is_file()
    assert err.startswith("callm leaderboard: WARNING: the task-set hash (hashes.tasks) differs")
    assert "ranked anyway (--force)" in (tmp_path / "b2" / "index.html").read_text()

    judged = altered(runs["good"], tmp_path / "judged", model="judged", verifier="f" * 64)
    code, err = leaderboard(capsys, runs["oracle"], judged, "--out", tmp_path / "b3")
    assert code == 2 and "the verifier hash (hashes.verifier) differs" in err


def test_two_runs_of_one_model_are_refused_naming_both(runs, tmp_path, capsys):
    again = altered(runs["good"], tmp_path / "again")
    code, err = leaderboard(capsys, runs["good"], runs["oracle"], again, "--out", tmp_path / "b")
    assert code == 2 and f"{runs['good']} and {again} are all runs of model good" in err


def test_shards_of_one_model_are_refused_until_merged(runs, tmp_path, capsys):
    shards = []
    for i in (1, 2):
        shard = altered(runs["good"], tmp_path / f"s{i}")
        (shard / "shard.json").write_text(json.dumps({"format": "callm-shard/1", "index": i, "count": 2, "tasks": {}}))
        shards.append(shard)
    code, err = leaderboard(capsys, *shards, runs["oracle"], "--out", tmp_path / "b")
    assert code == 2
    assert f"join them first: callm merge {shards[0]} {shards[1]} --out DIR" in err
    code, err = leaderboard(capsys, shards[0], runs["oracle"], "--out", tmp_path / "b")
    assert code == 2 and "is shard 1/2 of a run of model good: join its shards first: callm merge" in err


def test_compare_merge_and_leaderboard_word_a_bad_folder_alike(runs, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    shutil.copy(runs["oracle"] / "manifest.json", unfinished)
    for bad, said in ((empty, f"{empty}: no manifest.json (not a run directory)"),
                      (unfinished, f"{unfinished}: the run did not finish (no report.json; resume it with "
                                   f"--callm-resume={unfinished}, or rescore it)")):
        assert compare.main([str(runs["oracle"]), str(bad)]) == 2
        assert capsys.readouterr().err == f"callm compare: {said}\n"
        assert callm(["merge", str(bad), "--out", str(tmp_path / "merged"), "--no-html"]) == 2
        assert capsys.readouterr().err == f"callm merge: {said}\n"
        assert leaderboard(capsys, runs["oracle"], bad, "--out", tmp_path / "b") == (2, f"callm leaderboard: {said}\n")
    code, err = leaderboard(capsys, runs["oracle"], tmp_path / "nowhere", "--out", tmp_path / "b")
    assert (code, err) == (2, f"callm leaderboard: {tmp_path / 'nowhere'}: no such directory\n")
