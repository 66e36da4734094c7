"""The HTML report of a run: pages a person opens to see how a model did and why a call failed.

    callm report RUN_DIR [--industries DIR] [-o PAGE]      ->  RUN_DIR/report.html
                                                               RUN_DIR/report/<industry>/<task>.html

The pages are made with Jinja2 (autoescape on: every value from a run is escaped) from the run
directory alone: `report.json` for the figures, `manifest.json` for the settings, and the trajectory
files for what happened in each attempt. They need no server and load nothing from elsewhere: the
main page's CSS is inline, the task pages link their one stylesheet beside them (`report/style.css`,
relative: file:// loads it), the handoff graphs are inline SVG, links are relative, and the only
interactive parts are <details>.

The main page (`report.html`, report.html.j2) stays light however long the run:

- an overview table per industry, category and difficulty (tasks, attempts, pass@1 and pass^k, with
  the bootstrap intervals where the summary has them), the gate failures and the unscored attempts;
- the model, caller and line settings of the manifest (the names of the key variables, never a key);
- a table of the tasks, failing ones first, each linking to its section or its page;
- a section per task with an attempt that failed or was not scored, holding those attempts in full;
- one line per passing attempt (its gates; requests, TTFT, tokens and cost when the run has usage),
  read from report.json alone, linking to the attempt on its task's page.

A task's page (`report/<industry>/<task>.html` beside `report.html`, task.html.j2) draws the task's
expected handoff path once, then holds every attempt of the task, failing ones first and open,
passing ones collapsed. One macro (macros.html.j2) draws an attempt on either page. One that did not
pass is in full: the combined verdict and the three gates, expected against actual tool calls with
the differing arguments marked (the results in a collapsible block), the expected and the actual
handoff path drawn on the industry's handoff graph, the database rows that differ, the transcript
with what the caller said beside what the agent heard (recognizer errors marked), and the attempt's
tokens, cost and latency. One that passed is in brief, saying what equals the expected rather than
repeating it: a line for its calls, its path ("as expected", or drawn when it holds more hops) and its
database, the transcript in full (every tool call a line of it, with its arguments and status), and
its cost and latency in a line. That keeps a whole run directory near 10 KB an oracle attempt.

During a run the task pages are written as each task's attempts all arrive (task_pages.py); at the
end `write_html_report` writes the main page and the task pages not written yet. `callm report` and
`callm merge` write every page.

The handoff graph comes from the task's industry pack: from `packs_dirs` when given, else from the
`industries/` folders (and a pyproject's `callm_industries`) above the task files and the run
directory. Without the pack the paths are listed as plain text.

A rescored run (`--callm-rescore`) keeps no trajectories of its own: the pages read those of the run
it rescored, and verify them again with today's verifier (the figures of its report.json came from
that verifier, not from the verdicts stored with the original run).

Secrets: the settings are shown with any key-like field blanked, and the values of the environment
variables the manifest names (`api_key_env`, ...) are struck from every finished page, should a key
have found its way into a transcript or a tool result.
"""

from __future__ import annotations

import argparse
import difflib
import functools
import json
import math
import os
import re
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Collection

import jinja2
from markupsafe import escape

from pytest_callm.model import redact as secrets_out
from pytest_callm.report.compare import line_name
from pytest_callm.normalize import normalize
from pytest_callm.task.pack import Pack, PackError, default_industries, discover_packs, load_pack
from pytest_callm.saved.rundir import RunDir, pack_hash

PAGE_NAME = "report.html"
STYLESHEET = "style.css"  # the task pages' one stylesheet, in the folder of their industry folders
GATES = ("tools", "handoff", "database")
GATE_TITLES = {"tools": "tools", "handoff": "handoff path", "database": "final database state"}
REDACTED = "[redacted]"
# Field names whose values are secrets (`api_key`, `auth_token`, `Authorization`, ...); `*_env` fields
# hold the name of a variable, which is shown.
SECRET_FIELD = re.compile(r"(?i)(^|[_-])(api_?key|secret|password|passwd|authorization|bearer|token)$")
MIN_SECRET_LENGTH = 8  # shorter variable values are not struck from the page (they would hit ordinary text)


class ReportError(Exception):
    """A folder that holds no run to report on."""


# --- formatting helpers (also the template's filters) ------------------------------------------

def show(value: Any) -> str:
    """A value as a person reads it: text as is, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, indent=2)


def pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def interval(iv: dict[str, Any] | None) -> str:
    if not iv or iv.get("low") is None or iv.get("high") is None:
        return ""
    return f"[{iv['low'] * 100:.1f}, {iv['high'] * 100:.1f}]"


def ms(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1000:.2f} s" if value >= 10_000 else f"{value:,.0f} ms" if value >= 10 else f"{value:.1f} ms"


def usd(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def count(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else ("n/a" if value is None else str(value))


def slug(*parts: str) -> str:
    return "-".join(re.sub(r"[^A-Za-z0-9_-]+", "_", p) for p in parts)


def task_page(page_name: str, industry: str, task_id: str) -> str:
    """A task's page, relative to the main page: `report/<industry>/<task>.html` beside `report.html`."""
    return f"{Path(page_name).stem}/{slug(industry)}/{slug(task_id)}.html"


