"""The records Halverson & Reed keeps, scored through the verifier (docs/house-rules.md §3).

Each test plays a task's answer key, edited the way a wrong (or a right) front desk would, through
the real engine and tool server exactly as `callm prove` does, and reads the verdict: a duplicate
write, a hedge, a look at someone else's record, a guessed try, a fact taken out of order and a
dictated contact detail in free text must each fail the database gate; a retry of what the caller
said, the checks in another order and a name written "Last, First" must pass.
"""

from __future__ import annotations

import pytest

from conftest import REPO, shared_tool_server
from pytest_callm.authoring.replay import Outcome, edited_replay, play_all
from pytest_callm.authoring.house_rules import drop, insert, set_
from pytest_callm.runs.runtime import Runtime
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task


@pytest.fixture(scope="module")
def legal():
    packs = PackRegistry([REPO / "industries"])
    packs.get("legal")
    runtime = Runtime("oracle", packs.loaded(), shared_tool_server().url)
    try:
        yield packs, runtime
    finally:
        runtime.close()


def play(legal, task_id: str, *changes, caller_says=None, misheard=None) -> Outcome:
    packs, runtime = legal
    _, task, pack = load_task(REPO / "tasks" / "legal" / task_id / "task.json", packs)
    edit = {"calls": list(changes)}
    if caller_says:
        edit["caller_says"] = caller_says
    if misheard:
        edit["mishearings"] = misheard
    return runtime.run(play_all(runtime, [edited_replay(task, pack, "test", task_id, edit)]))[0]


def fails_database(o: Outcome, *needles: str) -> str:
    assert o.error is None, o.error
    assert o.failed_gates and "database" in o.failed_gates, o.verdict.explain()
    text = "\n".join(o.verdict.database.problems)
    for needle in needles:
        assert needle in text, text
    return text


def passes(o: Outcome) -> None:
    assert o.error is None, o.error
    assert o.verdict.passed, o.verdict.explain()


# --- a duplicate write, a hedge, a substitute ------------------------------------------------------

def test_a_message_taken_twice_shows(legal):
    # C1-E2: lookup, take_message for Kevin Osei.
    fails_database(play(legal, "C1-E2", insert(2, "take_message", recipient_name="Kevin Osei",
                                                callback_phone="206-555-0104", message="Again.", urgent=False)),
                   "messages: extra row")


def test_a_packet_sent_both_ways_shows(legal):
    # C4-H3: the packet by email, as she asked; a hedge sends it by text as well.
    fails_database(play(legal, "C4-H3", insert(10, "send_intake_packet", channel="text")),
                   "documents: extra row", "'target': 'text'")


def test_a_note_written_twice_shows(legal):
    fails_database(play(legal, "C4-H3", insert(9, "add_intake_note", note="Same note again.")),
                   "intake_notes: extra row")


# --- every look at a person's record -----------------------------------------------------------------

def test_another_clients_matter_asked_for_is_a_look_at_that_record(legal):
    # C5-E1: Marisol Vega, verified, reads her own matter. Asking for Derek Okonkwo's is refused and kept.
    fails_database(play(legal, "C5-E1", insert(4, "get_matter_status", matter_number="HR-25-0342")),
                   "record_access: extra row {'record': 'c_1002', 'on_behalf_of': 'c_1001', 'outcome': 'refused'}")


def test_her_own_matter_read_again_is_harmless(legal):
    passes(play(legal, "C5-E1", insert(4, "get_matter_status", matter_number="hr 24 0117")))


def test_a_client_looked_up_by_name_with_the_callers_number_is_on_the_record_in_either_order(legal):
    # R-M1: the adjuster Colleen Radford. Looking Derek Okonkwo up, before or after herself, touches
    # his record (his name on file): a row no misheard retry explains.
    after = play(legal, "R-M1", insert(1, "lookup_caller", full_name="Derek Okonkwo", phone="713-555-0261"))
    fails_database(after, "record_access: extra row {'record': 'c_1002'")
    before = play(legal, "R-M1", insert(0, "lookup_caller", full_name="Okonkwo, Derek", phone="713-555-0261"))
    fails_database(before, "record_access: extra row {'record': 'c_1002'")


