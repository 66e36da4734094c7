"""Whatever the model writes is the model's problem: refused to it, never an exception in the harness.

Through the real client, engine and tool server, against the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import time

import pytest

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.output import MAX_ARGUMENT_CHARS, parse_arguments
from pytest_callm.model.config import ModelConfig
from pytest_callm.saved.rundir import write_json
from pytest_callm.runs.runtime import Runtime

SURROGATE_ESCAPED = '{"\\udfff": 1}'  # the model wrote the JSON escape of a lone surrogate
SURROGATE_RAW = '{"full_name": "Dana \udfff"}'  # the stream itself carried one
DEEP = "[" * 200_000 + "]" * 200_000
DEEP_SMALL = '{"a": ' * 20_000 + "1" + "}" * 20_000  # under the size limit, far over the depth limit
NOT_JSON = '{"full_name": "Dana'
HUGE = '{"full_name": "' + "x" * 20_000_000 + '"}'
BAD = [SURROGATE_ESCAPED, SURROGATE_RAW, DEEP, DEEP_SMALL, NOT_JSON, HUGE, "[1, 2]"]


class Caller:
    def __init__(self):
        self.turns = 0

    async def respond(self, agent_said):
        self.turns += 1
        return CallerTurn("Hi, it's Dana \udc80 Whitfield." if self.turns == 1 else "Thanks.")


def runtime_for(server, vet_pack, tool_server):
    config = ModelConfig(name="local", model="scripted", base_url=server.base_url, api_key_env=None)
    return Runtime("local", {vet_pack.name: vet_pack}, tool_server.url, model_config=config,
                   caller_factory=lambda task, pack, attempt: Caller())


@pytest.mark.parametrize("raw", BAD, ids=["surrogate-key", "surrogate-raw", "200k-deep", "20k-deep", "not-json",
                                          "20MB", "not-an-object"])
def test_unusable_arguments_are_refused_with_a_reason(raw):
    value, problem = parse_arguments(raw)
    assert value is None and problem


def test_bad_tool_calls_and_text_are_refused_to_the_model_and_the_call_goes_on(openai_server, vet_pack,
                                                                               tool_server, load_task):
    openai_server.script(
        {"tool_calls": [{"name": "transfer_to_appointments", "arguments": {"handoff_summary": "Dana, a check-up."}}]},
        {"tool_calls": [{"name": "verify_owner", "arguments": raw} for raw in BAD], "piece_chars": 1_000_000},
        {"text": "Sorry \ud800 about that."},
        {"tool_calls": [{"name": "end_call", "arguments": {"reason": "done"}}]},
    )
    runtime = runtime_for(openai_server, vet_pack, tool_server)
    started = time.monotonic()
    try:
        trajectory, verdict = runtime.run_attempt(load_task("C2-E2"), vet_pack, 1)
    finally:
        runtime.close()
    assert time.monotonic() - started < 30
    bad = [c for c in trajectory.tool_calls if c.name == "verify_owner"]
    assert len(bad) == len(BAD)
    for call in bad:  # each one counts against the model: an executed call that failed, not a refusal
        assert call.status == "invalid_arguments" and not call.refused and call.arguments is None
        assert call.result["data"]["problems"]
        assert len(call.raw_arguments) < MAX_ARGUMENT_CHARS + 100
    assert trajectory.end_reason == "agent_end_call" and trajectory.reruns == 0
    assert not verdict.passed
    # The next request went out whole (the SDK serialised the history), and the trajectory saves.
    assert len(openai_server.requests) == 4
    assert "\ufffd" in json.dumps(openai_server.requests[-1]["messages"], ensure_ascii=False)
    json.dumps(trajectory.to_json(), ensure_ascii=False).encode("utf-8")
    said = [t.said for t in trajectory.transcript]
    assert "Sorry \ufffd about that." in said and "Hi, it's Dana \ufffd Whitfield." in said


def test_a_conversation_that_outgrows_the_context_is_the_models_failure(openai_server, vet_pack, tool_server,
                                                                       load_task, tmp_path):
    openai_server.script(
        {"tool_calls": [{"name": "transfer_to_appointments", "arguments": {"handoff_summary": "Dana, a check-up."}}]},
        {"status": 400, "code": "context_length_exceeded",
         "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                    "9000 tokens. Please reduce the length of the messages."})
    runtime = runtime_for(openai_server, vet_pack, tool_server)
    try:
        trajectory, verdict = runtime.run_attempt(load_task("C2-E2"), vet_pack, 1)
    finally:
        runtime.close()
    assert trajectory.end_reason == "context_overflow" and trajectory.reruns == 0
    assert len(openai_server.requests) == 2  # not retried, not rerun: it would overflow again
    assert not verdict.passed
    assert "maximum context length is 8192 tokens" in verdict.to_json()["reason"]
    assert verdict.explain().startswith("the model broke the call: the conversation no longer fits")
    write_json(tmp_path / "t.json", trajectory.to_json())
