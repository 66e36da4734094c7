"""Business rules of the healthcare pack (Straus Dermatology), through the real tool server."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import REPO, PackCall, pack_server
from pytest_callm.task.pack import load_pack
from pytest_callm.toolserver.server import ToolServer

HEALTHCARE = REPO / "industries" / "healthcare"
ROSA = {"full_name": "Rosa Delgado", "date_of_birth": "1979-03-14"}
MARCUS = {"full_name": "Marcus Bell", "date_of_birth": "1985-11-02"}
TOMASZ = {"full_name": "Tomasz Nowak", "date_of_birth": "1971-05-08"}
JASMINE = {"full_name": "Jasmine Ortiz", "date_of_birth": "1994-01-17"}
ELLEN = {"full_name": "Ellen Kowalski", "date_of_birth": "1962-09-30"}
NEW = {"full_name": "Maya Lindqvist", "date_of_birth": "1991-04-09", "phone": "917-555-0246"}


@pytest.fixture(scope="module")
def healthcare_server():
    with pack_server(HEALTHCARE) as http:
        yield http


class Call(PackCall):
    pack = "healthcare"


@pytest.fixture
def call(healthcare_server):
    return Call(healthcare_server)


def patient(state, patient_id):
    return next(p for p in state["patients"] if p["id"] == patient_id)


def appointment(state, appointment_id):
    return next(a for a in state["appointments"] if a["id"] == appointment_id)


# --- identity and lockout ----------------------------------------------------------------------

def test_verification_by_name_and_date_of_birth_tolerates_case_and_titles(call):
    data = call.ok("verify_patient", full_name="ms. rosa  DELGADO", date_of_birth="1979-03-14")
    assert data == {"patient_id": "P-2001", "full_name": "Rosa Delgado", "verified": True, "minor": False,
                    "speaking_with": "patient", "home_office": "Brooklyn Heights", "insurance_on_file": "Aetna"}


def test_two_patients_with_one_name_are_told_apart_by_date_of_birth(call):
    assert call.ok("verify_patient", full_name="Daniel Cho", date_of_birth="1956-10-03")["patient_id"] == "P-2008"
    assert call.ok("verify_patient", full_name="Daniel Cho", date_of_birth="1988-04-12")["patient_id"] == "P-2007"


def verifications(state):
    return [(v["account"], v["claimed_name"], v["method"], v["outcome"]) for v in state["verifications"]]


def tried(state, table="verifications"):
    return [json.loads(v["tried"]) for v in state[table]]


def test_every_verification_is_a_record_of_whom_the_details_were_checked_against(call):
    call.ok("verify_patient", full_name="ms. rosa  DELGADO", date_of_birth="1979-03-14")
    call.ok("verify_patient", full_name="ms. rosa  DELGADO", date_of_birth="1979-03-14")  # the same check: one row
    # Every try is a row with the details tried (front_desk): the verifier forgives a failed one only when the
    # caller was heard saying every value (a misheard digit, tried, then corrected), never a guess.
    assert call.error("verify_patient", full_name="Rosa Delgado", date_of_birth="1979-03-15") == "not_verified"
    state = call.state()
    assert verifications(state) == [("P-2001", "ms. rosa  DELGADO", "date_of_birth", "verified"),
                                    (None, "Rosa Delgado", "date_of_birth", "failed")]
    assert tried(state)[1] == [["person", "Rosa Delgado"], ["date", "1979-03-15"]]


def test_a_caller_verified_as_someone_else_leaves_that_record(call):
    # R-M1: a mother with her adult daughter's birth date; the row is what the database gate sees.
    call.ok("verify_patient", full_name="Priya Natarajan", date_of_birth="1990-06-21")
    assert verifications(call.state()) == [("P-2003", "Priya Natarajan", "date_of_birth", "verified")]


def test_a_failed_try_on_a_shared_name_counts_on_no_record(call):
    assert call.error("verify_patient", full_name="Daniel Cho", date_of_birth="1970-01-01") == "not_verified"
    state = call.state()
    assert patient(state, "P-2007")["failed_verifications"] == 0 == patient(state, "P-2008")["failed_verifications"]
    assert verifications(state) == [(None, "Daniel Cho", "date_of_birth", "failed")]  # on no record, but kept


def test_wrong_birth_dates_under_a_patients_name_never_lock_her_record(call, healthcare_server):
    # The audit: a lockout keyed on a name let anyone lock a patient out with three wrong birth dates.
    for dob in ("1979-03-15", "1979-04-14", "1978-03-14"):
        assert call.error("verify_patient", full_name="Rosa Delgado", date_of_birth=dob) == "not_verified"
    assert call.error("verify_patient", **ROSA) == "verification_locked"  # the call's tries are used up
    state = call.state()
    assert (patient(state, "P-2001")["failed_verifications"], patient(state, "P-2001")["locked"]) == (0, 0)
    assert verifications(state) == [(None, "Rosa Delgado", "date_of_birth", "failed")] * 3 + [
        ("P-2001", "Rosa Delgado", "date_of_birth", "refused")]
    assert Call(healthcare_server).ok("verify_patient", **ROSA)["patient_id"] == "P-2001"  # Rosa herself, next call


def test_failed_tries_against_a_chart_count_on_it_and_the_third_locks_it(call):
    # A minor's chart pulled by his name and birth date, tried with the wrong guardian: tries against the chart.
    leo = {"full_name": "Leo Hartmann", "date_of_birth": "2012-07-19"}
    for guardian in ("Frank Hartmann", "Frank Hartman"):
        assert call.error("verify_patient", **leo, guardian_name=guardian) == "not_verified"
    assert patient(call.state(), "P-2009")["failed_verifications"] == 2
    assert call.error("verify_patient", **leo, guardian_name="Frank Hartmann") == "not_verified"
    state = call.state()
    assert (patient(state, "P-2009")["failed_verifications"], patient(state, "P-2009")["locked"]) == (3, 1)
    # The call's tries are used up too; a later call meets account_locked (see the seeded lock below).
    assert call.error("verify_patient", **leo, guardian_name="Greta Hartmann") == "verification_locked"


def test_a_seeded_lockout_refuses_the_right_details(call):
    assert call.error("verify_patient", full_name="Gregory Lutz", date_of_birth="1969-02-27") == "account_locked"
    assert verifications(call.state()) == [("P-2011", "Gregory Lutz", "date_of_birth", "locked")]


def test_success_clears_the_record_count(call):
    leo = {"full_name": "Leo Hartmann", "date_of_birth": "2012-07-19"}
    assert call.error("verify_patient", **leo, guardian_name="Frank Hartmann") == "not_verified"
    assert patient(call.state(), "P-2009")["failed_verifications"] == 1
    call.ok("verify_patient", **leo, guardian_name="Greta Hartmann")
    assert patient(call.state(), "P-2009")["failed_verifications"] == 0


def test_a_failed_lookup_ends_the_earlier_verification(call):
    call.ok("verify_patient", **ROSA)
    assert call.error("verify_patient", full_name="Marcus Bell", date_of_birth="1985-11-03") == "not_verified"
    assert call.error("get_balance") == "not_verified"


def test_a_minor_needs_the_guardian_on_file(call):
    leo = {"full_name": "Leo Hartmann", "date_of_birth": "2012-07-19"}
    assert call.error("verify_patient", **leo) == "guardian_required"
    assert verifications(call.state()) == []  # asking for the guardian is no check
    assert call.error("verify_patient", **leo, guardian_name="Frank Hartmann") == "not_verified"
    data = call.ok("verify_patient", **leo, guardian_name="Greta Hartmann")
    assert (data["minor"], data["speaking_with"]) == (True, "guardian")
    assert patient(call.state(), "P-2009")["failed_verifications"] == 0


def test_account_actions_need_verification(call):
    for name, args in [("list_my_appointments", {}), ("get_balance", {}), ("request_refill", {"medication": "tretinoin"}),
                       ("send_clinical_message", {"topic": "other", "urgency": "routine", "message": "x"}),
                       ("book_appointment", {"slot_id": "S-501", "visit_type": "follow_up"}),
                       ("update_insurance", {"carrier": "Aetna", "member_id": "AET-55102"})]:
        assert call.error(name, **args) == "not_verified", name


# --- slots and booking -------------------------------------------------------------------------

def test_slots_fit_the_visit_length_and_skip_booked_held_and_past_times(call):
    data = call.ok("find_open_slots", office="Park Ave", visit_type="skin_check")
    ids = [s["slot_id"] for s in data["slots"]]
    # S-303 is booked, S-305 held by another caller until 09:30; S-306's hold lapsed at 08:45.
    assert ids[:3] == ["S-306", "S-308", "S-310"]
    short = call.ok("find_open_slots", office="park_ave", visit_type="follow_up")
    assert [s["slot_id"] for s in short["slots"]][:2] == ["S-302", "S-306"]  # S-301 (08:30 today) has passed


def test_a_slot_too_short_for_the_visit_is_refused(call):
    call.ok("verify_patient", **ROSA)
    result = call.tool("book_appointment", slot_id="S-501", visit_type="skin_check")
    assert (result["error_code"], result["data"]) == ("slot_too_short", {"minutes_needed": 30, "minutes_available": 15})
    assert call.error("book_appointment", slot_id="S-305", visit_type="follow_up") == "slot_unavailable"
    assert call.error("book_appointment", slot_id="S-702", visit_type="follow_up") == "wrong_slot_type"


def test_booking_writes_the_appointment(call):
    call.ok("verify_patient", **ROSA)
    data = call.ok("book_appointment", slot_id="s 501", visit_type="follow_up")
    assert data == {"appointment_id": "A-1010", "visit_type": "follow_up", "starts_at": "2026-08-04T09:00",
                    "office": "Brooklyn Heights", "provider": "Dr. Hannah Feld", "status": "scheduled"}
    row = appointment(call.state(), "A-1010")
    assert (row["patient_id"], row["slot_id"], row["status"], row["cancel_fee"]) == ("P-2001", "S-501", "scheduled", 0)


def test_plan_acceptance_is_per_office_and_carrier(call):
    park = call.ok("check_plan_acceptance", office="Park Avenue", carrier="cigna")
    assert (park["accepted"], park["offices_accepting"]) == (True, ["Park Avenue", "Hoboken", "White Plains"])
    assert call.ok("check_plan_acceptance", office="Brooklyn", carrier="Cigna")["accepted"] is False
    assert call.error("check_plan_acceptance", office="Queens", carrier="Cigna") == "unknown_office"
    assert call.error("check_plan_acceptance", office="Brooklyn", carrier="Acme Health") == "unknown_carrier"


def test_a_booking_where_the_plan_is_not_accepted_is_refused(call):
    call.ok("verify_patient", full_name="Leo Hartmann", date_of_birth="2012-07-19", guardian_name="Greta Hartmann")
    result = call.tool("book_appointment", slot_id="S-502", visit_type="skin_check")  # UnitedHealthcare at Brooklyn
    assert result["error_code"] == "plan_not_accepted"
    assert result["data"] == {"offices_accepting": ["Park Avenue", "Hoboken", "White Plains"]}
    assert len(call.state()["appointments"]) == 11


def test_a_new_patient_books_without_a_chart(call):
    data = call.ok("book_new_patient_visit", slot_id="S-306", visit_type="new_patient", carrier="Cigna", **NEW)
    assert (data["appointment_id"], data["new_patient"], data["insurance"]) == ("A-1010", True, "Cigna")
    row = appointment(call.state(), "A-1010")
    assert (row["patient_id"], row["new_patient_name"], row["new_patient_phone"], row["carrier"]) == (
        None, "Maya Lindqvist", "9175550246", "CIGNA")
    assert len(call.state()["patients"]) == 19  # no chart is created


def test_a_new_patient_visit_checks_the_plan_and_refuses_known_patients(call):
    assert call.error("book_new_patient_visit", slot_id="S-502", visit_type="new_patient", carrier="Cigna",
                     **NEW) == "plan_not_accepted"
    assert call.error("book_new_patient_visit", slot_id="S-306", visit_type="new_patient", **NEW) == "carrier_required"
    assert call.error("book_new_patient_visit", slot_id="S-306", visit_type="new_patient", carrier="Aetna",
                     phone="2125550142", **ROSA) == "existing_patient"
    consult = call.ok("book_new_patient_visit", slot_id="S-801", visit_type="cosmetic_consult", **NEW)
    assert consult["insurance"] == "Self-pay (no insurance)"


def test_a_verified_patient_cannot_touch_another_patients_appointment(call):
    call.ok("verify_patient", **MARCUS)
    # A-1008 is his wife Sylvia's; to him it does not exist.
    for name, args in [("check_cancellation_fee", {"appointment_id": "A-1008"}),
                       ("cancel_appointment", {"appointment_id": "A-1008", "accept_fee": True}),
                       ("reschedule_appointment", {"appointment_id": "A-1008", "new_slot_id": "S-803"})]:
        result = call.tool(name, **args)
        assert result["error_code"] == "appointment_not_found", name
        assert "Sylvia" not in (result["caller_safe_message"] or "")
    assert appointment(call.state(), "A-1008")["status"] == "scheduled"
    assert [a["appointment_id"] for a in call.ok("list_my_appointments")["appointments"]] == ["A-1001"]


# --- cancellation fees and rescheduling ----------------------------------------------------------

def test_outside_the_window_cancelling_is_free(call):
    call.ok("verify_patient", **MARCUS)
    assert call.error("cancel_appointment", appointment_id="A-1001", accept_fee=False) == "fee_check_required"
    quote = call.ok("check_cancellation_fee", appointment_id="A-1001")
    assert (quote["inside_window"], quote["notice_window_hours"], quote["cancellation_fee"]) == (False, 24, 0.0)
    assert call.ok("cancel_appointment", appointment_id="A-1001", accept_fee=False)["fee_charged"] == 0.0
    state = call.state()
    assert (appointment(state, "A-1001")["status"], patient(state, "P-2002")["balance"]) == ("cancelled", 40.0)


def test_a_medical_visit_inside_24_hours_costs_50_only_when_accepted(call):
    call.ok("verify_patient", **TOMASZ)
    quote = call.ok("check_cancellation_fee", appointment_id="A-1005")  # today 16:30
    assert (quote["inside_window"], quote["cancellation_fee"], quote["reschedule_fee"]) == (True, 50.0, 0.0)
    refused = call.tool("cancel_appointment", appointment_id="A-1005", accept_fee=False)
    assert refused["error_code"] == "fee_not_accepted" and "$50.00" in refused["caller_safe_message"]
    before = call.state()
    assert appointment(before, "A-1005")["status"] == "scheduled" and patient(before, "P-2006")["balance"] == 0
    data = call.ok("cancel_appointment", appointment_id="A-1005", accept_fee=True)
    assert (data["fee_charged"], data["new_balance"]) == (50.0, 50.0)
    after = call.state()
    assert (appointment(after, "A-1005")["status"], appointment(after, "A-1005")["cancel_fee"]) == ("cancelled", 50.0)
    assert patient(after, "P-2006")["balance"] == 50.0


def test_a_cosmetic_visit_has_a_72_hour_window_and_a_150_fee(call):
    call.ok("verify_patient", **JASMINE)
    quote = call.ok("check_cancellation_fee", appointment_id="A-1004")  # Wednesday 10:00, 49 hours away
    assert (quote["notice_window_hours"], quote["inside_window"], quote["cancellation_fee"]) == (72, True, 150.0)
    assert call.error("cancel_appointment", appointment_id="A-1004", accept_fee=False) == "fee_not_accepted"
    assert appointment(call.state(), "A-1004")["status"] == "scheduled"
    call.ok("cancel_appointment", appointment_id="A-1004", accept_fee=True)
    assert patient(call.state(), "P-2005")["balance"] == 150.0


def test_a_balance_with_cents_gains_the_fee_to_the_cent(call):
    call.ok("verify_patient", **ELLEN)
    call.ok("check_cancellation_fee", appointment_id="A-1003")  # tomorrow 08:30: 23.5 hours away
    assert call.ok("cancel_appointment", appointment_id="A-1003", accept_fee=True)["new_balance"] == 1334.60
    assert patient(call.state(), "P-2004")["balance"] == 1334.60


def test_rescheduling_inside_the_window_is_free(call):
    call.ok("verify_patient", **TOMASZ)
    data = call.ok("reschedule_appointment", appointment_id="A-1005", new_slot_id="S-307")
    assert (data["starts_at"], data["previous_starts_at"], data["fee_charged"]) == (
        "2026-08-05T08:30", "2026-08-03T16:30", 0.0)
    state = call.state()
    row = appointment(state, "A-1005")
    assert (row["slot_id"], row["status"], row["cancel_fee"], row["provider_id"]) == ("S-307", "scheduled", 0, "PR-02")
    assert patient(state, "P-2006")["balance"] == 0
    # The old time is open again, the new one is taken.
    ids = [s["slot_id"] for s in call.ok("find_open_slots", office="Park Avenue", visit_type="follow_up")["slots"]]
    assert "S-304" in ids and "S-307" not in ids


def test_rescheduling_keeps_the_visit_type_and_its_length(call):
    call.ok("verify_patient", **ROSA)
    booked = call.ok("book_appointment", slot_id="S-504", visit_type="follow_up")["appointment_id"]
    # A follow-up fits a longer slot, and keeps its type there.
    assert call.ok("reschedule_appointment", appointment_id=booked, new_slot_id="S-503")["visit_type"] == "follow_up"
    call.ok("verify_patient", full_name="Beatriz Santos", date_of_birth="1966-03-03")
    # Her 45-minute procedure does not fit a 30-minute slot.
    assert call.error("reschedule_appointment", appointment_id="A-1007", new_slot_id="S-506") == "slot_too_short"
    assert appointment(call.state(), "A-1007")["slot_id"] == "S-505"


# --- waitlist ----------------------------------------------------------------------------------

def test_a_waitlist_entry_holds_an_office_set_and_a_date_range(call):
    call.ok("verify_patient", full_name="Yvonne Baptiste", date_of_birth="1958-01-25")
    data = call.ok("add_to_waitlist", visit_type="skin_check", offices=["White Plains", "Park Ave", "white plains"],
                   earliest_date="2026-08-17", latest_date="2026-08-21")
    assert data["offices"] == ["Park Avenue", "White Plains"]
    row = call.state()["waitlist"][-1]
    assert (row["patient_id"], row["offices"], row["earliest_date"], row["latest_date"], row["phone"]) == (
        "P-2016", "park_ave,white_plains", "2026-08-17", "2026-08-21", "9145550184")
    assert call.error("add_to_waitlist", visit_type="skin_check", offices=["Park Avenue"], earliest_date="2026-08-10",
                     latest_date="2026-08-12") == "already_on_waitlist"


def test_waitlist_dates_and_offices_are_checked(call):
    call.ok("verify_patient", **ROSA)
    for first, last in [("2026-08-01", "2026-08-10"), ("2026-08-12", "2026-08-10"), ("2026-08-10", "2026-10-05")]:
        assert call.error("add_to_waitlist", visit_type="follow_up", offices=["Brooklyn"], earliest_date=first,
                         latest_date=last) == "invalid_date_range"
    assert call.error("add_to_waitlist", visit_type="follow_up", offices=["Hoboken"], earliest_date="2026-08-10",
                     latest_date="2026-08-20") == "plan_not_accepted"  # Aetna is not taken in Hoboken


def test_a_new_patient_joins_the_waitlist_with_name_and_phone(call):
    assert call.error("add_to_waitlist", visit_type="new_patient", offices=["Park Avenue"], earliest_date="2026-08-04",
                     latest_date="2026-08-07") == "patient_details_required"
    assert call.error("add_to_waitlist", visit_type="follow_up", offices=["Park Avenue"], earliest_date="2026-08-04",
                     latest_date="2026-08-07", full_name="Maya Lindqvist", phone="9175550246") == "not_verified"
    call.ok("add_to_waitlist", visit_type="new_patient", offices=["Park Avenue"], earliest_date="2026-08-04",
            latest_date="2026-08-07", full_name="Maya Lindqvist", phone="(917) 555-0246")
    assert call.state()["waitlist"][-1]["patient_id"] is None


# --- texts -------------------------------------------------------------------------------------

def test_texts_go_to_the_number_on_file_or_the_new_patients_number(call):
    assert call.error("send_text_message", message_type="appointment_confirmation", appointment_id="A-1001") == "not_verified"
    booked = call.ok("book_new_patient_visit", slot_id="S-402", visit_type="new_patient", carrier="Aetna", **NEW)
    sent = call.ok("send_text_message", message_type="appointment_confirmation", appointment_id=booked["appointment_id"])
    assert sent["sent_to_last_four"] == "0246"
    assert call.ok("send_text_message", message_type="new_patient_forms")["status"] == "sent"


def test_a_confirmation_goes_to_the_appointments_own_patient_not_whoever_is_verified(call):
    # R-M1's wrong path: the mother verified as her daughter books her own first visit; the text goes to
    # the number the mother gave for it, never to the daughter's phone on file.
    call.ok("verify_patient", full_name="Priya Natarajan", date_of_birth="1990-06-21")
    booked = call.ok("book_new_patient_visit", slot_id="S-306", visit_type="new_patient", full_name="Lakshmi Natarajan",
                     date_of_birth="1962-02-11", phone="917-555-0281", carrier="Aetna")
    sent = call.ok("send_text_message", message_type="appointment_confirmation", appointment_id=booked["appointment_id"])
    assert sent["sent_to_last_four"] == "0281"
    assert call.ok("send_text_message", message_type="new_patient_forms")["sent_to_last_four"] == "0281"
    assert call.ok("send_text_message", message_type="appointment_confirmation",
                   appointment_id="A-1002")["sent_to_last_four"] == "0133"  # Priya's own visit: her number


def test_a_number_the_text_will_not_go_to_is_refused_not_answered_sent(call):
    call.ok("verify_patient", full_name="Priya Natarajan", date_of_birth="1990-06-21")
    assert call.error("send_text_message", message_type="appointment_confirmation", appointment_id="A-1002",
                      phone="646-555-0199") == "number_not_on_file"
    # The number on file, written any way, is the number the text goes to.
    assert call.ok("send_text_message", message_type="appointment_confirmation", appointment_id="A-1002",
                   phone="+1 (917) 555-0133")["sent_to_last_four"] == "0133"


def test_directions_can_be_texted_to_a_number_the_caller_gives(call):
    assert call.error("send_text_message", message_type="office_directions", office="Hoboken") == "phone_required"
    assert call.ok("send_text_message", message_type="office_directions", office="Hoboken",
                   phone="201-555-0177")["sent_to_last_four"] == "0177"


# --- coverage ----------------------------------------------------------------------------------

def test_eligibility_reports_an_inactive_plan_and_insurance_updates_need_an_active_one(call):
    data = call.ok("check_eligibility", carrier="Cigna", member_id="cgn 448812", date_of_birth="1998-08-22")
    assert (data["status"], data["termination_date"]) == ("inactive", "2026-06-30")
    assert call.error("check_eligibility", carrier="Cigna", member_id="CGN-448813", date_of_birth="1998-08-22") == "member_not_found"
    call.ok("verify_patient", full_name="Hana Kimura", date_of_birth="1998-08-22")
    assert call.error("update_insurance", carrier="Cigna", member_id="CGN-448812") == "coverage_inactive"
    assert call.error("update_insurance", carrier="Aetna", member_id="AET-80142") == "eligibility_check_required"


def test_eligibility_inquiries_are_logged_and_an_update_writes_the_record(call):
    call.ok("get_office_info", office="Hoboken", topic="hours")  # the call's database now exists
    before = call.state()
    active = call.ok("check_eligibility", carrier="Cigna Healthcare", member_id="CGN-730215", date_of_birth="1991-04-09")
    assert (active["status"], active["specialist_copay"], active["deductible_remaining"]) == ("active", 50.0, 750.0)
    call.ok("check_eligibility", carrier="Cigna", member_id="cgn 730215", date_of_birth="1991-04-09")  # again: nothing new
    assert call.error("check_eligibility", carrier="Cigna", member_id="CGN-73021", date_of_birth="1991-04-09") == \
        "member_not_found"
    after = call.state()
    assert {k: v for k, v in after.items() if k != "eligibility_checks"} == \
        {k: v for k, v in before.items() if k != "eligibility_checks"}
    assert [(r["carrier"], r["member_id"], r["outcome"]) for r in after["eligibility_checks"]] == [
        ("CIGNA", "CGN-730215", "active"), ("CIGNA", None, "not_found")]
    assert tried(after, "eligibility_checks")[1] == [["identifier", "CGN-73021"], ["date", "1991-04-09"]]
    call.ok("verify_patient", **ROSA)
    call.ok("check_eligibility", carrier="United Healthcare", member_id="UHC-902114", date_of_birth="2012-07-19")
    call.ok("update_insurance", carrier="UHC", member_id="uhc902114")
    row = patient(call.state(), "P-2001")
    assert (row["carrier"], row["member_id"]) == ("UHC", "UHC-902114")


# --- cosmetic quotes ---------------------------------------------------------------------------

@pytest.mark.parametrize("treatment, quantity, subtotal, discount, total, financing", [
    ("botox", 40, 560.00, 0.00, 560.00, False),
    ("filler", 2, 1450.00, 0.00, 1450.00, True),
    ("chemical_peel", 3, 585.00, 58.50, 526.50, False),
    ("microneedling", 2, 750.00, 0.00, 750.00, False),
    ("laser_resurfacing", 3, 3450.00, 517.50, 2932.50, True),
])
def test_cosmetic_quotes_to_the_cent(call, treatment, quantity, subtotal, discount, total, financing):
    data = call.ok("get_cosmetic_quote", treatment=treatment, quantity=quantity)
    assert (data["subtotal"], data["package_discount"], data["total"], data["financing_available"]) == (
        subtotal, discount, total, financing)
    assert data["consultation_fee"] == 75.0


def test_botox_has_a_minimum(call):
    result = call.tool("get_cosmetic_quote", treatment="botox", quantity=12)
    assert (result["error_code"], result["data"]) == ("below_minimum", {"minimum_quantity": 20})


# --- billing -----------------------------------------------------------------------------------

def test_payment_links_up_to_the_balance_and_delivered_by_text_or_email(call):
    call.ok("verify_patient", full_name="Beatriz Santos", date_of_birth="1966-03-03")
    assert call.ok("get_balance")["balance"] == 312.45
    assert call.error("send_text_message", message_type="payment_link") == "no_payment_link"
    assert call.error("create_payment_link", amount=312.46) == "invalid_amount"
    assert call.ok("create_payment_link", amount=312.45)["link_id"] == "PL-2014-1"
    assert call.ok("send_text_message", message_type="payment_link")["sent_to_last_four"] == "0177"
    assert call.error("send_email", message_type="payment_link") == "no_email_on_file"


def test_financing_only_above_1000_and_the_instalments_add_up_to_the_cent(call):
    call.ok("verify_patient", **MARCUS)
    assert call.error("set_up_payment_plan", months=3) == "not_eligible_for_financing"
    call.ok("verify_patient", **ELLEN)
    data = call.ok("set_up_payment_plan", months=12)
    assert (data["monthly_amount"], data["final_payment"], data["balance"]) == (107.05, 107.05, 1284.60)
    assert patient(call.state(), "P-2004")["payment_plan_months"] == 12
    assert call.error("set_up_payment_plan", months=6) == "plan_exists"


def test_a_plan_whose_instalments_do_not_divide_evenly(call):
    call.ok("verify_patient", **ELLEN)
    data = call.ok("set_up_payment_plan", months=6)
    assert (data["monthly_amount"], data["final_payment"]) == (214.10, 214.10)
    call2 = Call(call.http)
    call2.ok("verify_patient", **ELLEN)
    three = call2.ok("set_up_payment_plan", months=3)
    assert (three["monthly_amount"], three["final_payment"]) == (428.20, 428.20)


# --- clinical ----------------------------------------------------------------------------------

def test_refills_follow_the_prescription_list(call):
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    data = call.ok("request_refill", medication="Retin-A", pharmacy="CVS on Lexington")
    assert (data["medication"], data["refills_remaining_after"], data["status"]) == (
        "tretinoin 0.05% cream", 1, "sent_to_provider")
    assert call.error("request_refill", medication="clobetasol") == "no_refills_remaining"
    assert call.error("request_refill", medication="Accutane") == "refill_requires_visit"
    assert call.error("request_refill", medication="doxycycline") == "not_on_medication_list"  # Beatriz's, not his


# Owen Gallagher's list: tretinoin 0.05% cream (2 refills), clobetasol 0.05% ointment (none left),
# isotretinoin 40 mg (needs a visit). Beatriz Santos's: doxycycline 100 mg.
@pytest.mark.parametrize("said, status", [
    ("Retin-A cream 0.05%", "ok"), ("retin a cream", "ok"), ("Tretinoin 0.05 % Cream", "ok"), ("RETIN-A", "ok"),
    ("Temovate ointment", "no_refills_remaining"), ("clobetasol propionate 0.05% ointment", "no_refills_remaining"),
    ("Accutane 40 mg", "refill_requires_visit"), ("isotretinoin 40mg capsules", "refill_requires_visit"),
    ("Doxycycline hyclate 100 mg tablets", "not_on_medication_list"),  # Beatriz's, not his
    ("cream", "not_on_medication_list"), ("40 mg", "not_on_medication_list"),  # a form or a strength is no drug
    ("retinol cream", "not_on_medication_list"), ("Retin-B", "not_on_medication_list"),
])
def test_a_refill_names_its_drug_with_or_without_form_strength_or_salt(call, said, status):
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    assert call.tool("request_refill", medication=said)["error_code"] in ((None,) if status == "ok" else (status,))


@pytest.mark.parametrize("said", ["Retin-A cream 0.05%", "Temovate ointment", "Accutane 40 mg", "Nizoral 2% shampoo",
                                  "Kenalog 0.1% cream", "isotretinoin", "cream", "40 mg", "retinol cream"])
def test_the_tool_and_the_verifier_read_a_medication_name_alike(call, said):
    # The drug the tool finds on the list is the drug the verifier's `medication` table names, and a
    # name the verifier reads as no drug of the table finds none.
    pack = load_pack(HEALTHCARE)
    rows = {"tretinoin": "tretinoin 0.05% cream", "clobetasol": "clobetasol 0.05% ointment",
            "isotretinoin": "isotretinoin 40 mg"}
    canonical = pack.values.canonical("medication", said)
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    result = call.tool("request_refill", medication=said)
    found = result["data"]["medication"] if result["ok"] else None
    if canonical in rows:
        assert result["error_code"] != "not_on_medication_list"
        assert found in (None, rows[canonical])
        assert pack.values.same("medication", rows[canonical], said)
    else:
        assert result["error_code"] == "not_on_medication_list"


def test_clinical_messages_need_a_verified_patient_and_each_is_a_compared_row(call):
    assert call.error("send_clinical_message", topic="side_effect", urgency="routine", message="peeling") == "not_verified"
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    data = call.ok("send_clinical_message", topic="side_effect", urgency="same_day", message="peeling")
    assert (data["status"], data["reply_expected"]) == ("sent", "by the end of the day")
    call.ok("send_clinical_message", topic="side_effect", urgency="routine", message="peeling, again")
    assert [(m["patient_id"], m["topic"], m["urgency"]) for m in call.state()["clinical_messages"]] == [
        ("P-2013", "side_effect", "same_day"), ("P-2013", "side_effect", "routine")]  # a hedge is two rows


def test_911_advice_is_recorded_in_a_compared_row_without_verification(call):
    call.start()
    assert call.state()["emergency_advice"] == []
    data = call.ok("advise_emergency_services", symptoms="lips and tongue swelling, hard to breathe")
    assert (data["advice"], data["status"]) == ("call_911", "advised")
    assert [r["advice"] for r in call.state()["emergency_advice"]] == ["call_911"]


def test_the_nurse_line_leaves_no_911_advice(call):
    call.ok("escalate_to_human", reason="urgent_clinical", summary="lips swelling")
    assert call.state().get("emergency_advice", []) == []


def test_medicare_balances_are_only_the_patients_share(call):
    # A participating practice bills a Medicare patient her Part B deductible and 20% coinsurance only:
    # the large balance that qualifies for financing is a commercial plan's, not a Medicare patient's.
    assert call.ok("verify_patient", **ELLEN)["insurance_on_file"] == "Aetna"
    assert call.ok("get_balance")["balance"] == 1284.6
    other = Call(call.http)
    assert other.ok("verify_patient", full_name="Yvonne Baptiste", date_of_birth="1958-01-25")["insurance_on_file"] == "Medicare"
    items = other.ok("get_balance")["items"]
    assert [i["amount"] for i in items] == [96.3] and "Medicare-approved amount" in items[0]["description"]


def test_an_escalation_is_a_compared_row_of_whose_call_and_why(call):
    call.ok("get_office_info", office="Hoboken", topic="hours")
    assert call.state()["escalations"] == []
    assert call.ok("escalate_to_human", reason="urgent_clinical", summary="x")["status"] == "transferring"
    assert [(e["patient_id"], e["reason"]) for e in call.state()["escalations"]] == [(None, "urgent_clinical")]


# --- the text-message rule and the paper's point, through the engine and the verifier ------------

from pytest_callm.call.engine import run_call  # noqa: E402
from pytest_callm.phone.line import CleanLine, ScriptedLine  # noqa: E402
from pytest_callm.call.oracle import OracleModel, PlannedCall, ScriptedCaller, ScriptedModel, plan_answer_key  # noqa: E402
from pytest_callm.task.pack import PackRegistry  # noqa: E402
from pytest_callm.runs.runtime import make_call_id  # noqa: E402
from pytest_callm.task.task_file import load_task  # noqa: E402
from pytest_callm.toolserver.client import ToolClient  # noqa: E402
from pytest_callm.scoring.verify import verify  # noqa: E402

TASKS = REPO / "tasks" / "healthcare"


@pytest.fixture(scope="module")
def engine():
    packs = PackRegistry([REPO / "industries"])
    pack = packs.get("healthcare")
    with ToolServer({pack.name: pack}) as server:
        yield packs, pack, server.url


def _task(engine, task_id):
    packs, _, _ = engine
    _, task, pack = load_task(TASKS / task_id / "task.json", packs)
    return task, pack


def _play(engine, task, model, caller_says=None, line=None):
    import asyncio

    _, pack, url = engine

    async def go():
        tools = ToolClient(url)
        try:
            return await run_call(pack=pack, model=model, caller=ScriptedCaller(model, caller_says),
                                  line=line or CleanLine(), tools=tools, call_id=make_call_id(task.task_id, 1), task_id=task.task_id, attempt=1)
        finally:
            await tools.aclose()

    return asyncio.run(go())


def _before_end(plan, call):
    plan.insert(next(i for i, c in enumerate(plan) if c.name == "end_call"), call)
    return plan


def test_the_oracle_passes_a_task_and_every_task_requires_or_forbids_texts(engine):
    task, pack = _task(engine, "C1-E1")
    model = OracleModel(task, pack)
    assert verify(task, pack, _play(engine, task, model)).passed
    assert pack.required_or_forbidden == {"send_text_message"}
    for path in sorted(TASKS.glob("*/task.json")):
        packs, _, _ = engine
        _, t, _ = load_task(path, packs)
        required = any(c.name == "send_text_message" for c in t.exp_tool_calls)
        assert required != ("send_text_message" in t.forbidden_tools), path


def test_an_unrequested_text_fails_the_tool_and_database_gates(engine):
    task, pack = _task(engine, "C1-E1")  # Rosa declines the text
    plan = _before_end(plan_answer_key(task, pack), PlannedCall(
        "send_text_message", {"message_type": "appointment_confirmation", "appointment_id": "A-1010"}, None, None,
        "scheduling"))
    trajectory = _play(engine, task, ScriptedModel(plan))
    assert any(c.name == "send_text_message" for c in trajectory.tool_calls)
    verdict = verify(task, pack, trajectory)
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}  # forbidden, and a row on record
    assert "send_text_message" in verdict.explain() and "text_messages: extra row" in verdict.explain()


def test_a_required_text_left_out_fails_the_tool_and_database_gates(engine):
    task, pack = _task(engine, "C1-M4")  # Yvonne asks for a text that she is on the waitlist
    plan = [c for c in plan_answer_key(task, pack) if c.name != "send_text_message"]
    verdict = verify(task, pack, _play(engine, task, ScriptedModel(plan)))
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    assert "send_text_message" in verdict.explain()


def test_a_skipped_read_reaches_the_right_database_and_only_the_tool_gate_sees_it(engine):
    task, pack = _task(engine, "C1-M3")  # booked the right slot without searching first
    plan = [c for c in plan_answer_key(task, pack) if c.name != "find_open_slots"]
    verdict = verify(task, pack, _play(engine, task, ScriptedModel(plan)))
    assert verdict.gates == {"tools": False, "handoff": True, "database": True, "words": True}


def test_charging_a_declined_fee_fails_the_tool_and_database_gates(engine):
    task, pack = _task(engine, "C1-H1")  # Tomasz declines the $50 and moves the visit instead
    plan = [c for c in plan_answer_key(task, pack) if c.name not in ("find_open_slots", "reschedule_appointment")]
    _before_end(plan, PlannedCall("cancel_appointment", {"appointment_id": "A-1005", "accept_fee": True}, None, None,
                                  "scheduling"))
    trajectory = _play(engine, task, ScriptedModel(plan))
    assert next(p for p in trajectory.final_state["patients"] if p["id"] == "P-2006")["balance"] == 50.0
    verdict = verify(task, pack, trajectory)
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}


@pytest.mark.parametrize("task_id, said", [
    ("C5-E1", "Retin-A 0.05% cream"),
    ("C5-H2", "Accutane 40 mg capsules"),
    ("C5-H3", "Nizoral 2% shampoo"),
    ("C5-H4", "Doryx 100 mg tablets"),
    ("C5-M1", "Temovate 0.05% ointment"),
])
def test_each_refill_task_passes_with_a_brand_name_and_its_form_or_strength(engine, task_id, said):
    # The five clinical refill tasks: a correct agent that passes on the brand as the caller reads it off
    # the box (form and strength included) passes all three gates; the medication kind reads it as the drug.
    task, pack = _task(engine, task_id)
    plan = [PlannedCall(c.name, {**c.arguments, "medication": said}, c.expected_status, c.key_index, c.agent)
            if c.name == "request_refill" else c for c in plan_answer_key(task, pack)]
    assert any(c.name == "request_refill" and c.arguments["medication"] == said for c in plan)
    verdict = verify(task, pack, _play(engine, task, ScriptedModel(plan)))
    assert verdict.gates == {"tools": True, "handoff": True, "database": True, "words": True}, verdict


# --- the records a practice keeps (docs/house-rules.md §3): each shows what a wrong agent did -----

def _with(plan, at_name, *calls, after=True, nth=0):
    """The plan with `calls` put after (or before) its `nth` call of `at_name`, made by that call's agent."""
    i = [k for k, c in enumerate(plan) if c.name == at_name][nth]
    made = [PlannedCall(name, args, None, None, plan[i].agent) for name, args in calls]
    return plan[:i + 1] + made + plan[i + 1:] if after else plan[:i] + made + plan[i:]


