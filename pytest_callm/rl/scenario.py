"""What a policy learns from a task, with identities masked: the scenario, not the names.

A renamed copy of a task (new people, phones, ids, a party's new name, a date moved a few days)
teaches a policy exactly what its source teaches. So two tasks are compared on four views, each
with every identity masked to its kind ("<person>", "<phone>", "<id>", "<date>"):

- **key**: the answer key's items (as `splits.key_items`: each call's status and constrained
  values, and the handoff path), a value of an identity kind written as its kind;
- **script**: the caller's words (intent, scripted responses, traits) as word trigrams, every
  identity the task names and every phone, email, date and id-like token masked;
- **traps**: the rules the traps test (a multiset of rule ids);
- **changes**: the rows the expected database state adds to the seed and the task's own records,
  masked the same way as the script.

Each view is a multiset compared by its Jaccard index; the similarity of two tasks is the mean of
the four (two tasks with no traps share that view fully: they test the same nothing). The
comparison is `splits.clashes`'s second test; its threshold and the figures behind it are there.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_callm.authoring.compose import seed_tables
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task

# Kinds of value that name who or when, never what the business decides: masked to the kind.
IDENTITY_KINDS = frozenset({"person", "phone", "email", "identifier", "digits", "party", "organization", "date"})
TRAIT_KINDS = {"full_name": "person", "name": "person", "caller_name": "person", "phone": "phone",
               "email": "email", "date_of_birth": "date", "dob": "date"}
VIEWS = ("key", "script", "traps", "changes")

_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_PHONE = re.compile(r"(?<![\w-])(?:\+?1[ .-]?)?(?:\(\d{3}\) ?|\d{3}[-. ])\d{3}[-. ]\d{4}(?![\w-])|(?<!\d)\d{10}(?!\d)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")
_MONTH_DATE = re.compile(r"\b(?:January|February|March|April|May|June|July|August|September|October|November|"
                         r"December)\s+(?:\d{1,2}(?:st|nd|rd|th)?|[a-z]+(?:[- ][a-z]+)?)(?:,?\s+(?:\d{4}|twenty[a-z -]+))?")
# A token of letters, digits, "-" and "_" that holds three digits or more: an id (an order, a matter, a member).
_ID_TOKEN = re.compile(r"(?<![\w.$])(?=(?:[A-Za-z_-]*\d){3})[A-Za-z0-9_-]*\d[A-Za-z0-9_-]*(?![\w$])")
_WORD = re.compile(r"<\w+>|[a-z0-9$.']+")


@dataclass(frozen=True)
class Views:
    """A task's (one answer key's) four masked views."""

    key: Counter
    script: Counter
    traps: Counter
    changes: Counter

    def similarity(self, other: Views) -> float:
        return sum(jaccard(getattr(self, v), getattr(other, v)) for v in VIEWS) / len(VIEWS)


def jaccard(a: Counter, b: Counter) -> float:
    """Multiset Jaccard: the counts both share over the counts of either, the union counted as |a| +
    |b| - shared (building `a | b` and `a & b` took half of `callm split-check`'s time)."""
    if len(a) > len(b):
        a, b = b, a
    shared = sum(min(n, b[k]) for k, n in a.items() if k in b)
    union = a.total() + b.total() - shared
    return shared / union if union else 1.0


def identities(task: Task, pack: Pack) -> dict[str, str]:
    """Each identity value the task names (lower-cased) -> its kind: the caller, the traits of an
    identity kind, the key's values of identity kinds and the identity columns of its own records."""
    found: dict[str, str] = {}

    def add(kind: str, value: Any) -> None:
        if isinstance(value, str) and len(value.strip()) >= 3:
            found.setdefault(value.strip().lower(), kind)
            if kind in ("person", "party", "organization"):
                for word in value.split():
                    if len(word) >= 3 and word[0].isupper():
                        found.setdefault(word.strip(",.").lower(), "person")

    add("person", task.raw.get("customer_name"))
    for trait in task.raw.get("traits", []):
        if trait.get("trait_name") in TRAIT_KINDS:
            add(TRAIT_KINDS[trait["trait_name"]], trait.get("value"))
    for key in task.keys():
        for call in key.exp_tool_calls:
            for option in call.options:
                spec = pack.tools.get(option.name)
                for param, value in option.parameters.items():
                    kind = spec.kinds.get(param) if spec else None
                    if kind in IDENTITY_KINDS:
                        add(kind, value)
    for rows in task.records.values():
        for row in rows:
            for column, value in row.items():
                if isinstance(value, str) and (column.endswith("name") or column in ("id", "phone", "email")):
                    add("person" if column.endswith("name") else "identifier", value)
    return found


def mask_text(text: str, names: dict[str, str]) -> str:
    """`text` with every identity it holds written as its kind."""
    text = _EMAIL.sub(" <email> ", text)
    text = _PHONE.sub(" <phone> ", text)
    text = _ISO_DATE.sub(" <date> ", text)
    text = _MONTH_DATE.sub(" <date> ", text)
    text = _ID_TOKEN.sub(" <id> ", text)
    if names:
        pattern = _names_pattern(tuple(sorted(names, key=len, reverse=True)))
        text = pattern.sub(lambda m: f" <{names.get(m.group(0).lower(), 'person')}> ", text)
    return text


@lru_cache(maxsize=512)
def _names_pattern(names: tuple[str, ...]) -> re.Pattern:
    return re.compile("|".join(rf"(?<!\w){re.escape(n)}(?!\w)" for n in names), re.IGNORECASE)


def _mask_value(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, str):
        masked = mask_text(value, names).split()
        return " ".join(masked)
    return value


def key_view(key: Task, pack: Pack) -> Counter:
    items: Counter = Counter()
    for call in key.exp_tool_calls:
        spec = pack.tools[call.name]
        items[(call.name, "status", call.status)] += 1
        for param, value in call.parameters.items():
            if param in spec.free_text:
                continue
            kind = spec.kinds.get(param)
            items[(call.name, param, f"<{kind}>" if kind in IDENTITY_KINDS else pack.values.key(kind, value))] += 1
    items[("handoff path", tuple(key.exp_handoff_path))] += 1
    return items


def script_view(task: Task, names: dict[str, str]) -> Counter:
    raw = task.raw
    parts = [raw.get("intent", "")]
    parts += [str(r.get("response_value", "")) for r in raw.get("scripted_responses", [])]
    parts += [f"{t.get('trait_name')} {t.get('value')}" for t in raw.get("traits", [])]
    words = _WORD.findall(mask_text("\n".join(parts), names).lower())
    return Counter(tuple(words[i:i + 3]) for i in range(max(0, len(words) - 2)))


def traps_view(task: Task) -> Counter:
    return Counter(str(trap.get("rule")) for trap in task.traps)


def changes_view(key: Task, pack: Pack, names: dict[str, str]) -> Counter:
    """The rows the expected state holds beyond the seed and the task's records, masked."""
    state = key.exp_db_state or {}
    seed = seed_tables(pack.schema_sql, pack.seed_sql)

    def row_item(table: str, row: dict[str, Any], columns: list[str]) -> tuple:
        return (table, *((c, json.dumps(_mask_value(row.get(c), names))) for c in columns))

    def unshared(rows: list[dict[str, Any]], texts: list[str], shared: Counter) -> list[dict[str, Any]]:
        shared = Counter(shared)
        out = []
        for row, text in zip(rows, texts):
            if shared[text] > 0:
                shared[text] -= 1
            else:
                out.append(row)
        return out

    out: Counter = Counter()
    for table, rows in sorted(state.items()):
        if not rows:
            continue
        columns = sorted(rows[0])
        before = [*seed.get(table, []), *key.records.get(table, [])]
        # A row the state and the seed share cancels out whatever the masking (the same values mask
        # the same), so only the others are masked: masking the whole seed for every key of every task
        # was nine tenths of a split-check.
        texts = {side: [json.dumps([r.get(c) for c in columns]) for r in these]
                 for side, these in (("after", rows), ("before", before))}
        shared = Counter(texts["after"]) & Counter(texts["before"])
        out += (Counter(row_item(table, r, columns) for r in unshared(rows, texts["after"], shared))
                - Counter(row_item(table, r, columns) for r in unshared(before, texts["before"], shared)))
    return out


def task_views(task: Task, pack: Pack) -> list[Views]:
    """The views of each answer key of `task` (its main key, then each route's)."""
    names = identities(task, pack)
    script, traps = script_view(task, names), traps_view(task)
    return [Views(key_view(k, pack), script, traps, changes_view(k, pack, names)) for k in task.keys()]


def nearest(views: list[Views], others: list[list[Views]]) -> tuple[int, float]:
    """The index of the closest of `others` (each a task's views) and its similarity (the closest pair of keys)."""
    best = (-1, -1.0)
    for i, theirs in enumerate(others):
        score = max(a.similarity(b) for a in views for b in theirs)
        if score > best[1]:
            best = (i, score)
    return best
