"""What an industry pack's `tools.py` imports: the registry, the call context and the error type.

A pack's tool logic is plain Python over one call's SQLite connection:

    from pytest_callm.toolkit import ToolError, ToolRegistry

    tools = ToolRegistry()

    @tools.tool
    def find_owner(ctx, full_name, phone):
        row = ctx.db.execute("SELECT ...", (...)).fetchone()
        if row is None:
            raise ToolError("owner_not_found", "I couldn't find an account with those details.")
        ctx.session["owner_id"] = row["id"]
        return {"owner_id": row["id"]}

The tool server validates arguments against the tool's JSON Schema before calling the function,
wraps the return value in the result envelope, and rolls back every write of a call that raises
`ToolError`. Nothing here knows about HTTP or pytest.
"""

from __future__ import annotations

import datetime as _dt
import json
import sqlite3
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from pytest_callm.normalize import ValueKinds

# Every call database gets this table: gating state (identity verified, holds, tokens) lives in the
# call's own file, so it shows in state dumps and survives a server restart.
SESSION_TABLE = "callm_session"
SESSION_DDL = f"CREATE TABLE IF NOT EXISTS {SESSION_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)"


class ToolError(Exception):
    """A business-rule refusal: becomes `{"ok": false, "error_code": code, ...}` and rolls back.

    `keep_writes=True` keeps what the tool wrote before refusing, for refusals that must leave a
    trace: a failed identity check that counts towards a lockout.
    """

    def __init__(self, error_code: str, caller_safe_message: str | None = None, data: Any = None,
                 *, keep_writes: bool = False):
        super().__init__(f"{error_code}: {caller_safe_message or ''}")
        self.error_code = error_code
        self.caller_safe_message = caller_safe_message
        self.data = data
        self.keep_writes = keep_writes


def envelope(ok: bool, data: Any = None, error_code: str | None = None,
             caller_safe_message: str | None = None) -> dict[str, Any]:
    """The one result shape every tool of every pack returns."""
    return {"ok": ok, "data": data, "error_code": error_code, "caller_safe_message": caller_safe_message}


def result_status(result: Any) -> str | None:
    """`ok` for a successful envelope, its error code otherwise; None when it is not an envelope."""
    if not isinstance(result, dict) or "ok" not in result:
        return None
    if result["ok"]:
        return "ok"
    return result.get("error_code") or "error"


class Session(MutableMapping[str, Any]):
    """Key/value gating state stored as JSON in the call's `callm_session` table."""

    def __init__(self, db: sqlite3.Connection):
        self._db = db

    def __getitem__(self, key: str) -> Any:
        row = self._db.execute(f"SELECT value FROM {SESSION_TABLE} WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise KeyError(key)
        return json.loads(row[0])

    def __setitem__(self, key: str, value: Any) -> None:
        self._db.execute(
            f"INSERT INTO {SESSION_TABLE} (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, json.dumps(value)),
        )

    def __delitem__(self, key: str) -> None:
        if self._db.execute(f"DELETE FROM {SESSION_TABLE} WHERE key = ?", (key,)).rowcount == 0:
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter([r[0] for r in self._db.execute(f"SELECT key FROM {SESSION_TABLE} ORDER BY key")])

    def __len__(self) -> int:
        return self._db.execute(f"SELECT COUNT(*) FROM {SESSION_TABLE}").fetchone()[0]


@dataclass
class ToolContext:
    """What a tool function gets besides its arguments."""

    db: sqlite3.Connection  # rows come back as sqlite3.Row
    session: Session
    call_id: str
    now: _dt.datetime  # the pack's fixed clock: every call sees the same "now"
    # The pack's alias tables (`ctx.values.canonical("state", "Wash.")`), the same the verifier uses.
    values: ValueKinds = field(default_factory=ValueKinds)
    # The agent (desk) making the call, when the engine says (the X-Callm-Agent header): a pack may
    # keep which desk acted, as a real desk's log does (who gave the 911 advice).
    agent: str | None = None
    # Set by front_desk.record_access / check_identity: this call's look at a person's record is kept.
    access_logged: bool = False

    @property
    def today(self) -> _dt.date:
        return self.now.date()


ToolFunction = Callable[..., Any]


class ToolRegistry:
    """Maps tool names to the functions that implement them."""

    def __init__(self) -> None:
        self._tools: dict[str, ToolFunction] = {}

    def tool(self, fn: ToolFunction | None = None, *, name: str | None = None):
        """Register `fn` under its own name (or `name`). Usable bare or with arguments."""

        def register(f: ToolFunction) -> ToolFunction:
            key = name or f.__name__
            if key in self._tools:
                raise ValueError(f"tool {key!r} registered twice")
            self._tools[key] = f
            return f

        return register(fn) if fn is not None else register

    def get(self, name: str) -> ToolFunction | None:
        return self._tools.get(name)

    def names(self) -> set[str]:
        return set(self._tools)
