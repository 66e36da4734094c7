"""Tasks written as Python tests: same engine, fixtures and gates as task.json, counted in the summary."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO
from openai_server import AnswerKeyAgent, openai_server, openai_server_session  # noqa: F401  (fixtures)

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
def project(pytester, example_tools):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n" + example_tools)
    return pytester


def write_test(project, body: str, name: str = "test_ours.py") -> None:
    (project.path / name).write_text(f"import pytest\n\nBOOKING = {BOOKING!r}\n\n{body}")


def summary_row(result, label: str) -> list[str]:
    line = next(line for line in result.outlines if line[2:].startswith(f"{label} ") and line[0] in "│┃")
    return [c.strip() for c in line.strip("│┃").split("│")]


def test_the_example_file_runs_under_xdist_and_its_task_shaped_test_joins_the_summary(project):
    shutil.copy(EXAMPLE_TEST, project.path / EXAMPLE_TEST.name)
    result = project.runpytest_subprocess(ORACLE, "-n", "2", "--junitxml=out.xml", "--callm-out=run")
    result.assert_outcomes(passed=13)  # 2 tasks x 5 attempts, and 3 async checks
    assert summary_row(result, "vet_clinic")[1:4] == ["2", "10", "10"]
    tasks = {p.get("value") for p in ET.parse(project.path / "out.xml").getroot().iter("property")
             if p.get("name") == "callm_task"}
    assert tasks == {"R-PY1", "R-PY2"}
    # The controller collects nothing under xdist: its manifest still hashes both tasks' data and their pack.
    manifest = json.loads((project.path / "run" / "manifest.json").read_text())
    assert (manifest["task_files"], manifest["python_tasks"]) == (0, 2)
    assert list(manifest["comparable"]["hashes"]["packs"]) == ["vet_clinic"]


TEST_BOOKING = '''
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play):
    call = callm_play()
    assert call.passed, call.explain()
    booked = [a for a in call.final_state["appointments"] if a["slot_id"] == "S-101"]
    assert len(booked) == 1 and call.handoffs == ["appointments"]
'''


FIXED_CALLER = """
from pytest_callm.call.caller import CallerTurn


