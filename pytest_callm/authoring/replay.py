"""Edited answer keys played through the real engine and tool server, as the oracle plays a key.

Everything `callm prove` judges is one `Replay`: the task's key with some calls dropped, changed,
inserted or moved, a handoff path, and what the stand-in caller says. Playing it gives an
`Outcome`: the verdict against the task as written, each call's status, and what the tool server
saw each call read and write, checked against the pack's invariants as it is played (no write a
gate cannot see, no look at a person's record that leaves no row).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from pytest_callm.call.oracle import AnswerKeyError, ScriptedCaller, ScriptedModel, plan_answer_key
from pytest_callm.phone.line import CleanLine, ScriptedLine
from pytest_callm.runs.runtime import Participants, Runtime
from pytest_callm.scoring.verify import Verdict, verify
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import ExpectedCall, Task

# Replays at once. One: their tools run in this process (in_process.py), so replays in flight only
# contend for one interpreter lock; at 8, callm prove spent twice the CPU (36.6 against 18.5 s on 20
# legal tasks, half of it the kernel's, in lock handoffs between threads) and took longer.
IN_FLIGHT = 1


@dataclass
class Replay:
    """One edited answer key to play, and what its verdict must be."""

    task: Task
    pack: Pack
    kind: str  # trap, mutant, spelling, route, key, rule, exploit, right
    label: str  # what was changed, for people
    calls: list[ExpectedCall]
    path: list[str]
    skip_unowned: bool = False  # a dropped handoff: calls only the skipped agent owns go too
    trap: dict[str, Any] | None = None
    edited: frozenset[str] = frozenset()  # tools the edit touched (where a refusal is looked for)
    parts: list[Replay] = field(default_factory=list)  # a round of right answers: its single ones
    caller_says: list[str] = field(default_factory=list)  # what the stand-in caller says first (heard)
    mishearings: dict[str, str] = field(default_factory=dict)  # said -> heard, once each (a known line error)
    group: str = ""  # the rule or exploit it belongs to, for the tallies
    gates: tuple[str, ...] = ()  # a violation: the gates it must fail
    refused_with: str | None = None  # a violation a tool must refuse with this code instead
    keep_state: bool = False  # keep the final state (an exploit compares it with the key's)
    agent_says: dict[int, str] = field(default_factory=dict)  # after n planned calls, the agent says this


@dataclass
class CallSeen:
    """One played call: its name, its place in the key (None for added calls), status, and what it touched."""

    name: str
    key_index: int | None
    status: str | None
    wrote: tuple[str, ...] = ()
    read: tuple[str, ...] = ()


@dataclass
class Outcome:
    replay: Replay
    verdict: Verdict | None = None
    statuses: list[tuple[str, str | None]] = field(default_factory=list)  # (tool, status) as played
    error: str | None = None  # the edited key could not be played
    seen: list[CallSeen] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)  # pack invariants this replay showed broken
    final_state: dict[str, Any] | None = None
    unplayed: list[str] = field(default_factory=list)  # the edit's moves that were not played, and why

    @property
    def failed_gates(self) -> list[str]:
        return [] if self.verdict is None else [g for g, ok in self.verdict.gates.items() if not ok]

    @property
    def passed(self) -> bool:
        return self.error is None and self.verdict is not None and self.verdict.passed


def _call(raw: dict[str, Any]) -> ExpectedCall:
    return ExpectedCall(raw["name"], dict(raw.get("parameters") or {}), None)


def apply_edit(key: list[ExpectedCall], changes: Iterable[dict[str, Any]]) -> tuple[list[ExpectedCall], set[str]]:
    """The key with `changes` made (indexes are positions in the key as written), and the tools touched."""
    current: list[ExpectedCall | None] = list(key) + [None]
    before: list[list[ExpectedCall]] = [[] for _ in current]
    touched: set[str] = set()
    for change in changes:
        if "drop" in change:
            current[change["drop"]] = None
        elif "set" in change:
            old = current[change["set"]]
            params = dict(old.parameters)
            for name, value in change["parameters"].items():
                if value is None:
                    params.pop(name, None)
                else:
                    params[name] = value
            current[change["set"]] = ExpectedCall(old.name, params, None)
            touched.add(old.name)
        elif "replace" in change:
            current[change["replace"]] = _call(change["call"])
            touched.add(change["call"]["name"])
        else:
            before[change["insert"]].append(_call(change["call"]))
            touched.add(change["call"]["name"])
    out: list[ExpectedCall] = []
    for extra, call in zip(before, current):
        out.extend(extra)
        if call is not None:
            out.append(call)
    return out, touched


def _next_letter(c: str) -> str:
    if c.isdigit():
        return str((int(c) + 1) % 10)
    base = "A" if c.isupper() else "a"
    return chr((ord(c.lower()) - ord("a") + 1) % 26 + ord(base))


def one_off(value: Any, kind: str | None, schema: dict[str, Any]) -> Any:
    """`value` one character or digit off (or the next choice of an enum, the other boolean, a day
    later); None when no such value exists."""
    if isinstance(value, bool):
        return not value
    if "enum" in schema:
        others = [v for v in schema["enum"] if v != value]
        return others[0] if others else None
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        return [one_off(value[0], kind, schema.get("items", {})), *value[1:]] if value else None
    if not isinstance(value, str) or not value.strip():
        return None
    if kind == "date":
        try:
            return (dt.date.fromisoformat(value[:10]) + dt.timedelta(days=1)).isoformat() + value[10:]
        except ValueError:
            pass
    # The last digit when there is one (a number misheard), else the last letter of the longest word.
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    if digits:
        i = digits[-1]
    else:
        spans = [m.span() for m in re.finditer(r"[A-Za-z]+", value)]
        if not spans:
            return None
        start, end = max(spans, key=lambda s: s[1] - s[0])
        i = end - 1
    return value[:i] + _next_letter(value[i]) + value[i + 1:]


def edited_replay(task: Task, pack: Pack, kind: str, label: str, edit: dict[str, Any], **kw: Any) -> Replay:
    """A replay of `task`'s key with a trap-format edit (`calls`, `handoff_path`, `caller_says`,
    `mishearings`: what the line hears instead of what is said, once each)."""
    calls, touched = apply_edit(task.exp_tool_calls, edit.get("calls", []))
    path = [pack.agent_of_path_entry(e) for e in edit.get("handoff_path", task.exp_handoff_path)]
    return Replay(task, pack, kind, label, calls, path, edited=frozenset(touched),
                  caller_says=list(edit.get("caller_says", [])), mishearings=dict(edit.get("mishearings", {})), **kw)


def invariant_breaks(pack: Pack, seen: list[CallSeen], unlogged: dict[str, list[str]]) -> list[str]:
    """What the played calls show of the pack's promises (docs/house-rules.md §3)."""
    out = []
    for call in seen:
        for table in call.wrote:
            if table not in pack.compared_tables:
                out.append(f"{call.name} writes {table}, which no gate compares (a write invisible to the database gate)")
        for table in unlogged.get(call.name, []):
            out.append(f"{call.name} reads {table} (a person's record) and keeps no access row "
                       "(front_desk.record_access)")
    return out


