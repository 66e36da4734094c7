"""The model under test over an OpenAI-compatible Chat Completions API, streamed.

`OpenAIChatModel` implements the engine's `Model` protocol with the `openai` SDK: every request is
streamed with the agent's tools and `stream_options.include_usage`, and its reply records

- the time to first token: from the moment the request leaves for the network (after the SDK has
  built and serialized it, which costs the client milliseconds per request that are not the
  model's) to the first text or tool-call token; for a reasoning model, the first spoken token
  (reasoning text is kept in `reasoning`, never spoken);
- the full text, and the tool calls reassembled from their streamed pieces;
- usage split into uncached input, cached input, output and reasoning tokens, where reported.

Two modes change that (`[mode]` in the config): an endpoint that does not stream (`stream = false`)
gets each request as one JSON round trip, and its time to first token is that whole round trip
(the paper times Tell-1 that way); `microthinking = true` asks for one marked sentence of reasoning
before every reply and keeps it apart (microthinking.py), so the first spoken token comes after it.

Errors. Rate limits (429), 408/409, 5xx, timeouts, connection errors and streams that drop before
the model finished are retried with exponential backoff (`RetryPolicy`; the SDK's own retries are
off so that one policy covers a stream that drops mid-way too). When the tries run out the request
raises `ModelCallError`; the runtime then reruns the whole call once. A request the server refuses
as such (400, 422) raises `ModelRequestError`. A key or model the server will not serve (401, 403,
404) raises `ModelAccessError`: nothing else in the run can succeed, so the plugin stops the run.
What the model's own behaviour made its server say is read from one table (`signals.py`), whatever
the status and whether it came in an error body or inside the stream: a context overflow raises
`ModelContextOverflow` and a refusal of the call's words `ModelRefusal` (the call ends, scored); a
rejected tool call is sent again, then the reply is the model's empty one. A reply is read within
its bounds as it streams (`reply_reader.py`): one that never stops is cut there, never retried.
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import httpx2
import openai
from openai._base_client import make_request_options  # what `create` passes along: auth, extra body
from openai._streaming import ServerSentEvent, SSEDecoder

from pytest_callm.model import microthinking, quirks
from pytest_callm.model import redact, signals
from pytest_callm.model.latency import RequestSampler
from pytest_callm.model.output import read_json
from pytest_callm.model.reply_reader import MAX_READ_CHARS, ReplyReader, reasoning_piece
from pytest_callm.model.protocol import (ModelAccessError, ModelCallError, ModelContextOverflow,  # noqa: F401
                    ModelInfrastructureError, ModelRefusal, ModelReply, ModelRequest, ModelRequestError,
                    ModelServerDied, ToolCall, Usage, usage_from)
from pytest_callm.model.serve import died
from pytest_callm.model.config import ModelConfig, RetryPolicy, api_key_for  # noqa: F401  (their old home)

NO_KEY = "no-key-needed"  # what an OpenAI-compatible server without auth gets as a key

# When the current request was handed to the network: set by the HTTP client's request hook, read
# by the stream that sent it (the hook runs in the sending task, so the context is that request's).
_sent_at: ContextVar[list[float] | None] = ContextVar("callm_sent_at", default=None)


async def _mark_sent(_request) -> None:
    holder = _sent_at.get()
    if holder is not None:
        holder.append(time.perf_counter())


class StreamDropped(Exception):
    """The stream ended before the model finished its reply."""


class DeadlinePassed(StreamDropped):
    """No complete reply within the request's overall deadline (a stream kept alive, or never ending)."""


TRANSIENT_STATUS = (408, 409, 429)
ACCESS_STATUS = (401, 403, 404)


def _server_message(error: Exception) -> str:
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return body["message"]
    return body if isinstance(body, str) and body else str(error)  # TGI's error is a bare string


def _retry_after(error: Exception) -> float | None:
    response = getattr(error, "response", None)
    value = response.headers.get("retry-after") if response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _is_transient(error: Exception) -> bool:
    if isinstance(error, StreamDropped):
        return True
    if isinstance(error, openai.APIStatusError):
        return error.status_code in TRANSIENT_STATUS or error.status_code >= 500
    # The rest carry no status: connection errors and timeouts (`APIConnectionError`, before or
    # during the stream), and error events the server sent inside the stream.
    return isinstance(error, openai.APIError)