def _gates(engine, task_id, edit, caller_says=None, line=None):
    task, pack = _task(engine, task_id)
    verdict = verify(task, pack, _play(engine, task, ScriptedModel(edit(plan_answer_key(task, pack))), caller_says,
                                       line))
    return verdict.gates, verdict.explain()


def _same(plan, name):
    c = next(c for c in plan if c.name == name)
    return (name, dict(c.arguments))


@pytest.mark.parametrize("task_id, tool, table, tools_gate", [
    ("C2-E1", "send_text_message", "text_messages", False),  # texted twice (a second text is unrequested too)
    ("C2-E2", "send_email", "emails", True),  # emailed twice
    ("C2-E2", "create_payment_link", "payment_links", True),  # a second link for one payment
    ("C5-E1", "request_refill", "refill_requests", True),  # the refill asked twice
    ("C5-E2", "send_clinical_message", "clinical_messages", True),  # one question, two messages
])
def test_a_duplicate_write_shows_in_the_database(engine, task_id, tool, table, tools_gate):
    gates, why = _gates(engine, task_id, lambda plan: _with(plan, tool, _same(plan, tool)))
    # Extra calls are allowed (the paper's rule): the tool gate passes them; the row they leave does not pass.
    assert gates == {"tools": tools_gate, "handoff": True, "database": False, "words": True}, why
    assert f"{table}: extra row" in why


