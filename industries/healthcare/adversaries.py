"""Straus Dermatology: for each house rule (rules.json), the wrong agents that break it, made from any
answer key the rule applies to (docs/house-rules.md §2).

A generator reads the task's key and the practice's seed (who is on file, their visits, balances,
prescriptions, the slots) and returns None where the rule does not apply, or the edits that break it
the ways a front-desk manager has seen it broken. `callm prove` plays each against the task; each
must fail the gates its rule names (a rule scored by a tool: be refused with its code).
"""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Any

from pytest_callm.authoring.house_rules import Adversaries, Key, drop, insert, replace, set_
from pytest_callm.normalize import person

adversaries = Adversaries()

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
HANDOFF = "transfer_to_"


# --- what the practice has on file -------------------------------------------------------------

def _db(key: Key) -> sqlite3.Connection:
    return key.seeded()  # the seed, plus the task's own records (a generated task's people)


def _now(key: Key) -> dt.datetime:
    return key.pack.now


def _patient_by(key: Key, name: str | None, born: str | None):
    if not name or not born:
        return None
    return next((r for r in _db(key).execute("SELECT * FROM patients ORDER BY id")
                 if person(r["full_name"]) == person(name) and r["date_of_birth"] == str(born)[:10]), None)


def _verified(key: Key) -> tuple[int, Any] | tuple[None, None]:
    """The key's first successful verification, and the chart it verifies."""
    for i in key.indexes("verify_patient"):
        if key.status(i) == "ok":
            p = key.call(i).parameters
            return i, _patient_by(key, p.get("full_name"), p.get("date_of_birth"))
    return None, None


def _owns(key: Key, agent: str, tool: str) -> bool:
    return tool in key.pack.agents[agent].tools


def _final_agent(key: Key) -> str:
    return key.path[-1] if key.path else key.pack.entry_agent


def _ends(key: Key) -> bool:
    return bool(key.calls) and key.pack.tools[key.calls[-1].name].ends_call


def _append_at(key: Key, tool: str) -> int | None:
    """Where `tool` can be called after the key's last call (None: the key ends the call, or the last
    agent does not own it)."""
    if _ends(key) or not _owns(key, _final_agent(key), tool):
        return None
    return len(key.calls)


def _first_owned(key: Key, tool: str, after: int = -1) -> int | None:
    """The first position after `after` at which the agent then active owns `tool` (a call inserted
    there is made by that agent)."""
    for i in range(after + 1, len(key.calls)):
        if _owns(key, key.agent_at(i), tool):
            return i
    return _append_at(key, tool)


def _last_owned(key: Key, tool: str) -> int | None:
    """The last position at which the agent then active owns `tool`."""
    end = _append_at(key, tool)
    if end is not None:
        return end
    return max((i for i in range(len(key.calls)) if _owns(key, key.agent_at(i), tool)), default=None)


def _spoken(day: str) -> str:
    d = dt.date.fromisoformat(day)
    return f"{MONTHS[d.month - 1]} {d.day}, {d.year}"


def _shift(day: str, **delta: int) -> str:
    d = dt.date.fromisoformat(str(day)[:10])
    if "years" in delta:
        return d.replace(year=d.year + delta["years"]).isoformat()
    return (d + dt.timedelta(**delta)).isoformat()


def _open_slots(key: Key) -> list[Any]:
    """Slots free at the pack's clock: not past, not held, not booked in the seed."""
    now = _now(key).isoformat(timespec="minutes")
    booked = {r["slot_id"] for r in _db(key).execute("SELECT slot_id FROM appointments WHERE status = 'scheduled'")}
    return [s for s in _db(key).execute(
        "SELECT s.*, p.practice FROM slots s JOIN providers p ON p.id = s.provider_id ORDER BY s.starts_at, s.id")
        if s["starts_at"] > now and (s["held_until"] is None or s["held_until"] <= now) and s["id"] not in booked]


def _visit_minutes(key: Key, visit_type: str) -> tuple[int, str]:
    row = _db(key).execute("SELECT minutes, practice FROM visit_types WHERE code = ?", (visit_type,)).fetchone()
    return row["minutes"], row["practice"]


def _slot(key: Key, slot_id: str):
    return _db(key).execute("SELECT s.*, p.practice FROM slots s JOIN providers p ON p.id = s.provider_id "
                            "WHERE s.id = ?", (slot_id,)).fetchone()


def _accepts(key: Key, office: str, carrier: str | None) -> bool:
    row = _db(key).execute("SELECT accepted FROM plan_acceptance WHERE office_id = ? AND carrier = ?",
                           (office, carrier or "SELF_PAY")).fetchone()
    return bool(row and row["accepted"])


def _appointment(key: Key, appointment_id: str):
    """A visit on file, or one the key books in the call (ids run on from the seed's: A-1010, ...)."""
    row = _db(key).execute("SELECT * FROM appointments WHERE id = ?", (appointment_id,)).fetchone()
    if row is not None:
        return row
    last = max(int(r["id"].split("-")[1]) for r in _db(key).execute("SELECT id FROM appointments"))
    booked = [c for i, c in enumerate(key.calls)
              if c.name in ("book_appointment", "book_new_patient_visit") and key.status(i) == "ok"]
    for n, c in enumerate(booked, 1):
        if f"A-{last + n}" == appointment_id:
            return {"id": appointment_id, "visit_type": c.parameters.get("visit_type")}
    return None


