"""Bad input to a run is one clear line, and the rest goes on (issue 28, item 4).

A bad or unfinished task file beside good ones is named and its items left out while the others run;
a symbolic link loop and a deeply nested file are named; a full disk or a read-only run folder ends
the run with one line naming the folder, what is saved and the resume command; a trajectory file
holding `null` is played again on resume, and report.html is written from the same data as report.json.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS

ORACLE = "--callm-model=oracle"


@pytest.fixture
def project(pytester, example_tools):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def _attempts(run) -> list[dict]:
    return json.loads((run / "report.json").read_text())["attempts"]


def test_a_bad_task_file_beside_good_ones_is_named_and_the_others_run(project):
    (project.path / "tasks" / "vet_clinic" / "C2-E2" / "task.json").write_text('{"task_name": "broken')
    run = project.path / "run"
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=1", f"--callm-out={run}")
    out = result.stdout.str()
    result.assert_outcomes(passed=7, errors=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "tasks/vet_clinic/C2-E2/task.json: invalid JSON at line 1" in out
    assert "callm: 1 task file(s) could not be collected and are in no figure: tasks/vet_clinic/C2-E2/task.json" in out
    assert "Interrupted" not in out and "--callm-resume" not in out, out
    assert len(_attempts(run)) == 7 and (run / "report.html").is_file()


NOT_FILES = {  # task -> how its task.json is made something other than a file, and what the run says of it
    "C2-E2": (lambda f: os.symlink("/dev/zero", f), "a device (through a symbolic link), not a file"),
    "C2-E1": (lambda f: os.mkfifo(f), "a named pipe (FIFO), not a file"),
    "C2-M1": (lambda f: f.mkdir(), "a folder, not a file"),
    "C1-M1": (lambda f: os.symlink(f.name, f), "a symbolic link that cannot be resolved"),  # to itself
    "R-M1": (lambda f: os.symlink("gone.json", f), "a symbolic link that cannot be resolved"),  # dangling
}


def test_a_task_file_that_is_not_a_file_is_named_not_passed_over(project):
    """pytest passes over what is neither a file nor a folder, and enters a folder: the task vanished
    from the run, which passed with 7 of 8 tasks and exit code 0. One run holds each kind."""
    for name, (make, _) in NOT_FILES.items():
        task = project.path / "tasks" / "vet_clinic" / name / "task.json"
        task.unlink()
        make(task)
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=1", f"--callm-out={project.path / 'run'}")
    out = result.stdout.str()
    result.assert_outcomes(passed=3, errors=5)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    for name, (_, said) in NOT_FILES.items():
        assert f"tasks/vet_clinic/{name}/task.json: $: {said}" in out, out
    named = ", ".join(f"tasks/vet_clinic/{name}/task.json" for name in sorted(NOT_FILES))
    assert f"callm: 5 task file(s) could not be collected and are in no figure: {named}" in out, out


def test_a_task_file_holding_a_lone_surrogate_is_named_at_collection(project):
    """It loaded, played, then broke the report page (and, with a caller model, every request to it:
    'not scored'). It is the file's fault, so it is named where the file is read."""
    task = project.path / "tasks" / "vet_clinic" / "C2-E2" / "task.json"
    task.write_text(task.read_text().replace('"intent": "', '"intent": "\\ud800', 1))
    result = project.runpytest(ORACLE, "--callm-attempts=1", f"--callm-out={project.path / 'run'}")
    result.assert_outcomes(passed=7, errors=1)
    assert "tasks/vet_clinic/C2-E2/task.json: $.intent: holds a lone surrogate" in result.stdout.str()
    assert (project.path / "run" / "report.html").is_file()


