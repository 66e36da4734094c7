"""`callm prove`: declared traps, generated mutants and correct spellings, replayed for real.

Each test writes an example task with traps into a temporary folder and proves it through the real
engine and tool server, as `callm prove` does in CI for every locked task.
"""

from __future__ import annotations

import json
import shutil

import pytest

from pytest_callm.authoring.prove import apply_edit, one_off, prove, spellings
from pytest_callm.authoring.trap_tables import counts
from pytest_callm.cli import main as callm
from pytest_callm.task.task_file import ExpectedCall

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS

DROP_BOOKING = {"id": "no-booking", "wrong_move": "says the visit is booked without booking it",
                "caught_by": ["tools", "database"], "edit": {"calls": [{"drop": 3}]}}


@pytest.fixture
def task_with(tmp_path):
    """C2-E2 of the example pack (verify, find slots, book S-101) with the given traps, in tmp_path."""

    def write(*traps, edit=None):
        folder = tmp_path / "vet_clinic" / "C2-E2"
        folder.mkdir(parents=True)
        data = json.loads((EXAMPLE_TASKS / "C2-E2" / "task.json").read_text())
        # Every trap of a pack with rules names one (the example pack's rules.json).
        data["traps"] = [{"rule": "as-asked", **t} for t in traps]
        if edit:
            edit(data)
        (folder / "task.json").write_text(json.dumps(data))
        return folder

    return write


def proof_of(folder):
    [proof] = prove([folder], [EXAMPLE_PACK.parent])
    return proof


def test_a_trap_whose_wrong_answer_fails_the_declared_gates_is_proven(task_with):
    proof = proof_of(task_with(DROP_BOOKING, {"id": "rude", "wrong_move": "snaps at the caller",
                                              "caught_by": "speech-only"}))
    assert proof.problems == []
    assert proof.traps == [{"id": "no-booking", "failed": ["tools", "database"], "ok": True}]  # speech-only: not replayed
    assert proof.mutants > 0 and proof.spellings > 0
    assert counts([proof.task]) == {"vet_clinic": {"tasks": 1, "scored": 1, "tool_refused": 0, "speech_only": 0}}


def test_a_trap_caught_by_another_gate_than_declared_is_a_problem(task_with):
    wrong_slot = {"id": "wrong-slot", "wrong_move": "books the next slot", "caught_by": ["database"],
                  "edit": {"calls": [{"set": 3, "parameters": {"slot_id": "S-102"}}]}}
    [problem] = proof_of(task_with(wrong_slot)).problems
    assert problem.startswith("trap wrong-slot (books the next slot): caught by database as declared, but the "
                              "replay fails tools, database")


def test_a_wrong_answer_that_passes_is_a_problem(task_with):
    harmless = {"id": "extra-lookup", "wrong_move": "looks up slots twice", "caught_by": ["tools"],
                "edit": {"calls": [{"insert": 3, "call": {"name": "find_open_slots",
                                                          "parameters": {"service": "wellness"}}}]}}
    [problem] = proof_of(task_with(harmless)).problems
    assert "the replay fails no gate (the wrong answer passes)" in problem


def test_a_tool_refused_trap_checks_the_refusal(task_with):
    taken = {"id": "taken-slot", "wrong_move": "tries to book a slot already taken", "caught_by": ["tools", "database"],
             "refused_with": "no_such_code", "edit": {"calls": [{"set": 3, "parameters": {"slot_id": "S-102"}}]}}
    [problem] = proof_of(task_with(taken)).problems
    assert "refused with 'no_such_code' as declared, but the edited calls returned: book_appointment -> ok" in problem


def test_a_task_without_traps_and_an_unplayable_trap_are_problems(task_with):
    assert proof_of(task_with()).problems == [
        "declares no trap: say what wrong move the task catches (traps in task.json)"]


def test_an_unplayable_trap_says_why(task_with, tmp_path):
    # The receptionist cannot book: without the handoff the key cannot be played.
    stuck = {"id": "stays", "wrong_move": "never transfers", "caught_by": ["handoff"],
             "edit": {"calls": [{"drop": 0}], "handoff_path": []}}
    [problem] = proof_of(task_with(stuck)).problems
    assert problem.startswith("trap stays: cannot be played:") and "is not owned by an agent" in problem


def test_every_generated_mutant_of_a_sound_task_fails_and_an_accepted_value_is_listed_not_hidden(task_with):
    def accept_other_phone(data):
        data["exp_tool_calls"][1]["alternatives"] = {"phone": ["503-555-0143"]}

    proof = proof_of(task_with(DROP_BOOKING, edit=accept_other_phone))
    assert proof.problems == []
    assert proof.unscorable == [
        "exp_tool_calls[1] verify_owner.phone: '503-555-0143' is an accepted value",
        "forbidden send_records: no agent on the expected path owns it, so no replay can call it"]


