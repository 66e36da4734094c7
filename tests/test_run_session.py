"""A run's life driven with no pytest config: `RunSession` opens a run folder, plays and records
attempts through its own runtime, writes the summary and the report, says what an interrupted run
saved, and resumes it. The pytest layer only calls these (plugin.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_callm.pytest_plugin.settings import Settings
from pytest_callm.session.run_models import RunUsageError
from pytest_callm.session.run_session import RunSession
from pytest_callm.task.task_file import load_task

pytestmark = pytest.mark.xdist_group("run_session")  # its module fixture plays runs once, on one worker

REPO = Path(__file__).resolve().parent.parent
TASK = "examples/tasks/vet_clinic/C2-E2/task.json"
ITEMS = [f"{TASK}::C2-E2[attempt-{n}]" for n in (1, 2)]


def settings(**given) -> Settings:
    return Settings(**{"model": "oracle", "attempts": 2, "k": 1, "tool_server": None,
                       "industries": [REPO / "examples" / "industries"], **given})


def session(run: Path, **given) -> RunSession:
    return RunSession(settings(**given), root=REPO, args=["tasks", "--callm-model=oracle", f"--callm-out={run}"])


def play(run: RunSession, attempt: int) -> dict:
    """One attempt played (or resumed) and recorded as the plugin records it: the verdict's gates."""
    _, task, pack = load_task(REPO / TASK, run.packs)
    played = run.attempt_runner().play(task, pack, attempt)
    result = {"task_id": task.task_id, "industry": task.industry, "category": task.category_slug,
              "difficulty": task.difficulty, "attempt": attempt, "passed": played.verdict.passed,
              "gates": played.verdict.gates}
    run.record(result)
    return {"result": result, "source": played.source}


@pytest.fixture(scope="module")
def interrupted(tmp_path_factory) -> Path:
    """A run of two attempts, stopped after the first was played and saved."""
    folder = tmp_path_factory.mktemp("runs") / "run"
    run = session(folder, out=folder)
    run.open(ITEMS, {})
    try:
        assert play(run, 1)["source"] == "played"
        run.finish(interrupted=True, stopped=False)
    finally:
        run.close()
    return folder


def test_an_interrupted_run_writes_its_report_and_says_what_is_saved_and_how_to_resume(interrupted):
    report = json.loads((interrupted / "report.json").read_text(encoding="utf-8"))
    assert report["interrupted"] == (f"interrupted: 1 of 2 attempts saved; resume with pytest tasks "
                                     f"--callm-model=oracle --callm-resume={interrupted}")
    assert [a["attempt"] for a in report["attempts"]] == [1] and report["summary"]["overall"]["passes"] == 1
    assert (interrupted / "report.html").is_file() and (interrupted / "manifest.json").is_file()
    assert not (interrupted / ".lock").exists()  # closed: the folder is let go


def test_a_resumed_run_keeps_the_saved_attempt_and_plays_the_rest(interrupted):
    run = session(interrupted, resume=interrupted)
    run.open(ITEMS, {})
    try:
        assert run.resuming and run.saved_line() == f"callm: run resumed in {interrupted}"
        assert [play(run, n)["source"] for n in (1, 2)] == ["resumed", "played"]
        assert run.summary().overall.passes == 2
        run.finish(interrupted=False, stopped=False)
    finally:
        run.close()
    report = json.loads((interrupted / "report.json").read_text(encoding="utf-8"))
    assert "interrupted" not in report and [a["attempt"] for a in report["attempts"]] == [1, 2]


def test_a_run_stopped_before_any_attempt_leaves_no_folder(tmp_path):
    folder = tmp_path / "run"
    run = session(folder, out=folder)
    run.open(ITEMS, {})
    assert folder.is_dir()
    assert run.interrupted_line() == ("stopped before any attempt was saved: nothing to resume, no run folder "
                                      "left behind")
    run.finish(interrupted=True, stopped=False)
    run.close()
    assert not folder.exists()


def test_a_resume_of_a_folder_that_holds_no_run_is_a_usage_error(tmp_path):
    with pytest.raises(RunUsageError, match=r"--callm-resume=.*: no run to resume there \(no manifest.json\)"):
        session(tmp_path, resume=tmp_path)


def test_the_run_session_imports_no_pytest():
    script = ("import sys; import pytest_callm.session.run_session; "
              "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pytest', '_pytest', 'xdist', 'pluggy')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
