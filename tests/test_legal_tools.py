"""Business rules of the legal pack (Halverson & Reed), through the real tool server."""

from __future__ import annotations

import json

import pytest

from conftest import REPO, PackCall, pack_server

LEGAL = REPO / "industries" / "legal"
CLARA = {"full_name": "Clara Whitman", "phone": "206-555-0220"}


@pytest.fixture(scope="module")
def legal_server():
    with pack_server(LEGAL) as http:
        yield http


class Call(PackCall):
    pack = "legal"


@pytest.fixture
def call(legal_server):
    return Call(legal_server)


def screened(call: Call, party="Harborline Industries", caller=CLARA) -> Call:
    call.ok("lookup_caller", **caller)
    call.ok("check_conflict", opposing_party=party)
    return call


# --- the published sample's results -------------------------------------------------------------

def test_sample_results_have_the_published_fields(call):
    # The published lookup result also said caller_id, returning_caller and prior_matter_count: they
    # told anyone with a client's name and phone that the person is a client, so they are gone.
    assert call.ok("lookup_caller", full_name="Clara Whitman", phone="2065550220") == {
        "name": "Clara Whitman", "phone": "2065550220", "identified": True}
    assert call.ok("check_conflict", opposing_party="Harborline Industries") == {
        "status": "clear", "opposing_party": "Harborline Industries", "may_proceed": True,
        "disclosure": "Do not tell the caller who the firm represents or why a conflict exists."}
    assert call.ok("check_practice_area", practice_area="employment") == {
        "practice_area": "employment", "accepted": True, "fee_type": "contingency",
        "contingency_pct_prefiling": 33.33, "contingency_pct_litigation": 40, "consult_fee": 0}
    assert call.ok("check_jurisdiction", state="WA", practice_area="employment") == {
        "state": "WA", "practice_area": "employment", "licensed": True,
        "licensed_states": ["CA", "FL", "NY", "TX", "GA", "IL", "WA", "PA", "NC"]}
    # The sample's actual call: fired 2026-05-05 in Washington, three-year period.
    assert call.ok("calculate_filing_deadline", state="WA", practice_area="employment", incident_date="2026-05-05") == {
        "deadline_date": "2029-05-04", "days_remaining": 1008, "limitation_years": 3, "status": "ok",
        "note": "Report this result as returned. Interpretation is an attorney's judgment."}
    call.ok("record_intake", practice_area="employment", state="WA", incident_date="2026-05-05", summary="x")
    assert call.ok("add_intake_note", note="has the HR email") == {"note_id": 1, "status": "noted"}
    assert call.ok("send_intake_packet", channel="email") == {
        "document_id": 1, "status": "sent", "kind": "intake_packet", "target": "email"}


def lookups(call: Call) -> list[tuple]:
    return [(v["account"], v["claimed_name"], v["outcome"]) for v in call.state()["verifications"]
            if v["method"] == "name_and_phone"]


def test_a_returning_caller_is_recognised_by_name_and_phone_on_the_record_only(call):
    data = call.ok("lookup_caller", full_name="helen  achterberg", phone="(404) 555-0162")
    # The result says nothing of the record (a client's status is told to no one before verification) ...
    assert data == {"name": "helen achterberg", "phone": "4045550162", "identified": True}
    # ... the identification is on the record, once however often it is repeated.
    call.ok("lookup_caller", full_name="Helen Achterberg", phone="404-555-0162")
    assert lookups(call) == [("c_1007", "helen achterberg", "identified")]


