"""A call's verdict: the verifier's three gates, and the failures that happen before any gate.

A model can break its own call: a conversation that no longer fits the model's context window
ends the call there. That is the model's failure, scored as a fail with the reason, whatever the
gates would say about the call as it stood.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.scoring.verify import Verdict, verify


@dataclass
class BrokenCall(Verdict):
    reason: str = ""

    @property
    def passed(self) -> bool:
        return False

    def to_json(self) -> dict[str, Any]:
        return {**super().to_json(), "reason": self.reason}

    def explain(self) -> str:
        return f"the model broke the call: {self.reason}\n{super().explain()}"


def score(task: Task, pack: Pack, trajectory: Trajectory) -> Verdict:
    verdict = verify(task, pack, trajectory)
    if trajectory.model_failure:
        return BrokenCall(verdict.tools, verdict.handoff, verdict.database, verdict.route, verdict.words,
                          reason=trajectory.model_failure)
    return verdict
