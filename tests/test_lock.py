"""Expected states come only from replaying answer keys: stored states must equal their replay."""

from __future__ import annotations

import json
import shutil

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO

from pytest_callm.cli import default_industries, main
from pytest_callm.authoring.lock import find_task_files, lock


def test_every_stored_expected_state_equals_its_replay():
    paths = [EXAMPLE_TASKS, REPO / "tasks"]
    results = lock(paths, default_industries(REPO), write=False)
    assert len(results) == len(find_task_files(paths)) >= 8
    stale = [str(r.path) for r in results if r.changed]
    assert stale == [], f"refresh with `callm lock`: {stale}"


def test_lock_fills_a_missing_state_and_check_then_passes(tmp_path, monkeypatch, capsys):
    shutil.copytree(EXAMPLE_PACK, tmp_path / "industries" / "vet_clinic")
    task_dir = tmp_path / "tasks" / "vet_clinic" / "C2-M1"
    shutil.copytree(EXAMPLE_TASKS / "C2-M1", task_dir)
    path = task_dir / "task.json"
    original = json.loads(path.read_text())
    data = dict(original)
    del data["exp_db_state"]
    path.write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)

    assert main(["lock", "--check", "tasks"]) == 1
    assert "stale: tasks/vet_clinic/C2-M1/task.json" in capsys.readouterr().out
    assert main(["lock", "tasks"]) == 0
    assert json.loads(path.read_text())["exp_db_state"] == original["exp_db_state"]
    assert main(["lock", "--check", "tasks"]) == 0


def test_a_changed_answer_key_makes_the_stored_state_stale(tmp_path, monkeypatch, capsys):
    shutil.copytree(EXAMPLE_PACK, tmp_path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / "C2-E2", tmp_path / "tasks" / "vet_clinic" / "C2-E2")
    path = tmp_path / "tasks" / "vet_clinic" / "C2-E2" / "task.json"
    data = json.loads(path.read_text())
    data["exp_tool_calls"][3]["parameters"]["slot_id"] = "S-106"
    path.write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    assert main(["lock", "--check", "tasks"]) == 1
    main(["lock", "tasks"])
    booked = [r["slot_id"] for r in json.loads(path.read_text())["exp_db_state"]["appointments"] if r["pet_id"] == "p1"]
    assert "S-106" in booked and "S-101" not in booked


def test_lock_reports_a_bad_task_file_cleanly(tmp_path, monkeypatch, capsys):
    shutil.copytree(EXAMPLE_PACK, tmp_path / "industries" / "vet_clinic")
    bad = tmp_path / "tasks" / "vet_clinic" / "X" / "task.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{")
    monkeypatch.chdir(tmp_path)
    assert main(["lock", "tasks"]) == 2
    assert "tasks/vet_clinic/X/task.json: invalid JSON" in capsys.readouterr().err
