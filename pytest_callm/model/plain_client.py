"""A small Chat Completions client on httpx, for the simulated caller inside RL environments.

The model under test talks through `client.py` (the openai SDK 3.x, streaming, every quirk). The
caller needs far less: one whole reply per request, text and a `hang_up` call. NeMo Gym's venv pins
openai 2.7, which `client.py` refuses, and its resources server must still be able to play a caller
model; so the RL environment's caller talks through this client, which needs only httpx (a
dependency of both openai versions). One JSON body per request (`"stream": false`); a rate limit, a
5xx, a timeout or a dropped connection is retried with the config's backoff, then is the
environment's failure (`ModelCallError`), never the policy's; a 401, 403 or 404 is a
`ModelAccessError`; another 4xx is a `ModelRequestError`. The model config's sampling applies;
its quirks do not (a caller's request opens with the agent's words, already a user message).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import httpx

from pytest_callm.model.config import ModelConfig, RetryPolicy
from pytest_callm.model.protocol import (ModelAccessError, ModelCallError, ModelReply, ModelRequest,
                                         ModelRequestError, ToolCall, usage_from)

TRANSIENT = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def _message(response: httpx.Response) -> str:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return response.text[:300]
    if isinstance(error, dict):
        return str(error.get("message") or error)[:300]
    return str(error)[:300]


class PlainChatModel:
    """One model config over plain HTTP: `respond(ModelRequest) -> ModelReply`."""

    def __init__(self, config: ModelConfig, api_key: str | None, retry: RetryPolicy = RetryPolicy(),
                 connections: int = 64):
        self.config = config
        self.name = config.name
        self.retry = retry
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(base_url=config.base_url.rstrip("/"), headers=headers,
                                       timeout=httpx.Timeout(retry.timeout_s),
                                       limits=httpx.Limits(max_connections=connections))

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        s = self.config.sampling
        body: dict[str, Any] = {"model": self.config.model, "stream": False,
                                "messages": [{"role": "system", "content": request.system_prompt},
                                             *request.messages]}
        if request.tools:
            body["tools"] = request.tools
        body.update(s.request_fields())
        body.update(s.extra_body)  # sent as the body's own fields, as the openai SDK sends `extra_body`
        return body

    async def respond(self, request: ModelRequest) -> ModelReply:
        body = self.request_body(request)
        notes: list[str] = []
        for attempt in range(1, self.retry.tries + 1):
            started = time.perf_counter()
            try:
                response = await asyncio.wait_for(self._http.post("/chat/completions", json=body),
                                                  self.retry.deadline_s)
            except (httpx.TransportError, asyncio.TimeoutError) as e:
                problem, retry_after = f"{type(e).__name__}: {e}".rstrip(": "), None
            else:
                if response.status_code == 200:
                    return self._reply(response, (time.perf_counter() - started) * 1000, notes)
                if response.status_code in (401, 403, 404):
                    raise ModelAccessError(f"{self.name}: HTTP {response.status_code} from {self.config.base_url}: "
                                           f"{_message(response)}")
                if response.status_code not in TRANSIENT:
                    raise ModelRequestError(f"{self.name}: HTTP {response.status_code}: {_message(response)}")
                problem = f"HTTP {response.status_code}: {_message(response)}"
                try:
                    retry_after = float(response.headers.get("retry-after", ""))
                except ValueError:
                    retry_after = None
            if attempt == self.retry.tries:
                raise ModelCallError(f"{self.name}: {problem} (after {attempt} tries)")
            notes.append(f"try {attempt} failed ({problem}); retried")
            await asyncio.sleep(self.retry.wait_s(attempt, retry_after))
        raise AssertionError("unreachable")

    def _reply(self, response: httpx.Response, ms: float, notes: list[str]) -> ModelReply:
        try:
            data = response.json()
            message = data["choices"][0]["message"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelCallError(f"{self.name}: a reply that is not a chat completion: "
                                 f"{response.text[:300]!r}") from None
        calls = []
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") or {}
            arguments = function.get("arguments")
            calls.append(ToolCall(str(call.get("id") or f"call_{i}"), str(function.get("name") or ""),
                                  arguments if isinstance(arguments, str) else json.dumps(arguments or {})))
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        return ModelReply(text=message.get("content") or "", tool_calls=calls,
                          reasoning=reasoning if isinstance(reasoning, str) else None, ttft_ms=ms,
                          usage=usage_from(data.get("usage")), notes=notes)

    async def aclose(self) -> None:
        await self._http.aclose()