# --- secrets -----------------------------------------------------------------------------------

def redact(value: Any, key: str = "") -> Any:
    """A config as the page shows it: every key-like field blanked, whatever the manifest holds."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if key and not key.lower().endswith("_env") and SECRET_FIELD.search(key) and value not in (None, "", False):
        return REDACTED
    return value


def secret_variables(manifest: dict[str, Any] | None) -> list[str]:
    """The names of the environment variables the run's configs read keys from (`*_env` fields)."""
    names: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if str(k).lower().endswith("_env") and isinstance(v, str) and v:
                    names.append(v)
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(manifest or {})
    return sorted(set(names))


def strike_secrets(page: str, variables: list[str]) -> str:
    """Remove the values of `variables` from the page, raw and as the template escaped them."""
    for name in variables:
        value = os.environ.get(name, "")
        if len(value) < MIN_SECRET_LENGTH:
            continue
        for form in {value, str(escape(value))}:
            page = page.replace(form, REDACTED)
    return page


def flat_settings(config: Any, prefix: str = "") -> list[tuple[str, str]]:
    """A config as (dotted name, value) rows."""
    if not isinstance(config, dict):
        return [(prefix or "value", show(config))]
    rows: list[tuple[str, str]] = []
    for k, v in config.items():
        name = f"{prefix}.{k}" if prefix else str(k)
        if isinstance(v, dict) and v:
            rows.extend(flat_settings(v, name))
        elif v not in (None, "", {}, []):
            rows.append((name, show(v)))
    return rows


# --- loading the run ---------------------------------------------------------------------------

def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as e:
        raise ReportError(f"{path} is not valid JSON: {e}") from None


def _saved_attempts(root: Path) -> list[dict[str, Any]]:
    """Every complete trajectory file under `root`/trajectories."""
    return RunDir(root).saved_attempts()


class Packs:
    """The packs of the run's industries, found once, each loaded once; None where none is found."""

    def __init__(self, dirs: list[Path]):
        self.paths: dict[str, Path] = {}
        self.searched: set[Path] = set()
        self._loaded: dict[str, Pack | None] = {}
        self.problems: dict[str, str] = {}
        self.add(dirs)

    def add(self, dirs: list[Path]) -> None:
        """Search more folders, after those already searched (the first folder to name a pack wins)."""
        for d in dirs:
            if d in self.searched:
                continue
            self.searched.add(d)
            try:
                found = discover_packs([d]) if d.is_dir() else {}
            except PackError:
                continue
            for name, path in found.items():
                if name not in self.paths:
                    self.paths[name] = path
                    if self._loaded.get(name, True) is None:  # looked for earlier, in vain: look again
                        del self._loaded[name]
                        self.problems.pop(name, None)

    def get(self, name: str) -> Pack | None:
        if name not in self._loaded:
            pack = None
            if name not in self.paths:
                self.problems[name] = "the industry pack was not found"
            else:
                try:
                    pack = load_pack(self.paths[name])
                except PackError as e:
                    self.problems[name] = f"the industry pack at {self.paths[name]} does not load: {e.problems[0]}"
            self._loaded[name] = pack
        return self._loaded[name]


def pack_folders(run_dir: Path, task_paths: list[Path]) -> list[Path]:
    """Where a run's packs may be: `industries/` (and a pyproject's `callm_industries`) in any folder
    above its task files or the run directory, nearest first."""

    dirs: list[Path] = []
    seen: set[Path] = set()
    for start in [*task_paths, run_dir.resolve()]:
        for folder in Path(start).parents:
            if folder in seen:
                continue
            seen.add(folder)
            dirs.extend([folder / "industries", *default_industries(folder)])
    unique: list[Path] = []
    for d in dirs:
        if d not in unique and d.is_dir():
            unique.append(d)
    return unique


def load_task_file(path: Path | None, pack: Pack | None) -> tuple[dict[str, Any] | None, Any, str | None]:
    """(raw task JSON, built Task or None, problem or None) for the task file an attempt names."""
    if path is None:
        return None, None, "the run does not name the task file"
    from pytest_callm.task.task_file import TaskError, build_task, is_task_file, read_task_json

    if not is_task_file(Path(path).name):
        return None, None, f"a task written in Python, in {path}"
    try:
        raw = read_task_json(path)
    except TaskError as e:
        raw = _read_json(path) if path.is_file() else None
        return raw if isinstance(raw, dict) else None, None, str(e).splitlines()[0]
    if pack is None:
        return raw, None, None
    try:
        return raw, build_task(path, raw, pack), None
    except TaskError as e:
        return raw, None, str(e).splitlines()[0]


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


