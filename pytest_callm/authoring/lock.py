"""Expected states: replay each task's answer key on a fresh seed and store what it leaves behind
(and each of its other routes' keys, for theirs).

`exp_db_state` is never written by hand: the answer key alone must reproduce it. `callm lock`
fills or refreshes it; `callm lock --check` (and the test suite) fails when a stored state differs
from its replay.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.runs.runtime import Runtime
from pytest_callm.task.task_file import is_task_file, load_task
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.scoring.verify import visible_row


def find_task_files(paths: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_file():
            out.append(p)
        else:
            out.extend(sorted(f for f in p.rglob("*.json") if is_task_file(f.name)))
    return out


def expected_state(trajectory: Trajectory, pack: Pack) -> dict[str, list[dict[str, Any]]]:
    return {name: [visible_row(r, table.exclude_columns) for r in trajectory.final_state.get(name, [])]
            for name, table in pack.compared_tables.items()}


@dataclass
class Locked:
    path: Path
    changed: bool
    state: dict[str, list[dict[str, Any]]]


def lock(paths: Iterable[Path], industries: Iterable[Path], write: bool = True) -> list[Locked]:
    packs = PackRegistry(industries)
    loaded = [load_task(p, packs, unlocked=True) for p in find_task_files(paths)]
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)  # the same tools; no server to start
    results = []
    try:
        for data, task, pack in loaded:
            state = expected_state(runtime.play(task, pack, attempt=1), pack)
            changed = data.get("exp_db_state") != state
            # Each other route of the task keeps the state its own key leaves.
            routes = [expected_state(runtime.play(key, pack, attempt=1), pack) for key in task.keys()[1:]]
            for raw, route_state in zip(data.get("routes", []), routes):
                changed = changed or raw.get("exp_db_state") != route_state
                if write:
                    raw["exp_db_state"] = route_state
            if changed and write:
                data["exp_db_state"] = state
                task.path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            results.append(Locked(task.path, changed, state))
    finally:
        runtime.close()
    return results
