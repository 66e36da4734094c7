"""What a saved trajectory leaves out because its reader puts it back exactly (callm-trajectory/3).

A model request or a transcript turn saves only the fields that differ from their defaults (most
requests have no text, reasoning, usage or notes), and a tool call drops `raw_arguments` when they
are exactly `json.dumps(arguments, sort_keys=True)` (the file sorts keys, so that is what a reader
can rebuild; the model's own spelling, whatever it is, is kept otherwise).
`fill` restores every field, so a loaded trajectory is the one that was played.
"""

from __future__ import annotations

import json
from typing import Any

REQUEST_DEFAULTS = {"text": "", "reasoning": None, "usage": None, "notes": []}
TURN_DEFAULTS = {"agent": None, "heard": None, "line_errors": [], "notes": []}


def _without(record: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in defaults or v != defaults[k]}


def _spelled_plainly(call: dict[str, Any]) -> bool:
    args = call.get("arguments")
    return args is not None and "raw_arguments" in call and call["raw_arguments"] == json.dumps(args, sort_keys=True)


def slim(trajectory: dict[str, Any]) -> dict[str, Any]:
    """The trajectory as saved: what `fill` can rebuild left out."""
    out = dict(trajectory)
    if "requests" in out:
        out["requests"] = [_without(r, REQUEST_DEFAULTS) for r in out["requests"]]
    if "transcript" in out:
        out["transcript"] = [_without(t, TURN_DEFAULTS) for t in out["transcript"]]
    if "tool_calls" in out:
        out["tool_calls"] = [{k: v for k, v in c.items() if k != "raw_arguments"} if _spelled_plainly(c) else c
                             for c in out["tool_calls"]]
    return out


def _with(record: dict[str, Any], defaults: dict[str, Any]) -> dict[str, Any]:
    return {**{k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()}, **record}


def fill(trajectory: dict[str, Any]) -> dict[str, Any]:
    """The trajectory in full, from a saved one of any format (older ones lack nothing)."""
    out = dict(trajectory)
    if "requests" in out:
        out["requests"] = [_with(r, REQUEST_DEFAULTS) for r in out["requests"]]
    if "transcript" in out:
        out["transcript"] = [_with(t, TURN_DEFAULTS) for t in out["transcript"]]
    if "tool_calls" in out:
        out["tool_calls"] = [c if "raw_arguments" in c
                             else {**c, "raw_arguments": json.dumps(c.get("arguments"), sort_keys=True)}
                             for c in out["tool_calls"]]
    return out
