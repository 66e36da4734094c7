"""Blind audit of a pack: wrong and right agents a domain expert invented, played through the real model
client (issue 27, "Audit it the way it was audited").

An agent is a task's answer key with an edit (the trap format: calls dropped, set, replaced or
inserted, another handoff path), played by the scripted OpenAI-compatible server one call per
request, through the real client, engine, phone line and tool server. The caller says `caller_says`
(heard by the agent as said: a clean line), after the details the task's own key uses (its name,
numbers and addresses), as a real caller gives them; a case about a value the caller never gave says
`words_only`. After a tool refuses, and after a call the edit added, the agent asks again and the
caller says the next of `caller_then` (a correction after the try), or "Okay.". The verdict is the benchmark's own.

A case must play something the key does not: an edit that leaves the key as it was, a call it adds
or changes that never ran, or a token no earlier answer of the call gave (a stale one), is refused
as a broken case, whatever its verdict.

Each case states what a real business would say: `expect` is "pass" (a right agent) or "fail" (a
wrong one), with the reason. `tests/test_audit_<pack>.py` keeps every case a blind auditor wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.config import ModelConfig
from pytest_callm.runs.runtime import Runtime
from pytest_callm.authoring.replay import apply_edit
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.scoring.verify import IDENTITY_KINDS, Verdict
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import Task, load_task

from conftest import shared_tool_server
from openai_server import AGENT_ASKS_AGAIN, AnswerKeyAgent, ScriptedServer

REPO = Path(__file__).resolve().parent.parent
INDUSTRIES = REPO / "industries"
TASKS = REPO / "tasks"


@dataclass(frozen=True)
class Case:
    """One invented agent and what a real business would say of it."""

    task: str  # "legal/C4-H3"
    agent: str  # what the agent does, in one line
    expect: str  # "pass" or "fail"
    why: str  # the business's reason
    edit: dict[str, Any] = field(default_factory=dict)  # of the task's answer key (trap format)
    caller_says: tuple[str, ...] = ()  # what the caller says first, as the agent hears it
    agent_says: tuple[tuple[int, str], ...] = ()  # (after how many planned calls, what the agent says)
    caller_then: tuple[str, ...] = ()  # said one a turn, each when the agent asks again (after a refusal or an added call)
    words_only: bool = False  # the caller says only `caller_says`, not the details the key uses

    @property
    def id(self) -> str:
        return f"{self.task}: {self.agent}"


class LinesCaller:
    """Says its lines in its first turn, then one of `then` each time the agent asks again (after a
    refusal or an added call), and otherwise only "Okay." (the agent ends the call)."""

    def __init__(self, lines: tuple[str, ...], then: tuple[str, ...] = ()):
        self.lines, self.then = list(lines), list(then)

    async def respond(self, agent_said: str) -> CallerTurn:
        if self.lines:
            said, self.lines = " ".join(self.lines), []
            return CallerTurn(said)
        if self.then and AGENT_ASKS_AGAIN in agent_said:
            return CallerTurn(self.then.pop(0))
        return CallerTurn("Okay.")


class Auditor:
    """Plays cases one at a time: one scripted model server, one runtime over the benchmark's packs."""

    def __init__(self) -> None:
        self.packs = PackRegistry([INDUSTRIES])
        self.server = ScriptedServer(delay_ms=1).start()
        self._caller: LinesCaller | None = None
        config = ModelConfig(name="audited-agent", model="scripted", base_url=self.server.base_url, api_key_env=None)
        every = {name: self.packs.get(name) for name in self.packs.names()}
        self.runtime = Runtime("audited-agent", every, shared_tool_server().url, model_config=config, line="clean",
                               caller_factory=lambda task, pack, attempt: self._caller)

    def play(self, case: Case) -> tuple[Task, Trajectory, Verdict]:
        path = TASKS / case.task / "task.json"
        _, task, pack = load_task(path, self.packs)
        self.server.reset(agent=AnswerKeyAgent(path, INDUSTRIES, edit=case.edit or None, ask_after_refusal=True,
                                               says=dict(case.agent_says)), delay_ms=1)
        details = () if case.words_only else details_of(task, pack)
        self._caller = LinesCaller((*details, *case.caller_says), case.caller_then)
        trajectory, verdict = self.runtime.run_attempt(task, pack, 1)
        self.last_trajectory = trajectory
        return task, trajectory, verdict

    def verdict(self, case: Case) -> Verdict:
        return self.play(case)[2]

    def close(self) -> None:
        self.runtime.close()
        self.server.stop()


