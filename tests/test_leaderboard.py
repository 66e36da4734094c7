"""`callm leaderboard`: real runs of the example tasks ranked into a page, a Markdown table and a page
per model; the page opened in headless Chromium from file://; mixes that cannot be ranked refused, and
runs that are not CALLM results listed apart with why.

The runs (4 attempts per task, pass^3), every model on the scripted local server:
- CALLM results, the simulated caller on a caller model of its own (`caller-bot`, its lines played by
  the server): `good`, playing the answer key of C2-E2 in every task (it passes C2-E2 only), with list
  prices; `weak`, ending every call at once, reporting no token usage, its first attempt failing on
  the model's side through every retry (one attempt not scored);
- listed apart: the oracle (the offline caller); `scripted`, as `good` but against a conftest's scripted caller;
  `selfie`, as `good` but its config names itself as the caller.
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
from urllib.parse import urlencode

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from devtools import DevTools
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server_session  # noqa: F401  (fixture)
from pytest_callm.cli import main as callm
from pytest_callm.report import compare
from pytest_callm.model.latency import p90
from pytest_callm.report.choose import Budget, choose
from pytest_callm.report.leaderboard import TIE_RULE, Figure, load, rank

pytestmark = pytest.mark.xdist_group("leaderboard")  # its module fixture plays runs once, on one worker

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


CALLER_LINES = ["I'd like to book a check-up for my dog Biscuit, please.", "Thanks, goodbye."]


def play(project: Path, *args: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]), KEY: "sk-board"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tasks", *ATTEMPTS, *args],
                          cwd=project, capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]


def project_for(root: Path, name: str, server, conftest: str | None = None, tools: str = "") -> Path:
    """A project holding the example pack and tasks, and the model configs on `server` (`tools`: an ini
    line naming a running tool server, conftest.example_tools)."""
    project = root / name
    shutil.copytree(EXAMPLE_PACK, project / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, project / "tasks" / "vet_clinic")
    (project / "pytest.ini").write_text("[pytest]\ncallm_model_configs = models\n"
                                        "callm_retry_backoff = 0.001\ncallm_concurrency = 1\n" + tools)
    if conftest:
        (project / "conftest.py").write_text(conftest)
    (project / "models").mkdir()
    base = f'base_url = "{server.base_url}"\napi_key_env = "{KEY}"\n'
    (project / "models" / "caller-bot.toml").write_text('model = "caller-bot"\n' + base)
    (project / "models" / "good.toml").write_text('model = "scripted"\ncaller = "caller-bot"\n' + base
                                                  + '\n[sampling]\ntemperature = 0.2\n' + PRICES)
    (project / "models" / "weak.toml").write_text('model = "scripted"\ncaller = "caller-bot"\n' + base + PRICES)
    (project / "models" / "scripted.toml").write_text('model = "scripted"\n' + base + PRICES)
    (project / "models" / "selfie.toml").write_text('model = "scripted"\ncaller = "self"\n' + base + PRICES)
    return project


@pytest.fixture(scope="module")
def runs(tmp_path_factory, openai_server_session, tool_server) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("board")
    server = openai_server_session
    tools = f"callm_tool_server = {tool_server.url}\n"
    project = project_for(root, "project", server, tools=tools)
    scripted = project_for(root, "scripted-project", server, CONFTEST, tools=tools)

    def answer_key():
        server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent),
                     caller=ScriptCaller(CALLER_LINES), models=("scripted", "caller-bot"), delay_ms=5)

    play(project, "--callm-model=oracle", f"--callm-out={root / 'oracle'}")
    for name, where in (("good", project), ("scripted", scripted), ("selfie", project)):
        answer_key()
        play(where, f"--callm-model={name}", f"--callm-out={root / name}")
    server.reset(caller=ScriptCaller(CALLER_LINES), models=("scripted", "caller-bot"))
    server.script(*[{"status": 500}] * 10, *[END_CALL] * 60)
    play(project, "--callm-model=weak", f"--callm-out={root / 'weak'}")
    server.reset()
    return {name: root / name for name in ("oracle", "good", "weak", "scripted", "selfie")}


@pytest.fixture(scope="module")
def board(runs, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("out") / "board"
    # Given in another order than the ranking: the order of the arguments does not matter.
    assert callm(["leaderboard", *(str(runs[n]) for n in ("selfie", "weak", "oracle", "scripted", "good")),
                  "--out", str(out), "--title", "Example board"]) == 0
    return out


def report(run: Path) -> dict:
    return json.loads((run / "report.json").read_text())


def manifest(run: Path) -> dict:
    return json.loads((run / "manifest.json").read_text())


def md_tables(board: Path) -> tuple[list[list[str]], list[list[str]]]:
    """The Markdown's ranked rows and the rows listed apart, as cells."""
    lines = (board / "leaderboard.md").read_text().splitlines()

    def table(head: str) -> list[list[str]]:
        start = next((i for i, line in enumerate(lines) if line.startswith(head)), None)
        if start is None:
            return []
        out = []
        for line in lines[start + 2:]:
            if not line.startswith("|"):
                break
            out.append([c.strip() for c in line.strip("|").split(" | ")])
        return out

    return table("| Rank"), table("| Model | Why")