# --- handoff graph -----------------------------------------------------------------------------

NODE_H, COL_GAP, ROW_GAP, PAD = 30, 70, 46, 14


def _border(cx: float, cy: float, hw: float, hh: float, tx: float, ty: float) -> tuple[float, float]:
    """Where the segment from a box's centre toward (tx, ty) leaves the box."""
    dx, dy = tx - cx, ty - cy
    if dx == 0 and dy == 0:
        return cx, cy
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * t, cy + dy * t


_GRAPHS: dict[int, tuple[Pack, dict[str, Any]]] = {}


def handoff_graph(pack: Pack) -> dict[str, Any]:
    """`_handoff_graph`, laid out once a pack (every attempt of the pack draws on the same graph)."""
    cached = _GRAPHS.get(id(pack))
    if cached is None or cached[0] is not pack:
        cached = _GRAPHS[id(pack)] = (pack, _handoff_graph(pack))
    return cached[1]


def _handoff_graph(pack: Pack) -> dict[str, Any]:
    """The pack's agents as boxes in columns by handoff distance from the entry agent, and its
    handoff tools as edges (agent A owns transfer_to_B: A -> B)."""
    edges = []
    for agent in pack.agents.values():
        for t in agent.tools:
            spec = pack.tools.get(t)
            if spec is not None and spec.kind == "handoff" and (agent.name, spec.handoff_target) not in edges:
                edges.append((agent.name, spec.handoff_target))
    depth = {pack.entry_agent: 0} if pack.entry_agent else {}
    queue = list(depth)
    while queue:
        a = queue.pop(0)
        for x, y in edges:
            if x == a and y not in depth:
                depth[y] = depth[a] + 1
                queue.append(y)
    last = max(depth.values(), default=-1)
    for a in pack.agents:  # agents no handoff reaches: a column of their own
        depth.setdefault(a, last + 1)
    columns: dict[int, list[str]] = defaultdict(list)
    for a in sorted(pack.agents, key=lambda a: (depth[a], list(depth).index(a) if a in depth else 0)):
        columns[depth[a]].append(a)
    width = max((len(a) for a in pack.agents), default=6) * 7.4 + 22
    tallest = max((len(c) for c in columns.values()), default=1)
    boxes = {}
    for col, names in columns.items():
        offset = (tallest - len(names)) * (NODE_H + ROW_GAP) / 2
        for row, a in enumerate(names):
            boxes[a] = {"x": PAD + col * (width + COL_GAP), "y": PAD + offset + row * (NODE_H + ROW_GAP),
                        "w": width, "h": NODE_H, "col": col, "row": row}
    return {"boxes": boxes, "edges": edges, "entry": pack.entry_agent,
            "width": PAD * 2 + len(columns) * width + (len(columns) - 1) * COL_GAP,
            "height": PAD * 2 + tallest * NODE_H + (tallest - 1) * ROW_GAP + 16}


def _edge_shape(graph: dict[str, Any], a: str, b: str, bend: float) -> dict[str, Any]:
    ba, bb = graph["boxes"][a], graph["boxes"][b]
    ax, ay = ba["x"] + ba["w"] / 2, ba["y"] + ba["h"] / 2
    bx, by = bb["x"] + bb["w"] / 2, bb["y"] + bb["h"] / 2
    length = math.hypot(bx - ax, by - ay) or 1.0
    nx, ny = -(by - ay) / length, (bx - ax) / length
    cx, cy = (ax + bx) / 2 + nx * bend, (ay + by) / 2 + ny * bend
    sx, sy = _border(ax, ay, ba["w"] / 2 + 2, ba["h"] / 2 + 2, cx, cy)
    ex, ey = _border(bx, by, bb["w"] / 2 + 3, bb["h"] / 2 + 3, cx, cy)
    ux, uy = ex - cx, ey - cy
    ul = math.hypot(ux, uy) or 1.0
    ux, uy = ux / ul, uy / ul
    arrow = [(ex, ey), (ex - ux * 9 - uy * 4.5, ey - uy * 9 + ux * 4.5),
             (ex - ux * 9 + uy * 4.5, ey - uy * 9 - ux * 4.5)]
    return {"d": f"M{sx:.0f},{sy:.0f} Q{cx:.0f},{cy:.0f} {ex:.0f},{ey:.0f}",  # whole pixels: a page draws many
            "arrow": " ".join(f"{x:.0f},{y:.0f}" for x, y in arrow),
            "lx": 0.25 * sx + 0.5 * cx + 0.25 * ex, "ly": 0.25 * sy + 0.5 * cy + 0.25 * ey}


