"""What a saved attempt leaves out because its reader puts it back exactly (callm-trajectory/3).

In the trajectory, a model request or a transcript turn saves only the fields that differ from their
defaults (most requests have no text, reasoning, usage or notes), a request or tool call its `index`
only where that is not its place in the list, a tool call `refused` only when true and
`raw_arguments` only when they are not exactly `json.dumps(arguments, sort_keys=True)` (the file
sorts keys, so that is what a reader can rebuild; the model's own spelling is kept otherwise). In the
verdict, a gate leaves out its own name and its empty lists of problems (and of differences, of
forbidden calls, or of the words gate's findings), and `paper_passed` goes (the three gates say it). `fill` restores every field, so a loaded attempt is the one that was played.
"""

from __future__ import annotations

import json
from typing import Any

REQUEST_DEFAULTS = {"text": "", "reasoning": None, "usage": None, "notes": []}
TURN_DEFAULTS = {"agent": None, "heard": None, "line_errors": [], "notes": []}
CALL_DEFAULTS = {"refused": False}
GATES = ("tools", "handoff", "database", "words")
PAPER_GATES = GATES[:3]


def _without(record: dict[str, Any], defaults: dict[str, Any], index: int | None = None) -> dict[str, Any]:
    return {k: v for k, v in record.items()
            if not (k in defaults and v == defaults[k]) and not (k == "index" and index is not None and v == index)}


def _with(record: dict[str, Any], defaults: dict[str, Any], index: int | None = None) -> dict[str, Any]:
    placed = {"index": index} if index is not None else {}
    return {**{k: (list(v) if isinstance(v, list) else v) for k, v in defaults.items()}, **placed, **record}


def _spelled_plainly(call: dict[str, Any]) -> bool:
    args = call.get("arguments")
    return args is not None and "raw_arguments" in call and call["raw_arguments"] == json.dumps(args, sort_keys=True)


def _slim_call(c: dict[str, Any], n: int) -> dict[str, Any]:
    c = _without(c, CALL_DEFAULTS, n)
    return {k: v for k, v in c.items() if k != "raw_arguments"} if _spelled_plainly(c) else c


def _fill_call(c: dict[str, Any], n: int) -> dict[str, Any]:
    if "raw_arguments" not in c:
        c = {**c, "raw_arguments": json.dumps(c.get("arguments"), sort_keys=True)}
    return _with(c, CALL_DEFAULTS, n)


def _each(t: dict[str, Any], record, call) -> dict[str, Any]:
    """The trajectory with `record` applied to its requests and turns, `call` to its tool calls."""
    out = dict(t)
    if "requests" in out:
        out["requests"] = [record(r, REQUEST_DEFAULTS, n) for n, r in enumerate(out["requests"])]
    if "transcript" in out:
        out["transcript"] = [record(turn, TURN_DEFAULTS) for turn in out["transcript"]]
    if "tool_calls" in out:
        out["tool_calls"] = [call(c, n) for n, c in enumerate(out["tool_calls"])]
    return out


TRAJECTORY_DEFAULTS = {"rerun_because": [], "cuts": []}  # nearly every call ran once


def _slim_trajectory(t: dict[str, Any]) -> dict[str, Any]:
    return _each(_without(t, TRAJECTORY_DEFAULTS), _without, _slim_call)


def _fill_trajectory(t: dict[str, Any]) -> dict[str, Any]:
    return _each(_with(t, TRAJECTORY_DEFAULTS), _with, _fill_call)


def _empty_lists(d: dict[str, Any], names: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if not (k in names and v == [])}


def _each_gate(v: dict[str, Any], gate_fn, calls_fn) -> dict[str, Any]:
    """The verdict with `gate_fn(gate, name)` applied to each gate, `calls_fn` to the tools gate's details."""
    out = dict(v)
    for g in GATES:
        gate = out.get(g)
        if not isinstance(gate, dict):
            continue
        gate = gate_fn(gate, g)
        details = gate.get("details")
        if g == "tools" and isinstance(details, dict):
            gate["details"] = calls_fn(details)
        out[g] = gate
    return out


def _slim_tools_details(details: dict[str, Any]) -> dict[str, Any]:
    details = _empty_lists(details, ("forbidden",))
    if isinstance(details.get("calls"), list):
        details["calls"] = [_empty_lists(c, ("differences",)) for c in details["calls"]]
    return details


def _fill_tools_details(details: dict[str, Any]) -> dict[str, Any]:
    details = {"forbidden": [], **details}
    if isinstance(details.get("calls"), list):
        details["calls"] = [{"differences": [], **c} for c in details["calls"]]
    return details


def _paper_passed(v: dict[str, Any]) -> bool:
    return all(isinstance(v.get(g), dict) and v[g].get("passed") is True for g in PAPER_GATES)


def _slim_gate(gate: dict[str, Any], g: str) -> dict[str, Any]:
    out = {k: val for k, val in _empty_lists(gate, ("problems",)).items() if not (k == "gate" and val == g)}
    if g == "words" and out.get("details") == {"findings": []}:
        del out["details"]
    return out


def _fill_gate(gate: dict[str, Any], g: str) -> dict[str, Any]:
    return {"gate": g, "problems": [], **({"details": {"findings": []}} if g == "words" else {}), **gate}


def _slim_verdict(v: dict[str, Any]) -> dict[str, Any]:
    out = _each_gate(v, _slim_gate, _slim_tools_details)
    if "words" in out and out.get("paper_passed") == _paper_passed(out):
        del out["paper_passed"]
    return out


def _fill_verdict(v: dict[str, Any]) -> dict[str, Any]:
    out = _each_gate(v, _fill_gate, _fill_tools_details)
    if "words" in out and "paper_passed" not in out:
        out["paper_passed"] = _paper_passed(out)
    return out


def _apply(record: dict[str, Any], on_trajectory, on_verdict) -> dict[str, Any]:
    out = dict(record)
    if isinstance(out.get("trajectory"), dict):
        out["trajectory"] = on_trajectory(out["trajectory"])
    if isinstance(out.get("verdict"), dict):
        out["verdict"] = on_verdict(out["verdict"])
    return out


def slim(record: dict[str, Any]) -> dict[str, Any]:
    """A saved attempt (task, trajectory, verdict, usage) as written: what `fill` rebuilds left out."""
    return _apply(record, _slim_trajectory, _slim_verdict)


def fill(record: dict[str, Any]) -> dict[str, Any]:
    """A saved attempt of callm-trajectory/3 with every field `slim` left out put back."""
    return _apply(record, _fill_trajectory, _fill_verdict)