def test_a_new_caller_looked_up_twice_the_same_way_is_harmless(legal):
    passes(play(legal, "C1-E1", insert(1, "lookup_caller", full_name="IRENE CASTELLANOS", phone="(425) 555-0102")))


# --- every identity try ------------------------------------------------------------------------------

def test_a_guessed_matter_number_before_the_right_one_is_on_the_record(legal):
    # C5-E1: a try with a number nobody said fails; the same try on the number the line made of what
    # she said (heard right when she said it again) is forgiven; on a number she said herself and took
    # back before the try, it is not: no line changed it (issue 37).
    try_first = insert(2, "verify_client", full_name="Marisol Vega", matter_number="HR-24-0171")
    said = ["Marisol Vega, 312-555-0148. H R two four zero one one seven. Again: H R two four zero one one seven."]
    fails_database(play(legal, "C5-E1", try_first, caller_says=said), "verifications: extra row",
                   "which the caller never said")
    passes(play(legal, "C5-E1", try_first, caller_says=said, misheard={"zero one one seven": "zero one seven one"}))
    fails_database(play(legal, "C5-E1", try_first,
                        caller_says=["Marisol Vega, 312-555-0148. H R two four zero one seven one. Sorry: zero one one seven."]),
                   "verifications: extra row")


def _says_matter(number: str) -> list[str]:
    return [f"Marisol Vega, 312-555-0148. My matter number is {number}."]


@pytest.mark.parametrize("says, changes, passed", [
    pytest.param("HR-24-0118", [], False, id="one digit changed from what she said"),
    pytest.param("HR-24-017", [], False, id="a digit added to what she said"),
    pytest.param("H R two four zero one one seven", [], True, id="said in words"),
    pytest.param("H R two four oh one one seven", [], True, id="said with oh for zero"),
    pytest.param("HR-24-0117", [set_(2, matter_number="hr240117")], True, id="written lower case without dashes"),
    pytest.param("HR-24-0117", [set_(2, matter_number="HR 24 0117")], True, id="written with spaces"),
    # Known holes, kept on the record: a number heard inside a longer one counts as heard, and the right
    # number tried where she said one two edits off it is read as no change of the agent's.
    pytest.param("HR-24-01177", [], False, id="a digit of what she said dropped",
                 marks=pytest.mark.xfail(strict=True, reason="HR240117 is inside the HR2401177 she said")),
    pytest.param("HR-24-0199", [], False, id="two digits changed from what she said",
                 marks=pytest.mark.xfail(strict=True, reason="only a number one edit off what was said is "
                                                             "read as the agent's change")),
])
def test_the_right_matter_verified_on_a_number_she_did_not_say_is_the_agents_change(legal, says, changes, passed):
    # C5-E1: the verification's row is the right answer's; only the value tried against what she said
    # (said or heard) tells a reading from a change (the verifier's one-edit search, scoring/heard.py).
    outcome = play(legal, "C5-E1", *changes, caller_says=_says_matter(says))
    if passed:
        passes(outcome)
    else:
        fails_database(outcome, "which the caller never said")


def test_a_try_on_another_clients_record_is_never_forgiven(legal):
    # C5-M1: Beatrice tries her brother's name and matter, which she did say.
    fails_database(play(legal, "C5-M1", insert(4, "verify_client", full_name="Derek Okonkwo",
                                                matter_number="HR-25-0342"),
                        caller_says=["My brother is Derek Okonkwo, HR-25-0342."]),
                   "verifications: extra row {'account': 'c_1002'")


def test_a_verification_written_last_first_or_with_accents_is_the_same_client(legal):
    passes(play(legal, "C5-E1", set_(0, full_name="Vega, Marisol"), set_(2, full_name="Marisól Vega")))


# --- order recorded at the act --------------------------------------------------------------------------