def category_names() -> dict[str, str]:
    """The example tasks' category codes and names, as their task files write them."""
    out = {}
    for task in EXAMPLE_TASKS.glob("*/task.json"):
        meta = json.loads(task.read_text())["metadata"]
        out[meta["category_slug"]] = meta["category"]
    return out


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


def test_each_manifest_records_who_played_the_caller(runs):
    assert {name: manifest(run)["caller"] for name, run in runs.items()} == {
        "oracle": {"kind": "offline", "name": "offline"},
        "good": {"kind": "model", "name": "caller-bot"}, "weak": {"kind": "model", "name": "caller-bot"},
        "scripted": {"kind": "plugin", "name": "pytest_callm_make_caller"},
        "selfie": {"kind": "self", "name": "selfie"}}


def test_only_callm_results_are_ranked_the_others_listed_apart_with_why(runs, board):
    ranked, apart = md_tables(board)
    # good's pass^3 interval reaches down to weak's 0: they share the rank.
    assert [(r[0], r[1]) for r in ranked] == [("=1", "good"), ("=1", "weak")]
    assert [(r[0], r[1]) for r in apart] == [
        ("oracle", "not a CALLM result: the offline caller answers from the task's script (the oracle replays "
                   "the answer keys: a check of the tasks)"),
        ("scripted", "not a CALLM result: a scripted caller of the project's own (pytest_callm_make_caller), "
                     "not the simulated caller"),
        ("selfie", "not a CALLM result: the model plays its own caller")]
    # Tasks, attempts scored (and a task) and the caller, on every row.
    assert [r[5:8] for r in ranked] == [["8", "32 (4 a task)", "caller-bot"], ["8", "31 (4 a task)", "caller-bot"]]
    assert [r[5:8] for r in apart] == [["8", "32 (4 a task)", "offline (the task's script)"],
                                       ["8", "32 (4 a task)", "scripted: pytest_callm_make_caller"],
                                       ["8", "32 (4 a task)", "the model itself"]]


