"""Call databases come and go with their attempts: removed once scored, kept only when asked,
and the leftovers of a killed tool server swept at the next start."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from pytest_callm.runs.runtime import Runtime
from pytest_callm.toolserver.server import DATA_DIR_PREFIX, OWNER_FILE, ToolServer, sweep_leftovers


def scratch_of(pid: int) -> Path:
    """The scratch folder a tool server process owns."""
    for folder in Path(tempfile.gettempdir()).glob(DATA_DIR_PREFIX + "*"):
        try:
            if int((folder / OWNER_FILE).read_text()) == pid:
                return folder
        except (OSError, ValueError):
            continue
    raise AssertionError(f"no scratch folder of pid {pid}")


def test_a_call_database_is_removed_once_the_attempt_is_played(vet_pack, load_task):
    runtime = Runtime("oracle", {vet_pack.name: vet_pack})
    try:
        calls = scratch_of(runtime._server._proc.pid) / vet_pack.name
        for attempt in range(1, 6):
            trajectory, verdict = runtime.run_attempt(load_task("C2-E2"), vet_pack, attempt)
            assert verdict.passed
            assert [p.name for p in calls.iterdir() if not p.name.startswith(".")] == []  # flat, attempt after attempt
    finally:
        runtime.close()


def test_keep_calls_keeps_every_call_database_in_the_run_directory(pytester, tmp_path):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    out = tmp_path / "run"
    result = pytester.runpytest("--callm-model=oracle", "-k", "C2-E2", "--callm-keep-calls", f"--callm-out={out}")
    result.assert_outcomes(passed=5)
    assert len(list((out / "calls" / "vet_clinic").glob("C2-E2-a*.sqlite"))) == 5


def test_the_scratch_folder_of_a_killed_server_is_swept_at_the_next_start(vet_pack):
    first = ToolServer({vet_pack.name: vet_pack}).start()
    pid = first._proc.pid
    leftover = scratch_of(pid)
    os.kill(pid, signal.SIGKILL)
    first._proc.wait()
    first._proc = None
    assert leftover.exists()
    with ToolServer({vet_pack.name: vet_pack}) as second:
        assert not leftover.exists()
        mine = scratch_of(second._proc.pid)
    assert not mine.exists()  # a clean stop removes its own


def test_sweeping_spares_folders_whose_owner_lives(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for name, pid in (("dead", dead.pid), ("alive", os.getpid())):
        folder = tmp_path / f"{DATA_DIR_PREFIX}{name}"
        folder.mkdir()
        (folder / OWNER_FILE).write_text(str(pid))
    (tmp_path / f"{DATA_DIR_PREFIX}unowned").mkdir()
    assert sweep_leftovers(tmp_path) == [tmp_path / f"{DATA_DIR_PREFIX}dead"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{DATA_DIR_PREFIX}alive", f"{DATA_DIR_PREFIX}unowned"]
