"""Tasks written as Python tests: same engine, fixtures and gates as task.json, counted in the summary."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO

ORACLE = "--callm-model=oracle"
EXAMPLE_TEST = REPO / "examples" / "tests" / "test_vet_clinic_python.py"

BOOKING = {
    "task_name": "C2-PY1: Earliest wellness visit, written in Python",
    "customer_name": "Dana Whitfield",
    "intent": "Book the earliest wellness visit for Biscuit.",
    "traits": [{"trait_name": "full_name", "value": "Dana Whitfield"}],
    "exp_handoff_path": ["appointments"],
    "exp_tool_calls": [
        {"name": "transfer_to_appointments"},
        {"name": "verify_owner", "parameters": {"full_name": "Dana Whitfield", "phone": "503-555-0142"}},
        {"name": "find_open_slots", "parameters": {"service": "wellness"}},
        {"name": "book_appointment", "parameters": {"pet_name": "Biscuit", "slot_id": "S-101"}},
    ],
    "metadata": {"industry": "vet_clinic", "category": "Appointments and clinic info", "difficulty": "easy"},
    "forbidden_tools": ["send_records"],
}


@pytest.fixture
def project(pytester):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return pytester


def write_test(project, body: str, name: str = "test_ours.py") -> None:
    (project.path / name).write_text(f"import pytest\n\nBOOKING = {BOOKING!r}\n\n{body}")


def summary_row(result, label: str) -> list[str]:
    line = next(line for line in result.outlines if line[2:].startswith(f"{label} ") and line[0] in "│┃")
    return [c.strip() for c in line.strip("│┃").split("│")]


def test_the_example_file_runs_under_xdist_and_its_task_shaped_test_joins_the_summary(project):
    shutil.copy(EXAMPLE_TEST, project.path / EXAMPLE_TEST.name)
    result = project.runpytest_subprocess(ORACLE, "-n", "2", "--junitxml=out.xml")
    result.assert_outcomes(passed=13)  # 2 tasks x 5 attempts, and 3 async checks
    assert summary_row(result, "vet_clinic")[1:4] == ["2", "10", "10"]
    tasks = {p.get("value") for p in ET.parse(project.path / "out.xml").getroot().iter("property")
             if p.get("name") == "callm_task"}
    assert tasks == {"R-PY1", "R-PY2"}


def test_a_python_task_without_exp_db_state_is_scored_against_its_replayed_key(project):
    write_test(project, '''
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play):
    call = callm_play()
    assert call.passed, call.explain()
    booked = [a for a in call.final_state["appointments"] if a["slot_id"] == "S-101"]
    assert len(booked) == 1 and call.handoffs == ["appointments"]
''')
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=2")
    result.assert_outcomes(passed=2)
    assert summary_row(result, "vet_clinic")[1:4] == ["1", "2", "2"]


def test_a_written_down_state_that_the_call_does_not_reach_fails_the_database_gate(project):
    state = json.loads((EXAMPLE_TASKS / "C2-E2" / "task.json").read_text())["exp_db_state"]
    state["appointments"] = state["appointments"][:-1]  # the booking left out
    write_test(project, f'''
@pytest.mark.callm_task({{**BOOKING, "exp_db_state": {state!r}}})
def test_booking(callm_play):
    assert callm_play().passed
''')
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=1")
    result.assert_outcomes(failed=1)
    assert "scored attempts: 1; gate failures: tools 0, handoff 0, database 1" in result.stdout.str()


def test_a_test_that_fails_its_own_assertion_fails_the_attempt_in_the_summary(project):
    write_test(project, '''
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play):
    call = callm_play()
    assert call.passed
    assert "send_records" in [c.name for c in call.tool_calls], "a stricter team rule"
''')
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=2")
    result.assert_outcomes(failed=2)
    assert summary_row(result, "vet_clinic")[1:5] == ["1", "2", "0", "0.0%"]


def test_parametrize_and_marks_combine_with_a_python_task(project):
    write_test(project, '''
@pytest.mark.parametrize("slot", ["S-101"])
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play, slot):
    assert slot in [c.arguments.get("slot_id") for c in callm_play().tool_calls if c.arguments]
''')
    result = project.runpytest_subprocess(ORACLE, "--callm-attempts=2", "-m", "easy", "-k", "C2-PY1-attempt-2")
    result.assert_outcomes(passed=1)


def test_a_python_task_names_its_schema_problem_by_json_path(project):
    write_test(project, '''
@pytest.mark.callm_task({**BOOKING, "exp_tool_calls": "none"})
def test_booking(callm_play):
    callm_play()
''')
    result = project.runpytest_subprocess(ORACLE)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "$.exp_tool_calls: 'none' is not of type 'array'" in result.stdout.str()


def test_a_python_task_needs_a_model(project):
    write_test(project, '''
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play):
    callm_play()
''')
    result = project.runpytest_subprocess("--callm-attempts=1")
    result.assert_outcomes(errors=1)
    assert "pass --callm-model=NAME" in result.stdout.str()


def test_one_task_id_in_two_places_is_a_collection_error_naming_both(project):
    shutil.copytree(EXAMPLE_TASKS / "C2-E2", project.path / "tasks" / "vet_clinic" / "C2-E2")
    write_test(project, """
@pytest.mark.callm_task({**BOOKING, "task_name": "C2-E2: the same id as the task file"})
def test_booking(callm_play):
    callm_play()
""")
    result = project.runpytest_subprocess(ORACLE)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "task id C2-E2 of industry vet_clinic is already used by" in result.stdout.str()
