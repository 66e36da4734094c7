"""`callm new-task`: a team's new task from a template, explained by `callm lint`, completed by `callm lock`."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from pytest_callm.cli import main
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

FIELDS_THE_AUTHOR_WRITES = ("task_name", "customer_name", "intent", "traits", "exp_handoff_path", "exp_tool_calls",
                            "scripted_responses", "forbidden_tools")


@pytest.fixture
def team(tmp_path, monkeypatch):
    """A team's project: the example pack and its tasks, run from the project's folder."""
    shutil.copytree(EXAMPLE_PACK, tmp_path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, tmp_path / "tasks" / "vet_clinic")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def lint_lines(capsys, *args: str) -> tuple[int, list[str]]:
    code = main(["lint", *args])
    return code, capsys.readouterr().out.splitlines()


def test_a_new_task_is_explained_by_lint_and_completed_by_lock(team, capsys):
    assert main(["new-task", "tasks/vet_clinic/C2-E"]) == 0
    path = "tasks/vet_clinic/C2-E3/task.json"  # C2-E1 and C2-E2 exist
    told = capsys.readouterr().out
    assert told.startswith(f"created {path} (pack vet_clinic, category C2, easy)")
    assert f"callm lock {path}" in told and f"callm lint {path}" in told
    _, task, _ = load_task(team / path, PackRegistry([team / "industries"]))  # a valid task file...
    assert task.category == "Appointments and clinic info" and task.difficulty == "easy"

    code, lines = lint_lines(capsys, path)  # ...that says what is missing
    assert code == 1
    assert lines == [
        f"{path}: $.task_name: not written yet: a short title saying what the caller wants",
        f"{path}: $.customer_name: not written yet: the caller's full name",
        f"{path}: $.intent: not written yet: the caller's script, in the second person. How the call opens "
        "(Open with exactly: \"...\"), what to say when asked each question (When asked for your phone number, say "
        "exactly: \"...\"), which offers to accept or decline, and when to end the call.",
        f"{path}: $.traits[0].value: not written yet: the caller's full name",
        f"{path}: $.traits[1].value: not written yet: the caller's phone number",
        f"{path}: $.exp_tool_calls: the answer key is empty: list the tool calls the agent must make (name, the "
        "parameters that must have a given value, status); a model that did nothing would pass this task",
        f"{path}: $.exp_db_state: not locked: once the answer key is written, run `callm lock {path}` to fill it "
        "by replaying the key",
        "1 task file(s), 7 problem(s)"]

    # The author writes the caller and the answer key (here: those of C2-E2, a task like it).
    model = json.loads((team / "tasks/vet_clinic/C2-E2/task.json").read_text())
    data = json.loads((team / path).read_text())
    data.update({k: model[k] for k in FIELDS_THE_AUTHOR_WRITES if k in model})
    data["task_name"] = "C2-E3: " + model["task_name"].split(": ", 1)[1]
    (team / path).write_text(json.dumps(data, indent=2))
    code, lines = lint_lines(capsys, path)
    assert code == 1 and lines[0].startswith(f"{path}: $.exp_db_state: not locked") and len(lines) == 2

    assert main(["lock", path]) == 0
    capsys.readouterr()
    assert lint_lines(capsys, path) == (0, ["1 task file(s), 0 problem(s)"])
    assert json.loads((team / path).read_text())["exp_db_state"] == model["exp_db_state"]


def test_a_taken_id_is_refused_with_the_next_free_one(team, capsys):
    before = (team / "tasks/vet_clinic/C2-E2/task.json").read_text()
    assert main(["new-task", "tasks/vet_clinic/C2-E2"]) == 2
    assert capsys.readouterr().err.strip() == ("callm new-task: C2-E2 already exists in tasks/vet_clinic; "
                                               "the next free id is C2-E3")
    assert (team / "tasks/vet_clinic/C2-E2/task.json").read_text() == before


@pytest.mark.parametrize("target, message", [
    ("tasks/vet_clinic/checkup", "'checkup' is not a task id: write CATEGORY-<E|M|H>NUMBER, e.g. C4-H5"),
    ("elsewhere/C2-E3", "elsewhere: no enclosing folder is named after a pack (packs found: customer_support, healthcare, legal, vet_clinic)"),
])
def test_a_target_that_names_no_task_or_no_pack_is_refused(team, capsys, target, message):
    assert main(["new-task", target]) == 2
    assert message in capsys.readouterr().err
    assert not (team / target).exists()


def test_a_new_task_of_a_pack_with_a_declared_suite(tmp_path, monkeypatch, capsys):
    shutil.copytree(REPO / "industries" / "legal", tmp_path / "industries" / "legal")
    shutil.copytree(REPO / "tasks" / "legal", tmp_path / "tasks" / "legal")
    monkeypatch.chdir(tmp_path)
    assert main(["new-task", "tasks/legal/C4-H"]) == 0
    told = capsys.readouterr().out
    assert told.startswith("created tasks/legal/C4-H5/task.json (pack legal, category C4, hard)")
    assert "note: pack legal declares 4 hard task(s) per category in its suite (pack.json) and C4 has 4" in told
    data = json.loads((tmp_path / "tasks/legal/C4-H5/task.json").read_text())
    assert data["metadata"] == {"category": "Intake and documents", "category_slug": "C4", "difficulty": "hard"}
    code, lines = lint_lines(capsys, "tasks/legal/C4-H5/task.json")  # one file: no suite composition problems
    assert code == 1 and lines[-1] == "1 task file(s), 7 problem(s)"
    assert all(line.startswith("tasks/legal/C4-H5/task.json: ") for line in lines[:-1])
