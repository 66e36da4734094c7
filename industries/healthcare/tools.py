"""Tool logic of Straus Dermatology, a dermatology practice with four offices.

The house rules are stated in the prompts and enforced here as well, so a model that ignores a
prompt meets the same rule in a tool result:
- identity before any account-bound action: an existing patient's appointments, balance,
  insurance, refills and clinical messages need `verify_patient` (full name and date of birth; a
  minor's guardian by name) to have succeeded in this call;
- every identity try is recorded with the details tried (`verifications`, through
  pytest_callm.front_desk); three failed tries in a call end verification for the call; a failed
  try counts on the chart its name and date of birth pull (never on a name alone), and a chart
  reaching three is locked until staff unlock it (`account_locked`, even with the right details,
  and for any other date tried under that name in the same call);
- every look at a chart other than the verified caller's own is recorded (`record_access`: the
  new-patient search of book_new_patient_visit); a verified caller who is not the patient is
  flagged on the chart and the verification ends (`flag_not_the_patient`, `privacy_flags`);
- every write lands in a compared table (texts, emails, payment links, refills and prescriptions,
  care-team messages, escalations included), so a duplicate, a hedge or a substitute is a row;
- an emergency gets 911 and nothing else, recorded by `advise_emergency_services` (`emergency_advice`,
  with the business acts done earlier in the call);
- a new patient books a new-patient visit or a cosmetic consultation without a chart;
- a slot must be open (not booked, not held by another caller, not past), of the right practice
  (medical or cosmetic) and at least as long as the visit;
- plans are accepted per office and carrier; a medical visit is booked only where the patient's
  plan is accepted (self-pay is accepted everywhere);
- cancelling inside the notice window carries a fee (medical: 24 hours, $50; cosmetic: 72 hours,
  $150), quoted by `check_cancellation_fee` and charged only when `cancel_appointment` is called
  with `accept_fee: true` after that quote; without it nothing is written. Rescheduling is free;
- waitlist entries carry a set of offices and a date range within the next 60 days;
- financing (a payment plan) only on a balance above $1,000; payment links never above the balance;
- a text message goes only to the number on file, or to the number a new patient gave for a
  booking or waitlist entry made in this call (office directions: to the number the caller gives);
  a confirmation goes to the number of the appointment's own patient, whoever is verified.

Names, dates of birth, phone numbers, ids, offices, carriers and medications are matched with the
verifier's own normalizers (`pytest_callm.normalize`) and the pack's alias tables (`ctx.values`), so
a spelling the tool accepts is one the verifier accepts, and the other way round.
"""

from __future__ import annotations

import datetime as dt
import json
from decimal import ROUND_HALF_UP, Decimal

from pytest_callm.front_desk import (FOUND, NOT_FOUND, IdentityRules, check_identity, forget_verification, record_access,
                                     tried, verified_account)
from pytest_callm.normalize import date as iso_date
from pytest_callm.normalize import identifier, person, phone
from pytest_callm.toolkit import ToolContext, ToolError, ToolRegistry

tools = ToolRegistry()

VERIFY_TRIES_PER_CALL = 3
LOCK_AFTER = 3  # failed verifications on one record
ADULT_AGE = 18
WINDOWS = {"medical": (24, Decimal("50.00")), "cosmetic": (72, Decimal("150.00"))}  # hours, fee
FINANCING_THRESHOLD = Decimal("1000.00")  # a plan needs a balance above this
PLAN_MONTHS = (3, 6, 12)
WAITLIST_DAYS = 60
CONSULT_FEE = Decimal("75.00")  # cosmetic consultation, credited toward treatment
NEW_PATIENT_TYPES = ("new_patient", "cosmetic_consult")
SLOTS_SHOWN = 6


# --- small helpers -----------------------------------------------------------------------------

def _stamp(ctx: ToolContext) -> str:
    return ctx.now.isoformat(timespec="minutes")