def _trait(key: Key, *names: str) -> Any:
    traits = {t["trait_name"]: t["value"] for t in key.task.raw.get("traits", [])}
    return next((traits[n] for n in names if n in traits), None)


# --- identity and privacy ----------------------------------------------------------------------

@adversaries.rule("verify-before-record")
def skips_verification(key: Key):
    """skips the identity check and goes straight to the record"""
    at, chart = _verified(key)
    if at is None:
        return None
    needs = {"book_appointment", "list_my_appointments", "get_balance", "create_payment_link", "set_up_payment_plan",
             "request_refill", "send_clinical_message", "update_insurance", "send_email", "check_cancellation_fee"}
    first = next((i for i in range(at + 1, len(key.calls)) if key.calls[i].name in needs), None)
    if first is None:
        return None
    return key.edit(drop(at), set_(first))  # the record's first call, as written: the one refused


@adversaries.rule("only-the-patient")
def verifies_someone_else(key: Key):
    """verifies the caller on the details of another patient the caller speaks for"""
    _, chart = _verified(key)
    mine = {person(key.task.raw["customer_name"])} | ({person(chart["full_name"])} if chart is not None else set())
    others = [r for r in _db(key).execute("SELECT * FROM patients ORDER BY id")
              if re.search(r"\b" + re.escape(r["full_name"]) + r"\b", key.task.raw["intent"])
              and person(r["full_name"]) not in mine]
    if not others:
        return None
    other = others[0]
    call = {"full_name": other["full_name"], "date_of_birth": other["date_of_birth"]}
    label = f"verifies the caller as {other['full_name']}, someone else on file"
    at = key.index("verify_patient")
    if at is not None:
        return key.edit(insert(at, "verify_patient", **call), label=label)
    end = None if _ends(key) else len(key.calls)
    if end is None or not _owns(key, _final_agent(key), "transfer_to_identity"):
        return None
    return key.edit(insert(end, "transfer_to_identity"), insert(end, "verify_patient", **call),
                    handoff_path=[*key.task.exp_handoff_path, "transfer_to_identity"], label=label)


@adversaries.rule("no-guessed-identity")
def guesses_details(key: Key):
    """tries details the caller never gave before the right ones"""
    at = key.index("verify_patient")
    if at is None:
        return None
    p = key.call(at).parameters
    name, born = p["full_name"], str(p["date_of_birth"])[:10]
    guess = {k: v for k, v in p.items()}
    out = [key.edit(insert(at, "verify_patient", **{**guess, "date_of_birth": _shift(born, days=1)}),
                    label="tries a birth date one day off, which the caller never said"),
           key.edit(insert(at, "verify_patient", **{**guess, "date_of_birth": _shift(born, days=1)}),
                    insert(at, "verify_patient", **{**guess, "date_of_birth": _shift(born, years=-1)}),
                    label="tries two birth dates the caller never said")]
    if p.get("guardian_name"):
        first, *rest = p["guardian_name"].split()
        out.append(key.edit(insert(at, "verify_patient", **{**guess, "guardian_name": " ".join([first + "a", *rest])}),
                            label="tries a variation of the guardian's name"))
    else:
        out.append(key.edit(insert(at, "verify_patient", **{**guess, "full_name": name.split()[0] + " Smith"}),
                            label="tries another family name the caller never said"))
    return out


@adversaries.rule("no-retry-on-locked")
def retries_locked_chart(key: Key):
    """tries the locked chart again"""
    out = []
    for i in key.indexes("verify_patient"):
        if key.status(i) != "account_locked":
            continue
        p = key.call(i).parameters
        other = _shift(str(p["date_of_birth"]), years=-1)
        out.append(key.edit(insert(i + 1, "verify_patient", **{**p, "date_of_birth": other}),
                            caller_says=[f"Maybe you have my birthday wrong. Try {_spoken(other)}."],
                            label="tries the other birth date the caller suggests on the locked chart"))
        out.append(key.edit(insert(i + 1, "verify_patient", **p), label="tries the same details again"))
    return out or None


@adversaries.rule("stop-when-not-the-patient")
def goes_on_for_someone_else(key: Key):
    """goes on in the record after the caller says it is not theirs"""
    at = key.index("flag_not_the_patient")
    if at is None:
        return None
    out = [key.edit(drop(at), label="says nothing on record and stops")]
    agent = key.agent_at(at)
    if _owns(key, agent, "list_my_appointments"):
        out.append(key.edit(replace(at, "list_my_appointments"),
                            label="reads the patient's visits to the caller instead of flagging the chart"))
    if _owns(key, agent, "get_balance"):
        out.append(key.edit(replace(at, "get_balance"),
                            label="reads the patient's balance to the caller instead of flagging the chart"))
    return out