def test_the_table_shows_the_reports_figures(runs, board):
    ranked, apart = md_tables(board)
    head = (board / "leaderboard.md").read_text().splitlines()[4]
    assert head.startswith("| Rank | Model | pass^3 (95% CI) | pass@1 (95% CI) | vet_clinic pass^3 | tasks | "
                           "attempts scored | caller | TTFT (median) |")
    for row in ranked + apart:
        summary = report(runs[row[1] if row in ranked else row[0]])["summary"]
        overall, iv = summary["overall"], summary["intervals"]["overall"]
        assert row[2] == f"{fig(overall['pass_k'])} {interval(iv['pass_k'])}"
        assert row[3] == f"{fig(overall['pass_at_1'])} {interval(iv['pass_at_1'])}"
        assert row[4] == fig(summary["industries"]["vet_clinic"]["pass_k"])
    good_usage = report(runs["good"])["usage"]["total"]
    assert ranked[0][8] == f"{good_usage['ttft_median_ms']:,.0f} ms" and good_usage["ttft_median_ms"] >= 5
    assert ranked[0][9] == f"${good_usage['cost_per_call']:,.4f}" and good_usage["cost_per_call"] > 0
    assert apart[0][8:12] == ["n/a", "no model requests", "no model requests", "0"]
    # weak's server reported no usage: its cost is unknown, never $0.
    assert ranked[1][9:12] == ["usage not reported", "usage not reported", "1"]
    assert TIE_RULE.format(k=3, over="cross-industry") in (board / "leaderboard.md").read_text()


def test_the_table_is_the_same_text_each_time(runs, board, tmp_path):
    assert callm(["leaderboard", *(str(runs[n]) for n in ("good", "scripted", "weak", "oracle", "selfie")),
                  "--out", str(tmp_path), "--title", "Example board"]) == 0
    assert (tmp_path / "leaderboard.md").read_bytes() == (board / "leaderboard.md").read_bytes()


def test_a_model_page_shows_the_settings_results_and_the_runs_report(runs, board):
    page = (board / "models" / "good.html").read_text()
    for text in ("temperature", "0.2", "cached_input", "scripted", KEY, "Results per category", "C2-E2"):
        assert text in page, text
    assert "sk-board" not in page
    categories = report(runs["good"])["summary"]["categories"]
    for key, group in categories.items():
        category = key.split("/")[1]
        name = category_names()[category]  # the code with its name, from the task files (the pack lists no suite)
        assert (f"<td>vet_clinic</td><td>{category} <span class=\"muted\">{name}</span></td>"
                f"<td class=\"num\">{group['tasks']}</td>") in page
    link = re.search(r'id="run-report" href="([^"]+)"', page).group(1)
    assert link == "../runs/good/report.html"
    assert (board / "runs" / "good" / "report.html").read_bytes() == (runs["good"] / "report.html").read_bytes()
    assert 'href="../index.html"' in page


def caller_section(page: str) -> str:
    return re.search(r"<h4>caller</h4>(.*?)</div>", page, re.S).group(1)


def test_a_model_page_names_who_played_the_caller(board):
    scripted = caller_section((board / "models" / "scripted.html").read_text())
    assert "scripted: pytest_callm_make_caller" in scripted
    assert "gpt-5" not in scripted and "scripted.toml" not in scripted  # no caller config: none played
    assert "the model itself" in caller_section((board / "models" / "selfie.html").read_text())
    good = caller_section((board / "models" / "good.html").read_text())
    assert "caller-bot" in good and "base_url" in good  # the caller model's settings as run
    assert "not a CALLM result: the model plays its own caller" in (board / "models" / "selfie.html").read_text()


HREF = re.compile(r'(?:href|src)="([^"#?]+)[^"]*"')


def test_the_board_copied_elsewhere_keeps_every_link(runs, board, tmp_path):
    """Every link of the pages leads to a file inside the board: a copy opens whole, with the runs gone."""
    copy = tmp_path / "published" / "board"
    shutil.copytree(board, copy)
    pages = [copy / "index.html", copy / "choose.html", *(copy / "models").glob("*.html")]
    checked = 0
    for page in pages:
        for target in HREF.findall(page.read_text()):
            assert not target.startswith(("/", "file:", "http")), (page, target)
            assert (page.parent / target).resolve().is_relative_to(copy.resolve()), (page, target)
            assert (page.parent / target).is_file(), (page, target)
            checked += 1
    assert checked > 20
    text = (copy / "index.html").read_text()
    assert "copy of its pages in runs/ beside this page" in text
    assert {p.name for p in (copy / "runs").iterdir()} == set(runs)
    # The copied task pages hold every attempt, for the side-by-side view.
    task = copy / "runs" / "good" / "report" / "vet_clinic" / "C2-E2.html"
    assert 'id="vet_clinic-C2-E2-attempt-4"' in task.read_text()


