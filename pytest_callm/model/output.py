"""What the model (or the caller model) writes, made safe for the harness to carry.

A model can write anything: text with lone surrogates (which no UTF-8 encoder will take), tool-call
arguments that are not JSON, nested 200,000 deep, or megabytes long. None of that may raise inside
the engine, the SDK's serialisation of the next request, the trajectory file or the tool server:
it is the model's mistake, so it is refused to the model as `invalid_arguments` and counts against
it. The engine passes every reply through `safe_reply`; the tool server parses request bodies with
`parse_arguments`, the same rules.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_callm.model import redact


MAX_ARGUMENT_CHARS = 100_000  # far above any real tool call; a 20 MB string is a model gone astray
MAX_DEPTH = 32  # the deepest legitimate argument of any pack is 3 levels
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # paired ones are single characters in a Python str
NOT_UNICODE = "text that is not valid Unicode (a lone surrogate)"
NOT_JSON = "arguments are not valid JSON"
NOT_UTF8 = "arguments are not UTF-8"
NOT_FINITE = "NaN and Infinity are not JSON numbers"


class _NotFinite(ValueError):
    pass


def _refuse_constant(name: str) -> float:
    raise _NotFinite(name)


def clean_text(text: str) -> str:
    """Text any encoder accepts: each lone surrogate becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", text)


def clip(raw: str) -> str:
    """Raw arguments as the history and the trajectory keep them: encodable, and bounded in size (a key
    across the cut is redacted whole first)."""
    raw = clean_text(raw)
    if len(raw) > MAX_ARGUMENT_CHARS:
        return redact.cut(raw, MAX_ARGUMENT_CHARS) + f"... [{len(raw) - MAX_ARGUMENT_CHARS} more characters cut]"
    return raw


def _problem_in(value: Any) -> str | None:
    """Walks the parsed value without recursion: too deep, or text with a lone surrogate."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, str):
            if _LONE_SURROGATE.search(item):
                return NOT_UNICODE
        elif isinstance(item, dict):
            for key, v in item.items():
                if _LONE_SURROGATE.search(key):
                    return NOT_UNICODE
                stack.append((v, depth + 1))
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return None


def parse_arguments(raw: str | bytes) -> tuple[dict[str, Any] | None, str | None]:
    """(arguments, None) for a usable JSON object, else (None, what is wrong, said to the model)."""
    if len(raw) > MAX_ARGUMENT_CHARS:
        return None, f"arguments are {len(raw):,} characters long (at most {MAX_ARGUMENT_CHARS:,})"
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError:
            return None, NOT_UTF8
    if _LONE_SURROGATE.search(raw):
        return None, NOT_UNICODE
    try:
        # Python's json reads NaN, Infinity and -Infinity, which JSON has not: a tool doing sums
        # with one would crash, so they are the model's bad arguments here.
        value = json.loads(raw or "{}", parse_constant=_refuse_constant)
    except RecursionError:  # the C scanner gives up on deep nesting before we can measure it
        return None, f"nested deeper than {MAX_DEPTH} levels"
    except _NotFinite:
        return None, NOT_FINITE
    except ValueError:
        return None, NOT_JSON
    if not isinstance(value, dict):
        return None, f"(arguments): expected a JSON object, got {type(value).__name__}"
    problem = _problem_in(value)
    return (None, problem) if problem else (value, None)


def _long_int(digits: str) -> int | str:
    # Python refuses to read an integer of more than 4,300 digits (ValueError, not a JSON error): such a
    # number is kept as its digits, text the model's server wrote, read like any field of the wrong type.
    return int(digits) if len(digits) <= 4_300 else digits


def read_json(text: str) -> Any:
    """A chunk or a reply body as JSON, any integer in it read (`_long_int`): only bad JSON raises."""
    return json.loads(text, parse_int=_long_int)


# Streamed chunk fields of the wrong type: model/client.py reads them as what they hold.

def field_text(value: Any) -> str:
    """A streamed field that should hold text, as text whatever the server put there (a number, an
    object, content parts): the model's output, read as written, never a crash of the reader."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list):  # content parts: their text
        return "".join(field_text(p.get("text")) if isinstance(p, dict) else field_text(p) for p in value)
    return json.dumps(value, ensure_ascii=False)


def object_list(value: Any) -> list[Any]:
    """A field that should be a list of objects: one object alone is that list; anything else, none."""
    if isinstance(value, dict):
        return [value]
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def call_index(value: Any) -> int:
    """A tool call's `index`, as a number however it came ("1", 1.0, missing: 0)."""
    try:
        return int(value) if not isinstance(value, bool) else 0
    except (TypeError, ValueError, OverflowError):
        return 0
