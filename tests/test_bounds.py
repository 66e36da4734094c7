"""Bounds on what a model may ask of a call (issue 28, item 3).

Tool calls per reply and per call, characters per call, and the text of one reply: what a model asks
past them is refused as its own failure (the call is scored as it stands, never left unscored), and
the trajectory, report.json, the page and the summary say how much was asked and how much ran.
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.call.episode import CallLimits
from pytest_callm.model.protocol import MAX_REPLY_CHARS
from pytest_callm.rl.environment import CallEnvironment

HOURS = {"name": "check_clinic_hours", "arguments": {"day": "Monday"}}


def _calls(n: int, call=HOURS) -> list[dict]:
    return [{"id": f"call_{i}", "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])}} for i in range(n)]


@pytest.fixture(scope="module")
def env():
    with CallEnvironment([EXAMPLE_TASKS], industries=[EXAMPLE_PACK.parent], line="clean") as environment:
        yield environment


def test_ten_thousand_tool_calls_in_one_reply_run_sixteen_and_the_rest_are_refused(env):
    episode, step = env.reset("vet_clinic/C2-E1")
    step = env.step(episode, {"role": "assistant", "content": None, "tool_calls": _calls(10_000)})
    trajectory = env.trajectory(episode)
    assert [c.status for c in trajectory.tool_calls] == ["ok"] * 16 + ["too_many_tool_calls"]
    assert trajectory.cuts == ["request 1: 10,000 tool calls requested, 16 run; the rest refused as the model's "
                               "failure (at most 16 in a reply)"]
    # The model sees each call it made answered, the refused one saying why, and nothing of the rest.
    new = step.observation.new_messages
    assert [m["role"] for m in new] == ["tool"] * 17 and "too_many_tool_calls" in new[-1]["content"]
    assert not step.done  # a reply past the bound does not end the call
    assert len(json.dumps(trajectory.to_json())) < 100_000


def test_a_call_ends_at_its_bound_of_tool_calls_and_is_scored_as_it_stands(env):
    limits = CallLimits(max_tool_calls_per_call=20)
    with CallEnvironment([EXAMPLE_TASKS], industries=[EXAMPLE_PACK.parent], line="clean", limits=limits,
                         tool_server_url=env.runtime.tool_server_url,
                         tool_server_token=env.runtime.tool_server_token) as bounded:
        episode, step = bounded.reset("vet_clinic/C2-E1")
        for _ in range(3):
            if step.done:
                break
            step = bounded.step(episode, {"role": "assistant", "content": None, "tool_calls": _calls(8)})
        trajectory = step.info["trajectory"]
        assert step.done and trajectory.end_reason == "tool_call_cap"
        assert [c.status for c in trajectory.tool_calls].count("ok") == 20
        assert trajectory.cuts == ["request 3: 8 tool calls requested, 4 run; the rest refused as the model's "
                                   "failure (at most 20 in a call)"]
        assert step.reward is not None  # scored, never left out of the denominator


def test_a_call_ends_once_it_passes_its_size(env):
    limits = CallLimits(max_call_chars=50_000)
    with CallEnvironment([EXAMPLE_TASKS], industries=[EXAMPLE_PACK.parent], line="clean", limits=limits,
                         tool_server_url=env.runtime.tool_server_url,
                         tool_server_token=env.runtime.tool_server_token) as bounded:
        episode, step = bounded.reset("vet_clinic/C2-E1")
        while not step.done:
            step = bounded.step(episode, {"role": "assistant", "content": "la " * 6_000})
        trajectory = step.info["trajectory"]
        assert trajectory.end_reason == "size_cap" and step.reward is not None
        assert "over the bound of 50,000" in trajectory.cuts[-1]
        assert len(json.dumps(trajectory.to_json())) < 3 * 50_000


def test_the_spoken_text_of_one_reply_is_cut_and_the_request_says_so(env):
    episode, _ = env.reset("vet_clinic/C2-E1")
    env.step(episode, {"role": "assistant", "content": "a" * (MAX_REPLY_CHARS + 5_000)})
    request = env.trajectory(episode).requests[-1]
    assert len(request.text) == MAX_REPLY_CHARS
    assert any("cut to 20,000 of its 25,000 characters" in n for n in request.notes)


@pytest.fixture
def spamming_project(pytester, openai_server, example_tools):
    openai_server.reset(caller=ScriptCaller(["What are your hours on Monday?", "Thanks, bye."]),
                        models=("agent-model", "caller-model"))
    openai_server.script({"tool_calls": [HOURS] * 40}, {"text": "We are open from eight to six."})
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / "C2-E1", pytester.path / "tasks" / "vet_clinic" / "C2-E1")
    pytester.makeini("[pytest]\ncallm_model_configs = models\ncallm_line = clean\n" + example_tools)
    (pytester.path / "models").mkdir()
    for name in ("agent", "caller"):
        (pytester.path / "models" / f"{name}.toml").write_text(
            f'model = "{name}-model"\nbase_url = "{openai_server.base_url}"\napi_key_env = ""\n')
    return pytester


def test_the_cut_is_shown_in_the_summary_report_json_and_the_page(spamming_project):
    out = spamming_project.path / "run"
    result = spamming_project.runpytest("--callm-model=agent", "--callm-caller-model=caller",
                                        "--callm-attempts=1", f"--callm-out={out}")
    text = result.stdout.str()
    assert "attempts not scored (in no denominator): 0" in text, text
    assert "attempts in which the model asked past a bound: 1" in text, text
    cut = "request 1: 40 tool calls requested, 16 run; the rest refused as the model's failure (at most 16 in a reply)"
    (attempt,) = json.loads((out / "report.json").read_text())["attempts"]
    assert attempt["cuts"] == [cut] and attempt["passed"] is not None
    pages = (out / "report.html").read_text() + "".join(p.read_text() for p in (out / "report").rglob("*.html"))
    assert cut.replace("'", "&#39;") in pages


class SmallContextCaller(ScriptCaller):
    """A caller whose model holds 8k tokens (as smollm2-local, the no-key caller): past 30,000
    characters of conversation its server refuses, as such servers do."""

    def step(self, body):
        if len(json.dumps(body["messages"])) > 30_000:
            return {"status": 400, "code": "context_length_exceeded",
                    "message": "This model's maximum context length is 8192 tokens."}
        return super().step(body)


def test_a_model_that_talks_past_the_callers_context_is_scored_as_the_call_stands(spamming_project, openai_server):
    """It was 'not scored': the caller's overflow was taken for the harness's fault, so a model that
    talks on and on pushed its own attempts out of every denominator."""
    openai_server.reset(caller=SmallContextCaller(["What are your hours on Monday?"] * 10 + ["Thanks, bye."]),
                        models=("agent-model", "caller-model"))
    openai_server.script(*[{"text": "blah " * 5000}] * 20)
    out = spamming_project.path / "run"
    result = spamming_project.runpytest("--callm-model=agent", "--callm-caller-model=caller",
                                        "--callm-attempts=1", f"--callm-out={out}")
    assert "attempts not scored (in no denominator): 0" in result.stdout.str(), result.stdout.str()[-3000:]
    (attempt,) = json.loads((out / "report.json").read_text())["attempts"]
    trajectory = json.loads((out / "trajectories" / "vet_clinic" / "C2-E1" / "attempt-1.json").read_text())
    assert attempt["passed"] is False and trajectory["trajectory"]["end_reason"] == "caller_context_overflow"