def test_no_cost_plot_is_drawn_when_no_model_has_a_cost(runs, tmp_path):
    assert callm(["leaderboard", str(runs["weak"]), str(runs["oracle"]), "--out", str(tmp_path)]) == 0
    page = (tmp_path / "index.html").read_text()
    assert 'id="plot-cost"' not in page and 'id="no-costs"' in page
    assert "No costs recorded" in page and "Left out: weak (no cost per hour)." in page
    assert 'id="plot-ttft"' in page  # weak's requests were timed


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
        if tag == "tr" and "data-model" in a:
            self.rows.append({"rank": a.get("data-rank"), "model": a["data-model"], "apart": a.get("data-apart"),
                              "cells": {}})
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
    assert [(r["rank"], r["model"]) for r in page.rows] == [("=1", "good"), ("=1", "weak"), (None, "oracle"),
                                                            (None, "scripted"), (None, "selfie")]
    assert [bool(r["apart"]) for r in page.rows] == [False, False, True, True, True]
    assert page.rows[4]["cells"]["why"] == "not a CALLM result: the model plays its own caller"
    iv = report(runs["good"])["summary"]["intervals"]["overall"]
    assert page.rows[0]["cells"]["passk"] == f"{fig(report(runs['good'])['summary']['overall']['pass_k'])}" \
                                             f"{interval(iv['pass_k'])}"
    assert interval(iv["pass_at_1"]) in page.rows[0]["cells"]["pass1"]
    assert page.rows[0]["cells"]["caller"] == "caller-bot" and page.rows[0]["cells"]["tasks"] == "8"
    assert page.rows[1]["cells"]["cost-hour"] == "usage not reported" and page.rows[1]["cells"]["unscored"] == "1"
    assert set(page.plots) == {"plot-gap", "plot-cost", "plot-ttft", "plot-industry-vet_clinic"}
    # The plots draw the ranked models only: the others are not comparable with them.
    assert page.plots["plot-gap"] == ["good", "weak"] == page.plots["plot-industry-vet_clinic"]
    assert page.plots["plot-cost"] == ["good"]  # weak has no cost: left out, with a note naming it
    assert page.plots["plot-ttft"] == ["good", "weak"]
    text = " ".join(page.texts)
    assert "Left out: weak (no cost per hour)." in text
    assert "1,000 ms: not conversational to the right" in text and "shares that rank" in text
    assert "<script" not in (board / "index.html").read_text() and "http" not in \
        (board / "index.html").read_text().replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_thirty_models_open_in_chromium_with_every_row_and_plot(runs, chromium, tmp_path):
    """The open time is the benchmark's figure (benchmarks/leaderboard_open.py), printed here, not bounded:
    what the test holds is that the page reaches its load event whole, and stays small."""
    made = bench.synthetic_runs(runs["oracle"], tmp_path / "runs", 30)
    assert callm(["leaderboard", *map(str, made), "--out", str(tmp_path / "board")]) == 0
    index = tmp_path / "board" / "index.html"
    print(f"\n30 models: index.html opens to its load event in "
          f"{bench.load_ms(chromium, index, tmp_path):.0f} ms in Chromium (not a bound)")
    dom, _ = bench._dump(chromium, tmp_path / "profile-30", index.as_uri())
    page = Dom()
    page.feed(dom)
    assert len(page.rows) == 30 and all(r["rank"] for r in page.rows)
    assert all(len(page.plots[p]) == 30 for p in ("plot-gap", "plot-industry-vet_clinic"))
    # 30 models of 5 attempts of 8 tasks: the page grows with the models, not with their attempts.
    assert index.stat().st_size < 30 * 12 * 1024, index.stat().st_size
    ranked, _ = md_tables(tmp_path / "board")
    assert len(ranked) == 30 and ranked[0][1] == "model-00-a"
    by_name = {r[1]: r for r in ranked}
    assert "(over 1 s)" in by_name["model-29-b"][8] and "(over 1 s)" not in by_name["model-01-b"][8]
    assert by_name["model-05-b"][9] == "no prices" and by_name["model-07-b"][9] == "usage not reported"


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
    assert f"{other} has 0123456789ab" in err and "pass --force to show them, listed apart" in err

    # Forced: shown, but not ranked with the runs of the other task set.
    code, err = leaderboard(capsys, runs["oracle"], runs["good"], runs["weak"], other, "--out", tmp_path / "b2",
                            "--force")
    assert code == 0 and (tmp_path / "b2" / "index.html").is_file()
    assert err.startswith("callm leaderboard: WARNING: the task-set hash (hashes.tasks) differs")
    assert "shown anyway (--force)" in (tmp_path / "b2" / "index.html").read_text()
    ranked, apart = md_tables(tmp_path / "b2")
    assert [r[1] for r in ranked] == ["good", "weak"]
    assert ["other", "not comparable: another task set (8 tasks; the ranked runs played 8)"] in [r[:2] for r in apart]

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


