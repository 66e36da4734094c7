"""The streaming client against a local OpenAI-compatible server: timing, tool calls, usage, errors."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model.client import (ModelAccessError, ModelCallError, ModelContextOverflow, ModelRequestError, OpenAIChatModel,
                                 RetryPolicy, api_key_for)
from pytest_callm.model.protocol import ModelRequest, Usage
from pytest_callm.model import microthinking
from pytest_callm.model.config import Mode, ModelConfig, Quirks, Sampling

FAST = RetryPolicy(tries=3, backoff_s=0.01, timeout_s=5)
TOOLS = [{"type": "function", "function": {"name": "verify_owner", "description": "Verify the caller.",
                                           "parameters": {"type": "object", "properties": {
                                               "full_name": {"type": "string"}, "phone": {"type": "string"}}}}},
         {"type": "function", "function": {"name": "end_call", "parameters": {"type": "object", "properties": {}}}}]
REQUEST = ModelRequest("reception", "You are the front desk.",
                       [{"role": "assistant", "content": "Thanks for calling."},
                        {"role": "user", "content": "Hi, this is Dana."}], TOOLS)


def ask(server, *steps, request=REQUEST, retry=FAST, key=None, **config):
    """Script the server, send one request through a fresh client, return the reply."""
    server.script(*steps)
    config.setdefault("api_key_env", None)
    model = OpenAIChatModel(ModelConfig(name="t", model="scripted", base_url=server.base_url, **config), key, retry)

    async def go():
        try:
            return await model.respond(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_time_to_first_token_includes_the_servers_delay(openai_server):
    reply = ask(openai_server, {"text": "Hello there.", "delay_ms": 150})
    assert reply.text == "Hello there."
    assert reply.ttft_ms >= 150  # how close it comes is benchmarks/ttft_accuracy.py's figure, not a test's


def test_a_reply_that_takes_its_total_time_still_times_only_the_first_token(openai_server):
    started = time.perf_counter()
    reply = ask(openai_server, {"text": "Hello there.", "delay_ms": 50, "total_ms": 400})
    took_ms = (time.perf_counter() - started) * 1000
    assert took_ms >= 400  # the finish chunk waited for the total
    # The first token came 350 ms of the server's own waiting before the finish, however busy the machine.
    assert 50 <= reply.ttft_ms < took_ms - 300 and reply.text == "Hello there."


def test_reasoning_is_kept_apart_and_the_first_token_is_the_first_spoken_one(openai_server):
    reply = ask(openai_server, {"reasoning": "The caller gave a name; ask for the phone.", "reasoning_ms": 200,
                                "text": "May I have your phone number?", "delay_ms": 0})
    assert reply.text == "May I have your phone number?"
    assert reply.reasoning == "The caller gave a name; ask for the phone."
    assert reply.ttft_ms >= 200


def test_tool_calls_split_across_chunks_are_reassembled(openai_server):
    reply = ask(openai_server, {"piece_chars": 3, "text": "One moment.", "tool_calls": [
        {"id": "call_a", "name": "verify_owner", "arguments": {"full_name": "Dana Whitfield", "phone": "5035550142"}},
        {"id": "call_b", "name": "end_call", "arguments": {}}]})
    assert reply.text == "One moment."
    assert [(c.id, c.name) for c in reply.tool_calls] == [("call_a", "verify_owner"), ("call_b", "end_call")]
    assert reply.tool_calls[0].arguments == {"full_name": "Dana Whitfield", "phone": "5035550142"}
    assert reply.tool_calls[1].raw_arguments == "{}"


def test_a_tool_call_alone_times_its_first_token_too(openai_server):
    reply = ask(openai_server, {"delay_ms": 80, "tool_calls": [{"name": "end_call", "arguments": {}}]})
    assert reply.text == "" and reply.tool_calls[0].name == "end_call"
    assert 80 <= reply.ttft_ms < 330


def test_usage_is_split_into_uncached_cached_output_and_reasoning_tokens(openai_server):
    reply = ask(openai_server, {"text": "Hi.", "reasoning": "short", "usage": {
        "prompt_tokens": 1000, "cached_tokens": 600, "completion_tokens": 50, "reasoning_tokens": 20}})
    assert reply.usage == Usage(input_tokens=400, cached_input_tokens=600, output_tokens=50, reasoning_tokens=20)


def test_the_request_streams_with_usage_tools_and_the_configs_sampling(openai_server):
    ask(openai_server, {"text": "Hi."}, sampling=Sampling(temperature=0.2, reasoning_effort="low", max_tokens=300,
                                                          extra_body={"top_k": 20}))
    body = openai_server.requests[0]
    assert body["model"] == "scripted" and body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == TOOLS
    assert body["messages"][0] == {"role": "system", "content": "You are the front desk."}
    assert body["messages"][1:] == REQUEST.messages
    assert (body["temperature"], body["reasoning_effort"], body["max_completion_tokens"], body["top_k"]) == \
        (0.2, "low", 300, 20)


def test_unset_sampling_settings_are_not_sent(openai_server):
    ask(openai_server, {"text": "Hi."})
    body = openai_server.requests[0]
    assert not {"temperature", "reasoning_effort", "max_completion_tokens"} & set(body)


def test_a_rate_limit_is_retried_after_a_backoff(openai_server):
    reply = ask(openai_server, {"status": 429, "message": "Rate limit reached"}, {"text": "Hello."})
    assert reply.text == "Hello."
    assert [r["status"] for r in openai_server.log] == [429, 200]
    assert "RateLimitError: Rate limit reached" in reply.notes[0]


def test_server_errors_are_retried(openai_server):
    reply = ask(openai_server, {"status": 500}, {"status": 503}, {"text": "Hello."})
    assert reply.text == "Hello."
    assert [r["status"] for r in openai_server.log] == [500, 503, 200]


def test_a_stream_that_drops_mid_reply_is_sent_again_from_the_start(openai_server):
    reply = ask(openai_server, {"text": "I found your appointment on Monday.", "drop_after": 2},
                {"text": "Your appointment is on Monday."})
    assert reply.text == "Your appointment is on Monday."
    assert len(openai_server.requests) == 2
    assert "APIConnectionError" in reply.notes[0]


def test_a_chunk_that_is_not_json_is_retried_as_infrastructure_not_lost(openai_server):
    reply = ask(openai_server, {"text": "I found it", "malformed_chunk": True}, {"text": "Found it."})
    assert reply.text == "Found it."
    assert len(openai_server.requests) == 2
    assert "StreamDropped" in reply.notes[0] and "not JSON" in reply.notes[0]


def _choice(delta):
    return {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


def _call(**fields):
    return _choice({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "lookup_caller", "arguments": "{}"},
                                    **fields}]})


@pytest.mark.parametrize("chunk, expect", [
    (_call(function={"name": "lookup_caller", "arguments": {"full_name": "Dana"}}),  # an object, not a JSON string
     lambda r: r.tool_calls[0].arguments == {"full_name": "Dana"}),
    (_call(function={"name": "lookup_caller", "arguments": 5}), lambda r: r.tool_calls[0].raw_arguments == "5"),
    (_call(function={"name": 5, "arguments": "{}"}), lambda r: r.tool_calls[0].name == "5"),
    (_call(id=7), lambda r: r.tool_calls[0].id == "7"),
    (_call(index="1"), lambda r: r.tool_calls[0].name == "lookup_caller"),
    (_call(index=None), lambda r: r.tool_calls[0].name == "lookup_caller"),
    (_choice({"tool_calls": {"index": 0, "id": "a", "function": {"name": "end_call", "arguments": "{}"}}}),
     lambda r: r.tool_calls[0].name == "end_call"),
    (_choice({"content": 5}), lambda r: r.text.startswith("5")),
    (_choice({"content": [{"type": "text", "text": "Hi "}]}), lambda r: r.text.startswith("Hi ")),
    (_choice("Hi "), lambda r: r.text.startswith("Hi ")),
    ({"id": "c", "choices": "x"}, lambda r: r.text == "Fine."),
    ({"id": "c", "choices": [], "usage": "lots"}, lambda r: r.text == "Fine."),
], ids=["arguments-object", "arguments-number", "name-number", "id-number", "index-string", "index-null",
        "tool_calls-object", "content-number", "content-parts", "delta-string", "choices-string", "usage-string"])
def test_chunk_fields_of_the_wrong_type_are_read_as_the_models_reply_never_retried(openai_server, chunk, expect):
    """Each raised TypeError or AttributeError in the reader: a whole-call rerun, then (if the server
    always wrote so) an attempt out of the denominator. They are what the model server sent."""
    reply = ask(openai_server, {"raw_chunks": [chunk], "text": "Fine."})
    assert len(openai_server.requests) == 1 and not reply.notes
    assert expect(reply), reply


def test_a_stream_whose_chunks_are_never_json_is_an_infrastructure_failure(openai_server):
    # The runtime reruns the call once and then leaves the attempt unscored (ModelCallError is infrastructure).
    with pytest.raises(ModelCallError, match="3 tries failed; last: StreamDropped: the stream sent a chunk that is not JSON"):
        ask(openai_server, *[{"text": "I found it", "malformed_chunk": True}] * 3)
    assert len(openai_server.log) == FAST.tries


def test_a_stream_that_ends_before_the_model_finished_is_sent_again(openai_server):
    reply = ask(openai_server, {"text": "I found", "end_early": True}, {"text": "Found it."})
    assert reply.text == "Found it."
    assert "StreamDropped" in reply.notes[0]


def test_a_timeout_is_retried(openai_server):
    retry = RetryPolicy(tries=2, backoff_s=0.01, timeout_s=0.3)
    reply = ask(openai_server, {"text": "Late.", "hang_s": 1.0}, {"text": "On time."}, retry=retry)
    assert reply.text == "On time."
    assert "APITimeoutError" in reply.notes[0]


def test_retries_are_bounded_and_then_the_request_fails_as_infrastructure(openai_server):
    with pytest.raises(ModelCallError, match="3 tries failed; last: RateLimitError"):
        ask(openai_server, *[{"status": 429}] * 5)
    assert len(openai_server.log) == FAST.tries


def test_backoff_doubles_is_capped_and_honours_retry_after():
    policy = RetryPolicy(backoff_s=1.0, max_backoff_s=5.0)
    assert 0.75 <= policy.wait_s(1) <= 1.0
    assert 1.5 <= policy.wait_s(2) <= 2.0
    assert 3.75 <= policy.wait_s(9) <= 5.0
    assert policy.wait_s(1, retry_after=3.0) == 3.0
    assert policy.wait_s(1, retry_after=60.0) == 5.0


def test_a_rejected_key_stops_with_one_clear_message_and_no_retry(openai_server):
    openai_server.reset(api_key="sk-right")
    with pytest.raises(ModelAccessError) as e:
        ask(openai_server, key="sk-wrong", api_key_env="MY_KEY")
    assert "rejected the API key in $MY_KEY (HTTP 401: Incorrect API key provided.)" in str(e.value)
    assert len(openai_server.log) == 1


def test_the_right_key_is_sent_as_a_bearer_token(openai_server):
    openai_server.reset(api_key="sk-right")
    assert ask(openai_server, {"text": "Hi."}, key="sk-right").text == "Hi."


def test_an_unknown_model_stops_with_a_clear_message(openai_server):
    openai_server.reset(models=["another-model"])
    with pytest.raises(ModelAccessError, match="has no model 'scripted'"):
        ask(openai_server)


def test_a_request_the_server_refuses_is_not_retried(openai_server):
    with pytest.raises(ModelRequestError, match=r"HTTP 400\): Unsupported parameter: 'temperature'"):
        ask(openai_server, {"status": 400, "message": "Unsupported parameter: 'temperature'"})
    assert len(openai_server.log) == 1


@pytest.mark.parametrize("message", ["context length exceeded", "prompt is too long: 210000 tokens > 200000 maximum",
                                     "This model's maximum context length is 8192 tokens."])
def test_a_conversation_too_long_for_the_model_is_its_failure_not_the_harnesss(openai_server, message):
    with pytest.raises(ModelContextOverflow, match="no longer fits the context of scripted"):
        ask(openai_server, {"status": 400, "message": message})
    assert len(openai_server.log) == 1


def test_an_error_inside_the_stream_is_retried(openai_server):
    reply = ask(openai_server, {"stream_error": {"message": "overloaded", "type": "server_error"}}, {"text": "Hi."})
    assert reply.text == "Hi."
    assert "overloaded" in reply.notes[0]


def test_a_missing_key_is_named():
    config = ModelConfig(name="t", model="t", api_key_env="CALLM_TEST_KEY")
    with pytest.raises(KeyError, match="CALLM_TEST_KEY"):
        api_key_for(config, {})
    assert api_key_for(config, {"CALLM_TEST_KEY": " sk-1 "}) == "sk-1"
    assert api_key_for(ModelConfig(name="t", model="t", api_key_env=None), {}) is None


def test_quirks_are_off_by_default(openai_server):
    reply = ask(openai_server, {"text": 'Let me check. [verify_owner(full_name="Dana")]'})
    assert reply.tool_calls == [] and reply.text.endswith('[verify_owner(full_name="Dana")]')
    assert Quirks() == Quirks(False, False, False, 3)  # a rejected tool call is resent 3 times: the paper's rule
    assert json.loads(json.dumps(openai_server.requests[0]))["messages"][1]["role"] == "assistant"


# --- the overall deadline ---------------------------------------------------------------------------

# Long enough for a normal reply on a busy machine; a stream that never finishes ends at it.
DEADLINE = RetryPolicy(tries=2, backoff_s=0.01, timeout_s=3.0, deadline_s=2.0)


@pytest.mark.parametrize("step", [{"keepalive_s": 30}, {"endless": True}], ids=["kept-alive", "endless"])
def test_a_stream_that_never_finishes_ends_at_the_deadline_and_is_retried(openai_server, step):
    reply = ask(openai_server, step, {"text": "Done."}, retry=DEADLINE)  # the retry gets a normal reply
    assert reply.text == "Done."  # the first stream (30 s of keep-alives, or endless) was cut, not waited out
    assert len(reply.notes) == 1 and "DeadlinePassed: no complete reply within the request deadline of 2 s" \
        in reply.notes[0]


def test_a_stream_past_its_deadline_on_every_try_is_an_infrastructure_error(openai_server):
    with pytest.raises(ModelCallError, match="2 tries failed; last: DeadlinePassed"):
        ask(openai_server, {"keepalive_s": 30}, {"endless": True}, retry=DEADLINE)


# --- microthinking: one marked sentence of reasoning before every reply, never spoken ----------------

THOUGHT = "The caller gave a name but no phone number, so I ask for it."
MICRO = Mode(microthinking=True)


def test_microthinking_keeps_the_thought_out_of_the_spoken_reply(openai_server):
    reply = ask(openai_server, {"text": f"<think>{THOUGHT}</think>\n\nMay I have your phone number?"}, mode=MICRO)
    assert reply.text == "May I have your phone number?"
    assert reply.reasoning == THOUGHT
    assert "think" not in reply.text and "phone number, so" not in reply.text


def test_microthinking_times_the_first_spoken_token_after_the_thought(openai_server):
    # 16 pieces of thought at 20 ms each come before the first spoken piece.
    reply = ask(openai_server, {"text": f"<think>{THOUGHT}</think>Your number?", "piece_ms": 20, "delay_ms": 0},
                mode=MICRO)
    assert reply.text == "Your number?"
    assert reply.ttft_ms >= 16 * 20


def test_microthinking_is_asked_for_at_the_end_of_the_system_prompt(openai_server):
    ask(openai_server, {"text": "<think>Greet.</think>Hello."}, mode=MICRO)
    system = openai_server.requests[0]["messages"][0]["content"]
    assert system.startswith("You are the front desk.") and system.endswith(microthinking.INSTRUCTION)
    ask(openai_server, {"text": "Hello."})
    assert openai_server.requests[1]["messages"][0]["content"] == "You are the front desk."


def test_microthinking_before_a_tool_call_times_the_call(openai_server):
    reply = ask(openai_server, {"text": f"<think>{THOUGHT}</think>", "piece_ms": 20,
                                "tool_calls": [{"name": "end_call", "arguments": {}}]}, mode=MICRO)
    assert reply.text == "" and reply.tool_calls[0].name == "end_call" and reply.reasoning == THOUGHT
    assert reply.ttft_ms >= 16 * 20


def test_a_thought_never_closed_is_not_spoken(openai_server):
    reply = ask(openai_server, {"text": f"<think>{THOUGHT} May I have your phone number?"}, mode=MICRO)
    assert reply.text == "" and reply.ttft_ms is None
    assert reply.reasoning.endswith("May I have your phone number?")
    assert reply.notes == [microthinking.UNCLOSED_NOTE]


def test_a_reply_without_a_thought_is_spoken_as_written(openai_server):
    reply = ask(openai_server, {"text": "May I have your phone number?"}, mode=MICRO)
    assert reply.text == "May I have your phone number?" and reply.reasoning is None


def test_microthinking_keeps_a_servers_own_reasoning_too(openai_server):
    reply = ask(openai_server, {"reasoning": "Parsed by the server.", "text": "<think>Ask.</think>Your number?"},
                mode=MICRO)
    assert reply.text == "Your number?" and reply.reasoning == "Parsed by the server.\nAsk."


@pytest.mark.parametrize("size", [1, 2, 3, 5, 7, 100])
def test_the_thought_is_split_off_however_the_stream_cuts_the_markers(size):
    content = f"  <think>{THOUGHT}</think>  Hello, <think> is spoken here."
    splitter = microthinking.ThoughtSplitter()
    spoken = "".join(splitter.feed(content[i:i + size]) for i in range(0, len(content), size)) + splitter.finish()
    assert spoken == "Hello, <think> is spoken here." and splitter.thought == THOUGHT


# --- an endpoint that does not stream: the round trip is the time to first token ----------------------

WHOLE = Mode(stream=False)


def test_a_non_streaming_endpoint_gets_one_request_and_its_reply_is_read(openai_server):
    openai_server.reset(no_stream=True)
    reply = ask(openai_server, {"text": "One moment.", "tool_calls": [
        {"id": "call_a", "name": "verify_owner", "arguments": {"full_name": "Dana Whitfield", "phone": "5035550142"}}],
        "usage": {"prompt_tokens": 900, "cached_tokens": 100, "completion_tokens": 40, "reasoning_tokens": 5}},
        mode=WHOLE)
    assert reply.text == "One moment."
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == \
        [("call_a", "verify_owner", {"full_name": "Dana Whitfield", "phone": "5035550142"})]
    assert reply.usage == Usage(input_tokens=800, cached_input_tokens=100, output_tokens=40, reasoning_tokens=5)
    body = openai_server.requests[0]
    assert body["stream"] is False and "stream_options" not in body and body["tools"] == TOOLS


def test_a_non_streaming_endpoints_time_to_first_token_is_the_round_trip(openai_server):
    openai_server.reset(no_stream=True)
    started = time.perf_counter()
    reply = ask(openai_server, {"text": "Hello.", "delay_ms": 20, "total_ms": 300}, mode=WHOLE)
    elapsed_ms = (time.perf_counter() - started) * 1000
    assert 300 <= reply.ttft_ms <= elapsed_ms
    log = openai_server.log[0]
    assert reply.ttft_ms >= (log["end"] - log["start"]) * 1000  # no shorter than the server's own time


def test_a_non_streaming_endpoint_keeps_reasoning_and_a_thought_apart(openai_server):
    openai_server.reset(no_stream=True)
    reply = ask(openai_server, {"reasoning": "Server side.", "text": "<think>Ask.</think> Your number?"},
                mode=Mode(stream=False, microthinking=True))
    assert reply.text == "Your number?" and reply.reasoning == "Server side.\nAsk."


def test_a_non_streaming_endpoint_is_retried_like_a_stream(openai_server):
    openai_server.reset(no_stream=True)
    reply = ask(openai_server, {"status": 503}, {"text": "Hello."}, mode=WHOLE)
    assert reply.text == "Hello." and [r["status"] for r in openai_server.log] == [503, 200]


def test_a_system_prompt_suffix_ends_every_system_prompt(openai_server):
    ask(openai_server, {"text": "Hi."}, quirks=Quirks(system_prompt_suffix="/no_think"))
    assert openai_server.requests[0]["messages"][0]["content"] == "You are the front desk.\n\n/no_think"


def test_deepseeks_cache_hits_count_as_cached_input():
    from pytest_callm.model.client import usage_from

    usage = usage_from({"prompt_tokens": 1000, "prompt_cache_hit_tokens": 700, "prompt_cache_miss_tokens": 300,
                        "completion_tokens": 40})
    assert usage == Usage(input_tokens=300, cached_input_tokens=700, output_tokens=40, reasoning_tokens=0)


# --- bytes that are not UTF-8 (issue 28) ----------------------------------------------------------

@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_bytes_that_are_not_utf8_inside_a_reply_are_the_models_reply_as_sent(openai_server, stream):
    """A reply that parses once the bytes are read as U+FFFD is the model's own output: kept and
    scored, with a note saying what was replaced. It used to raise UnicodeDecodeError (unscored)."""
    reply = ask(openai_server, {"text": "Found it.", "invalid_utf8": "text"}, mode=Mode(stream=stream))
    assert "\ufffd" in reply.text and reply.text.replace("\ufffd", "") == "Found it."
    assert len(openai_server.requests) == 1  # not sent again: it is a reply
    assert any("not UTF-8" in n and "the model's" in n for n in reply.notes), reply.notes


@pytest.mark.parametrize("stream", [True, False], ids=["stream", "whole"])
def test_bytes_that_are_not_utf8_where_the_json_should_be_are_a_broken_stream_retried(openai_server, stream):
    reply = ask(openai_server, {"text": "I found it", "invalid_utf8": "frame"}, {"text": "Found it."},
                mode=Mode(stream=stream))
    assert reply.text == "Found it."
    assert len(openai_server.requests) == 2
    assert "StreamDropped" in reply.notes[0] and "not UTF-8" in reply.notes[0], reply.notes