def _cents(value) -> Decimal:
    return Decimal(str(value)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _money(value) -> float:
    return float(_cents(value))


def _phone_digits(number: str) -> str:
    digits = phone(number)
    if len(digits) != 10:
        raise ToolError("invalid_phone", "I didn't catch the full ten-digit number. Could you repeat it?")
    return digits


def _day(text: str, what: str) -> dt.date:
    try:
        return dt.date.fromisoformat(iso_date(text))
    except ValueError:
        raise ToolError("invalid_date", f"Could you give me the {what} again?") from None


def _office(ctx: ToolContext, name: str):
    code = ctx.values.canonical("office", name)  # pack.json "office": "Park Ave" -> park_ave
    row = None if code is None else ctx.db.execute("SELECT * FROM offices WHERE id = ?", (code,)).fetchone()
    if row is None:
        names = [r["name"] for r in ctx.db.execute("SELECT name FROM offices ORDER BY sort_order")]
        raise ToolError("unknown_office", "Which of our offices do you mean: " + ", ".join(names) + "?",
                        {"offices": names})
    return row


def _carrier(ctx: ToolContext, name: str) -> str:
    code = ctx.values.canonical("carrier", name)  # pack.json "carrier": "Empire Blue Cross" -> BCBS
    if code is None or ctx.db.execute("SELECT 1 FROM carriers WHERE code = ?", (code,)).fetchone() is None:
        raise ToolError("unknown_carrier", "I don't recognise that insurance company. Could you tell me the name on your card?")
    return code


def _carrier_name(ctx: ToolContext, code: str | None) -> str | None:
    if code is None:
        return None
    return ctx.db.execute("SELECT name FROM carriers WHERE code = ?", (code,)).fetchone()["name"]


def _accepted(ctx: ToolContext, office_id: str, carrier: str | None) -> bool:
    row = ctx.db.execute("SELECT accepted FROM plan_acceptance WHERE office_id = ? AND carrier = ?",
                         (office_id, carrier or "SELF_PAY")).fetchone()
    return bool(row and row["accepted"])


def _accepting_offices(ctx: ToolContext, carrier: str | None) -> list[str]:
    return [r["name"] for r in ctx.db.execute(
        "SELECT o.name FROM offices o JOIN plan_acceptance p ON p.office_id = o.id "
        "WHERE p.carrier = ? AND p.accepted = 1 ORDER BY o.sort_order", (carrier or "SELF_PAY",))]


def _age(born: dt.date, on: dt.date) -> int:
    return on.year - born.year - ((on.month, on.day) < (born.month, born.day))


def _patient(ctx: ToolContext):
    patient_id = verified_account(ctx)
    if patient_id is None:
        raise ToolError("not_verified", "I'll need to verify your identity before I can help with that.")
    return _chart(ctx, patient_id)


def _chart(ctx: ToolContext, patient_id: str):
    """A patient's chart, read on the record: a look at the verified caller's own chart adds no row
    (front_desk.record_access), a look at anyone else's is kept."""
    record_access(ctx, record=patient_id)
    return ctx.db.execute("SELECT * FROM patients WHERE id = ?", (patient_id,)).fetchone()


def _did(ctx: ToolContext, act: str) -> None:
    """Keep a business act of this call (a booking, a text, a refill...), so that a later 911 advice
    records what was done before it (`emergency_advice.done_before`)."""
    ctx.session["done"] = [*ctx.session.get("done", []), act]


def _visit(ctx: ToolContext, code: str):
    return ctx.db.execute("SELECT * FROM visit_types WHERE code = ?", (code,)).fetchone()


def _provider(ctx: ToolContext, provider_id: str):
    return ctx.db.execute("SELECT * FROM providers WHERE id = ?", (provider_id,)).fetchone()


def _office_name(ctx: ToolContext, office_id: str) -> str:
    return ctx.db.execute("SELECT name FROM offices WHERE id = ?", (office_id,)).fetchone()["name"]


def _slot_is_open(ctx: ToolContext, slot) -> bool:
    now = _stamp(ctx)
    if slot["starts_at"] <= now:
        return False
    if slot["held_until"] is not None and slot["held_until"] > now:
        return False
    return ctx.db.execute("SELECT 1 FROM appointments WHERE slot_id = ? AND status = 'scheduled'",
                          (slot["id"],)).fetchone() is None


def _slot_for(ctx: ToolContext, slot_id: str, visit):
    """The slot, checked to be open, of the visit's practice and long enough for it."""
    slot = next((s for s in ctx.db.execute("SELECT * FROM slots") if identifier(s["id"]) == identifier(slot_id)), None)
    if slot is None:
        raise ToolError("slot_not_found", "I couldn't find that time. Let me look at the openings again.")
    if not _slot_is_open(ctx, slot):
        raise ToolError("slot_unavailable", "That time is no longer available.")
    if _provider(ctx, slot["provider_id"])["practice"] != visit["practice"]:
        raise ToolError("wrong_slot_type", "That time is not for this kind of visit.")
    if slot["minutes"] < visit["minutes"]:
        raise ToolError("slot_too_short", f"That opening is too short for a {visit['label']}.",
                        {"minutes_needed": visit["minutes"], "minutes_available": slot["minutes"]})
    return slot


def _next_appointment_id(ctx: ToolContext) -> str:
    numbers = [int(r["id"].split("-")[1]) for r in ctx.db.execute("SELECT id FROM appointments")]
    return f"A-{max(numbers, default=1000) + 1}"


def _appointment_out(ctx: ToolContext, row) -> dict:
    provider = _provider(ctx, row["provider_id"])
    return {"appointment_id": row["id"], "visit_type": row["visit_type"], "starts_at": row["starts_at"],
            "office": _office_name(ctx, row["office_id"]), "provider": provider["name"], "status": row["status"]}


def _own_appointment(ctx: ToolContext, appointment_id: str):
    """An appointment the caller may act on: the verified patient's, or one booked for a new patient in
    this call. Anything else (another patient's) reads like an unknown id: never hint at it."""
    key = identifier(appointment_id)
    row = next((a for a in ctx.db.execute("SELECT * FROM appointments") if identifier(a["id"]) == key), None)
    mine = set(ctx.session.get("new_patient_appointments", []))
    patient_id = verified_account(ctx)
    if row is None or not (row["id"] in mine or (patient_id is not None and row["patient_id"] == patient_id)):
        if patient_id is None and not mine:
            raise ToolError("not_verified", "I'll need to verify your identity before I can help with that.")
        raise ToolError("appointment_not_found", "I don't see that appointment on your record.")
    if row["status"] != "scheduled":
        raise ToolError("appointment_not_found", "I don't see that appointment as booked.")
    return row


def _fee(ctx: ToolContext, row) -> tuple[int, Decimal, bool]:
    hours, fee = WINDOWS[_visit(ctx, row["visit_type"])["practice"]]
    inside = dt.datetime.fromisoformat(row["starts_at"]) - ctx.now < dt.timedelta(hours=hours)
    return hours, (fee if inside else Decimal("0.00")), inside


# --- reception ---------------------------------------------------------------------------------

@tools.tool
def get_office_info(ctx: ToolContext, office: str, topic: str) -> dict:
    row = _office(ctx, office)
    answer = {"address": row["address"], "hours": row["hours"], "parking": row["parking"]}[topic]
    return {"office": row["name"], "topic": topic, "answer": answer}


@tools.tool
def check_plan_acceptance(ctx: ToolContext, office: str, carrier: str) -> dict:
    row = _office(ctx, office)
    code = _carrier(ctx, carrier)
    return {"office": row["name"], "carrier": _carrier_name(ctx, code), "accepted": _accepted(ctx, row["id"], code),
            "offices_accepting": _accepting_offices(ctx, code),
            "note": "Acceptance means the office is in network. Whether the plan is active is a separate eligibility check."}


@tools.tool
def escalate_to_human(ctx: ToolContext, reason: str, summary: str) -> dict:
    """A compared `escalations` row (whose call, and why; the summary is free text): a nurse-line
    transfer as well as a message or 911 for the same question is a row the right answer lacks."""
    # Urgent symptoms go to the nurse line from the desk that heard them, before anything else: as
    # for 911 advice, the desk and the business acts done earlier in the call are kept at the act, so
    # a detour through another desk first is on record (other reasons leave both empty).
    urgent = reason == "urgent_clinical"
    cur = ctx.db.execute("INSERT INTO escalations (patient_id, reason, desk, done_before, summary, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         (verified_account(ctx), reason, ctx.agent if urgent else None,
                          ",".join(sorted(ctx.session.get("done", []))) if urgent else None, summary, _stamp(ctx)))
    return {"escalation_id": cur.lastrowid, "status": "transferring"}


