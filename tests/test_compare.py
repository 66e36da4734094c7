"""`callm compare`: saved runs side by side, paired per-task flips, refusal of incomparable runs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_TASKS, REPO, shared_tool_server
from pytest_callm.report import compare
from pytest_callm.scoring.cost import usage_group
from pytest_callm.scoring.metrics import summarize
from pytest_callm.saved.rundir import FORMAT, REPORT_FORMAT, RunDir, write_json

pytestmark = pytest.mark.xdist_group("compare")  # its module fixture plays runs once, on one worker

WIDTH = 160


def pytest_run(*args: str) -> None:
    """pytest on the example tasks, played on this process's tool server (conftest.shared_tool_server)."""
    tools = f"--callm-tool-server={shared_tool_server().url}"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS), tools, *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stdout[-3000:] + proc.stderr[-3000:]


def set_status(run: Path, task: str, attempt: int, row_id: int, status: str) -> None:
    path = run / "trajectories" / "vet_clinic" / task / f"attempt-{attempt}.json"
    saved = RunDir(run).read_attempt(path)  # its final state in full, written back so (still readable)
    row = next(r for r in saved["trajectory"]["final_state"]["appointments"] if r["id"] == row_id)
    row["status"] = status
    path.write_text(json.dumps(saved))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """An oracle run, the same run rescored, and a rescored copy whose trajectories were made to fail:
    C1-H1 in all five attempts (a cancelled appointment that should stay booked), C2-M1 in two."""
    root = tmp_path_factory.mktemp("runs")
    pytest_run("--callm-model=oracle", f"--callm-out={root / 'oracle'}")
    pytest_run(f"--callm-rescore={root / 'oracle'}", f"--callm-out={root / 'again'}")
    shutil.copytree(root / "oracle", root / "edited")
    for attempt in range(1, 6):
        set_status(root / "edited", "C1-H1", attempt, 1, "cancelled")
    for attempt in (2, 4):
        set_status(root / "edited", "C2-M1", attempt, 2, "booked")
    pytest_run(f"--callm-rescore={root / 'edited'}", f"--callm-out={root / 'failing'}")
    return {name: root / name for name in ("oracle", "again", "failing")}


def run_main(capsys, *args) -> tuple[int, str, str]:
    code = compare.main([str(a) for a in args], width=WIDTH, color=False)
    out, err = capsys.readouterr()
    return code, out, err


def test_two_identical_runs_compare_with_no_flips(runs, capsys):
    code, out, err = run_main(capsys, runs["oracle"], runs["again"])
    assert code == 0 and not err
    assert "Per-task differences: again against oracle: no task changed (8 tasks in both); no flips." in out
    assert "flipped" not in out and "WARNING" not in out
    rows = [line for line in out.splitlines() if "│ again " in line]
    assert len(rows) == 2 and all("40/40" in r and r.count("100.0%") == 2 and r.count(" 0.0 ") == 2 for r in rows)
    assert "95% CI: percentile bootstrap over tasks; " in out and " for oracle, again (" in out
    assert "no run recorded usage" in out


def test_a_run_with_failures_shows_the_flipped_tasks_and_lower_figures(runs, capsys):
    code, out, _ = run_main(capsys, runs["oracle"], runs["failing"])
    assert code == 0
    vet = next(line for line in out.splitlines() if "│ failing " in line)
    # 33 of 40 pass; pass^5 is 6 of 8 tasks: 17.5 and 25 points below the oracle
    assert "33/40" in vet and "82.5%" in vet and "-17.5" in vet and "75.0%" in vet and "-25.0" in vet
    assert "[100.0, 100.0]" not in vet  # the failing run's interval is wide
    c1h1 = next(line for line in out.splitlines() if "vet_clinic/C1-H1" in line and "│" in line)
    assert "5/5" in c1h1 and "0/5" in c1h1 and "100.0% → 0.0%" in c1h1 and "lost all-pass" in c1h1
    c2m1 = next(line for line in out.splitlines() if "vet_clinic/C2-M1" in line and "│" in line)
    assert "5/5" in c2m1 and "3/5" in c2m1 and "100.0% → 60.0%" in c2m1
    assert "2 of 8 tasks changed: pass@1 up on 0, down on 2." in out
    assert "flipped from all-pass to not (2): vet_clinic/C1-H1, vet_clinic/C2-M1" in out
    assert "flipped from not to all-pass (0): none" in out

    code, back, _ = run_main(capsys, runs["failing"], runs["oracle"])  # and back
    assert code == 0
    assert "flipped from all-pass to not (0): none" in back
    assert "flipped from not to all-pass (2): vet_clinic/C1-H1, vet_clinic/C2-M1" in back
    assert "+17.5" in back and "+25.0" in back


