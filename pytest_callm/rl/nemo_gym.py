"""The NeMo Gym resources-server contract, as CALLM serves it: every request and response body.

NeMo Gym (`nemo-gym` 0.4.0; it needs Python >= 3.12 and nothing here imports it: its own code is run
against these routes by `tests/test_rl_nemo_gym_real.py`, from a venv of its own) talks to a
resources server over HTTP: `POST /seed_session` starts a rollout's session, `POST /{tool_name}`
runs one of the model's function calls (the body is the call's arguments, the response body is what
the model reads back), `POST /verify` takes the rollout (the dataset row's fields, its
`responses_create_params` and the Responses API `response`) and answers it with a `reward`, and
`POST /aggregate_metrics` summarises verify responses. The session travels as a cookie: NeMo Gym's
simple agent keeps, after each response, only the cookies that response set, so every answer of a
session sets it again. These models mirror its `BaseSeedSessionRequest`, `BaseVerifyRequest`,
`BaseVerifyResponse`, `AggregateMetricsRequest` and `AggregateMetrics` (field names and defaults),
with CALLM's own fields added; a check against a newer nemo-gym changes this module only. The routes
that use them are `nemo_gym_server.py`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SESSION_COOKIE = "callm_session"  # set by /seed_session; NeMo Gym's agents send a server's cookies back
SESSION_HEADER = "X-Callm-Session"  # the same id, for clients that keep no cookies
SAY = "say"  # the tool that speaks to the caller (NeMo Gym's loop ends when the model stops calling tools)
ROLLOUT_ENDED = "rollout_ended"  # end reason of a call still open when its rollout was verified
# Paths of the contract itself: no pack tool may take one of these names.
RESERVED_NAMES = frozenset({"seed_session", "verify", "close", "aggregate_metrics", "mcp", "health", SAY})
TASK_INDEX = "_ng_task_index"  # NeMo Gym's key of a verify response's dataset row (its TASK_INDEX_KEY_NAME)

SAY_TOOL: dict[str, Any] = {
    "type": "function", "name": SAY, "strict": False,
    "description": ("Say something to the caller on the phone; your turn ends and the result is what "
                    "the caller says next, as heard over the line. Only what you say with this tool "
                    "reaches the caller."),
    "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "your words"}},
                   "required": ["text"], "additionalProperties": False},
}


class ResponsesCreateParams(BaseModel):
    """The part of nemo_gym's `NeMoGymResponseCreateParamsNonStreaming` this server reads or writes:
    `input` (Responses API input items) and `tools` (function tools); other fields pass through."""

    model_config = ConfigDict(extra="allow")

    input: str | list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)


class SeedSessionRequest(BaseModel):
    """`BaseSeedSessionRequest` (no fields of its own) plus which call to play. NeMo Gym's agent
    posts the whole dataset row (its `responses_create_params` and any other fields): kept, unread."""

    model_config = ConfigDict(extra="allow")

    task: str  # industry/task_id, e.g. legal/C4-H3
    seed: int = 1  # the attempt number: the phone line's draws depend on task, seed and turn


class SeedSessionResponse(BaseModel):
    """`BaseSeedSessionResponse` (no fields of its own) plus the session and the first observation,
    as Responses API parameters ready to send to the policy."""

    session_id: str  # unguessable (32 random bytes): the only key to the session and its call
    call_id: str  # the call's database on the tool server (`X-Call-Id` of its /packs routes)
    task: str
    seed: int
    agent: str  # the active agent (the pack's entry agent)
    agent_tools: list[str]  # the tools it owns; `responses_create_params.tools` offers every agent's
    responses_create_params: ResponsesCreateParams
    call_over: bool = False  # the caller hung up before the policy was asked anything
    row: dict[str, Any]  # this session's dataset row (`dataset_rows`): `callm export`'s, plus seed and the params above


class Handoff(BaseModel):
    """A handoff that happened in this tool call: the new agent's prompt and tools from now on."""

    previous_agent: str
    agent: str
    instructions: str  # the new agent's system prompt
    agent_tools: list[str]


class ToolResponse(BaseModel):
    """The body of `POST /{tool_name}`: what the model reads as the function call's output."""

    result: dict[str, Any] | None = None  # the tool's result envelope, as the benchmark's tool message; None for `say`
    heard: list[str] = Field(default_factory=list)  # the caller's next words, when the turn passed to the caller
    handoff: Handoff | None = None
    call_over: bool = False  # nothing more runs in this call: verify it
    end_reason: str | None = None  # why it ended: agent_end_call, caller_hangup, exchange_cap
    progress: dict[str, Any] | None = None  # the per-step signals (`environment.progress`); never the reward


class SayRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str


class VerifyRequest(BaseModel):
    """`BaseVerifyRequest`: the rollout's request parameters and its Responses API `response` (whose
    `output` holds the function_call, function_call_output and message items). Kept as given: the
    reward is computed from the session's own record of the call, not from these."""

    model_config = ConfigDict(extra="allow")

    responses_create_params: dict[str, Any]
    response: dict[str, Any]


class VerifyResponse(VerifyRequest):
    """`BaseVerifyResponse` (the request echoed, plus `reward`) with the verdict's parts. The request
    may carry the row's own `task` and `seed` (NeMo Gym's agent sends the whole row): the session's
    values are the ones answered."""

    reward: float  # 1.0 when the tools, handoff and database gates all pass, else 0.0
    reward_components: dict[str, float]  # each gate, 1.0 or 0.0
    passed: bool
    route: str | None = None  # the task's other route a passing call followed, if not the main key
    explanation: str
    end_reason: str | None = None
    session_id: str
    task: str
    seed: int
    shaped: float | None = None  # opt-in (`--shaped`): partial credit for training, never the benchmark's figure


class AggregateMetricsRequest(BaseModel):
    """NeMo Gym's `AggregateMetricsRequest`: verify responses (each at least `reward`, and its row's
    `_ng_task_index`), as its rollout collection posts them after a run."""

    verify_responses: list[dict[str, Any]]


class AggregateMetrics(BaseModel):
    """NeMo Gym's `AggregateMetrics`: flat string keys, ready to log. Per dataset row
    (`group_level_metrics`), over all rollouts (`agent_metrics`), and the headline (`key_metrics`)."""

    group_level_metrics: list[dict[str, Any]] = Field(default_factory=list)
    agent_metrics: dict[str, Any] = Field(default_factory=dict)
    key_metrics: dict[str, Any] = Field(default_factory=dict)


class CloseResponse(BaseModel):
    """`POST /close`: the session's call abandoned and its database removed (as aviary's close)."""

    success: bool
    message: str


class ErrorResponse(BaseModel):
    """Any 4xx or 5xx. A 502 `infrastructure_error` is the environment's failure (the caller's model
    or the tool server): never a reward of 0 for the policy."""

    error_code: str
    message: str