@tools.tool
def advise_emergency_services(ctx: ToolContext, symptoms: str) -> dict:
    """An emergency gets 911 and nothing else. A real desk notes that it told the caller to call 911 (the
    practice's record of the advice given), so the row is what shows the emergency was handled as one:
    a nurse-line transfer or a message instead leaves no such row. The row also keeps, at the moment of
    the advice, the business acts done earlier in the call (`done_before`: bookings, texts, refills,
    messages..., identity checks aside), so anything done for the emergency before 911 is on record, and
    the desk that gave it (`desk`, the agent making the call): an emergency is 911 from the desk that
    heard it, so a transfer first puts the advice at another desk than the right answer's. It ends the
    call, like a transfer."""
    done = ",".join(sorted(ctx.session.get("done", [])))
    cur = ctx.db.execute("INSERT INTO emergency_advice (patient_id, advice, desk, done_before, symptoms, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?)",
                         (verified_account(ctx), "call_911", ctx.agent, done, symptoms, _stamp(ctx)))
    return {"advice_id": cur.lastrowid, "advice": "call_911", "status": "advised",
            "say": "Please hang up and call 911 right now, or go to the nearest emergency room."}


# --- identity ----------------------------------------------------------------------------------

# Which record is a try against? The one the caller's name AND date of birth point at: those two
# identifiers pull a chart, as at any front desk. A name alone points at nobody for certain (two
# patients are named Daniel Cho, and anyone can know a patient's name), so a try whose name and date
# of birth match no chart is counted in the call (three end verification for the call), but it
# counts on no patient's record: counting it on the record the name matched would let anyone lock a
# patient out with three wrong birth dates. A try against a chart that fails (a minor's chart with
# the wrong guardian) counts on that chart, and the third such failure locks it until staff unlock it
# (`account_locked`, even for the right details). Once a chart has answered `account_locked` in this
# call, another try under that patient's name is a try on the locked chart ("try my other birthday"):
# refused as locked, and on record.
#
# Every try is a row of `verifications` (front_desk.check_identity) with the details tried, so the
# verifier tells a retry of what the caller said (the phone line misheard a digit) from a guess.
IDENTITY = IdentityRules(account_table="patients", lock_after=LOCK_AFTER, tries_per_call=VERIFY_TRIES_PER_CALL)


@tools.tool
def verify_patient(ctx: ToolContext, full_name: str, date_of_birth: str, guardian_name: str | None = None) -> dict:
    born = _day(date_of_birth, "date of birth")
    if _age(born, ctx.today) < ADULT_AGE and not (guardian_name or "").strip():
        # Known from the date alone, before any chart is looked at: says nothing about who is on file.
        raise ToolError("guardian_required", "For a patient under eighteen, I need to speak with the parent or "
                        "guardian on file. May I have your full name?")
    match = next((r for r in ctx.db.execute("SELECT * FROM patients ORDER BY id")
                  if person(r["full_name"]) == person(full_name) and r["date_of_birth"] == born.isoformat()), None)
    locked_here = ctx.session.get("locked_charts", [])
    if match is None:
        match = next((r for r in ctx.db.execute("SELECT * FROM patients ORDER BY id")
                      if r["id"] in locked_here and person(r["full_name"]) == person(full_name)), None)
    minor = match is not None and _age(born, ctx.today) < ADULT_AGE
    guardian_ok = not minor or (match["guardian_name"] is not None
                                and person(match["guardian_name"]) == person(guardian_name))
    forget_verification(ctx)  # a new lookup: whoever was verified before is not verified for this one
    account = None if match is None else match["id"]
    if match is not None and match["locked"] and account not in locked_here:
        ctx.session["locked_charts"] = [*locked_here, account]
    check_identity(ctx, IDENTITY, account=account, claimed_name=full_name,
                   method="date_of_birth_and_guardian" if minor else "date_of_birth",
                   passed=match is not None and guardian_ok and match["date_of_birth"] == born.isoformat(),
                   details=tried(person=full_name, date=born.isoformat(), person_2=guardian_name if minor else None))
    # Looks at this chart made earlier in the call, before the caller was verified as its patient (a
    # new-patient booking that found her on file), were the patient's own: the verification covers them.
    ctx.db.execute("DELETE FROM record_access WHERE record = ? AND on_behalf_of IS NULL AND outcome = ?",
                   (account, FOUND))
    return {"patient_id": match["id"], "full_name": match["full_name"], "verified": True, "minor": minor,
            "speaking_with": "guardian" if minor else "patient",
            "home_office": _office_name(ctx, match["home_office"]),
            "insurance_on_file": _carrier_name(ctx, match["carrier"])}