def test_a_fact_taken_between_two_conflict_checks_is_on_the_record(legal):
    # C2-H1: the driver, then the company, then the facts. The practice area asked after the driver's
    # check and before the company's is in the company's check row.
    fails_database(play(legal, "C2-H1", insert(3, "check_practice_area", practice_area="personal_injury")),
                   "conflict_checks: row", "facts_before: expected '', got 'practice_area'")


def test_the_parties_checked_in_the_other_order_is_the_same_record(legal):
    passes(play(legal, "C2-H1", set_(2, opposing_party="Swiftway Parcel Services, Inc."),
                set_(3, opposing_party="Pryor, Calvin")))


def test_a_made_up_name_checked_first_does_not_launder_the_matter(legal):
    # C4-H3: a clear check of a name the caller never said is on the record; the party the line misheard,
    # checked, then heard right is forgiven; one she named herself and took back first is not.
    fails_database(play(legal, "C4-H3", insert(2, "check_conflict", opposing_party="Northwind Holdings Group")),
                   "conflict_checks: extra row", "which the caller never said")
    misheard = insert(2, "check_conflict", opposing_party="Harbor Lane Industries")
    passes(play(legal, "C4-H3", misheard, caller_says=["Clara Whitman, 206-555-0220. It's Harborline Industries. Harborline Industries."],
                misheard={"Harborline": "Harbor Lane"}))
    fails_database(play(legal, "C4-H3", misheard,
                        caller_says=["Clara Whitman, 206-555-0220. It's Harbor Lane Industries. No, sorry, Harborline Industries."]),
                   "conflict_checks: extra row")


def test_facts_taken_before_a_later_conflict_are_on_the_record(legal):
    # R-H4: Harbor Point (clear), then the manager Sunmark (a conflict). Taking the area between the two
    # puts it on the record as taken in a matter that conflicts.
    text = fails_database(play(legal, "R-H4", insert(3, "check_practice_area", practice_area="premises_liability")))
    assert "'fact': 'practice_area', 'conflict_check': 'conflict_found_later'" in text, text
    assert "facts_before: expected '', got 'practice_area'" in text, text


def test_a_conflict_written_last_first_is_the_firms_conflict(legal):
    # C4-M1: the doctor on the conflict list is "Dr. Evelyn Sato".
    passes(play(legal, "C4-M1", set_(2, opposing_party="Sato, Evelyn")))


# --- free text read for what a rule forbids ----------------------------------------------------------------

@pytest.mark.parametrize("dictated", ["Her new cell is 206-555-0199.", "New email marisol dot vega at example dot com.",
                                      "Send it to 4417 Alder Street."])
def test_a_dictated_contact_detail_in_a_message_fails(legal, dictated):
    text = fails_database(play(legal, "R-H2", set_(4, message=f"Wants her contact details updated. {dictated}")))
    assert "messages.message holds" in text and "message-without-contacts-or-figures" in text, text


def test_a_dictated_number_in_a_note_fails(legal):
    text = fails_database(play(legal, "C4-H4", set_(8, note="Daughter Lucia may call; her cell is 832 555 0199.")))
    assert "intake_notes.note holds a phone number" in text, text


@pytest.mark.parametrize("message", ["Please call her back at home. Thanks.", "About the deposition on 2026-08-19.",
                                     "Wants her email address on file updated; please confirm it with her."])
def test_a_message_without_contact_details_passes(legal, message):
    passes(play(legal, "R-H2", set_(4, message=message)))


def test_a_message_for_staff_written_last_first_passes(legal):
    # C5-H1: the message is for Nina Patel.
    passes(play(legal, "C5-H1", set_(6, recipient_name="Patel, Nina")))


def test_an_amount_in_a_message_fails(legal):
    # C5-M2: the message for her paralegal, with a net settlement the firm never gave.
    fails_database(play(legal, "C5-M2", set_(4, message="Wants to go over the statement; expects to net $40,000.")),
                   "messages.message holds an amount of money", "message-without-contacts-or-figures")


# --- the screening record: every check run, once per check and values -------------------------------------

