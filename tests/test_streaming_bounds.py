"""A reply's bounds hold while it streams: a model that never stops writing is cut there, scored as the
model's, and what is read stays bounded in memory (issue 39). Through the real client and the scripted
OpenAI-compatible server, whose endless streams run until the client hangs up."""

from __future__ import annotations

import pytest

from openai_server import ScriptCaller, openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model import redact
from pytest_callm.model.client import RetryPolicy
from pytest_callm.model.config import Mode, ModelConfig
from pytest_callm.model.output import MAX_ARGUMENT_CHARS, clip
from pytest_callm.model.protocol import MAX_REASONING_CHARS, MAX_REPLY_CHARS, safe_reply
from pytest_callm.model.reply_reader import MAX_READ_CHARS, MAX_REASONING_READ_CHARS
from pytest_callm.runs.runtime import Runtime
from test_client import ask

# One try, and a deadline far beyond what reading to a bound takes: a reply that reached the deadline
# would fail these tests (ModelCallError), where before it was retried until then and lost.
ONE_TRY = RetryPolicy(tries=1, backoff_s=0.01, timeout_s=30, deadline_s=60)
LOOP = {"endless": {"content": "I can help with that. "}}


def test_a_model_that_never_stops_talking_is_cut_at_the_spoken_bound_while_it_streams(openai_server):
    reply = safe_reply(ask(openai_server, LOOP, retry=ONE_TRY))
    assert len(reply.text) == MAX_REPLY_CHARS and reply.text.startswith("I can help with that. ")
    assert reply.cuts and "spoken text passed 20,000 characters while streaming" in reply.cuts[0]
    assert len(openai_server.log) == 1  # not retried: the model's reply, as it stands


def test_endless_reasoning_is_cut_and_only_its_bound_is_kept(openai_server):
    reply = safe_reply(ask(openai_server, {"endless": {"reasoning_content": "Let me think again. " * 50}},
                           retry=ONE_TRY))
    assert reply.text == "" and len(reply.reasoning) == MAX_REASONING_CHARS
    assert f"reasoning passed {MAX_REASONING_READ_CHARS:,} characters" in reply.cuts[0]


def test_endless_tool_arguments_are_read_within_a_bound_and_kept_short(openai_server):
    piece = {"tool_calls": [{"index": 0, "function": {"arguments": "x" * 1_000_000}}]}
    reply = ask(openai_server, {"endless": piece}, retry=ONE_TRY)
    (call,) = reply.tool_calls
    assert MAX_ARGUMENT_CHARS < len(call.raw_arguments) <= MAX_ARGUMENT_CHARS + redact.margin() + 1
    assert call.arguments is None  # refused as too long when it runs
    assert f"passed {MAX_READ_CHARS:,} characters read" in reply.cuts[0]


def test_a_whole_reply_past_the_read_bound_is_cut_unread(openai_server):
    """An endpoint that does not stream sends the whole reply at once: read only up to the bound too."""
    reply = ask(openai_server, {"text": "la " * (MAX_READ_CHARS // 3 + 1)}, mode=Mode(stream=False), retry=ONE_TRY)
    assert (reply.text, reply.tool_calls, len(openai_server.log)) == ("", [], 1)
    assert f"the reply's body passed {MAX_READ_CHARS:,} bytes" in reply.cuts[0]


def test_a_reply_cut_while_streaming_is_scored_and_the_trajectory_says_so(openai_server, vet_pack, tool_server,
                                                                          load_task):
    openai_server.reset(caller=ScriptCaller(["Hi, what are your hours on Monday?", "Thanks, bye."]))
    openai_server.script(LOOP)
    config = ModelConfig(name="local", model="scripted", base_url=openai_server.base_url, api_key_env=None)
    runtime = Runtime("local", {vet_pack.name: vet_pack}, tool_server.url, model_config=config, caller_config=config,
                      line="clean", retry=ONE_TRY)
    try:
        trajectory, verdict = runtime.run_attempt(load_task("C2-E1"), vet_pack, 1)
    finally:
        runtime.close()
    assert trajectory.reruns == 0 and verdict.passed is False
    assert trajectory.cuts[0].startswith("request 1: the spoken text passed 20,000 characters while streaming")
    assert len(trajectory.requests[0].text) == MAX_REPLY_CHARS


KEY = "sk-test-" + "k" * 48


@pytest.fixture
def echoed_key():
    redact.remember(KEY, "CALLM_TEST_ECHO_KEY")
    yield KEY
    redact._secrets.pop(KEY, None)  # other tests of this process know no key


@pytest.mark.parametrize("kept", [5, 40])
def test_a_key_echoed_across_the_spoken_cut_is_redacted_whole_never_kept_as_a_prefix(openai_server, echoed_key, kept):
    text = "x" * (MAX_REPLY_CHARS - kept) + KEY + " and on" * 5000
    reply = safe_reply(ask(openai_server, {"text": text, "piece_chars": 997}, retry=ONE_TRY))
    assert KEY[:kept] not in reply.text and reply.text[-kept:].startswith("$CALLM_TEST_ECHO_KEY"[:kept])


def test_a_key_echoed_across_the_tool_name_cut_is_redacted_whole(openai_server, echoed_key):
    name = "n" * 190 + KEY
    reply = safe_reply(ask(openai_server, {"tool_calls": [{"name": name, "arguments": {}}]}, retry=ONE_TRY))
    assert KEY[:10] not in reply.tool_calls[0].name and reply.tool_calls[0].name.endswith("$CALLM_TES")


def test_a_key_echoed_across_the_argument_cut_is_redacted_whole(echoed_key):
    kept = clip("y" * (MAX_ARGUMENT_CHARS - 9) + KEY + "y" * 500)
    assert KEY[:9] not in kept and "$CALLM_TE" in kept
