"""Does a task's `records` fit its pack? Checked when the task is loaded, never found out mid-call.

A task's own rows are inserted into each call's copy of the pack's seed when the call starts. A row the
pack's schema refuses (an unknown table or column, a duplicate key, a NOT NULL or CHECK broken) used to
surface only there: the attempt was played, failed to start, and was counted as infrastructure, while
`callm lint` and `callm lock` died with a traceback. Here every row is tried on a scratch copy of the
seed as the task loads, and the first that does not fit is named by file and field (`$.records.owners[0]`).
"""

from __future__ import annotations

import sqlite3
import threading
from typing import Any

_seeds: dict[tuple[str, str], sqlite3.Connection] = {}  # (schema, seed) -> the seed, in memory, built once
_guard = threading.Lock()


def _seed(schema_sql: str, seed_sql: str) -> sqlite3.Connection:
    key = (schema_sql, seed_sql)
    with _guard:
        db = _seeds.get(key)
        if db is None:
            db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            db.executescript(schema_sql)
            db.executescript(seed_sql)
            _seeds[key] = db
        return db


def records_problems(records: Any, schema_sql: str, seed_sql: str) -> list[str]:
    """One line per row of `records` (table -> rows) that the pack's schema and seed do not take; each row
    is tried in turn on the seed (the ones before it in place), and nothing of the trial is kept."""
    if not records or not isinstance(records, dict):
        return []
    db = _seed(schema_sql, seed_sql)
    with _guard:
        db.execute("BEGIN")
        try:
            for table, rows in records.items():
                known = {r[1] for r in db.execute("SELECT * FROM pragma_table_info(?)", (table,))}
                if not known:
                    return [f"$.records.{table}: the pack has no table {table!r}"]
                for i, row in enumerate(rows if isinstance(rows, list) else []):
                    where = f"$.records.{table}[{i}]"
                    unknown = sorted(set(row) - known) if isinstance(row, dict) else []
                    if unknown:
                        return [f"{where}: table {table!r} has no column {unknown[0]!r} "
                                f"(its columns: {', '.join(sorted(known))})"]
                    if not isinstance(row, dict) or not row:
                        continue  # the task schema names these
                    listed = ", ".join(f'"{c}"' for c in row)
                    try:
                        db.execute(f'INSERT INTO "{table}" ({listed}) VALUES ({", ".join("?" * len(row))})',
                                   tuple(row.values()))
                    except (sqlite3.Error, OverflowError) as e:
                        return [f"{where}: the pack's schema refuses this row ({e})"]
            return []
        finally:
            db.execute("ROLLBACK")