def test_hedging_shows_in_the_database(engine):
    # A routine and a same-day message for one question; a message and the nurse line; a text and an email.
    routine_and_same_day = lambda plan: _with(plan, "send_clinical_message", ("send_clinical_message", {
        "topic": "results_question", "urgency": "same_day", "message": "same question"}))
    assert _gates(engine, "C5-E2", routine_and_same_day)[0]["database"] is False
    message_and_nurse = lambda plan: _with(plan, "send_clinical_message", ("escalate_to_human", {
        "reason": "urgent_clinical", "summary": "results"}))
    gates, why = _gates(engine, "C5-E2", message_and_nurse)
    assert gates["database"] is False and "escalations: extra row" in why
    text_and_email = lambda plan: _with(plan, "send_text_message", ("send_email", {"message_type": "payment_link"}))
    gates, why = _gates(engine, "C2-E1", text_and_email)
    assert gates == {"tools": True, "handoff": True, "database": False, "words": True} and "emails: extra row" in why


def test_a_refused_refill_is_kept_with_the_medication_tried(call):
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    assert call.error("request_refill", medication="doxycycline") == "not_on_medication_list"
    assert call.error("request_refill", medication="Accutane") == "refill_requires_visit"
    state = call.state()
    assert [(r["prescription_id"], r["medication"], r["status"], r["outcome"]) for r in state["refill_requests"]] == [
        (None, "doxycycline", "not_on_medication_list", "refused"), (3, "Accutane", "refill_requires_visit", "refused")]
    assert tried(state, "refill_requests")[0] == [["medication", "doxycycline"]]