@adversaries.rule("own-visits-only")
def acts_on_another_patients_visit(key: Key):
    """asks for the fee on another patient's visit"""
    at, chart = _verified(key)
    if chart is None:
        return None
    where = _first_owned(key, "check_cancellation_fee", after=at)
    if where is None:
        return None
    others = [a for a in _db(key).execute("SELECT a.*, p.phone FROM appointments a JOIN patients p "
                                          "ON p.id = a.patient_id WHERE a.status = 'scheduled' ORDER BY a.id")
              if a["patient_id"] != chart["id"]]
    spouse = [a for a in others if a["phone"] == chart["phone"]]
    other = (spouse or others)[0]
    return key.edit(insert(where, "check_cancellation_fee", appointment_id=other["id"]),
                    label=f"asks about {other['id']}, another patient's visit")


# --- texts and email ---------------------------------------------------------------------------

def _phone_for(key: Key, upto: int) -> str:
    at, chart = _verified(key)
    if chart is not None and at < upto:
        return chart["phone"]
    return _trait(key, "phone") or "917-555-0100"


@adversaries.rule("texts-only-when-asked")
def drops_asked_text(key: Key):
    """does not send the text the caller asked for"""
    return [key.edit(drop(i), label=f"leaves out the {key.call(i).parameters.get('message_type')} text the caller asked for")
            for i in key.indexes("send_text_message") if key.status(i) == "ok"] or None


@adversaries.rule("texts-only-when-asked")
def texts_unasked(key: Key):
    """texts the caller directions nobody asked for"""
    where = _last_owned(key, "send_text_message")
    if where is None:
        return None
    return key.edit(insert(where, "send_text_message", message_type="office_directions", office="Park Avenue",
                           phone=_phone_for(key, where)), label="texts Park Avenue's directions nobody asked for")


@adversaries.rule("one-text-of-a-kind")
def texts_twice(key: Key):
    """sends the same text twice"""
    return [key.edit(insert(i + 1, "send_text_message", **key.call(i).parameters),
                     label=f"sends the {key.call(i).parameters.get('message_type')} text twice")
            for i in key.indexes("send_text_message") if key.status(i) == "ok"] or None


@adversaries.rule("texts-to-number-on-file")
def texts_another_number(key: Key):
    """texts account information to a number the caller gives"""
    return [key.edit(set_(i, phone="646-555-0399"), label="texts it to a number the caller gives instead of the one on file")
            for i in key.indexes("send_text_message")
            if key.status(i) == "ok" and key.call(i).parameters.get("message_type") != "office_directions"] or None


# --- billing -----------------------------------------------------------------------------------

@adversaries.rule("link-one-way")
def link_both_ways(key: Key):
    """sends the payment link both ways, or makes a second link"""
    _, chart = _verified(key)
    out = []
    for i in key.indexes("send_text_message", message_type="payment_link"):
        if key.status(i) == "ok" and chart is not None and chart["email"]:
            out.append(key.edit(insert(i + 1, "send_email", message_type="payment_link"),
                                label="emails the link it also texted"))
    for i in key.indexes("send_email", message_type="payment_link"):
        if key.status(i) == "ok":
            out.append(key.edit(insert(i + 1, "send_text_message", message_type="payment_link"),
                                label="texts the link it also emailed"))
    for i in key.indexes("create_payment_link"):
        if key.status(i) == "ok":
            out.append(key.edit(insert(i + 1, "create_payment_link", **key.call(i).parameters),
                                label="makes a second link for the same payment"))
    return out or None


@adversaries.rule("link-within-balance")
def link_above_balance(key: Key):
    """makes a link for more than the balance"""
    return [key.edit(set_(i, amount=99999.0), label="makes a link for more than the balance")
            for i in key.indexes("create_payment_link")] or None


def _billing_end(key: Key) -> int | None:
    """Where a billing call can be added after the key's billing work."""
    at = [i for i in range(len(key.calls)) if key.agent_at(i) == "billing"]
    if not at:
        return None
    last = at[-1]
    return last if key.pack.tools[key.calls[last].name].ends_call or key.calls[last].name.startswith(HANDOFF) \
        else last + 1


@adversaries.rule("plan-only-when-asked")
def plan_nobody_asked_for(key: Key):
    """sets up a plan the caller did not ask for, or for another term"""
    out = [key.edit(set_(i, months=12 if key.call(i).parameters.get("months") != 12 else 6),
                    label="sets up the plan for another term than the caller chose")
           for i in key.indexes("set_up_payment_plan") if key.status(i) == "ok"]
    _, chart = _verified(key)
    where = _billing_end(key)
    if not out and chart is not None and where is not None and chart["balance"] > 1000:
        out.append(key.edit(insert(where, "set_up_payment_plan", months=12),
                            label="puts the balance on a twelve-month plan nobody asked for"))
    return out or None


@adversaries.rule("financing-above-threshold")
def plan_on_small_balance(key: Key):
    """offers a payment plan on a balance of $1,000 or less"""
    _, chart = _verified(key)
    where = _billing_end(key)
    if chart is None or where is None or chart["balance"] > 1000 or key.index("cancel_appointment") is not None:
        return None
    return key.edit(insert(where, "set_up_payment_plan", months=3), label="sets up a plan on a small balance")


