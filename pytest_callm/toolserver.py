"""The tool server (DESIGN §4): one FastAPI app that serves the tools of any number of packs.

Routes, per pack:
    POST /packs/{pack}/tools/{name}   JSON arguments, call id in the X-Call-Id header
    GET  /packs/{pack}/state          that call's compared tables
    GET  /health                      liveness and the packs served

Every answer to a tool request is the result envelope. Bad arguments are an `ok: false` envelope
with `error_code: invalid_arguments` (HTTP 200: the model is meant to read it); a missing or
malformed call id is a 400, an unknown pack or tool a 404. Only a bug in a pack's own code gives
a 500, which the engine treats as an infrastructure error rather than a model failure.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from .calldb import CALL_ID_HEADER, CallStore, valid_call_id
from .pack import Pack
from .toolkit import Session, ToolContext, ToolError, envelope



def _reply(status: int, body: dict[str, Any]) -> JSONResponse:
    return JSONResponse(body, status_code=status)


def run_tool(pack: Pack, store: CallStore, call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    """Validate, run one tool in its own transaction, and wrap the result. Raises only on pack bugs."""
    problems = pack.validation_errors(name, arguments)
    if problems:
        return envelope(False, {"problems": problems}, "invalid_arguments",
                        "Sorry, something went wrong on my side with that request.")
    try:
        json.dumps(arguments, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return envelope(False, {"problems": ["(arguments): text that is not valid Unicode"]}, "invalid_arguments",
                        "Sorry, something went wrong on my side with that request.")
    fn = pack.registry.get(name)
    db = store.connection(call_id)
    db.execute("BEGIN IMMEDIATE")
    ctx = ToolContext(db=db, session=Session(db), call_id=call_id, now=pack.now, values=pack.values)
    try:
        data = fn(ctx, **arguments)
    except ToolError as e:
        db.execute("COMMIT" if e.keep_writes else "ROLLBACK")
        return envelope(False, e.data, e.error_code, e.caller_safe_message)
    except BaseException:
        db.execute("ROLLBACK")
        raise
    result = envelope(True, data)
    try:
        json.dumps(result)  # a result that cannot be sent is a crash: nothing of it may stay written
    except (TypeError, ValueError):
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
    return result


def create_app(packs: dict[str, Pack], data_dir: Path) -> FastAPI:
    stores = {name: CallStore(pack, data_dir) for name, pack in packs.items()}
    app = FastAPI(title="pytest-callm tool server", docs_url=None, redoc_url=None, openapi_url=None)

    def locate(request: Request) -> tuple[CallStore, str] | JSONResponse:
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

    async def health(request: Request) -> JSONResponse:
        return _reply(200, {"status": "ok", "packs": sorted(stores)})

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
        try:
            arguments = json.loads(await request.body() or b"{}")
        except ValueError as e:
            return _reply(400, envelope(False, None, "bad_request", f"body is not JSON: {e}"))
        try:
            return _reply(200, run_tool(store.pack, store, call_id, tool, arguments))
        except Exception as e:
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            return _reply(500, envelope(False, {"traceback": traceback.format_exc()}, "tool_crashed",
                                        f"{store.pack.name}.{tool} raised {detail}"))

    async def state(request: Request) -> JSONResponse:
        located = locate(request)
        if isinstance(located, JSONResponse):
            return located
        store, call_id = located
        return _reply(200, store.snapshot(call_id))

    # Plain request handlers (no FastAPI parameter injection): a tool request is a few
    # sub-millisecond SQLite statements, and the injection layer cost more than the work. They are
    # `async def` so they run inline on the loop instead of in a thread pool; one call's requests
    # are never interleaved.
    app.add_route("/health", health, methods=["GET"])
    app.add_route("/packs/{pack_name}/tools/{tool}", call_tool, methods=["POST"])
    app.add_route("/packs/{pack_name}/state", state, methods=["GET"])
    return app


class ToolServer:
    """Runs the app with uvicorn on 127.0.0.1 at an ephemeral port, in a child process.

    A process rather than a thread: the engine and the server then never wait on one GIL, which
    halves the time of a tool request. The child exits when asked to, and also as soon as its
    parent's end of the stdin pipe closes, so a killed pytest worker leaves no server behind.
    """

    READY = "CALLM_TOOL_SERVER_URL "

    def __init__(self, packs: dict[str, Pack], port: int = 0):
        self.pack_dirs = [p.root for p in packs.values()]
        self.port = port
        self.url = ""
        self._proc: subprocess.Popen | None = None

    def start(self, timeout: float = 30.0) -> "ToolServer":
        cmd = [sys.executable, "-m", "pytest_callm.toolserver", "--port", str(self.port)]
        for d in self.pack_dirs:
            cmd += ["--pack", str(Path(d).resolve())]
        self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        ready: list[str] = []
        reader = threading.Thread(target=lambda: ready.append(self._proc.stdout.readline()), daemon=True)
        reader.start()
        reader.join(timeout)
        line = ready[0] if ready else ""
        if not line.startswith(self.READY):
            self.stop()
            raise RuntimeError(f"the tool server did not start within {timeout:.0f}s (command: {' '.join(cmd)})")
        self.url = line[len(self.READY):].strip()
        return self

    def stop(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        try:
            proc.stdin.close()  # the child exits when its stdin closes
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()

    def __enter__(self) -> "ToolServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def serve(pack_dirs: list[Path], port: int = 0, announce=print, watch_stdin: bool = True) -> None:
    """Serve the packs until interrupted, or (as the plugin's child) until stdin closes."""
    from .pack import load_pack

    packs = {}
    for d in pack_dirs:
        pack = load_pack(Path(d))
        packs[pack.name] = pack
    with tempfile.TemporaryDirectory(prefix="callm-calls-") as data_dir:
        # IPPROTO_TCP explicitly: asyncio only sets TCP_NODELAY on accepted sockets whose protocol
        # says TCP, and without it every response waits ~40 ms for a delayed ACK.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", port))
        config = uvicorn.Config(create_app(packs, Path(data_dir)), log_level="warning", access_log=False,
                                lifespan="off")
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


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(description="pytest-callm tool server (started by the plugin)")
    parser.add_argument("--pack", action="append", required=True, type=Path)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    serve(args.pack, args.port, announce=lambda url: print(ToolServer.READY + url, flush=True))


if __name__ == "__main__":
    main()