NOT_UTF8_NOTE = ("the server sent {n} line(s) holding bytes that are not UTF-8; they parsed as a reply once "
                 "read as U+FFFD, so the reply is the model's, as sent")
FILTERED_NOTE = "the provider filtered the reply (finish_reason content_filter): the model's reply as it stands"
NOT_UTF8_BROKEN = "after bytes that are not UTF-8 (read as U+FFFD) "


class _Event(ServerSentEvent):
    def json(self) -> Any:
        return read_json(self.data)  # an integer of 5,000 digits is the model's output, not our crash


class _LenientSSEDecoder(SSEDecoder):
    """The SDK's decoder, less its `UnicodeDecodeError` (which escaped the retry loop and lost the
    attempt, unscored), its events read as `_Event` (long integers). A line with bytes that are not
    UTF-8 is read with U+FFFD in their place and counted. Whether what is left is a reply (the model's
    garbage, scored) or not JSON at all (a broken stream, retried as infrastructure) is then decided by
    the chunk's parse, and said in the notes."""

    def __init__(self) -> None:
        super().__init__()
        self.not_utf8 = 0

    def _decode_lines(self, lines):
        for raw_line in lines:
            try:
                line = raw_line.decode("utf-8")
            except UnicodeDecodeError:
                self.not_utf8 += 1
                line = raw_line.decode("utf-8", "replace")
            sse = self.decode(line)
            if sse:
                yield _Event(event=sse.event, data=sse.data, id=sse.id, retry=sse.retry)


@functools.lru_cache(maxsize=1)
def _certificates() -> ssl.SSLContext:
    """The context every client verifies servers with: the SDK's default, read once a process (it read
    the certificate bundle again for every client, about 20 ms each)."""
    return httpx2.create_ssl_context()


class _AsyncOpenAI(openai.AsyncOpenAI):
    def _make_sse_decoder(self) -> SSEDecoder:
        return _LenientSSEDecoder()


def _not_utf8(stream: Any) -> int:
    return getattr(getattr(stream, "_decoder", None), "not_utf8", 0)


async def _json_chunks(stream: openai.AsyncStream[Any]):
    """The stream's chunks; one that is not JSON (a proxy cut it, a server broke it) drops the stream,
    which is retried like any dropped stream instead of escaping as an unexpected error."""
    chunks = aiter(stream)
    while True:
        try:
            chunk = await anext(chunks)
        except StopAsyncIteration:
            return
        except json.JSONDecodeError as e:
            why = NOT_UTF8_BROKEN if _not_utf8(stream) else ""
            raise StreamDropped(f"the stream sent a chunk that is not JSON {why}({e.msg} at {e.pos})") from None
        if not isinstance(chunk, dict):
            raise StreamDropped(f"the stream sent a chunk that is not a JSON object: {redact.cut(str(chunk), 80)}")
        yield chunk


@dataclass
class _Streamed:
    text: str
    tool_calls: list[ToolCall]
    reasoning: str | None
    ttft_ms: float | None
    usage: Usage | None
    notes: list[str] = field(default_factory=list)
    cut: str | None = None  # the reply passed a bound while it streamed, and was cut there


