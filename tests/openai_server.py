"""The tests' handle on the stand-in model server (pytest_callm/standin/, `callm serve-stand-in`).

The server, its scripted steps and its one-task players live in the package; this module gives the
tests their fixtures (`openai_server`: a fresh server state per test, one server per session) and a
program for tests of `--callm-serve`, with the switches only such tests need (a server that fails to
start, starts late, or writes down its process id and who each request was for):

    python tests/openai_server.py --port P [--model M] [--api-key K] [--delay-ms D]
                                  [--total-ms T] [--task PATH --industries DIR] [--startup-s S]
                                  [--pidfile F] [--caller-line LINE]... [--request-log F]
                                  [--die-on-request SIGNAL]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from fastapi import Request

from pytest_callm.standin.answer_key import (AGENT_ASKS_AGAIN, AGENT_CLOSING, AGENT_HOLD,  # noqa: F401
                                             AGENT_OPENING, AnswerKeyAgent, ScriptCaller)
from pytest_callm.standin.server import (DEFAULT_MODEL, DEFAULT_TEXT, KEEP_ALIVE_S, Behaviour,  # noqa: F401
                                         ScriptedServer, create_app, listen, serve)


@pytest.fixture(scope="session")
def openai_server_session():
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def openai_server(openai_server_session):
    """The scripted OpenAI-compatible server, reset for this test (`openai_server.reset(...)` to configure)."""
    return openai_server_session.reset()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="scripted OpenAI-compatible server (tests)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--model", action="append", default=[])
    parser.add_argument("--api-key")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    parser.add_argument("--total-ms", type=float, default=0.0, help="from a request's arrival to its finish")
    parser.add_argument("--piece-chars", type=int, default=4, help="characters a streamed chunk carries")
    parser.add_argument("--task", type=Path, help="play this task's answer key")
    parser.add_argument("--industries", type=Path, help="the folder holding the task's pack")
    parser.add_argument("--startup-s", type=float, default=0.0, help="wait this long before listening")
    parser.add_argument("--exit-at-once", action="store_true", help="fail to start (for tests of --callm-serve)")
    parser.add_argument("--pidfile", type=Path, help="append this process's id to the file on start")
    parser.add_argument("--caller-line", action="append", default=[],
                        help="play a caller saying these lines (repeatable), for requests that offer hang_up")
    parser.add_argument("--request-log", type=Path,
                        help="append '<pid> caller' or '<pid> agent' to the file for each chat request")
    parser.add_argument("--die-on-request", metavar="SIGNAL",
                        help="on the first chat request, die of this signal (SIGKILL, SIGSEGV...), as a llama.cpp "
                             "built for another CPU dies of SIGILL")
    args = parser.parse_args(argv)
    if args.pidfile:
        with args.pidfile.open("a") as f:
            f.write(f"{os.getpid()}\n")
    if args.exit_at_once:
        print("scripted server: refusing to start", file=sys.stderr, flush=True)
        raise SystemExit(3)
    time.sleep(args.startup_s)
    agent = AnswerKeyAgent(args.task, args.industries) if args.task else None
    caller = ScriptCaller(args.caller_line) if args.caller_line else None
    state = Behaviour(api_key=args.api_key, delay_ms=args.delay_ms, total_ms=args.total_ms,
                      models=args.model or [DEFAULT_MODEL], agent=agent, caller=caller, piece_chars=args.piece_chars,
                      keep_log=False)
    app = create_app(state)
    if args.request_log:
        log = args.request_log

        @app.middleware("http")
        async def note_request(request: Request, call_next):
            if request.url.path.endswith("/chat/completions"):
                body = json.loads(await request.body())
                with log.open("a") as f:
                    f.write(f"{os.getpid()} {'caller' if ScriptCaller.is_caller_request(body) else 'agent'}\n")
            return await call_next(request)

    if args.die_on_request:
        dies_of = signal.Signals[args.die_on_request]

        @app.middleware("http")
        async def die(request: Request, call_next):
            if request.url.path.endswith("/chat/completions"):
                if dies_of not in (signal.SIGKILL, signal.SIGSTOP):  # their handlers cannot be set
                    signal.signal(dies_of, signal.SIG_DFL)  # the default action: the process ends of it
                os.kill(os.getpid(), dies_of)
            return await call_next(request)

    serve(app, listen(args.port))


if __name__ == "__main__":
    main()
