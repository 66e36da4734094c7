"""Each server's way of saying "too long", "refused" or "bad tool call", played by the scripted server
through the real client, lands where `model/signals.py` says: the model's (scored) or ours (retried or
rerun). The replies are written from each server's documented or observed wording (status and body as
the server sends them; `stream_body`: the same inside a stream that began with 200)."""

from __future__ import annotations

import pytest

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model import signals
from pytest_callm.model.client import ModelContextOverflow, ModelRequestError
from pytest_callm.model.protocol import ModelRefusal
from test_client import ask


def _vllm(message: str) -> dict:
    return {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}


def _llama(code: int, message: str, kind: str, **extra) -> dict:
    return {"error": {"code": code, "message": message, "type": kind, **extra}}


def _openai(message: str, code: str | None, kind: str = "invalid_request_error", param: str | None = None) -> dict:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _anthropic(kind: str, message: str) -> dict:
    return {"type": "error", "error": {"type": kind, "message": message}}


VLLM_OVERFLOW = ("This model's maximum context length is 32768 tokens. However, you requested 33100 tokens (32076 in "
                 "the messages, 1024 in the completion). Please reduce the length of the messages or completion.")
TGI_OVERFLOW = ("Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3900 `inputs` "
                "tokens and 500 `max_new_tokens`")
SGLANG_OVERFLOW = "The input (40210 tokens) is longer than the model's context length (32768 tokens)."
LLAMA_OVERFLOW = "request (9120 tokens) exceeds the available context size (8192 tokens), try increasing it"
ANTHROPIC_OVERFLOW = "prompt is too long: 215004 tokens > 200000 maximum"
GROQ_FAILED = {"message": "Failed to call a function. Please adjust your prompt. See 'failed_generation' for more "
                          "details.", "type": "invalid_request_error", "code": "tool_use_failed",
               "failed_generation": '<function=verify_owner{"full_name": "Dana'}

# (id, the reply, whose): OVERFLOW / REFUSAL / MALFORMED_CALL are the model's; BUSY and REFUSED_REQUEST ours.
REPLIES = [
    # vLLM
    ("vllm-400", {"status": 400, "body": _vllm(VLLM_OVERFLOW)}, signals.OVERFLOW),
    ("vllm-400-newer", {"status": 400, "body": _vllm(
        "'max_tokens' or 'max_completion_tokens' is too large: 1024. This model's maximum context length is 32768 "
        "tokens and your request has 32000 input tokens (1024 > 32768 - 32000).")}, signals.OVERFLOW),
    ("vllm-in-stream", {"stream_body": {"error": _vllm(VLLM_OVERFLOW)}}, signals.OVERFLOW),
    ("vllm-history-not-json", {"status": 400, "body": _vllm("Expecting ',' delimiter: line 1 column 24 (char 23)")},
     signals.REFUSED_REQUEST),
    # llama.cpp's server
    ("llamacpp-400", {"status": 400, "body": _llama(400, LLAMA_OVERFLOW, "exceed_context_size_error",
                                                    n_prompt_tokens=9120, n_ctx=8192)}, signals.OVERFLOW),
    ("llamacpp-in-200", {"stream_body": _llama(400, "the request exceeds the available context size, try increasing "
                                                    "it", "exceed_context_size_error", n_prompt_tokens=14429,
                                               n_ctx=8192)}, signals.OVERFLOW),
    ("llamacpp-500-older", {"status": 500, "body": _llama(500, "Context size has been exceeded.", "server_error")},
     signals.OVERFLOW),
    ("llamacpp-bad-call", {"status": 500, "body": _llama(
        500, 'Failed to parse input at pos 41: <tool_call>{"name": "verify_owner", "arguments": {"full_nam',
        "server_error")},
     signals.MALFORMED_CALL),
    ("llamacpp-loading", {"status": 503, "body": _llama(503, "Loading model", "unavailable_error")}, signals.BUSY),
    # Hugging Face TGI: the error is a bare string, its kind beside it
    ("tgi-422", {"status": 422, "body": {"error": TGI_OVERFLOW, "error_type": "validation"}}, signals.OVERFLOW),
    ("tgi-in-stream", {"stream_body": {"error": TGI_OVERFLOW, "error_type": "validation"}}, signals.OVERFLOW),
    ("tgi-422-input-length", {"status": 422, "body": {
        "error": "Input validation error: `inputs` must have less than 4000 tokens. Given: 4203",
        "error_type": "validation"}}, signals.OVERFLOW),
    ("tgi-overloaded", {"status": 429, "body": {"error": "Model is overloaded", "error_type": "overloaded"}},
     signals.BUSY),
    ("tgi-overloaded-in-stream", {"stream_body": {"error": "Model is overloaded", "error_type": "overloaded"}},
     signals.BUSY),
    # SGLang
    ("sglang-400", {"status": 400, "body": _vllm(SGLANG_OVERFLOW)}, signals.OVERFLOW),
    ("sglang-in-stream", {"stream_body": {"error": _vllm(SGLANG_OVERFLOW)}}, signals.OVERFLOW),
    # Ollama (its OpenAI-compatible endpoint)
    ("ollama-bad-call", {"status": 500, "body": _openai(
        "error parsing tool call: raw='{\"name\": \"verify_owner\", \"arguments\": {\"full_name\": \"Dana "
        "context deadline exceeded', err=unexpected end of JSON input", None, "api_error")}, signals.MALFORMED_CALL),
    ("ollama-runner-timeout", {"status": 500, "body": _openai(
        'Post "http://127.0.0.1:40235/completion": context deadline exceeded', None, "api_error")}, signals.BUSY),
    # OpenAI
    ("openai-400", {"status": 400, "body": _openai(
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130412 tokens. "
        "Please reduce the length of the messages.", "context_length_exceeded", param="messages")}, signals.OVERFLOW),
    ("openai-in-stream", {"stream_body": {"error": _openai(
        "Your input exceeds the context window of this model. Please adjust your input and try again.",
        "context_length_exceeded", param="input")["error"]}}, signals.OVERFLOW),
    ("openai-invalid-prompt", {"status": 400, "body": _openai(
        "Invalid prompt: your prompt was flagged as potentially violating our usage policy. Please try again with a "
        "different prompt.", "invalid_prompt")}, signals.REFUSAL),
    ("azure-content-filter", {"status": 400, "body": _openai(
        "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please "
        "modify your prompt and retry.", "content_filter", kind=None, param="prompt")}, signals.REFUSAL),
    ("openai-server-error-in-stream", {"stream_body": {"error": _openai(
        "The server had an error while processing your request. Sorry about that!", None, "server_error")["error"]}},
     signals.BUSY),
    # Groq
    ("groq-tool-use-failed", {"status": 400, "body": {"error": GROQ_FAILED}}, signals.MALFORMED_CALL),
    ("groq-tool-use-failed-in-stream", {"stream_body": {"error": GROQ_FAILED}}, signals.MALFORMED_CALL),
    ("groq-overflow", {"status": 400, "body": _openai("Please reduce the length of the messages or completion.",
                                                      "context_length_exceeded", param="messages")}, signals.OVERFLOW),
    ("groq-413-tokens-per-minute", {"status": 413, "body": _openai(
        "Request too large for model `openai/gpt-oss-20b` in organization `org_01` service tier `on_demand` on tokens "
        "per minute (TPM): Limit 8000, Requested 9512, please reduce your message size and try again.",
        "rate_limit_exceeded", kind="tokens")}, signals.REFUSED_REQUEST),
    # Anthropic-compatible gateways
    ("anthropic-400", {"status": 400, "body": _anthropic("invalid_request_error", ANTHROPIC_OVERFLOW)},
     signals.OVERFLOW),
    ("anthropic-400-max-tokens", {"status": 400, "body": _anthropic(
        "invalid_request_error", "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease "
        "input length or `max_tokens` and try again")}, signals.OVERFLOW),
    ("anthropic-in-stream", {"stream_body": _anthropic("invalid_request_error", ANTHROPIC_OVERFLOW)},
     signals.OVERFLOW),
    ("anthropic-529", {"status": 529, "body": _anthropic("overloaded_error", "Overloaded")}, signals.BUSY),
    ("anthropic-overloaded-in-stream", {"stream_body": _anthropic("overloaded_error", "Overloaded")}, signals.BUSY),
]
DONE = {"text": "Done."}