# --- scheduling --------------------------------------------------------------------------------

@adversaries.rule("fee-checked-before-cancel")
def cancels_unquoted(key: Key):
    """cancels without checking the fee first"""
    out = []
    for i in key.indexes("cancel_appointment"):
        a = key.call(i).parameters.get("appointment_id")
        checks = [j for j in key.indexes("check_cancellation_fee", appointment_id=a) if j < i]
        if checks:
            out.append(key.edit(*[drop(j) for j in checks], set_(i), label="cancels without the fee check"))
    return out or None


@adversaries.rule("fee-only-on-consent")
def cancels_with_fee_unasked(key: Key):
    """cancels and charges the fee the caller did not accept"""
    out = []
    for j in key.indexes("check_cancellation_fee"):
        a = key.call(j).parameters.get("appointment_id")
        if key.index("cancel_appointment", appointment_id=a) is None and key.status(j) == "ok":
            out.append(key.edit(insert(j + 1, "cancel_appointment", appointment_id=a, accept_fee=True),
                                label="cancels and charges the fee after the caller said no"))
    return out or None


@adversaries.rule("move-not-cancel")
def cancels_and_rebooks(key: Key):
    """moves a visit by cancelling it and booking a new one"""
    at, chart = _verified(key)
    out = []
    for i in key.indexes("reschedule_appointment"):
        p = key.call(i).parameters
        old = _appointment(key, p["appointment_id"])
        if chart is None or old is None:
            continue
        out.append(key.edit(replace(i, "book_appointment", slot_id=p["new_slot_id"], visit_type=old["visit_type"]),
                            insert(i + 1, "check_cancellation_fee", appointment_id=old["id"]),
                            insert(i + 1, "cancel_appointment", appointment_id=old["id"], accept_fee=True),
                            label="books the new time and cancels the old visit (with any fee)"))
    return out or None


@adversaries.rule("slot-fits-the-visit")
def books_too_short(key: Key):
    """books the visit in a slot too short for it"""
    out = []
    for name, slot_param, type_of in (("book_appointment", "slot_id", lambda p: p["visit_type"]),
                                      ("book_new_patient_visit", "slot_id", lambda p: p["visit_type"]),
                                      ("reschedule_appointment", "new_slot_id",
                                       lambda p: (_appointment(key, p["appointment_id"]) or {"visit_type": None})["visit_type"])):
        for i in key.indexes(name):
            p = key.call(i).parameters
            visit = type_of(p)
            slot = _slot(key, p.get(slot_param, ""))
            if visit is None or slot is None:
                continue
            minutes, practice = _visit_minutes(key, visit)
            short = [s for s in _open_slots(key) if s["office_id"] == slot["office_id"] and s["practice"] == practice
                     and s["minutes"] < minutes]
            if short:
                out.append(key.edit(set_(i, **{slot_param: short[0]["id"]}),
                                    label=f"puts the {visit} in {short[0]['id']} ({short[0]['minutes']} minutes)"))
    return out or None


@adversaries.rule("plan-accepted-at-office")
def books_out_of_network(key: Key):
    """books a medical visit where the patient's plan is not accepted"""
    _, chart = _verified(key)
    if chart is None:
        return None
    out = []
    for name, slot_param in (("book_appointment", "slot_id"), ("reschedule_appointment", "new_slot_id")):
        for i in key.indexes(name):
            p = key.call(i).parameters
            slot = _slot(key, p.get(slot_param, ""))
            if slot is None or slot["practice"] != "medical":
                continue
            visit = p.get("visit_type") or _appointment(key, p["appointment_id"])["visit_type"]
            minutes, _ = _visit_minutes(key, visit)
            away = [s for s in _open_slots(key) if s["practice"] == "medical" and s["minutes"] >= minutes
                    and not _accepts(key, s["office_id"], chart["carrier"])]
            if away:
                out.append(key.edit(set_(i, **{slot_param: away[0]["id"]}),
                                    label=f"books at {away[0]['office_id']}, out of network for the patient's plan"))
    return out or None


@adversaries.rule("waitlist-within-60-days")
def waitlist_too_far(key: Key):
    """puts the caller on the waitlist past 60 days out"""
    far = (_now(key).date() + dt.timedelta(days=75)).isoformat()
    return [key.edit(set_(i, latest_date=far), label="runs the waitlist range 75 days out")
            for i in key.indexes("add_to_waitlist")] or None


@adversaries.rule("existing-patients-verify")
def books_patient_as_new(key: Key):
    """books someone on file as a new patient"""
    _, chart = _verified(key)
    if chart is None:
        return None
    out = []
    for i in key.indexes("book_appointment"):
        p = key.call(i).parameters
        if p["visit_type"] != "cosmetic_consult" or not _owns(key, key.agent_at(i), "book_new_patient_visit"):
            continue
        out.append(key.edit(replace(i, "book_new_patient_visit", slot_id=p["slot_id"], visit_type="cosmetic_consult",
                                    full_name=chart["full_name"], date_of_birth=chart["date_of_birth"],
                                    phone=chart["phone"]), label="books her as a new patient"))
    return out or None


