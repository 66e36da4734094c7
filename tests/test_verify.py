"""The verifier catches each kind of wrong call with exactly the gate(s) that observe it.

Each test plays a call through the real engine and tool server, changed in one way from the task's
answer key, and checks the verdict against the unchanged task.
"""

from __future__ import annotations

import copy

from pytest_callm.call.oracle import OracleModel, PlannedCall, ScriptedModel, plan_answer_key
from pytest_callm.scoring.verify import verify


def verdict_of(task, pack, play, plan):
    trajectory = play(ScriptedModel(plan))
    return verify(task, pack, trajectory), trajectory


def test_the_answer_key_itself_passes_all_three_gates(vet_pack, load_task, play):
    task = load_task("C1-H1")
    verdict, _ = verdict_of(task, vet_pack, play, plan_answer_key(task, vet_pack))
    assert verdict.gates == {"tools": True, "handoff": True, "database": True, "words": True}
    assert verdict.passed


def test_a_digit_changed_in_an_expected_argument_fails_only_the_tool_gate(vet_pack, load_task, play):
    task = load_task("C2-E2")
    mutated = load_task("C2-E2", lambda d: d["exp_tool_calls"][1]["parameters"].update(phone="503-555-0143"))
    trajectory = play(ScriptedModel(plan_answer_key(task, vet_pack)))
    verdict = verify(mutated, vet_pack, trajectory)
    assert verdict.gates == {"tools": False, "handoff": True, "database": True, "words": True}
    assert "phone: expected '503-555-0143', got '503-555-0142'" in verdict.explain()


def test_a_digit_changed_in_a_written_argument_fails_tools_and_database(vet_pack, load_task, play):
    task = load_task("C2-E2")
    plan = plan_answer_key(task, vet_pack)
    booking = next(c for c in plan if c.name == "book_appointment")
    booking.arguments["slot_id"] = "S-102"
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    text = verdict.explain()
    assert "slot_id: expected 'S-101', got 'S-102'" in text
    assert "appointments: row pet_id='p1' differs:" in text and "slot_id: expected 'S-101', got 'S-102'" in text


def test_a_dropped_read_only_call_fails_only_the_tool_gate(vet_pack, load_task, play):
    task = load_task("C1-M1")
    plan = [c for c in plan_answer_key(task, vet_pack) if c.name != "get_vaccination_status"]
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.gates == {"tools": False, "handoff": True, "database": True, "words": True}
    assert "missing call: get_vaccination_status(pet_name='Pepper')" in verdict.explain()


def test_two_handoffs_swapped_fail_only_the_handoff_gate(vet_pack, load_task, play):
    task = load_task("C1-H1")  # reception -> records -> appointments

    def swap(data):
        calls = {c["name"]: c for c in data["exp_tool_calls"]}
        data["exp_handoff_path"] = ["appointments", "records"]
        data["exp_tool_calls"] = [calls[n] for n in (
            "transfer_to_appointments", "verify_owner", "find_open_slots", "book_appointment",
            "transfer_to_records", "get_vaccination_status")]

    swapped = load_task("C1-H1", swap)
    verdict, trajectory = verdict_of(task, vet_pack, play, plan_answer_key(swapped, vet_pack))
    assert trajectory.handoff_path() == ["appointments", "records"]
    assert verdict.gates == {"tools": True, "handoff": False, "database": True, "words": True}
    text = verdict.explain()
    assert "expected path: records -> appointments" in text
    assert "actual path:   appointments -> records" in text


def test_an_extra_written_row_fails_only_the_database_gate(vet_pack, load_task, play):
    task = load_task("C2-E2")
    plan = plan_answer_key(task, vet_pack)
    # A second booking nobody asked for: an extra call is allowed, the row it writes is not.
    booking = next(c for c in plan if c.name == "book_appointment")
    plan.insert(plan.index(booking) + 1, PlannedCall("book_appointment", {"pet_name": "Biscuit", "slot_id": "S-102"},
                                                     "ok", None, "appointments"))
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.gates == {"tools": True, "handoff": True, "database": False, "words": True}
    assert "appointments: extra row {'pet_id': 'p1', 'slot_id': 'S-102'" in verdict.explain() and "'slot_id': 'S-102'" in verdict.explain()