class OpenAIChatModel:
    """One model config, one `AsyncOpenAI` client (created in the loop that first uses it)."""

    def __init__(self, config: ModelConfig, api_key: str | None, retry: RetryPolicy = RetryPolicy(),
                 sampler: RequestSampler | None = None, connections: int = 8):
        self.config = config
        self.connections = connections  # calls in flight: as many connections kept alive between requests
        redact.public_url(config.base_url)  # remembers a password written into the URL
        self.name = config.name
        self.api_key = api_key
        self.retry = retry
        self.sampler = sampler
        self._client: openai.AsyncOpenAI | None = None

    def client(self) -> openai.AsyncOpenAI:
        if self._client is None:
            # Headroom over the calls in flight: an item playing its own call beside them, or a cancelled
            # call still unwinding, must not wait for a connection (that wait would count as latency).
            limits = httpx2.Limits(max_connections=2 * self.connections + 2,
                                   max_keepalive_connections=self.connections)
            http = openai.DefaultAsyncHttpxClient(timeout=self.retry.timeout_s, limits=limits, verify=_certificates(),
                                                  event_hooks={"request": [_mark_sent]})
            self._client = _AsyncOpenAI(api_key=self.api_key or NO_KEY, base_url=self.config.base_url,
                                              max_retries=0, timeout=self.retry.timeout_s, http_client=http)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    # --- the request ----------------------------------------------------------------------------

    def request_body(self, request: ModelRequest) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for one engine request, quirks applied."""
        q, s = self.config.quirks, self.config.sampling
        system = request.system_prompt
        messages = list(request.messages)
        if q.first_message_from_user:
            messages = quirks.first_message_from_user(messages)
        body: dict[str, Any] = {"model": self.config.model, "stream": True, "stream_options": {"include_usage": True}}
        if not self.config.mode.stream:  # an endpoint that does not stream: one JSON body per request
            body = {"model": self.config.model, "stream": False}
        if q.tools_in_system_prompt:
            system = quirks.tools_in_system_prompt(system, request.tools)
        elif request.tools:
            body["tools"] = request.tools
        if self.config.mode.microthinking:
            system = microthinking.with_instruction(system)
        system = quirks.with_system_prompt_suffix(system, q.system_prompt_suffix)
        body["messages"] = [{"role": "system", "content": system}, *messages]
        body.update(s.request_fields())
        if s.extra_body:
            body["extra_body"] = dict(s.extra_body)
        return body

    async def respond(self, request: ModelRequest) -> ModelReply:
        body = self.request_body(request)
        notes: list[str] = []
        failed = resent = 0
        while True:
            try:
                streamed = await self._stream(body)
                break
            except (openai.APIError, StreamDropped) as e:
                if isinstance(e, openai.APIStatusError) and e.status_code in ACCESS_STATUS:
                    raise ModelAccessError(self._access_problem(e)) from None
                signal = signals.classify(e) if isinstance(e, openai.APIError) else None
                kind = signal.kind if signal else None
                if kind == signals.MALFORMED_CALL:
                    # The model wrote a call its provider would not take: sent again as the paper does for
                    # every model, then its own empty reply (scored), never the harness's failure.
                    if resent < self.config.quirks.resend_rejected_tool_calls:
                        resent += 1
                        notes.append(f"resent after a rejected tool call ({redact.cut(_server_message(e), 120)})")
                        continue
                    said = redact.cut(_server_message(e), 120)
                    notes.append(f"tool call rejected {resent + 1} times; no reply ({said})")
                    return ModelReply(notes=notes)
                status = getattr(e, "status_code", None)
                said = f"HTTP {status}" if status else "inside the stream"
                if kind == signals.OVERFLOW:
                    raise ModelContextOverflow(f"the conversation no longer fits the context of {self.config.model} "
                                               f"({said}: {redact.cut(_server_message(e), 300)})") from None
                if kind == signals.REFUSAL:
                    raise ModelRefusal(f"{self.config.base_url} refused what was said in the call ({said}: "
                                       f"{redact.cut(_server_message(e), 300)})") from None
                if kind == signals.REFUSED_REQUEST or (kind is None and not _is_transient(e)):
                    raise ModelRequestError(f"{self.config.base_url} refused the request for {self.config.model}"
                                            f"{f' (HTTP {status})' if status else ''}: {_server_message(e)}") from None
                failed += 1
                what = f"{type(e).__name__}: {redact.cut(_server_message(e), 160)}"
                # No answer at all: if the run started this server (--callm-serve) and it died, say how.
                dead = died(self.config.base_url) if isinstance(e, (openai.APIConnectionError, StreamDropped)) else None
                if dead:
                    raise ModelServerDied(dead) from None
                if failed >= self.retry.tries:
                    raise ModelCallError(f"{self.config.name}: {failed} tries failed; last: {what}") from None
                wait = self.retry.wait_s(failed, _retry_after(e))
                notes.append(f"retried after {what} (waited {wait:.2f} s)")
                await asyncio.sleep(wait)
        if self.sampler is not None:
            self.sampler.offer(request)
        text, tool_calls = streamed.text, streamed.tool_calls
        if self.config.quirks.lifts_calls_from_text and text:
            known = {t["function"]["name"] for t in request.tools}
            text, lifted = quirks.lift_tool_calls(text, known)
            if lifted:
                notes.append(f"lifted {len(lifted)} tool call(s) out of the text: {streamed.text!r}")
                tool_calls = [*tool_calls, *lifted]
        return ModelReply(text=text, tool_calls=tool_calls, reasoning=streamed.reasoning, ttft_ms=streamed.ttft_ms,
                          usage=streamed.usage, notes=notes + streamed.notes,
                          cuts=[streamed.cut] if streamed.cut else [])

    async def first_token_ms(self, request: ModelRequest) -> float | None:
        """Time to the first spoken or tool-call token of one request; stops reading there (replay).
        For an endpoint that does not stream, the full round trip of the request."""
        try:
            return (await self._stream(self.request_body(request), stop_at_first_token=True)).ttft_ms
        except openai.APIStatusError as e:
            if e.status_code in ACCESS_STATUS:
                raise ModelAccessError(self._access_problem(e)) from None
            raise

    def _access_problem(self, e: openai.APIStatusError) -> str:
        c = self.config
        where = f"the model server at {c.base_url}"
        message = _server_message(e)
        if e.status_code == 401:
            key = f"the API key in ${c.api_key_env}" if c.api_key_env else "requests without an API key"
            return (f"{where} rejected {key} (HTTP 401: {message}). Check the key, or name another variable "
                    "with --callm-api-key-env.")
        if e.status_code == 403:
            return f"{where} refused access to model {c.model!r} (HTTP 403: {message})."
        return (f"{where} has no model {c.model!r} or no chat completions endpoint (HTTP 404: {message}). "
                f"Check `model` and `base_url` in {c.source}, or --callm-base-url.")

    async def _stream(self, body: dict[str, Any], stop_at_first_token: bool = False) -> _Streamed:
        try:
            async with asyncio.timeout(self.retry.deadline_s):
                if not body.get("stream"):
                    return await self._read_whole(body)
                return await self._read_stream(body, stop_at_first_token)
        except TimeoutError:
            raise DeadlinePassed(f"no complete reply within the request deadline of {self.retry.deadline_s:g} s") \
                from None

    async def _post_stream(self, body: dict[str, Any]) -> openai.AsyncStream[dict[str, Any]]:
        """`chat.completions.create(**body, stream=True)` less the SDK's two walks, chunks as plain
        JSON: it copies every message and tool schema through its type transforms on each request
        and builds a model object per streamed chunk (together about 9 ms of CPU for a request of a
        legal call, against 1 ms for the rest). The SDK still sends it, and reads its errors."""
        params = dict(body)
        extra = params.pop("extra_body", None)
        return await self.client().post(
            "/chat/completions", body=params, cast_to=object, stream=True, stream_cls=openai.AsyncStream[object],
            options=make_request_options(extra_body=extra, security={"bearer_auth": True}))

    async def _read_stream(self, body: dict[str, Any], stop_at_first_token: bool) -> _Streamed:
        ttft_ms = None
        reader = ReplyReader(microthinking.ThoughtSplitter() if self.config.mode.microthinking else None)
        sent: list[float] = []
        context = _sent_at.set(sent)
        try:
            started = time.perf_counter()  # replaced by the send time once the hook has run
            stream = await self._post_stream(body)
        finally:
            _sent_at.reset(context)
        started = sent[-1] if sent else started
        try:
            async for chunk in _json_chunks(stream):
                cut = reader.feed(chunk)  # within the reply's bounds: a model that never stops is cut here
                if ttft_ms is None and reader.has_token:
                    ttft_ms = (time.perf_counter() - started) * 1000
                if cut or (stop_at_first_token and ttft_ms is not None):
                    break
        finally:
            await stream.close()
        if not (reader.finished or reader.cut or (stop_at_first_token and ttft_ms is not None)):
            raise StreamDropped("the stream ended before the model finished its reply")
        garbled = _not_utf8(stream)
        text, thought, notes = reader.text, None, []
        splitter = reader.splitter
        if splitter is not None:
            tail = splitter.finish() if not reader.cut else ""
            if tail:
                ttft_ms = ttft_ms if ttft_ms is not None else (time.perf_counter() - started) * 1000
                text.append(tail)  # bounded by the text read (reply_reader); cut with the rest
            thought, notes = splitter.thought, _thought_notes(splitter)
        if garbled:
            notes = [*notes, NOT_UTF8_NOTE.format(n=garbled)]
        if reader.filtered:
            notes = [*notes, FILTERED_NOTE]
        return _Streamed("".join(text), reader.tool_calls(), _joined("".join(reader.reasoning), thought), ttft_ms,
                         reader.usage, notes, reader.cut)

    async def _read_whole(self, body: dict[str, Any]) -> _Streamed:
        """One request to an endpoint that does not stream: the reply, and the round trip as its TTFT."""
        sent: list[float] = []
        context = _sent_at.set(sent)
        try:
            started = time.perf_counter()  # replaced by the send time once the hook has run
            params = dict(body)
            extra = params.pop("extra_body", None)
            unread = await self.client().post("/chat/completions", body=params, cast_to=object, stream=True,
                                              stream_cls=openai.AsyncStream[object], options=make_request_options(
                                                  extra_body=extra, security={"bearer_auth": True}))
            raw = await _body_within(unread.response, MAX_READ_CHARS)  # the SSE reader never starts
            ttft_ms = (time.perf_counter() - (sent[-1] if sent else started)) * 1000
        finally:
            _sent_at.reset(context)
        if raw is None:  # a model that never stopped, answered whole: bounded like a stream, never held
            return _Streamed("", [], None, None, None, [], f"the reply's body passed {MAX_READ_CHARS:,} bytes; "
                                                          "cut there, unread")
        garbled = 0
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:  # read as U+FFFD: a reply if it still parses (the model's), else broken
            garbled, text = 1, raw.decode("utf-8", "replace")
        try:
            data = read_json(text)
        except json.JSONDecodeError as e:
            why = NOT_UTF8_BROKEN if garbled else ""
            raise StreamDropped(f"the reply is not JSON {why}({e.msg} at {e.pos})") from None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not choices or not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
            raise StreamDropped(f"the reply is not a chat completion: {redact.cut(str(data), 80)}")
        message = choices[0]["message"]
        content = message.get("content") or ""
        if isinstance(content, list):  # content parts: the text ones are spoken
            content = "".join(part.get("text") or "" for part in content if isinstance(part, dict))
        thought, notes = None, [NOT_UTF8_NOTE.format(n=garbled)] if garbled else []
        if self.config.mode.microthinking:
            content, thought, unclosed = microthinking.split(content)
            notes += [microthinking.UNCLOSED_NOTE] if unclosed else []
        tool_calls = []
        for i, tc in enumerate(message.get("tool_calls") or []):
            function = tc.get("function") or {}
            arguments = function.get("arguments")
            tool_calls.append(ToolCall(tc.get("id") or f"call_{i}", function.get("name") or "",
                                       arguments if isinstance(arguments, str) else json.dumps(arguments or {})))
        return _Streamed(content, tool_calls, _joined(reasoning_piece(message) or "", thought),
                         ttft_ms if content or tool_calls else None, usage_from(data.get("usage")), notes)


async def _body_within(response: httpx2.Response, limit: int) -> bytes | None:
    """The whole body, or None once it passes `limit` bytes (the rest is not read)."""
    parts, size = [], 0
    try:
        async for piece in response.aiter_bytes():
            size += len(piece)
            if size > limit:
                return None
            parts.append(piece)
    finally:
        await response.aclose()
    return b"".join(parts)


def _joined(reasoning: str, thought: str | None) -> str | None:
    """The server's reasoning and the marked thought, as one reasoning text."""
    return "\n".join(part for part in (reasoning, thought) if part) or None


def _thought_notes(splitter: microthinking.ThoughtSplitter) -> list[str]:
    return [microthinking.UNCLOSED_NOTE] if splitter.unclosed else []
