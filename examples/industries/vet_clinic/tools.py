"""Tool logic of Cedar Ridge Veterinary Clinic.

House rules enforced here as well as in the prompts (`rules.json` lists them, `adversaries.py`
breaks each one for `callm prove`):
- identity gate: nothing about a pet is read or written before `verify_owner` succeeds in this
  call, and only the verified owner's own pets are reachable; every try is on the record
  (`verifications`, through pytest_callm.front_desk), and three failed tries lock the account;
- records go only to the contact details on file, never to a number or address the caller gives;
- a booked visit cannot be cancelled by phone within 24 hours of its start.
"""

from __future__ import annotations

import datetime as dt

from pytest_callm.front_desk import IdentityRules, check_identity, forget_verification, record_access, tried, \
    verified_account
from pytest_callm.normalize import person, phone as phone_digits
from pytest_callm.toolkit import ToolContext, ToolError, ToolRegistry

tools = ToolRegistry()

LATE_CANCEL_WINDOW = dt.timedelta(hours=24)


IDENTITY = IdentityRules(account_table="owners", failed_code="identity_not_verified",
                         failed_message="I couldn't match that name and phone number to an account.")


def _verified_owner(ctx: ToolContext) -> str:
    owner_id = verified_account(ctx)
    if owner_id is None:
        raise ToolError("not_verified", "I need to verify your identity first.")
    record_access(ctx, record=owner_id)  # the verified owner's own record: covered by the verification
    return owner_id


def _owned_pet(ctx: ToolContext, pet_name: str):
    owner_id = _verified_owner(ctx)
    pet = ctx.db.execute("SELECT * FROM pets WHERE owner_id = ? AND lower(name) = lower(?)",
                         (owner_id, pet_name.strip())).fetchone()
    if pet is None:
        raise ToolError("pet_not_found", "I don't see a pet by that name on your account.")
    return pet


@tools.tool
def check_clinic_hours(ctx: ToolContext, day: str) -> dict:
    # The same alias table the verifier reads `day` through (pack.json "weekday").
    match = ctx.values.canonical("weekday", day)
    if match is None:
        raise ToolError("unknown_day", "Which day of the week did you mean?")
    row = ctx.db.execute("SELECT * FROM clinic_hours WHERE day = ?", (match,)).fetchone()
    return {"day": match, "open": row["opens"] is not None, "opens": row["opens"], "closes": row["closes"]}


@tools.tool
def verify_owner(ctx: ToolContext, full_name: str, phone: str) -> dict:
    # Matched with the verifier's own `person` and `phone` kinds: "Mrs. Dana Whitfield" is Dana Whitfield.
    digits = phone_digits(phone)
    on_phone = ctx.db.execute("SELECT * FROM owners WHERE phone = ?", (digits,)).fetchall()
    row = next((r for r in on_phone if person(r["full_name"]) == person(full_name)), None)
    account = row["id"] if row else (on_phone[0]["id"] if on_phone else None)  # the record the number is on
    forget_verification(ctx)  # a new check: whoever was verified before is not, unless this one passes
    check_identity(ctx, IDENTITY, account=account, claimed_name=full_name, method="name_and_phone",
                   passed=row is not None, details=tried(person=full_name, phone=phone))
    pets = [r["name"] for r in ctx.db.execute("SELECT name FROM pets WHERE owner_id = ? ORDER BY name", (row["id"],))]
    return {"owner_id": row["id"], "verified": True, "pets": pets, "email_on_file": row["email"] is not None}


@tools.tool
def get_vaccination_status(ctx: ToolContext, pet_name: str) -> dict:
    pet = _owned_pet(ctx, pet_name)
    today = ctx.today.isoformat()
    return {"pet_name": pet["name"], "rabies_due": pet["rabies_due"], "rabies_current": pet["rabies_due"] >= today,
            "distemper_due": pet["distemper_due"], "distemper_current": pet["distemper_due"] >= today}


