"""The types of the fields a run's readers use, checked once as a file is read.

A run folder is plain JSON, and people edit it by hand. Every reader of manifest.json and report.json
(the report page, `callm compare`, `callm leaderboard`, `callm merge`) gets its files through
`reader.read_object`, which checks them against these shapes: a field of the wrong type is one line
naming the file and the field (`report.json: summary.industries: expected an object, got "x"`), never
a traceback from deep inside a page. A field that is absent is left to its reader (older runs lack
some); a new field a reader relies on belongs here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NONE = type(None)
INT, NUMBER, TEXT, FLAG, OBJECT = (int,), (int, float), (str,), (bool,), (dict,)


@dataclass(frozen=True)
class Each:
    """An object whose every value has `shape` (a table keyed by industry, task or gate)."""
    shape: Any


@dataclass(frozen=True)
class Items:
    """A list whose every item has `shape`."""
    shape: Any


@dataclass(frozen=True)
class OrNull:
    """null, or a value of `shape`."""
    shape: Any


def maybe(kinds: tuple[type, ...]) -> tuple[type, ...]:
    return (*kinds, NONE)


_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", dict: "an object",
          list: "a list", NONE: "null"}


def _fits(value: Any, kinds: tuple[type, ...]) -> bool:
    if isinstance(value, bool):  # JSON's true is no count and no fraction
        return bool in kinds
    return isinstance(value, kinds)


def _show(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def problem(data: Any, shape: Any, where: str = "") -> str | None:
    """The first field of `data` that does not have `shape`, as `field: expected ..., got ...`; None if all do."""
    if isinstance(shape, tuple):
        if _fits(data, shape):
            return None
        names = ["a number" if k is int and float in shape else _NAMES[k] for k in shape if k is not float]
        expected = " or ".join(dict.fromkeys(names))
        return f"{where or '(top)'}: expected {expected}, got {_show(data)}"
    if isinstance(shape, OrNull):
        return None if data is None else problem(data, shape.shape, where)
    if isinstance(shape, Items):
        if not isinstance(data, list):
            return f"{where or '(top)'}: expected a list, got {_show(data)}"
        for i, item in enumerate(data):
            found = problem(item, shape.shape, f"{where}[{i}]")
            if found:
                return found
        return None
    if not isinstance(data, dict):
        return f"{where or '(top)'}: expected an object, got {_show(data)}"
    if isinstance(shape, Each):
        pairs = [(key, shape.shape) for key in data]
    else:
        pairs = [(key, sub) for key, sub in shape.items() if key in data]
    for key, sub in pairs:
        found = problem(data[key], sub, f"{where}.{key}" if where else str(key))
        if found:
            return found
    return None


# What a group of tasks scores (an industry, a category, a difficulty, all of them).
GROUP = {"label": TEXT, "tasks": INT, "attempts": INT, "passes": INT, "short_tasks": INT,
         "pass_at_1": maybe(NUMBER), "pass_k": maybe(NUMBER)}
INTERVAL = {"estimate": maybe(NUMBER), "low": maybe(NUMBER), "high": maybe(NUMBER)}
INTERVALS = {"pass_at_1": OrNull(INTERVAL), "pass_k": OrNull(INTERVAL), "tasks": INT}
SUMMARY = {
    "k": INT, "partial": FLAG, "errors": Each(INT), "rerun": INT, "cut": INT, "gate_failures": Each(INT),
    "intervals": OrNull({"overall": OrNull(INTERVALS), "industries": Each(INTERVALS)}),
    "overall": OrNull(GROUP), "industries": Each(GROUP), "categories": Each(GROUP),
    "difficulties": Each(GROUP),
    "tasks": Each({"industry": TEXT, "task_id": TEXT, "category": TEXT, "difficulty": TEXT, "n": INT, "c": INT,
                   "errors": INT, "pass_at_1": maybe(NUMBER), "pass_k": maybe(NUMBER)}),
}
ATTEMPT = {"task_id": TEXT, "industry": TEXT, "category": TEXT, "difficulty": TEXT, "attempt": INT,
           "passed": maybe(FLAG), "gates": Each(maybe(FLAG)), "error": maybe(TEXT), "error_kind": maybe(TEXT)}
REPORT = {"format": TEXT, "model": maybe(TEXT), "k": maybe(INT), "summary": SUMMARY, "attempts": Items(ATTEMPT),
          "usage": maybe(OBJECT), "line_rates": maybe(OBJECT), "interrupted": maybe(TEXT)}
MANIFEST = {
    "format": TEXT, "k": INT, "rescored_from": TEXT, "caller": OBJECT, "task_files": INT,
    "comparable": {"model": maybe(TEXT), "model_config": maybe(OBJECT), "caller_config": maybe(OBJECT),
                   "attempts": INT, "line": (dict, str),
                   "hashes": {"tasks": TEXT, "verifier": TEXT, "python_tasks": TEXT, "packs": Each(TEXT)}},
}
SHARD = {"index": INT, "count": INT, "tasks": Each({"file": TEXT, "sha256": TEXT, "shard": INT})}
