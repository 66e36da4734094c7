"""Running one tool of a pack against a call's database: what the tool server's route does, without the web.

Apart from server.py so that what runs tools in its own process (`in_process.py`: `callm prove`,
`callm generate`, an RL environment) never imports FastAPI and uvicorn, about half a second of each
such process's start.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from typing import Any

from pytest_callm.front_desk import TOKENS_TABLE
from pytest_callm.task.pack import Pack, PackCodeExited
from pytest_callm.toolkit import SESSION_TABLE, Session, ToolContext, ToolError, envelope
from pytest_callm.toolserver.calldb import REPLIES_DDL, REPLIES_TABLE, CallStore

SORRY = "Sorry, something went wrong on my side with that request."

# Tables the engine keeps for itself in every call database: gating state, not business records.
ENGINE_TABLES = frozenset({SESSION_TABLE, TOKENS_TABLE, REPLIES_TABLE})
_READ, _WRITES = sqlite3.SQLITE_READ, {sqlite3.SQLITE_INSERT: "wrote", sqlite3.SQLITE_UPDATE: "wrote",
                                       sqlite3.SQLITE_DELETE: "wrote"}


class _Watch:
    """The tables one tool call reads and writes, seen by SQLite itself (an authorizer), so a pack
    cannot forget to declare one: `callm prove` checks every write lands in a compared table and
    every look at a people table is kept (DESIGN §7a, the invariants)."""

    def __init__(self) -> None:
        self.read: set[str] = set()
        self.wrote: set[str] = set()

    def __call__(self, action, arg1, arg2, db_name, trigger):
        if action == _READ and arg1 and not arg1.startswith("sqlite_"):
            self.read.add(arg1)
        elif action in _WRITES and arg1 and not arg1.startswith("sqlite_"):
            self.wrote.add(arg1)
        return sqlite3.SQLITE_OK


def run_tool(pack: Pack, store: CallStore, call_id: str, name: str, arguments: Any,
             audit: dict[str, Any] | None = None, agent: str | None = None,
             request_id: str | None = None) -> dict[str, Any]:
    """Validate, run one tool in its own transaction, and wrap the result. Raises only on pack bugs.

    `audit`, when given, receives what the call touched: tables read, tables written (only when the
    writes were kept) and people tables read with no access kept (a broken pack invariant).
    `request_id`: the client's id of this request. A request whose writes were kept leaves its reply
    under that id, in the same transaction; the same id sent again (its connection dropped before the
    reply came back) gets that reply, and the tool does not run twice. A refusal that kept nothing is
    simply run again."""
    arguments = pack.prepared_arguments(name, arguments)  # a date-time where a date is asked: its day
    problems = pack.validation_errors(name, arguments)
    if problems:
        return envelope(False, {"problems": problems}, "invalid_arguments", SORRY)
    fn = pack.registry.get(name)
    db = store.connection(call_id)
    if request_id is not None:
        db.execute(REPLIES_DDL)
        done = db.execute(f"SELECT reply, audit FROM {REPLIES_TABLE} WHERE request = ?", (request_id,)).fetchone()
        if done is not None:
            if audit is not None and done[1]:
                audit.update(json.loads(done[1]))
            return json.loads(done[0])
    db.execute("BEGIN IMMEDIATE")
    ctx = ToolContext(db=db, session=Session(db), call_id=call_id, now=pack.now, values=pack.values, agent=agent)
    watch = _Watch()
    db.set_authorizer(watch)  # expires cached statements, so each is seen again for this call

    def touched(kept: bool) -> dict[str, Any]:
        people = pack.people.tables if pack.people else frozenset()
        return {"read": sorted(watch.read - ENGINE_TABLES), "wrote": sorted(watch.wrote - ENGINE_TABLES) if kept else [],
                "unlogged": [] if ctx.access_logged else sorted(watch.read & people)}

    def keep(result: dict[str, Any]) -> dict[str, Any]:
        """COMMIT, with the reply kept under the request's id first (one transaction)."""
        db.set_authorizer(None)
        seen = touched(True)
        if request_id is not None:
            db.execute(f"INSERT INTO {REPLIES_TABLE} (request, reply, audit) VALUES (?, ?, ?)",
                       (request_id, json.dumps(result), json.dumps(seen)))
        db.execute("COMMIT")
        if audit is not None:
            audit.update(seen)
        return result

    try:
        try:
            data = fn(ctx, **arguments)
        except ToolError as e:
            result = envelope(False, e.data, e.error_code, e.caller_safe_message)
            if e.keep_writes:
                return keep(result)
            db.execute("ROLLBACK")
            if audit is not None:
                audit.update(touched(False))
            return result
        except SystemExit as e:  # the pack's failure, like any crash of its code: never the server's end
            db.execute("ROLLBACK")
            raise PackCodeExited.of(f"{pack.name}.{name}", e) from None
        except KeyboardInterrupt as e:
            db.execute("ROLLBACK")
            if threading.current_thread() is threading.main_thread():
                raise  # a Ctrl-C: the person's, not the pack's
            raise PackCodeExited.of(f"{pack.name}.{name}", e) from None  # tools run off the main thread: the pack's
        except BaseException:
            db.execute("ROLLBACK")
            raise
        result = envelope(True, data)
        try:
            json.dumps(result)  # a result that cannot be sent is a crash: nothing of it may stay written
        except (TypeError, ValueError):
            db.execute("ROLLBACK")
            raise
        return keep(result)
    finally:
        db.set_authorizer(None)
