"""The handoff graph of an industry pack, drawn as inline SVG geometry: the pack's agents as boxes in
columns by handoff distance from the entry agent, its handoff tools as edges, and an attempt's
expected and actual paths marked on it."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from pytest_callm.task.pack import Pack

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