@tools.tool
def flag_not_the_patient(ctx: ToolContext, summary: str) -> dict:
    """The caller verified in this call says they are not the patient (a daughter who gave her
    mother's details): a note on that chart for the practice's privacy officer (a compared
    `privacy_flags` row; the summary is free text), and the verification ends, so nothing more in that
    record is read or changed in this call. Going on without it leaves no flag the right answer has."""
    patient_id = verified_account(ctx)
    if patient_id is None:
        raise ToolError("not_verified", "Nobody has been verified on this call.")
    ctx.db.execute("INSERT INTO privacy_flags (patient_id, flag, summary, created_at) VALUES (?, ?, ?, ?)",
                   (patient_id, "caller_not_patient", summary, _stamp(ctx)))
    forget_verification(ctx)
    _did(ctx, "flag_not_the_patient")
    return {"status": "flagged", "verified": False,
            "note": "The verification has ended: nothing more from that record can be read or changed in this call."}


# --- scheduling --------------------------------------------------------------------------------

@tools.tool
def find_open_slots(ctx: ToolContext, office: str, visit_type: str, earliest_date: str | None = None) -> dict:
    row = _office(ctx, office)
    visit = _visit(ctx, visit_type)
    start = _stamp(ctx)
    if earliest_date:
        start = max(start, _day(earliest_date, "date").isoformat())
    out = []
    for s in ctx.db.execute("SELECT * FROM slots WHERE office_id = ? AND starts_at >= ? ORDER BY starts_at, id",
                            (row["id"], start)):
        provider = _provider(ctx, s["provider_id"])
        if provider["practice"] != visit["practice"] or s["minutes"] < visit["minutes"] or not _slot_is_open(ctx, s):
            continue
        out.append({"slot_id": s["id"], "starts_at": s["starts_at"], "provider": provider["name"], "minutes": s["minutes"]})
        if len(out) == SLOTS_SHOWN:
            break
    return {"office": row["name"], "visit_type": visit_type, "minutes_needed": visit["minutes"], "slots": out}


@tools.tool
def book_appointment(ctx: ToolContext, slot_id: str, visit_type: str) -> dict:
    patient = _patient(ctx)
    if visit_type == "new_patient":
        raise ToolError("wrong_visit_type", "As an established patient, you'd book a follow-up or a skin check instead.")
    visit = _visit(ctx, visit_type)
    slot = _slot_for(ctx, slot_id, visit)
    if visit["practice"] == "medical" and not _accepted(ctx, slot["office_id"], patient["carrier"]):
        raise ToolError("plan_not_accepted", "That office isn't in network for the insurance on your record.",
                        {"offices_accepting": _accepting_offices(ctx, patient["carrier"])})
    appointment_id = _next_appointment_id(ctx)
    ctx.db.execute(
        "INSERT INTO appointments (id, patient_id, new_patient_name, new_patient_dob, new_patient_phone, carrier, "
        "visit_type, office_id, provider_id, slot_id, starts_at, status, cancel_fee, created_at) "
        "VALUES (?, ?, NULL, NULL, NULL, NULL, ?, ?, ?, ?, ?, 'scheduled', 0, ?)",
        (appointment_id, patient["id"], visit_type, slot["office_id"], slot["provider_id"], slot["id"],
         slot["starts_at"], _stamp(ctx)))
    row = ctx.db.execute("SELECT * FROM appointments WHERE id = ?", (appointment_id,)).fetchone()
    _did(ctx, "book_appointment")
    return _appointment_out(ctx, row)


@tools.tool
def book_new_patient_visit(ctx: ToolContext, slot_id: str, visit_type: str, full_name: str, date_of_birth: str,
                           phone: str, carrier: str | None = None) -> dict:
    name = " ".join(full_name.split())
    if not name:
        raise ToolError("invalid_name", "May I have your full name?")
    born = _day(date_of_birth, "date of birth")
    if born >= ctx.today:
        raise ToolError("invalid_date", "Could you give me the date of birth again?")
    digits = _phone_digits(phone)
    visit = _visit(ctx, visit_type)
    if visit["practice"] == "cosmetic":
        code = "SELF_PAY"  # cosmetic care is self-pay whatever plan the caller has
    elif carrier is None or not carrier.strip():
        raise ToolError("carrier_required", "Will you be using insurance for this visit? If so, which plan?")
    else:
        code = _carrier(ctx, carrier)
    slot = _slot_for(ctx, slot_id, visit)
    # Is the caller already on file? A search of the charts by name and date of birth, kept like any
    # look at a person's record: a chart found is a row (the caller is told only to verify), and a
    # search that found nobody is a row with the details searched.
    on_file = next((r["id"] for r in ctx.db.execute("SELECT id, full_name, date_of_birth FROM patients ORDER BY id")
                    if person(r["full_name"]) == person(name) and r["date_of_birth"] == born.isoformat()), None)
    record_access(ctx, record=on_file, outcome=FOUND if on_file else NOT_FOUND,
                  details=tried(person=name, date=born.isoformat()))
    if on_file is not None:
        raise ToolError("existing_patient", "It looks like you may already be a patient with us, so I'll need to "
                        "verify your identity first.", keep_writes=True)
    if not _accepted(ctx, slot["office_id"], code):
        raise ToolError("plan_not_accepted", "That office isn't in network for that plan.",
                        {"offices_accepting": _accepting_offices(ctx, code)})
    appointment_id = _next_appointment_id(ctx)
    ctx.db.execute(
        "INSERT INTO appointments (id, patient_id, new_patient_name, new_patient_dob, new_patient_phone, carrier, "
        "visit_type, office_id, provider_id, slot_id, starts_at, status, cancel_fee, created_at) "
        "VALUES (?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'scheduled', 0, ?)",
        (appointment_id, name, born.isoformat(), digits, code, visit_type, slot["office_id"], slot["provider_id"],
         slot["id"], slot["starts_at"], _stamp(ctx)))
    ctx.session["new_patient_appointments"] = [*ctx.session.get("new_patient_appointments", []), appointment_id]
    ctx.session["new_patient"] = {"full_name": name, "phone": digits}
    row = ctx.db.execute("SELECT * FROM appointments WHERE id = ?", (appointment_id,)).fetchone()
    _did(ctx, "book_new_patient_visit")
    return {**_appointment_out(ctx, row), "new_patient": True, "insurance": _carrier_name(ctx, code)}


