"""The model-under-test interface: what the engine sends and what comes back.

The engine only knows `Model.respond(request) -> ModelReply`. The oracle implements it by replaying
an answer key; the streaming OpenAI-compatible client implements it over HTTP. A reply carries its
own timing (time to first text or tool-call token) and usage, which the engine records verbatim.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from pytest_callm.model import redact
from pytest_callm.model.output import clean_text, parse_arguments


@dataclass
class ToolCall:
    id: str
    name: str
    raw_arguments: str  # exactly as the model wrote them

    @property
    def arguments(self) -> Any:
        """Parsed arguments, or None when they are unusable (see `output.parse_arguments`)."""
        return parse_arguments(self.raw_arguments)[0]


@dataclass
class Usage:
    input_tokens: int = 0  # uncached input
    cached_input_tokens: int = 0
    output_tokens: int = 0  # reasoning included
    reasoning_tokens: int = 0

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


def usage_from(raw: dict[str, Any] | None) -> Usage | None:
    """A chunk's `usage` (a JSON object) as the engine counts it; a count that is not a whole number
    counts 0."""
    if not raw or not isinstance(raw, dict):
        return None

    def count(value: Any) -> int:
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0

    def detail(key: str, name: str) -> int:
        part = raw.get(key)
        return count(part.get(name)) if isinstance(part, dict) else 0

    prompt = count(raw.get("prompt_tokens"))
    # DeepSeek's API counts cached input as `prompt_cache_hit_tokens` (of `prompt_tokens`).
    cached = detail("prompt_tokens_details", "cached_tokens") or count(raw.get("prompt_cache_hit_tokens"))
    return Usage(input_tokens=max(prompt - cached, 0), cached_input_tokens=cached,
                 output_tokens=count(raw.get("completion_tokens")),
                 reasoning_tokens=detail("completion_tokens_details", "reasoning_tokens"))


@dataclass
class ModelRequest:
    agent: str
    system_prompt: str
    messages: list[dict[str, Any]]  # OpenAI chat messages after the system prompt
    tools: list[dict[str, Any]]  # OpenAI function tools of the active agent


@dataclass
class ModelReply:
    text: str = ""  # spoken to the caller
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str | None = None  # kept in the trajectory, never spoken
    ttft_ms: float | None = None  # to the first text or tool-call token
    usage: Usage | None = None
    notes: list[str] = field(default_factory=list)  # what the client had to do: retries, resends, lifted calls
    cuts: list[str] = field(default_factory=list)  # bounds the reply passed (the model's): the trajectory's `cuts`


MAX_REPLY_CHARS = 20_000  # spoken text of one reply (a phone turn of 20,000 characters is minutes long)
MAX_REASONING_CHARS = 20_000  # reasoning kept per reply: it is never spoken nor sent back to the model
MAX_NAME_CHARS = 200  # a tool call's id and name


def _bounded(text: str, limit: int, what: str, notes: list[str], cuts: list[str] | None = None) -> str:
    if len(text) <= limit:
        return text
    notes.append(f"{what} cut to {limit:,} of its {len(text):,} characters (the model's)")
    if cuts is not None:
        cuts.append(f"{what} passed {limit:,} characters ({len(text):,}); cut there")
    return redact.cut(text, limit)


def safe_reply(reply: ModelReply) -> ModelReply:
    """The reply with encodable text, within its bounds, and bounded tool-call arguments (parsed
    later, by the engine). What is cut is said in the reply's notes, and a cut of the spoken text in its
    `cuts` (a reply the client read was cut as it streamed already; this bounds the others)."""
    notes, cuts = list(reply.notes), list(reply.cuts)
    text = _bounded(clean_text(reply.text or ""), MAX_REPLY_CHARS, "the spoken text", notes, cuts)
    reasoning = _bounded(clean_text(reply.reasoning), MAX_REASONING_CHARS, "the reasoning", notes) \
        if reply.reasoning else reply.reasoning
    return replace(reply, text=text, reasoning=reasoning, notes=notes, cuts=cuts,
                   tool_calls=[replace(tc, id=redact.cut(clean_text(tc.id), MAX_NAME_CHARS),
                                       name=redact.cut(clean_text(tc.name), MAX_NAME_CHARS))
                               for tc in reply.tool_calls])


class ModelInfrastructureError(Exception):
    """The model could not be reached or could not answer: never scored as the model's failure."""


class ModelCallError(ModelInfrastructureError):
    """Transient failures (rate limits, 5xx, timeouts, dropped streams) outlasted every retry."""


class ModelRequestError(ModelInfrastructureError):
    """The server refused the request itself (HTTP 400 or 422, not a rejected tool call)."""


class ModelsOwnFailure(Exception):
    """The model cannot answer, and the cause is its own behaviour in the call: the call ends there,
    scored as it stands (`end_reason` says why), never rerun."""

    end_reason = "model_failure"


class ModelContextOverflow(ModelsOwnFailure):
    """The conversation no longer fits the model's context window: the model's failure, not the harness's."""

    end_reason = "context_overflow"


class ModelRefusal(ModelsOwnFailure):
    """The provider refused what was said in the call (OpenAI's `invalid_prompt`, a content filter)."""

    end_reason = "content_refused"


class ModelAccessError(Exception):
    """The server will not serve this key or this model (401, 403, 404): the run cannot go on."""


class ModelServerDied(ModelAccessError):
    """The model server the run started (--callm-serve) is dead: the run cannot go on either."""


class Model(Protocol):
    name: str

    async def respond(self, request: ModelRequest) -> ModelReply: ...