def details_of(task: Task, pack: Pack) -> tuple[str, ...]:
    """What a caller says to give their name and the details the task's own key uses (names, numbers,
    addresses)."""
    said = [f"My name is {task.customer_name}."] if task.customer_name else []
    for call in task.exp_tool_calls:
        kinds = pack.tools[call.name].kinds
        said.extend(f"My {param.replace('_', ' ')} is {value}." for param, value in call.parameters.items()
                    if kinds.get(param) in IDENTITY_KINDS and isinstance(value, str))
    return tuple(dict.fromkeys(said))


def broken_case(case: Case, task: Task, trajectory: Trajectory) -> list[str]:
    """Why a case proves nothing whatever its verdict: its edit leaves the key as it was (a wrong agent
    whose words make the key's own calls wrong, and a case that says other words, excepted), a line
    it gives the agent was never said, a call it adds or changes never ran, or a token it passes was
    given by no earlier answer of the call (a stale one from another run)."""
    edit = case.edit or {}
    calls, _ = apply_edit(task.exp_tool_calls, edit.get("calls", []))
    unchanged = ([(c.name, c.parameters) for c in calls] == [(c.name, c.parameters) for c in task.exp_tool_calls]
                 and edit.get("handoff_path", task.exp_handoff_path) == task.exp_handoff_path)
    if unchanged and not case.agent_says and not (case.expect == "fail" and case.caller_says):
        return ["its edit changes nothing of the key"]
    # A words case plays the key with other words: each line must have been said.
    spoken = [t.said for t in trajectory.transcript if t.role == "agent"]
    out = [f"the agent never said {line!r} (the call ended first)" for _, line in case.agent_says if line not in spoken]
    for change in edit.get("calls", []):
        made = change.get("call") or ({"name": task.exp_tool_calls[change["set"]].name, "parameters": change["parameters"]}
                                      if "set" in change else None)
        if made is None:
            continue
        given = {k: v for k, v in (made.get("parameters") or {}).items() if v is not None}
        ran = [c for c in trajectory.tool_calls if c.name == made["name"] and isinstance(c.arguments, dict)
               and all(c.arguments.get(k) == v for k, v in given.items())]
        if not ran:
            out.append(f"{made['name']}({given}) never ran")
            continue
        before = json.dumps([c.result for c in trajectory.tool_calls[:ran[0].index]])
        out.extend(f"{made['name']}.{k} {v!r} was given by no earlier answer (a stale token)"
                   for k, v in given.items() if k.endswith("token") and str(v) not in before)
    return out


def check(auditor: Auditor, case: Case) -> None:
    """The case's verdict is what the business says, or the test fails with the verdict's reasons."""
    task, trajectory, verdict = auditor.play(case)
    broken = broken_case(case, task, trajectory)
    assert not broken, f"{case.id}: a broken case: " + "; ".join(broken)
    got = "pass" if verdict.passed else "fail"
    assert got == case.expect, (f"{case.id}: a real business says {case.expect} ({case.why}); the benchmark says "
                                f"{got}:\n{verdict.explain()}")


def audit_params(cases: list[Case], other_way: dict[str, str]) -> list[Any]:
    """The cases as pytest params, each one the benchmark scores the other way (`other_way`: case id ->
    what the verdict said) marked xfail(strict=True) with that reason, so a fix shows as an XPASS."""
    import pytest

    ids = [c.id for c in cases]
    assert len(set(ids)) == len(ids), "two cases share an id"
    unknown = set(other_way) - set(ids)
    assert not unknown, f"scored the other way, but no case: {sorted(unknown)}"
    return [pytest.param(c, id=c.id, marks=pytest.mark.xfail(strict=True, reason=other_way[c.id]))
            if c.id in other_way else pytest.param(c, id=c.id) for c in cases]
