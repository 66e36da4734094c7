"""The tool server (DESIGN §4): one FastAPI app that serves the tools of any number of packs.

Routes, per pack:
    POST /packs/{pack}/tools/{name}   JSON arguments, call id in the X-Call-Id header
    GET  /packs/{pack}/state          that call's compared tables
    GET  /health                      liveness, and the packs served with their content hashes

    POST /packs/{pack}/call           create the call's database (X-Call-Id), from the seed
    DELETE /packs/{pack}/call         remove it, once the call's final state has been read

More routes can be mounted on the same app (`mounts`: callables given the app once its own routes
are in place), so a layer above, such as an RL adapter, serves from this server without this layer
knowing it.

Every answer is the result envelope (the state's tables are its `data`). Bad arguments (schema
violations, nesting too deep, lone surrogates, too long) are an `ok: false` envelope with
`error_code: invalid_arguments` (HTTP 200: the model is meant to read it); a body that is not JSON
is a 400, a missing or malformed call id a 400, an unknown pack, tool or call a 404, a body over
MAX_BODY_BYTES a 413 (refused on its Content-Length before a byte of it is read, or as soon as a
streamed one passes the limit), a new call past the store's limit of live calls a 429. Only a bug
in a pack's own code gives a 500, which the engine treats as an infrastructure error rather than a
model failure; its traceback goes to the server's stderr, never into a response (it holds the
server's paths).
"""

from __future__ import annotations

import hmac
import json
import os
import re
import signal
import socket
import sqlite3
import sys
import threading
import time
import traceback
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from pytest_callm.toolserver.calldb import (AGENT_HEADER, AUDIT_HEADER, CALL_ID_HEADER, MAX_LIVE_CALLS,
                                            REQUEST_HEADER, SERVER_KEEPALIVE_S, TOKEN_ENV, TOKEN_HEADER,
                                            CallStore, TooManyCalls, valid_call_id, valid_records)
from pytest_callm.toolserver.scratch import DATA_DIR_PREFIX, OWNER_FILE, ScratchDir, sweep_leftovers  # noqa: F401
from pytest_callm.toolserver.lanes import TOOL_TIME_BOUND_S, Lanes, LaneTimedOut
from pytest_callm.toolserver.tool_runner import SORRY, run_tool
from pytest_callm.toolserver.process import START_TIMEOUT_S, ToolServer  # noqa: F401  (importable from here too)
from pytest_callm.model.output import MAX_ARGUMENT_CHARS, NOT_JSON, NOT_UTF8, clean_text, parse_arguments
from pytest_callm.task.digest import pack_hash
from pytest_callm.task.pack import Pack
from pytest_callm import gc_pace
from pytest_callm.toolkit import envelope

Mount = Callable[[FastAPI], None]  # adds routes to the tool server's app
# The largest request body any route reads. The engine sends at most MAX_ARGUMENT_CHARS characters
# of arguments, each at most 12 bytes once JSON-escaped (an astral character as two escaped
# surrogates, six bytes each); an RL
# adapter's rollout body is a few hundred kB. Anything larger is refused unread.
MAX_BODY_BYTES = max(12 * MAX_ARGUMENT_CHARS, 4 * 1024 * 1024)
_PATH = re.compile(r"(?:[A-Za-z]:)?[\\/](?:[^\s\\/'\"]+[\\/])+[^\s\\/'\"]*")


class SafeJSONResponse(JSONResponse):
    """Always encodable: a lone surrogate that reached a message (a tool echoing its input) becomes U+FFFD."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return super().render(json.loads(clean_text(json.dumps(content, ensure_ascii=False))))


def _reply(status: int, body: dict[str, Any]) -> JSONResponse:
    return SafeJSONResponse(body, status_code=status)


def describe_crash(error: BaseException) -> str:
    """The exception's type and message, with file paths taken out (they are the server's business)."""
    return _PATH.sub("<path>", "".join(traceback.format_exception_only(type(error), error)).strip())


class _BodyTooLarge(Exception):
    """Raised from the request's receive channel once a streamed body passes MAX_BODY_BYTES."""