# Choosing a model within budgets ---------------------------------------------------------------


@pytest.fixture(scope="module")
def rows(runs):
    ranked_and_apart, _ = load([runs[n] for n in ("oracle", "good", "weak", "scripted", "selfie")], force=False)
    return {r.name: r for r in ranked_and_apart}, ranked_and_apart


def names(chosen) -> list[str]:
    return [r.name for r in chosen]


def test_the_p90_of_a_row_is_that_of_every_request_of_its_run(runs, rows):
    by_name, _ = rows
    ttfts = [t for a in report(runs["good"])["attempts"] for t in a["usage"]["ttft_ms"]]
    assert by_name["good"].ttft_p90_ms == p90(ttfts)
    assert len(ttfts) == report(runs["good"])["usage"]["total"]["requests"]
    assert by_name["good"].ttft_ms == report(runs["good"])["usage"]["total"]["ttft_median_ms"]
    assert by_name["oracle"].ttft_p90_ms is None  # no model requests


def test_choosing_offers_the_ranked_models_that_meet_both_budgets_in_ranking_order(rows):
    by_name, all_rows = rows
    good, weak = by_name["good"], by_name["weak"]
    # No budget: every ranked model, none of those listed apart (not comparable).
    assert names(choose(all_rows, Budget())[0]) == ["good", "weak"] and choose(all_rows, Budget())[1] == []

    # A cost budget: a model whose cost is unknown does not meet it; a cost equal to the budget does.
    chosen, missed = choose(all_rows, Budget(cost_per_hour=good.cost_per_hour))
    assert names(chosen) == ["good"]
    assert [(r.name, why) for r, why in missed] == [("weak", ["cost per hour unknown (usage not reported)"])]
    chosen, missed = choose(all_rows, Budget(cost_per_hour=good.cost_per_hour / 2))
    assert chosen == [] and missed[0][1] == [f"${good.cost_per_hour:,.2f} per hour, over ${good.cost_per_hour / 2:,.2f}"]

    # A latency budget at the lower of the two medians: exactly the models at or under it.
    low = min(good.ttft_ms, weak.ttft_ms)
    chosen, missed = choose(all_rows, Budget(ttft_ms=low))
    assert names(chosen) == [r.name for r in (good, weak) if r.ttft_ms <= low]
    for r, why in missed:
        assert why == [f"median TTFT {r.ttft_ms:,.0f} ms, over {low:,.0f} ms"] and r.ttft_ms > low

    # The same budget on the p90: a run's p90 is over its median here (its requests' times vary), so a
    # budget at good's median keeps good on the median and not on the p90.
    assert good.ttft_p90_ms > good.ttft_ms
    assert "good" in names(choose(all_rows, Budget(ttft_ms=good.ttft_ms))[0])
    chosen, missed = choose(all_rows, Budget(ttft_ms=good.ttft_ms, statistic="p90"))
    assert "good" not in names(chosen)
    assert dict((r.name, why) for r, why in missed)["good"] == [
        f"p90 TTFT {good.ttft_p90_ms:,.0f} ms, over {good.ttft_ms:,.0f} ms"]

    # Both budgets: both must hold.
    both = Budget(ttft_ms=max(good.ttft_p90_ms, weak.ttft_p90_ms), statistic="p90", cost_per_hour=good.cost_per_hour)
    assert names(choose(all_rows, both)[0]) == ["good"]
    with pytest.raises(ValueError):
        Budget(statistic="p95")


