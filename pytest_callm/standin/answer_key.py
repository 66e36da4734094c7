"""Players of one task, for tests and benchmarks: an agent that plays the task's answer key, and a
caller that says fixed lines. A `ScriptedServer(agent=..., caller=...)` plays them (server.py).

The stand-in models that play many tasks at once are in players.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from pytest_callm.authoring.prove import apply_edit
from pytest_callm.call.oracle import PlannedCall, plan_answer_key
from pytest_callm.standin.server import offers_hang_up
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

AGENT_OPENING = "Sure, one moment please."
AGENT_CLOSING = "Thank you for calling. Goodbye."
AGENT_HOLD = "One moment, please."
AGENT_ASKS_AGAIN = "Sorry, that didn't go through. Could you check that for me?"


class AnswerKeyAgent:
    """Follows a task's answer key: one planned call per request, decided by the tool results so far."""

    def __init__(self, task_path: Path, industries: Path, max_requests_per_turn: int = 8, end_call: bool = True,
                 edit: dict[str, Any] | None = None, route: str | None = None, ask_after_refusal: bool = False,
                 says: dict[int, str] | None = None):
        """`edit` changes the key first (a trap's edit: calls dropped, set, replaced or inserted, and
        the route); `route` follows one of the task's other routes instead of its main key.
        `ask_after_refusal`: after a tool refuses, or after a call the edit added, the agent asks the
        caller to check before it goes on, so a caller can correct what was tried after the try, as on
        a real call. `says` speaks a line once the key's first n planned calls have run (n -> line),
        ending that turn."""
        self.ask_after_refusal = ask_after_refusal
        _, task, pack = load_task(Path(task_path), PackRegistry([Path(industries)]))
        if route is not None:
            task = next(k for k in task.keys() if k.route_id == route)
        key_calls = task.exp_tool_calls
        if edit is not None:
            calls, _ = apply_edit(task.exp_tool_calls, edit.get("calls", []))
            path = [pack.agent_of_path_entry(e) for e in edit.get("handoff_path", task.exp_handoff_path)]
            task = dataclasses.replace(task, exp_tool_calls=calls, exp_handoff_path=path)
        self.plan = plan_answer_key(task, pack)
        own = {id(c) for c in key_calls}
        self.added = {n for n, p in enumerate(self.plan) if p.key_index is not None
                      and id(task.exp_tool_calls[p.key_index]) not in own}
        if not end_call:  # leave the hang-up to the caller
            self.plan = [c for c in self.plan if c.name != "end_call"]
        self.max_calls_per_turn = max_requests_per_turn - 1
        self.says = dict(says or {})

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        done = sum(1 for m in messages if m["role"] == "tool")
        if done in self.says:
            return {"text": self.says.pop(done)}
        last = messages[-1] if messages else {}
        if self.ask_after_refusal and last.get("role") == "tool" and (
                '"ok": false' in str(last.get("content")) or done - 1 in self.added):
            return {"text": AGENT_ASKS_AGAIN}
        return play_plan(self.plan, messages, self.max_calls_per_turn)


def play_plan(plan: list[PlannedCall] | tuple[PlannedCall, ...], messages: list[dict[str, Any]],
              max_calls_per_turn: int) -> dict[str, Any]:
    """The next step of a planned call: the next call (the plan's position is the number of tool
    results so far), a word before the first call of a turn, a hold line once a turn has made its
    calls (so the caller hears the agent), goodbye once the plan is played."""
    done = sum(1 for m in messages if m["role"] == "tool")
    since_user = 0
    for m in reversed(messages):
        if m["role"] == "user":
            break
        since_user += m["role"] == "assistant"
    if done >= len(plan):
        return {"text": AGENT_CLOSING}
    if since_user >= max_calls_per_turn:
        return {"text": AGENT_HOLD}
    call = plan[done]
    step: dict[str, Any] = {"tool_calls": [{"name": call.name, "arguments": call.arguments}]}
    if since_user == 0:
        step["text"] = AGENT_OPENING
    return step


class ScriptCaller:
    """Plays a caller: says its lines in order, one per request, and hangs up with the last one.

    A request is the caller's when it offers the `hang_up` tool; the number of lines already said is
    the number of assistant messages in it (the caller's own side of the conversation).
    """

    def __init__(self, lines: list[str]):
        self.lines = list(lines)

    is_caller_request = staticmethod(offers_hang_up)

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        said = sum(1 for m in body["messages"] if m["role"] == "assistant" and m.get("content"))
        line = self.lines[min(said, len(self.lines) - 1)]
        step: dict[str, Any] = {"text": line}
        if said >= len(self.lines) - 1:
            step["tool_calls"] = [{"name": "hang_up", "arguments": {}}]
        return step
