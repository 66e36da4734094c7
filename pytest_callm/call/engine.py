"""The call engine (DESIGN §5): runs one phone call and returns its trajectory.

Greeting, then caller and agent alternate. In each agent turn the model may make up to
`max_requests_per_turn` requests: tool calls first, speech last. Tools the active agent does not own
are refused with an error result the model sees; a handoff swaps the system prompt and the tool set
in place and keeps the history. The call ends when the caller hangs up, when a call-ending tool
succeeds (`end_call`, or a pack tool listed under `ends_call`), or after `max_exchanges`.

No pytest in here: the engine can run under any harness.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from pytest_callm.call.caller import Caller
from pytest_callm.phone.line import Line
from pytest_callm.model.protocol import Model, ModelContextOverflow, ModelRequest, ToolCall
from pytest_callm.model.output import clean_text, clip, parse_arguments, safe_reply
from pytest_callm.task.pack import Pack
from pytest_callm.toolkit import envelope, result_status
from pytest_callm.toolserver.client import ToolClient
from pytest_callm.call.trajectory import HandoffRecord, RequestRecord, ToolCallRecord, TranscriptTurn, Trajectory


@dataclass(frozen=True)
class CallLimits:
    max_requests_per_turn: int = 8
    max_exchanges: int = 30


class Call:
    """State of one call in progress. `run()` drives it to the end."""

    def __init__(self, *, pack: Pack, model: Model, caller: Caller, line: Line, tools: ToolClient,
                 call_id: str, task_id: str, attempt: int, limits: CallLimits = CallLimits()):
        self.pack, self.model, self.caller, self.line, self.tools = pack, model, caller, line, tools
        self.limits = limits
        self.agent = pack.entry_agent
        self.messages: list[dict[str, Any]] = []
        self.traj = Trajectory(call_id=call_id, task_id=task_id, industry=pack.name, attempt=attempt,
                               model=getattr(model, "name", type(model).__name__))
        self._t0 = time.perf_counter()
        self._ended_by: str | None = None

    def _ms(self) -> float:
        return round((time.perf_counter() - self._t0) * 1000, 3)

    async def run(self) -> Trajectory:
        # The call's database exists from the start: its final state is the seed if no tool ran.
        await self.tools.start_call(self.pack.name, self.traj.call_id)
        greeting = self.pack.greeting
        self.messages.append({"role": "assistant", "content": greeting})
        self.traj.transcript.append(TranscriptTurn("agent", greeting, self._ms(), agent=self.agent))
        agent_said = greeting
        caller_turns = 0
        for exchange in range(1, self.limits.max_exchanges + 1):
            turn = await self.caller.respond(agent_said)
            said = clean_text(turn.text or "")  # the caller is a model too
            notes = list(getattr(turn, "notes", None) or [])
            if said:
                atransmit = getattr(self.line, "atransmit", None)  # a line with a rewrite model awaits it
                heard = await atransmit(said, caller_turns) if atransmit else self.line.transmit(
                    said, caller_turns)
                caller_turns += 1
                self.traj.transcript.append(TranscriptTurn("caller", said, self._ms(), heard=heard.pieces,
                                                           line_errors=heard.errors, notes=notes))
                self.messages.extend({"role": "user", "content": piece} for piece in heard.pieces)
            if turn.hang_up:
                self._ended_by = "caller_hangup"
                break
            self.traj.exchanges = exchange
            agent_said = await self._agent_turn(exchange)
            if self._ended_by:
                break
        else:
            self._ended_by = "exchange_cap"
        self.traj.end_reason = self._ended_by
        self.traj.final_state = await self.tools.state(self.pack.name, self.traj.call_id)
        self.traj.duration_ms = self._ms()
        return self.traj

    async def _agent_turn(self, exchange: int) -> str:
        """Up to N model requests; returns everything spoken in the turn."""
        spoken: list[str] = []
        for _ in range(self.limits.max_requests_per_turn):
            request = ModelRequest(agent=self.agent, system_prompt=self.pack.agents[self.agent].prompt,
                                   messages=list(self.messages), tools=self.pack.tool_schemas(self.agent))
            started = self._ms()
            try:
                reply = safe_reply(await self.model.respond(request))
            except ModelContextOverflow as e:
                self.traj.model_failure = str(e)
                self._ended_by = "context_overflow"
                break
            index = len(self.traj.requests)
            self.traj.requests.append(RequestRecord(
                index=index, agent=self.agent, exchange=exchange, started_ms=started,
                duration_ms=round(self._ms() - started, 3), ttft_ms=reply.ttft_ms, text=reply.text,
                tool_calls=[tc.name for tc in reply.tool_calls], reasoning=reply.reasoning,
                usage=reply.usage.to_json() if reply.usage else None, notes=list(reply.notes)))
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if reply.tool_calls:
                message["tool_calls"] = [{"id": tc.id, "type": "function",
                                          "function": {"name": tc.name, "arguments": clip(tc.raw_arguments)}}
                                         for tc in reply.tool_calls]
            if reply.text or reply.tool_calls:
                self.messages.append(message)
            if reply.text:
                spoken.append(reply.text)
                self.traj.transcript.append(TranscriptTurn("agent", reply.text, self._ms(), agent=self.agent))
            if not reply.tool_calls:
                break
            for tc in reply.tool_calls:
                record = await self._dispatch(tc, index)
                self.messages.append({"role": "tool", "tool_call_id": tc.id,
                                      "content": json.dumps(record.result, ensure_ascii=False)})
                if self._ended_by:  # nothing runs after the call has ended
                    break
            if self._ended_by:
                break
        return " ".join(spoken)

    async def _dispatch(self, tc: ToolCall, request_index: int) -> ToolCallRecord:
        started = self._ms()
        agent = self.agent
        spec = self.pack.tools.get(tc.name)
        kind = spec.kind if spec else "unknown"
        arguments, problem = parse_arguments(tc.raw_arguments)
        refused = tc.name not in self.pack.agents[agent].tools
        if refused:
            result = envelope(False, {"agent": agent, "available_tools": list(self.pack.agents[agent].tools)},
                              "tool_not_available", None)
        elif problem is not None:
            result = envelope(False, {"problems": [problem]}, "invalid_arguments", None)
        elif kind == "industry":
            result = await self.tools.call(self.pack.name, self.traj.call_id, tc.name, arguments)
        else:
            problems = self.pack.validation_errors(tc.name, self.pack.prepared_arguments(tc.name, arguments))
            if problems:
                result = envelope(False, {"problems": problems}, "invalid_arguments", None)
            elif kind == "handoff":
                result = envelope(True, {"agent": spec.handoff_target})
            else:
                result = envelope(True, {"ended": True})
        status = result_status(result)
        record = ToolCallRecord(index=len(self.traj.tool_calls), agent=agent, name=tc.name, kind=kind,
                                arguments=arguments, raw_arguments=clip(tc.raw_arguments), result=result,
                                status=status, refused=refused, request_index=request_index,
                                started_ms=started, duration_ms=round(self._ms() - started, 3))
        self.traj.tool_calls.append(record)
        if status == "ok" and not refused:
            if kind == "handoff":
                self.traj.handoffs.append(HandoffRecord(agent, spec.handoff_target, record.index))
                self.agent = spec.handoff_target
            if spec is not None and spec.ends_call:
                self._ended_by = "agent_end_call"
        return record


async def run_call(**kwargs) -> Trajectory:
    return await Call(**kwargs).run()
