"""One call as a stepping environment (DESIGN §5): the policy is asked, the call answers.

`Episode` holds a call's state between the model's replies. `reset()` starts the call (its database,
the greeting, the caller's first turn through the line) and returns the first observation: what the
model is asked next (the active agent's system prompt and tools, the messages so far). `step(reply)`
takes the model's reply, runs its tool calls, and returns the next observation: the tool results in
the same turn, or the caller's next turn once the agent has spoken. A handoff swaps the system prompt
and the tool set in place and keeps the history. The call ends when the caller hangs up, when a
call-ending tool succeeds (`end_call`, or a pack tool listed under `ends_call`), or after
`max_exchanges`; the last observation is `done` and `trajectory` is then complete.

Whoever owns the policy drives it: the benchmark's engine (`engine.run_call`) asks its model client,
an RL trainer samples its own policy. Both produce the same trajectory for the same replies. No
scoring here, and no pytest: the reward is the verdict, computed by whoever knows the task.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, replace
from typing import Any

from pytest_callm.call.caller import Caller
from pytest_callm.call.trajectory import HandoffRecord, RequestRecord, ToolCallRecord, TranscriptTurn, Trajectory
from pytest_callm.model import redact
from pytest_callm.model.output import MAX_ARGUMENT_CHARS, clean_text, clip, field_text, parse_arguments
from pytest_callm.model.protocol import (MAX_REPLY_CHARS, ModelReply, ModelRequest, ModelRequestError, ModelsOwnFailure,
                                         ToolCall, Usage, safe_reply, usage_from)
from pytest_callm.phone.line import Line
from pytest_callm.task.pack import Pack
from pytest_callm.toolkit import envelope, result_status
from pytest_callm.toolserver.client import ToolClient


@dataclass(frozen=True)
class CallLimits:
    """The bounds of one call. What a model asks beyond them is refused as its own failure (the call is
    scored as it stands), and the trajectory says so (`cuts`)."""

    max_requests_per_turn: int = 8
    max_exchanges: int = 30
    max_tool_calls_per_reply: int = 16  # a phone agent makes one to three at once
    max_tool_calls_per_call: int = 100  # the longest answer key of the benchmark makes 17
    # What the model wrote into the call (spoken text, reasoning, tool arguments) and what its tools
    # answered, in characters: past it the call ends where it is. A long call of the benchmark is 60,000.
    max_call_chars: int = 2_000_000


@dataclass
class Observation:
    """What the policy is asked next; `done` when the call is over (nothing more to ask)."""

    agent: str  # the active agent
    system_prompt: str  # its prompt: it changes at a handoff
    tools: list[dict[str, Any]]  # its tools, OpenAI function format: they change at a handoff
    messages: list[dict[str, Any]]  # the whole conversation after the system prompt, OpenAI shape
    new_messages: list[dict[str, Any]]  # the tail of `messages` added since the policy's last reply
    handoff_from: str | None = None  # the previous agent, when a handoff happened since the last reply
    exchange: int = 0
    done: bool = False

    def request(self) -> ModelRequest:
        return ModelRequest(agent=self.agent, system_prompt=self.system_prompt, messages=self.messages,
                            tools=self.tools)


def spoken_text(content: Any) -> str | None:
    """A message's `content` as text: content parts (a list) keep their text ones, which are spoken;
    a single part (a dict) its text; anything else as it is written."""
    if isinstance(content, list):
        return "".join(_text(p.get("text", "")) if isinstance(p, dict) else _text(getattr(p, "text", "")) for p in content)
    if isinstance(content, dict):
        return _text(content.get("text", ""))
    return None if content is None else _text(content)


def _text(value: Any) -> str:
    """What a trainer's hand-built message holds where text belongs (bytes, a number), as text: the
    policy's output, played and scored as such, never a crash of the environment."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    return field_text(value)


