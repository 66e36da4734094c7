"""Blind audit of a pack: wrong and right agents a domain expert invented, played through the real model
client (issue 27, "Audit it the way it was audited").

An agent is a task's answer key with an edit (the trap format: calls dropped, set, replaced or
inserted, another handoff path), played by the scripted OpenAI-compatible server one call per
request, through the real client, engine, phone line and tool server. The caller says `caller_says`
(heard by the agent as said: a clean line) and then only "Okay." The verdict is the benchmark's own.

Each case states what a real business would say: `expect` is "pass" (a right agent) or "fail" (a
wrong one), with the reason. `tests/test_audit_<pack>.py` keeps every case a blind auditor wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.config import ModelConfig
from pytest_callm.runs.runtime import Runtime
from pytest_callm.scoring.verify import Verdict
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

from openai_server import AnswerKeyAgent, ScriptedServer

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

    @property
    def id(self) -> str:
        return f"{self.task}: {self.agent}"


class LinesCaller:
    """Says its lines in its first turn, then only "Okay." (the agent ends the call)."""

    def __init__(self, lines: tuple[str, ...]):
        self.lines = list(lines)

    async def respond(self, agent_said: str) -> CallerTurn:
        if self.lines:
            said, self.lines = " ".join(self.lines), []
            return CallerTurn(said)
        return CallerTurn("Okay.")


class Auditor:
    """Plays cases one at a time: one scripted model server, one runtime over the benchmark's packs."""

    def __init__(self) -> None:
        self.packs = PackRegistry([INDUSTRIES])
        self.server = ScriptedServer(delay_ms=1).start()
        self._caller: LinesCaller | None = None
        config = ModelConfig(name="audited-agent", model="scripted", base_url=self.server.base_url, api_key_env=None)
        every = {name: self.packs.get(name) for name in self.packs.names()}
        self.runtime = Runtime("audited-agent", every, model_config=config, line="clean",
                               caller_factory=lambda task, pack, attempt: self._caller)

    def verdict(self, case: Case) -> Verdict:
        path = TASKS / case.task / "task.json"
        _, task, pack = load_task(path, self.packs)
        self.server.reset(agent=AnswerKeyAgent(path, INDUSTRIES, edit=case.edit or None,
                                                         says=dict(case.agent_says)), delay_ms=1)
        self._caller = LinesCaller(case.caller_says)
        self.last_trajectory, verdict = self.runtime.run_attempt(task, pack, 1)
        return verdict

    def close(self) -> None:
        self.runtime.close()
        self.server.stop()


def check(auditor: Auditor, case: Case) -> None:
    """The case's verdict is what the business says, or the test fails with the verdict's reasons."""
    verdict = auditor.verdict(case)
    got = "pass" if verdict.passed else "fail"
    assert got == case.expect, (f"{case.id}: a real business says {case.expect} ({case.why}); the benchmark says "
                                f"{got}:\n{verdict.explain()}")
