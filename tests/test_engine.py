"""The call engine: turns, refusals, handoffs, limits and the recorded trajectory."""

from __future__ import annotations

import dataclasses
import json

from pytest_callm.call.caller import CallerTurn
from pytest_callm.call.engine import CallLimits
from pytest_callm.model.protocol import ModelReply, ToolCall
from pytest_callm.call.trajectory import Trajectory


class Caller:
    """Says the given lines in order, then hangs up."""

    def __init__(self, *lines: str):
        self.lines = list(lines)
        self.heard: list[str] = []

    async def respond(self, agent_said: str) -> CallerTurn:
        self.heard.append(agent_said)
        if not self.lines:
            return CallerTurn("", hang_up=True)
        return CallerTurn(self.lines.pop(0))


class Model:
    """Plays a list of replies; each is text or a list of (tool, arguments) pairs. Records requests."""

    name = "test-model"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests = []

    async def respond(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else "Anything else?"
        if isinstance(reply, str):
            return ModelReply(text=reply, ttft_ms=1.0)
        calls = [ToolCall(f"c{len(self.requests)}_{i}", name, args if isinstance(args, str) else json.dumps(args))
                 for i, (name, args) in enumerate(reply)]
        return ModelReply(tool_calls=calls, ttft_ms=1.0)


def test_the_call_opens_with_the_greeting_and_the_caller_speaks_next(vet_pack, play):
    caller = Caller("Hi there.")
    trajectory = play(Model("Hello!"), caller)
    assert trajectory.transcript[0].role == "agent"
    assert trajectory.transcript[0].said == vet_pack.greeting
    assert caller.heard[0] == vet_pack.greeting
    assert trajectory.transcript[1].role == "caller" and trajectory.transcript[1].heard == ["Hi there."]
    assert trajectory.end_reason == "caller_hangup"


def test_a_tool_the_active_agent_does_not_own_is_refused_and_the_model_sees_why(vet_pack, play):
    model = Model([("verify_owner", {"full_name": "Dana Whitfield", "phone": "5035550142"})], "Sorry.")
    trajectory = play(model, Caller("Verify me."))
    call = trajectory.tool_calls[0]
    assert call.refused and call.agent == "reception" and call.status == "tool_not_available"
    seen = json.loads(model.requests[1].messages[-1]["content"])
    assert seen["error_code"] == "tool_not_available"
    assert "transfer_to_records" in seen["data"]["available_tools"]
    assert trajectory.final_state["appointments"] == play(Model(), Caller()).final_state["appointments"]


def test_a_handoff_swaps_prompt_and_tools_in_place_and_keeps_history(vet_pack, play):
    model = Model([("transfer_to_records", {"handoff_summary": "wants records"})], "Records desk here.")
    trajectory = play(model, Caller("I need records."))
    before, after = model.requests
    assert before.agent == "reception" and after.agent == "records"
    assert after.system_prompt == vet_pack.agents["records"].prompt
    assert {t["function"]["name"] for t in after.tools} == set(vet_pack.agents["records"].tools)
    assert after.messages[:len(before.messages)] == before.messages  # history kept
    assert trajectory.handoff_path() == ["records"]
    assert trajectory.transcript[-1].agent == "records"


def test_a_handoff_with_invalid_arguments_does_not_switch_agents(play):
    trajectory = play(Model([("transfer_to_records", {"summary": "x"})], "Hmm."), Caller("Records please."))
    assert trajectory.tool_calls[0].status == "invalid_arguments"
    assert trajectory.handoff_path() == []


def test_an_agent_turn_makes_at_most_eight_requests(play):
    forever = [[("check_clinic_hours", {"day": "monday"})]] * 40
    model = Model(*forever)
    trajectory = play(model, Caller("Hours?", "Still there?"), CallLimits(max_requests_per_turn=8))
    counts = [sum(1 for r in trajectory.requests if r.exchange == e) for e in (1, 2)]
    assert counts == [8, 8]
    assert trajectory.end_reason == "caller_hangup"


def test_the_call_stops_after_thirty_exchanges_and_is_kept(play):
    caller = Caller(*["Hello?"] * 100)
    trajectory = play(Model(), caller)
    assert trajectory.end_reason == "exchange_cap"
    assert trajectory.exchanges == 30
    assert len([t for t in trajectory.transcript if t.role == "caller"]) == 30
    assert trajectory.final_state  # scored as it stands


def test_end_call_ends_the_call_and_nothing_after_it_runs(play):
    model = Model([("end_call", {"reason": "done"}), ("check_clinic_hours", {"day": "monday"})])
    caller = Caller("Bye.", "Are you still there?")
    trajectory = play(model, caller)
    assert trajectory.end_reason == "agent_end_call"
    assert [c.name for c in trajectory.tool_calls] == ["end_call"]
    assert len(caller.heard) == 1


def test_arguments_that_are_not_json_get_an_error_result(play):
    trajectory = play(Model([("check_clinic_hours", '{"day": "mon')], "Sorry."), Caller("Hours?"))
    call = trajectory.tool_calls[0]
    assert call.arguments is None and call.raw_arguments == '{"day": "mon'
    assert call.status == "invalid_arguments"


def test_industry_tools_run_on_the_tool_server_and_their_results_are_recorded(play):
    trajectory = play(Model([("check_clinic_hours", {"day": "Sat"})], "We close at one."), Caller("Saturday?"))
    call = trajectory.tool_calls[0]
    assert call.kind == "industry" and call.status == "ok"
    assert call.result["data"] == {"day": "saturday", "open": True, "opens": "09:00", "closes": "13:00"}


def test_text_spoken_with_tool_calls_reaches_the_caller(play):
    class Talker(Model):
        async def respond(self, request):
            reply = await super().respond(request)
            if reply.tool_calls:
                reply.text = "Let me check."
            return reply

    caller = Caller("Saturday hours?")
    play(Talker([("check_clinic_hours", {"day": "saturday"})], "Nine to one."), caller)
    assert caller.heard[1] == "Let me check. Nine to one."


def test_every_request_and_tool_call_is_recorded_with_timings(play):
    trajectory = play(Model([("check_clinic_hours", {"day": "monday"})], "Eight to six."), Caller("Monday?"))
    assert [r.tool_calls for r in trajectory.requests] == [["check_clinic_hours"], []]
    for r in trajectory.requests:
        assert r.started_ms >= 0 and r.duration_ms >= 0 and r.ttft_ms == 1.0
    assert trajectory.tool_calls[0].duration_ms > 0
    assert trajectory.tool_calls[0].request_index == 0
    assert trajectory.duration_ms >= trajectory.tool_calls[0].started_ms


def test_a_trajectory_round_trips_through_json(play):
    trajectory = play(Model([("transfer_to_records", {"handoff_summary": "x"})], "Hi."), Caller("Records."))
    data = json.loads(json.dumps(trajectory.to_json()))
    assert Trajectory.from_json(data) == trajectory


def test_to_json_gives_what_dataclasses_asdict_gives(play):
    # to_json skips asdict's deep copy (it was most of the cost of saving a trajectory): same data,
    # and no list or dict shared with the trajectory.
    trajectory = play(Model([("check_clinic_hours", {"day": "monday"})], "Eight to six."), Caller("Monday?"))
    data = trajectory.to_json()
    assert data == dataclasses.asdict(trajectory)
    assert data["tool_calls"][0]["arguments"] is not trajectory.tool_calls[0].arguments
    assert data["transcript"] is not trajectory.transcript