def test_extra_calls_of_ordinary_tools_are_allowed(vet_pack, load_task, play):
    # The paper's rule: additional calls are permitted (a second read, a refused write).
    task = load_task("C2-M1")
    plan = plan_answer_key(task, vet_pack)
    listing = next(c for c in plan if c.name == "list_appointments")
    plan.insert(plan.index(listing) + 1, PlannedCall("list_appointments", {}, "ok", None, "appointments"))
    plan.insert(plan.index(listing) + 1, PlannedCall("find_open_slots", {"service": "dental"}, "ok", None,
                                                     "appointments"))
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.passed, verdict.explain()


def test_a_wrong_result_status_in_the_key_fails_only_the_tool_gate(vet_pack, load_task, play):
    task = load_task("C2-E2")
    mutated = load_task("C2-E2", lambda d: d["exp_tool_calls"][1].update(status="identity_not_verified"))
    trajectory = play(ScriptedModel(plan_answer_key(task, vet_pack)))
    verdict = verify(mutated, vet_pack, trajectory)
    assert verdict.gates == {"tools": False, "handoff": True, "database": True, "words": True}
    assert "result status: expected 'identity_not_verified', got 'ok'" in verdict.explain()


def test_a_changed_row_is_reported_column_by_column(vet_pack, load_task, play):
    task = load_task("C2-M1")  # cancels appointment 2
    plan = [c for c in plan_answer_key(task, vet_pack) if c.name != "cancel_appointment"]
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    text = verdict.explain()
    # A generated id is not compared: the changed row is named by the first column it shares.
    assert "appointments: row pet_id='p1' differs: status: expected 'cancelled', got 'booked'" in text
    assert "slots: row id='S-108' differs: available: expected 1, got 0" in text


def test_a_call_of_a_forbidden_tool_fails_the_tool_gate(vet_pack, load_task, play):
    task = load_task("R-M1")  # the caller is not on file: send_records is forbidden
    plan = plan_answer_key(task, vet_pack)
    plan.insert(-1, PlannedCall("send_records", {"pet_name": "Biscuit", "channel": "text"}, None, None, "records"))
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.gates == {"tools": False, "handoff": True, "database": True, "words": True}
    assert "forbidden call: " in verdict.explain() and "send_records" in verdict.explain()


def test_an_unrequested_call_of_a_required_or_forbidden_tool_fails_the_tool_gate(vet_pack, load_task, play):
    task = load_task("C1-M1")  # requires one email of Pepper's records; a second, by text, was not asked for
    plan = plan_answer_key(task, vet_pack)
    sent = next(c for c in plan if c.name == "send_records")
    plan.insert(plan.index(sent) + 1, PlannedCall("send_records", {"pet_name": "Pepper", "channel": "text"}, "ok",
                                                  None, "records"))
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert not verdict.tools.passed
    assert "unrequested call: " in verdict.explain()
    assert "send_records(pet_name='Pepper', channel='text')" in verdict.explain()


def test_a_required_call_of_a_required_or_forbidden_tool_missing_fails_the_tool_gate(vet_pack, load_task, play):
    task = load_task("C1-M1")
    plan = [c for c in plan_answer_key(task, vet_pack) if c.name != "send_records"]
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert not verdict.tools.passed
    assert "missing call: send_records(" in verdict.explain()


def test_free_text_arguments_are_never_compared(vet_pack, load_task, play):
    task = load_task("C2-E2", lambda d: d["exp_tool_calls"][0].update(
        parameters={"handoff_summary": "something the model will not say word for word"}))
    trajectory = play(ScriptedModel(plan_answer_key(load_task("C2-E2"), vet_pack)))
    assert verify(task, vet_pack, trajectory).passed


def test_alternatives_listed_by_the_task_are_accepted(vet_pack, load_task, play):
    def allow_s102(d):
        d["exp_tool_calls"][3]["alternatives"] = {"slot_id": ["S-102"]}

    task = load_task("C2-E2", allow_s102)
    plan = plan_answer_key(task, vet_pack)
    next(c for c in plan if c.name == "book_appointment").arguments["slot_id"] = "S-102"
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.tools.passed
    assert not verdict.database.passed  # the state still records which slot was booked


