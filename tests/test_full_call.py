"""A whole call offline: the local OpenAI-compatible server plays both the agent (following the
task's answer key) and the caller (following the script); the caller's lines pass through the phone
line; the call ends by the caller's hang_up; the gates pass."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, shared_tool_server
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.phone.line import make_line
from pytest_callm.model.config import ModelConfig
from pytest_callm.task.pack import PackRegistry
from pytest_callm.runs.runtime import Runtime
from pytest_callm.task.task_file import load_task

TASK = "C2-E2"
TASK_FILE = EXAMPLE_TASKS / TASK / "task.json"
LINES = ["Hi, I'd like to book a check-up for my dog Biscuit.",
         "It's Dana Whitfield, and my number is five oh three, five five five, oh one four two.",
         "Yes, the earliest one works.",
         "Perfect, thank you."]


def attempt_with_recognizer_errors() -> int:
    """The first attempt whose line draws a real error on a turn the agent answers (not the last one,
    which ends with the hang-up); the draws are seeded, so this is the same attempt every time."""
    for attempt in range(1, 200):
        line = make_line("default", TASK, attempt, "Dana Whitfield")
        if any(e for turn, said in enumerate(LINES[:-1])
               for e in line.transmit(said, turn).errors if not e.get("style")):
            return attempt
    raise AssertionError("no attempt in 200 drew an error")


@pytest.fixture
def both_sides(openai_server):
    return openai_server.reset(agent=AnswerKeyAgent(TASK_FILE, EXAMPLE_PACK.parent, end_call=False),
                               caller=ScriptCaller(LINES), models=("agent-model", "caller-model"))


def test_a_full_call_through_caller_line_client_engine_and_tool_server(both_sides):
    packs = PackRegistry([EXAMPLE_PACK.parent])
    _, task, pack = load_task(TASK_FILE, packs)
    agent = ModelConfig(name="agent", model="agent-model", base_url=both_sides.base_url, api_key_env=None)
    caller = ModelConfig(name="caller", model="caller-model", base_url=both_sides.base_url, api_key_env=None)
    attempt = attempt_with_recognizer_errors()
    runtime = Runtime("agent", packs.loaded(), shared_tool_server().url, model_config=agent, caller_config=caller,
                      line="default")
    try:
        trajectory, verdict = runtime.run_attempt(task, pack, attempt)
    finally:
        runtime.close()

    assert verdict.passed, verdict.explain()
    assert trajectory.end_reason == "caller_hangup"
    caller_turns = [t for t in trajectory.transcript if t.role == "caller"]
    assert [t.said for t in caller_turns] == LINES
    changed = [t for t in caller_turns[:-1] if any(not e.get("style") for e in t.line_errors)]
    assert changed, "the chosen attempt draws a recognizer error"
    # The agent's model received what the line heard, not what the caller said.
    agent_bodies = [b for b in both_sides.requests if b["model"] == "agent-model"]
    heard_by_agent = {m["content"] for b in agent_bodies for m in b["messages"] if m["role"] == "user"}
    for turn in changed:
        assert set(turn.heard) <= heard_by_agent
        assert turn.said not in heard_by_agent or turn.heard == [turn.said]
    # The caller's model saw only the agent's speech, never a tool call or result.
    caller_bodies = [b for b in both_sides.requests if b["model"] == "caller-model"]
    assert all(m["role"] in ("system", "user", "assistant") and "tool_calls" not in m
               for b in caller_bodies for m in b["messages"])


def test_the_same_call_through_the_plugin_reports_recognizer_rates(pytester, both_sides, monkeypatch, example_tools):
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\n" + example_tools)
    (pytester.path / "models").mkdir()
    for name, model in (("agent", "agent-model"), ("caller", "caller-model")):
        (pytester.path / "models" / f"{name}.toml").write_text(
            f'model = "{model}"\nbase_url = "{both_sides.base_url}"\napi_key_env = ""\n')
    result = pytester.runpytest("--callm-model=agent", "--callm-caller-model=caller", "-k", TASK)
    result.assert_outcomes(passed=5)
    out = result.stdout.str()
    assert "recognizer errors per 100 caller turns (20 turns): realized / target" in out
    assert "THE CALLER IS THE MODEL UNDER TEST" not in out


def agent_project(pytester, base_url: str, tools: str, more: str = "") -> None:
    """The example pack and tasks, and a model config `agent` on the scripted server (plus `more`), played
    on the tool server the ini line `tools` names (conftest.example_tools)."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\n" + tools)
    (pytester.path / "models").mkdir()
    (pytester.path / "models" / "agent.toml").write_text(
        f'model = "agent-model"\nbase_url = "{base_url}"\napi_key_env = ""\n{more}')


