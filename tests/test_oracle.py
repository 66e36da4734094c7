"""The oracle replays answer keys, and rejects keys that cannot be played, naming the call."""

from __future__ import annotations

import pytest

from pytest_callm.call.oracle import AnswerKeyError, OracleModel, plan_answer_key


def test_plan_inserts_handoffs_of_the_expected_path_where_a_call_needs_them(vet_pack, load_task):
    def without_handoff_calls(d):
        d["exp_tool_calls"] = [c for c in d["exp_tool_calls"] if not c["name"].startswith("transfer_to_")]

    task = load_task("C1-H1", without_handoff_calls)
    plan = plan_answer_key(task, vet_pack)
    assert [(c.agent, c.name) for c in plan] == [
        ("reception", "transfer_to_records"), ("records", "verify_owner"), ("records", "get_vaccination_status"),
        ("records", "transfer_to_appointments"), ("appointments", "find_open_slots"),
        ("appointments", "book_appointment"), ("appointments", "end_call")]


def test_plan_fills_unconstrained_required_arguments(vet_pack, load_task):
    plan = plan_answer_key(load_task("C2-E2"), vet_pack)
    assert plan[0].name == "transfer_to_appointments"
    assert set(plan[0].arguments) == {"handoff_summary"}
    assert plan[-1].name == "end_call" and "reason" in plan[-1].arguments


def test_a_call_no_agent_on_the_path_owns_is_rejected_by_name(vet_pack, load_task):
    task = load_task("C2-E1", lambda d: d["exp_tool_calls"].append(
        {"name": "verify_owner", "parameters": {"full_name": "Dana Whitfield", "phone": "5035550142"}}))
    with pytest.raises(AnswerKeyError) as err:
        plan_answer_key(task, vet_pack)
    message = str(err.value)
    assert "exp_tool_calls[1] verify_owner is not owned by an agent on the expected path reception" in message
    assert "owned by: records, appointments" in message


def test_a_handoff_out_of_path_order_is_rejected(vet_pack, load_task):
    task = load_task("C1-H1", lambda d: d.update(exp_handoff_path=["appointments", "records"]))
    with pytest.raises(AnswerKeyError, match=r"exp_tool_calls\[0\] transfer_to_records is out of order"):
        plan_answer_key(task, vet_pack)


def test_a_path_an_agent_cannot_take_is_rejected(vet_pack, load_task):
    # reception owns no handoff to itself: a path that asks for one cannot be played.
    task = load_task("C2-E1", lambda d: d.update(exp_handoff_path=["records", "reception"]))
    with pytest.raises(AnswerKeyError, match="records does not own transfer_to_reception"):
        plan_answer_key(task, vet_pack)


def test_an_unexpected_result_status_is_rejected_naming_the_call(vet_pack, load_task, play):
    task = load_task("C2-E2", lambda d: d["exp_tool_calls"][1].update(status="identity_not_verified"))
    with pytest.raises(AnswerKeyError) as err:
        play(OracleModel(task, vet_pack))
    assert "verify_owner (exp_tool_calls[1]) returned 'ok', the answer key expects 'identity_not_verified'" \
        in str(err.value)


def test_an_expected_error_status_is_accepted(vet_pack, load_task, play):
    task = load_task("R-H1")  # cancel_appointment is expected to return late_cancellation
    model = OracleModel(task, vet_pack)
    trajectory = play(model)
    model.after_call(trajectory.tool_calls)
    cancel = next(c for c in trajectory.tool_calls if c.name == "cancel_appointment")
    assert cancel.status == "late_cancellation"


def test_status_of_the_last_call_is_checked_after_the_call(vet_pack, load_task, play):
    # The last key call's result is only seen once the call is over.
    task = load_task("R-H1", lambda d: d["exp_tool_calls"][-1].update(status="ok"))
    model = OracleModel(task, vet_pack)
    with pytest.raises(AnswerKeyError, match="cancel_appointment .* returned 'late_cancellation'"):
        model.after_call(play(model).tool_calls)


def test_long_keys_are_spread_over_turns_of_at_most_eight_requests(vet_pack, load_task, play):
    task = load_task("C2-E1", lambda d: d.update(exp_tool_calls=[
        {"name": "check_clinic_hours", "parameters": {"day": day}, "status": "ok"}
        for day in ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"] * 2]))
    model = OracleModel(task, vet_pack)
    trajectory = play(model)
    model.after_call(trajectory.tool_calls)
    per_exchange = {}
    for r in trajectory.requests:
        per_exchange[r.exchange] = per_exchange.get(r.exchange, 0) + 1
    assert max(per_exchange.values()) <= 8
    assert len([c for c in trajectory.tool_calls if c.name == "check_clinic_hours"]) == 14