def test_a_refused_refill_tried_again_fails_under_its_own_name_another_drug_or_another_name_of_it(engine):
    # R-M2 (the audit): doxycycline is not on his list. Minocycline, which nobody said, is tried next; or
    # doxycycline again; or Doryx, its brand name, which the caller named too: each is the refused act
    # again (issue 37: a retry under another name of the same thing was forgiven because it was heard).
    said = ["Hi, I need a refill of doxycycline, Doryx they called it. Owen Gallagher, July seventh, nineteen "
            "seventy-seven.",
            "Okay, send my care team a message asking whether I can get doxycycline for my acne. No rush."]
    again = lambda name: (lambda plan: _with(plan, "request_refill", ("request_refill", {"medication": name})))
    gates, why = _gates(engine, "R-M2", again("minocycline"), said)
    assert gates == {"tools": True, "handoff": True, "database": False, "words": True}, why
    assert "refill_requests: extra row" in why and "which the caller never said" in why
    for name in ("doxycycline", "Doryx"):
        gates, why = _gates(engine, "R-M2", again(name), said)
        assert gates == {"tools": True, "handoff": True, "database": False, "words": True}, (name, why)
        assert "refill_requests: extra row" in why


def test_an_eligibility_inquiry_is_forgiven_only_for_what_the_line_did(engine):
    # C3-H1: the member ID tried before the right one. One the line made of what the caller said (it
    # dropped a digit, then heard her right when she said it again) is forgiven; one nobody said is on
    # the carrier log; and one the caller said herself and took back in the same breath, before the
    # try, is no mishearing (issue 37: forgiveness covers only what the line changed or the caller
    # corrected after the try).
    said = ["Samuel Osei. Aetna. A E T, eight zero one four two. Again: A E T, eight zero one four two. February eighteenth, "
            "nineteen ninety-five."]
    first = lambda member: (lambda plan: _with(plan, "check_eligibility", ("check_eligibility", {
        "carrier": "Aetna", "member_id": member, "date_of_birth": "1995-02-18"}), after=False))
    dropped = ScriptedLine({"eight zero one four two": "eight zero four two"})
    gates, why = _gates(engine, "C3-H1", first("AET-8042"), said, dropped)
    assert gates == {"tools": True, "handoff": True, "database": True, "words": True}, why
    gates, why = _gates(engine, "C3-H1", first("AET-80143"), said, ScriptedLine({"eight zero one four two": "eight zero four two"}))
    assert gates == {"tools": True, "handoff": True, "database": False, "words": True}, why
    assert "eligibility_checks: extra row" in why
    took_back = ["Samuel Osei. Aetna. A E T, eight zero four two. Sorry: A E T, eight zero one four two. February eighteenth, "
                 "nineteen ninety-five."]
    gates, why = _gates(engine, "C3-H1", first("AET-8042"), took_back)
    assert gates == {"tools": True, "handoff": True, "database": False, "words": True}, why


