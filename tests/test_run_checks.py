"""What a run checks before it starts, and what it warns about: once, from the xdist controller.

A missing key must cost seconds, not the start-up of every worker; a caller that is the model under
test is one warning, not one per worker; the default caller is never a model a user benchmarks.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.model.config import OPENAI_BASE_URL, bundled_names, resolve
from pytest_callm.pytest_plugin.settings import DEFAULT_CALLER_MODEL
from test_model_runs import KEY, agent_server, model_project  # noqa: F401  (fixtures)

SAME_MODEL = "THE CALLER IS THE MODEL UNDER TEST"


def test_a_missing_key_under_xdist_fails_before_any_worker_starts(model_project, agent_server, monkeypatch):
    monkeypatch.delenv(KEY)
    result = model_project.runpytest_subprocess("--callm-model=local", "-n", "4")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    message = f"--callm-model=local reads its API key from ${KEY}, which is not set"
    assert text.count(message) == 1, text
    assert "created:" not in text and "[gw" not in text and "worker" not in text, text  # no worker was started
    assert agent_server.log == []


def test_a_missing_caller_key_under_xdist_fails_before_any_worker_starts(model_project, agent_server):
    (model_project.path / "conftest.py").unlink()  # no plugged-in caller: the simulated caller needs its key
    result = model_project.runpytest_subprocess("--callm-model=local", "--callm-caller-model=local-caller",
                                                "-n", "2")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert text.count("--callm-caller-model=local-caller reads its API key from $CALLM_TEST_CALLER_KEY") == 1
    assert "created:" not in text and "[gw" not in text, text


@pytest.fixture
def same_model_project(pytester, openai_server):
    """The scripted server plays both sides under one model id; the project names it for both."""
    openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / "C2-E2" / "task.json", EXAMPLE_PACK.parent,
                                             end_call=False),
                        caller=ScriptCaller(["I'd like to book a check-up for my dog Biscuit.", "Thank you."]),
                        models=("agent-model",))
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\ncallm_line = clean\n")
    (pytester.path / "models").mkdir()
    (pytester.path / "models" / "agent.toml").write_text(
        f'model = "agent-model"\nbase_url = "{openai_server.base_url}"\napi_key_env = ""\n')
    return pytester


def test_a_caller_that_is_the_model_under_test_is_one_warning_under_xdist(same_model_project):
    result = same_model_project.runpytest_subprocess("--callm-model=agent", "--callm-caller-model=agent",
                                                     "-n", "2", "-k", "C2-E2 and (attempt-1 or attempt-2)")
    text = result.stdout.str() + result.stderr.str()
    result.assert_outcomes(passed=2)
    assert text.count(SAME_MODEL) == 1, text
    assert f"WARNING: {SAME_MODEL} (agent-model)" in result.stdout.str()


def test_the_default_caller_is_no_bundled_model_under_test_and_not_the_headline_model():
    caller = resolve(DEFAULT_CALLER_MODEL)
    assert DEFAULT_CALLER_MODEL not in bundled_names()
    assert caller.base_url == OPENAI_BASE_URL and caller.sampling.reasoning_effort is None  # provider defaults
    under_test = {(resolve(n).model, resolve(n).base_url) for n in bundled_names()}
    assert (caller.model, caller.base_url) not in under_test