def test_each_expected_call_needs_its_own_actual_call(vet_pack, load_task, play):
    def twice(d):
        d["exp_tool_calls"].append(copy.deepcopy(d["exp_tool_calls"][0]))

    task = load_task("C2-E1", twice)  # two check_clinic_hours(saturday) expected, one made
    verdict, _ = verdict_of(task, vet_pack, play, plan_answer_key(load_task("C2-E1"), vet_pack))
    assert not verdict.tools.passed
    assert "check_clinic_hours(day='saturday')" in verdict.explain()


def test_matching_finds_an_assignment_greedy_order_would_miss(vet_pack, load_task, play):
    # Expected: hours(any day), then hours(saturday). Actual: saturday first, then monday.
    # A greedy match would give the unconstrained call the saturday one and fail the second.
    def two(d):
        d["exp_tool_calls"] = [{"name": "check_clinic_hours"},
                               {"name": "check_clinic_hours", "parameters": {"day": "saturday"}}]

    task = load_task("C2-E1", two)
    plan = plan_answer_key(load_task("C2-E1"), vet_pack)
    plan.insert(1, PlannedCall("check_clinic_hours", {"day": "monday"}, "ok", None, "reception"))
    verdict, _ = verdict_of(task, vet_pack, play, plan)
    assert verdict.tools.passed


def test_oracle_replay_of_every_example_task_passes(vet_pack, load_task, play):
    from conftest import EXAMPLE_TASKS

    for folder in sorted(EXAMPLE_TASKS.iterdir()):
        task = load_task(folder.name)
        model = OracleModel(task, vet_pack)
        trajectory = play(model)
        model.after_call(trajectory.tool_calls)
        assert verify(task, vet_pack, trajectory).passed, folder.name


# --- keys that say "either" -------------------------------------------------------------------

def test_an_expected_call_is_satisfied_by_any_call_it_lists_as_equally_right(vet_pack, load_task, play):
    key = load_task("C2-E2")
    trajectory = play(ScriptedModel(plan_answer_key(key, vet_pack)))

    def either(data):  # written with another phone, or the one the caller gave
        call = data["exp_tool_calls"][1]
        call["either"] = [{"name": "verify_owner", "parameters": dict(call["parameters"])}]
        call["parameters"]["phone"] = "503-555-0143"

    assert verify(load_task("C2-E2", either), vet_pack, trajectory).passed
    only_other = load_task("C2-E2", lambda d: d["exp_tool_calls"][1]["parameters"].update(phone="503-555-0143"))
    verdict = verify(only_other, vet_pack, trajectory)
    assert verdict.gates["tools"] is False


def test_an_other_route_passes_with_its_own_state_and_a_call_on_neither_route_fails(vet_pack, load_task, play):
    from pytest_callm.authoring.lock import expected_state

    key = load_task("C2-E2")
    other_slot = load_task("C2-E2", lambda d: d["exp_tool_calls"][3]["parameters"].update(slot_id="S-102"))
    other_state = expected_state(play(ScriptedModel(plan_answer_key(other_slot, vet_pack))), vet_pack)

    def with_route(data):
        route_calls = copy.deepcopy(data["exp_tool_calls"])
        route_calls[3]["parameters"]["slot_id"] = "S-102"
        data["routes"] = [{"id": "later-slot", "exp_tool_calls": route_calls, "exp_db_state": other_state}]

    task = load_task("C2-E2", with_route)
    main = verify(task, vet_pack, play(ScriptedModel(plan_answer_key(key, vet_pack))))
    assert main.passed and main.route is None
    via_route = verify(task, vet_pack, play(ScriptedModel(plan_answer_key(other_slot, vet_pack))))
    assert via_route.passed and via_route.route == "later-slot"
    assert via_route.to_json()["route"] == "later-slot"
    # S-103 is on neither route: the main key's failure explains it.
    neither = load_task("C2-E2", lambda d: d["exp_tool_calls"][3]["parameters"].update(slot_id="S-103"))
    verdict = verify(task, vet_pack, play(ScriptedModel(plan_answer_key(neither, vet_pack))))
    assert not verdict.passed and verdict.route is None
    assert "slot_id: expected 'S-101', got 'S-103'" in verdict.explain()