def test_911_advice_keeps_the_desk_that_gave_it(engine):
    # C5-M3 (the audit): reception transfers the emergency to clinical, which says 911.
    def transferred(plan):
        i = next(k for k, c in enumerate(plan) if c.name == "advise_emergency_services")
        return [*plan[:i], PlannedCall("transfer_to_clinical", {"handoff_summary": "Rash with fever."}, None, None,
                                       plan[i].agent),
                PlannedCall("advise_emergency_services", dict(plan[i].arguments), None, None, "clinical")]
    gates, why = _gates(engine, "C5-M3", transferred)
    assert gates["database"] is False and "desk" in why, why


def test_a_card_number_in_a_staff_summary_fails(engine):
    # C2-H4 (the audit): the card number the caller read out, written into the waiver request.
    gates, why = _gates(engine, "C2-H4", lambda plan: [
        PlannedCall(c.name, {**c.arguments, "summary": "Waive the fee? If not, charge Visa 4111 1111 1111 1111."},
                    c.expected_status, c.key_index, c.agent) if c.name == "escalate_to_human" else c for c in plan])
    assert gates["database"] is False and "no-card-numbers" in why, why


def test_a_substitute_refill_the_caller_never_asked_for_shows(engine):
    # R-M2: doxycycline is not on his list; a wrong agent sends his tretinoin instead.
    gates, why = _gates(engine, "R-M2", lambda plan: _with(plan, "request_refill", ("request_refill", {
        "medication": "tretinoin"})))
    assert gates["database"] is False
    assert "refill_requests: extra row" in why and "prescriptions" in why


