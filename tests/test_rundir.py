"""Runs that last: the run directory, rescoring, resuming after a kill, refusal to mix runs."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from pytest_callm.saved.rundir import RunDir

ORACLE = "--callm-model=oracle"
@pytest.fixture
def project(pytester, example_tools):
    """The example pack and its tasks in a project of their own, whose runs play on this process's tool
    server (conftest.example_tools), as a team's runs share one."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def run(project, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """pytest with `args` in the project, in this process: what is tested here is the run folder, not
    the process (the killed run below is a process of its own)."""
    result = project.runpytest(*args)
    proc = subprocess.CompletedProcess(args, int(result.ret), result.stdout.str(), result.stderr.str())
    if check and proc.returncode not in (0, 1):
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


def run_in_repo(*args: str) -> subprocess.CompletedProcess:
    """pytest with `args` as a process of its own in the repository (on this process's tool server where
    the test asks for `runs_share_example_tools`)."""
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    if proc.returncode not in (0, 1):
        raise AssertionError(proc.stdout[-3000:] + proc.stderr[-3000:])
    return proc


def attempts(out: Path) -> list[Path]:
    return sorted((out / "trajectories").rglob("attempt-*.json"))


def test_a_run_saves_manifest_one_trajectory_per_attempt_and_a_report(project, tmp_path):
    out = tmp_path / "run"
    run(project, ORACLE, f"--callm-out={out}", "-k", "C2")
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["comparable"]["model"] == "oracle" and manifest["comparable"]["attempts"] == 5
    assert set(manifest["comparable"]["hashes"]) == {"tasks", "packs", "verifier"}
    assert len(attempts(out)) == 20
    saved = json.loads((out / "trajectories/vet_clinic/C2-E2/task.json".replace("task.json", "attempt-3.json"))
                       .read_text())
    assert saved["complete"] and saved["verdict"]["passed"] and saved["trajectory"]["attempt"] == 3
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["industries"]["vet_clinic"]["pass_k"] == 1.0 and len(report["attempts"]) == 20
    assert not list(out.rglob("*.tmp"))


def test_rescoring_reproduces_the_report_byte_for_byte(project, tmp_path):
    out = tmp_path / "run"
    run(project, ORACLE, f"--callm-out={out}")  # a run under xdist is rescored in the killed run's test
    run(project, f"--callm-rescore={out}", f"--callm-out={tmp_path / 'rescored'}")
    assert (tmp_path / "rescored" / "report.json").read_bytes() == (out / "report.json").read_bytes()


def test_rescoring_catches_a_changed_trajectory(project, tmp_path):
    out = tmp_path / "run"
    run(project, ORACLE, f"--callm-out={out}", "-k", "C2-M1")
    path = out / "trajectories/vet_clinic/C2-M1/attempt-2.json"
    saved = RunDir(out).read_attempt(path)  # its final state in full, written back so (still readable)
    row = next(r for r in saved["trajectory"]["final_state"]["appointments"] if r["id"] == 2)
    row["status"] = "booked"  # as if the cancellation had never been written
    path.write_text(json.dumps(saved))
    proc = run(project, f"--callm-rescore={out}", f"--callm-out={tmp_path / 'rescored'}", "-k", "C2-M1")
    assert "1 failed, 4 passed" in proc.stdout
    assert "appointments: row pet_id='p1' differs: status: expected 'cancelled', got 'booked'" in proc.stdout
    report = json.loads((tmp_path / "rescored" / "report.json").read_text())
    assert report["summary"]["tasks"]["vet_clinic/C2-M1"]["c"] == 4
    assert (tmp_path / "rescored" / "report.json").read_bytes() != (out / "report.json").read_bytes()


def test_rescoring_needs_every_selected_attempt_saved(project, tmp_path):
    out = tmp_path / "run"
    run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1")
    proc = run(project, f"--callm-rescore={out}", f"--callm-out={tmp_path / 'r'}", "-k", "C2-E1 or C2-E2")
    assert "5 failed, 5 passed" in proc.stdout
    assert "holds no complete trajectory of vet_clinic/C2-E2 attempt 1" in proc.stdout


def test_a_killed_run_resumes_to_the_report_of_an_uninterrupted_run(tmp_path, runs_share_example_tools):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS), ORACLE,
           "--callm-attempts=30", f"--callm-out={out}", "-n", "2"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while len(attempts(out)) < 30 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller and both workers, mid-way
    proc.wait()
    before = {p: p.stat().st_mtime_ns for p in attempts(out)}
    assert 30 <= len(before) < 240, "killed mid-way"
    assert not (out / "report.json").exists()

    resumed = run_in_repo(str(EXAMPLE_TASKS), ORACLE, "--callm-attempts=30", f"--callm-out={out}", "-n", "2")
    assert "240 passed" in resumed.stdout and "resumed in" in resumed.stdout
    assert len(attempts(out)) == 240
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())  # finished attempts were not played again

    run_in_repo(str(EXAMPLE_TASKS), "--callm-attempts=30", f"--callm-rescore={out}",
                f"--callm-out={tmp_path / 'again'}")
    assert (tmp_path / "again" / "report.json").read_bytes() == (out / "report.json").read_bytes()


def test_resuming_into_a_run_made_with_other_settings_is_refused_and_leaves_its_lock_alone(project, tmp_path):
    out = tmp_path / "run"
    run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1")
    assert not (out / ".lock").exists()  # a run that ended cleanly leaves no lock
    (out / ".lock").write_text("4242\n")  # as a killed run leaves it
    os.utime(out / ".lock", (1_000_000_000, 1_000_000_000))
    proc = run(project, ORACLE, f"--callm-resume={out}", "-k", "C2-E1", "--callm-attempts=3", check=False)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "holds a run made with other settings or inputs (attempts)" in proc.stderr
    assert (out / ".lock").read_text() == "4242\n" and (out / ".lock").stat().st_mtime == 1_000_000_000


def test_resuming_after_a_task_changed_is_refused(project, tmp_path):
    out = tmp_path / "run"
    project.runpytest(ORACLE, f"--callm-out={out}", "-k", "C2-E1").assert_outcomes(passed=5)
    task = project.path / "tasks/vet_clinic/C2-E1/task.json"
    data = json.loads(task.read_text())
    data["intent"] += " Say goodbye."
    task.write_text(json.dumps(data))
    result = project.runpytest(ORACLE, f"--callm-out={out}", "-k", "C2-E1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "hashes.tasks" in result.stderr.str()


def test_resume_needs_a_run_to_resume(project, tmp_path):
    proc = run(project, ORACLE, f"--callm-resume={tmp_path / 'nothing'}", check=False)
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR
    assert "no run to resume there" in proc.stderr
    assert not (tmp_path / "nothing").exists()  # refused: neither the folder nor a lock in it was made


# --- bad run directories are usage errors naming the file -------------------------------------------

def usage_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == pytest.ExitCode.USAGE_ERROR, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "INTERNALERROR" not in proc.stdout + proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


@pytest.mark.parametrize("content, option", [
    ('{"format": "callm-run/1", "comp', "out"), ("[1, 2]", "out"), ('{"comparable": 3}', "out"), ("\xff", "out"),
    ('{"format": "callm-run/1", "comp', "resume"), ("[1, 2]", "rescore")],
    ids=["truncated", "a-list", "comparable-not-an-object", "not-utf8", "resume-truncated", "rescore-a-list"])
def test_a_broken_manifest_is_a_usage_error_naming_it(project, tmp_path, content, option):
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_bytes(content.encode("latin-1"))
    proc = run(project, ORACLE, f"--callm-{option}={out}", "-k", "C2-E1", check=False)
    usage_error(proc, f"--callm-{option}: {out / 'manifest.json'}: not a")


def test_callm_out_pointing_at_a_file_is_a_usage_error(project, tmp_path):
    target = tmp_path / "results.txt"
    target.write_text("not a folder")
    proc = run(project, ORACLE, f"--callm-out={target}", "-k", "C2-E1", check=False)
    usage_error(proc, f"--callm-out={target}: a file, not a run directory")


def test_callm_industries_naming_a_missing_folder_is_a_usage_error(project, tmp_path):
    proc = run(project, ORACLE, f"--callm-industries={tmp_path / 'nope'}", check=False)
    usage_error(proc, f"--callm-industries={tmp_path / 'nope'}: no such folder")


HOLD_LOCK = """
import sys, time
from pytest_callm.saved.rundir import RunDir
RunDir(sys.argv[1]).lock()
print("locked", flush=True)
time.sleep(120)
"""


def test_a_second_run_into_a_folder_in_use_is_refused_and_a_dead_runs_lock_is_taken_over(project, tmp_path):
    out = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        proc = run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1", check=False)
        usage_error(proc, f"{out} is in use by another run (pid {holder.pid})")
        assert not (out / "manifest.json").exists()
    finally:
        holder.kill()  # as a killed run would: the lock file stays behind, naming a dead pid
        holder.wait()
    assert (out / ".lock").read_text().strip() == str(holder.pid)
    proc = run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1", check=False)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def folder_contents(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(folder.rglob("*")) if p.is_file()}


def started_run(project, out: Path) -> None:
    """A run folder as a run leaves it just after it opened: its manifest and nothing played yet."""
    run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1")
    shutil.rmtree(out / "trajectories")
    for name in ("report.json", "report.html"):
        (out / name).unlink(missing_ok=True)


def test_a_second_run_refused_while_the_first_plays_changes_nothing_in_its_folder(project, tmp_path):
    out = tmp_path / "run"
    started_run(project, out)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        before = folder_contents(out)
        proc = run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1", check=False)
        usage_error(proc, f"{out} is in use by another run (pid {holder.pid})")
        assert folder_contents(out) == before  # the first run's manifest above all
    finally:
        holder.kill()
        holder.wait()


def test_a_run_refused_for_other_settings_leaves_a_folder_that_holds_only_a_manifest_alone(project, tmp_path):
    out = tmp_path / "run"
    started_run(project, out)
    before = folder_contents(out)
    proc = run(project, ORACLE, f"--callm-out={out}", "-k", "C2-E1", "--callm-attempts=2", check=False)
    usage_error(proc, "holds a run made with other settings or inputs (attempts)")
    assert folder_contents(out) == before


def served_comparable(port: int, **changes) -> dict:
    config = {"name": "served", "model": "m", "base_url": f"http://127.0.0.1:{port}/v1", "source": "/a/served.toml",
              "calls_in_flight": 4, "serve": {"command": ["vllm", "serve", "{model}"], "ready_timeout_s": 900.0},
              "sampling": {"temperature": 0.0}}
    config.update(changes)
    return {"model": "served", "model_config": config, "caller_config": dict(config), "attempts": 5,
            "line": {"spec": "/a/profile.json", "profile_sha256": "ab", "seed": "s"}}


def test_ports_paths_and_calls_in_flight_never_block_a_resume_merge_or_comparison():
    from pytest_callm.saved.rundir import result_differences

    one = served_comparable(40001)
    other = served_comparable(40002, source="/b/served.toml", calls_in_flight=1,
                              serve={"command": ["vllm", "serve", "{model}"], "ready_timeout_s": 60.0})
    other["line"] = {"spec": "/elsewhere/profile.json", "profile_sha256": "ab", "seed": "s"}
    assert result_differences(one, other) == []
    # What changes a result is still named.
    assert result_differences(one, served_comparable(40002, sampling={"temperature": 0.7})) == [
        "caller_config.sampling.temperature", "model_config.sampling.temperature"]
    assert result_differences(one, served_comparable(40001, base_url="https://api.example.com:8443/v1")) == [
        "caller_config.base_url", "model_config.base_url"]
    changed_line = served_comparable(40001)
    changed_line["line"] = {"spec": "/a/profile.json", "profile_sha256": "cd", "seed": "s"}
    assert result_differences(one, changed_line) == ["line.profile_sha256"]