def test_a_known_name_with_another_phone_is_a_new_caller(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0199")
    assert lookups(call) == [(None, "Marisol Vega", "new_caller")]


def test_a_misheard_phone_then_corrected_leaves_one_identification(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0149")
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    call.ok("lookup_caller", full_name="marisol vega", phone="312-555-0149")  # and back: still her record
    assert lookups(call) == [("c_1001", "Marisol Vega", "identified")]


def test_a_misheard_name_then_corrected_leaves_the_corrected_name(call):
    call.ok("lookup_caller", full_name="Yvette Marchant", phone="904-555-0118")
    call.ok("lookup_caller", full_name="Yvette Marchand", phone="904-555-0118")
    assert lookups(call) == [(None, "Yvette Marchand", "new_caller")]


def test_an_adjuster_looking_up_the_client_after_herself_is_on_the_record(call):
    call.ok("lookup_caller", full_name="Colleen Radford", phone="713-555-0261")
    call.ok("lookup_caller", full_name="Derek Okonkwo", phone="713-555-0261")
    assert lookups(call) == [(None, "Derek Okonkwo", "new_caller")]


def test_an_adjuster_identified_as_the_client_is_on_the_record(call):
    # R-M1's wrong move: the adjuster is identified under the client's name (with her own number).
    call.ok("lookup_caller", full_name="Derek Okonkwo", phone="713-555-0261")
    assert lookups(call) == [(None, "Derek Okonkwo", "new_caller")]


def test_the_lookup_result_is_the_same_for_a_client_and_a_stranger(call, legal_server):
    other = Call(legal_server)
    known = call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    unknown = other.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0199")
    assert set(known) == set(unknown) and known["identified"] == unknown["identified"]


def test_a_phone_number_must_have_ten_digits(call):
    assert call.tool("lookup_caller", full_name="A B", phone="555-0142")["error_code"] == "invalid_phone"


# --- deadlines --------------------------------------------------------------------------------

@pytest.mark.parametrize("incident, deadline, days, status", [
    ("2024-07-31", "2026-07-30", -1, "expired"),   # two years ran out yesterday
    ("2024-08-01", "2026-07-31", 0, "urgent"),     # last day to file is today
    ("2024-10-29", "2026-10-28", 89, "urgent"),
    ("2024-10-30", "2026-10-29", 90, "urgent"),    # 90 days or fewer is urgent
    ("2024-10-31", "2026-10-30", 91, "ok"),
])
def test_deadline_status_at_the_edges(call, incident, deadline, days, status):
    screened(call)
    data = call.ok("calculate_filing_deadline", state="TX", practice_area="personal_injury", incident_date=incident)
    assert (data["deadline_date"], data["days_remaining"], data["limitation_years"], data["status"]) == (
        deadline, days, 2, status)


def test_deadline_uses_the_period_of_the_state_and_area(call):
    screened(call)
    ca = call.ok("calculate_filing_deadline", state="California", practice_area="medical_malpractice",
                 incident_date="2026-01-10")
    assert (ca["limitation_years"], ca["deadline_date"]) == (1, "2027-01-09")


def test_an_incident_date_time_counts_by_its_day(call):
    # A date-time where the schema asks a date: the tool server and the verifier's `date` kind both
    # read it as its day.
    screened(call)
    by_day = call.ok("calculate_filing_deadline", state="CA", practice_area="medical_malpractice",
                     incident_date="2026-01-10")
    assert call.ok("calculate_filing_deadline", state="CA", practice_area="medical_malpractice",
                   incident_date="2026-01-10T18:45:00") == by_day


def test_deadline_from_a_leap_day(call):
    screened(call)
    data = call.ok("calculate_filing_deadline", state="NY", practice_area="wage_and_hour", incident_date="2024-02-29")
    assert data["deadline_date"] == "2030-02-27"  # six years on is 28 Feb 2030; the day before


def test_deadline_refuses_an_unlicensed_state_an_unaccepted_area_and_a_future_date(call):
    screened(call)
    assert call.tool("calculate_filing_deadline", state="OR", practice_area="employment",
                     incident_date="2026-01-01")["error_code"] == "not_licensed_in_state"
    assert call.tool("calculate_filing_deadline", state="WA", practice_area="family_law",
                     incident_date="2026-01-01")["error_code"] == "practice_area_not_accepted"
    assert call.tool("calculate_filing_deadline", state="WA", practice_area="employment",
                     incident_date="2026-08-01")["error_code"] == "invalid_incident_date"


# --- conflicts, areas, states -------------------------------------------------------------------

@pytest.mark.parametrize("party", ["Orion Home Goods", "orion home goods, inc.", "ORION HOME-GOODS INC",
                                   "The Marlow Freight Lines", "Evelyn Sato", "sunmark property management"])
def test_conflict_matching_tolerates_case_punctuation_and_company_suffixes(call, party):
    call.ok("lookup_caller", **CLARA)
    data = call.ok("check_conflict", opposing_party=party)
    assert (data["status"], data["may_proceed"]) == ("conflict", False)


@pytest.mark.parametrize("party", ["Evelyn Sato, MD", "Evelyn Sato M.D.", "Dr. Evelyn Sato, PhD",
                                   "Sunmark Property Mgmt.", "Sunmark Property Mgmt, LLC",
                                   "Kessler Mfg. Co.", "Kessler Manufacturing Company", "Peterson Dental Grp."])
def test_conflict_matching_reads_post_nominals_and_abbreviations_as_the_verifier_does(call, party):
    # Seeded: "Dr. Evelyn Sato", "Sunmark Property Management LLC", "Kessler Manufacturing Co.",
    # "Peterson Dental Group". The tool and the verifier's `party` kind read a name one way.
    call.ok("lookup_caller", **CLARA)
    data = call.ok("check_conflict", opposing_party=party)
    assert (data["status"], data["may_proceed"]) == ("conflict", False)


@pytest.mark.parametrize("party", ["Orion Home Supply", "Harborline Industries", "Marlow Freight",
                                   "Evelyn Sato Jr.", "Sunmark Property", "Kessler Management", "Peterson Dental"])
def test_a_different_party_is_clear(call, party):
    call.ok("lookup_caller", **CLARA)
    assert call.ok("check_conflict", opposing_party=party)["status"] == "clear"


def test_an_unaccepted_area_has_no_fee_terms(call):
    screened(call)
    data = call.ok("check_practice_area", practice_area="workers_compensation")
    assert data["accepted"] is False and data["fee_type"] is None


def test_jurisdiction_reads_state_names_and_says_when_unlicensed(call):
    screened(call)
    assert call.ok("check_jurisdiction", state="Washington", practice_area="employment")["state"] == "WA"
    assert call.ok("check_jurisdiction", state="OR", practice_area="employment")["licensed"] is False
    assert call.tool("check_jurisdiction", state="Atlantis", practice_area="employment")["error_code"] == "unknown_state"


# --- intake ------------------------------------------------------------------------------------

def test_intake_before_a_conflict_check_is_refused(call):
    call.ok("lookup_caller", **CLARA)
    result = call.tool("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05", summary="x")
    assert result["error_code"] == "conflict_check_required"
    assert len(call.state()["intakes"]) == 4  # the seeded ones only


def test_intake_after_a_conflict_is_refused_but_contact_details_are_recorded(call):
    screened(call, party="Cascade Valley Hospital")
    assert call.tool("record_intake", practice_area="medical_malpractice", state="WA", incident_date="2026-04-05",
                     summary="x")["error_code"] == "conflict_not_clear"
    assert call.ok("record_contact_only", reason="conflict")["status"] == "contact_only"
    row = call.state()["intakes"][-1]
    assert (row["status"], row["reason"], row["opposing_party"], row["practice_area"]) == (
        "contact_only", "conflict", "cascade valley hospital", None)


@pytest.mark.parametrize("area, state, date, code", [
    ("family_law", "WA", "2026-04-05", "practice_area_not_accepted"),
    ("employment", "OR", "2026-04-05", "not_licensed_in_state"),
    ("personal_injury", "TX", "2024-05-01", "deadline_expired"),
])
def test_intake_refuses_matters_only_an_attorney_may_take_or_decline(call, area, state, date, code):
    screened(call)
    assert call.tool("record_intake", practice_area=area, state=state, incident_date=date, summary="x")["error_code"] == code


def test_one_intake_per_call_and_notes_need_it(call):
    screened(call)
    assert call.tool("add_intake_note", note="x")["error_code"] == "no_intake_recorded"
    assert call.tool("send_intake_packet", channel="text")["error_code"] == "no_intake_recorded"
    call.ok("record_intake", practice_area="employment", state="Washington", incident_date="2026-04-05", summary="x")
    assert call.tool("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05",
                     summary="x")["error_code"] == "intake_already_recorded"
    assert call.state()["intakes"][-1]["state"] == "WA"


def test_writes_need_an_identified_caller(call):
    assert call.tool("record_contact_only", reason="conflict")["error_code"] == "caller_not_identified"
    assert call.tool("take_message", recipient_name="Sofia Alvarez", callback_phone="2065550220", message="hi",
                     urgent=False)["error_code"] == "caller_not_identified"


# --- evaluations: hold, confirm, tokens -----------------------------------------------------------

def booked_intake(call: Call) -> Call:
    screened(call)
    call.ok("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05", summary="x")
    return call


def test_hold_then_confirm_books_an_evaluation(call):
    booked_intake(call)
    slots = call.ok("find_evaluation_slots", practice_area="employment")["slots"]
    assert [s["slot_id"] for s in slots] == ["E-201", "E-204", "E-211"]  # E-207 is booked
    hold = call.ok("hold_evaluation_slot", slot_id="e-201")
    assert hold["expires_at"] == "2026-07-31T09:10"
    booking = call.ok("confirm_evaluation", hold_token=hold["hold_token"])
    assert booking["status"] == "scheduled" and booking["attorney"] == "Sofia Alvarez"
    state = call.state()
    assert state["evaluations"][-1]["caller_id"] == "c_new" and state["holds"][-1]["status"] == "confirmed"
    assert "E-201" not in [s["slot_id"] for s in call.ok("find_evaluation_slots", practice_area="employment")["slots"]]


def test_a_hold_token_is_single_use(call):
    booked_intake(call)
    token = call.ok("hold_evaluation_slot", slot_id="E-204")["hold_token"]
    call.ok("confirm_evaluation", hold_token=token)
    assert call.tool("confirm_evaluation", hold_token=token)["error_code"] == "token_already_used"
    assert len([e for e in call.state()["evaluations"] if e["caller_id"] == "c_new"]) == 1


def test_a_token_of_the_wrong_kind_is_refused(legal_server):
    priya = Call(legal_server)
    priya.ok("lookup_caller", full_name="Priya Raman", phone="206-555-0173")
    cancel_token = priya.ok("find_my_evaluations")["evaluations"][0]["cancel_token"]
    assert priya.tool("confirm_evaluation", hold_token=cancel_token)["error_code"] == "wrong_token_kind"
    hold_token = priya.ok("hold_evaluation_slot", slot_id="E-211")["hold_token"]
    assert priya.tool("cancel_evaluation", cancel_token=hold_token)["error_code"] == "wrong_token_kind"


def test_a_token_of_another_caller_is_refused(legal_server):
    # Tokens are derived from the hold and the caller; a token minted for Priya is not Owen's.
    priya = Call(legal_server)
    priya.ok("lookup_caller", full_name="Priya Raman", phone="206-555-0173")
    token = priya.ok("find_my_evaluations")["evaluations"][0]["cancel_token"]
    priya.ok("lookup_caller", full_name="Owen Fairbanks", phone="512-555-0190")  # same call, other caller
    assert priya.tool("cancel_evaluation", cancel_token=token)["error_code"] == "token_not_yours"


def test_an_unknown_token_is_refused(call):
    call.ok("lookup_caller", full_name="Priya Raman", phone="2065550173")
    assert call.tool("cancel_evaluation", cancel_token="CXL-000000")["error_code"] == "invalid_token"


def test_a_slot_held_by_someone_else_is_unavailable_until_the_hold_expires(call):
    call.ok("lookup_caller", full_name="Tom Brennan", phone="919-555-0124")  # injury intake on file
    assert call.tool("hold_evaluation_slot", slot_id="E-205")["error_code"] == "slot_unavailable"
    call.ok("hold_evaluation_slot", slot_id="E-206")  # its old hold expired yesterday
    holds = {h["id"]: h["status"] for h in call.state()["holds"]}
    assert holds[2] == "expired" and holds[1] == "active"


def test_holding_another_slot_releases_the_first_hold(call):
    booked_intake(call)
    call.ok("hold_evaluation_slot", slot_id="E-201")
    second = call.ok("hold_evaluation_slot", slot_id="E-204")
    statuses = [h["status"] for h in call.state()["holds"][2:]]
    assert statuses == ["released", "active"]
    call.ok("confirm_evaluation", hold_token=second["hold_token"])


def test_booking_needs_a_recorded_intake_in_the_same_area(call):
    call.ok("lookup_caller", **CLARA)
    assert call.tool("hold_evaluation_slot", slot_id="E-201")["error_code"] == "intake_required"
    employment = booked_intake(Call(call.http))
    assert employment.tool("hold_evaluation_slot", slot_id="E-202")["error_code"] == "slot_wrong_practice_area"


def test_cancellation_within_24_hours_is_refused_and_later_ones_work(legal_server):
    luis = Call(legal_server)
    luis.ok("lookup_caller", full_name="Luis Carranza", phone="213-555-0107")
    token = luis.ok("find_my_evaluations")["evaluations"][0]["cancel_token"]
    assert luis.tool("cancel_evaluation", cancel_token=token)["error_code"] == "too_late_to_cancel"
    assert luis.state()["evaluations"][2]["status"] == "scheduled"
    tom = Call(legal_server)
    tom.ok("lookup_caller", full_name="Tom Brennan", phone="919-555-0124")
    token = tom.ok("find_my_evaluations")["evaluations"][0]["cancel_token"]
    assert tom.ok("cancel_evaluation", cancel_token=token)["status"] == "cancelled"
    assert tom.tool("cancel_evaluation", cancel_token=token)["error_code"] == "token_already_used"


# --- client services ---------------------------------------------------------------------------

def test_a_client_is_verified_by_phone_on_file_name_and_matter_number(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    assert call.tool("get_matter_status", matter_number="HR-24-0117")["error_code"] == "not_verified"
    call.ok("verify_client", full_name="marisol vega", matter_number="hr 24 0117")
    status = call.ok("get_matter_status", matter_number="HR-24-0117")
    assert (status["stage"].split(":")[0], status["attorney"], status["next_event_date"]) == (
        "Discovery", "Kevin Osei", "2026-08-19")


def test_an_impersonator_with_the_right_matter_number_is_not_verified(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0100")  # not the phone on file
    assert call.tool("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")["error_code"] == \
        "client_not_verified"
    assert call.tool("send_records_authorization", channel="text")["error_code"] == "not_verified"
    assert call.state()["documents"] == []


def test_a_client_sees_only_their_own_matters(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    call.ok("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")
    assert call.tool("get_matter_status", matter_number="HR-25-0342")["error_code"] == "matter_not_found"


def test_records_authorization_by_email_needs_an_email_on_file(call):
    call.ok("lookup_caller", full_name="Derek Okonkwo", phone="713-555-0199")
    call.ok("verify_client", full_name="Derek Okonkwo", matter_number="HR-25-0342")
    assert call.tool("send_records_authorization", channel="email")["error_code"] == "no_email_on_file"
    call.ok("send_records_authorization", channel="text")
    assert call.state()["documents"] == [{"id": 1, "caller_id": "c_1002", "kind": "records_authorization",
                                          "target": "text", "created_at": "2026-07-31T09:00"}]


def test_messages_go_to_a_named_member_of_staff(call):
    call.ok("lookup_caller", **CLARA)
    data = call.ok("take_message", recipient_name="Ms. Alvarez", callback_phone="206 555 0220", message="call me",
                   urgent=True)
    assert data["recipient"] == "Sofia Alvarez"
    assert call.tool("take_message", recipient_name="Mr. Nobody", callback_phone="2065550220", message="x",
                     urgent=False)["error_code"] == "unknown_recipient"
    row = call.state()["messages"][0]
    assert (row["recipient_id"], row["callback_phone"], row["urgent"]) == ("s_alvarez", "2065550220", 1)


def test_escalation_is_recorded(call):
    call.ok("lookup_caller", **CLARA)
    call.ok("escalate_to_human", reason="complaint", summary="unhappy with a past call")
    assert [(e["caller_id"], e["reason"]) for e in call.state()["escalations"]] == [("c_new", "complaint")]


def test_a_conflict_found_in_a_call_stays_for_the_rest_of_it(call):
    call.ok("lookup_caller", **CLARA)
    assert call.ok("check_conflict", opposing_party="Marlow Freight Lines")["status"] == "conflict"
    assert call.ok("check_conflict", opposing_party="Harborline Industries")["status"] == "clear"
    assert call.tool("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05",
                     summary="x")["error_code"] == "conflict_not_clear"


def test_verification_stops_after_two_failed_tries(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="3125550148")
    for wrong in ("HR-24-0171", "HR-24-0711"):
        assert call.tool("verify_client", full_name="Marisol Vega", matter_number=wrong)["error_code"] == \
            "client_not_verified"
    third = call.tool("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")
    assert third["error_code"] == "verification_limit_reached"  # even with the right number now
    assert call.tool("get_matter_status", matter_number="HR-24-0117")["error_code"] == "not_verified"


def test_one_failed_try_still_leaves_the_second(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="3125550148")
    assert not call.tool("verify_client", full_name="Marisol Vega", matter_number="HR-24-0171")["ok"]
    assert call.ok("verify_client", full_name="Ms. Marisol Vega", matter_number="hr 24 0117")["verified"]


def test_staff_are_found_by_the_names_callers_use(call):
    call.ok("lookup_caller", **CLARA)
    for said in ("Nina Patel", "Ms. Patel", "nina", "Attorney Nina Patel"):
        assert call.ok("take_message", recipient_name=said, callback_phone="2065550220", message="x",
                       urgent=False)["recipient"] == "Nina Patel"
    assert call.tool("take_message", recipient_name="Ms. Kim Patel", callback_phone="2065550220", message="x",
                     urgent=False)["error_code"] == "unknown_recipient"


# Every caller-safe message is one the prompts let the agent read out: none says the firm does not
# handle a matter, is not licensed, cannot take it, or that a booking belongs to someone else.
FORBIDDEN_WORDS = ("not a practice area", "handle", "not licensed", "cannot take", "not able to take",
                   "someone else", "belongs to", "conflict", "represent")


def _refusals(call):
    screened(call)
    yield call.tool("calculate_filing_deadline", state="OR", practice_area="employment", incident_date="2026-01-01")
    yield call.tool("calculate_filing_deadline", state="WA", practice_area="family_law", incident_date="2026-01-01")
    yield call.tool("find_evaluation_slots", practice_area="family_law")
    call.ok("check_conflict", opposing_party="Marlow Freight Lines")
    yield call.tool("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05", summary="x")


def test_caller_safe_messages_say_nothing_the_prompts_forbid(call):
    messages = [r["caller_safe_message"] for r in _refusals(call)]
    assert all(messages) and len(messages) == 4
    for message in messages:
        assert not any(word in message.casefold() for word in FORBIDDEN_WORDS), message


def test_another_callers_token_reads_like_an_unknown_one(call):
    call.ok("lookup_caller", full_name="Priya Raman", phone="206-555-0173")
    token = call.ok("find_my_evaluations")["evaluations"][0]["cancel_token"]
    call.ok("lookup_caller", full_name="Owen Fairbanks", phone="512-555-0190")  # same call, other caller
    theirs = call.tool("cancel_evaluation", cancel_token=token)
    unknown = call.tool("cancel_evaluation", cancel_token="CXL-000000")
    assert theirs["error_code"] == "token_not_yours"  # the agent may know; the caller hears nothing more
    assert theirs["caller_safe_message"] == unknown["caller_safe_message"]


# --- conflict before facts: the screening log ---------------------------------------------------

def log(call: Call) -> list[tuple[str, str]]:
    return [(r["fact"], r["conflict_check"]) for r in call.state()["screening_log"]]


def test_a_fact_taken_before_the_conflict_check_is_refused_and_stays_on_the_record(call):
    call.ok("lookup_caller", **CLARA)
    assert call.error("check_practice_area", practice_area="employment") == "conflict_check_required"
    call.ok("check_conflict", opposing_party="Harborline Industries")
    call.ok("check_practice_area", practice_area="employment")
    call.ok("check_practice_area", practice_area="employment")  # asked twice: nothing more on the record
    assert log(call) == [("practice_area", "pending")]


def test_facts_and_an_intake_tried_after_a_conflict_are_on_the_record(call):
    screened(call, party="Orion Home Goods")
    assert call.error("check_jurisdiction", state="FL", practice_area="product_liability") == "conflict_not_clear"
    assert call.error("calculate_filing_deadline", state="FL", practice_area="product_liability",
                      incident_date="2026-06-02") == "conflict_not_clear"
    assert call.error("record_intake", practice_area="product_liability", state="FL", incident_date="2026-06-02",
                      summary="x") == "conflict_not_clear"
    assert call.state()["intakes"][-1]["caller_id"] != "c_new"  # nothing recorded
    assert log(call) == [("state", "conflict"), ("incident_date", "conflict"), ("intake", "conflict")]


def test_facts_after_a_clear_check_write_nothing_so_extra_calls_stay_allowed(call):
    screened(call)
    call.ok("check_practice_area", practice_area="employment")
    call.ok("check_practice_area", practice_area="wage_and_hour")
    call.ok("check_jurisdiction", state="WA", practice_area="employment")
    call.ok("calculate_filing_deadline", state="WA", practice_area="employment", incident_date="2026-04-05")
    call.ok("record_intake", practice_area="employment", state="WA", incident_date="2026-04-05", summary="x")
    assert log(call) == []


def test_the_intake_reads_the_deadline_of_the_date_it_records(call):
    # C4-H2: screened with the funeral date, corrected to the crash date in her account.
    call.ok("lookup_caller", full_name="Ruth Adeyemi", phone="425-555-0178")
    call.ok("check_conflict", opposing_party="Summit Ridge Hauling")
    screening = call.ok("calculate_filing_deadline", state="WA", practice_area="wrongful_death",
                        incident_date="2025-11-14")
    data = call.ok("record_intake", practice_area="wrongful_death", state="WA", incident_date="2025-11-07", summary="x")
    assert screening["deadline_date"] == "2028-11-13"
    assert data["incident_date"] == "2025-11-07" and data["filing_deadline"]["deadline_date"] == "2028-11-06"


@pytest.mark.parametrize("party", ["Evelyn Sato, MD", "Sunmark Property Mgmt."])
def test_conflict_names_written_with_post_nominals_or_abbreviations_are_conflicts(call, party):
    call.ok("lookup_caller", **CLARA)
    assert call.ok("check_conflict", opposing_party=party)["status"] == "conflict"


# --- identity: every verification is a record --------------------------------------------------

def verifications(call: Call) -> list[tuple]:
    return [(v["account"], v["claimed_name"], v["method"], v["outcome"]) for v in call.state()["verifications"]]


def test_verifying_a_caller_as_someone_elses_client_is_on_the_record(call):
    # An adjuster who has a client's name, number and matter number, identified and verified as him.
    call.ok("lookup_caller", full_name="Derek Okonkwo", phone="713-555-0199")
    call.ok("verify_client", full_name="Derek Okonkwo", matter_number="HR-25-0342")
    assert verifications(call) == [("c_1002", "Derek Okonkwo", "name_and_phone", "identified"),
                                   ("c_1002", "Derek Okonkwo", "matter_number", "verified")]


def test_a_failed_try_is_a_row_on_the_clients_record_with_the_details_tried(call):
    # From a number not on file: refused, and on the record (the verifier forgives it only when the
    # caller was heard saying every value tried); the count lives on the client's record too.
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0777")
    assert call.error("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117") == "client_not_verified"
    assert [v for v in verifications(call) if v[2] == "matter_number"] == [
        ("c_1001", "Marisol Vega", "matter_number", "failed")]
    tried = json.loads(call.state()["verifications"][-1]["tried"])
    assert tried == [["person", "Marisol Vega"], ["identifier", "HR-24-0117"]]
    assert call.state()["callers"][0]["failed_verifications"] == 1


def test_two_failed_tries_end_verification_for_the_call_and_count_on_the_record(call, legal_server):
    call.ok("lookup_caller", full_name="Helen Achterberg", phone="404-555-0162")
    assert call.error("verify_client", full_name="Helen Achterberg", matter_number="HR-26-0085") == \
        "client_not_verified"
    assert call.error("verify_client", full_name="Helen Achterberg", matter_number="HR-22-0236") == \
        "client_not_verified"
    assert call.error("verify_client", full_name="Helen Achterberg", matter_number="HR-26-0058") == \
        "verification_limit_reached"
    assert [v[3] for v in verifications(call)] == ["identified", "failed", "failed", "refused"]
    assert call.error("get_matter_status", matter_number="HR-26-0058") == "not_verified"


def test_a_successful_verification_is_a_row_and_opens_the_matter(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    assert call.ok("verify_client", full_name="marisol vega", matter_number="hr 24 0117")["verified"] is True
    assert verifications(call) == [("c_1001", "Marisol Vega", "name_and_phone", "identified"),
                                   ("c_1001", "marisol vega", "matter_number", "verified")]
    assert call.ok("get_matter_status", matter_number="HR-24-0117")["matter_number"] == "HR-24-0117"
    call.ok("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")  # again: an extra call
    assert len(verifications(call)) == 2


def test_a_new_lookup_forgets_the_verified_client(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    call.ok("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")
    call.ok("lookup_caller", full_name="Colleen Radford", phone="713-555-0261")
    assert call.error("get_matter_status", matter_number="HR-24-0117") == "not_verified"


# --- emergencies: the 911 advice is on the escalation ----------------------------------------------

def test_an_emergency_escalation_records_the_911_advice(call):
    call.ok("lookup_caller", full_name="Paula Greer", phone="919-555-0133")
    assert call.ok("escalate_to_human", reason="emergency", summary="x", advised_911=True)["advised_911"] is True
    assert [(e["reason"], e["advised_911"]) for e in call.state()["escalations"]] == [("emergency", 1)]


def test_an_emergency_escalated_without_the_911_advice_is_refused_and_on_the_record(call):
    call.ok("lookup_caller", full_name="Paula Greer", phone="919-555-0133")
    result = call.tool("escalate_to_human", reason="emergency", summary="x")
    assert result["error_code"] == "advise_911_first" and "911" in result["caller_safe_message"]
    assert [(e["reason"], e["advised_911"]) for e in call.state()["escalations"]] == [("emergency", 0)]


def test_a_third_try_from_a_new_number_is_refused_and_recorded_against_the_record(legal_server):
    # Failed tries count on the client's record (front_desk; it locks after three, across calls);
    # in one call the limit is two, and the refusal is a row too.
    call = Call(legal_server)
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0777")
    for _ in range(2):
        call.error("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117")
    assert call.error("verify_client", full_name="Marisol Vega", matter_number="HR-24-0117") == \
        "verification_limit_reached"
    assert [v for v in verifications(call) if v[2] == "matter_number"] == [
        ("c_1001", "Marisol Vega", "matter_number", "failed"), ("c_1001", "Marisol Vega", "matter_number", "failed"),
        ("c_1001", "Marisol Vega", "matter_number", "refused")]


# --- the records of a conflict check ------------------------------------------------------------

def checks(call: Call) -> list[tuple]:
    return [(r["party"], r["outcome"], r["facts_before"], json.loads(r["tried"]))
            for r in call.state()["conflict_checks"]]


def test_every_conflict_check_is_a_row_once_per_party_with_the_facts_taken_before_it(call):
    call.ok("lookup_caller", **CLARA)
    call.ok("check_conflict", opposing_party="Calvin Pryor")
    call.ok("check_practice_area", practice_area="personal_injury")
    call.ok("check_conflict", opposing_party="Swiftway Parcel Services")
    call.ok("check_conflict", opposing_party="Pryor, Calvin")  # the same party again: nothing new
    assert checks(call) == [("Calvin Pryor", "clear", "", [["party", "calvin pryor"]]),
                            ("Swiftway Parcel Services", "clear", "practice_area", [["party", "swiftway parcel services"]])]
    call.ok("check_jurisdiction", state="PA", practice_area="personal_injury")
    call.ok("record_intake", practice_area="personal_injury", state="PA", incident_date="2026-06-09", summary="x")
    assert call.state()["intakes"][-1]["opposing_party"] == "calvin pryor; swiftway parcel services"


def test_a_conflict_found_after_facts_were_taken_puts_them_on_the_record(call):
    call.ok("lookup_caller", **CLARA)
    call.ok("check_conflict", opposing_party="Harbor Point Apartments")
    call.ok("check_practice_area", practice_area="premises_liability")
    call.ok("check_jurisdiction", state="WA", practice_area="premises_liability")
    assert call.ok("check_conflict", opposing_party="Sunmark Property Mgmt.")["status"] == "conflict"
    assert log(call) == [("practice_area", "conflict_found_later"), ("state", "conflict_found_later")]
    assert checks(call)[-1][1:3] == ("conflict", "practice_area, state")


def test_a_conflict_check_needs_an_identified_caller(call):
    assert call.error("check_conflict", opposing_party="Harborline Industries") == "caller_not_identified"


@pytest.mark.parametrize("party", ["Sato, Evelyn", "Évelyn Sato", "Dr. Evelyn Sato, M.D."])
def test_a_conflict_written_last_first_or_with_accents_is_found(call, party):
    call.ok("lookup_caller", **CLARA)
    assert call.ok("check_conflict", opposing_party=party)["status"] == "conflict"


# --- every look at a person's record ---------------------------------------------------------------

def looks(call: Call) -> list[tuple]:
    return [(r["record"], r["on_behalf_of"], r["outcome"]) for r in call.state()["record_access"]]


def test_a_lookup_keeps_every_record_its_details_touched(call):
    call.ok("lookup_caller", full_name="Derek Okonkwo", phone="713-555-0261")  # his name, another number
    call.ok("lookup_caller", full_name="Colleen Radford", phone="713-555-0261")  # nobody on file
    call.ok("lookup_caller", full_name="Colleen Radford", phone="(713) 555-0261")  # the same search: nothing new
    assert looks(call) == [("c_1002", None, "not_found"), (None, None, "not_found")]
    assert json.loads(call.state()["record_access"][1]["tried"]) == [["person", "Colleen Radford"],
                                                                     ["phone", "7135550261"]]


def test_a_caller_found_by_name_and_number_is_one_look_however_the_name_is_written(call):
    for name in ("Vega, Marisol", "Marisól Vega", "MARISOL VEGA"):
        call.ok("lookup_caller", full_name=name, phone="312-555-0148")
    assert looks(call) == [("c_1001", None, "found")]
    assert lookups(call) == [("c_1001", "Vega, Marisol", "identified")]


def test_a_verified_client_asking_for_anothers_matter_is_kept(call):
    call.ok("lookup_caller", full_name="Marisol Vega", phone="312-555-0148")
    call.ok("verify_client", full_name="Vega, Marisol", matter_number="HR-24-0117")
    assert call.error("get_matter_status", matter_number="HR-25-0342") == "matter_not_found"
    assert call.error("get_matter_status", matter_number="HR-99-0001") == "matter_not_found"
    call.ok("get_matter_status", matter_number="HR-24-0117")  # her own: covered by the verification
    assert looks(call)[1:] == [("c_1002", "c_1001", "refused"), (None, "c_1001", "not_found")]


def test_a_verification_try_on_another_clients_record_is_a_row_there(call):
    call.ok("lookup_caller", full_name="Beatrice Nkemelu", phone="917-555-0155")
    assert call.error("verify_client", full_name="Derek Okonkwo", matter_number="HR-25-0342") == "client_not_verified"
    assert verifications(call)[-1] == ("c_1002", "Derek Okonkwo", "matter_number", "failed")
    assert {c["id"]: c["failed_verifications"] for c in call.state()["callers"]}["c_1002"] == 1


@pytest.mark.parametrize("said, staff", [("Patel, Nina", "Nina Patel"), ("Kim, Rachel", "Rachel Kim"),
                                         ("Rachel Kim, Esq.", "Rachel Kim"), ("Sofía Álvarez, Esq.", "Sofia Alvarez")])
def test_staff_written_last_first_or_an_attorney_with_esq_are_found(call, said, staff):
    # pack.json's staff table lists these spellings, so the verifier reads them the same way.
    call.ok("lookup_caller", **CLARA)
    assert call.ok("take_message", recipient_name=said, callback_phone="2065550220", message="x",
                   urgent=False)["recipient"] == staff


def test_a_hold_token_names_its_slot(call):
    booked_intake(call)
    first = call.ok("hold_evaluation_slot", slot_id="E-201")["hold_token"]
    second = call.ok("hold_evaluation_slot", slot_id="E-204")["hold_token"]
    assert first != second
    assert call.error("confirm_evaluation", hold_token=first) == "hold_expired"  # released by the second hold
    assert call.ok("confirm_evaluation", hold_token=second)["status"] == "scheduled"