def test_the_command_prints_the_choice_within_budgets(runs, rows, tmp_path, capsys):
    good = rows[0]["good"]
    assert callm(["leaderboard", str(runs["good"]), str(runs["weak"]), str(runs["oracle"]), "--out", str(tmp_path),
                  "--cost-budget", repr(good.cost_per_hour)]) == 0
    out = capsys.readouterr().out
    assert "within budget (1 of 2 ranked):" in out and "good: pass^3" in out
    assert "out  weak: cost per hour unknown (usage not reported)" in out
    # The page's form starts from the same budget.
    assert f'id="cost" min="0" step="any" value="{good.cost_per_hour}"' in (tmp_path / "choose.html").read_text()


class Choice(HTMLParser):
    """The choice page as Chromium left it: the models within budget, those outside with why, the frames."""

    def __init__(self):
        super().__init__()
        self.chosen: list[str] = []
        self.missed: dict[str, str] = {}
        self.frames: dict[str, str | None] = {}
        self._li: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "tr" and "data-model" in a:
            self.chosen.append(a["data-model"])
        elif tag == "li" and "data-model" in a:
            self._li = a["data-model"]
            self.missed[self._li] = ""
        elif tag == "iframe":
            self.frames[a["id"]] = a.get("src")

    def handle_endtag(self, tag):
        if tag == "li":
            self._li = None

    def handle_data(self, data):
        if self._li:
            self.missed[self._li] += data


def open_choice(chromium: str, board: Path, profile: Path, **query: str) -> Choice:
    """Open choose.html as its GET form submits it: the budgets and the side-by-side choice in the query."""
    url = (board / "choose.html").as_uri() + ("?" + urlencode(query) if query else "")
    dom, _ = bench._dump(chromium, profile, url)
    page = Choice()
    page.feed(dom)
    return page


def test_the_choice_page_filters_by_budget_in_chromium_as_choose_does(rows, board, chromium, tmp_path):
    by_name, all_rows = rows
    good = by_name["good"]
    # With no budget: every ranked model, none listed apart; the first two side by side once a task is chosen.
    page = open_choice(chromium, board, tmp_path / "p0")
    assert page.chosen == ["good", "weak"] and page.missed == {}
    assert page.frames == {"frame-a": None, "frame-b": None}

    budget = Budget(ttft_ms=good.ttft_ms, statistic="p90", cost_per_hour=good.cost_per_hour)
    page = open_choice(chromium, board, tmp_path / "p1", stat="p90", ttft=repr(good.ttft_ms),
                       cost=repr(good.cost_per_hour), task="vet_clinic/C2-E2", attempt="2", a="good", b="weak")
    chosen, missed = choose(all_rows, budget)
    assert page.chosen == names(chosen) == []  # good's p90 is over its median; weak has no cost
    assert list(page.missed) == ["good", "weak"] == [r.name for r, _ in missed]
    assert page.missed["weak"] == "weak (rank =1): " + "; ".join(dict((r.name, w) for r, w in missed)["weak"])
    assert page.missed["good"].startswith("good (rank =1): p90 TTFT ")

    page = open_choice(chromium, board, tmp_path / "p2", stat="median", ttft=repr(good.ttft_ms),
                       cost=repr(good.cost_per_hour), task="vet_clinic/C2-E2", attempt="2", a="good", b="weak")
    assert page.chosen == names(choose(all_rows, Budget(ttft_ms=good.ttft_ms, cost_per_hour=good.cost_per_hour))[0])
    assert page.chosen == ["good"]
    # The same attempt of the same task from both models, from the board's own copies of their pages.
    for frame, model in (("frame-a", "good"), ("frame-b", "weak")):
        src = page.frames[frame]
        assert src == f"runs/{model}/report/vet_clinic/C2-E2.html#vet_clinic-C2-E2-attempt-2"
        target = board / src.split("#")[0]
        assert 'id="vet_clinic-C2-E2-attempt-2"' in target.read_text()
    assert "<script src" not in (board / "choose.html").read_text()
    assert "http" not in (board / "choose.html").read_text()