def test_a_caller_model_that_is_the_model_under_test_is_flagged_loudly(pytester, both_sides, example_tools):
    agent_project(pytester, both_sides.base_url, example_tools)
    result = pytester.runpytest("--callm-model=agent", "--callm-caller-model=agent", "-k", "C2-E1 and attempt-1")
    assert "WARNING: THE CALLER IS THE MODEL UNDER TEST (agent-model)" in result.stdout.str()


def test_a_config_whose_caller_is_self_plays_both_sides_on_one_server_without_a_caller_key(
        pytester, both_sides, monkeypatch, example_tools):
    """A config's `caller = "self"` (the keyless local demo) is the caller when the run names none: the
    same server plays the caller, no caller key is asked for, the run says it is not a CALLM result
    and the manifest names who played the caller."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    agent_project(pytester, both_sides.base_url, example_tools, 'caller = "self"\n')
    result = pytester.runpytest("--callm-model=agent", "--callm-out=run", "-k", f"{TASK} and attempt-1")
    result.assert_outcomes(passed=1)
    assert "WARNING: THE CALLER IS THE MODEL UNDER TEST (agent-model)" in result.stdout.str()
    manifest = json.loads((pytester.path / "run" / "manifest.json").read_text())
    assert manifest["comparable"]["caller_config"]["name"] == "agent"
    hung_up = [b for b in both_sides.requests if any(t["function"]["name"] == "hang_up" for t in b.get("tools", []))]
    assert hung_up and {b["model"] for b in hung_up} == {"agent-model"}
    # Named on the command line, the caller model still wins over the config's suggestion.
    result = pytester.runpytest("--callm-model=agent", "--callm-caller-model=gpt-5", "-k", f"{TASK} and attempt-1")
    assert "OPENAI_API_KEY" in result.stderr.str() + result.stdout.str()


def test_the_caller_models_retries_are_recorded_in_the_trajectory(both_sides):
    from pytest_callm.model.client import RetryPolicy

    both_sides.state.caller_steps.extend([{"status": 429, "message": "slow down"}, {"status": 503}])
    packs = PackRegistry([EXAMPLE_PACK.parent])
    _, task, pack = load_task(TASK_FILE, packs)
    agent = ModelConfig(name="agent", model="agent-model", base_url=both_sides.base_url, api_key_env=None)
    caller = ModelConfig(name="caller", model="caller-model", base_url=both_sides.base_url, api_key_env=None)
    runtime = Runtime("agent", packs.loaded(), shared_tool_server().url, model_config=agent, caller_config=caller, line="clean",
                      retry=RetryPolicy(backoff_s=0.01))
    try:
        trajectory, verdict = runtime.run_attempt(task, pack, 1)
    finally:
        runtime.close()
    assert verdict.passed, verdict.explain()
    first, *rest = [t for t in trajectory.transcript if t.role == "caller"]
    assert len(first.notes) == 2 and "RateLimitError: slow down" in first.notes[0]
    assert "InternalServerError" in first.notes[1]
    assert all(t.notes == [] for t in rest)