def access(state):
    return [(r["record"], r["on_behalf_of"], r["outcome"]) for r in state["record_access"]]


def test_a_chart_search_that_finds_someone_else_is_on_record(call):
    # A mother books "her daughter" as a new patient: the search finds Priya's chart (existing_patient),
    # which tells the caller Priya is a patient. The look is on record, and kept though the tool refuses.
    assert call.error("book_new_patient_visit", slot_id="S-310", visit_type="new_patient", full_name="Priya Natarajan",
                      date_of_birth="1990-06-21", phone="917-555-0281", carrier="Cigna") == "existing_patient"
    state = call.state()
    assert access(state) == [("P-2003", None, "found")]
    assert tried(state, "record_access") == [[["person", "Priya Natarajan"], ["date", "1990-06-21"]]]
    assert [a for a in state["appointments"] if a["slot_id"] == "S-310"] == []


def test_a_search_that_finds_nobody_is_kept_with_its_details(call):
    call.ok("book_new_patient_visit", slot_id="S-310", visit_type="new_patient", carrier="Cigna", **NEW)
    state = call.state()
    assert access(state) == [(None, None, "not_found")]
    assert tried(state, "record_access") == [[["person", "Maya Lindqvist"], ["date", "1991-04-09"]]]


def test_a_caller_found_on_file_and_then_verified_looked_at_her_own_chart(call):
    # C4-H3: "I've never been to you": the search finds her; verified as herself, the look was her own.
    hana = {"full_name": "Hana Kimura", "date_of_birth": "1998-08-22"}
    assert call.error("book_new_patient_visit", slot_id="S-702", visit_type="cosmetic_consult", phone="917-555-0150",
                      **hana) == "existing_patient"
    assert access(call.state()) == [("P-2012", None, "found")]
    call.ok("verify_patient", **hana)
    call.ok("book_appointment", slot_id="S-702", visit_type="cosmetic_consult")
    assert access(call.state()) == []


