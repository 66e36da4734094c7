"""Final database states saved as differences from the pack's seed: rebuilt exactly, old files still read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from pytest_callm.saved.rundir import RunDir, RunDirError
from pytest_callm.saved.seed_state import seed_state
from pytest_callm.task.pack import load_pack


@pytest.fixture(scope="module")
def pack():
    return load_pack(EXAMPLE_PACK)


def keys(pack) -> dict[str, str | None]:
    return {t: c.key for t, c in pack.compared_tables.items()}


def save_and_load(tmp_path: Path, pack, final: dict) -> tuple[dict, dict]:
    """(the trajectory as written to disk, the attempt as loaded back)."""
    run = RunDir(tmp_path / "run")
    run.save_attempt("vet_clinic", "T-1", 1, {"task": {"industry": "vet_clinic"},
                                              "trajectory": {"industry": "vet_clinic", "final_state": final}},
                     seed=seed_state(pack), keys=keys(pack))
    on_disk = json.loads(run.trajectory_path("vet_clinic", "T-1", 1).read_text())["trajectory"]
    return on_disk, run.load_attempt("vet_clinic", "T-1", 1)


def test_rows_removed_changed_added_and_moved_rebuild_exactly(tmp_path, pack):
    _, seed = seed_state(pack)
    slots = [dict(r) for r in seed["slots"]]
    slots[2]["available"] = 0  # changed in place
    moved = dict(slots[0], available=0)  # changed, and moved to the end (a delete and re-insert)
    final = {"appointments": [seed["appointments"][1],  # the first removed
                              {**seed["appointments"][0], "id": 9},  # a new key: an added row, not a change
                              {"id": 3, "pet_id": "p1", "slot_id": "S-101", "service": "wellness",
                               "starts_at": "2026-05-14T09:00", "status": "booked", "created_at": None}],
             "record_requests": [],
             "slots": [*slots[1:], moved]}
    on_disk, loaded = save_and_load(tmp_path, pack, final)
    assert loaded["trajectory"]["final_state"] == final
    assert json.dumps(loaded["trajectory"]["final_state"], sort_keys=True) == json.dumps(final, sort_keys=True)  # order, types
    tables = on_disk["final_state_diff"]["tables"]
    assert "final_state" not in on_disk
    assert tables["appointments"] == {"removed": [0], "added": final["appointments"][1:]}
    assert tables["record_requests"] == {}
    assert tables["slots"]["changed"] == [[0, {"available": 0}], [2, {"available": 0}]]
    assert tables["slots"]["order"] == [*range(1, len(slots)), 0]
    assert (tmp_path / "run" / "seeds" / "vet_clinic" / f"{on_disk['final_state_diff']['seed']}.json").is_file()


def test_an_untouched_state_costs_a_few_bytes(tmp_path, pack):
    _, seed = seed_state(pack)
    on_disk, loaded = save_and_load(tmp_path, pack, seed)
    assert loaded["trajectory"]["final_state"] == seed
    assert len(json.dumps(on_disk["final_state_diff"])) < 200  # the seed's hash and one empty entry per table


def test_a_played_final_state_loads_back_as_the_call_left_it(pytester, tmp_path, example_tools):
    """A Python task records the final state its call returned; the run directory gives back the same."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    task = json.loads((EXAMPLE_TASKS / "C2-M1" / "task.json").read_text())  # cancels and books: rows change
    task["metadata"]["industry"] = "vet_clinic"
    played = tmp_path / "played"
    (pytester.path / "test_played.py").write_text(f'''
import json, pytest

@pytest.mark.callm_task({{**{task!r}, "task_name": "PY-M1: as C2-M1"}})
def test_it(callm_play, request):
    call = callm_play()
    assert call.passed, call.explain()
    attempt = request.node.callspec.id.rsplit("-", 1)[1]
    with open({str(played)!r} + f"-{{attempt}}.json", "w") as f:
        json.dump(call.final_state, f)
''')
    out = tmp_path / "run"
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n" + example_tools)
    pytester.runpytest("--callm-model=oracle", "--callm-attempts=2", f"--callm-out={out}") \
        .assert_outcomes(passed=2)
    for attempt in (1, 2):
        expected = json.loads(Path(f"{played}-{attempt}.json").read_text())
        saved = json.loads((out / f"trajectories/vet_clinic/PY-M1/attempt-{attempt}.json").read_text())
        assert saved["format"] == "callm-trajectory/3" and "final_state" not in saved["trajectory"]
        assert saved["trajectory"]["final_state_diff"]["tables"]["appointments"]  # the call changed rows
        assert RunDir(out).load_attempt("vet_clinic", "PY-M1", attempt)["trajectory"]["final_state"] == expected


def pytest_run(*args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                           "-k", "C2", *args], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_run_saved_in_the_first_format_still_rescores_to_the_same_report(tmp_path):
    run = tmp_path / "run"
    pytest_run("--callm-model=oracle", f"--callm-out={run}")
    old = tmp_path / "old"
    shutil.copytree(run, old, ignore=shutil.ignore_patterns("seeds", "report.*"))
    files = sorted((old / "trajectories").rglob("attempt-*.json"))
    for path in files:  # as callm-trajectory/1 wrote it: the full final state, no seed beside it
        saved = RunDir(run).read_attempt(run / path.relative_to(old))
        path.write_text(json.dumps({**saved, "format": "callm-trajectory/1"}))
    assert len(files) == 20 and not (old / "seeds").exists()
    assert RunDir(old).load_attempt("vet_clinic", "C2-M1", 2) == {
        **RunDir(run).load_attempt("vet_clinic", "C2-M1", 2), "format": "callm-trajectory/1"}
    pytest_run(f"--callm-rescore={old}", f"--callm-out={tmp_path / 'rescored'}")
    assert (tmp_path / "rescored" / "report.json").read_bytes() == (run / "report.json").read_bytes()


def test_a_missing_seed_file_is_an_error_naming_it(tmp_path, pack):
    run = RunDir(tmp_path / "run")
    run.save_attempt("vet_clinic", "T-1", 1, {"trajectory": {"industry": "vet_clinic", "final_state": {}}},
                     seed=seed_state(pack))
    seed = next((tmp_path / "run" / "seeds").rglob("*.json"))
    seed.unlink()
    with pytest.raises(RunDirError, match=f"{seed} is missing"):
        RunDir(tmp_path / "run").load_attempt("vet_clinic", "T-1", 1)