class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn("I'd like the earliest wellness visit for Biscuit, please.")


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FixedLineCaller()
"""


def test_a_python_only_run_is_saved_resumed_only_as_it_was_and_rescored(project, openai_server):
    # A resume that finds no run is a mistyped path, whatever is selected.
    write_test(project, TEST_BOOKING)
    result = project.runpytest(ORACLE, "--callm-resume=run")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "/run: no run to resume there (no manifest.json)" in result.stderr.str()

    # Played by a model over real HTTP (the server plays C2-E2's key, which is BOOKING's) and scored
    # against BOOKING's answer key replayed, as BOOKING writes down no exp_db_state.
    openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent))
    project.makeconftest(FIXED_CALLER)
    model = ["--callm-model=scripted", "--callm-api-key-env=none", f"--callm-base-url={openai_server.base_url}"]
    result = project.runpytest(*model, "--callm-attempts=2", "--callm-out=run")
    result.assert_outcomes(passed=2)
    run = project.path / "run"
    manifest = json.loads((run / "manifest.json").read_text())
    assert (manifest["task_files"], manifest["python_tasks"]) == (0, 1)
    assert list(manifest["comparable"]["hashes"]["packs"]) == ["vet_clinic"]

    # Resumed by another model: refused before anything is played.
    result = project.runpytest(ORACLE, "--callm-attempts=2", "--callm-resume=run")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "holds a run made with other settings or inputs (caller_config, model, model_config)" \
        in result.stderr.str()

    # Resumed after the task's answer key changed: refused, naming the Python tasks' hash.
    write_test(project, TEST_BOOKING.replace("@pytest.mark.callm_task(BOOKING)", '''@pytest.mark.callm_task(
    {**BOOKING, "exp_tool_calls": BOOKING["exp_tool_calls"][:-1]})'''))
    result = project.runpytest(*model, "--callm-attempts=2", "--callm-resume=run")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "(hashes.python_tasks)" in result.stderr.str()

    # Rescored with the key it was played against: nothing played, the key replayed by the oracle.
    write_test(project, TEST_BOOKING)
    requests = len(openai_server.requests)
    result = project.runpytest("--callm-attempts=2", "--callm-rescore=run")
    result.assert_outcomes(passed=2)
    assert len(openai_server.requests) == requests
    rescored = json.loads((run / "rescored" / "report.json").read_text())
    assert [a["passed"] for a in rescored["attempts"]] == [True, True]
    assert json.loads((run / "rescored" / "manifest.json").read_text())["rescored_from"] == str(run)


def test_a_written_down_state_that_the_call_does_not_reach_fails_the_database_gate(project):
    state = json.loads((EXAMPLE_TASKS / "C2-E2" / "task.json").read_text())["exp_db_state"]
    state["appointments"] = state["appointments"][:-1]  # the booking left out
    write_test(project, f'''
@pytest.mark.callm_task({{**BOOKING, "exp_db_state": {state!r}}})
def test_booking(callm_play):
    assert callm_play().passed
''')
    result = project.runpytest(ORACLE, "--callm-attempts=1")
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
    result = project.runpytest(ORACLE, "--callm-attempts=2")
    result.assert_outcomes(failed=2)
    assert summary_row(result, "vet_clinic")[1:5] == ["1", "2", "0", "0.0%"]


def test_one_attempt_played_in_several_parametrized_variants_is_refused_naming_them(project):
    write_test(project, '''
@pytest.mark.parametrize("slot", ["S-101", "S-102"])
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play, slot):
    callm_play()
''')
    result = project.runpytest(ORACLE, "--callm-attempts=1")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert ("test_booking plays task C2-PY1 attempt 1 in 2 variants (test_booking[C2-PY1-attempt-1-S-101], "
            "test_booking[C2-PY1-attempt-1-S-102])") in result.stdout.str()
    out = result.stdout.str()  # no traceback, and no frame of pytest's own code (a warning may name its files)
    assert "Traceback" not in out and not re.search(r"_pytest\S*\.py:\d+: in ", out)


def test_parametrize_and_marks_combine_with_a_python_task(project):
    write_test(project, '''
@pytest.mark.parametrize("slot", ["S-101"])
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play, slot):
    assert slot in [c.arguments.get("slot_id") for c in callm_play().tool_calls if c.arguments]
''')
    result = project.runpytest(ORACLE, "--callm-attempts=2", "-m", "easy", "-k", "C2-PY1-attempt-2")
    result.assert_outcomes(passed=1)


def test_a_python_task_names_its_schema_problem_by_json_path(project):
    write_test(project, '''
@pytest.mark.callm_task({**BOOKING, "exp_tool_calls": "none"})
def test_booking(callm_play):
    callm_play()
''')
    result = project.runpytest(ORACLE)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "$.exp_tool_calls: 'none' is not of type 'array'" in result.stdout.str()


def test_a_python_task_needs_a_model(project):
    write_test(project, '''
@pytest.mark.callm_task(BOOKING)
def test_booking(callm_play):
    callm_play()
''')
    result = project.runpytest("--callm-attempts=3")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # one usage error, not one error per attempt
    assert result.stderr.str().count("pass --callm-model=NAME") == 1
    assert "3 task item(s) selected but no model under test" in result.stderr.str()


def test_one_task_id_in_two_places_is_a_collection_error_naming_both(project):
    shutil.copytree(EXAMPLE_TASKS / "C2-E2", project.path / "tasks" / "vet_clinic" / "C2-E2")
    write_test(project, """
@pytest.mark.callm_task({**BOOKING, "task_name": "C2-E2: the same id as the task file"})
def test_booking(callm_play):
    callm_play()
""")
    result = project.runpytest(ORACLE)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "task id C2-E2 of industry vet_clinic is already used by" in result.stdout.str()