async def _play(runtime: Runtime, replay: Replay, limit: asyncio.Semaphore) -> Outcome:
    edited = dataclasses.replace(replay.task, exp_tool_calls=replay.calls, exp_handoff_path=replay.path)
    try:
        plan = plan_answer_key(edited, replay.pack, skip_unowned=replay.skip_unowned)
    except AnswerKeyError as e:
        return Outcome(replay, error=f"cannot be played: {e}")
    model = ScriptedModel(plan, runtime.limits.max_requests_per_turn, says=replay.agent_says, pack=replay.pack)
    async with limit:
        trajectory = await runtime.play_async(
            replay.task, replay.pack, 1,
            Participants(model, ScriptedCaller(model, replay.caller_says),
                         ScriptedLine(replay.mishearings) if replay.mishearings else CleanLine()), rerun=False)
    # The plan's calls are played one per request, in order: the n-th played call is the plan's n-th.
    # A call the edit left alone is the key's own object: its place in the key as written.
    key_of = {id(c): i for i, c in enumerate(replay.task.exp_tool_calls)}
    by_plan = [key_of.get(id(replay.calls[p.key_index])) if p.key_index is not None else None for p in plan]
    seen, unlogged = [], {}
    for n, record in enumerate(trajectory.tool_calls):
        touched = record.touched or {}
        seen.append(CallSeen(record.name, by_plan[n] if n < len(by_plan) else None, record.status,
                             tuple(touched.get("wrote", ())), tuple(touched.get("read", ()))))
        if touched.get("unlogged"):
            unlogged[record.name] = touched["unlogged"]
    return Outcome(replay, verify(replay.task, replay.pack, trajectory),
                   [(c.name, c.status) for c in trajectory.tool_calls], seen=seen,
                   broken=invariant_breaks(replay.pack, seen, unlogged),
                   final_state=trajectory.final_state if replay.keep_state else None,
                   unplayed=unplayed_moves(replay, plan, len(trajectory.tool_calls),
                                           [t.said for t in trajectory.transcript if t.role == "agent"]))


def unplayed_moves(replay: Replay, plan: list, played: int, spoken: list[str] = ()) -> list[str]:
    """What of the edit was not played, for people: an edit that leaves the key as it was, an added
    or changed call that never ran (left out of the plan, or after a call that ended the call), or a
    line the agent was to say that it never said. A verdict on such a replay says nothing of the move
    it is named for."""
    key = replay.task.exp_tool_calls
    if ([(c.name, c.parameters) for c in replay.calls] == [(c.name, c.parameters) for c in key]
            and replay.path == [replay.pack.agent_of_path_entry(e) for e in replay.task.exp_handoff_path]
            and not replay.caller_says and not replay.agent_says):
        return ["the edit changes nothing of the key"]
    out = [f"the agent never said {line!r} (the call ended first)" for line in replay.agent_says.values()
           if line not in spoken]
    own = {id(c) for c in key}
    at = {p.key_index: n for n, p in enumerate(plan) if p.key_index is not None}
    for i, call in enumerate(replay.calls):
        if id(call) in own:
            continue
        if i not in at:
            out.append(f"{call.name} (edited) is not in the played plan (no agent on the path owns it)")
        elif at[i] >= played:
            out.append(f"{call.name} (edited) was never reached: an earlier call ended the call")
    return out


async def play_all(runtime: Runtime, replays: list[Replay]) -> list[Outcome]:
    limit = asyncio.Semaphore(IN_FLIGHT)
    return list(await asyncio.gather(*(_play(runtime, r, limit) for r in replays)))