def _too_large(size: str) -> JSONResponse:
    return _reply(413, envelope(False, {"max_bytes": MAX_BODY_BYTES}, "body_too_large",
                                f"the request body is {size} bytes, over the tool server's limit of "
                                f"{MAX_BODY_BYTES:,}"))


class BodyLimit:
    """ASGI middleware: a body over `MAX_BODY_BYTES` is refused with a 413 envelope before it is read.

    A declared Content-Length over the limit is answered at once; a streamed (chunked) body is cut
    as soon as what arrived passes the limit. Either way the server never holds more than the
    limit, and the connection stays usable (the server drops the rest of the body as it arrives).
    """

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > MAX_BODY_BYTES:
            return await _too_large(f"{int(declared):,}")(scope, receive, send)
        received = 0
        started = False

        async def limited_receive():
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > MAX_BODY_BYTES:
                    raise _BodyTooLarge
            return message

        async def watched_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited_receive, watched_send)
        except _BodyTooLarge:
            if started:
                raise
            await _too_large(f"over {received:,}")(scope, receive, send)


def create_app(packs: dict[str, Pack], data_dir: Path, mounts: Iterable[Mount] = (),
               max_live_calls: int = MAX_LIVE_CALLS, token: str | None = None, keep_files: bool = False,
               tool_time_bound_s: float = TOOL_TIME_BOUND_S) -> FastAPI:
    """The app. With `token`, the call routes (`/packs/...`) answer only requests carrying it in
    `TOKEN_HEADER` (403 otherwise); `/health` and mounted routes check their own callers. With
    `keep_files`, removing a call closes it and leaves its file in `data_dir`. A call's work runs in
    its lane (lanes.py): off the event loop, within `tool_time_bound_s`."""
    stores = {name: CallStore(pack, data_dir, max_live_calls, keep_files) for name, pack in packs.items()}
    lanes = Lanes(tool_time_bound_s)

    def timed_out(store: CallStore, what: str, error: LaneTimedOut) -> JSONResponse:
        """A tool past its time bound: the pack's failure, like a crash (the engine plays the call again)."""
        return _reply(500, envelope(False, None, "tool_timed_out", f"{store.pack.name}.{what}: {error}"))
    app = FastAPI(title="pytest-callm tool server", docs_url=None, redoc_url=None, openapi_url=None)

    def locate(request: Request) -> tuple[CallStore, str] | JSONResponse:
        if token is not None and not hmac.compare_digest(request.headers.get(TOKEN_HEADER, "").encode(),
                                                         token.encode()):
            return _reply(403, envelope(False, None, "forbidden", f"the call routes of this server need its "
                                                                  f"token in {TOKEN_HEADER}"))
        pack_name = request.path_params["pack_name"]
        store = stores.get(pack_name)
        if store is None:
            return _reply(404, envelope(False, {"packs": sorted(stores)}, "unknown_pack",
                                        f"No industry pack named {pack_name!r} is served here."))
        call_id = request.headers.get(CALL_ID_HEADER)
        if not valid_call_id(call_id):
            return _reply(400, envelope(False, None, "bad_call_id",
                                        f"{CALL_ID_HEADER} must match [A-Za-z0-9_-]{{1,64}}"))
        return store, call_id

    # Each pack's content hash: a run that names this server (--callm-tool-server) checks that it serves
    # the very packs the run scores against, not others of the same names.
    digests = {name: pack_hash(pack) for name, pack in sorted(packs.items())}

    async def health(request: Request) -> JSONResponse:
        return _reply(200, {"status": "ok", "packs": sorted(stores), "pack_digests": digests})

    async def call_tool(request: Request) -> JSONResponse:
        located = locate(request)
        if isinstance(located, JSONResponse):
            return located
        store, call_id = located
        tool = request.path_params["tool"]
        spec = store.pack.tools.get(tool)
        if spec is None or spec.kind != "industry":
            what = "is handled by the engine, not the tool server" if spec else "does not exist"
            return _reply(404, envelope(False, None, "unknown_tool", f"Tool {tool!r} {what}."))
        # The same rules as the engine's (model_output): nothing a client sends can crash the parse.
        arguments, problem = parse_arguments(await request.body())
        if problem in (NOT_JSON, NOT_UTF8):
            return _reply(400, envelope(False, None, "bad_request", f"body: {problem}"))
        if problem is not None:
            return _reply(200, envelope(False, {"problems": [problem]}, "invalid_arguments", SORRY))
        try:
            audit: dict[str, Any] = {}
            desk = request.headers.get(AGENT_HEADER)
            desk = desk if desk in store.pack.agents else None  # only an agent of the pack
            request_id = request.headers.get(REQUEST_HEADER)
            request_id = request_id if valid_call_id(request_id) else None
            result = await lanes.run((store.pack.name, call_id), lambda: run_tool(
                store.pack, store, call_id, tool, arguments, audit, agent=desk, request_id=request_id))
            reply = _reply(200, result)
            reply.headers[AUDIT_HEADER] = json.dumps(audit, separators=(",", ":"))
            return reply
        except TooManyCalls as e:
            return too_many(e)
        except LaneTimedOut as e:
            return timed_out(store, tool, e)
        except Exception as e:
            traceback.print_exc()  # for whoever runs the server; a response never carries it
            return _reply(500, envelope(False, None, "tool_crashed",
                                        f"{store.pack.name}.{tool} raised {describe_crash(e)}"))

    def too_many(error: TooManyCalls) -> JSONResponse:
        return _reply(429, envelope(False, None, "too_many_calls", str(error)))

    def unknown_call(call_id: str) -> JSONResponse:
        return _reply(404, envelope(False, None, "unknown_call", f"no call {call_id!r} here (never started, "
                                                                 "or already removed)"))

    async def state(request: Request) -> JSONResponse:
        located = locate(request)
        if isinstance(located, JSONResponse):
            return located
        store, call_id = located
        if not store.exists(call_id):
            return unknown_call(call_id)  # never a new database for a mistyped id
        try:
            return _reply(200, envelope(True, await lanes.run((store.pack.name, call_id),
                                                              lambda: store.snapshot(call_id))))
        except LaneTimedOut as e:
            return timed_out(store, "state", e)

    async def start_call(request: Request) -> JSONResponse:
        located = locate(request)
        if isinstance(located, JSONResponse):
            return located
        store, call_id = located
        # An optional body {"records": {table: [row, ...]}}: the task's own rows on top of the seed.
        raw = await request.body()
        try:
            records = json.loads(raw).get("records") if raw else None
        except (ValueError, AttributeError):
            records = "?"
        if not valid_records(records):
            return _reply(400, envelope(False, None, "bad_request",
                                        'body: {"records": {table: [{column: value, ...}, ...]}}'))
        try:
            await lanes.run((store.pack.name, call_id), lambda: store.connection(call_id, records))
        except TooManyCalls as e:
            return too_many(e)
        except LaneTimedOut as e:
            return timed_out(store, "call", e)
        except sqlite3.Error as e:  # a row the schema refuses: the task's fault, told to its client
            return _reply(400, envelope(False, None, "bad_records", f"records do not fit the pack's schema: {e}"))
        return _reply(200, envelope(True, {"call_id": call_id}))

    async def remove_call(request: Request) -> JSONResponse:
        located = locate(request)
        if isinstance(located, JSONResponse):
            return located
        store, call_id = located
        if not store.exists(call_id):
            return unknown_call(call_id)
        try:
            await lanes.run((store.pack.name, call_id), lambda: store.remove(call_id))
        except LaneTimedOut as e:  # its file goes with the server's scratch folder
            return timed_out(store, "call", e)
        return _reply(200, envelope(True, {"call_id": call_id}))

    async def not_found(request: Request, exc) -> JSONResponse:
        return _reply(getattr(exc, "status_code", 404), envelope(False, None, "not_found", "no such route"))

    async def crashed(request: Request, exc) -> JSONResponse:
        traceback.print_exception(exc)
        return _reply(500, envelope(False, None, "server_error", describe_crash(exc)))

    # Plain request handlers (no FastAPI parameter injection): a tool request is a few
    # sub-millisecond SQLite statements, and the injection layer cost more than the work. The work
    # of a call runs in its lane (a thread per request, one request of a call at a time): a tool
    # that hangs stalls its own call, never the loop.
    app.add_route("/health", health, methods=["GET"])
    app.add_route("/packs/{pack_name}/tools/{tool}", call_tool, methods=["POST"])
    app.add_route("/packs/{pack_name}/state", state, methods=["GET"])
    app.add_route("/packs/{pack_name}/call", start_call, methods=["POST"])
    app.add_route("/packs/{pack_name}/call", remove_call, methods=["DELETE"])
    # Even a wrong route or method answers with the envelope.
    from starlette.exceptions import HTTPException

    app.add_exception_handler(HTTPException, not_found)
    app.add_exception_handler(Exception, crashed)
    app.add_middleware(BodyLimit)  # inside the crash handler, outside the routes (mounted ones too)
    for mount in mounts:
        mount(app)
    return app