def _bend(graph: dict[str, Any], a: str, b: str, in_graph: bool) -> float:
    ba, bb = graph["boxes"][a], graph["boxes"][b]
    if not in_graph:
        return 34.0
    bend = 0.0
    if (b, a) in graph["edges"]:
        bend = 16.0  # the two directions on either side (the normal turns with the direction)
    if ba["col"] == bb["col"] and abs(ba["row"] - bb["row"]) > 1 or abs(ba["col"] - bb["col"]) > 1:
        bend += 30.0  # around the boxes in between
    return bend


def draw_path(graph: dict[str, Any], path: list[tuple[str, str]], colour: str) -> dict[str, Any]:
    """The graph with `path` (a list of handoffs, in order) marked in `colour`: its edges drawn over
    the grey graph and numbered by step, its agents filled; a handoff the graph lacks is dashed."""
    steps: dict[tuple[str, str], list[int]] = defaultdict(list)
    for n, hop in enumerate(path, 1):
        steps[hop].append(n)
    visited = {a for hop in path for a in hop}
    edges = []
    for a, b in graph["edges"]:
        if (a, b) not in steps:
            edges.append({**_edge_shape(graph, a, b, _bend(graph, a, b, True)), "cls": "edge", "label": ""})
    for (a, b), ns in steps.items():
        if a not in graph["boxes"] or b not in graph["boxes"]:
            continue
        known = (a, b) in graph["edges"]
        edges.append({**_edge_shape(graph, a, b, _bend(graph, a, b, known)),
                      "cls": f"edge on {colour}" + ("" if known else " offgraph"),
                      "label": ",".join(map(str, ns))})
    nodes = [{**box, "name": a, "cls": " ".join(["node", *(["entry"] if a == graph["entry"] else []),
                                                 *([f"on {colour}"] if a in visited else [])])}
             for a, box in graph["boxes"].items()]
    return {"width": graph["width"], "height": graph["height"], "nodes": nodes, "edges": edges,
            "unknown": sorted({a for hop in path for a in hop if a not in graph["boxes"]})}


def handoff_view(gate: dict[str, Any], trajectory: dict[str, Any], pack: Pack | None,
                 pack_problem: str | None) -> dict[str, Any]:
    details = gate.get("details") or {}
    expected = list(details.get("expected") or [])
    actual = list(details.get("actual") or [h.get("to_agent") for h in trajectory.get("handoffs") or []])
    view = {"expected": expected, "actual": actual, "graphs": None, "note": pack_problem,
            "as_expected": actual == expected, "text": " → ".join(actual) or "(no handoff)"}
    if pack is None:
        return view
    graph = handoff_graph(pack)
    entry = pack.entry_agent
    hops = [(h.get("from_agent"), h.get("to_agent")) for h in trajectory.get("handoffs") or []]
    chain = [entry, *expected]
    view["graphs"] = {"expected": draw_path(graph, list(zip(chain, chain[1:])), "expected"),
                      "actual": draw_path(graph, hops, "actual")}
    view["entry"] = entry
    view["text"] = " → ".join([entry, *actual])
    return view


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

def _marked(tokens: list[str], changed: list[bool]) -> list[dict[str, Any]]:
    """Runs of words, each run changed or not, for the template to wrap in <del>/<ins>."""
    runs: list[dict[str, Any]] = []
    for tok, ch in zip(tokens, changed):
        if runs and runs[-1]["changed"] == ch:
            runs[-1]["text"] += " " + tok
            continue
        if runs:  # the space between two runs belongs to neither
            if runs[-1]["changed"]:
                runs.append({"text": " ", "changed": False})
            else:
                runs[-1]["text"] += " "
        runs.append({"text": tok, "changed": ch})
    return runs