@tools.tool
def send_records(ctx: ToolContext, pet_name: str, channel: str) -> dict:
    pet = _owned_pet(ctx, pet_name)
    owner = ctx.db.execute("SELECT * FROM owners WHERE id = ?", (pet["owner_id"],)).fetchone()
    destination = owner["email"] if channel == "email" else owner["phone"]
    if destination is None:
        raise ToolError("no_email_on_file", "We don't have an email address on file; I can send them by text.")
    cur = ctx.db.execute("INSERT INTO record_requests (pet_id, channel, destination, created_at) VALUES (?, ?, ?, ?)",
                         (pet["id"], channel, destination, ctx.now.isoformat(timespec="minutes")))
    return {"request_id": cur.lastrowid, "status": "sent", "channel": channel}


@tools.tool
def find_open_slots(ctx: ToolContext, service: str, on_or_after: str | None = None) -> dict:
    start = on_or_after or ctx.today.isoformat()
    rows = ctx.db.execute("SELECT id, starts_at, vet FROM slots WHERE service = ? AND available = 1 "
                          "AND starts_at >= ? ORDER BY starts_at", (service, start)).fetchall()
    return {"service": service, "slots": [dict(r) for r in rows]}


@tools.tool
def book_appointment(ctx: ToolContext, pet_name: str, slot_id: str) -> dict:
    pet = _owned_pet(ctx, pet_name)
    slot = ctx.db.execute("SELECT * FROM slots WHERE id = ?", (slot_id.strip().upper(),)).fetchone()
    if slot is None or not slot["available"]:
        raise ToolError("slot_unavailable", "That time is no longer available.")
    ctx.db.execute("UPDATE slots SET available = 0 WHERE id = ?", (slot["id"],))
    cur = ctx.db.execute(
        "INSERT INTO appointments (pet_id, slot_id, service, starts_at, status, created_at) "
        "VALUES (?, ?, ?, ?, 'booked', ?)",
        (pet["id"], slot["id"], slot["service"], slot["starts_at"], ctx.now.isoformat(timespec="minutes")))
    return {"appointment_id": cur.lastrowid, "pet_name": pet["name"], "service": slot["service"],
            "starts_at": slot["starts_at"], "vet": slot["vet"]}


@tools.tool
def list_appointments(ctx: ToolContext) -> dict:
    owner_id = _verified_owner(ctx)
    rows = ctx.db.execute(
        "SELECT a.id AS appointment_id, p.name AS pet_name, a.service, a.starts_at FROM appointments a "
        "JOIN pets p ON p.id = a.pet_id WHERE p.owner_id = ? AND a.status = 'booked' ORDER BY a.starts_at",
        (owner_id,)).fetchall()
    return {"appointments": [dict(r) for r in rows]}


@tools.tool
def cancel_appointment(ctx: ToolContext, appointment_id: int) -> dict:
    owner_id = _verified_owner(ctx)
    row = ctx.db.execute("SELECT a.*, p.owner_id FROM appointments a JOIN pets p ON p.id = a.pet_id "
                         "WHERE a.id = ? AND p.owner_id = ?", (appointment_id, owner_id)).fetchone()
    if row is None or row["owner_id"] != owner_id or row["status"] != "booked":
        raise ToolError("appointment_not_found", "I don't see that appointment on your account.")
    if dt.datetime.fromisoformat(row["starts_at"]) - ctx.now < LATE_CANCEL_WINDOW:
        raise ToolError("late_cancellation",
                        "Visits within 24 hours can't be cancelled by phone; please speak with the front desk.")
    ctx.db.execute("UPDATE appointments SET status = 'cancelled' WHERE id = ?", (appointment_id,))
    ctx.db.execute("UPDATE slots SET available = 1 WHERE id = ?", (row["slot_id"],))
    return {"appointment_id": appointment_id, "status": "cancelled"}