def serve(pack_dirs: list[Path], port: int = 0, announce=print, watch_stdin: bool = True,
          data_dir: Path | None = None, mounts: Iterable[Mount] = (), max_live_calls: int = MAX_LIVE_CALLS,
          token: str | None = None, tool_time_bound_s: float = TOOL_TIME_BOUND_S) -> None:
    """Serve the packs until interrupted, or (as the plugin's child) until stdin closes.

    Call databases live in `data_dir` when given (kept afterwards, for debugging: removing a call
    closes it and leaves its file), else in a scratch folder that is removed at the end.
    """
    from pytest_callm.task.pack import load_pack

    packs = {}
    for d in pack_dirs:
        pack = load_pack(Path(d), scoring=False)  # a tool server never scores: no words compiled
        packs[pack.name] = pack
    keep_files = data_dir is not None
    with ScratchDir(data_dir) as data_dir:
        # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose protocol
        # says TCP, and without it every response waits ~40 ms for a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        config = uvicorn.Config(create_app(packs, Path(data_dir), mounts, max_live_calls, token, keep_files,
                                           tool_time_bound_s), log_level="warning",
                                access_log=False, lifespan="off", timeout_keep_alive=SERVER_KEEPALIVE_S)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
        thread.start()
        while not server.started:
            if not thread.is_alive():
                raise SystemExit("the tool server failed to start")
            time.sleep(0.005)
        announce(f"http://127.0.0.1:{sock.getsockname()[1]}")
        signal.signal(signal.SIGTERM, signal.default_int_handler)  # clean up the call files on SIGTERM too
        try:
            if watch_stdin:
                while sys.stdin.readline():  # parent gone or closed the pipe: stop
                    pass
            else:
                while True:
                    time.sleep(3600)
        except KeyboardInterrupt:
            pass
        server.should_exit = True
        thread.join(timeout=10)