def word_diff(said: str, heard: list[str]) -> tuple[list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """What the caller said and what the agent heard (one line per message the line delivered), with
    the words the recognizer dropped or changed marked in the first and those it wrote in the second."""
    a = said.split()
    parts = [h.split() for h in heard]
    b = [t for p in parts for t in p]
    said_changed, heard_changed = [False] * len(a), [False] * len(b)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag != "equal":
            said_changed[i1:i2] = [True] * (i2 - i1)
            heard_changed[j1:j2] = [True] * (j2 - j1)
    lines, at = [], 0
    for p in parts:
        lines.append(_marked(p, heard_changed[at:at + len(p)]))
        at += len(p)
    return _marked(a, said_changed), lines


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


# --- attempts and tasks ------------------------------------------------------------------------

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


class Builder:
    def __init__(self, run_dir: Path, packs_dirs: list[Path] | None, report: dict[str, Any] | None = None):
        """`report`: the run's results so far, for a page written before report.json (task_pages.py)."""
        self.run_dir = Path(run_dir)
        if not self.run_dir.is_dir():
            raise ReportError(f"{self.run_dir} is not a folder")
        self.manifest = _read_json(self.run_dir / "manifest.json")
        self.report = report if report is not None else _read_json(self.run_dir / "report.json")
        self.notes: list[str] = []
        self.source = self.run_dir
        self.rescored = False
        rescored_from = (self.manifest or {}).get("rescored_from")
        if not (self.run_dir / "trajectories").is_dir() and rescored_from:
            self.source, self.rescored = Path(rescored_from), True
            self.notes.append(f"This run rescored the trajectories of {rescored_from} with the verifier of its "
                              "day; the attempts below are those trajectories, verified again now.")
        self.saved = RunDir(self.source)
        if self.report is None:
            attempts = _saved_attempts(self.source)
            if self.manifest is None and not attempts:
                raise ReportError(f"{self.run_dir} holds no run (no report.json, manifest.json or trajectories)")
            self.notes.append(f"There is no report.json (the run did not finish): the figures below come from "
                              f"the {len(attempts)} saved trajectories.")
            self.report = self._report_from(attempts)
        self.packs_dirs = [Path(p) for p in packs_dirs] if packs_dirs else None
        self._packs: Packs | None = None
        self._pack_hashes: dict[str, str] = {}
        self.page_name = PAGE_NAME  # the main page's file name: the task pages are in the folder of its stem

    def _report_from(self, saved: list[dict[str, Any]]) -> dict[str, Any]:
        from pytest_callm.scoring.metrics import summarize

        results = []
        for s in saved:
            t = s.get("task") or {}
            verdict = s.get("verdict") or {}
            results.append({"task_id": t.get("task_id"), "industry": t.get("industry"), "category": t.get("category"),
                            "difficulty": t.get("difficulty"), "attempt": t.get("attempt"),
                            "passed": verdict.get("passed"), "gates": {g: (verdict.get(g) or {}).get("passed")
                                                                       for g in GATES}})
        k = (self.manifest or {}).get("k") or 1
        return {"model": ((self.manifest or {}).get("comparable") or {}).get("model"), "k": k,
                "summary": summarize(results, k).to_json() if results else {}, "attempts": results,
                "usage": None, "line_rates": None}

    # packs and tasks

    def packs(self, task_paths: list[Path]) -> Packs:
        """The packs, searched for above these task files too (tasks are read one at a time)."""
        if self._packs is None:
            self._packs = Packs(self.packs_dirs if self.packs_dirs is not None else [])
        if self.packs_dirs is None:
            self._packs.add(pack_folders(self.run_dir, task_paths))
        return self._packs

    def pack_note(self, industry: str, pack: Pack | None, packs: Packs) -> str | None:
        if pack is None:
            return f"Handoff graph not drawn: {packs.problems.get(industry, 'the industry pack was not found')}."
        saved = (((self.manifest or {}).get("comparable") or {}).get("hashes") or {}).get("packs") or {}
        if industry in saved and industry not in self._pack_hashes:
            self._pack_hashes[industry] = pack_hash(pack)
        if industry in saved and saved[industry] != self._pack_hashes[industry]:
            return (f"The pack at {pack.root} has changed since this run: the graph is today's, and the "
                    "paths are the run's.")
        return None

    # attempts

    def attempt_view(self, entry: dict[str, Any], saved: dict[str, Any] | None, pack: Pack | None,
                     task, raw_task: dict[str, Any] | None, pack_note: str | None) -> dict[str, Any]:
        view = {"number": entry.get("attempt"), "passed": entry.get("passed"), "gates": dict(entry.get("gates") or {}),
                "error": entry.get("error"), "error_kind": entry.get("error_kind"), "saved": saved is not None,
                "note": None, "id": slug(entry["industry"], entry["task_id"], f"attempt-{entry.get('attempt')}"),
                "cuts": [], "rerun_because": []}
        if saved is None:
            if view["passed"] is not None:
                view["note"] = "No trajectory of this attempt is saved in the run directory."
            view["usage"] = usage_view(entry.get("usage"), {})
            return view
        trajectory = saved.get("trajectory") or {}
        verdict = saved.get("verdict") or {}
        stale = self.rescored or verdict.get("passed") != entry.get("passed")
        if stale:
            if task is not None and pack is not None:
                from pytest_callm.call.trajectory import Trajectory
                from pytest_callm.scoring.verdict import score

                verdict = score(task, pack, Trajectory.from_json(trajectory)).to_json()
            else:
                view["note"] = ("The verdict below is the one stored with the trajectory: the task or its pack "
                                "could not be loaded to verify it again, and the report scored it differently.")
        if view["passed"] is None and not entry.get("error"):
            view["passed"] = verdict.get("passed")
        if not view["gates"]:
            view["gates"] = {g: (verdict.get(g) or {}).get("passed") for g in GATES}
        view["gate_views"] = [{"gate": g, "title": GATE_TITLES[g], "passed": (verdict.get(g) or {}).get("passed"),
                               "problems": (verdict.get(g) or {}).get("problems") or []} for g in GATES]
        view["sentence"] = failing_sentence(view["gates"])
        view["tools"] = tool_rows(verdict.get("tools") or {}, trajectory, pack, raw_task)
        view["tool_counts"] = Counter(r["state"] for r in view["tools"])
        view["handoff"] = handoff_view(verdict.get("handoff") or {}, trajectory, pack, pack_note)
        view["database"] = database_view(verdict.get("database") or {})
        view["transcript"] = transcript_view(trajectory)
        view["usage"] = usage_view(saved.get("usage") or entry.get("usage"), trajectory)
        view["cuts"] = list(trajectory.get("cuts") or [])
        view["rerun_because"] = list(trajectory.get("rerun_because") or [])
        return view

    def grouped(self) -> dict[tuple[str, str], list[dict[str, Any]]]:
        """The report's attempts by (industry, task id), in the report's order."""
        grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
        for a in self.report.get("attempts") or []:
            if a.get("industry") and a.get("task_id"):
                grouped[(a["industry"], a["task_id"])].append(a)
        return grouped

    def task_view(self, industry: str, task_id: str, attempts: list[dict[str, Any]], full: bool) -> dict[str, Any]:
        """A task and its attempts: every attempt in full (`full`, its own page), or only those that did
        not pass (the main page: a passing attempt there is a line, read from report.json alone)."""
        saved: dict[Any, dict[str, Any] | None] = {}
        path = None
        for a in attempts:
            if full or a.get("passed") is not True or path is None:
                s = saved[a.get("attempt")] = self.saved.load_attempt(industry, task_id, a.get("attempt"))
                path = path or ((s or {}).get("task") or {}).get("path")
        packs = self.packs([Path(path)] if path else [])
        pack = packs.get(industry)
        note = self.pack_note(industry, pack, packs)
        in_full = full or any(a.get("passed") is not True for a in attempts)
        # A task only summarised needs its file's title, not the task built (and validated) from it.
        raw, task, problem = load_task_file(Path(path) if path else None, pack if in_full else None)
        page = task_page(self.page_name, industry, task_id)
        views = []
        for a in attempts:
            if full or a.get("passed") is not True:
                views.append(self.attempt_view(a, saved.get(a.get("attempt")), pack, task, raw, note))
            else:
                views.append({"number": a.get("attempt"), "passed": True, "gates": dict(a.get("gates") or {}),
                              "id": slug(industry, task_id, f"attempt-{a.get('attempt')}"), "line": True,
                              "usage": usage_view(a.get("usage"), {})})
            views[-1]["href"] = f"{page}#{views[-1]['id']}"
        views.sort(key=lambda v: ({False: 0, None: 1, True: 2}[v["passed"]], v["number"] or 0))
        # The expected path, drawn once for a task's page: its passing attempts say "as expected".
        drawn = next((v["handoff"] for v in views if v.get("handoff")), None) if full else None
        expected_path = None if drawn is None else {
            "graph": (drawn["graphs"] or {}).get("expected"),
            "text": " → ".join([drawn["entry"], *drawn["expected"]]) if drawn["graphs"]
            else " → ".join(drawn["expected"]) or "(no handoff)"}
        score = (self.report.get("summary") or {}).get("tasks", {}).get(f"{industry}/{task_id}") or {}
        title = task.title if task is not None else (raw or {}).get("task_name", task_id).split(":", 1)[-1].strip()
        first = attempts[0]
        passes = sum(1 for v in views if v["passed"] is True)
        failures = sum(1 for v in views if v["passed"] is False)
        gate_failures = Counter(g for v in views for g, ok in v["gates"].items() if ok is False)
        return {
            "industry": industry, "task_id": task_id, "title": title, "id": slug(industry, task_id), "page": page,
            "category": first.get("category"), "difficulty": first.get("difficulty"),
            "category_name": ((raw or {}).get("metadata") or {}).get("category"),
            "customer": (raw or {}).get("customer_name"), "intent": (raw or {}).get("intent"),
            "traits": [(t.get("trait_name"), show(t.get("value"))) for t in (raw or {}).get("traits") or []
                       if isinstance(t, dict)],
            "forbidden": (raw or {}).get("forbidden_tools") or [],
            "task_problem": problem, "path": str(path or ""), "expected_path": expected_path,
            "attempts": views, "full": [v for v in views if not v.get("line")],
            "lines": [v for v in views if v.get("line")], "passes": passes, "failures": failures,
            "unscored": sum(1 for v in views if v["passed"] is None),
            "gate_failures": [f"{GATE_TITLES[g]} {gate_failures[g]}" for g in GATES if gate_failures[g]],
            "pass_at_1": score.get("pass_at_1", passes / (passes + failures) if passes + failures else None),
            "pass_k": score.get("pass_k"),
        }

    def build(self) -> dict[str, Any]:
        """The main page: the overview, every attempt that did not pass in full, a line for each that did."""
        tasks = [self.task_view(industry, task_id, attempts, full=False)
                 for (industry, task_id), attempts in self.grouped().items()]
        tasks.sort(key=lambda t: (t["failures"] == 0 and t["unscored"] == 0,
                                  t["pass_at_1"] if t["pass_at_1"] is not None else -1, t["industry"], t["task_id"]))
        return {**self.header(), "overview": self.overview(self.report.get("summary") or {}), "tasks": tasks,
                "stylesheet": None,
                "passing": [(t, v) for t in tasks for v in t["lines"]],
                "failing_attempts": sum(t["failures"] for t in tasks),
                "unscored_attempts": sum(t["unscored"] for t in tasks),
                "attempt_total": sum(len(t["attempts"]) for t in tasks),
                "failing_tasks": sum(1 for t in tasks if t["failures"] or t["unscored"]), "notes": self.notes}

    def build_task(self, industry: str, task_id: str) -> dict[str, Any]:
        """A task's own page: every attempt of it (those that passed in brief)."""
        task = self.task_view(industry, task_id, self.grouped()[(industry, task_id)], full=True)
        return {**self.header(), "task": task, "home": "../../" + self.page_name, "notes": self.notes,
                "stylesheet": "../" + STYLESHEET}

    # the page's top

    def header(self) -> dict[str, Any]:
        manifest = self.manifest or {}
        comparable = manifest.get("comparable") or {}
        hashes = comparable.get("hashes") or {}
        report = self.report
        settings = []
        for label, key in (("model under test", "model_config"), ("caller", "caller_config")):
            config = comparable.get(key)
            settings.append({"label": label, "rows": flat_settings(redact(config)) if config else [],
                             "none": "built in (no config)" if key == "model_config"
                             else "none: the oracle replays answer keys" if comparable.get("model") == "oracle"
                             else "the default caller"})
        line_rates = report.get("line_rates")
        return {
            "model": report.get("model") or comparable.get("model") or "?",
            "run_name": self.run_dir.resolve().name, "run_path": str(self.run_dir.resolve()),
            "created_at": manifest.get("created_at"), "package_version": manifest.get("package_version"),
            "k": report.get("k") or manifest.get("k"), "attempts_per_task": comparable.get("attempts"),
            "line": line_name(comparable.get("line")), "rescored_from": manifest.get("rescored_from"),
            "interrupted": report.get("interrupted"),  # the run stopped early: every figure is partial
            "settings": settings, "key_variables": secret_variables(manifest),
            "hashes": [("tasks", hashes.get("tasks")), ("verifier", hashes.get("verifier")),
                       *((f"pack {n}", h) for n, h in sorted((hashes.get("packs") or {}).items()))],
            "verifier_hash": hashes.get("verifier"), "verifier_now": manifest.get("verifier_now"),
            "line_rates": pretty(line_rates) if line_rates else None,
            "usage": self.usage_overview(report.get("usage")),
        }

    @staticmethod
    def usage_overview(usage: dict[str, Any] | None) -> list[dict[str, Any]] | None:
        if not usage:
            return None
        groups = [*((usage.get("industries") or {}).values()), *([usage["total"]] if usage.get("total") else [])]

        def gap(text: str, g: dict[str, Any]) -> str:  # a figure the server did not report is not "n/a"
            return "not reported" if text == "n/a" and g.get("requests_without_usage") else text

        return [{"label": g.get("label"), "calls": count(g.get("calls")), "requests": count(g.get("requests")),
                 "ttft": ms(g.get("ttft_median_ms")), "input": gap(count(g.get("input_tokens")), g),
                 "cached": gap(count(g.get("cached_input_tokens")), g), "output": gap(count(g.get("output_tokens")), g),
                 "cost": gap(usd(g.get("cost_usd")), g), "per_call": gap(usd(g.get("cost_per_call")), g),
                 "per_hour": gap(usd(g.get("cost_per_hour")), g)} for g in groups]

    @staticmethod
    def overview(summary: dict[str, Any]) -> dict[str, Any]:
        intervals = summary.get("intervals") or {}
        rows = []

        def row(g: dict[str, Any], level: str, iv: dict[str, Any] | None = None, label: str | None = None):
            rows.append({"label": label or g.get("label"), "level": level, "tasks": g.get("tasks"),
                         "attempts": g.get("attempts"), "passes": g.get("passes"),
                         "pass_at_1": pct(g.get("pass_at_1")), "pass_k": pct(g.get("pass_k")),
                         "short": g.get("short_tasks") or 0,
                         "ci_1": interval((iv or {}).get("pass_at_1")), "ci_k": interval((iv or {}).get("pass_k"))})

        for name, g in (summary.get("industries") or {}).items():
            row(g, "industry", (intervals.get("industries") or {}).get(name))
            for what, level in (("categories", "category"), ("difficulties", "difficulty")):
                for key, cg in (summary.get(what) or {}).items():
                    if key.split("/", 1)[0] == name:
                        row(cg, level)
        if summary.get("overall") and len(summary.get("industries") or {}) > 1:
            row(summary["overall"], "overall", intervals.get("overall"))
        return {"rows": rows, "k": summary.get("k"), "partial": summary.get("partial"),
                "has_ci": bool(intervals), "ci_method": intervals.get("method"),
                "ci_confidence": intervals.get("confidence"), "ci_resamples": intervals.get("resamples"),
                "gate_failures": summary.get("gate_failures") or {}, "errors": summary.get("errors") or {}}


# --- rendering ---------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates' environment, made (and its templates compiled) once a process."""
    env = jinja2.Environment(loader=jinja2.PackageLoader("pytest_callm.report", "templates"), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters.update(show=show, pct=pct, ms=ms, usd=usd, num=count)
    return env


def render_report(run_dir: Path, packs_dirs: list[Path] | None = None, page_name: str = PAGE_NAME) -> str:
    """The main page."""
    builder = Builder(Path(run_dir), packs_dirs)
    builder.page_name = page_name
    page = environment().get_template("report.html.j2").render(**builder.build())
    return strike_secrets(page, secret_variables(builder.manifest))


def render_task_page(builder: "Builder", industry: str, task_id: str) -> str:
    page = environment().get_template("task.html.j2").render(**builder.build_task(industry, task_id))
    return strike_secrets(page, secret_variables(builder.manifest))


def write_page(path: Path, page: str) -> None:
    """Write a page atomically (a reader sees the old page or the new one), with secrets struck."""
    page = secrets_out.text(page)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(page)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # readable like any other file (mkstemp makes it private)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_stylesheet(page: Path) -> Path:
    """The task pages' stylesheet (`report/style.css` beside `report.html`), written when it differs."""
    path = page.parent / page.stem / STYLESHEET
    css = environment().get_template("style.css.j2").render()
    if not path.is_file() or path.read_text(encoding="utf-8") != css:
        write_page(path, css)
    return path


def write_task_pages(builder: "Builder", page: Path, keys: list[tuple[str, str]]) -> list[Path]:
    """Write the pages of these (industry, task) beside the main `page`, and their stylesheet; returns
    the pages' paths."""
    if keys:
        write_stylesheet(page)
    written = []
    for industry, task_id in keys:
        path = page.parent / task_page(page.name, industry, task_id)
        write_page(path, render_task_page(builder, industry, task_id))
        written.append(path)
    return written


def write_html_report(run_dir: Path, packs_dirs: list[Path] | None = None, *, out: Path | None = None,
                      written: Collection[tuple[str, str]] = ()) -> Path:
    """Write the run's report: the main page (by default `<run_dir>/report.html`) and the page of each
    (industry, task) beside it (`report/<industry>/<task>.html`), but those `written` during the run
    already (task_pages.py). Returns the main page's path."""
    path = Path(out) if out is not None else Path(run_dir) / PAGE_NAME
    builder = Builder(Path(run_dir), packs_dirs)
    builder.page_name = path.name
    write_page(path, strike_secrets(environment().get_template("report.html.j2").render(**builder.build()),
                                     secret_variables(builder.manifest)))
    skip = set(written)
    pages = write_task_pages(builder, path, [key for key in builder.grouped() if key not in skip])
    pages += [path.parent / task_page(path.name, *key) for key in skip]
    for old in set((path.parent / path.stem).glob("*/*.html")) - set(pages):  # tasks the run no longer has
        old.unlink()
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="callm report", description="Write the HTML report of a run directory.")
    parser.add_argument("run_dir", type=Path, help="the run directory (--callm-out of the run)")
    parser.add_argument("--industries", action="append", type=Path, default=None,
                        help="folder holding the industry packs (repeatable); default: the industries/ "
                             "folders above the run's task files")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help=f"the page to write (default RUN_DIR/{PAGE_NAME})")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        path = write_html_report(args.run_dir, args.industries, out=args.output)
    except ReportError as e:
        print(f"callm report: {e}", file=sys.stderr)
        return 2
    print(f"report written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