def test_an_unfinished_task_file_beside_good_ones_does_not_stop_the_run(project):
    """A task just made with `callm new-task` (its key empty, its state not locked) is named; the rest run."""
    result = subprocess.run([sys.executable, "-m", "pytest_callm.cli", "new-task", "tasks/vet_clinic/C2-E"],
                            cwd=project.path, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert result.returncode == 0, result.stderr
    run = project.path / "run"
    result = project.runpytest(ORACLE, "--callm-attempts=1", f"--callm-out={run}")
    result.assert_outcomes(passed=8, errors=1)
    out = result.stdout.str()
    assert "could not be collected and are in no figure: tasks/vet_clinic/C2-E3/task.json" in out, out
    assert "--callm-resume" not in out
    assert len(_attempts(run)) == 8


def test_a_symbolic_link_loop_is_named_once_and_not_followed(project):
    os.symlink("..", project.path / "tasks" / "vet_clinic" / "loop")
    result = project.runpytest(ORACLE, "--callm-attempts=1")
    result.assert_outcomes(passed=8)  # each task once, not once per level of the loop
    out = result.stdout.str()
    assert out.count("a symbolic link to") == 1, out
    assert "tasks/vet_clinic/loop: a symbolic link to" in out and "(a loop): not followed" in out


def test_a_task_file_reached_through_a_second_path_is_played_once(project):
    os.symlink(project.path / "tasks" / "vet_clinic" / "C2-E1", project.path / "tasks" / "again")
    result = project.runpytest(ORACLE, "--callm-attempts=1")
    result.assert_outcomes(passed=8, errors=1)
    assert "the same file as" in result.stdout.str()


def test_a_deeply_nested_task_file_is_one_clear_line(project):
    deep = '{"task_name": "C2-E9: deep", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}"
    (project.path / "tasks" / "vet_clinic" / "C2-E9").mkdir()
    (project.path / "tasks" / "vet_clinic" / "C2-E9" / "task.json").write_text(deep)
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=1")
    result.assert_outcomes(passed=8, errors=1)
    out = result.stdout.str()
    assert "tasks/vet_clinic/C2-E9/task.json: nested too deeply to read" in out, out
    assert "RecursionError" not in out and "Traceback" not in out


def test_a_collection_error_outside_the_tasks_stops_the_run_without_a_resume_hint_or_folder(project):
    project.makepyfile(test_broken="import no_such_module_anywhere\n")
    run = project.path / "run"
    result = project.runpytest(ORACLE, "--callm-attempts=1", f"--callm-out={run}")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    out = result.stdout.str()
    assert "--callm-resume" not in out, out
    assert "stopped before any attempt was saved: nothing to resume, no run folder left behind" in out
    assert not run.exists()


def test_a_trajectory_holding_null_is_played_again_on_resume_and_the_page_follows_report_json(project):
    run = project.path / "run"
    project.runpytest(ORACLE, "--callm-attempts=1", f"--callm-out={run}").assert_outcomes(passed=8)
    damaged = next(run.glob("trajectories/vet_clinic/C2-E1/attempt-1.json"))
    damaged.write_text("null")
    (run / "report.html").write_text("stale")
    result = project.runpytest(ORACLE, "--callm-attempts=1", f"--callm-resume={run}")
    result.assert_outcomes(passed=8)
    assert json.loads(damaged.read_text())["trajectory"]["task_id"] == "C2-E1"  # played again and saved
    page = (run / "report.html").read_text()
    assert page != "stale" and all(f"{a['task_id']}" in page for a in _attempts(run))


# --- a full disk and a read-only folder, on a small tmpfs of a private mount namespace -------------

FULL_DISK = """
set -e
mount -t tmpfs -o size=160k tmpfs mnt
{python} -m pytest {args} && echo "rc=0" || echo "rc=$?"
echo ===resume
mount -o remount,size=20m mnt
{python} -m pytest {args_resume} && echo "rc=0" || echo "rc=$?"
"""
READ_ONLY = """
set -e
mount -t tmpfs -o size=1m tmpfs mnt
mkdir mnt/run
mount -o remount,ro mnt
{python} -m pytest {args} && echo "rc=0" || echo "rc=$?"
"""


def _in_private_mounts(project, script: str) -> str:
    """Runs `script` as root of a user and mount namespace of its own (`unshare -rm`): the tmpfs is
    seen by that shell and its children only, and goes with them."""
    if shutil.which("unshare") is None:
        pytest.skip("no unshare here")
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"this machine allows no private mount namespace: {probe.stderr.decode()[:200]}")
    (project.path / "mnt").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(["unshare", "-rm", "sh", "-c", script], cwd=project.path, capture_output=True,
                            text=True, env=env, timeout=600)
    return result.stdout + result.stderr


def test_a_full_disk_ends_the_run_with_one_line_and_the_resume_finishes_it(project):
    args = f"{ORACLE} --callm-out=mnt/run -p no:cacheprovider -q"
    out = _in_private_mounts(project, FULL_DISK.format(python=sys.executable, args=args,
                                                      args_resume=f"{ORACLE} --callm-resume=mnt/run -p no:cacheprovider -q"))
    first, resumed = out.split("===resume")
    assert "rc=2" in first, first
    assert "INTERNALERROR" not in first and "Traceback" not in first, first
    line = next(line for line in first.splitlines() if line.startswith("callm: cannot write to"))
    assert "/mnt/run (No space left on device): " in line and " of 40 attempts saved there, intact" in line
    assert line.endswith("--callm-resume=" + str(project.path / "mnt" / "run")), line
    assert "rc=0" in resumed and "40 passed" in resumed, resumed


def test_a_read_only_run_folder_is_one_line_before_anything_plays(project):
    out = _in_private_mounts(project, READ_ONLY.format(python=sys.executable,
                                                      args=f"{ORACLE} --callm-out=mnt/run -p no:cacheprovider"))
    assert "rc=4" in out, out
    assert "--callm-out: cannot write to " in out and "mnt/run (Read-only file system); nothing was played" in out
    assert "Traceback" not in out and "INTERNALERROR" not in out