@pytest.mark.parametrize("reply, kind", [r[1:] for r in REPLIES], ids=[r[0] for r in REPLIES])
def test_each_servers_signal_lands_where_the_table_says(openai_server, reply, kind):
    if kind == signals.OVERFLOW:
        with pytest.raises(ModelContextOverflow, match="no longer fits the context of scripted"):
            ask(openai_server, reply, DONE)
        assert len(openai_server.log) == 1  # not retried: it would overflow again
    elif kind == signals.REFUSAL:
        with pytest.raises(ModelRefusal, match="refused what was said in the call"):
            ask(openai_server, reply, DONE)
        assert len(openai_server.log) == 1
    elif kind == signals.MALFORMED_CALL:  # sent again three times, then the model's empty reply
        answer = ask(openai_server, *[reply] * 4, DONE)
        assert (answer.text, answer.tool_calls, len(openai_server.log)) == ("", [], 4)
        assert "tool call rejected 4 times; no reply" in answer.notes[-1]
    elif kind == signals.BUSY:
        assert ask(openai_server, reply, DONE).text == "Done." and len(openai_server.log) == 2
    else:
        with pytest.raises(ModelRequestError):
            ask(openai_server, reply, DONE)
        assert len(openai_server.log) == 1


def test_a_reply_the_provider_filtered_in_a_200_stream_is_the_models_as_it_stands(openai_server):
    filtered = {"choices": [{"index": 0, "delta": {"content": "I can't"}, "finish_reason": "content_filter"}]}
    reply = ask(openai_server, {"raw_chunks": [filtered]})
    assert reply.text == "I can't" and "content_filter" in reply.notes[-1] and len(openai_server.log) == 1


def test_every_kind_in_the_table_has_an_owner_and_a_recorded_reply():
    assert {s.kind for s in signals.SIGNALS} <= set(signals.OWNER)
    assert {kind for _, _, kind in REPLIES} == set(signals.OWNER)
    for server in ("vLLM", "llama.cpp", "TGI", "SGLang", "Ollama", "OpenAI", "Groq", "Anthropic"):
        assert any(server in s.server for s in signals.SIGNALS), server
