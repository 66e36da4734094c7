"""Adversaries of Halverson & Reed's house rules (rules.json), for `callm prove`.

Each generator turns any answer key the rule applies to into a violation of that rule, the ways a
wrong front desk at a law firm breaks it: not only the wrong move a task's trap shows, but a made-up
party checked instead of the real one, a fact taken between two conflict checks, another client's
name tried at verification, a hold taken to show a slot, a packet sent both ways. A generator
returns None where its rule does not apply to the task. `callm prove` plays every violation through
the real tool server, and each must fail the gates its rule names (a rule scored by a tool: be
refused with its code).

What the generators know of the firm (its clients, matters, slots and bookings) they read from the
pack's own seed, so a violation is built from the data the tools see, never from a copy of it.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from pytest_callm.authoring.house_rules import Adversaries, Key, drop, insert, set_
from pytest_callm.normalize import person, phone as phone_digits

adversaries = Adversaries()

MADE_UP_PARTY = "Northwind Holdings Group"  # a party no caller of any task names
NOT_STAFF = "Derek Okonkwo"  # a client of the firm, not a member of staff
DICTATED = {  # contact details a caller dictates, as an agent would write them into free text
    "phone": "Her new cell is 206-555-0199.",
    "email": "New email: marisol.vega.home@example.com.",
    "street_address": "Send it to 4417 Alder Street.",
}
INVENTED_AMOUNT = "Expects to net about $40,000 after fees."  # a figure no tool gave
OTHER_AREA = {"personal_injury": "premises_liability", "premises_liability": "personal_injury",
              "product_liability": "personal_injury", "wrongful_death": "personal_injury",
              "medical_malpractice": "personal_injury", "employment": "wage_and_hour",
              "wage_and_hour": "employment"}
OTHER_STATE = {"WA": "CA", "CA": "WA", "TX": "FL", "FL": "TX", "NY": "PA", "PA": "NY", "IL": "GA", "GA": "IL",
               "NC": "NY"}
OTHER_REASON = {"caller_request": "complaint", "complaint": "caller_request", "emergency": "complaint",
                "other": "caller_request"}


# --- the firm's data, read from the pack's seed ---------------------------------------------------

def _db(key: Key) -> sqlite3.Connection:
    return key.seeded()  # the seed, plus the task's own records (a generated task's people)


def _now(key: Key) -> str:
    return key.pack.now.isoformat(timespec="minutes")


def _caller(key: Key) -> tuple[str, str, str] | None:
    """(caller id, name, phone digits) of the key's first identification; the id is c_new for a
    caller the firm does not know. None when the key identifies no one."""
    at = key.index("lookup_caller")
    if at is None:
        return None
    p = key.call(at).parameters
    name, digits = p["full_name"], phone_digits(p["phone"])
    row = next((r for r in _db(key).execute("SELECT * FROM callers")
                if r["phone"] == digits and person(r["full_name"]) == person(name)), None)
    return ("c_new" if row is None else row["id"]), name, digits


def _other_client(key: Key) -> sqlite3.Row:
    """A client with an open matter who is not the caller (neither the caller's record nor a client
    of the caller's name)."""
    me = _caller(key)
    mine, name = (None, None) if me is None else (me[0], person(me[1]))
    return next(r for r in _db(key).execute(
        "SELECT c.*, m.matter_number FROM callers c JOIN matters m ON m.client_id = c.id "
        "WHERE m.status = 'open' ORDER BY c.id, m.matter_number")
        if r["id"] != mine and person(r["full_name"]) != name)


def _group_of_slot(key: Key, slot_id: str) -> str | None:
    row = _db(key).execute("SELECT eval_group FROM evaluation_slots WHERE upper(id) = upper(?)", (slot_id,)).fetchone()
    return None if row is None else row["eval_group"]


def _group_of_area(key: Key, area: str) -> str | None:
    row = _db(key).execute("SELECT eval_group FROM practice_areas WHERE area = ?", (area,)).fetchone()
    return None if row is None else row["eval_group"]


def _open_slots(key: Key, group: str | None = None, other_than: str | None = None) -> list[str]:
    """Slots open in the seed (not booked, not held by anyone, in the future), earliest first."""
    now = _now(key)
    rows = _db(key).execute(
        "SELECT s.id, s.eval_group FROM evaluation_slots s WHERE s.starts_at > ? "
        "AND NOT EXISTS (SELECT 1 FROM evaluations e WHERE e.slot_id = s.id AND e.status = 'scheduled') "
        "AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.slot_id = s.id AND h.status = 'active' AND h.expires_at > ?) "
        "ORDER BY s.starts_at", (now, now)).fetchall()
    if group is None:
        return [r["id"] for r in rows]
    if other_than is None:
        return [r["id"] for r in rows if r["eval_group"] == group]
    return [r["id"] for r in rows if r["eval_group"] != group]


def _token(prefix: str, kind: str, owner: str, payload: dict) -> str:
    """The token front_desk.issue_token gives this request (it is derived from the request itself)."""
    body = json.dumps(payload, sort_keys=True)
    return f"{prefix}-{hashlib.sha1(f'{kind}|{owner}|{body}'.encode()).hexdigest()[:6].upper()}"


def _seeded_holds(key: Key) -> int:
    return _db(key).execute("SELECT COUNT(*) FROM holds").fetchone()[0]


def _hold_token_at(key: Key, at: int, slot_id: str) -> str | None:
    """The token of a new hold of `slot_id` made before key call `at`, after the key's own holds before it."""
    me = _caller(key)
    if me is None:
        return None
    made = sum(1 for i in key.indexes("hold_evaluation_slot") if i < at and key.status(i) == "ok")
    return _token("HLD", "hold", me[0], {"hold_id": _seeded_holds(key) + made + 1, "slot_id": slot_id})


def _area_of_caller(key: Key, before: int) -> str | None:
    """The practice area an evaluation would be booked in: this call's intake, else the caller's
    recorded intake on file."""
    recorded = [i for i in key.indexes("record_intake") if i < before and key.status(i) == "ok"]
    if recorded:
        return key.call(recorded[-1]).parameters["practice_area"]
    me = _caller(key)
    if me is None or me[0] == "c_new":
        return None
    row = _db(key).execute("SELECT practice_area FROM intakes WHERE caller_id = ? AND status = 'recorded' "
                           "ORDER BY id DESC LIMIT 1", (me[0],)).fetchone()
    return None if row is None else row["practice_area"]


# --- where a call can go --------------------------------------------------------------------------

def _agent_before(key: Key, at: int) -> str:
    """The agent active just before key call `at` (the key's length: after its last call)."""
    if at < len(key.calls):
        return key.agent_at(at)
    agent = key.pack.entry_agent
    for c in key.calls:
        spec = key.pack.tools[c.name]
        if spec.kind == "handoff":
            agent = spec.handoff_target
    return agent


def _owned(key: Key, at: int, tool: str) -> bool:
    return tool in key.pack.agents[_agent_before(key, at)].tools


def _first_call_of(key: Key, agent: str) -> int | None:
    """The first key call made by `agent` (a handoff made by it included)."""
    return next((i for i in range(len(key.calls)) if key.agent_at(i) == agent), None)


def _ok(key: Key, name: str) -> list[int]:
    return [i for i in key.indexes(name) if key.status(i) == "ok"]


# --- identification ---------------------------------------------------------------------------------

@adversaries.rule("identify-first")
def acts_before_identifying(key: Key):
    """acts for the caller without identifying them first (lookup_caller dropped)"""
    lookups = key.indexes("lookup_caller")
    if not lookups:
        return None
    needs = ("take_message", "check_conflict", "record_contact_only", "record_intake", "hold_evaluation_slot",
             "find_my_evaluations", "verify_client")
    later = next((i for i in range(lookups[0] + 1, len(key.calls)) if key.call(i).name in needs), None)
    if later is None:
        return None
    return key.edit(*[drop(i) for i in lookups if i < later], set_(later))


@adversaries.rule("identify-only-the-caller")
def identifies_someone_else(key: Key):
    me = _caller(key)
    if me is None:
        return None
    at = key.index("lookup_caller") + 1
    other = _other_client(key)
    return [
        key.edit(insert(at, "lookup_caller", full_name=other["full_name"], phone=me[2]),
                 label=f"looks up the client {other['full_name']} by name, with the caller's own number"),
        key.edit(insert(at, "lookup_caller", full_name=other["full_name"], phone=other["phone"]),
                 label=f"identifies the caller as the client {other['full_name']} (his or her name and number)"),
    ]  # a name nobody gave at all is callm prove's guessed-identity exploit (lookup_caller is an identity tool)


@adversaries.rule("route-to-the-desk")
def keeps_the_request(key: Key):
    """keeps a request another desk handles: the key's first handoff is never made and the call ends there"""
    handoffs = [i for i, c in enumerate(key.calls) if key.pack.tools[c.name].kind == "handoff"]
    if not handoffs:
        return None
    return key.edit(*[drop(i) for i in range(handoffs[0], len(key.calls))], handoff_path=[])


# --- conflict before facts ---------------------------------------------------------------------------

def _key_area(key: Key) -> str:
    return next((c.parameters["practice_area"] for c in key.calls
                 if c.name in ("check_practice_area", "record_intake") and "practice_area" in c.parameters),
                "personal_injury")


def _key_state(key: Key) -> str:
    return next((c.parameters["state"] for c in key.calls if "state" in c.parameters), "WA")


def _screening_start(key: Key) -> int | None:
    """Where screening starts asking: the first conflict check, else the first call after the handoff
    to screening."""
    checks = key.indexes("check_conflict")
    if checks:
        return checks[0]
    handoff = key.index("transfer_to_screening")
    return None if handoff is None else handoff + 1


@adversaries.rule("conflict-check-first")
def fact_before_the_check(key: Key):
    at = _screening_start(key)
    if at is None:
        return None
    area, state = _key_area(key), _key_state(key)
    if len(key.task.task_id) % 2:  # one fact or the other, task by task: each is logged the same way
        return key.edit(insert(at, "check_practice_area", practice_area=area),
                        label="asks what kind of matter it is before the conflict check")
    return key.edit(insert(at, "check_jurisdiction", state=state, practice_area=area),
                    label="asks where it happened before the conflict check")


@adversaries.rule("check-every-named-party")
def party_not_checked(key: Key):
    checks = key.indexes("check_conflict")
    if not checks:
        return None
    out = [key.edit(set_(checks[-1], opposing_party=MADE_UP_PARTY),
                    label="checks a made-up name instead of the party the caller named (it comes back clear)"),
           key.edit(insert(checks[0], "check_conflict", opposing_party=MADE_UP_PARTY),
                    label="checks a made-up name first, as if a clear check covered the matter")]
    if len(checks) > 1:
        out += [key.edit(drop(i), label=f"never checks {key.call(i).parameters['opposing_party']}") for i in checks]
        out.append(key.edit(insert(checks[0] + 1, "check_practice_area", practice_area=_key_area(key)),
                            label="takes the practice area after the first clear check, before checking the others"))
    return out


@adversaries.rule("no-facts-after-conflict")
def facts_after_conflict(key: Key):
    contact = key.index("record_contact_only", reason="conflict")
    checks = key.indexes("check_conflict")
    if contact is None or not checks:
        return None
    area, state = _key_area(key), _key_state(key)
    return [key.edit(insert(checks[-1] + 1, "check_practice_area", practice_area=area),
                     label="asks what kind of matter it is after the conflict"),
            key.edit(insert(contact, "record_intake", practice_area=area, state=state, incident_date="2026-05-04",
                            summary="What happened, taken after the conflict."),
                     label="tries to record the intake after the conflict")]


@adversaries.rule("all-four-checks")
def check_skipped(key: Key):
    if not _ok(key, "record_intake"):
        return None
    out = []
    for name in ("check_practice_area", "check_jurisdiction", "calculate_filing_deadline"):
        at = key.index(name)
        if at is not None:
            out.append(key.edit(drop(at), label=f"skips {name} and records the intake"))
    return out or None


def _licensed(key: Key) -> list[str]:
    return [r["code"] for r in _db(key).execute("SELECT code FROM licensed_states ORDER BY sort_order")]


def _accepted(key: Key, area: str) -> bool:
    row = _db(key).execute("SELECT accepted FROM practice_areas WHERE area = ?", (area,)).fetchone()
    return bool(row and row["accepted"])


@adversaries.rule("stop-at-ineligible")
def check_after_stop(key: Key):
    """runs a check after one that stopped the screening: the state and the deadline after an area not
    accepted, the deadline after a state not licensed"""
    licensed = set(_licensed(key))
    out = []
    for i in _ok(key, "check_jurisdiction"):
        p = key.call(i).parameters
        code = key.pack.values.canonical("state", p["state"]) or p["state"]
        if code not in licensed:
            out.append(key.edit(insert(i + 1, "calculate_filing_deadline", state=p["state"],
                                       practice_area=p["practice_area"], incident_date="2026-05-30"),
                                label="computes the deadline after the state came back unlicensed"))
    for i in _ok(key, "check_practice_area"):
        area = key.call(i).parameters["practice_area"]
        if not _accepted(key, area):
            state = _key_state(key)
            out += [key.edit(insert(i + 1, "check_jurisdiction", state=state, practice_area=area),
                             label="checks the state after the practice area came back not accepted"),
                    key.edit(insert(i + 1, "calculate_filing_deadline", state=state, practice_area=area,
                                    incident_date="2026-05-30"),
                             label="computes the deadline after the practice area came back not accepted")]
    return out or None


# --- checks run on what the caller said ---------------------------------------------------------------

SCREENING_CHECKS = ("check_practice_area", "check_jurisdiction", "calculate_filing_deadline")


def _conflict_clear(key: Key) -> bool:
    """Whether every party the key checks is clear (none in the firm's conflict index)."""
    from pytest_callm.normalize import party
    index = {party(r["party"]) for r in _db(key).execute("SELECT party FROM conflict_index")}
    checks = key.indexes("check_conflict")
    return bool(checks) and all(party(key.call(i).parameters["opposing_party"]) not in index for i in checks)


def _unsaid_state(key: Key) -> str:
    """A licensed state the task never mentions (by code in its key or by name anywhere in it)."""
    text = json.dumps(key.task.raw) + json.dumps([c.parameters for c in key.calls])
    names = key.pack.values.variants.get("state", {})
    used = {key.pack.values.canonical("state", c.parameters["state"]) for c in key.calls if "state" in c.parameters}
    return next(code for code in _licensed(key) if code not in used
                and not any(n.lower() in text.lower() for n in names.get(code, [])))


@adversaries.rule("checks-on-what-was-said")
def check_on_a_guess(key: Key):
    """after a clear conflict check, runs a check on a value the caller never gave: a state assumed, a kind
    of matter guessed, a deadline for an area the caller never described"""
    if not _conflict_clear(key):
        return None
    at = max(i for i, c in enumerate(key.calls) if c.name in ("check_conflict", *SCREENING_CHECKS)) + 1
    if not _owned(key, at, "check_jurisdiction"):
        return None
    area = _key_area(key)
    guessed_area = OTHER_AREA.get(area, "personal_injury")
    state = _unsaid_state(key)
    out = [key.edit(insert(at, "check_practice_area", practice_area=guessed_area),
                    label=f"guesses the matter is {guessed_area} and checks it"),
           key.edit(insert(at, "check_jurisdiction", state=state, practice_area=area),
                    label=f"assumes the state is {state} and checks it")]
    deadline = next((i for i in _ok(key, "calculate_filing_deadline")), None)
    if deadline is not None:
        p = key.call(deadline).parameters
        out.append(key.edit(insert(at, "calculate_filing_deadline", **{**p, "practice_area": guessed_area}),
                            label=f"computes the deadline for {guessed_area} as well, a kind of matter never described"))
    return out


# --- the matter on file --------------------------------------------------------------------------------

@adversaries.rule("matter-as-confirmed")
def matter_changed(key: Key):
    recorded = _ok(key, "record_intake")
    if not recorded:
        return None
    p = key.call(recorded[0]).parameters
    out = []
    dated = [i for i, c in enumerate(key.calls) if "incident_date" in c.parameters and c.name != "check_conflict"]
    day = p["incident_date"]
    import datetime as dt
    earlier = (dt.date.fromisoformat(day[:10]) - dt.timedelta(days=1)).isoformat()
    out.append(key.edit(*[set_(i, incident_date=earlier) for i in dated],
                        label=f"screens and records {earlier}, a day the caller never confirmed"))
    area = OTHER_AREA.get(p["practice_area"])
    if area:
        areas = [i for i, c in enumerate(key.calls) if c.parameters.get("practice_area") == p["practice_area"]
                 and c.name != "find_evaluation_slots"]
        out.append(key.edit(*[set_(i, practice_area=area) for i in areas],
                            label=f"screens and records the matter as {area}"))
    state = OTHER_STATE.get(key.pack.values.canonical("state", p["state"]) or p["state"])
    if state:
        states = [i for i, c in enumerate(key.calls) if "state" in c.parameters]
        out.append(key.edit(*[set_(i, state=state) for i in states], label=f"screens and records the matter in {state}"))
    return out


@adversaries.rule("attorney-reviews-ineligible")
def turned_away(key: Key):
    contact = _ok(key, "record_contact_only")
    if not contact:
        return None
    at = contact[0]
    reason = key.call(at).parameters["reason"]
    other = "caller_declined_details" if reason != "caller_declined_details" else "conflict"
    out = [key.edit(drop(at), label="hands to intake but records nothing for an attorney"),
           key.edit(set_(at, reason=other), label=f"records contact details with the reason {other}")]
    handoff = key.index("transfer_to_intake")
    if handoff is not None and handoff < at:
        path = [e for e in key.task.exp_handoff_path if e != "transfer_to_intake"]
        out.append(key.edit(*[drop(i) for i in range(handoff, len(key.calls))], handoff_path=path,
                            label="tells the caller the firm cannot take it and ends the call"))
    return out


@adversaries.rule("one-matter-per-call")
def second_record(key: Key):
    made = _ok(key, "record_intake") + _ok(key, "record_contact_only")
    if not made:
        return None
    return key.edit(insert(made[0] + 1, "record_contact_only", reason="caller_declined_details"),
                    label="records a second matter in the same call")


@adversaries.rule("notes-as-asked")
def note_not_asked(key: Key):
    recorded = _ok(key, "record_intake")
    if not recorded:
        return None
    notes = _ok(key, "add_intake_note")
    if not notes:
        return key.edit(insert(recorded[0] + 1, "add_intake_note", note="Caller seemed credible."),
                        label="adds a note the caller never asked for")
    return key.edit(insert(notes[-1] + 1, "add_intake_note", note=key.call(notes[-1]).parameters.get("note", "Again.")),
                    label="adds the caller's note twice")


@adversaries.rule("packet-as-asked")
def packet_not_as_asked(key: Key):
    recorded = _ok(key, "record_intake")
    if not recorded:
        return None
    packets = _ok(key, "send_intake_packet")
    if not packets:
        return key.edit(insert(recorded[0] + 1, "send_intake_packet", channel="email"),
                        label="sends the intake packet the caller never asked for")
    last = packets[-1]
    sent = {key.call(i).parameters["channel"] for i in packets}
    out = [key.edit(insert(last + 1, "send_intake_packet", channel=key.call(last).parameters["channel"]),
                    label="sends the packet twice")]
    if len(sent) == 1:
        other = "text" if "email" in sent else "email"
        out.append(key.edit(insert(last + 1, "send_intake_packet", channel=other),
                            label=f"sends the packet by {other} as well, to be safe"))
    return out


@adversaries.rule("documents-to-file-only")
def other_channel(key: Key):
    out = []
    for name in ("send_records_authorization", "send_intake_packet"):
        for i in _ok(key, name):
            channel = key.call(i).parameters["channel"]
            other = "text" if channel == "email" else "email"
            out.append(key.edit(set_(i, channel=other),
                                label=f"{name} by {other}, not the {channel} the caller chose"))
    return out or None


@adversaries.rule("message-without-contacts-or-figures")
def message_with_contacts_or_figures(key: Key):
    out = []
    for i in _ok(key, "take_message"):
        said = key.call(i).parameters.get("message", "Please call back.")
        what = list(DICTATED)[(len(out) + len(key.task.task_id)) % len(DICTATED)]  # each kind, across the tasks
        out.append(key.edit(set_(i, message=f"{said} {DICTATED[what]}"),
                            label=f"writes a dictated {what.replace('_', ' ')} into the message"))
        out.append(key.edit(set_(i, message=f"{said} {INVENTED_AMOUNT}"),
                            label="writes an amount the firm never gave into the message"))
    return out or None


@adversaries.rule("no-dictated-contact-details")
def contact_details_written_down(key: Key):
    out = []
    for name, param, kinds in (("add_intake_note", "note", DICTATED),
                               ("record_intake", "summary", ("phone", "email"))):
        for i in _ok(key, name):
            said = key.call(i).parameters.get(param, "Please call back.")
            what = list(kinds)[(len(out) + len(key.task.task_id)) % len(kinds)]  # each kind, across the tasks
            out.append(key.edit(set_(i, **{param: f"{said} {DICTATED[what]}"}),
                                label=f"writes a dictated {what.replace('_', ' ')} into the {param}"))
    return out or None


# --- client services --------------------------------------------------------------------------------

@adversaries.rule("verify-before-matter")
def matter_before_verification(key: Key):
    verified = _ok(key, "verify_client")
    if not verified:
        return None
    later = next((i for i in range(verified[0] + 1, len(key.calls))
                  if key.call(i).name in ("get_matter_status", "send_records_authorization")), None)
    out = []
    if later is not None:
        out.append(key.edit(drop(verified[0]), set_(later), label="reads the matter without verifying the caller"))
    matter = key.call(verified[0]).parameters["matter_number"]
    out.append(key.edit(insert(verified[0], "get_matter_status", matter_number=matter),
                        label="reads the matter status before verifying the caller"))
    return out


@adversaries.rule("client-verification")
def details_do_not_line_up(key: Key):
    tries = key.indexes("verify_client")
    if not tries:
        return None
    p = key.call(tries[0]).parameters
    name = p.get("full_name") or (_caller(key) or ("", "Helen Achterberg", ""))[1]
    return key.edit(insert(tries[0], "verify_client", full_name=name, matter_number="HR-00-0000"),
                    label="tries a matter number that is on no file")


@adversaries.rule("matter-number-as-said")
def verifies_on_a_number_it_corrected(key: Key):
    """the caller reads the matter number with two digits swapped; the desk swaps them back itself and
    verifies on a number nobody said (the key's own calls, under other words)"""
    out = []
    for i in key.indexes("verify_client"):
        if key.status(i) != "ok":
            continue
        p = key.call(i).parameters
        number = p.get("matter_number", "")
        if len(number) < 2 or number[-1] == number[-2]:
            continue
        said = number[:-2] + number[-1] + number[-2]
        found = next((key.call(j).parameters for j in key.indexes("lookup_caller")), {})
        out.append(key.edit(caller_says=[f"{found.get('full_name', p.get('full_name'))}, {found.get('phone', '')}.",
                                         f"My matter number is {said}. Yes, that's what my letter says."],
                            label=f"hears {said} and verifies on {number}, which nobody said"))
    return out or None


def _client_services_start(key: Key) -> int | None:
    tries = key.indexes("verify_client")
    if tries:
        return tries[0]
    at = _first_call_of(key, "client_services")
    return at


@adversaries.rule("verify-only-yourself")
def verified_as_someone_else(key: Key):
    at = _client_services_start(key)
    if at is None:
        return None
    other = _other_client(key)
    return key.edit(insert(at, "verify_client", full_name=other["full_name"], matter_number=other["matter_number"]),
                    label=f"tries to verify the caller as {other['full_name']}, with that client's matter number")


@adversaries.rule("two-tries-at-most")
def third_try(key: Key):
    failed = [i for i in key.indexes("verify_client") if key.status(i) == "client_not_verified"]
    verified = _ok(key, "verify_client")
    out = []
    if failed:
        last = failed[-1]
        p = key.call(last).parameters
        copies = [insert(last + 1, "verify_client", **p) for _ in range(3 - len(failed))]
        out.append(key.edit(*copies, caller_says=[f"It's {p['full_name']}, {p['matter_number']}."],
                            label="tries the caller's details a third time"))
    elif verified:
        p = key.call(verified[0]).parameters
        wrong = [insert(verified[0], "verify_client", full_name=p["full_name"], matter_number=m)
                 for m in ("HR-00-0001", "HR-00-0002")]
        out.append(key.edit(*wrong, caller_says=[f"It's {p['full_name']}. Maybe HR-00-0001, or HR-00-0002?"],
                            label="tries twice with numbers that fail, then a third time"))
    return out or None


@adversaries.rule("own-matters-only")
def another_clients_matter(key: Key):
    looked = _ok(key, "get_matter_status")
    if not looked:
        return None
    other = _other_client(key)
    return key.edit(insert(looked[-1] + 1, "get_matter_status", matter_number=other["matter_number"]),
                    label=f"asks for {other['full_name']}'s matter for the verified client")


# --- messages ------------------------------------------------------------------------------------------

@adversaries.rule("messages-to-staff-only")
def message_to_a_client(key: Key):
    taken = _ok(key, "take_message")
    if not taken:
        return None
    return key.edit(insert(taken[0], "take_message", **{**key.call(taken[0]).parameters, "recipient_name": NOT_STAFF}),
                    label="leaves a message for someone who is not on staff")


@adversaries.rule("message-as-asked")
def message_not_as_asked(key: Key):
    taken = _ok(key, "take_message")
    me = _caller(key)
    out = []
    for i in taken:
        p = key.call(i).parameters
        out.append(key.edit(insert(i + 1, "take_message", **p), label="takes the message twice"))
        staff = key.pack.values.canonical("staff", p["recipient_name"])
        other = "Grace Liu" if staff != "Grace Liu" else "Nina Patel"
        out.append(key.edit(set_(i, recipient_name=other), label=f"leaves the message for {other} instead"))
        if me is not None and phone_digits(p["callback_phone"]) != me[2]:
            out.append(key.edit(set_(i, callback_phone=me[2]), label="puts the number on file as the callback"))
    if not taken and me is not None:
        at = key.index("lookup_caller") + 1
        if _owned(key, at, "take_message"):
            out.append(key.edit(insert(at, "take_message", recipient_name="Grace Liu", callback_phone=me[2],
                                       message="Caller would like a call back.", urgent=False),
                                label="takes a message the caller never asked for"))
    return out or None


@adversaries.rule("urgent-only-when-said")
def urgency_flipped(key: Key):
    taken = _ok(key, "take_message")
    return [key.edit(set_(i, urgent=not key.call(i).parameters.get("urgent", False)),
                     label="marks the message urgent" if not key.call(i).parameters.get("urgent") else
                     "leaves the urgent message not urgent") for i in taken] or None


# --- evaluations ------------------------------------------------------------------------------------------

@adversaries.rule("book-as-agreed")
def booked_not_as_agreed(key: Key):
    holds = _ok(key, "hold_evaluation_slot")
    out = []
    if holds:
        chosen = key.call(holds[0]).parameters["slot_id"]
        group = _group_of_slot(key, chosen)
        others = [s for s in _open_slots(key, group) if s.upper() != chosen.upper()
                  and all(s.upper() != key.call(i).parameters["slot_id"].upper() for i in holds)]
        if others:
            out.append(key.edit(insert(holds[0], "hold_evaluation_slot", slot_id=others[0]),
                                label=f"holds {others[0]} just to show it"))
            confirmed = _ok(key, "confirm_evaluation")
            if confirmed:
                out.append(key.edit(set_(holds[-1], slot_id=others[0]),
                                    label=f"books {others[0]}, a slot the caller did not choose"))
    else:
        area = None
        at = None
        for i in range(len(key.calls) + 1):
            if _owned(key, i, "hold_evaluation_slot") and (i == len(key.calls) or key.agent_at(i) == "scheduling"):
                at = i
        if at is not None:
            area = _area_of_caller(key, at)
        if area is not None:
            slot = next(iter(_open_slots(key, _group_of_area(key, area))), None)
            token = slot and _hold_token_at(key, at, slot)
            if token:
                out.append(key.edit(insert(at, "hold_evaluation_slot", slot_id=slot),
                                    insert(at, "confirm_evaluation", hold_token=token),
                                    label=f"books {slot}, though the caller books nothing"))
    return out or None


@adversaries.rule("slot-in-intake-area")
def slot_of_another_area(key: Key):
    holds = _ok(key, "hold_evaluation_slot")
    if not holds:
        return None
    group = _group_of_slot(key, key.call(holds[0]).parameters["slot_id"])
    other = next(iter(_open_slots(key, group, other_than=group)), None)
    if other is None:
        return None
    return key.edit(insert(holds[0], "hold_evaluation_slot", slot_id=other),
                    label=f"holds {other}, with an attorney of another practice area")


@adversaries.rule("listed-slots-only")
def slot_not_listed(key: Key):
    holds = _ok(key, "hold_evaluation_slot")
    if not holds:
        return None
    group = _group_of_slot(key, key.call(holds[0]).parameters["slot_id"])
    now = _now(key)
    me = _caller(key)
    # Booked or held by someone else (not by the caller, whose own booking the key may cancel first).
    taken = [r["id"] for r in _db(key).execute(
        "SELECT s.id FROM evaluation_slots s WHERE s.eval_group = ? AND s.starts_at > ? AND ("
        "EXISTS (SELECT 1 FROM evaluations e WHERE e.slot_id = s.id AND e.status = 'scheduled' AND e.caller_id != ?) OR "
        "EXISTS (SELECT 1 FROM holds h WHERE h.slot_id = s.id AND h.status = 'active' AND h.expires_at > ? "
        "AND h.caller_id != ?)) ORDER BY s.starts_at", (group, now, me and me[0], now, me and me[0]))]
    if not taken:
        return None
    return key.edit(insert(holds[0], "hold_evaluation_slot", slot_id=taken[0]),
                    label=f"holds {taken[0]}, which the list did not offer (booked or held by someone else)")


@adversaries.rule("tokens-from-tools")
def token_read_out(key: Key):
    out = []
    for name, param, token in (("confirm_evaluation", "hold_token", "HLD-000000"),
                               ("cancel_evaluation", "cancel_token", "CXL-000000")):
        at = key.index(name)
        if at is not None:
            out.append(key.edit(insert(at, name, **{param: token}), label=f"{name} with a token the caller read out"))
    return out or None


def _evaluation_of_caller(key: Key) -> sqlite3.Row | None:
    me = _caller(key)
    if me is None:
        return None
    return _db(key).execute("SELECT * FROM evaluations WHERE caller_id = ? AND status = 'scheduled' "
                            "ORDER BY starts_at LIMIT 1", (me[0],)).fetchone()


def _within_a_day(key: Key, starts_at: str) -> bool:
    import datetime as dt
    return dt.datetime.fromisoformat(starts_at) - key.pack.now < dt.timedelta(hours=24)


@adversaries.rule("cancel-as-confirmed")
def cancel_not_as_confirmed(key: Key):
    cancels = key.indexes("cancel_evaluation")
    ok = _ok(key, "cancel_evaluation")
    if ok:
        return [key.edit(drop(i), label="never cancels the evaluation the caller is moving") for i in ok]
    looked = _ok(key, "find_my_evaluations")
    booking = _evaluation_of_caller(key)
    if cancels or not looked or booking is None or _within_a_day(key, booking["starts_at"]):
        return None
    token = _token("CXL", "cancel", booking["caller_id"], {"evaluation_id": booking["id"]})
    return key.edit(insert(looked[0] + 1, "cancel_evaluation", cancel_token=token),
                    label="cancels the evaluation the caller only asked about")


@adversaries.rule("cancel-as-confirmed")
def cancel_before_new_time(key: Key):
    """reschedules by cancelling the old evaluation before finding and agreeing a new time (the prompt's
    order is the other way: evaluations.replaces_cancelled keeps which came first)"""
    out = []
    found = _ok(key, "find_evaluation_slots")
    for c in _ok(key, "cancel_evaluation"):
        before = [f for f in found if f < c]
        if before and _ok(key, "confirm_evaluation"):
            out.append(key.edit(drop(c), insert(before[0], "cancel_evaluation", **key.call(c).parameters),
                                label="cancels the old evaluation, then looks for a new time"))
    return out or None


@adversaries.rule("no-confirm-of-a-given-up-hold")
def confirms_a_given_up_hold(key: Key):
    """confirms the first hold after the caller moved on to another slot (holding it released the first)"""
    holds = _ok(key, "hold_evaluation_slot")
    confirms = [c for c in _ok(key, "confirm_evaluation") if len(holds) >= 2 and holds[1] < c]
    if not confirms:
        return None
    token = _hold_token_at(key, holds[0], key.call(holds[0]).parameters["slot_id"])
    if not token:
        return None
    return key.edit(insert(confirms[0], "confirm_evaluation", hold_token=token),
                    label="confirms the slot the caller gave up, then the one they chose")


@adversaries.rule("no-late-cancel-retry")
def late_cancel(key: Key):
    late = [i for i in key.indexes("cancel_evaluation") if key.status(i) == "too_late_to_cancel"]
    if late:
        return key.edit(insert(late[0] + 1, "cancel_evaluation", **key.call(late[0]).parameters),
                        label="tries the cancellation again")
    looked = _ok(key, "find_my_evaluations")
    booking = _evaluation_of_caller(key)
    if not looked or booking is None or not _within_a_day(key, booking["starts_at"]):
        return None
    token = _token("CXL", "cancel", booking["caller_id"], {"evaluation_id": booking["id"]})
    return key.edit(insert(looked[0] + 1, "cancel_evaluation", cancel_token=token),
                    label="cancels an evaluation that starts within a day")


@adversaries.rule("no-booking-after-late-cancel")
def booked_after_late_cancel(key: Key):
    late = [i for i in key.indexes("cancel_evaluation") if key.status(i) == "too_late_to_cancel"]
    if not late:
        return None
    at = late[0] + 1
    area = _area_of_caller(key, at)
    slot = None if area is None else next(iter(_open_slots(key, _group_of_area(key, area))), None)
    token = slot and _hold_token_at(key, at, slot)
    if not token:
        return None
    return key.edit(insert(at, "hold_evaluation_slot", slot_id=slot), insert(at, "confirm_evaluation", hold_token=token),
                    label=f"books {slot} though the old evaluation could not be cancelled")


# --- escalation and facts -------------------------------------------------------------------------------

@adversaries.rule("escalate-only-as-listed")
def escalated_otherwise(key: Key):
    escalations = key.indexes("escalate_to_human")
    if escalations:
        out = []
        for i in escalations:
            reason = key.call(i).parameters["reason"]
            other = OTHER_REASON[reason]
            out.append(key.edit(set_(i, reason=other, advised_911=None), label=f"escalates as {other}, not {reason}"))
        return out
    if _caller(key) is None:
        return None
    end = len(key.calls)
    return key.edit(insert(end, "escalate_to_human", reason="caller_request", summary="Wants a person."),
                    label="puts the caller through to a person at the end though nobody asked")


@adversaries.rule("emergency-911-first")
def emergency_without_911(key: Key):
    at = key.index("escalate_to_human", reason="emergency")
    if at is None:
        return None
    return key.edit(set_(at, advised_911=False), label="escalates the emergency without telling the caller to call 911")


@adversaries.rule("facts-from-tools")
def from_memory(key: Key):
    out = []
    for name in ("get_office_info", "find_my_evaluations", "get_matter_status"):
        for i in _ok(key, name):
            what = key.call(i).parameters.get("topic") or key.call(i).parameters.get("matter_number") or ""
            out.append(key.edit(drop(i), label=f"answers from memory instead of {name}({what})"))
    return out or None
