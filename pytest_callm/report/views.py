"""An attempt's verdict and trajectory as the pages show them: tool calls expected beside actual, the
database rows that differ, the transcript, and the attempt's timing, tokens and cost."""

from __future__ import annotations

from typing import Any

from pytest_callm.normalize import normalize
from pytest_callm.report.formatting import count, ms, pretty, show
from pytest_callm.report.word_diff import word_diff
from pytest_callm.scoring.verify import ALL_GATES
from pytest_callm.task.pack import Pack

GATES = ALL_GATES
GATE_TITLES = {"tools": "tools", "handoff": "handoff path", "database": "final database state",
               "words": "words (speech and free text)"}


# --- tool calls --------------------------------------------------------------------------------

def _difference_params(differences: list[str]) -> tuple[set[str], bool]:
    """The parameters named by the verifier's difference lines, and whether the result status differs."""
    params, status = set(), False
    for line in differences:
        head = line.split(":", 1)[0].strip()
        if head == "result status":
            status = True
        else:
            params.add(head)
    return params, status


def parameter_rows(expected: dict[str, Any] | None, actual: Any, differing: set[str],
                   free_text: frozenset[str]) -> list[dict[str, Any]]:
    """One row per argument, expected beside actual, with what the verifier made of it:

    differs (the verifier's difference), same, accepted (equal once normalized, an alias or an
    accepted alternative), free (free text: never compared), or open (an argument the key does not
    constrain)."""
    expected = expected or {}
    args = actual if isinstance(actual, dict) else {}
    rows = []
    for name in sorted(set(expected) | set(args)):
        has_e, has_a = name in expected, name in args
        if name in differing:
            state = "differs"
        elif name in free_text:
            state = "free"
        elif not has_e:
            state = "open"
        elif has_a and show(expected[name]) == show(args[name]):
            state = "same"
        elif has_a and normalize(expected[name]) == normalize(args[name]):
            state = "accepted"
        else:  # absent: from a call made, the verifier let it pass; from a call never made, compared (it fails)
            state = "accepted" if has_a or isinstance(actual, dict) else "differs"
        rows.append({"name": name, "expected": show(expected[name]) if has_e else None,
                     "actual": show(args[name]) if has_a else None, "state": state})
    return rows


