"""The memorisation check: does a policy that only remembers the test pass the training set?

A policy that memorised the locked suite meets a training task and plays the answer key of the
locked task nearest to it (masked similarity, `pytest_callm.rl.scenario`), with the identities of
the training task put in for the locked task's own (its caller, phone, email, ids, parties: the
values a policy reads off the caller or a tool, never learns). If that key passes the training
task's three gates, the training task teaches nothing the test does not: a memorised answer scores.
The same the other way: the nearest training key played on each locked task.

Identities are put in by kind and order: the first person the locked key names becomes the first
person the training key names, the second the second, and so on; a kind the training key names
fewer of keeps the locked value. Dates are not identities here (a date decides the answer: a
window, a deadline, and a policy must take it from the caller), except a date the pack's people
records hold (`generate.json`: a date of birth), which is who the caller is.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_callm.rl.scenario import task_views, nearest
from pytest_callm.rl.splits import LoadedTask
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import build_task

SUBSTITUTED = frozenset({"person", "phone", "email", "identifier", "digits", "party", "organization"})


def people_dates(pack: Pack) -> frozenset[str]:
    """The columns of the pack's people records that hold a date (a date of birth): who, not when."""
    path = pack.root / "generate.json"
    if not path.exists():
        return frozenset()
    records = json.loads(path.read_text(encoding="utf-8")).get("records", {})
    return frozenset(c for columns in records.values() for c, kind in columns.items() if kind == "date")


def identity_values(calls: list[dict[str, Any]], pack: Pack) -> dict[str, list[str]]:
    """kind -> the distinct values of that identity kind the calls name, in order of first mention."""
    out: dict[str, list[str]] = {}
    birth = people_dates(pack)
    for call in calls:
        spec = pack.tools.get(call["name"])
        for param, value in (call.get("parameters") or {}).items():
            kind = spec.kinds.get(param) if spec else None
            if kind == "date" and param in birth:
                kind = "birth date"
            if (kind in SUBSTITUTED or kind == "birth date") and param not in spec.free_text and isinstance(value, str):
                seen = out.setdefault(kind, [])
                if value not in seen:
                    seen.append(value)
    return out


def substituted_key(source: dict[str, Any], target: dict[str, Any], pack: Pack) -> list[dict[str, Any]]:
    """`source`'s answer key with `target`'s identities put in for its own (see the module's doc)."""
    theirs = identity_values(source["exp_tool_calls"], pack)
    ours = identity_values(target["exp_tool_calls"], pack)
    swap = {(kind, old): ours[kind][i] for kind, olds in theirs.items() for i, old in enumerate(olds)
            if i < len(ours.get(kind, []))}
    calls = copy.deepcopy(source["exp_tool_calls"])
    birth = people_dates(pack)
    for call in calls:
        for field in ("either", "alternatives", "status", "output"):  # a memorised key plays on, whatever comes back
            call.pop(field, None)
        spec = pack.tools.get(call["name"])
        for param, value in list((call.get("parameters") or {}).items()):
            kind = spec.kinds.get(param) if spec else None
            kind = "birth date" if kind == "date" and param in birth else kind
            if isinstance(value, str) and (kind, value) in swap:
                call["parameters"][param] = swap[(kind, value)]
    return calls


@dataclass
class Played:
    played_on: LoadedTask
    memorised: LoadedTask  # whose key was played
    passed: bool


class KeyOnTask:
    """Plays one task's answer key on another task's call (its records and caller) and scores it
    against the other task's own key: the three gates of the paper."""

    def __init__(self, packs: dict[str, Pack]):
        from pytest_callm.runs.runtime import Runtime

        self.runtime = Runtime("oracle", packs, tools_in_process=True)

    def passes(self, memorised: LoadedTask, played_on: LoadedTask) -> bool:
        from pytest_callm.scoring.verify import verify

        pack = played_on.pack
        data = copy.deepcopy(played_on.task.raw)
        data["exp_tool_calls"] = substituted_key(memorised.task.raw, played_on.task.raw, pack)
        data["exp_handoff_path"] = list(memorised.task.raw["exp_handoff_path"])
        for field in ("routes", "traps", "exp_db_state", "forbidden_tools"):
            data.pop(field, None)
        named = {c["name"] for c in data["exp_tool_calls"]}
        data["forbidden_tools"] = sorted(set(pack.required_or_forbidden) - named)  # the pack asks for one or the other
        policy = build_task(played_on.task.path, data, pack)
        trajectory = self.runtime.play(policy, pack, attempt=1)
        return verify(played_on.task, pack, trajectory, words=False).paper_passed

    def close(self) -> None:
        self.runtime.close()


def memorisation(on: list[LoadedTask], memorised: list[LoadedTask], packs: dict[str, Pack],
                 progress: Callable[[Played], None] | None = None) -> list[Played]:
    """For each task of `on`, the nearest task of `memorised` (same industry, masked similarity), its
    key played with identities substituted, and whether that passes."""
    views = {id(t): task_views(t.task, t.pack) for t in [*on, *memorised]}
    by_industry: dict[str, list[LoadedTask]] = {}
    for m in memorised:
        by_industry.setdefault(m.task.industry, []).append(m)
    player = KeyOnTask(packs)
    out = []
    try:
        for t in on:
            pool = by_industry.get(t.task.industry, [])
            i, _ = nearest(views[id(t)], [views[id(m)] for m in pool])
            if i < 0:
                continue
            result = Played(t, pool[i], player.passes(pool[i], t))
            out.append(result)
            if progress:
                progress(result)
    finally:
        player.close()
    return out


def memorised_passes(near: list[Any], player: KeyOnTask) -> dict[Any, str]:
    """For `splits.nearest_evaluation`'s answers: each training task that a memorised key passes
    (a locked key on it, or its key on a locked task), played only where the masked keys allow it
    (one holds every item of the other). The training task's file -> why."""
    out = {}
    for n in near:
        for locked, way in n.covered:
            if way == "theirs" and player.passes(locked, n.training):
                out[n.training.task.path] = f"the memorised key of {locked.name} passes it"
                break
            if way == "ours" and player.passes(n.training, locked):
                out[n.training.task.path] = f"its key, memorised, passes {locked.name}"
                break
    return out