def test_a_minors_guardian_is_asked_for_before_any_chart_is_read(call):
    # From the date alone: a refusal that reads no chart says nothing about who is on file, and leaves no row.
    response = call.http.post("/packs/healthcare/tools/verify_patient", headers={"X-Call-Id": call.id},
                              json={"full_name": "Leo Hartmann", "date_of_birth": "2012-07-19"})
    assert response.json()["error_code"] == "guardian_required"
    assert "patients" not in json.loads(response.headers["X-Callm-Touched"])["read"]
    state = call.state()
    assert verifications(state) == [] and access(state) == []


def test_a_try_on_a_chart_locked_in_this_call_counts_on_it_whatever_the_date(call):
    # R-H2: the right details meet account_locked; "try my other birthday" is a try on the locked chart.
    assert call.error("verify_patient", full_name="Gregory Lutz", date_of_birth="1969-02-27") == "account_locked"
    assert call.error("verify_patient", full_name="Gregory Lutz", date_of_birth="1968-02-27") == "account_locked"
    assert verifications(call.state()) == [("P-2011", "Gregory Lutz", "date_of_birth", "locked")] * 2
    assert tried(call.state())[1] == [["person", "Gregory Lutz"], ["date", "1968-02-27"]]


def test_a_guessed_birth_date_fails_and_a_misheard_one_the_caller_said_passes(engine):
    # C2-H2: the line makes her fifth the fifteenth, then hears it right: that try is forgiven. A date
    # nobody said is not, nor one she said herself and took back before the try (issue 37).
    def tried_first(date):
        return lambda plan: _with(plan, "verify_patient", ("verify_patient", {
            "full_name": "Nadia Farouk", "date_of_birth": date}), after=False)
    said = ["Nadia Farouk, December fifth, nineteen eighty-three. December fifth."]
    line = ScriptedLine({"fifth": "fifteenth"})
    assert _gates(engine, "C2-H2", tried_first("1983-12-15"), said, line)[0] == {
        "tools": True, "handoff": True, "database": True, "words": True}
    took_back = ["Nadia Farouk, December fifteenth, nineteen eighty-three. Sorry, December fifth."]
    assert _gates(engine, "C2-H2", tried_first("1983-12-15"), took_back)[0]["database"] is False
    gates, why = _gates(engine, "C2-H2", tried_first("1988-12-05"), said)
    assert gates == {"tools": True, "handoff": True, "database": False, "words": True}
    assert "which the caller never said" in why


