"""The oracle: replays a task's answer key through the real engine and tool server.

No model and no caller. `plan_answer_key` walks the expected calls with the expected handoff path:
a handoff the key lists is made where it stands; a call the active agent does not own first takes
the next handoff of the path; then `end_call`. `OracleModel` plays that plan one call per request
and checks every result against the status the key records. An answer key that cannot be played
(a call no agent on the path owns, a handoff out of order, an unexpected status) is an
`AnswerKeyError` naming the call.

`ScriptedModel` plays a list of calls without those checks; tests use it to make a model misbehave
on purpose.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.protocol import ModelReply, ModelRequest, ToolCall
from pytest_callm.task.pack import END_CALL, Pack
from pytest_callm.task.task_file import Task

ORACLE_CALLER_LINE = "[oracle replay: no caller]"
HOLD_LINE = "One moment, please."
CLOSING_LINE = "Thank you for calling. Goodbye."


class AnswerKeyError(Exception):
    """The answer key cannot be replayed as written."""


@dataclass
class PlannedCall:
    name: str
    arguments: dict[str, Any]
    expected_status: str | None
    key_index: int | None  # position in exp_tool_calls; None for calls the oracle adds
    agent: str  # the agent that makes the call

    def label(self) -> str:
        where = f"exp_tool_calls[{self.key_index}]" if self.key_index is not None else "added by the oracle"
        return f"{self.name} ({where})"


def placeholder(schema: dict[str, Any], pack: Pack, param: str) -> Any:
    """A value for a required parameter the key leaves unconstrained (free text, mostly)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "boolean":
        return False
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "array":
        return []
    if kind == "object":
        return {}
    if schema.get("format") == "date":
        return pack.now.date().isoformat()
    return f"(oracle) {param}"


def fill_arguments(pack: Pack, name: str, given: dict[str, Any]) -> dict[str, Any]:
    params = pack.tools[name].parameters
    args = dict(given)
    for param in params.get("required", []):
        if param not in args:
            args[param] = placeholder(params.get("properties", {}).get(param, {}), pack, param)
    return args


def plan_answer_key(task: Task, pack: Pack, *, skip_unowned: bool = False) -> list[PlannedCall]:
    """The key's calls in order, with the handoffs the path needs and a closing `end_call`.

    `skip_unowned` plays what a wrong agent that skipped part of the path could still do, instead of
    refusing the key: handoffs the agent reached cannot make, and calls no agent from there on owns,
    are left out (the proof's dropped-handoff mutants, `authoring/prove.py`).
    """
    path = list(task.exp_handoff_path)
    agent = pack.entry_agent
    plan: list[PlannedCall] = []
    route = " -> ".join([pack.entry_agent, *path])

    def owns(a: str, tool: str) -> bool:
        return tool in pack.agents[a].tools

    def hand_off(key_index: int | None, given: dict[str, Any]) -> None:
        nonlocal agent
        target = path.pop(0)
        tool = pack.handoff_tool(target)
        if not owns(agent, tool):
            raise AnswerKeyError(f"{task.task_id}: the expected path {route} needs {agent} to hand off to "
                                 f"{target}, but {agent} does not own {tool}")
        plan.append(PlannedCall(tool, fill_arguments(pack, tool, given), "ok", key_index, agent))
        agent = target

    if skip_unowned:
        reachable, at = [], agent
        for target in path:
            if owns(at, pack.handoff_tool(target)):
                reachable.append(target)
                at = target
        path = reachable
    for i, call in enumerate(task.exp_tool_calls):
        spec = pack.tools[call.name]
        if spec.kind == "handoff":
            if skip_unowned and (not path or path[0] != spec.handoff_target):
                continue
            if not path or path[0] != spec.handoff_target:
                nxt = path[0] if path else "no further handoff"
                raise AnswerKeyError(f"{task.task_id}: exp_tool_calls[{i}] {call.name} is out of order with the "
                                     f"expected path {route} (next on the path: {nxt})")
            hand_off(i, call.parameters)
            continue
        if skip_unowned and not any(owns(a, call.name) for a in [agent, *path]):
            continue
        while not owns(agent, call.name) and path:
            hand_off(None, {})
        if not owns(agent, call.name):
            owners = ", ".join(pack.owner_agents(call.name)) or "no agent"
            raise AnswerKeyError(f"{task.task_id}: exp_tool_calls[{i}] {call.name} is not owned by an agent on the "
                                 f"expected path {route} (owned by: {owners})")
        plan.append(PlannedCall(call.name, fill_arguments(pack, call.name, call.parameters), call.status, i, agent))
    while path:
        hand_off(None, {})
    if not (plan and pack.tools[plan[-1].name].ends_call) and owns(agent, END_CALL):
        plan.append(PlannedCall(END_CALL, fill_arguments(pack, END_CALL, {"reason": "oracle replay complete"}),
                                "ok", None, agent))
    return plan