def server_arguments(description: str):
    """The options every tool server entry takes (`ToolServer` passes them); an entry adds its own."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--pack", action="append", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--data-dir", type=Path, help="keep the call databases in this folder")
    parser.add_argument("--max-live-calls", type=int, default=MAX_LIVE_CALLS,
                        help=f"live call databases per pack before new calls are refused (default {MAX_LIVE_CALLS:,})")
    parser.add_argument("--tool-time-bound-s", type=float, default=TOOL_TIME_BOUND_S,
                        help=f"the longest one tool call may run before it is the tool's failure (default {TOOL_TIME_BOUND_S:g})")
    return parser


def announce_ready(url: str) -> None:
    print(ToolServer.READY + url, flush=True)


def main(argv: list[str] | None = None) -> None:
    gc_pace.pace()
    args = server_arguments("pytest-callm tool server (started by the plugin)").parse_args(argv)
    serve(args.pack, args.port, announce=announce_ready, data_dir=args.data_dir, max_live_calls=args.max_live_calls,
          token=os.environ.get(TOKEN_ENV) or None, tool_time_bound_s=args.tool_time_bound_s)


if __name__ == "__main__":
    import atexit
    import gc

    # The child's last collections at exit would walk every object still alive: frozen, they are
    # skipped, and the parent waiting in ToolServer.stop goes on sooner.
    atexit.register(gc.freeze)
    main()
