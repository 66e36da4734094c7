"""The trajectory of one call: the only input to scoring (DESIGN §5).

Plain dataclasses that round-trip through JSON, so a saved call can be rescored later without a
model, a caller or a tool server.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

_FIELDS: dict[type, tuple[str, ...]] = {}


def plain(obj: Any) -> Any:
    """`dataclasses.asdict` for JSON-like data, without its deep copy of every leaf (a saved
    trajectory is thousands of values: asdict was most of the cost of saving one)."""
    if isinstance(obj, dict):
        return {k: plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [plain(v) for v in obj]
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if isinstance(obj, tuple):
        return type(obj)(plain(v) for v in obj)
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None:
        if not is_dataclass(obj):
            return obj  # any other leaf, as asdict leaves it (less the copy)
        names = _FIELDS[cls] = tuple(f.name for f in fields(obj))
    return {n: plain(getattr(obj, n)) for n in names}


@dataclass
class TranscriptTurn:
    role: str  # "agent" or "caller"
    said: str
    at_ms: float
    agent: str | None = None  # the agent speaking (agent turns)
    heard: list[str] | None = None  # what reached the model (caller turns)
    line_errors: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # caller turns: its model client's retries, like a request's


@dataclass
class ToolCallRecord:
    index: int
    agent: str  # the agent active when the call was made
    name: str
    kind: str  # industry, handoff, session, or unknown
    arguments: Any  # parsed JSON, or None when the model wrote invalid JSON
    raw_arguments: str
    result: dict[str, Any]
    status: str | None  # "ok" or the error code of the result envelope
    refused: bool  # the active agent does not own the tool
    request_index: int
    started_ms: float
    duration_ms: float
    # What the tool server saw the call read and write ({"read", "wrote", "unlogged"}); None for
    # engine-handled tools and for runs saved before it was kept.
    touched: dict[str, list[str]] | None = None


@dataclass
class HandoffRecord:
    from_agent: str
    to_agent: str
    tool_index: int


@dataclass
class RequestRecord:
    index: int
    agent: str
    exchange: int
    started_ms: float
    duration_ms: float
    ttft_ms: float | None
    text: str
    tool_calls: list[str]
    reasoning: str | None = None
    usage: dict[str, int] | None = None
    notes: list[str] = field(default_factory=list)  # client retries, resends, calls lifted from text


@dataclass
class Trajectory:
    call_id: str
    task_id: str
    industry: str
    attempt: int
    model: str
    end_reason: str = ""  # caller_hangup, agent_end_call, exchange_cap, caller_context_overflow, ...
    exchanges: int = 0
    duration_ms: float = 0.0
    transcript: list[TranscriptTurn] = field(default_factory=list)
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    handoffs: list[HandoffRecord] = field(default_factory=list)
    requests: list[RequestRecord] = field(default_factory=list)
    final_state: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    reruns: int = 0  # times the call was started again after an infrastructure error
    rerun_because: list[str] = field(default_factory=list)  # what failed, per run that was given up
    # What the model asked beyond a bound and was refused (its failure, scored): one sentence each,
    # "request 3: 10,000 tool calls requested, 16 run; the rest refused as the model's failure (...)".
    cuts: list[str] = field(default_factory=list)
    model_failure: str | None = None  # the model broke the call (its context overflowed): a fail, whatever the gates

    def handoff_path(self) -> list[str]:
        return [h.to_agent for h in self.handoffs]

    def to_json(self) -> dict[str, Any]:
        return plain(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Trajectory":
        nested = {"transcript": TranscriptTurn, "tool_calls": ToolCallRecord,
                  "handoffs": HandoffRecord, "requests": RequestRecord}
        kwargs = {}
        for f in fields(cls):
            if f.name not in data:
                continue
            value = data[f.name]
            if f.name in nested:
                value = [nested[f.name](**v) for v in value]
            kwargs[f.name] = value
        return cls(**kwargs)
