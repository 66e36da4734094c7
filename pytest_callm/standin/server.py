"""The stand-in model server: a local OpenAI-compatible Chat Completions server that plays scripted
behaviour, so the real model client, phone line and caller can run with no key and no model.

FastAPI, streaming Server-Sent Events like the Chat Completions API: a role chunk at once, then
(after the configured delay) reasoning, text and tool calls in small pieces, a finish chunk, a
usage chunk and `[DONE]`. A request without `"stream": true` gets the same reply as one
`chat.completion` JSON body (the stream-shaping keys below then do not apply).

What a chat request gets, first match wins:
1. a request offering the `hang_up` tool, when the server has a one-task `caller` (players.py):
   the next queued caller step, else the caller's next line;
2. the next queued step (`ScriptedServer.script(...)`: how tests make a model misbehave);
3. the player named by the request's `model` (`players`: model id -> an object with `step(body)`),
   which is how one server plays several models at once (`callm serve-stand-in`, `callm demo`);
4. the one-task answer-key `agent`, when the server has one;
5. a default line.

A step is a dict:
    text, reasoning, tool_calls=[{"name", "arguments": dict or raw string}]  what the model writes
    delay_ms        before the first token (default: the server's delay_ms)
    total_ms        from arrival to the finish chunk (default: the server's total_ms; 0: no wait)
    reasoning_ms    spent on reasoning before the first spoken token
    piece_chars     characters per streamed piece (default 4; tool arguments split the same way)
    piece_ms        wait this long after each streamed text piece (a model writing as it goes)
    usage           {"prompt_tokens", "cached_tokens", "completion_tokens", "reasoning_tokens"}
                    (default: estimated from the characters, about 4 a token)
    no_usage        send no usage chunk (a server that reports none, as some do)
    status          answer with this HTTP error instead (with `code`, `message`, `retry_after`; or `body`:
                    this JSON sent as the whole error body, as a given server words it)
    drop_after      abort the connection after this many content pieces
    end_early       end the stream cleanly but without a finish reason
    stream_error    send this error object inside the stream (after the role chunk)
    stream_body     send this JSON as one whole event inside the stream (after the role chunk), then end:
                    a server's in-stream error in its own shape (`{"error": "..."}` for TGI)
    hang_s          wait this long before anything after the role chunk (timeouts)
    keepalive_s     send only SSE comments (`: keep-alive`), every 50 ms, this long after the role chunk
    endless         after the role chunk, send text pieces every 10 ms and never finish; a dict: send it as
                    the delta of every chunk (every `piece_ms`, default 0), never finishing (a model in a loop);
                    the log's `endless_sent` counts them
    invalid_utf8    "text": bytes that are not UTF-8 inside a text piece's JSON string (a reply that still
                    parses); "frame": such bytes where the chunk's JSON should be (a broken stream)
    raw_chunks      these chunk objects, sent as they are after the role chunk (before the text and
                    tool calls): a server that writes fields of the wrong type
    raw_chunks_text the same, as JSON text sent verbatim (what `json.dumps` will not write: a huge integer)

Server-wide settings (`Behaviour`): `hold` (a `threading.Event`: while it is clear, every request waits
after its first chunk), `delay_ms` and `total_ms` (as in a step), `api_key` (401 for any other bearer
token), `models` (404 for others; the players' ids are always served), `require_user_first` (400 when
the conversation does not open with a user message, as some providers do), `no_stream` (every request
gets one JSON body, even one asking for a stream, as an endpoint that cannot stream does), `echo_auth`
(every error message repeats the Authorization header, as careless gateways do), `strict_history` (400
in vLLM's words when a tool call in the history has arguments that are not a JSON object, as vLLM
parses them all), `agent`, `caller` and `players` (above).

`ScriptedServer(...)` runs it in a thread of this process on an ephemeral port (`with ScriptedServer()
as server:`; `server.script(...)`, `server.requests`); `serve(...)` runs it in the foreground, as
`callm serve-stand-in` does (cli.py).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections import deque
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

DEFAULT_MODEL = "scripted"
DEFAULT_TEXT = "How can I help you today?"
# Idle connections are kept longer than any client keeps them (aiohttp 15 s, httpx 5 s): uvicorn's
# default of 5 s closed connections the client was about to reuse, a ServerDisconnectedError under load.
KEEP_ALIVE_S = 75


class Behaviour:
    def __init__(self, *, api_key: str | None = None, delay_ms: float = 0.0, total_ms: float = 0.0,
                 models=(DEFAULT_MODEL,), agent=None, caller=None, players: dict[str, Any] | None = None,
                 require_user_first: bool = False, echo_auth: bool = False, piece_chars: int = 4,
                 no_stream: bool = False, hold: threading.Event | None = None, strict_history: bool = False,
                 keep_log: bool = True):
        self.api_key = api_key
        self.hold = hold  # set: requests are answered; clear: each waits here for it (a test's event)
        self.piece_chars = piece_chars  # characters a streamed chunk carries (a token is ~4)
        self.delay_ms = delay_ms
        self.total_ms = total_ms
        self.players = dict(players or {})  # model id -> a player: `step(body)` -> a step
        self.models = list(dict.fromkeys([*models, *self.players]))
        self.agent = agent  # plays one task's answer key (players.AnswerKeyAgent)
        self.caller = caller  # answers the requests that offer hang_up (players.ScriptCaller)
        self.require_user_first = require_user_first
        self.echo_auth = echo_auth
        self.no_stream = no_stream
        self.strict_history = strict_history
        self.steps: deque[dict[str, Any]] = deque()
        self.caller_steps: deque[dict[str, Any]] = deque()  # taken first by the caller's requests (errors)
        self.log: list[dict[str, Any]] = []  # every chat request: body, start, end, status
        self.keep_log = keep_log  # off for a long-lived server: the log would grow without bound

    def note(self, record: dict[str, Any]) -> None:
        if self.keep_log:
            self.log.append(record)

    def next_step(self, body: dict[str, Any]) -> dict[str, Any]:
        if self.caller is not None and offers_hang_up(body):
            return self.caller_steps.popleft() if self.caller_steps else self.caller.step(body)
        if self.steps:
            return self.steps.popleft()
        player = self.players.get(body.get("model"))
        if player is not None:
            return player.step(body)
        if self.agent is not None:
            return self.agent.step(body)
        return {"text": DEFAULT_TEXT}


def offers_hang_up(body: dict[str, Any]) -> bool:
    """A request is the simulated caller's when it offers the caller's `hang_up` tool."""
    return any((t.get("function") or {}).get("name") == "hang_up" for t in body.get("tools") or [])


def _error(status: int, message: str, code: str | None = None, kind: str = "invalid_request_error",
           headers: dict[str, str] | None = None, **extra) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": code, "param": None, **extra}},
                        status_code=status, headers=headers)


def _unreadable_history(messages: list[dict[str, Any]]) -> str | None:
    """What vLLM says of a history whose tool-call arguments it cannot parse (it reads each one as JSON
    for the chat template), or None."""
    for message in messages:
        for call in message.get("tool_calls") or []:
            try:
                value = json.loads(call["function"]["arguments"])
            except json.JSONDecodeError as e:
                return f"{e.msg}: line {e.lineno} column {e.colno} (char {e.pos})"
            if not isinstance(value, dict):
                return "'list' object has no attribute 'items'"
    return None


def _pieces(text: str, size: int) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] if text else []


def _estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value)) // 4)


def create_app(state: Behaviour) -> FastAPI:
    app = FastAPI()

    @app.get("/health")
    async def health():
        return {"ok": True}

    @app.get("/v1/models")
    async def models():
        return {"object": "list", "data": [{"id": m, "object": "model", "owned_by": "tests"} for m in state.models]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request):
        record: dict[str, Any] = {"start": time.perf_counter(), "end": None, "status": 200}
        echo = f" (request had Authorization: {request.headers.get('authorization')})" if state.echo_auth else ""
        if state.api_key is not None and request.headers.get("authorization") != f"Bearer {state.api_key}":
            record.update(status=401, end=time.perf_counter())
            state.note(record)
            return _error(401, "Incorrect API key provided." + echo, "invalid_api_key")
        body = await request.json()
        record["body"] = body
        state.note(record)
        if body.get("model") not in state.models:
            record.update(status=404, end=time.perf_counter())
            return _error(404, f"The model `{body.get('model')}` does not exist.", "model_not_found")
        first = next((m for m in body["messages"] if m["role"] != "system"), None)
        if state.require_user_first and (first is None or first["role"] != "user"):
            record.update(status=400, end=time.perf_counter())
            return _error(400, "The first message after the system prompt must come from the user.")
        unreadable = _unreadable_history(body["messages"]) if state.strict_history else None
        if unreadable is not None:
            record.update(status=400, end=time.perf_counter())
            return JSONResponse({"object": "error", "message": unreadable, "type": "BadRequestError", "param": None,
                                 "code": 400}, status_code=400)
        step = state.next_step(body)
        if "status" in step:
            record.update(status=step["status"], end=time.perf_counter())
            headers = {"retry-after": str(step["retry_after"])} if "retry_after" in step else None
            if "body" in step:
                return JSONResponse(step["body"], status_code=step["status"], headers=headers)
            extra = {"failed_generation": step["failed_generation"]} if "failed_generation" in step else {}
            return _error(step["status"], step.get("message", "scripted error") + echo, step.get("code"),
                          headers=headers, **extra)
        if not body.get("stream") or state.no_stream:  # a client that does not stream (verifiers' does not) gets one JSON body
            whole = await _whole(state, step, body, record)
            if step.get("invalid_utf8"):
                raw = json.dumps(whole).encode()
                raw = (raw.replace(b'"content": "', b'"content": "\x80\xff', 1) if step["invalid_utf8"] == "text"
                       else b"\xff\xfe" + raw[1:])
                return Response(raw, media_type="application/json")
            return JSONResponse(whole)
        return StreamingResponse(_stream(state, step, body, record), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})

    return app


async def _stream(state: Behaviour, step: dict[str, Any], body: dict[str, Any], record: dict[str, Any]):
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:16]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any] | None, finish: str | None = None, usage: dict | None = None) -> str:
        choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        payload = {"id": completion_id, "object": "chat.completion.chunk", "created": created,
                   "model": body["model"], "choices": choices, "usage": usage}
        return f"data: {json.dumps(payload)}\n\n"

    size = step.get("piece_chars", state.piece_chars)
    yield chunk({"role": "assistant", "content": ""})
    await _held(state)
    if "stream_error" in step or "stream_body" in step:
        yield f"data: {json.dumps(step.get('stream_body', {'error': step.get('stream_error')}))}\n\n"
        record["end"] = time.perf_counter()
        return
    if step.get("hang_s"):
        await asyncio.sleep(step["hang_s"])
    keepalive_until = time.perf_counter() + step.get("keepalive_s", 0)
    while time.perf_counter() < keepalive_until:
        yield ": keep-alive\n\n"
        await asyncio.sleep(0.05)
    endless = step.get("endless")
    record["endless_sent"] = 0
    while endless:  # until the client hangs up: the server then stops this generator
        yield chunk(endless if isinstance(endless, dict) else {"content": "and "})
        record["endless_sent"] += 1
        await asyncio.sleep(step.get("piece_ms", 0) / 1000 if isinstance(endless, dict) else 0.01)
    # The delay counts from the request's arrival.
    await _until(record["start"] + step.get("delay_ms", state.delay_ms) / 1000)
    sent = 0
    drop_after = step.get("drop_after")

    def dropping() -> bool:
        return drop_after is not None and sent >= drop_after

    for raw in step.get("raw_chunks", []):
        yield f"data: {json.dumps(raw)}\n\n"
    for raw in step.get("raw_chunks_text", []):
        yield f"data: {raw}\n\n"
    for piece in _pieces(step.get("reasoning", ""), size):
        yield chunk({"reasoning_content": piece})
    if step.get("reasoning_ms"):
        await asyncio.sleep(step["reasoning_ms"] / 1000)
    if step.get("invalid_utf8") == "frame":
        yield b"data: \xff\xfe{\x80\n\n"
    for piece in _pieces(step.get("text", ""), size):
        if step.get("invalid_utf8") == "text" and sent == 0:
            yield chunk({"content": piece + "<RAW>"}).encode().replace(b"<RAW>", b"\x80\xff")  # raw, in the string
        else:
            yield chunk({"content": piece})
        sent += 1
        if step.get("piece_ms"):
            await asyncio.sleep(step["piece_ms"] / 1000)
        if dropping():
            raise ConnectionAbortedError("scripted: the stream drops here")
    calls = step.get("tool_calls", [])
    for index, call in enumerate(calls):
        arguments = call["arguments"] if isinstance(call["arguments"], str) else json.dumps(call["arguments"])
        yield chunk({"tool_calls": [{"index": index, "id": call.get("id", f"call_{uuid.uuid4().hex[:10]}"),
                                     "type": "function", "function": {"name": call["name"], "arguments": ""}}]})
        for piece in _pieces(arguments, size):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
            sent += 1
            if dropping():
                raise ConnectionAbortedError("scripted: the stream drops here")
    if step.get("end_early"):
        record["end"] = time.perf_counter()
        return
    if step.get("malformed_chunk"):  # a chunk cut mid-JSON, as a broken proxy passes it on
        yield 'data: {"id": "chatcmpl-x", "choices": [{"delta": {"content": "and th\n\n'
    await _until(record["start"] + step.get("total_ms", state.total_ms) / 1000)
    yield chunk({}, "tool_calls" if calls else "stop")
    if not step.get("no_usage"):
        yield chunk(None, usage=_usage(step, body))
    yield "data: [DONE]\n\n"
    record["end"] = time.perf_counter()


def _usage(step: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    u = step.get("usage", {})
    calls = step.get("tool_calls", [])
    prompt = u.get("prompt_tokens", _estimate_tokens(body["messages"]) + _estimate_tokens(body.get("tools", [])))
    output = step.get("text", "") + json.dumps(calls) if calls else step.get("text", "")
    reasoning_tokens = u.get("reasoning_tokens", _estimate_tokens(step["reasoning"]) if step.get("reasoning") else 0)
    completion = u.get("completion_tokens", _estimate_tokens(output) + reasoning_tokens)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": u.get("cached_tokens", prompt // 2)},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens}}


async def _held(state: Behaviour) -> None:
    """Wait while the server holds its requests (`hold` clear): a test releases them on an event."""
    while state.hold is not None and not state.hold.is_set():
        await asyncio.sleep(0.01)


async def _whole(state: Behaviour, step: dict[str, Any], body: dict[str, Any], record: dict[str, Any]) -> dict:
    """The step as one `chat.completion` (no stream), sent after the step's total time."""
    await _held(state)
    delay_ms = max(step.get("delay_ms", state.delay_ms), step.get("total_ms", state.total_ms))
    await _until(record["start"] + delay_ms / 1000)
    calls = [{"id": call.get("id", f"call_{uuid.uuid4().hex[:10]}"), "type": "function",
              "function": {"name": call["name"], "arguments": call["arguments"] if isinstance(call["arguments"], str)
                           else json.dumps(call["arguments"])}} for call in step.get("tool_calls", [])]
    message: dict[str, Any] = {"role": "assistant", "content": step.get("text") or None}
    if calls:
        message["tool_calls"] = calls
    if step.get("reasoning"):
        message["reasoning_content"] = step["reasoning"]
    record["end"] = time.perf_counter()
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:16]}", "object": "chat.completion", "created": int(time.time()),
            "model": body["model"], "usage": _usage(step, body),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                         "logprobs": None}]}


