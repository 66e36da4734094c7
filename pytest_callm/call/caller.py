"""The caller interface: the engine asks the caller for its next turn, showing it only speech.

The simulated caller (a model following the task's brief) arrives in its own module; the oracle's
stand-in caller lives in `oracle.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class CallerTurn:
    text: str  # what the caller says; may be empty when it only hangs up
    hang_up: bool = False
    notes: list[str] = field(default_factory=list)  # what the caller's model client had to do: retries


class Caller(Protocol):
    async def respond(self, agent_said: str) -> CallerTurn:
        """The caller's next turn, given everything the agent spoke since the caller last spoke."""
        ...