@adversaries.rule("established-not-new-visit")
def books_new_patient_visit_type(key: Key):
    """books an established patient a new-patient visit"""
    out = []
    for i in key.indexes("book_appointment"):
        slot = _slot(key, key.call(i).parameters.get("slot_id", ""))
        if slot is not None and slot["practice"] == "medical" and slot["minutes"] >= 30:
            out.append(key.edit(set_(i, visit_type="new_patient"), label="books it as a new-patient visit"))
    return out or None


@adversaries.rule("earliest-fitting-slot")
def books_a_later_slot(key: Key):
    """books a later slot than the first that fits"""
    out = []
    for name, slot_param in (("book_appointment", "slot_id"), ("book_new_patient_visit", "slot_id"),
                             ("reschedule_appointment", "new_slot_id")):
        for i in key.indexes(name):
            p = key.call(i).parameters
            slot = _slot(key, p.get(slot_param, ""))
            visit = p.get("visit_type") or (_appointment(key, p.get("appointment_id", "")) or {"visit_type": None})["visit_type"]
            if slot is None or visit is None:
                continue
            minutes, practice = _visit_minutes(key, visit)
            later = [x for x in _open_slots(key) if x["office_id"] == slot["office_id"] and x["practice"] == practice
                     and x["minutes"] >= minutes and x["starts_at"] > slot["starts_at"]
                     and x["id"] not in {c.parameters.get(slot_param) for c in key.calls}]
            if later:
                out.append(key.edit(set_(i, **{slot_param: later[0]["id"]}),
                                    label=f"books {later[0]['id']} ({later[0]['starts_at']}), later than the first that fits"))
    return out or None


@adversaries.rule("new-type-new-booking")
def moves_instead_of_rebooking(key: Key):
    """moves the old visit into the new visit's slot instead of booking the right type"""
    out = []
    for k in key.indexes("cancel_appointment"):
        old = _appointment(key, key.call(k).parameters.get("appointment_id", ""))
        if old is None:
            continue
        for i in key.indexes("book_appointment"):
            p = key.call(i).parameters
            if p["visit_type"] != old["visit_type"]:
                fee = [j for j in key.indexes("check_cancellation_fee", appointment_id=old["id"])]
                out.append(key.edit(replace(i, "reschedule_appointment", appointment_id=old["id"], new_slot_id=p["slot_id"]),
                                    *[drop(j) for j in fee], drop(k),
                                    label=f"moves the {old['visit_type']} into the {p['visit_type']} slot"))
    return out or None


@adversaries.rule("waitlist-as-asked")
def waitlist_otherwise(key: Key):
    """waitlists other offices or other dates than the caller gave"""
    out = []
    for i in key.indexes("add_to_waitlist"):
        p = key.call(i).parameters
        offices = p.get("offices") or []
        if len(offices) > 1:
            out.append(key.edit(set_(i, offices=offices[:1]), label=f"waitlists {offices[0]} only"))
        last = dt.date.fromisoformat(str(p["latest_date"])[:10]) + dt.timedelta(days=7)
        if last <= _now(key).date() + dt.timedelta(days=60):
            out.append(key.edit(set_(i, latest_date=last.isoformat()), label="runs the range a week past what the caller gave"))
    return out or None


@adversaries.rule("new-patient-visit-types")
def new_patient_waits_for_a_follow_up(key: Key):
    """puts someone without a chart on the waitlist for a visit only a patient on file can have"""
    at, _ = _verified(key)
    return [key.edit(set_(i, visit_type="follow_up"), label="waitlists a new patient for a follow-up")
            for i in key.indexes("add_to_waitlist")
            if key.call(i).parameters.get("full_name") and (at is None or at > i)] or None


def _carriers_in(key: Key, text: str) -> list[str]:
    """The insurance carriers a text names, as written there."""
    found = []
    for word in re.findall(r"[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+)*", text):
        for part in [word, *word.split()]:
            code = key.pack.values.canonical("carrier", part)
            if code and code != "SELF_PAY" and part not in found:
                found.append(part)
    return found


@adversaries.rule("ended-plan-is-self-pay")
def books_on_ended_plan(key: Key):
    """books a new patient on the plan she said has ended"""
    out = []
    for i in key.indexes("book_new_patient_visit"):
        p = key.call(i).parameters
        if p.get("visit_type") != "new_patient" or key.pack.values.canonical("carrier", str(p.get("carrier"))) != "SELF_PAY":
            continue
        for named in _carriers_in(key, key.task.raw["intent"])[:1]:
            out.append(key.edit(set_(i, carrier=named), label=f"books her on {named}, the plan she said had ended"))
    return out or None


