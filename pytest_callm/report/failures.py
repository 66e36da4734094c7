"""Where models fail: the leaderboard's `failures.html`, across the ranked models.

Two views, each cell linking to the attempts behind it (a list on the same page, each attempt opening on
its task's page in the board's copy of the run's report):

- models x category: pass^k with its 95% interval over the category's tasks (scopes.py), and how many
  attempts of it failed;
- failed attempts by gate, by desk, by tool and by house rule, per model.

What an attempt failed on is read from the verdict saved with it (trajectories/.../attempt-N.json), the
findings each gate names:

- gate: every gate that failed (tools, handoff, database, words);
- tool: each expected call no call matched, and each call of a tool the task forbids;
- desk: the desk (agent) that owns each such tool (or that made the forbidden call), each expected desk
  the call never reached, and the desk that spoke or wrote each words finding;
- house rule: the rule each words finding names, a rule named by a free-text problem of the database gate,
  and the rule of each trap the task sets (task.json `traps`) that one of the failed gates catches.

An attempt counts once in each cell it names, so a row's cells can add up to more than its failures. The
desks and tools come from the pack (agent_blueprint.json, tools.json), the rules from the task file, both
found as the run's report finds them; without them an attempt still counts by gate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.report.formatting import slug, task_page
from pytest_callm.saved import files

PAGE = "failures.html"
GATES = ("tools", "handoff", "database", "words")
DIMENSIONS = (("gate", "By gate"), ("desk", "By desk (agent)"), ("tool", "By tool"), ("rule", "By house rule"))
HOUSE_RULE = re.compile(r"house rule ([A-Za-z0-9_-]+)")
CALL_AT = re.compile(r"\(call #(\d+)\)")
AGENT_AT = re.compile(r"turn \d+ \(([^)]+)\)")


@dataclass
class Failed:
    """One failed attempt of one model, and what its verdict names."""

    model: str
    industry: str
    task_id: str
    attempt: int
    category: str | None
    link: str | None  # relative to the board's index: the attempt on its task page, or None (no report copy)
    why: str  # the verdict's first problem line
    names: dict[str, set[str]] = field(default_factory=lambda: {d: set() for d, _ in DIMENSIONS})

    @property
    def label(self) -> str:
        return f"{self.industry}/{self.task_id}, attempt {self.attempt}"


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(files.read_text(path))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    from pytest_callm.saved.rundir import TRAJECTORY_FORMAT
    from pytest_callm.saved.slim import fill

    return fill(data) if data.get("format") == TRAJECTORY_FORMAT else data


def _traps(task_path: str | None, cache: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    if not task_path:
        return []
    if task_path not in cache:
        try:
            raw = json.loads(files.read_text(Path(task_path)))
            cache[task_path] = [t for t in raw.get("traps") or [] if isinstance(t, dict)]
        except (OSError, ValueError, RecursionError):
            cache[task_path] = []
    return cache[task_path]


def names_of(verdict: dict[str, Any], trajectory: dict[str, Any], owners: Callable[[str], list[str]],
             traps: list[dict[str, Any]]) -> dict[str, set[str]]:
    """What a failed verdict names, by dimension (the rules are in the module's docstring)."""
    out: dict[str, set[str]] = {d: set() for d, _ in DIMENSIONS}
    calls = {c.get("index"): c for c in trajectory.get("tool_calls") or [] if isinstance(c, dict)}
    failed = {g for g in GATES if isinstance(verdict.get(g), dict) and verdict[g].get("passed") is False}
    out["gate"] = set(failed)
    tools = verdict.get("tools") or {}
    if "tools" in failed:
        details = tools.get("details") or {}
        for expected in details.get("calls") or []:
            if expected.get("matched") is None and expected.get("expected"):
                out["tool"].add(expected["expected"])
                out["desk"].update(owners(expected["expected"]))
        for index in details.get("forbidden") or []:
            call = calls.get(index) or {}
            if call.get("name"):
                out["tool"].add(call["name"])
            if call.get("agent"):
                out["desk"].add(call["agent"])
    if "handoff" in failed:
        details = (verdict.get("handoff") or {}).get("details") or {}
        reached = set(details.get("actual") or [])
        out["desk"].update(a for a in details.get("expected") or [] if a not in reached)
    if "database" in failed:
        for problem in (verdict.get("database") or {}).get("problems") or []:
            out["rule"].update(HOUSE_RULE.findall(problem))
    if "words" in failed:
        for finding in ((verdict.get("words") or {}).get("details") or {}).get("findings") or []:
            if not isinstance(finding, dict):
                continue
            if finding.get("rule"):
                out["rule"].add(str(finding["rule"]))
            where = str(finding.get("where") or "")
            agent = AGENT_AT.search(where)
            call = CALL_AT.search(where)
            if agent:
                out["desk"].add(agent.group(1))
            elif call and (calls.get(int(call.group(1))) or {}).get("agent"):
                out["desk"].add(calls[int(call.group(1))]["agent"])
    for trap in traps:
        if trap.get("rule") and failed & set(trap.get("caught_by") or []):
            out["rule"].add(str(trap["rule"]))
    return out


def _why(verdict: dict[str, Any], entry: dict[str, Any]) -> str:
    for gate in GATES:
        problems = (verdict.get(gate) or {}).get("problems") or []
        if (verdict.get(gate) or {}).get("passed") is False and problems:
            return f"{gate}: {problems[0].strip()}"
    failed = [g for g, ok in (entry.get("gates") or {}).items() if ok is False]
    return "failed " + ", ".join(failed) if failed else "failed"


def attempt_link(report_copy: str | None, industry: str, task_id: str, attempt: int) -> str | None:
    """The attempt on its task's page in the board's copy of the run's report (relative to the index)."""
    if not report_copy:
        return None
    base = report_copy.rsplit("/", 1)[0]
    return f"{base}/{task_page('report.html', industry, task_id)}#{slug(industry, task_id, f'attempt-{attempt}')}"


def failed_attempts(row: Any, packs: Any) -> list[Failed]:
    """The failed (scored, not passed) attempts of a leaderboard row, each with what its verdict names;
    `packs` (sources.Packs) gives each industry's pack, for the desks that own the tools."""
    from pytest_callm.saved.rundir import RunDir

    run = RunDir(row.run.path)
    traps_cache: dict[str, list[dict[str, Any]]] = {}
    out = []
    for entry in row.run.report.get("attempts") or []:
        if entry.get("passed") is not False:
            continue
        industry, task_id, number = entry.get("industry"), entry.get("task_id"), entry.get("attempt")
        if not industry or not task_id or number is None:
            continue
        saved = _read(run.trajectory_path(industry, task_id, number)) or {}
        verdict = saved.get("verdict") or {}
        pack = packs.get(industry)

        def owners(tool: str, pack=pack) -> list[str]:
            return pack.owner_agents(tool) if pack is not None else []

        if verdict.get("passed") is False:
            names = names_of(verdict, saved.get("trajectory") or {}, owners,
                             _traps((saved.get("task") or {}).get("path"), traps_cache))
        else:  # no saved verdict, or one the report has since rescored: the report's gates alone
            names = {d: set() for d, _ in DIMENSIONS}
            names["gate"] = {g for g, ok in (entry.get("gates") or {}).items() if ok is False}
        out.append(Failed(row.name, industry, task_id, number, entry.get("category"),
                          attempt_link(row.report_copy, industry, task_id, number), _why(verdict, entry), names))
    return out


def cell_id(dimension: str, value: str, page: str) -> str:
    """The anchor of a cell's list of attempts: one per dimension, value and model (its page's name)."""
    return "attempts-" + slug(dimension, value, Path(page).stem)


def context(placed: list[Any], known: Any, passk: str, packs: Any, scope_of: Callable[[str], Any]) -> dict[str, Any]:
    """What failures.html shows: `placed` the ranked rows in ranking order (leaderboard.Placed), `known`
    the runs' industries, categories and names (scopes.Known), `scope_of(code)` a category's scope."""
    rows = [p.row for p in placed]
    failed = {r.name: failed_attempts(r, packs) for r in rows}
    lists: list[dict[str, Any]] = []  # every cell's attempts, in the order the tables show them

    def cell(dimension: str, value: str, row: Any, attempts: list[Failed], caption: str) -> dict[str, Any]:
        anchor = cell_id(dimension, value, row.page)
        if attempts:
            lists.append({"id": anchor, "caption": caption, "model": row.name, "attempts": attempts})
        return {"count": len(attempts), "href": f"#{anchor}" if attempts else None}

    categories = []
    for code in known.categories:
        names = known.category_names(code)
        cells = []
        for row in rows:
            m = row.measure(scope_of(code))
            behind = [f for f in failed[row.name] if f.category == code]
            caption = f"{row.name}: failed attempts in {known.label(scope_of(code))}"
            cells.append({"figures": m, **cell("category", code, row, behind, caption)})
        categories.append({"code": code, "label": known.category_label(code), "names": names, "cells": cells})
    tables = []
    for dimension, title in DIMENSIONS:
        values = sorted({v for fs in failed.values() for f in fs for v in f.names[dimension]},
                        key=lambda v: (GATES.index(v) if dimension == "gate" and v in GATES else 0, v))
        body = []
        for value in values:
            cells = []
            for row in rows:
                behind = [f for f in failed[row.name] if value in f.names[dimension]]
                cells.append(cell(dimension, value, row, behind, f"{row.name}: failed attempts naming {dimension} {value}"))
            body.append({"value": value, "cells": cells, "total": sum(c["count"] for c in cells)})
        body.sort(key=lambda r: -r["total"])
        tables.append({"dimension": dimension, "title": title, "rows": body})
    return {"models": rows, "placed": placed, "passk": passk, "categories": categories, "tables": tables,
            "lists": lists, "failed": {name: len(fs) for name, fs in failed.items()},
            "scored": {r.name: r.overall.attempts for r in rows}}