def test_a_state_assumed_is_on_the_screening_record(legal):
    # C2-E1: conflict, practice area, then she stops; a state nobody gave, checked anyway.
    fails_database(play(legal, "C2-E1", insert(4, "check_jurisdiction", state="WA", practice_area="medical_malpractice")),
                   "screening_checks: extra row")


def test_a_check_after_the_area_came_back_not_accepted_is_on_the_screening_record(legal):
    # C2-M2: real_estate is not accepted; the state is checked anyway (New York, as he said).
    fails_database(play(legal, "C2-M2", insert(4, "check_jurisdiction", state="NY", practice_area="real_estate"),
                        caller_says=["New York."]), "screening_checks: extra row")


def test_a_deadline_for_an_unlicensed_state_is_refused_and_on_the_record(legal):
    # C2-M3: Nevada is not licensed; the deadline run anyway is refused, and the try is kept.
    fails_database(play(legal, "C2-M3", insert(5, "calculate_filing_deadline", state="NV",
                                                practice_area="personal_injury", incident_date="2026-05-30")),
                   "screening_checks: extra row", "not_licensed_in_state")


def test_the_same_check_again_is_harmless(legal):
    # C1-H1: every screening check made twice, the state spelled out the second time.
    passes(play(legal, "C1-H1", insert(4, "check_practice_area", practice_area="employment"),
                insert(5, "check_jurisdiction", state="Texas", practice_area="employment"),
                insert(6, "calculate_filing_deadline", state="TX", practice_area="employment",
                       incident_date="2026-05-29T00:00")))


def test_a_deadline_on_a_misheard_date_then_the_right_one_passes(legal):
    # C1-H1: the line made the 29th the 28th, then heard it right; both deadlines were run. Had she said
    # the 28th herself and taken it back before the first run, that run used a date she withdrew.
    first = insert(5, "calculate_filing_deadline", state="TX", practice_area="employment", incident_date="2026-05-28")
    passes(play(legal, "C1-H1", first, caller_says=["Derek Okonkwo, 713-555-0199. In Texas. It was May twenty-ninth, twenty twenty-six. Yes, May "
                                                    "twenty-ninth."], misheard={"twenty-ninth": "twenty-eighth"}))
    fails_database(play(legal, "C1-H1", first, caller_says=["Derek Okonkwo, 713-555-0199. In Texas. It was May twenty-eighth, twenty twenty-six. "
                                                            "Sorry, May twenty-ninth."]), "screening_checks: extra row")


def test_a_deadline_on_a_date_nobody_said_fails(legal):
    fails_database(play(legal, "C1-H1", insert(5, "calculate_filing_deadline", state="TX", practice_area="employment",
                                               incident_date="2026-05-28")), "screening_checks: extra row")


# --- scheduling --------------------------------------------------------------------------------------------

def test_a_hold_token_books_only_its_own_slot(legal):
    # C3-H2: holds E-201, then E-204, and confirms E-204's token. The holds the other way round leave
    # that token on no hold of E-204's number in the call: refused, nothing booked.
    o = play(legal, "C3-H2", set_(5, slot_id="E-204"), set_(6, slot_id="E-201"))
    assert ("confirm_evaluation", "invalid_token") in o.statuses
    fails_database(o)


def test_an_evaluation_cancelled_before_the_new_time_is_found_fails(legal):
    # C3-M3: find the new times, cancel Friday's evaluation, then hold and confirm Monday. Cancelling
    # before looking for a new time books the same Monday, rows stamped to the same minute; the new
    # booking keeps which came first (evaluations.replaces_cancelled; issue 37).
    o = play(legal, "C3-M3", {"drop": 4}, insert(3, "cancel_evaluation", cancel_token="CXL-E8BBD9"))
    assert ("cancel_evaluation", "ok") in o.statuses and ("confirm_evaluation", "ok") in o.statuses
    text = fails_database(o)
    assert "replaces_cancelled: expected 'after_new_time_found', got 'before_new_time_found'" in text, text