def _requests_this_turn(messages: list[dict[str, Any]]) -> int:
    count = 0
    for m in reversed(messages):
        if m["role"] == "user":
            break
        count += m["role"] == "assistant"
    return count


class ScriptedModel:
    """Plays planned calls in order, one per request, speaking a hold line to end long turns."""

    name = "scripted"

    def __init__(self, plan: list[PlannedCall], max_requests_per_turn: int = 8, says: dict[int, str] | None = None,
                 pack: Pack | None = None):
        self.plan = plan
        self.pack = pack  # given: free text the key leaves open carries what the pack says it must hold
        self.position = 0
        self.max_calls_per_turn = max_requests_per_turn - 1  # keep the last request for speech
        self.says = dict(says or {})  # after how many planned calls -> a line spoken there (ends the turn)

    @property
    def finished(self) -> bool:
        return self.position >= len(self.plan)

    def check_result(self, call: PlannedCall, result: dict[str, Any]) -> None:
        """Hook for the oracle's status check."""

    async def respond(self, request: ModelRequest) -> ModelReply:
        if self.position > 0 and request.messages and request.messages[-1]["role"] == "tool":
            self.check_result(self.plan[self.position - 1], json.loads(request.messages[-1]["content"]))
        if self.position in self.says:
            return ModelReply(text=self.says.pop(self.position), ttft_ms=0.0)
        if self.finished:
            return ModelReply(text=CLOSING_LINE, ttft_ms=0.0)
        if _requests_this_turn(request.messages) >= self.max_calls_per_turn:
            return ModelReply(text=HOLD_LINE, ttft_ms=0.0)
        call = self.plan[self.position]
        self.position += 1
        arguments = self._written(call, request.messages) if self.pack is not None else call.arguments
        return ModelReply(tool_calls=[ToolCall(f"call_{self.position}", call.name, json.dumps(arguments))],
                          ttft_ms=0.0)

    def _written(self, call: PlannedCall, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The call's arguments, with each free text the key leaves open (a placeholder) naming the
        domain terms the pack says it must hold that the caller said (a summary of a burn names it)."""
        from pytest_callm.task.terms import Stems

        out = dict(call.arguments)
        for param in self.pack.tools[call.name].free_text:
            use = self.pack.words.use_of(call.name, param)
            if use is None or not use.must_hold or out.get(param) != placeholder({}, self.pack, param):
                continue
            heard = Stems(" ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user"))
            terms = [t for kind in use.must_hold for t in self.pack.words.terms.get(kind, ()) if heard.has(t)]
            if terms:
                out[param] = f"{out[param]}: {', '.join(terms)}"
        return out


class OracleModel(ScriptedModel):
    name = "oracle"

    def __init__(self, task: Task, pack: Pack, max_requests_per_turn: int = 8):
        super().__init__(plan_answer_key(task, pack), max_requests_per_turn, pack=pack)
        self.task = task

    def check_result(self, call: PlannedCall, result: dict[str, Any]) -> None:
        status = "ok" if result.get("ok") else result.get("error_code")
        if result.get("error_code") == "tool_not_available":
            raise AnswerKeyError(f"{self.task.task_id}: {call.label()} was refused: {call.agent} does not own it")
        if call.expected_status is not None and status != call.expected_status:
            detail = result.get("caller_safe_message") or result.get("data")
            raise AnswerKeyError(f"{self.task.task_id}: {call.label()} returned {status!r}, the answer key expects "
                                 f"{call.expected_status!r} ({detail})")


    def after_call(self, tool_calls) -> None:
        """Checks that need the finished call: everything played, and the last result's status."""
        if not self.finished:
            raise AnswerKeyError(f"{self.task.task_id}: the call ended after {self.position} of {len(self.plan)} "
                                 f"answer-key calls; next was {self.plan[self.position].label()}")
        if tool_calls:
            last = tool_calls[-1]
            self.check_result(self.plan[-1], last.result)


class ScriptedCaller:
    """The oracle's stand-in caller: says one fixed line and hangs up once the model is done.

    `says`: what this caller says first, for replays that need the agent to have heard something
    (a date the caller misspoke and then corrected: `callm prove`'s `caller_says`)."""

    def __init__(self, model: ScriptedModel, says: list[str] | None = None):
        self.model = model
        self.says = list(says or [])

    async def respond(self, agent_said: str) -> CallerTurn:
        if self.model.finished:
            return CallerTurn("", hang_up=True)
        if self.says:
            line, self.says = " ".join(self.says), []
            return CallerTurn(line)
        return CallerTurn(ORACLE_CALLER_LINE)