def _usage(usage: Any) -> Usage | None:
    """Usage in this package's shape, or OpenAI's (`prompt_tokens`, ...: read as the model client reads it)."""
    if not isinstance(usage, dict):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return usage_from(usage)
    return Usage(**{k: v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0 for k, v in
                    ((k, usage.get(k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_tokens"))})


def reply_from_message(message: dict[str, Any] | ModelReply) -> ModelReply:
    """An OpenAI assistant message (`content`, `tool_calls` with `function.name` and `.arguments`) as
    a reply. Arguments given as an object rather than a JSON string are written as JSON."""
    if isinstance(message, ModelReply):
        return message
    if not isinstance(message, dict):
        raise TypeError(f"a reply is an assistant message (a dict) or a ModelReply, not {type(message).__name__}")
    # Whatever shape a trainer's message has, it is the policy's reply: a call with no usable name is
    # refused to it as the engine refuses any unknown tool, and the episode goes on.
    listed = message.get("tool_calls") or []
    listed = [listed] if isinstance(listed, dict) else listed if isinstance(listed, list) else [listed]
    calls = []
    for i, tc in enumerate(listed):
        tc = tc if isinstance(tc, dict) else {"function": {"name": _text(tc)}}
        fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
        raw = fn.get("arguments")
        raw = raw if isinstance(raw, str) else raw.decode("utf-8", errors="replace") \
            if isinstance(raw, (bytes, bytearray)) else json.dumps(raw if raw is not None else {}, ensure_ascii=False, default=str)
        calls.append(ToolCall(_text(tc.get("id")) or f"call_{uuid.uuid4().hex[:12]}_{i}", _text(fn.get("name")), raw))
    content = spoken_text(message.get("content"))
    reasoning = message.get("reasoning_content")
    ttft = message.get("ttft_ms")
    return ModelReply(text=content or "", tool_calls=calls, reasoning=None if reasoning is None else _text(reasoning),
                      ttft_ms=float(ttft) if isinstance(ttft, (int, float)) and not isinstance(ttft, bool) else None,
                      usage=_usage(message.get("usage")))


AS_WRITTEN_CHARS = 1_000  # of malformed arguments, shown back to the model in its call's result


def sendable_arguments(raw: str) -> str:
    """A tool call's arguments as the history sends them back: the model's own when they are a usable
    JSON object, else `{}`. Servers such as vLLM parse every call in the history and refuse the whole
    request (400) over one they cannot read, so a malformed call sent back verbatim failed every later
    request of the call. The call's result still says it failed, and what was written (`as_written`)."""
    return clip(raw) if parse_arguments(raw)[1] is None else "{}"


class Episode:
    """State of one call in progress, advanced one model reply at a time."""

    def __init__(self, *, pack: Pack, caller: Caller, line: Line, tools: ToolClient, call_id: str, task_id: str,
                 attempt: int, model_name: str, limits: CallLimits = CallLimits(),
                 records: dict[str, list[dict[str, Any]]] | None = None):
        self.pack, self.caller, self.line, self.tools = pack, caller, line, tools
        self.records = records or None  # the task's own rows on top of the seed (Task.records)
        self.limits = limits
        self.agent = pack.entry_agent
        self.messages: list[dict[str, Any]] = []
        self.trajectory = Trajectory(call_id=call_id, task_id=task_id, industry=pack.name, attempt=attempt,
                                     model=model_name)
        self.done = False
        self._t0 = time.perf_counter()
        self._ended_by: str | None = None
        self._exchange = 0
        self._caller_turns = 0
        self._requests_this_turn = 0
        self._spoken: list[str] = []  # the agent's words in this turn, for the caller
        self._asked_at = 0.0  # when the last observation went out: a request starts then
        self._seen = 0  # messages the policy had seen at its last reply
        self._agent_seen = self.agent
        self._chars = 0  # what the model wrote and its tools answered, so far (max_call_chars)
        self._beyond: ToolCall | None = None  # this reply's first tool call past a bound: refused, not run
        self._beyond_detail: dict[str, Any] = {}

    def _ms(self) -> float:
        return round((time.perf_counter() - self._t0) * 1000, 3)

    async def reset(self) -> Observation:
        # The call's database exists from the start: its final state is the seed if no tool ran.
        if self.records:
            await self.tools.start_call(self.pack.name, self.trajectory.call_id, self.records)
        else:  # a client of the tool server's older interface (a test's own) takes no records
            await self.tools.start_call(self.pack.name, self.trajectory.call_id)
        greeting = self.pack.greeting
        self.messages.append({"role": "assistant", "content": greeting})
        self.trajectory.transcript.append(TranscriptTurn("agent", greeting, self._ms(), agent=self.agent))
        return await self._caller_turn(greeting)

    async def step(self, reply: ModelReply | dict[str, Any]) -> Observation:
        """The model's reply to the last observation; the next observation."""
        if self.done:
            raise RuntimeError(f"call {self.trajectory.call_id} is over: start a new episode")
        reply = safe_reply(reply_from_message(reply))
        traj = self.trajectory
        index = len(traj.requests)
        reply = self._bounded(reply, index)
        traj.cuts.extend(f"request {index + 1}: {cut} (the model's failure)" for cut in reply.cuts)
        traj.requests.append(RequestRecord(
            index=index, agent=self.agent, exchange=self._exchange, started_ms=self._asked_at,
            duration_ms=round(self._ms() - self._asked_at, 3), ttft_ms=reply.ttft_ms, text=reply.text,
            tool_calls=[tc.name for tc in reply.tool_calls], reasoning=reply.reasoning,
            usage=reply.usage.to_json() if reply.usage else None, notes=list(reply.notes)))
        self._requests_this_turn += 1
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": tc.id, "type": "function",
                                      "function": {"name": tc.name, "arguments": sendable_arguments(tc.raw_arguments)}}
                                     for tc in reply.tool_calls]
        if reply.text or reply.tool_calls:
            self.messages.append(message)
        self._seen = len(self.messages)  # the policy knows its own reply
        if reply.text:
            self._spoken.append(reply.text)
            traj.transcript.append(TranscriptTurn("agent", reply.text, self._ms(), agent=self.agent))
        for tc in reply.tool_calls:
            if tc is self._beyond:
                record = self._refuse_beyond(tc, index)
            else:
                record = await self._dispatch(tc, index)
            content = json.dumps(record.result, ensure_ascii=False)
            self._chars += len(content)
            self.messages.append({"role": "tool", "tool_call_id": tc.id, "content": content})
            if self._ended_by:  # nothing runs after the call has ended
                break
        if not self._ended_by and self._chars > self.limits.max_call_chars:
            traj.cuts.append(f"request {index + 1}: the call reached {self._chars:,} characters written by the model "
                             f"and its tools, over the bound of {self.limits.max_call_chars:,}; the call ends "
                             "there, scored as it stands (the model's failure)")
            self._ended_by = "size_cap"
        if self._ended_by:
            return await self._finish()
        if reply.tool_calls and self._requests_this_turn < self.limits.max_requests_per_turn:
            return self._observe()  # the same turn: the model sees its tools' results
        if self._exchange >= self.limits.max_exchanges:
            self._ended_by = "exchange_cap"
            return await self._finish()
        return await self._caller_turn(" ".join(self._spoken))

    def _bounded(self, reply: ModelReply, index: int) -> ModelReply:
        """The reply within the call's bounds on tool calls: those past them are not run. The first
        one past is kept and refused to the model (`too_many_tool_calls`, so it knows), the rest are
        dropped from the conversation, and the trajectory says how many were asked and run."""
        # Arguments count as kept (clipped): past MAX_ARGUMENT_CHARS they are refused unread anyway.
        self._chars += len(reply.text or "") + len(reply.reasoning or "") + sum(
            min(len(tc.raw_arguments), MAX_ARGUMENT_CHARS) + len(tc.name) for tc in reply.tool_calls)
        requested = len(reply.tool_calls)
        left = self.limits.max_tool_calls_per_call - len(self.trajectory.tool_calls)
        room = max(min(self.limits.max_tool_calls_per_reply, left), 0)
        if requested <= room:
            return reply
        per_call = room == left
        bound = (f"at most {self.limits.max_tool_calls_per_call} in a call" if per_call
                 else f"at most {self.limits.max_tool_calls_per_reply} in a reply")
        self.trajectory.cuts.append(f"request {index + 1}: {requested:,} tool calls requested, {room} run; the rest "
                                    f"refused as the model's failure ({bound})")
        self._beyond = reply.tool_calls[room]
        self._beyond_detail = {"requested": requested, "run": room, "bound": bound, "ends_call": per_call}
        return replace(reply, tool_calls=reply.tool_calls[:room + 1])

    def _refuse_beyond(self, tc: ToolCall, request_index: int) -> ToolCallRecord:
        """The record of the first tool call past a bound: refused to the model, never run."""
        detail, self._beyond = self._beyond_detail, None
        result = envelope(False, {k: detail[k] for k in ("requested", "run", "bound")}, "too_many_tool_calls", None)
        spec = self.pack.tools.get(tc.name)
        record = ToolCallRecord(index=len(self.trajectory.tool_calls), agent=self.agent, name=tc.name,
                                kind=spec.kind if spec else "unknown", arguments=parse_arguments(tc.raw_arguments)[0],
                                raw_arguments=clip(tc.raw_arguments), result=result, status="too_many_tool_calls",
                                refused=True, request_index=request_index, started_ms=self._ms(), duration_ms=0.0)
        self.trajectory.tool_calls.append(record)
        if detail["ends_call"]:
            self._ended_by = "tool_call_cap"
        return record

    async def break_call(self, reason: str, end_reason: str = "context_overflow") -> Observation:
        """The model cannot answer the last observation (its context overflowed, its provider refused
        the call's words): the call ends there, as the model's failure."""
        self.trajectory.model_failure = reason
        self._ended_by = end_reason
        return await self._finish()

    async def end(self, reason: str) -> Observation:
        """The policy's side stops without ending the call by a tool (an RL rollout that stopped
        asking): the call ends there with `reason` as its end, and is scored as it stands."""
        if self.done:
            raise RuntimeError(f"call {self.trajectory.call_id} is over: start a new episode")
        self._ended_by = reason
        return await self._finish()

    async def _caller_turn(self, agent_said: str) -> Observation:
        try:
            turn = await self.caller.respond(agent_said)
        except ModelsOwnFailure as e:
            # The caller's model cannot go on because of what the agent said: the conversation outgrew
            # its context (a model that talks on and on), or its provider refused the agent's words. The
            # call ends as it stands, scored, never out of the denominator. Before the model has said
            # anything, only our own words (the task's brief) can have caused it: ours, rerun.
            if not self.trajectory.requests:
                raise ModelRequestError(f"the caller's model failed before the model under test spoke: {e}") from None
            self._ended_by = f"caller_{e.end_reason}"
            self.trajectory.cuts.append(f"exchange {self._exchange}: the caller's model could not answer what the "
                                        f"agent said ({e}); the call ends there, scored as it stands (the model's)")
            return await self._finish()
        said = clean_text(turn.text or "")  # the caller is a model too
        notes = list(turn.notes or [])
        if len(said) > MAX_REPLY_CHARS:  # bounded like an agent's turn: the line reads it in linear time anyway
            notes.append(f"the caller's turn passed {MAX_REPLY_CHARS:,} characters ({len(said):,}); cut there")
            said = redact.cut(said, MAX_REPLY_CHARS)
        if said:
            atransmit = getattr(self.line, "atransmit", None)  # a line with a rewrite model awaits it
            heard = await atransmit(said, self._caller_turns) if atransmit else self.line.transmit(
                said, self._caller_turns)
            self._caller_turns += 1
            self.trajectory.transcript.append(TranscriptTurn("caller", said, self._ms(), heard=heard.pieces,
                                                             line_errors=heard.errors, notes=notes))
            self.messages.extend({"role": "user", "content": piece} for piece in heard.pieces)
        if turn.hang_up:
            self._ended_by = "caller_hangup"
            return await self._finish()
        self._exchange += 1
        self.trajectory.exchanges = self._exchange
        self._requests_this_turn = 0
        self._spoken = []
        return self._observe()

    def _observe(self, done: bool = False) -> Observation:
        handoff_from = self._agent_seen if self._agent_seen != self.agent else None
        self._agent_seen = self.agent
        self._asked_at = self._ms()
        return Observation(agent=self.agent, system_prompt=self.pack.agents[self.agent].prompt,
                           tools=self.pack.tool_schemas(self.agent), messages=list(self.messages),
                           new_messages=self.messages[self._seen:], handoff_from=handoff_from,
                           exchange=self._exchange, done=done)

    async def _finish(self) -> Observation:
        traj = self.trajectory
        traj.end_reason = self._ended_by
        traj.final_state = await self.tools.state(self.pack.name, traj.call_id)
        traj.duration_ms = self._ms()
        self.done = True
        return self._observe(done=True)

    async def _dispatch(self, tc: ToolCall, request_index: int) -> ToolCallRecord:
        started = self._ms()
        agent = self.agent
        touched = None
        spec = self.pack.tools.get(tc.name)
        kind = spec.kind if spec else "unknown"
        arguments, problem = parse_arguments(tc.raw_arguments)
        refused = tc.name not in self.pack.agents[agent].tools
        if refused:
            result = envelope(False, {"agent": agent, "available_tools": list(self.pack.agents[agent].tools)},
                              "tool_not_available", None)
        elif problem is not None:  # what it wrote goes back here, not in the history (`sendable_arguments`)
            result = envelope(False, {"problems": [problem], "as_written": redact.cut(clean_text(tc.raw_arguments),
                                                                                         AS_WRITTEN_CHARS)},
                              "invalid_arguments", None)
        elif kind == "industry":
            result, touched = await self.tools.call_audited(self.pack.name, self.trajectory.call_id, tc.name,
                                                            arguments, agent=agent)
        else:
            problems = self.pack.validation_errors(tc.name, self.pack.prepared_arguments(tc.name, arguments))
            if problems:
                result = envelope(False, {"problems": problems}, "invalid_arguments", None)
            elif kind == "handoff":
                result = envelope(True, {"agent": spec.handoff_target})
            else:
                result = envelope(True, {"ended": True})
        status = result_status(result)
        record = ToolCallRecord(index=len(self.trajectory.tool_calls), agent=agent, name=tc.name, kind=kind,
                                arguments=arguments, raw_arguments=clip(tc.raw_arguments), result=result,
                                status=status, refused=refused, request_index=request_index,
                                started_ms=started, duration_ms=round(self._ms() - started, 3), touched=touched)
        self.trajectory.tool_calls.append(record)
        if status == "ok" and not refused:
            if kind == "handoff":
                self.trajectory.handoffs.append(HandoffRecord(agent, spec.handoff_target, record.index))
                self.agent = spec.handoff_target
            if spec is not None and spec.ends_call:
                self._ended_by = "agent_end_call"
        return record