def test_a_run_saved_before_the_caller_was_recorded_is_read_from_its_configs(runs, tmp_path):
    """Runs saved before the manifest said who played the caller: the oracle has none, a model named as
    its own caller plays itself, and a caller model is taken at its config's word, marked so."""
    old = {}
    for name in ("oracle", "good", "selfie"):
        old[name] = shutil.copytree(runs[name], tmp_path / name)
        data = manifest(old[name])
        del data["caller"]
        (old[name] / "manifest.json").write_text(json.dumps(data))
    rows, _ = load(list(old.values()), force=False)
    by_name = {r.name: r for r in rows}
    assert by_name["oracle"].caller_label == "none" and by_name["oracle"].apart.startswith("not a CALLM result")
    assert by_name["selfie"].caller_label == "the model itself"
    assert by_name["good"].caller_label == "caller-bot (as configured; not recorded)" and by_name["good"].apart is None


def test_typing_budgets_into_the_choice_page_filters_at_once(rows, board, chromium, tmp_path):
    """The same rule as `choose`, applied as the reader types (no submit), in headless Chromium."""
    by_name, all_rows = rows
    good, weak = by_name["good"], by_name["weak"]
    browser = DevTools(chromium, tmp_path / "profile")
    chosen = "[...document.querySelectorAll('#chosen tbody tr')].map(tr => tr.dataset.model)"
    try:
        browser.open((board / "choose.html").as_uri())
        assert browser.evaluate(chosen) == ["good", "weak"]
        low = min(good.ttft_ms, weak.ttft_ms)
        browser.type_into("ttft", repr(low))
        assert browser.evaluate(chosen) == names(choose(all_rows, Budget(ttft_ms=low))[0])
        browser.clear("ttft")
        browser.type_into("cost", repr(good.cost_per_hour))
        assert browser.evaluate(chosen) == ["good"]
        browser.evaluate("const s = document.getElementById('stat'); s.value = 'p90';"
                         "s.dispatchEvent(new Event('change', {bubbles: true}))")
        browser.type_into("ttft", repr(good.ttft_ms))  # good's p90 is over its median
        assert browser.evaluate(chosen) == names(choose(all_rows, Budget(good.ttft_ms, "p90", good.cost_per_hour))[0])
        assert browser.evaluate(chosen) == []
    finally:
        browser.close()


# Where models fail, and the layout --------------------------------------------------------------