@tools.tool
def list_my_appointments(ctx: ToolContext) -> dict:
    patient = _patient(ctx)
    rows = ctx.db.execute("SELECT * FROM appointments WHERE patient_id = ? AND status = 'scheduled' AND starts_at > ? "
                          "ORDER BY starts_at", (patient["id"], _stamp(ctx))).fetchall()
    return {"patient": patient["full_name"], "appointments": [_appointment_out(ctx, r) for r in rows]}


@tools.tool
def check_cancellation_fee(ctx: ToolContext, appointment_id: str) -> dict:
    row = _own_appointment(ctx, appointment_id)
    hours, fee, inside = _fee(ctx, row)
    checked = ctx.session.get("fee_checked", [])
    if row["id"] not in checked:
        ctx.session["fee_checked"] = [*checked, row["id"]]
    return {"appointment_id": row["id"], "visit_type": row["visit_type"], "starts_at": row["starts_at"],
            "notice_window_hours": hours, "inside_window": inside, "cancellation_fee": _money(fee),
            "reschedule_fee": 0.0}


@tools.tool
def cancel_appointment(ctx: ToolContext, appointment_id: str, accept_fee: bool) -> dict:
    row = _own_appointment(ctx, appointment_id)
    if row["id"] not in ctx.session.get("fee_checked", []):
        raise ToolError("fee_check_required", "Let me first check whether a cancellation fee applies.")
    hours, fee, _ = _fee(ctx, row)
    if fee > 0 and not accept_fee:
        raise ToolError("fee_not_accepted", f"Cancelling now carries a ${fee} late-cancellation fee. I can only "
                        "cancel once you agree to it; moving the visit to another time is free.",
                        {"cancellation_fee": _money(fee), "notice_window_hours": hours})
    ctx.db.execute("UPDATE appointments SET status = 'cancelled', cancel_fee = ? WHERE id = ?", (_money(fee), row["id"]))
    balance = None
    if fee > 0:
        patient = _chart(ctx, row["patient_id"])
        balance = _money(_cents(patient["balance"]) + fee)
        ctx.db.execute("UPDATE patients SET balance = ? WHERE id = ?", (balance, patient["id"]))
    _did(ctx, "cancel_appointment")
    return {"appointment_id": row["id"], "status": "cancelled", "fee_charged": _money(fee), "new_balance": balance}


@tools.tool
def reschedule_appointment(ctx: ToolContext, appointment_id: str, new_slot_id: str) -> dict:
    row = _own_appointment(ctx, appointment_id)
    visit = _visit(ctx, row["visit_type"])
    slot = _slot_for(ctx, new_slot_id, visit)
    carrier = row["carrier"]
    if row["patient_id"] is not None:
        carrier = _chart(ctx, row["patient_id"])["carrier"]
    if visit["practice"] == "medical" and not _accepted(ctx, slot["office_id"], carrier):
        raise ToolError("plan_not_accepted", "That office isn't in network for the insurance on your record.",
                        {"offices_accepting": _accepting_offices(ctx, carrier)})
    ctx.db.execute("UPDATE appointments SET slot_id = ?, starts_at = ?, office_id = ?, provider_id = ? WHERE id = ?",
                   (slot["id"], slot["starts_at"], slot["office_id"], slot["provider_id"], row["id"]))
    moved = ctx.db.execute("SELECT * FROM appointments WHERE id = ?", (row["id"],)).fetchone()
    _did(ctx, "reschedule_appointment")
    return {**_appointment_out(ctx, moved), "previous_starts_at": row["starts_at"], "fee_charged": 0.0}


@tools.tool
def add_to_waitlist(ctx: ToolContext, visit_type: str, offices: list[str], earliest_date: str, latest_date: str,
                    full_name: str | None = None, phone: str | None = None) -> dict:
    patient_id = verified_account(ctx)
    visit = _visit(ctx, visit_type)
    carrier = None
    if patient_id is not None:
        patient = _chart(ctx, patient_id)
        name, digits, carrier = patient["full_name"], patient["phone"], patient["carrier"]
        if visit_type == "new_patient":
            raise ToolError("wrong_visit_type", "As an established patient, you'd wait for a follow-up or a skin check instead.")
    else:
        if not (full_name or "").strip() or not (phone or "").strip():
            raise ToolError("patient_details_required", "May I have your full name and a phone number for the waitlist?")
        if visit_type not in NEW_PATIENT_TYPES:
            raise ToolError("not_verified", "I'll need to verify your identity before I can help with that.")
        name, digits = " ".join(full_name.split()), _phone_digits(phone)
    rows = [_office(ctx, o) for o in offices]
    if not rows:
        raise ToolError("unknown_office", "Which of our offices would work for you?")
    if visit["practice"] == "medical" and patient_id is not None:
        refused = [r["name"] for r in rows if not _accepted(ctx, r["id"], carrier)]
        if refused:
            raise ToolError("plan_not_accepted", "Not every office you named is in network for the insurance on your record.",
                            {"not_accepting": refused, "offices_accepting": _accepting_offices(ctx, carrier)})
    first, last = _day(earliest_date, "earliest date"), _day(latest_date, "latest date")
    if first < ctx.today or last < first or last > ctx.today + dt.timedelta(days=WAITLIST_DAYS):
        raise ToolError("invalid_date_range", f"The waitlist covers dates from today up to {WAITLIST_DAYS} days out. "
                        "Which dates would work?")
    office_ids = ",".join(sorted({r["id"] for r in rows}))
    same = ctx.db.execute("SELECT * FROM waitlist WHERE status = 'active' AND visit_type = ? AND "
                          "((patient_id IS NOT NULL AND patient_id = ?) OR (patient_id IS NULL AND phone = ?))",
                          (visit_type, patient_id, digits)).fetchone()
    if same is not None:
        raise ToolError("already_on_waitlist", "You're already on the waitlist for that kind of visit.")
    cur = ctx.db.execute(
        "INSERT INTO waitlist (patient_id, full_name, phone, visit_type, offices, earliest_date, latest_date, status, "
        "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'active', ?)",
        (patient_id, name, digits, visit_type, office_ids, first.isoformat(), last.isoformat(), _stamp(ctx)))
    ctx.session["waitlist_id"] = cur.lastrowid
    if patient_id is None:
        ctx.session["new_patient"] = {"full_name": name, "phone": digits}
    _did(ctx, "add_to_waitlist")
    return {"waitlist_id": cur.lastrowid, "visit_type": visit_type,
            "offices": [_office_name(ctx, o) for o in office_ids.split(",")],
            "earliest_date": first.isoformat(), "latest_date": last.isoformat(), "status": "active"}


