"""Per-call SQLite files: one database per call id, created atomically from the pack's seed.

Every call starts from the same seeded state and ends with a database only that call could have
written. The seed is built once per pack into a template file; a new call copies the template to a
private temporary name and hard-links it into place, so two processes racing on one id both end up
opening the same, complete file.
"""

from __future__ import annotations

import os
import re
import shutil
import sqlite3
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_callm.task.pack import Pack
from pytest_callm.toolkit import SESSION_DDL

CALL_ID_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
CALL_ID_HEADER = "X-Call-Id"  # every request that touches a call's state carries its id here
AGENT_HEADER = "X-Callm-Agent"  # the agent (desk) making a tool call: a pack may keep which desk acted
AUDIT_HEADER = "X-Callm-Touched"  # what a tool call read and wrote: for the trace, never for the model
# Live call databases one server holds per pack: a run keeps only its calls in flight live (32 by
# default), or with --callm-keep-calls every call it plays (the benchmark: 900). A client that makes
# call ids without removing them is refused here, not served until the disk is full.
MAX_LIVE_CALLS = 20_000
# A tool request may carry its own id (`REQUEST_HEADER`): a request sent again after its connection
# dropped gets the reply kept for that id instead of running twice (`REPLIES_TABLE`, in the call's file).
REQUEST_HEADER = "X-Callm-Request"
REPLIES_TABLE = "callm_replies"
REPLIES_DDL = f"CREATE TABLE IF NOT EXISTS {REPLIES_TABLE} (request TEXT PRIMARY KEY, reply TEXT NOT NULL, audit TEXT)"
# Keep-alive: the client drops an idle connection well before the server would close it, so a request
# never goes out on a connection the server is closing at that moment (uvicorn's default is 5 s, and
# aiohttp keeps one 15 s: at load 24, 6 of 120 attempts met a ServerDisconnectedError).
SERVER_KEEPALIVE_S = 75.0
CLIENT_KEEPALIVE_S = 30.0
# A server started with a token (in its environment, never on its command line, which any local user
# can read) serves the call routes only to requests carrying it: the plugin and the RL servers start
# theirs so, and only their own clients know it. Without one (`callm serve` unless the variable is
# set), anyone who can reach the port can read, write and remove any call it holds.
TOKEN_HEADER = "X-Callm-Token"
TOKEN_ENV = "CALLM_TOOL_SERVER_TOKEN"


# A task's own rows on top of the pack's seed (a generated training task's people): table -> rows.
Records = dict[str, list[dict[str, Any]]]


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def valid_records(records: Any) -> bool:
    """None, or table -> list of rows (column -> JSON scalar), every name a plain SQL identifier."""
    if records is None:
        return True
    if not isinstance(records, dict):
        return False
    return all(isinstance(t, str) and _NAME.fullmatch(t) and isinstance(rows, list)
               and all(isinstance(r, dict) and all(isinstance(c, str) and _NAME.fullmatch(c) for c in r)
                       and all(v is None or isinstance(v, (str, int, float)) for v in r.values()) for r in rows)
               for t, rows in records.items())


def add_records(path: Path, records: Records) -> None:
    """Insert a task's own rows into a fresh call file (its columns named, so the order is the task's)."""
    db = sqlite3.connect(path, isolation_level=None)
    try:
        db.execute("BEGIN")
        for table, rows in records.items():
            for row in rows:
                listed = ", ".join(f'"{c}"' for c in row)
                db.execute(f'INSERT INTO "{table}" ({listed}) VALUES ({", ".join("?" * len(row))})',
                           tuple(row.values()))
        db.execute("COMMIT")
    finally:
        db.close()


def valid_call_id(call_id: str | None) -> bool:
    return call_id is not None and CALL_ID_RE.fullmatch(call_id) is not None


def connect(path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, timeout=30, check_same_thread=False)
    db.row_factory = sqlite3.Row
    # Call files are scratch data re-creatable from the seed; skipping fsync keeps a tool request
    # well under a millisecond without risking anything a crashed call would need. For the same reason
    # a transaction's undo log stays in memory (ROLLBACK works as ever): a journal file made and deleted
    # on every tool call that writes was a third of a proof's system CPU.
    db.execute("PRAGMA synchronous = OFF")
    db.execute("PRAGMA journal_mode = MEMORY")
    return db


class TooManyCalls(Exception):
    """A new call database would pass the store's limit of live calls."""


