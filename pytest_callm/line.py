"""The phone line between caller and model: what was said becomes what a recognizer heard.

This module holds the interface and the clean line; the error-injecting line of DESIGN §6 plugs in
behind the same `transmit` call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass
class Heard:
    pieces: list[str]  # usually one; a split turn reaches the model as two messages
    errors: list[dict[str, Any]] = field(default_factory=list)  # which recognizer errors were applied


class Line(Protocol):
    def transmit(self, said: str, turn: int) -> Heard: ...


class CleanLine:
    """No recognizer errors: the model hears exactly what was said."""

    name = "clean"

    def transmit(self, said: str, turn: int) -> Heard:
        return Heard([said])