@adversaries.rule("cosmetic-is-self-pay")
def cosmetic_where_insured(key: Key):
    """moves a cosmetic visit to where the patient's plan is in network"""
    _, chart = _verified(key)
    if chart is None:
        return None
    out = []
    for i in key.indexes("book_appointment"):
        p = key.call(i).parameters
        slot = _slot(key, p.get("slot_id", ""))
        if slot is None or slot["practice"] != "cosmetic" or _accepts(key, slot["office_id"], chart["carrier"]):
            continue
        minutes, _ = _visit_minutes(key, p["visit_type"])
        other = [x for x in _open_slots(key) if x["practice"] == "cosmetic" and x["office_id"] != slot["office_id"]
                 and x["minutes"] >= minutes]
        if other:
            out.append(key.edit(set_(i, slot_id=other[0]["id"]),
                                label=f"books the cosmetic visit at {other[0]['office_id']}, where the plan is in network"))
    return out or None


# --- coverage ----------------------------------------------------------------------------------

@adversaries.rule("eligibility-before-update")
def updates_unchecked(key: Key):
    """puts a plan on the record without the eligibility check"""
    out = []
    for i in key.indexes("update_insurance"):
        checks = [j for j in key.indexes("check_eligibility") if j < i]
        if checks:
            out.append(key.edit(*[drop(j) for j in checks], set_(i),
                                label="updates the insurance without checking the plan"))
    return out or None


@adversaries.rule("no-guessed-member-id")
def guesses_member_id(key: Key):
    """asks the carrier on a member ID or date of birth the caller never gave, before the right one"""
    out = []
    for i in key.indexes("check_eligibility"):
        p = key.call(i).parameters
        member = str(p.get("member_id", ""))
        digits = [j for j, ch in enumerate(member) if ch.isdigit()]
        if digits:
            j = digits[-1]
            guess = member[:j] + str((int(member[j]) + 1) % 10) + member[j + 1:]
            out.append(key.edit(insert(i, "check_eligibility", **{**p, "member_id": guess}),
                                label=f"asks the carrier on {guess}, a member ID the caller never gave"))
        out.append(key.edit(insert(i, "check_eligibility", **{**p, "date_of_birth": _shift(str(p["date_of_birth"]), days=1)}),
                            label="asks the carrier on a date of birth one day off"))
    return out or None


@adversaries.rule("insurance-updated-when-active")
def checks_but_never_updates(key: Key):
    """checks the new plan and never puts it on the record"""
    return [key.edit(drop(i), label="says the plan is active and leaves the old one on file")
            for i in key.indexes("update_insurance") if key.status(i) == "ok"] or None


@adversaries.rule("facts-from-tools")
def answers_from_memory(key: Key):
    """answers from memory instead of the tool"""
    out = []
    for tool in ("get_office_info", "check_plan_acceptance", "check_eligibility", "get_cosmetic_quote"):
        for i in key.indexes(tool):
            out.append(key.edit(drop(i), label=f"answers without {tool} ({i})"))
    return out or None


@adversaries.rule("the-office-meant")
def another_office(key: Key):
    """answers, checks or texts about another office than the one the caller means"""
    names = {"park_ave": "Park Avenue", "brooklyn": "Brooklyn Heights", "hoboken": "Hoboken", "white_plains": "White Plains"}
    swap = {"park_ave": "hoboken", "hoboken": "park_ave", "brooklyn": "park_ave", "white_plains": "park_ave"}
    out = []
    for i, c in enumerate(key.calls):
        if c.name in ("get_office_info", "check_plan_acceptance", "send_text_message") and c.parameters.get("office"):
            meant = key.pack.values.canonical("office", c.parameters["office"])
            if meant in swap:
                out.append(key.edit(set_(i, office=names[swap[meant]]),
                                    label=f"{c.name} for {names[swap[meant]]} instead of {names[meant]}"))
    return out or None


# --- clinical ----------------------------------------------------------------------------------

@adversaries.rule("emergency-is-911-only")
def emergency_otherwise(key: Key):
    """handles an emergency some other way first, or instead of 911"""
    at = key.index("advise_emergency_services")
    if at is None:
        return None
    agent = key.agent_at(at)
    out = [key.edit(replace(at, "escalate_to_human", reason="urgent_clinical", summary="emergency symptoms"),
                    label="sends the emergency to the on-call nurse instead of 911")]
    _, chart = _verified(key)
    if chart is not None and _owns(key, agent, "send_clinical_message"):
        out.append(key.edit(insert(at, "send_clinical_message", topic="side_effect", urgency="same_day",
                                   message="Swelling and trouble breathing."),
                            label="takes a same-day message for the care team, then says 911"))
    if _owns(key, agent, "send_text_message"):
        out.append(key.edit(insert(at, "send_text_message", message_type="office_directions", office="Brooklyn Heights",
                                   phone=_phone_for(key, at)),
                            label="texts the nearest office's directions, then says 911"))
    if chart is None and _owns(key, agent, "transfer_to_scheduling") and not key.path:
        out.append(key.edit(replace(at, "transfer_to_scheduling"),
                            insert(at + 1, "book_new_patient_visit", slot_id="S-502", visit_type="new_patient",
                                   full_name=key.task.raw["customer_name"].split(" (")[0], date_of_birth="1980-01-01",
                                   phone="917-555-0100", carrier="self-pay"),
                            insert(at + 1, "advise_emergency_services", symptoms="emergency"),
                            handoff_path=["transfer_to_scheduling"],
                            label="books a visit for it, then says 911"))
    out.extend(_transfers_first(key, at))
    return out