def test_routes_are_replayed_and_must_pass(task_with):
    def bad_route(data):  # a route whose stored state is the main key's: its own replay cannot match it
        calls = json.loads(json.dumps(data["exp_tool_calls"]))
        calls[3]["parameters"]["slot_id"] = "S-102"
        data["routes"] = [{"id": "later-slot", "exp_tool_calls": calls, "exp_db_state": data["exp_db_state"]}]

    [problem] = proof_of(task_with(DROP_BOOKING, edit=bad_route)).problems
    assert problem.startswith("route later-slot fails, though the task lists it as right:")


def test_edits_index_the_key_as_written():
    key = [ExpectedCall(n, {"v": i}, "ok") for i, n in enumerate("abcd")]
    edited, touched = apply_edit(key, [{"drop": 1}, {"insert": 1, "call": {"name": "x"}},
                                       {"set": 2, "parameters": {"v": 9}}, {"insert": 4, "call": {"name": "z"}},
                                       {"replace": 3, "call": {"name": "y", "parameters": {"w": 1}}}])
    assert [(c.name, c.parameters) for c in edited] == [("a", {"v": 0}), ("x", {}), ("c", {"v": 9}),
                                                        ("y", {"w": 1}), ("z", {})]
    assert touched == {"x", "c", "y", "z"}


def test_one_off_values_differ_by_one_character_digit_choice_or_day():
    assert one_off("503-555-0142", "phone", {}) == "503-555-0143"
    assert one_off("Orion Home Goods", "party", {}) == "Orioo Home Goods"
    assert one_off("2026-06-02", "date", {}) == "2026-06-03"
    assert one_off("email", None, {"enum": ["email", "text"]}) == "text"
    assert one_off(True, None, {}) is False and one_off(3, None, {}) == 4


def test_correct_spellings_by_kind(vet_pack):
    assert "+1 503-555-0142" in spellings("503-555-0142", "phone", {"type": "string"}, vet_pack)
    assert "(503) 555-0142" in spellings("503-555-0142", "phone", {"type": "string"}, vet_pack)
    assert spellings("Sunmark Property Management", "organization", {}, vet_pack)[-1] == "Sunmark Property Mgmt."
    assert "$1,250.00" in spellings("1250", "money", {"type": "string"}, vet_pack)
    assert spellings("2026-06-02", "date", {}, vet_pack) == ["2026-06-02T09:00:00"]
    assert spellings("email", None, {"enum": ["email"]}, vet_pack) == []


def test_the_command_exits_1_on_a_problem_and_0_when_proven(task_with, capsys, monkeypatch):
    monkeypatch.chdir(EXAMPLE_PACK.parent.parent)  # examples/: its industries/ folder holds the pack
    folder = task_with(DROP_BOOKING)
    assert callm(["prove", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "1 task(s): 1 trap replay(s)" in out and "vet_clinic: 1 tasks: 1 with a scored trap" in out
    data = json.loads((folder / "task.json").read_text())
    data["traps"][0]["caught_by"] = ["handoff"]
    (folder / "task.json").write_text(json.dumps(data))
    assert callm(["prove", str(folder)]) == 1
    assert "FAIL trap no-booking" in capsys.readouterr().out


def test_a_spelling_the_tool_reads_otherwise_than_the_verifier_is_named(tmp_path, task_with):
    # A copy of the example pack that declares pet names a kind of person: the verifier forgives
    # "Dr. Biscuit", the booking tool (exact pet names) does not, and the proof says which value.
    industries = tmp_path / "packs"
    shutil.copytree(EXAMPLE_PACK, industries / "vet_clinic")
    tools = json.loads((industries / "vet_clinic" / "tools.json").read_text())
    for tool in tools:
        if tool["function"]["name"] == "book_appointment":
            tool["scoring"] = {"kinds": {"pet_name": "person"}}
    (industries / "vet_clinic" / "tools.json").write_text(json.dumps(tools))
    [proof] = prove([task_with(DROP_BOOKING)], [industries])
    failed = [p.splitlines()[0] for p in proof.problems]
    assert "correct spelling fails: exp_tool_calls[3] book_appointment.pet_name 'Biscuit' written 'Dr. Biscuit'" \
        in failed
    assert all(p.startswith("correct spelling fails: exp_tool_calls[3] book_appointment.pet_name") for p in failed)