def test_a_cell_of_the_failure_view_opens_its_attempts_in_chromium(runs, board, chromium, tmp_path):
    """failures.html: a cell (good's failures at a tool) lists the attempts behind it; each opens on its task's
    page in the copy of good's report, at that attempt."""
    page = (board / "failures.html").read_text()
    for heading in ("per category", "by gate", "by desk (agent)", "by tool", "by house rule"):
        assert heading in page.lower(), heading
    browser = DevTools(chromium, tmp_path / "profile")
    cell = "#failures-tool td[data-model='good'] a"
    try:
        browser.open((board / "failures.html").as_uri(), width=1280)
        tool = browser.evaluate(f"document.querySelector(\"{cell}\").closest('tr').dataset.value")
        count = int(browser.evaluate(f"document.querySelector(\"{cell}\").textContent"))
        browser.click(cell)
        target = browser.evaluate("location.hash.slice(1)")
        listed = browser.evaluate(f"[...document.getElementById({target!r}).querySelectorAll('a.attempt')]"
                                  ".map(a => a.getAttribute('href'))")
        assert browser.evaluate(f"document.getElementById({target!r}).matches(':target')")
        assert len(listed) == count > 0
        # Every attempt listed is one the run failed, and its verdict names the tool (as missing or mismatched).
        for href in listed:
            assert href.startswith("runs/good/report/vet_clinic/")
            task, number = re.search(r"vet_clinic-(.+)-attempt-(\d+)$", href).groups()
            saved = json.loads((runs["good"] / "trajectories" / "vet_clinic" / task / f"attempt-{number}.json").read_text())
            assert saved["verdict"]["passed"] is False
            assert any(c.get("expected") == tool and c.get("matched") is None
                       for c in saved["verdict"]["tools"]["details"]["calls"]), (href, tool)
        browser.click(f"#{target} a.attempt")
        anchor = listed[0].split("#")[1]
        assert browser.evaluate("location.pathname").endswith(listed[0].split("#")[0].split("runs/good", 1)[1])
        assert browser.evaluate(f"document.getElementById({anchor!r}) !== null")
        assert browser.evaluate(f"document.getElementById({anchor!r}).matches(':target')")
    finally:
        browser.close()


def test_the_failure_view_counts_the_failed_attempts_by_gate(runs, board):
    """The gate table holds, for each model, the attempts whose report marks that gate failed."""
    page = (board / "failures.html").read_text()
    attempts = report(runs["good"])["attempts"]
    for gate in ("tools", "handoff", "database", "words"):
        failed = sum(1 for a in attempts if a["passed"] is False and a["gates"].get(gate) is False)
        row = re.search(rf'<tr data-value="{gate}">(.*?)</tr>', page, re.S)
        if not failed:
            assert row is None or 'data-model="good">0<' in row[1]
            continue
        assert re.search(rf'data-model="good"><a href="#[^"]+">{failed}</a>', row[1]), (gate, failed)


@pytest.mark.parametrize("width", (1280, 1920))
def test_the_board_fits_the_window_at_both_widths(board, chromium, tmp_path, width):
    """The leaderboard, a scope's page, the choice page and the failure view at 1,280 and 1,920 px: nothing
    wider than the window, no table wider than its box; the reasons a run is not ranked read as lines; the
    frames side by side hold attempt pages that fit their width."""
    browser = DevTools(chromium, tmp_path / "profile")
    try:
        for page in ("index.html", "rank-C2.html", "choose.html", "failures.html", "models/good.html"):
            browser.open((board / page).as_uri(), width=width)
            found = browser.overflow()
            assert found["window"] == width and found["page"] <= 0 and found["boxes"] == [], (page, found)
        browser.open((board / "index.html").as_uri(), width=width)
        why = browser.evaluate("[...document.querySelectorAll('td.why')].map(td => td.getBoundingClientRect().width)")
        assert len(why) == 3 and min(why) > 400, why
        browser.open((board / "choose.html").as_uri() + "?task=vet_clinic%2FC1-H1&attempt=1&a=good&b=weak", width=width)
        frames = browser.evaluate("['a', 'b'].map(s => [document.getElementById('frame-' + s).clientWidth,"
                                  " document.getElementById('frame-' + s).getAttribute('src')])")
        for frame_width, src in frames:
            assert src and frame_width < width / 2
            browser.open((board / src.split("#")[0]).as_uri(), width=frame_width)
            assert browser.overflow()["page"] <= 0, (src, frame_width)
    finally:
        browser.close()
