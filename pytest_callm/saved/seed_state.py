"""A call's final database state saved as a difference from its pack's seed state.

Most of a hang-up snapshot is the seed every call starts from (a call writes a few rows), so a
trajectory file keeps only what the call changed and names the seed it is relative to; the seed is
saved once per run directory (`seeds/<industry>/<id>.json`, the id a hash of its content).

    {"seed": "<id>", "tables": {"<table>": {"removed": [i, ...], "changed": [[i, {column: value}], ...],
                                            "added": [row, ...], "order": [...]}}}

Seed rows are named by their index in the seed's table: exact for any table, with or without a key
column. The rebuilt table is the seed's rows less `removed`, with `changed` applied, in seed order,
then `added`; `order` is present only where the call left another order (ints >= 0 are seed rows,
-1 - k the k-th added row). An unchanged table is `{}`. Every field is optional.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from pytest_callm.task.pack import Pack

State = dict[str, list[dict[str, Any]]]

_SEEDS: dict[tuple[str, str, str], tuple[str, State]] = {}  # the seed of each pack, built once a process


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def state_id(state: State) -> str:
    return hashlib.sha256(_canon(state).encode()).hexdigest()[:16]


def seed_state(pack: Pack) -> tuple[str, State]:
    """(id, state) of the pack's compared tables as a call finds them: built from schema.sql and
    seed.sql like the tool server's template, and read back through JSON as the server sends it."""
    key = (str(pack.root), pack.schema_sql, pack.seed_sql)
    if key not in _SEEDS:
        from pytest_callm.toolkit import SESSION_DDL
        from pytest_callm.toolserver.calldb import snapshot

        db = sqlite3.connect(":memory:")
        db.row_factory = sqlite3.Row
        try:
            db.executescript(pack.schema_sql)
            db.executescript(pack.seed_sql)
            db.execute(SESSION_DDL)
            state = json.loads(json.dumps(snapshot(db, pack.compared_tables)))
        finally:
            db.close()
        _SEEDS[key] = (state_id(state), state)
    return _SEEDS[key]


def _table_diff(seed: list[dict[str, Any]], final: list[dict[str, Any]], key: str | None) -> dict[str, Any]:
    unused: dict[str, list[int]] = {}
    for i, row in enumerate(seed):
        unused.setdefault(_canon(row), []).append(i)
    by_key = {}
    if key:
        for i, row in enumerate(seed):
            by_key.setdefault(_canon(row.get(key)), []).append(i)
    taken: set[int] = set()
    refs: list[int] = []
    changed: list[list[Any]] = []
    added: list[dict[str, Any]] = []
    pending = []
    for row in final:  # rows the call left alone first, so a key never pairs them with a changed row
        same = unused.get(_canon(row))
        if same:
            taken.add(same[0])
            refs.append(same.pop(0))
        else:
            refs.append(None)
            pending.append((len(refs) - 1, row))
    for at, row in pending:  # then rows the call changed: paired with the seed row of the same key
        i = next((i for i in by_key.get(_canon(row.get(key)), []) if i not in taken), None) if key else None
        if i is not None and set(seed[i]) == set(row):
            taken.add(i)
            refs[at] = i
            changed.append([i, {c: v for c, v in row.items() if _canon(v) != _canon(seed[i][c])}])
        else:
            refs[at] = -1 - len(added)
            added.append(row)
    diff: dict[str, Any] = {}
    removed = [i for i in range(len(seed)) if i not in taken]
    if removed:
        diff["removed"] = removed
    if changed:
        diff["changed"] = sorted(changed, key=lambda c: c[0])
    if added:
        diff["added"] = added
    if refs != sorted(r for r in refs if r >= 0) + [-1 - k for k in range(len(added))]:
        diff["order"] = refs
    return diff


def diff_state(seed: State, final: State, keys: dict[str, str | None] | None = None) -> dict[str, Any]:
    """The tables of `final` as differences from `seed`; `keys` pairs changed rows by a table's key column."""
    keys = keys or {}
    return {t: _table_diff(seed.get(t, []), rows, keys.get(t)) for t, rows in final.items()}


def rebuild_state(seed: State, tables: dict[str, Any]) -> State:
    """The final state a `diff_state` result describes, exactly."""
    out: State = {}
    for t, diff in tables.items():
        rows = seed.get(t, [])
        changed = {i: cols for i, cols in diff.get("changed", [])}
        added = diff.get("added", [])
        removed = set(diff.get("removed", []))
        order = diff.get("order") or [*(i for i in range(len(rows)) if i not in removed),
                                      *(-1 - k for k in range(len(added)))]
        out[t] = [added[-1 - r] if r < 0 else {**rows[r], **changed.get(r, {})} for r in order]
    return out


def compress(seed: tuple[str, State], final: State, keys: dict[str, str | None] | None = None) -> dict[str, Any] | None:
    """The saved form of `final` against `seed`, or None where it would not rebuild to the same JSON
    (then the full state is saved: a trajectory never loses a row to its compression)."""
    sid, state = seed
    tables = diff_state(state, final, keys)
    if _canon(rebuild_state(state, tables)) != _canon(final):
        return None
    return {"seed": sid, "tables": tables}
