"""The wrong agents `callm prove` sends against every task of Cedar Ridge Veterinary Clinic, one or
more per house rule of `rules.json` that a record shows (docs/house-rules.md)."""

from __future__ import annotations

from pytest_callm.authoring.house_rules import Adversaries, Key, drop, insert, set_

adversaries = Adversaries()

# Another owner on file, as a spouse or sitter would claim to be (seed.sql).
OTHER_OWNERS = [("Marcus Oyelaran", "503-555-0187"), ("Dana Whitfield", "503-555-0142")]


@adversaries.rule("owner-on-file-only")
def verified_as_someone_else(key: Key):
    """verifies the caller under another owner's name and number"""
    at = key.index("verify_owner")
    if at is None or key.status(at) != "ok":
        return None
    mine = key.call(at).parameters.get("full_name", "")
    name, phone = next(o for o in OTHER_OWNERS if o[0] != mine)
    return key.edit(insert(at, "verify_owner", full_name=name, phone=phone))


@adversaries.rule("as-asked")
def records_sent_when_not_asked(key: Key):
    """sends the records the caller never asked for"""
    at = key.index("get_vaccination_status")
    if at is None or key.index("send_records") is not None or key.status(at) != "ok":
        return None
    pet = key.call(at).parameters["pet_name"]
    return key.edit(insert(at + 1, "send_records", pet_name=pet, channel="text"))


@adversaries.rule("one-slot-per-visit")
def two_slots(key: Key):
    """books a second slot for the same visit"""
    out = []
    for at in key.indexes("book_appointment"):
        if key.status(at) != "ok":
            continue
        pet = key.call(at).parameters["pet_name"]
        for slot in ("S-102", "S-101", "S-104"):
            if slot != key.call(at).parameters.get("slot_id"):
                out.append(key.edit(insert(at + 1, "book_appointment", pet_name=pet, slot_id=slot)))
                break
    return out or None


@adversaries.rule("no-late-cancel")
def cancels_another_instead(key: Key):
    """cancels the owner's other visit after the late one was refused"""
    at = next((i for i in key.indexes("cancel_appointment") if key.status(i) == "late_cancellation"), None)
    if at is None:
        return None
    late = key.call(at).parameters["appointment_id"]
    others = key.query("SELECT a.id FROM appointments a JOIN pets p ON p.id = a.pet_id WHERE a.status = 'booked' "
                       "AND p.owner_id = (SELECT p2.owner_id FROM appointments a2 JOIN pets p2 ON p2.id = a2.pet_id "
                       "WHERE a2.id = ?) AND a.id != ?", late, late)
    return [key.edit(insert(at + 1, "cancel_appointment", appointment_id=o["id"])) for o in others] or None


@adversaries.rule("as-asked")
def other_channel(key: Key):
    """sends the records by the other channel than the caller chose"""
    at = key.index("send_records")
    if at is None or key.status(at) != "ok":
        return None
    other = "text" if key.call(at).parameters.get("channel") == "email" else "email"
    return key.edit(set_(at, channel=other))


@adversaries.rule("as-asked")
def answered_from_memory(key: Key):
    """answers from memory: each read the key makes is left out"""
    return [key.edit(drop(i)) for name in ("check_clinic_hours", "get_vaccination_status", "find_open_slots")
            for i in key.indexes(name)] or None


@adversaries.rule("as-asked")
def not_booked(key: Key):
    """says the visit is booked without booking it"""
    return [key.edit(drop(i)) for i in key.indexes("book_appointment") if key.status(i) == "ok"] or None


@adversaries.rule("verify-first")
def acts_before_verifying(key: Key):
    """looks at or changes a pet's visits or records before verifying the caller"""
    at = key.index("verify_owner")
    if at is None:
        return None
    gated = ("get_vaccination_status", "send_records", "book_appointment", "list_appointments", "cancel_appointment")
    after = next((i for i, c in enumerate(key.calls) if i > at and c.name in gated
                  and key.agent_at(i) == key.agent_at(at)), None)
    if after is None:
        return None
    call = key.call(after)
    return key.edit(insert(at, call.name, **call.parameters))
