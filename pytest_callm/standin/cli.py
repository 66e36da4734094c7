"""`callm serve-stand-in`: the stand-in models on one local OpenAI-compatible server, no key.

    callm serve-stand-in [--port 8009] [--tasks PATH]... [--industries DIR]...

Serves the model ids `stand-in-strong`, `stand-in-middling`, `stand-in-careless` (scripted agents
that read the answer key, players.py) and `stand-in-caller` (a scripted caller that reads only its
brief) at http://127.0.0.1:PORT/v1, for every task under `--tasks` at once (default: the installed
benchmark's locked tasks). The bundled model configs of those names point at port 8009:

    callm serve-stand-in &
    pytest --callm-suite --callm-model=stand-in-middling -k "legal and C4-H3"

A request says nothing of its task; each player tells it from the conversation (book.py). The server
keeps no log of requests, so it can run as long as a training run does.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pytest_callm.standin.book import TaskBook
from pytest_callm.standin.players import AGENTS, CALLER, BriefCaller, KeyAgent
from pytest_callm.standin.server import Behaviour, create_app, listen, serve

DEFAULT_PORT = 8009  # the bundled stand-in configs' base_url


def players(book: TaskBook) -> dict[str, object]:
    """Model id -> player, for every stand-in model."""
    return {**{care.name: KeyAgent(book, care) for care in AGENTS}, CALLER: BriefCaller(book)}


def behaviour(book: TaskBook, keep_log: bool = False) -> Behaviour:
    """The server's settings for the stand-ins: only their model ids are served."""
    return Behaviour(models=(), players=players(book), keep_log=keep_log)


def main(argv: list[str] | None = None) -> int:
    from pytest_callm.task.benchmark import locked_tasks
    from pytest_callm.task.pack import default_industries

    parser = argparse.ArgumentParser(prog="callm serve-stand-in",
                                     description="serve the scripted stand-in models (three agents that read the "
                                                 "answer key, one caller that reads its brief) on a local "
                                                 "OpenAI-compatible server, for many tasks at once")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT,
                        help=f"port on the host (default {DEFAULT_PORT}, where the bundled stand-in configs look; "
                             "0: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--tasks", action="append", type=Path, default=[], metavar="PATH",
                        help="task files or folders of them to play (repeatable; default: the locked suite, "
                             "tasks/ here or the installed benchmark's)")
    parser.add_argument("--industries", action="append", type=Path, default=[], metavar="DIR",
                        help="extra folder holding industry packs (repeatable)")
    args = parser.parse_args(argv)
    try:
        book = TaskBook.load(args.tasks or [locked_tasks()], default_industries(Path.cwd()) + args.industries)
    except (ValueError, KeyError) as e:
        print(f"callm serve-stand-in: {e}", file=sys.stderr)
        return 2
    try:
        sock = listen(args.port, args.host)
    except OSError as e:
        print(f"callm serve-stand-in: cannot listen on {args.host}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return 2
    state = behaviour(book)
    host, port = sock.getsockname()[:2]
    print(f"stand-in models at http://{host}:{port}/v1 playing {len(book)} task(s): {', '.join(state.models)} "
          "(scripted: the agents read the answer key; Ctrl-C stops it)", flush=True)
    serve(create_app(state), sock)
    return 0