def test_three_runs_each_against_the_first(runs, capsys):
    code, out, _ = run_main(capsys, runs["oracle"], runs["failing"], runs["again"])
    assert code == 0
    assert out.index("against oracle:", out.index("Per-task differences: failing against oracle")) > 0
    assert "Per-task differences: again against oracle: no task changed" in out
    assert out.index("│ failing ") < out.index("│ again ")  # runs in the order given


def with_hash(run: Path, dest: Path, key: str, value: str) -> Path:
    shutil.copytree(run, dest, ignore=shutil.ignore_patterns("trajectories"))
    manifest = json.loads((dest / "manifest.json").read_text())
    manifest["comparable"]["hashes"][key] = value
    write_json(dest / "manifest.json", manifest)
    return dest


@pytest.mark.parametrize("key, name", [("tasks", "task-set hash"), ("verifier", "verifier hash")])
def test_differing_hashes_are_refused_and_force_compares_with_a_warning(runs, tmp_path, capsys, key, name):
    other = with_hash(runs["failing"], tmp_path / "other", key, "0123456789abcdef" * 4)
    code, out, err = run_main(capsys, runs["oracle"], runs["again"], other)
    assert code == 2 and not out
    assert err.count("\n") == 1 and err.startswith("callm compare: refused:")
    assert f"the {name} (hashes.{key}) differs between the runs" in err
    same = compare.load_run(runs["oracle"]).hashes[key][:12]
    assert f"{runs['oracle']}, {runs['again']} have {same}; {other} has 0123456789ab." in err
    assert "pass --force to compare them anyway" in err

    code, out, err = run_main(capsys, runs["oracle"], runs["again"], other, "--force")
    assert code == 0 and not err
    first = out.splitlines()[0]
    assert first.startswith(f"WARNING: the {name} (hashes.{key}) differs between the runs") and "--force" in first
    assert "flipped from all-pass to not (2): vet_clinic/C1-H1, vet_clinic/C2-M1" in out


def test_other_differences_are_noted_not_refused(runs, tmp_path, capsys):
    other = tmp_path / "other-model"
    shutil.copytree(runs["again"], other, ignore=shutil.ignore_patterns("trajectories"))
    manifest = json.loads((other / "manifest.json").read_text())
    manifest["comparable"]["model"] = "gpt-x"
    manifest["comparable"]["hashes"]["packs"]["vet_clinic"] = "f" * 64
    write_json(other / "manifest.json", manifest)
    code, out, _ = run_main(capsys, runs["oracle"], other)
    assert code == 0 and "WARNING" not in out
    assert "note: other-model differs from oracle in: hashes.packs.vet_clinic, model" in out
    assert "other-model: " in out and "(model gpt-x, k = 5" in out


def test_a_bad_directory_is_a_clear_error(runs, tmp_path, capsys):
    missing = tmp_path / "nowhere"
    code, out, err = run_main(capsys, runs["oracle"], missing)
    assert (code, out, err) == (2, "", f"callm compare: {missing}: no such directory\n")

    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_main(capsys, empty, runs["oracle"])
    assert code == 2 and err == f"callm compare: {empty}: no manifest.json (not a run directory)\n"

    unfinished = tmp_path / "unfinished"
    unfinished.mkdir()
    shutil.copy(runs["oracle"] / "manifest.json", unfinished)
    code, _, err = run_main(capsys, runs["oracle"], unfinished)
    assert code == 2 and err == (f"callm compare: {unfinished}: the run did not finish (no report.json; "
                                f"resume it with --callm-resume={unfinished}, or rescore it)\n")

    (unfinished / "report.json").write_text('{"format": ')
    code, _, err = run_main(capsys, runs["oracle"], unfinished)
    assert code == 2 and err.startswith(f"callm compare: {unfinished / 'report.json'}: not JSON (")

    code, _, err = run_main(capsys, runs["oracle"])
    assert code == 2 and "two run directories or more" in err
    assert compare.main([]) == 2


# Synthetic runs: several industries, usage, reports without intervals -----------------------------