def _keep_open() -> int:
    """Connections kept for the most recent calls: more than the calls ever in flight at once (32 in a
    run; an RL environment holds 256 by default, and with 64 kept it reopened a call's file on most
    tool calls: a fifth of the environment's CPU), within half the process's file limit."""
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, ValueError, OSError):
        return 256
    return 1024 if limit == resource.RLIM_INFINITY else max(16, min(1024, limit // 2))


class CallStore:
    """The call databases of one pack under one folder."""

    KEEP_OPEN = _keep_open()

    def __init__(self, pack: Pack, root: Path, max_live: int = MAX_LIVE_CALLS, keep_files: bool = False):
        self.pack = pack
        self.max_live = max_live
        self.keep_files = keep_files  # a finished call's file stays, for debugging (--callm-keep-calls)
        self._live: set[str] = set()  # the calls this store created or opened and has not removed
        self._recent: OrderedDict[str, sqlite3.Connection] = OrderedDict()
        # The server runs each request off its event loop, on a runner thread (lanes.py): the tables above change under this lock.
        self._guard = threading.RLock()
        self.root = Path(root) / pack.name
        self.root.mkdir(parents=True, exist_ok=True)
        self.template = self.root / ".seed.sqlite"  # a dot: outside the call-id alphabet, never a call
        if not self.template.exists():
            self._build_template()

    def _build_template(self) -> None:
        tmp = self.template.with_name(f".seed-{uuid.uuid4().hex}.tmp")
        db = sqlite3.connect(tmp)
        try:
            db.executescript(self.pack.schema_sql)
            db.executescript(self.pack.seed_sql)
            db.execute(SESSION_DDL)
            db.commit()
        finally:
            db.close()
        os.replace(tmp, self.template)

    def path(self, call_id: str) -> Path:
        if not valid_call_id(call_id):
            raise ValueError(f"invalid call id {call_id!r}")
        return self.root / f"{call_id}.sqlite"

    def open(self, call_id: str, records: Records | None = None) -> sqlite3.Connection:
        """The call's database, created from the seed (plus the task's own `records`) on first use."""
        with self._guard:
            return self._open(call_id, records)

    def _open(self, call_id: str, records: Records | None) -> sqlite3.Connection:
        path = self.path(call_id)
        if not path.exists():
            if len(self._live) >= self.max_live:
                raise TooManyCalls(f"{len(self._live):,} calls of pack {self.pack.name!r} are live, the most this "
                                   f"server holds ({self.max_live:,}): remove finished calls (DELETE .../call) "
                                   "before starting more")
            tmp = self.root / f".{call_id}.{uuid.uuid4().hex}.tmp"
            shutil.copyfile(self.template, tmp)
            try:
                if records:  # before the link: a racer sees the whole file or none
                    add_records(tmp, records)
                os.link(tmp, path)  # atomic and never overwrites: a racer's file wins intact
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        self._live.add(call_id)
        return connect(path)

    def open_calls(self) -> list[str]:
        """The calls whose connection is kept open now."""
        with self._guard:
            return list(self._recent)

    def exists(self, call_id: str) -> bool:
        return call_id in self._recent or self.path(call_id).exists()

    def remove(self, call_id: str) -> None:
        """Delete a finished call's database: a long run's disk use stays flat. A store that keeps its
        files only closes the call's connection (each holds about 250 KB while open)."""
        with self._guard:
            db = self._recent.pop(call_id, None)
            self._live.discard(call_id)
        if db is not None:
            db.close()
        path = self.path(call_id)
        if self.keep_files:
            return
        for leftover in (path, path.with_name(path.name + "-journal")):
            leftover.unlink(missing_ok=True)

    def connection(self, call_id: str, records: Records | None = None) -> sqlite3.Connection:
        """A connection kept open for the call's next request (opening one costs more than a tool).

        One call's requests use it in turn (the server's lanes), whichever thread each runs in.
        """
        with self._guard:
            db = self._recent.pop(call_id, None) or self._open(call_id, records)
            self._recent[call_id] = db
            while len(self._recent) > self.KEEP_OPEN:
                self._recent.popitem(last=False)[1].close()
        return db

    def snapshot(self, call_id: str) -> dict[str, list[dict[str, Any]]]:
        """The compared tables of a call, every column, rows in insertion order."""
        return snapshot(self.connection(call_id), self.pack.compared_tables)


def scrub(path: Path, clean: Callable[[str], str]) -> int:
    """Every text value of a kept call database passed through `clean` (the run's redaction: a key a
    model wrote into an argument, and a tool stored), old pages overwritten and dropped. The values
    changed."""
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    changed = 0
    try:
        db.execute("PRAGMA secure_delete = ON")  # what an update replaces is overwritten, not left in a free page
        db.execute("BEGIN IMMEDIATE")
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                           "AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            columns = [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]
            listed = ", ".join(f'"{c}"' for c in columns)
            try:
                rows = db.execute(f'SELECT rowid, {listed} FROM "{table}"').fetchall()
            except sqlite3.OperationalError:  # a table without rowid: none in any pack
                continue
            for rowid, *values in rows:
                new = {c: clean(v) for c, v in zip(columns, values) if isinstance(v, str) and clean(v) != v}
                if new:
                    sets = ", ".join(f'"{c}" = ?' for c in new)
                    db.execute(f'UPDATE "{table}" SET {sets} WHERE rowid = ?', (*new.values(), rowid))
                    changed += len(new)
        db.execute("COMMIT")
        if changed:
            db.execute("VACUUM")
    finally:
        db.close()
    return changed


def snapshot(db: sqlite3.Connection, tables) -> dict[str, list[dict[str, Any]]]:
    return {t: [dict(r) for r in db.execute(f'SELECT * FROM "{t}" ORDER BY rowid')] for t in tables}