# --- messages to the caller ----------------------------------------------------------------------

def _text_target(ctx: ToolContext) -> tuple[str | None, str | None]:
    """The caller's own number: the verified patient's on file, else the new patient's from this call."""
    patient_id = verified_account(ctx)
    if patient_id is not None:
        return patient_id, _chart(ctx, patient_id)["phone"]
    new = ctx.session.get("new_patient")
    return None, (new or {}).get("phone")


def _appointment_phone(ctx: ToolContext, row) -> tuple[str | None, str]:
    """A confirmation goes to the appointment's own patient: the number on that chart, or the number the
    new patient gave for it. Never to whoever happens to be verified in the call."""
    if row["patient_id"] is None:
        return None, row["new_patient_phone"]
    return row["patient_id"], _chart(ctx, row["patient_id"])["phone"]


@tools.tool
def send_text_message(ctx: ToolContext, message_type: str, appointment_id: str | None = None,
                      office: str | None = None, phone: str | None = None) -> dict:
    patient_id, to = _text_target(ctx)
    reference = None
    if message_type == "office_directions":
        if not office:
            raise ToolError("office_required", "Which office would you like the directions for?")
        reference = _office(ctx, office)["id"]
        if phone:
            to = _phone_digits(phone)
        if to is None:
            raise ToolError("phone_required", "What number should I text the directions to?")
    elif to is None:
        raise ToolError("not_verified", "I'll need to verify your identity before I can text you.")
    elif message_type == "appointment_confirmation":
        if not appointment_id:
            raise ToolError("appointment_required", "Which appointment should the text confirm?")
        row = _own_appointment(ctx, appointment_id)
        reference = row["id"]
        patient_id, to = _appointment_phone(ctx, row)
    elif message_type == "waitlist_confirmation":
        waitlist_id = ctx.session.get("waitlist_id")
        if waitlist_id is None:
            raise ToolError("no_waitlist_entry", "There's no waitlist entry from this call to confirm.")
        entry = ctx.db.execute("SELECT * FROM waitlist WHERE id = ?", (waitlist_id,)).fetchone()
        patient_id, to = entry["patient_id"], entry["phone"]
        reference = f"{entry['visit_type']}@{entry['offices']}"  # the entry by its content, not its row id
    elif message_type == "payment_link":
        reference = ctx.session.get("payment_link_id")
        if reference is None:
            raise ToolError("no_payment_link", "I need to create the payment link first.")
    elif message_type == "new_patient_forms":
        booked = ctx.session.get("new_patient_appointments")
        if not booked:
            raise ToolError("no_new_patient_visit", "The new-patient forms go out with a new-patient booking.")
        row = ctx.db.execute("SELECT * FROM appointments WHERE id = ?", (booked[-1],)).fetchone()
        reference = row["id"]
        patient_id, to = _appointment_phone(ctx, row)
    if phone and message_type != "office_directions" and _phone_digits(phone) != to:
        # Only directions go to a number the caller gives; anything else goes to the number on file. A
        # number the tool will not use is refused, never answered with "sent" to another one.
        raise ToolError("number_not_on_file", "I can only send that text to the number we have on file.")
    cur = ctx.db.execute("INSERT INTO text_messages (patient_id, phone, message_type, reference, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (patient_id, to, message_type, str(reference) if reference else None,
                                                    _stamp(ctx)))
    _did(ctx, "send_text_message")
    return {"text_id": cur.lastrowid, "message_type": message_type, "sent_to_last_four": to[-4:], "status": "sent"}