def attempt(industry: str, task_id: str, n: int, passed: bool | None) -> dict:
    return {"industry": industry, "task_id": task_id, "category": task_id.split("-")[0],
            "difficulty": {"E": "easy", "M": "medium", "H": "hard"}[task_id.split("-")[1][0]],
            "attempt": n, "passed": passed,
            "gates": {"tools": bool(passed), "handoff": True, "database": True} if passed is not None else {}}


def usage(ttft: float, cost: float | None) -> dict:
    return {"requests": 4, "requests_without_usage": 0, "ttft_ms": [ttft] * 4, "ttft_median_ms": ttft,
            "input_tokens": 4000, "cached_input_tokens": 1000, "output_tokens": 300, "reasoning_tokens": 0,
            "cost_usd": cost, "spoken_words": 200, "est_duration_s": 121.0}


def make_run(path: Path, passes: dict[tuple[str, str], int], *, k: int = 3, ttft: float | None = None,
             cost: float | None = None, intervals: bool = True) -> Path:
    """A run directory as the plugin writes it: `passes` maps (industry, task) to passing attempts of k."""
    results = [attempt(ind, task, n, n <= c) for (ind, task), c in passes.items() for n in range(1, k + 1)]
    summary = summarize(sorted(results, key=lambda r: (r["industry"], r["task_id"], r["attempt"])), k)
    report = {"format": REPORT_FORMAT, "model": path.name, "k": k, "summary": summary.to_json(),
              "usage": None, "line_rates": None, "attempts": results}
    if not intervals:
        report["summary"].pop("intervals", None)
    if ttft is not None:
        by: dict[str, list[dict]] = {}
        for r in results:
            by.setdefault(r["industry"], []).append(usage(ttft, cost))
        report["usage"] = {"industries": {i: usage_group(i, us).to_json() for i, us in sorted(by.items())},
                           "total": usage_group("all industries", [u for us in by.values() for u in us]).to_json()}
    manifest = {"format": FORMAT, "k": k, "comparable": {
        "model": path.name, "attempts": k, "line": "clean",
        "hashes": {"tasks": "t" * 64, "packs": {}, "verifier": "v" * 64}}}
    write_json(path / "manifest.json", manifest)
    write_json(path / "report.json", report)
    return path


# Tasks listed out of order on purpose: the output sorts them.
BASE = {("vet", "C2-M1"): 3, ("legal", "R-H1"): 3, ("vet", "C1-E1"): 1, ("legal", "C1-M2"): 3, ("legal", "C1-E1"): 0}
NEW = {("vet", "C2-M1"): 2, ("legal", "R-H1"): 3, ("vet", "C1-E1"): 3, ("legal", "C1-M2"): 1, ("legal", "C1-E1"): 3}


def test_output_is_stable_and_sorted(tmp_path, capsys):
    base = make_run(tmp_path / "base", BASE, ttft=420.0, cost=0.002)
    new = make_run(tmp_path / "new", NEW, ttft=380.0, cost=0.0015)
    first = run_main(capsys, base, new)
    assert first == run_main(capsys, base, new)
    code, out, _ = first
    assert code == 0
    assert out == compare.render(compare.load_runs([base, new]), width=WIDTH)
    lines = out.splitlines()
    results = out[:out.index("Per-task differences")].splitlines()
    scopes = [line.split("│")[1].strip() for line in results if line.startswith("│ ")]
    assert [s for s in scopes if s] == ["legal", "vet", "all industries"]
    changed = [line.split("│")[1].strip() for line in lines if "→" in line]
    assert changed == ["legal/C1-E1", "legal/C1-M2", "vet/C1-E1", "vet/C2-M1"]
    assert "flipped from all-pass to not (2): legal/C1-M2, vet/C2-M1" in out
    assert "flipped from not to all-pass (2): legal/C1-E1, vet/C1-E1" in out
    assert all(line == line.rstrip() for line in lines)