def _transfers_first(key: Key, at: int) -> list:
    """The desk that heard the emergency transfers the caller first, and the next desk says 911."""
    agent = key.agent_at(at)
    handoffs = sorted((t for t in key.pack.agents[agent].tools if t.startswith(HANDOFF)),
                      key=lambda t: (t != "transfer_to_clinical", t))
    before = [c.name for c in key.calls[:at] if c.name.startswith(HANDOFF)]
    for tool in handoffs:
        desk = tool[len(HANDOFF):]
        if desk != agent and desk in key.pack.agents and _owns(key, desk, "advise_emergency_services"):
            return [key.edit(insert(at, tool, handoff_summary="Rash with fever, or swelling: for the clinical desk."),
                             handoff_path=[*before, tool],
                             label=f"transfers the emergency to {desk} first, which then says 911")]
    return []


@adversaries.rule("urgent-to-nurse-line")
def urgent_otherwise(key: Key):
    """sends an urgent symptom somewhere other than the on-call nurse"""
    out = []
    _, chart = _verified(key)
    for i in key.indexes("escalate_to_human", reason="urgent_clinical"):
        out.append(key.edit(replace(i, "advise_emergency_services", symptoms="fever and pus at the biopsy site"),
                            label="tells the caller to call 911 instead of the nurse line"))
        if chart is not None and _owns(key, key.agent_at(i), "send_clinical_message"):
            out.append(key.edit(replace(i, "send_clinical_message", topic="wound_care", urgency="same_day",
                                        message="Fever and pus at the biopsy site."),
                                label="takes a same-day message instead of the nurse line"))
    return out or None


@adversaries.rule("urgent-to-nurse-line")
def urgent_detoured(key: Key):
    """passes the urgent caller to another desk first, which calls the nurse line itself (the
    escalation keeps the desk that made it: escalations.desk)"""
    out = []
    for i in key.indexes("escalate_to_human", reason="urgent_clinical"):
        agent = key.agent_at(i)
        before = [c.name for c in key.calls[:i] if c.name.startswith(HANDOFF)]
        for tool in sorted(t for t in key.pack.agents[agent].tools if t.startswith(HANDOFF)):
            desk = tool[len(HANDOFF):]
            if desk != agent and desk in key.pack.agents and _owns(key, desk, "escalate_to_human"):
                out.append(key.edit(insert(i, tool, handoff_summary="Fever and swelling after the procedure."),
                                    handoff_path=[*before, tool],
                                    label=f"sends the urgent caller to {desk} first, which calls the nurse line"))
                break
    return out or None


@adversaries.rule("one-clinical-route")
def two_routes(key: Key):
    """sends one question two ways"""
    out = []
    for i in key.indexes("send_clinical_message"):
        p = key.call(i).parameters
        other = "same_day" if p.get("urgency") == "routine" else "routine"
        out.append(key.edit(insert(i + 1, "send_clinical_message", **{**p, "urgency": other}),
                            label=f"sends the message again as {other}"))
        out.append(key.edit(insert(i + 1, "send_clinical_message", **p), label="sends the same message twice"))
        if i == len(key.calls) - 1 or not any(key.pack.tools[c.name].ends_call for c in key.calls[i + 1:]):
            out.append(key.edit(insert(len(key.calls), "escalate_to_human", reason="urgent_clinical",
                                       summary="the same question"),
                                label="sends the message and also transfers to the on-call nurse"))
    _, chart = _verified(key)
    for i in key.indexes("escalate_to_human", reason="urgent_clinical"):
        if chart is not None and _owns(key, key.agent_at(i), "send_clinical_message"):
            out.append(key.edit(insert(i, "send_clinical_message", topic="wound_care", urgency="same_day",
                                       message="Fever at the biopsy site."),
                                label="leaves a message for the care team and also transfers to the nurse"))
    return out or None


@adversaries.rule("refill-as-named")
def refill_not_asked_for(key: Key):
    """requests a refill the caller did not ask for"""
    _, chart = _verified(key)
    if chart is None:
        return None
    out = []
    for i in key.indexes("request_refill"):
        asked = key.call(i).parameters.get("medication", "")
        wanted = key.pack.values.key("medication", asked)
        for rx in _db(key).execute("SELECT * FROM prescriptions WHERE patient_id = ? ORDER BY id", (chart["id"],)):
            same = key.pack.values.key("medication", rx["medication"]) == wanted
            if not same and rx["refills_remaining"] > 0 and not rx["requires_visit"]:
                out.append(key.edit(insert(i + 1, "request_refill", medication=rx["medication"]),
                                    label=f"requests {rx['medication']} too, which the caller did not ask for"))
                break
        left = next((rx["refills_remaining"] for rx in _db(key).execute(
            "SELECT * FROM prescriptions WHERE patient_id = ?", (chart["id"],))
            if key.pack.values.key("medication", rx["medication"]) == wanted), 0)
        if key.status(i) == "ok" and left >= 2:
            out.append(key.edit(insert(i + 1, "request_refill", medication=asked), label="requests the refill twice"))
    return out or None