async def _until(deadline: float) -> None:
    """Wait until `deadline` (never less): the loop's timers wake late, by a millisecond or two, never
    early. A busy wait for the last stretch made them exact, but it held the GIL of the process serving
    (a test's, with the engine beside it) for up to 3 ms of every reply."""
    while (remaining := deadline - time.perf_counter()) > 0:
        await asyncio.sleep(remaining)


def listen(port: int = 0, host: str = "127.0.0.1") -> socket.socket:
    """A listening socket (port 0: a free one), handed to uvicorn: the port is known, and connections
    wait in the backlog instead of being refused, before the server has started."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)  # TCP_NODELAY on accept
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def serve(app: FastAPI, sock: socket.socket) -> None:
    """Serve in the foreground until SIGINT or SIGTERM (uvicorn handles both and finishes in-flight replies)."""
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_keep_alive=KEEP_ALIVE_S)
    uvicorn.Server(config).run(sockets=[sock])


class ScriptedServer:
    """The server on 127.0.0.1 at an ephemeral port, in a thread of this process."""

    def __init__(self, **behaviour):
        self.state = Behaviour(**behaviour)
        self._sock = listen()
        self.url = f"http://127.0.0.1:{self._sock.getsockname()[1]}"
        self.base_url = self.url + "/v1"
        config = uvicorn.Config(create_app(self.state), log_level="critical", access_log=False, lifespan="off",
                                timeout_keep_alive=KEEP_ALIVE_S)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True)

    def start(self) -> "ScriptedServer":
        self._thread.start()
        while not self._server.started:
            if not self._thread.is_alive():
                raise RuntimeError("the stand-in model server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)

    def __enter__(self) -> "ScriptedServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def reset(self, **behaviour) -> "ScriptedServer":
        """Back to a fresh state (queue and log emptied), with these settings."""
        fresh = Behaviour(**behaviour)
        self.state.__dict__.update(fresh.__dict__)
        return self

    def script(self, *steps: dict[str, Any]) -> "ScriptedServer":
        self.state.steps.extend(steps)
        return self

    @property
    def requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat requests received, in order (those refused before reading excluded)."""
        return [r["body"] for r in self.state.log if "body" in r]

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.state.log