def test_latency_and_cost_side_by_side(tmp_path, capsys):
    base = make_run(tmp_path / "base", BASE, ttft=420.0, cost=0.002)
    new = make_run(tmp_path / "new", NEW, ttft=380.0, cost=0.0015)
    free = make_run(tmp_path / "free", BASE)  # no usage recorded
    code, out, _ = run_main(capsys, base, new, free)
    assert code == 0
    table = out[out.index("Latency and cost"):]
    legal = next(line for line in table.splitlines() if "│ new " in line)  # legal, sorted first
    # 3 tasks of 3 calls at $0.0015 each; 121 s per call
    assert [c.strip() for c in legal.split("│")[2:-1]] == ["new", "9", "380 ms", "-40 ms", "$0.0135", "$0.0015",
                                                           "$0.0446"]
    lines = table.splitlines()
    overall = lines[next(i for i, line in enumerate(lines) if line.startswith("│ all industries")):]
    assert [c.strip() for c in overall[0].split("│")[1:-1]] == ["all industries", "base", "15", "420 ms", "",
                                                                "$0.0300", "$0.0020", "$0.0595"]
    assert [c.strip() for c in overall[1].split("│")[2:-1]] == ["new", "15", "380 ms", "-40 ms", "$0.0225",
                                                                "$0.0015", "$0.0446"]
    assert [c.strip() for c in overall[2].split("│")[2:4]] == ["free", "no usage"]


def test_intervals_are_computed_from_the_attempts_when_the_report_has_none(tmp_path, capsys):
    stats = pytest.importorskip("pytest_callm.scoring.stats")
    base = make_run(tmp_path / "base", BASE)
    old = make_run(tmp_path / "old", NEW, intervals=False)
    runs = compare.load_runs([base, old])
    assert [r.intervals_source for r in runs] == ["report", "computed"]
    attempts = json.loads((old / "report.json").read_text())["attempts"]
    assert runs[1].intervals == stats.bootstrap(attempts, 3).to_json()
    code, out, _ = run_main(capsys, base, old)
    assert "from the report for base" in out and "computed here from the report's attempts for old" in out


def test_intervals_are_absent_without_the_stats_module(tmp_path, capsys, monkeypatch):
    base = make_run(tmp_path / "base", BASE, intervals=False)
    new = make_run(tmp_path / "new", NEW, intervals=False)
    monkeypatch.setitem(sys.modules, "pytest_callm.scoring.stats", None)  # import fails
    code, out, _ = run_main(capsys, base, new)
    assert code == 0
    assert "95% CI: percentile bootstrap over tasks; none for base, new (the report has none" in out
    vet = next(line for line in out.splitlines() if line.startswith("│ vet "))
    assert vet.count("n/a") == 2 and "66.7%" in vet and "50.0%" in vet


def test_a_narrow_terminal_cuts_no_figure_and_no_name(tmp_path):
    base = make_run(tmp_path / "20261130-033825-gpt-4o-ab12", BASE, ttft=420.0, cost=0.002)
    new = make_run(tmp_path / "20261130-043825-claude-x-cd34", NEW, ttft=380.0, cost=0.0015)
    out = compare.render(compare.load_runs([base, new]), width=80)
    assert "…" not in out
    assert max(len(line) for line in out.splitlines() if line[:1] in "┏│┃└├┡") <= 80
    assert "pass@1 (Δ" in out and "pass^3 (Δ" in out  # one table each, one under the other
    tasks = out[out.index("Per-task differences"):out.index("tasks changed")]
    first_column = "".join(line.split("│")[1].strip() for line in tasks.splitlines() if line.startswith("│"))
    assert first_column == "legal/C1-E1legal/C1-M2vet/C1-E1vet/C2-M1"  # folded over lines, never cut


def test_tasks_in_one_run_only_and_names_that_look_like_markup(tmp_path, capsys):
    base = make_run(tmp_path / "run[base]", BASE)
    fewer = dict(NEW)
    del fewer[("vet", "C2-M1")]
    fewer[("vet", "C3-H9")] = 3
    new = make_run(tmp_path / "run[bold]new", fewer)
    code, out, _ = run_main(capsys, base, new)
    assert code == 0
    assert "tasks only in run[base] (1): vet/C2-M1" in out and "tasks only in run[bold]new (1): vet/C3-H9" in out
    assert "│ run[bold]new " in out and "c/n run[base]" in out
    assert "3 of 4 tasks changed" in out


def test_the_callm_command_runs_the_comparison(tmp_path, capsys):
    import subprocess
    import sys

    from conftest import EXAMPLE_TASKS, REPO
    from pytest_callm.cli import main as callm

    out = tmp_path / "a"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                    "--callm-model=oracle", "-k", "C2-E1", f"--callm-out={out}"], cwd=REPO, check=True,
                   capture_output=True)
    assert callm(["compare", str(out), str(out)]) == 0
    assert "CALLM comparison of 2 runs" in capsys.readouterr().out
    assert callm(["compare", str(tmp_path / "nowhere"), str(out)]) == 2
