"""What a model's own words make its servers do is scored as the model's, never rerun as ours (issue 39).

Whole calls through the real runtime, client, engine and tool server, against the scripted
OpenAI-compatible server playing both the model and the caller's model.
"""

from __future__ import annotations

import json

import pytest

from openai_server import ScriptCaller, openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model.client import RetryPolicy
from pytest_callm.model.config import ModelConfig
from pytest_callm.runs.runtime import Runtime
from test_client import ask

FAST = RetryPolicy(tries=2, backoff_s=0.01, timeout_s=10)
INVALID_PROMPT = {"status": 400, "body": {"error": {
    "message": "Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again "
               "with a different prompt.", "type": "invalid_request_error", "param": None, "code": "invalid_prompt"}}}
TOOL_USE_FAILED = {"status": 400, "body": {"error": {
    "message": "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more details.",
    "type": "invalid_request_error", "code": "tool_use_failed", "failed_generation": '{"name": "check_clinic_hours'}}}
LINES = ["Hi, what are your hours on Monday?", "Thanks, bye."]


def play(server, vet_pack, tool_server, load_task, task_id="C2-E1"):
    config = ModelConfig(name="local", model="scripted", base_url=server.base_url, api_key_env=None)
    runtime = Runtime("local", {vet_pack.name: vet_pack}, tool_server.url, model_config=config, caller_config=config,
                      line="clean", retry=FAST)
    try:
        return runtime.run_attempt(load_task(task_id), vet_pack, 1)
    finally:
        runtime.close()


def test_the_callers_provider_refusing_what_the_model_said_is_scored_as_the_model_s(openai_server, vet_pack,
                                                                                   tool_server, load_task):
    """It was dropped: the caller's 400 `invalid_prompt` was a request error of ours, and the rerun (a
    free second try) passed."""
    openai_server.reset(caller=ScriptCaller(LINES))
    openai_server.state.caller_steps.extend([{"text": LINES[0]}, INVALID_PROMPT])
    openai_server.script({"text": "Something the caller's provider will not pass on."})
    trajectory, verdict = play(openai_server, vet_pack, tool_server, load_task)
    assert trajectory.reruns == 0 and trajectory.end_reason == "caller_content_refused"
    assert verdict.passed is False
    assert "the caller's model could not answer what the agent said" in trajectory.cuts[0]
    assert "flagged as potentially violating" in trajectory.cuts[0]


def test_a_refusal_of_the_callers_first_words_is_ours_and_rerun(openai_server, vet_pack, tool_server, load_task):
    """Before the model has said a word, only the task's brief can have been refused: not the model's."""
    openai_server.reset(caller=ScriptCaller(LINES))
    openai_server.state.caller_steps.append(INVALID_PROMPT)
    trajectory, _ = play(openai_server, vet_pack, tool_server, load_task)
    assert trajectory.reruns == 1 and "before the model under test spoke" in trajectory.rerun_because[0]


def test_the_models_own_provider_refusing_the_call_ends_it_as_the_model_s_failure(openai_server, vet_pack,
                                                                                   tool_server, load_task):
    openai_server.reset(caller=ScriptCaller(LINES))
    openai_server.script(INVALID_PROMPT)
    trajectory, verdict = play(openai_server, vet_pack, tool_server, load_task)
    assert trajectory.reruns == 0 and trajectory.end_reason == "content_refused"
    assert verdict.passed is False and "refused what was said in the call" in verdict.explain()


def test_a_rejected_tool_call_is_resent_three_times_for_every_model_then_scored(openai_server, vet_pack,
                                                                                 tool_server, load_task):
    """It was dropped unless the model's config opted into resends; the paper resends up to three times
    for every model, and then the failure is the model's."""
    openai_server.reset(caller=ScriptCaller(LINES))
    openai_server.script(*[TOOL_USE_FAILED] * 4)
    trajectory, verdict = play(openai_server, vet_pack, tool_server, load_task)
    assert trajectory.reruns == 0 and verdict.passed is False
    first = trajectory.requests[0]
    assert first.text == "" and first.tool_calls == []
    assert sum("resent after a rejected tool call" in n for n in first.notes) == 3
    assert "tool call rejected 4 times; no reply" in first.notes[-1]


def test_a_malformed_call_goes_back_in_a_form_the_server_reads_and_the_model_sees_it_failed(
        openai_server, vet_pack, tool_server, load_task):
    """vLLM parses every tool call in the history: one sent back verbatim made it refuse every later
    request with 400, and the call was dropped or rerun."""
    openai_server.reset(caller=ScriptCaller(LINES), strict_history=True)
    openai_server.script({"tool_calls": [{"id": "c1", "name": "check_clinic_hours", "arguments": '{"day": "Mon'}]},
                         {"tool_calls": [{"id": "c2", "name": "check_clinic_hours", "arguments": {"day": "Monday"}}]},
                         {"text": "We open at eight on Monday."})
    trajectory, _ = play(openai_server, vet_pack, tool_server, load_task)
    assert trajectory.reruns == 0 and [c.status for c in trajectory.tool_calls[:2]] == ["invalid_arguments", "ok"]
    assert trajectory.tool_calls[0].raw_arguments == '{"day": "Mon'  # the trajectory keeps what was written
    second = next(r for r in openai_server.requests if any(m.get("role") == "tool" for m in r["messages"]))
    sent = next(m for m in second["messages"] if m.get("tool_calls"))["tool_calls"][0]["function"]["arguments"]
    result = json.loads(next(m for m in second["messages"] if m.get("role") == "tool")["content"])
    assert sent == "{}" and result["error_code"] == "invalid_arguments"
    assert result["data"]["as_written"] == '{"day": "Mon'


@pytest.mark.parametrize("where", ["content", "index", "usage"])
def test_an_integer_of_more_than_4300_digits_in_a_chunk_is_the_models_output_not_our_crash(openai_server, where):
    big = "9" * 5000
    delta = {"content": f'{{"content": {big}}}', "index": f'{{"tool_calls": [{{"index": {big}, "id": "c1", '
             f'"function": {{"name": "end_call", "arguments": "{{}}"}}}}]}}', "usage": '{"content": "Hi."}'}[where]
    raw = f'{{"choices": [{{"index": 0, "delta": {delta}, "finish_reason": null}}]'
    raw += f', "usage": {{"prompt_tokens": {big}}}}}' if where == "usage" else "}"
    reply = ask(openai_server, {"raw_chunks_text": [raw], "text": ""}, retry=FAST)
    assert len(openai_server.log) == 1  # read, not retried
    if where == "content":
        assert reply.text == big
    elif where == "index":
        assert [c.name for c in reply.tool_calls] == ["end_call"]
    else:
        assert reply.text == "Hi." and reply.usage is not None