def tool_rows(tools_gate: dict[str, Any], trajectory: dict[str, Any], pack: Pack | None,
              raw_task: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Expected calls beside the actual calls the verifier paired them with (or explained them
    against), and the actual calls no expected call accounts for; in the order of the call."""
    calls = trajectory.get("tool_calls") or []
    by_index = {c.get("index"): c for c in calls}
    details = tools_gate.get("details") or {}
    forbidden = set(details.get("forbidden") or [])
    raw_expected = (raw_task or {}).get("exp_tool_calls") or []
    rows: list[tuple[tuple, dict[str, Any]]] = []
    shown: set[int] = set()
    previous = -1
    for n, exp in enumerate(details.get("calls") or []):
        matched, closest = exp.get("matched"), exp.get("closest")
        at = matched if matched is not None else closest
        actual = by_index.get(at) if at is not None else None
        state = "hit" if matched is not None else "mismatch" if actual is not None else "missing"
        if at is not None:
            shown.add(at)
            order = (at, 0, n)
            previous = at
        else:
            order = (previous, 1, n)
        differing, status_differs = _difference_params(exp.get("differences") or [])
        raw = raw_expected[n] if n < len(raw_expected) and isinstance(raw_expected[n], dict) else {}
        rows.append((order, _tool_row(state, exp["expected"], exp.get("parameters") or {}, exp.get("status"),
                                      actual, differing, status_differs, pack, exp.get("differences") or [],
                                      raw.get("output"))))
    for c in calls:
        if c.get("index") in shown:
            continue
        state = "forbidden" if c.get("index") in forbidden else "refused" if c.get("refused") else "extra"
        row = _tool_row(state, None, None, None, c, set(), False, pack, [], None)
        rows.append(((c.get("index", 0), 0, 10**6), row))
    return [row for _, row in sorted(rows, key=lambda r: r[0])]


def _tool_row(state: str, expected_name: str | None, expected_params: dict[str, Any] | None,
              expected_status: str | None, actual: dict[str, Any] | None, differing: set[str],
              status_differs: bool, pack: Pack | None, differences: list[str], expected_output: Any) -> dict[str, Any]:
    name = expected_name or (actual or {}).get("name")
    spec = pack.tools.get(name) if pack is not None and name else None
    free = spec.free_text if spec is not None else frozenset()
    arguments = (actual or {}).get("arguments")
    return {
        "state": state,
        "name": name,
        "expected": None if expected_name is None else {"name": expected_name, "status": expected_status},
        "actual": None if actual is None else {
            "index": actual.get("index"), "name": actual.get("name"), "agent": actual.get("agent"),
            "status": actual.get("status"), "refused": actual.get("refused"),
            "raw_arguments": None if isinstance(arguments, dict) else actual.get("raw_arguments"),
            "result": pretty(actual.get("result")), "duration_ms": actual.get("duration_ms")},
        "parameters": parameter_rows(expected_params, arguments, differing, free),
        "status_differs": status_differs,
        "differences": differences,
        "expected_output": None if expected_output is None else pretty(expected_output),
    }


# --- database ----------------------------------------------------------------------------------

def database_view(gate: dict[str, Any]) -> list[dict[str, Any]]:
    """Per compared table that differs: missing rows (expected, not there), extra rows (there, not
    expected) and changed rows (paired by the table's key, only the differing columns)."""
    out = []
    for table, diff in sorted(((gate.get("details") or {}).get("tables") or {}).items()):
        rows = []
        for row in diff.get("missing") or []:
            rows.append({"kind": "missing", "key": None, "cells": [
                {"column": c, "expected": show(v), "actual": None, "differs": True} for c, v in sorted(row.items())]})
        for row in diff.get("extra") or []:
            rows.append({"kind": "extra", "key": None, "cells": [
                {"column": c, "expected": None, "actual": show(v), "differs": True} for c, v in sorted(row.items())]})
        for ch in diff.get("changed") or []:
            key = ", ".join(f"{k} = {show(v)}" for k, v in (ch.get("key") or {}).items())
            rows.append({"kind": "changed", "key": key, "cells": [
                {"column": c, "expected": show(ev), "actual": show(av), "differs": True}
                for c, (ev, av) in sorted((ch.get("columns") or {}).items())]})
        out.append({"table": table, "rows": rows})
    return out


# --- transcript --------------------------------------------------------------------------------

def transcript_view(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    """The turns in order, with each tool call placed at the time it started."""
    rows = []
    for n, turn in enumerate(trajectory.get("transcript") or []):
        row = {"kind": turn.get("role"), "at_ms": turn.get("at_ms") or 0.0, "order": (turn.get("at_ms") or 0.0, 0, n),
               "agent": turn.get("agent"), "said": turn.get("said") or "", "errors": [], "style": []}
        if turn.get("role") == "caller":
            heard = turn.get("heard")
            heard = [row["said"]] if heard is None else list(heard)
            row["said_runs"], row["heard_lines"] = word_diff(row["said"], heard)
            row["changed"] = heard != [row["said"]]
            for e in turn.get("line_errors") or []:
                entry = {"type": str(e.get("type") or "error").replace("_", " "),
                         "before": show(e.get("before", "")), "after": show(e.get("after", ""))}
                (row["style"] if e.get("style") else row["errors"]).append(entry)
        rows.append(row)
    for c in trajectory.get("tool_calls") or []:
        args = c.get("arguments")
        if isinstance(args, dict):
            text = ", ".join(f"{k}={show(v)}" for k, v in args.items())
        else:
            text = show(c.get("raw_arguments"))
        at = c.get("started_ms") or 0.0
        rows.append({"kind": "tool", "at_ms": at, "order": (at, 1, c.get("index", 0)),
                     "agent": c.get("agent"), "said": f"{c.get('name')}({text})", "status": c.get("status"),
                     "refused": c.get("refused")})
    return sorted(rows, key=lambda r: r["order"])


# --- usage and the verdict ---------------------------------------------------------------------

USAGE_FIELDS = ("requests", "requests_without_usage", "ttft_median_ms", "input_tokens", "cached_input_tokens",
                "output_tokens", "reasoning_tokens", "cost_usd", "spoken_words", "est_duration_s")


def usage_view(usage: dict[str, Any] | None, trajectory: dict[str, Any]) -> dict[str, Any]:
    if usage:  # every field the page reads, present (None where a record lacks it)
        usage = {**{k: None for k in USAGE_FIELDS}, **usage}
    requests = []
    for r in trajectory.get("requests") or []:
        u = r.get("usage") or {}
        requests.append({"index": r.get("index"), "agent": r.get("agent"), "exchange": r.get("exchange"),
                         "ttft": ms(r.get("ttft_ms")), "duration": ms(r.get("duration_ms")),
                         "input": count(u.get("input_tokens")) if u else "n/a",
                         "cached": count(u.get("cached_input_tokens")) if u else "n/a",
                         "output": count(u.get("output_tokens")) if u else "n/a",
                         "tools": ", ".join(r.get("tool_calls") or []), "notes": "; ".join(r.get("notes") or [])})
    return {"usage": usage, "requests": requests,
            "duration": ms(trajectory.get("duration_ms")) if trajectory else "n/a",
            "end_reason": (trajectory or {}).get("end_reason") or "", "exchanges": (trajectory or {}).get("exchanges"),
            "reruns": (trajectory or {}).get("reruns", 0)}


def failing_sentence(gates: dict[str, bool]) -> str:
    failed = [GATE_TITLES[g] for g in GATES if gates.get(g) is False]
    if not failed:
        return "Every gate passed on this conversation."
    joined = failed[0] if len(failed) == 1 else ", ".join(failed[:-1]) + " and " + failed[-1]
    return f"This attempt fails because {joined} did not match. Combined passes only when every gate does."
