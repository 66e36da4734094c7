"""The caller's plain httpx client (RL environments, NeMo Gym's venv), against the local scripted server."""

from __future__ import annotations

import asyncio

import pytest

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model.config import ModelConfig, RetryPolicy, Sampling
from pytest_callm.model.plain_client import PlainChatModel
from pytest_callm.model.protocol import ModelAccessError, ModelCallError, ModelRequest, ModelRequestError

HANG_UP = {"type": "function", "function": {"name": "hang_up", "description": "Hang up.",
                                            "parameters": {"type": "object", "properties": {}}}}
REQUEST = ModelRequest(agent="caller", system_prompt="You are the caller.",
                       messages=[{"role": "user", "content": "How can I help?"}], tools=[HANG_UP])
FAST = RetryPolicy(tries=3, backoff_s=0.01)


def ask(url: str, request: ModelRequest = REQUEST, **config):
    async def go():
        model = PlainChatModel(ModelConfig(name="caller", model="scripted", base_url=url, api_key_env=None, **config),
                               None, FAST)
        try:
            return await model.respond(request)
        finally:
            await model.aclose()
    return asyncio.run(go())


def test_a_reply_with_words_and_a_hang_up_comes_back_whole(openai_server):
    openai_server.script({"text": "Thanks, bye.", "tool_calls": [{"name": "hang_up", "arguments": {}}],
                          "usage": {"prompt_tokens": 12, "completion_tokens": 4}})
    reply = ask(openai_server.base_url, sampling=Sampling(temperature=0.3))
    assert reply.text == "Thanks, bye." and [(c.name, c.raw_arguments) for c in reply.tool_calls] == [("hang_up", "{}")]
    assert reply.usage is not None and reply.usage.output_tokens == 4
    body = openai_server.requests[-1]
    assert body["stream"] is False and body["temperature"] == 0.3 and body["tools"] == [HANG_UP]
    assert body["messages"][0] == {"role": "system", "content": "You are the caller."}


def test_a_rate_limit_is_retried_and_noted_then_a_lasting_one_is_the_environments_failure(openai_server):
    openai_server.script({"status": 429, "message": "slow down", "retry_after": 0}, {"text": "Hello?"})
    reply = ask(openai_server.base_url)
    assert reply.text == "Hello?" and len(reply.notes) == 1 and "429" in reply.notes[0]
    openai_server.script(*[{"status": 503, "message": "overloaded"}] * 3)
    with pytest.raises(ModelCallError, match="after 3 tries"):
        ask(openai_server.base_url)


@pytest.mark.parametrize("status, error", [(401, ModelAccessError), (404, ModelAccessError), (400, ModelRequestError)])
def test_a_refused_request_is_not_retried(openai_server, status, error):
    openai_server.script({"status": status, "message": "no"}, {"text": "never reached"})
    with pytest.raises(error, match=f"HTTP {status}"):
        ask(openai_server.base_url)
    assert len(openai_server.requests) == 1  # the queued reply is still there: no second try
