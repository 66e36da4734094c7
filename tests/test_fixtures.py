"""The parts of a call are fixtures a team sees (`pytest --fixtures`) and overrides in its conftest.py."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS

ORACLE = "--callm-model=oracle"

# Wraps our caller: the fixture of the same name in a conftest receives the plugin's as its argument.
CALLER_CONFTEST = '''
import pytest

class CountingCaller:
    def __init__(self, inner, where):
        self.inner, self.where = inner, where

    async def respond(self, agent_said):
        with open(self.where, "a") as f:
            f.write(agent_said[:20].replace("\\n", " ") + "\\n")
        return await self.inner.respond(agent_said)

@pytest.fixture
def callm_caller(callm_caller):
    return CountingCaller(callm_caller, WHERE)
'''

LINE_CONFTEST = '''
import pytest
from pytest_callm.phone.line import Heard

class TaggingLine:
    def transmit(self, said, turn):
        return Heard([f"[line {turn}] {said}"])

@pytest.fixture
def callm_line():
    return TaggingLine()
'''


@pytest.fixture
def project(pytester, example_tools):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / "C2-E2", pytester.path / "tasks" / "vet_clinic" / "C2-E2")
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def saved_attempts(run_dir):
    return [json.loads(p.read_text()) for p in sorted((run_dir / "trajectories").rglob("attempt-*.json"))]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_a_callm_caller_fixture_in_a_conftest_plays_every_call(project, tmp_path, workers):
    where = tmp_path / "caller-turns.txt"
    project.makeconftest(f"WHERE = {str(where)!r}\n" + CALLER_CONFTEST)
    result = project.runpytest_subprocess(ORACLE, f"--callm-out={tmp_path / 'run'}", *workers)
    result.assert_outcomes(passed=5)
    turns = where.read_text().splitlines()
    # The caller answers every agent turn, the greeting first: one greeting per call.
    assert sum(1 for t in turns if t.startswith("Thank you for calli")) == 5, turns


def test_a_callm_line_fixture_in_a_conftest_is_what_the_model_hears(project, tmp_path):
    project.makeconftest(LINE_CONFTEST)
    result = project.runpytest(ORACLE, f"--callm-out={tmp_path / 'run'}")
    result.assert_outcomes(passed=5)
    attempts = saved_attempts(tmp_path / "run")
    assert len(attempts) == 5
    for saved in attempts:
        callers = [t for t in saved["trajectory"]["transcript"] if t["role"] == "caller"]
        assert callers and all(t["heard"][0].startswith(f"[line {i}] ") for i, t in enumerate(callers)), callers


def test_an_override_in_one_folder_leaves_the_others_alone(project, tmp_path):
    shutil.copytree(EXAMPLE_TASKS / "C1-M1", project.path / "tasks" / "vet_clinic" / "C1-M1")
    (project.path / "tasks" / "vet_clinic" / "C2-E2" / "conftest.py").write_text(LINE_CONFTEST)
    result = project.runpytest(ORACLE, f"--callm-out={tmp_path / 'run'}")
    result.assert_outcomes(passed=10)
    tagged = {s["task"]["task_id"]: all(t["heard"][0].startswith("[line ")
                                          for t in s["trajectory"]["transcript"] if t["role"] == "caller")
              for s in saved_attempts(tmp_path / "run")}
    assert tagged == {"C1-M1": False, "C2-E2": True}


def test_pytest_fixtures_lists_and_explains_the_parts_of_a_call(project):
    result = project.runpytest("--fixtures", "tasks")
    text = result.stdout.str()
    for name in ("callm_task", "callm_tool_server [session scope]", "callm_call_db", "callm_model",
                 "callm_caller", "callm_line", "callm_runtime [session scope]"):
        assert f"{name} -- " in text, name
    assert "dropped after it" in text and "Override it to plug in your own" in text


def test_a_resumed_attempt_plays_nothing_and_gets_no_participants(project, tmp_path):
    out = tmp_path / "run"
    project.runpytest(ORACLE, f"--callm-out={out}").assert_outcomes(passed=5)
    project.makeconftest('''
import pytest

@pytest.fixture(autouse=True)
def nothing_played(callm_model, callm_caller, callm_line, callm_call_db):
    assert (callm_model, callm_caller, callm_line, callm_call_db) == (None, None, None, None)
''')
    result = project.runpytest(ORACLE, f"--callm-out={out}")
    result.assert_outcomes(passed=5)
    assert "resumed in" in result.stdout.str()