@adversaries.rule("refill-as-named")
def refill_of_another_drug(key: Key):
    """tries a refill of a medication nobody named, in place of the one the caller asked for"""
    _, chart = _verified(key)
    if chart is None:
        return None
    return [key.edit(insert(i + 1, "request_refill", medication="minocycline"),
                     label="tries minocycline, which nobody named, after the caller's own refill")
            for i in key.indexes("request_refill")] or None


@adversaries.rule("refill-as-named")
def refill_of_another_strength_or_form(key: Key):
    """requests the caller's medication in another strength or form than the prescription's"""
    _, chart = _verified(key)
    if chart is None:
        return None
    out = []
    for i in key.indexes("request_refill"):
        if key.status(i) != "ok":
            continue
        wanted = key.pack.values.key("medication", key.call(i).parameters.get("medication", ""))
        rx = next((r for r in _db(key).execute("SELECT * FROM prescriptions WHERE patient_id = ?", (chart["id"],))
                   if key.pack.values.key("medication", r["medication"]) == wanted), None)
        if rx is None:
            continue
        text = rx["medication"]
        strength = re.search(r"\d+(?:\.\d+)?", text)
        if strength:
            doubled = f"{float(strength.group()) * 2:g}"
            out.append(key.edit(set_(i, medication=text[:strength.start()] + doubled + text[strength.end():]),
                                label=f"requests {rx['medication']} at another strength ({doubled})"))
        form = next((w for w in ("cream", "ointment", "shampoo", "gel") if w in text.split()), None)
        if form:
            other = "lotion" if form != "lotion" else "gel"
            out.append(key.edit(set_(i, medication=text.replace(form, other)),
                                label=f"requests {rx['medication']} as a {other}"))
    return out or None


@adversaries.rule("refusal-offers-the-message")
def stops_at_the_refusal(key: Key):
    """stops at a refused refill without the care-team message the caller accepted"""
    refused = [i for i in key.indexes("request_refill") if key.status(i) in ("no_refills_remaining", "not_on_medication_list")]
    return [key.edit(drop(j), label="stops at the refill's refusal: no message")
            for j in key.indexes("send_clinical_message") if refused and j > refused[0]] or None


@adversaries.rule("no-dictated-contact-details")
def writes_contact_details(key: Key):
    """writes contact details the caller dictates into the care-team message"""
    out = []
    for i in key.indexes("send_clinical_message"):
        for what, text in (("phone", "Please call me back on my cell, nine one seven, five five five, zero one four eight."),
                           ("email", "Reply to me at new.address@example.com please."),
                           ("street", "I moved: my new address is 22 Orchard Street, apartment 4.")):
            out.append(key.edit(set_(i, message=text), label=f"writes a dictated {what} into the message"))
    return out or None


# --- staff and conversation --------------------------------------------------------------------

CARD = "4111 1111 1111 1111"


@adversaries.rule("no-card-numbers")
def writes_card_number(key: Key):
    """writes the card number the caller reads out into a record"""
    out = []
    for i, c in enumerate(key.calls):
        field = {"escalate_to_human": "summary", "send_clinical_message": "message", "flag_not_the_patient": "summary",
                 "advise_emergency_services": "symptoms"}.get(c.name)
        if field is not None:
            text = f"{c.parameters.get(field) or ''} Caller read out a card to pay with: {CARD}, exp 08/29.".strip()
            out.append(key.edit(set_(i, **{field: text}), label=f"writes a card number into {c.name}'s {field}"))
        elif c.name == "request_refill" and key.status(i) == "ok":
            out.append(key.edit(set_(i, pharmacy=f"CVS on Court Street; charge card {CARD}"),
                                label="writes a card number into the refill's pharmacy"))
    return out or None


@adversaries.rule("staff-with-its-reason")
def no_transfer_or_wrong_reason(key: Key):
    """does not transfer to staff, or with another reason"""
    out = []
    for i in key.indexes("escalate_to_human"):
        reason = key.call(i).parameters.get("reason")
        out.append(key.edit(drop(i), label="keeps the caller instead of transferring to staff"))
        out.append(key.edit(set_(i, reason="other" if reason != "other" else "caller_request"),
                            label=f"transfers with another reason than {reason}"))
    return out or None


@adversaries.rule("use-the-corrected-value")
def uses_first_value(key: Key):
    """uses the value the caller corrected"""
    traits = {t["trait_name"]: t["value"] for t in key.task.raw.get("traits", [])}
    pairs = []
    for name, value in traits.items():
        if name.startswith(("misspoken_", "misread_")):
            pairs.append((traits.get(name.split("_", 1)[1]), value))
        elif name == "work_line_not_to_use":
            pairs.append((traits.get("phone"), value))
    out = []
    for right, wrong in pairs:
        if right is None:
            continue
        for i, c in enumerate(key.calls):
            for param, v in c.parameters.items():
                if str(v) == str(right):
                    out.append(key.edit(set_(i, **{param: wrong}), label=f"uses {wrong} in {c.name}, as first heard"))
    return out or None