@tools.tool
def send_email(ctx: ToolContext, message_type: str, appointment_id: str | None = None) -> dict:
    patient = _patient(ctx)
    if not patient["email"]:
        raise ToolError("no_email_on_file", "We don't have an email address on file for you.")
    if message_type == "payment_link":
        reference = ctx.session.get("payment_link_id")
        if reference is None:
            raise ToolError("no_payment_link", "I need to create the payment link first.")
    else:
        if not appointment_id:
            raise ToolError("appointment_required", "Which appointment should the email confirm?")
        reference = _own_appointment(ctx, appointment_id)["id"]
    cur = ctx.db.execute("INSERT INTO emails (patient_id, address, message_type, reference, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (patient["id"], patient["email"], message_type, reference, _stamp(ctx)))
    _did(ctx, "send_email")
    return {"email_id": cur.lastrowid, "message_type": message_type, "status": "sent"}


# --- coverage ----------------------------------------------------------------------------------

@tools.tool
def check_eligibility(ctx: ToolContext, carrier: str, member_id: str, date_of_birth: str) -> dict:
    """Every inquiry sent to a carrier is a compared `eligibility_checks` row (the carrier's answer, the
    member found), with the member ID and date of birth tried: an inquiry that found nobody is forgiven
    when the caller said every value it tried (a digit the line misheard, tried, then corrected), and an
    ID nobody said (a character guessed) is on record (pack.json forgive_if_heard)."""
    code = _carrier(ctx, carrier)
    born = _day(date_of_birth, "date of birth").isoformat()
    member = next((m for m in ctx.db.execute("SELECT * FROM insurance_members WHERE carrier = ?", (code,))
                   if identifier(m["member_id"]) == identifier(member_id) and m["date_of_birth"] == born), None)
    found = None if member is None else member["member_id"]
    outcome = "not_found" if member is None else member["status"]
    # The same member answered the same way again says nothing new (a check repeated is harmless); an
    # inquiry that found nobody is kept every time, with what it tried.
    if member is None or ctx.db.execute("SELECT 1 FROM eligibility_checks WHERE carrier = ? AND member_id = ? AND "
                                        "outcome = ?", (code, found, outcome)).fetchone() is None:
        ctx.db.execute("INSERT INTO eligibility_checks (carrier, member_id, outcome, tried, created_at) "
                       "VALUES (?, ?, ?, ?, ?)",
                       (code, found, outcome, json.dumps(tried(identifier=member_id, date=born)), _stamp(ctx)))
    if member is None:
        raise ToolError("member_not_found", "I couldn't confirm that plan with the carrier. Could you read me the "
                        "member ID on your card again?", keep_writes=True)
    checked = ctx.session.get("eligibility", {})
    checked[f"{code}|{identifier(member_id)}"] = member["status"]
    ctx.session["eligibility"] = checked
    return {"carrier": _carrier_name(ctx, code), "member_id": member["member_id"], "status": member["status"],
            "plan_name": member["plan_name"], "specialist_copay": _money(member["specialist_copay"]),
            "deductible_remaining": _money(member["deductible_remaining"]),
            "termination_date": member["termination_date"]}


@tools.tool
def update_insurance(ctx: ToolContext, carrier: str, member_id: str) -> dict:
    patient = _patient(ctx)
    code = _carrier(ctx, carrier)
    status = ctx.session.get("eligibility", {}).get(f"{code}|{identifier(member_id)}")
    if status is None:
        raise ToolError("eligibility_check_required", "Let me first confirm that plan with the carrier.")
    if status != "active":
        raise ToolError("coverage_inactive", "The carrier shows that plan as not active, so I can't put it on your record.")
    member = next(m for m in ctx.db.execute("SELECT * FROM insurance_members WHERE carrier = ?", (code,))
                  if identifier(m["member_id"]) == identifier(member_id))
    ctx.db.execute("UPDATE patients SET carrier = ?, member_id = ? WHERE id = ?", (code, member["member_id"], patient["id"]))
    _did(ctx, "update_insurance")
    return {"carrier": _carrier_name(ctx, code), "member_id": member["member_id"], "status": "updated",
            "offices_accepting": _accepting_offices(ctx, code)}


# --- cosmetic ----------------------------------------------------------------------------------

@tools.tool
def get_cosmetic_quote(ctx: ToolContext, treatment: str, quantity: int) -> dict:
    price = ctx.db.execute("SELECT * FROM cosmetic_prices WHERE treatment = ?", (treatment,)).fetchone()
    if quantity < price["minimum_quantity"]:
        raise ToolError("below_minimum", f"The minimum for {price['label']} is {price['minimum_quantity']} "
                        f"{price['unit']}s.", {"minimum_quantity": price["minimum_quantity"]})
    subtotal = _cents(price["unit_price"]) * quantity
    discount = Decimal("0.00")
    if price["package_quantity"] and quantity >= price["package_quantity"]:
        discount = _cents(subtotal * Decimal(str(price["package_discount_pct"])) / 100)
    total = subtotal - discount
    return {"treatment": treatment, "unit": price["unit"], "quantity": quantity, "unit_price": _money(price["unit_price"]),
            "subtotal": _money(subtotal), "package_discount": _money(discount), "total": _money(total),
            "consultation_fee": _money(CONSULT_FEE), "consultation_fee_credited": True,
            "financing_available": total > FINANCING_THRESHOLD,
            "note": "A quote, not a treatment plan: the provider confirms the amount at the consultation."}


# --- billing -----------------------------------------------------------------------------------

@tools.tool
def get_balance(ctx: ToolContext) -> dict:
    patient = _patient(ctx)
    items = [{"service_date": r["service_date"], "description": r["description"], "amount": _money(r["amount"])}
             for r in ctx.db.execute("SELECT * FROM billing_items WHERE patient_id = ? ORDER BY id", (patient["id"],))]
    fees = [{"service_date": r["starts_at"][:10], "description": "Late-cancellation fee", "amount": _money(r["cancel_fee"])}
            for r in ctx.db.execute("SELECT * FROM appointments WHERE patient_id = ? AND cancel_fee > 0 ORDER BY id",
                                    (patient["id"],))]
    balance = _cents(patient["balance"])
    return {"balance": _money(balance), "items": items + fees, "payment_plan_months": patient["payment_plan_months"],
            "financing_available": balance > FINANCING_THRESHOLD and patient["payment_plan_months"] is None}


@tools.tool
def create_payment_link(ctx: ToolContext, amount: float) -> dict:
    patient = _patient(ctx)
    value, balance = _cents(amount), _cents(patient["balance"])
    if value <= 0 or value > balance:
        raise ToolError("invalid_amount", f"I can create a link for any amount up to your balance of ${balance}.",
                        {"balance": _money(balance)})
    count = ctx.db.execute("SELECT COUNT(*) FROM payment_links WHERE patient_id = ?", (patient["id"],)).fetchone()[0]
    link_id = f"PL-{patient['id'].split('-')[1]}-{count + 1}"
    ctx.db.execute("INSERT INTO payment_links (id, patient_id, amount, created_at) VALUES (?, ?, ?, ?)",
                   (link_id, patient["id"], _money(value), _stamp(ctx)))
    ctx.session["payment_link_id"] = link_id
    _did(ctx, "create_payment_link")
    return {"link_id": link_id, "amount": _money(value), "valid_days": 7,
            "delivery": "Send it with send_text_message or send_email; never read card numbers on the phone."}


@tools.tool
def set_up_payment_plan(ctx: ToolContext, months: int) -> dict:
    patient = _patient(ctx)
    balance = _cents(patient["balance"])
    if patient["payment_plan_months"] is not None:
        raise ToolError("plan_exists", "Your balance is already on a payment plan.")
    if balance <= FINANCING_THRESHOLD:
        raise ToolError("not_eligible_for_financing", "Payment plans are available on balances over $1,000.",
                        {"balance": _money(balance)})
    if months not in PLAN_MONTHS:
        raise ToolError("invalid_term", "Plans run for three, six or twelve months.")
    monthly = _cents(balance / months)
    final = balance - monthly * (months - 1)
    ctx.db.execute("UPDATE patients SET payment_plan_months = ? WHERE id = ?", (months, patient["id"]))
    _did(ctx, "set_up_payment_plan")
    return {"months": months, "monthly_amount": _money(monthly), "final_payment": _money(final),
            "balance": _money(balance), "first_due": (ctx.today + dt.timedelta(days=30)).isoformat(), "interest": 0.0}


# --- clinical ----------------------------------------------------------------------------------

def _refill_refused(ctx: ToolContext, patient_id: str, rx, medication: str, pharmacy: str | None, code: str,
                    message: str) -> None:
    """A refused refill is kept too (the refill log a desk keeps holds every request it put in, the
    refused ones with the reason), with the medication tried: a try of a medication the caller named is
    forgiven (pack.json forgive_if_heard), one nobody said (another drug in its place) is on record."""
    ctx.db.execute("INSERT INTO refill_requests (patient_id, prescription_id, medication, pharmacy, status, outcome, "
                   "tried, created_at) VALUES (?, ?, ?, ?, ?, 'refused', ?, ?)",
                   (patient_id, None if rx is None else rx["id"], medication, pharmacy, code,
                    json.dumps(tried(medication=medication)), _stamp(ctx)))
    raise ToolError(code, message, keep_writes=True)


@tools.tool
def request_refill(ctx: ToolContext, medication: str, pharmacy: str | None = None) -> dict:
    """A compared `refill_requests` row that takes one refill off the compared prescription: a refill
    asked twice, or of a medication the caller never named, is on record. A refused try is a row too,
    with the medication tried (see _refill_refused). The pharmacy is free text."""
    patient = _patient(ctx)
    # The verifier's own reading of the `medication` table (pack.json aliases and alias_ignore): brand
    # or generic, any salt, is one drug on both sides, and another drug never is; a strength or form,
    # when stated, must be the prescription's (alias_ignore must_agree).
    wanted = ctx.values.key("medication", medication)
    rx = next((r for r in ctx.db.execute("SELECT * FROM prescriptions WHERE patient_id = ? ORDER BY id", (patient["id"],))
               if ctx.values.key("medication", r["medication"]) == wanted), None)
    if rx is None:
        _refill_refused(ctx, patient["id"], None, medication, pharmacy, "not_on_medication_list",
                        "I don't see that medication on your list, so the care team would need to look at it. I can "
                        "send them a message.")
    mismatch = ctx.values.disagree("medication", medication, rx["medication"])
    if mismatch:  # a strength or form stated must be the prescription's; leaving it out is fine
        _refill_refused(ctx, patient["id"], rx, medication, pharmacy, "not_as_prescribed",
                        f"The {' and '.join(mismatch)} you asked for isn't what's on your prescription "
                        f"({rx['medication']}), so I can't request that refill. I can request it as prescribed, or "
                        "send the care team a message.")
    if rx["requires_visit"]:
        _refill_refused(ctx, patient["id"], rx, medication, pharmacy, "refill_requires_visit",
                        "That medication needs a visit with your provider before it can be refilled. I can help you "
                        "book one.")
    if rx["refills_remaining"] <= 0:
        _refill_refused(ctx, patient["id"], rx, medication, pharmacy, "no_refills_remaining",
                        "There are no refills left on that prescription, so your provider would need to see you or "
                        "review it. I can send the care team a message.")
    ctx.db.execute("UPDATE prescriptions SET refills_remaining = refills_remaining - 1 WHERE id = ?", (rx["id"],))
    cur = ctx.db.execute("INSERT INTO refill_requests (patient_id, prescription_id, medication, pharmacy, status, "
                         "outcome, tried, created_at) VALUES (?, ?, ?, ?, 'sent_to_provider', 'sent', ?, ?)",
                         (patient["id"], rx["id"], medication, pharmacy, json.dumps(tried(medication=medication)),
                          _stamp(ctx)))
    _did(ctx, "request_refill")
    return {"refill_request_id": cur.lastrowid, "medication": rx["medication"], "status": "sent_to_provider",
            "refills_remaining_after": rx["refills_remaining"] - 1,
            "note": "The provider reviews refill requests within two business days; the pharmacy is notified."}


@tools.tool
def send_clinical_message(ctx: ToolContext, topic: str, urgency: str, message: str) -> dict:
    """A compared `clinical_messages` row (whose, how urgent): one message for one question, so a second
    one, or one of each urgency, is a row the right answer lacks. The message is free text, read by the
    verifier for a phone number, an email or a street address (pack.json free_text)."""
    patient = _patient(ctx)
    cur = ctx.db.execute("INSERT INTO clinical_messages (patient_id, topic, urgency, message, created_at) "
                         "VALUES (?, ?, ?, ?, ?)", (patient["id"], topic, urgency, message, _stamp(ctx)))
    _did(ctx, "send_clinical_message")
    return {"message_id": cur.lastrowid, "topic": topic, "urgency": urgency, "status": "sent",
            "reply_expected": "by the end of the day" if urgency == "same_day" else "within two business days"}