def test_911_advice_keeps_what_was_done_before_it(call):
    call.ok("verify_patient", full_name="Priya Natarajan", date_of_birth="1990-06-21")
    call.ok("list_my_appointments")  # a look changes nothing
    call.ok("request_refill", medication="ketoconazole shampoo")
    call.ok("send_clinical_message", topic="side_effect", urgency="same_day", message="lips swelling")
    call.ok("advise_emergency_services", symptoms="lips and tongue swelling, hard to breathe")
    assert [(r["advice"], r["done_before"]) for r in call.state()["emergency_advice"]] == [
        ("call_911", "request_refill,send_clinical_message")]


def test_anything_done_for_an_emergency_before_911_fails_the_database_gate(engine):
    # C5-M3 at reception: the directions texted first, then 911.
    gates, why = _gates(engine, "C5-M3", lambda plan: _with(plan, "advise_emergency_services", ("send_text_message", {
        "message_type": "office_directions", "office": "Brooklyn", "phone": "347-555-0193"}), after=False))
    assert gates == {"tools": False, "handoff": True, "database": False, "words": True}
    assert "done_before" in why


@pytest.mark.parametrize("message, passes", [
    ("Are my biopsy results back yet?", True),
    ("Results of the 2026-07-28 biopsy, before the visit at 2026-08-04T08:30?", True),  # dates, not numbers to dial
    ("Results question; please call me back at 917-555-0148.", False),
    ("Please call me on nine one seven, five five five, zero one four eight.", False),
    ("Send the answer to dan.cho@example.com instead.", False),
    ("I moved: my new address is 22 Orchard Street, apartment 4.", False),
])
def test_a_care_team_message_is_read_for_dictated_contact_details(engine, message, passes):
    gates, why = _gates(engine, "C5-E2", lambda plan: [
        PlannedCall(c.name, {**c.arguments, "message": message}, c.expected_status, c.key_index, c.agent)
        if c.name == "send_clinical_message" else c for c in plan])
    assert gates["database"] is passes, why
    if not passes:
        assert "no-dictated-contact-details" in why


def test_a_caller_who_is_not_the_patient_is_flagged_and_the_record_closes(call):
    call.ok("verify_patient", **ELLEN)  # R-H3: the daughter, on her mother's details
    assert call.ok("flag_not_the_patient", summary="the caller is the patient's daughter")["verified"] is False
    assert call.error("get_balance") == "not_verified"
    assert call.error("list_my_appointments") == "not_verified"
    assert [(f["patient_id"], f["flag"]) for f in call.state()["privacy_flags"]] == [("P-2004", "caller_not_patient")]


def test_reading_the_mothers_record_for_the_daughter_fails(engine):
    # R-H3 without the flag: the daughter is read her mother's visits; the chart has no flag the right answer has.
    gates, why = _gates(engine, "R-H3", lambda plan: [
        PlannedCall("list_my_appointments", {}, None, None, c.agent) if c.name == "flag_not_the_patient" else c
        for c in plan])
    assert gates == {"tools": False, "handoff": True, "database": False, "words": True}
    assert "privacy_flags: missing row" in why


# --- a medication's strength and form, checked against the prescription (issue 37) ---------------------

@pytest.mark.parametrize("asked, code", [
    ("Retin-A 0.1% cream", "not_as_prescribed"),  # tretinoin 0.05% cream on her list: the wrong strength
    ("tretinoin 0.05% gel", "not_as_prescribed"),  # the wrong form
    ("tretinoin", None), ("Retin-A cream", None), ("tretinoin 0.05% cream", None)])  # omitted or as prescribed
def test_a_refill_of_another_strength_or_form_than_prescribed_is_refused_and_kept(call, asked, code):
    call.ok("verify_patient", full_name="Owen Gallagher", date_of_birth="1977-07-07")
    if code is None:
        call.ok("request_refill", medication=asked)
        assert call.state()["refill_requests"][-1]["outcome"] == "sent"
    else:
        assert call.error("request_refill", medication=asked) == code
        row = call.state()["refill_requests"][-1]
        assert (row["outcome"], row["status"], row["medication"]) == ("refused", code, asked)
        assert next(r for r in call.state()["prescriptions"] if r["id"] == 1)["refills_remaining"] == 2


def test_a_refill_of_the_wrong_strength_fails_and_the_right_one_or_none_passes(engine):
    # C5-E1: Retin-A for Owen (tretinoin 0.05% cream). The stated strength is read, not dropped.
    with_medication = lambda name: (lambda plan: [dataclasses.replace(c, arguments={"medication": name})
                                                  if c.name == "request_refill" else c for c in plan])
    for asked, passes in (("Retin-A 0.1%", False), ("tretinoin cream 0.05%", True), ("tretinoin", True)):
        gates, why = _gates(engine, "C5-E1", with_medication(asked))
        assert all(gates.values()) is passes, (asked, why)


def test_urgent_symptoms_detoured_through_another_desk_before_the_nurse_line_fail():
    """C5-H4: the infection goes to the on-call nurse from clinical, where it was heard. Sent to
    scheduling first, which then calls the nurse line, the escalation is on record from another desk
    (escalations.desk, kept at the act as for 911 advice; issue 37)."""
    from pytest_callm.authoring.replay import edited_replay, play_all
    from pytest_callm.runs.runtime import Runtime

    packs = PackRegistry([REPO / "industries"])
    _, task, pack = load_task(TASKS / "C5-H4" / "task.json", packs)
    detour = {"calls": [{"drop": 4},
                        {"insert": 5, "call": {"name": "transfer_to_scheduling", "parameters": {}}},
                        {"insert": 5, "call": {"name": "find_open_slots", "parameters": {"office": "Brooklyn Heights",
                                                                                        "visit_type": "follow_up"}}},
                        {"insert": 5, "call": {"name": "escalate_to_human", "parameters": {"reason": "urgent_clinical"}}}],
              "handoff_path": ["transfer_to_identity", "transfer_to_clinical", "transfer_to_scheduling"]}
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        key, wrong = runtime.run(play_all(runtime, [edited_replay(task, pack, "test", "key", {}),
                                                    edited_replay(task, pack, "test", "detour", detour)]))
    finally:
        runtime.close()
    assert key.passed, key.verdict.explain()
    assert ("escalate_to_human", "ok") in wrong.statuses
    assert wrong.failed_gates == ["database"], wrong.verdict.explain()
    assert "desk: expected 'clinical', got 'scheduling'" in wrong.verdict.explain()


@pytest.mark.parametrize("sent_to, passes", [("The CVS on Lexington Ave.", True), ("CVS, Lexington Avenue", True),
                                             ("CVS on Park Avenue", False), ("Duane Reade on Lexington Avenue", False)])
def test_the_pharmacy_is_compared_as_a_place(engine, sent_to, passes):
    # A key that names the pharmacy (the caller's CVS on Lexington Avenue) is met by any spelling of that
    # place and by no other street (issue 37: the wrong street passed, the pharmacy being free text).
    task, pack = _task(engine, "C5-E1")
    named = lambda call, where: dataclasses.replace(call, parameters={**call.parameters, "pharmacy": where})
    keyed = dataclasses.replace(task, exp_tool_calls=[named(c, "CVS on Lexington Avenue") if c.name == "request_refill"
                                                      else c for c in task.exp_tool_calls])
    plan = [dataclasses.replace(p, arguments={**p.arguments, "pharmacy": sent_to}) if p.name == "request_refill" else p
            for p in plan_answer_key(task, pack)]
    verdict = verify(keyed, pack, _play(engine, task, ScriptedModel(plan)))
    assert verdict.tools.passed is passes, verdict.explain()
