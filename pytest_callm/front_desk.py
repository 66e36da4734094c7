"""What every pack's front desk keeps the same way: identity checks and single-use tokens.

Identity. A real desk records who was verified on which record and by which details, every try
refused (a locked record, a call that used its tries), counts failed tries on the record itself and
locks the record after too many. The record is the evidence a wrong agent leaves: verifying a caller
as someone else's account holder writes a row the task's expected state does not have, so the
database gate fails it (a successful check writes nothing else, and extra calls are allowed). A
plain failed try is counted on the record, not written as a row: it is an extra call the paper
allows (a digit the phone line misheard, tried and then corrected), and a row for it would fail an
agent that recovers from the line's errors, or one that confirmed the digits before trying. Rows
that say the same thing are written once. Each pack keeps the rows in a compared table of its own
schema, with these columns (the pack's `schema.sql`):

    CREATE TABLE verifications (
        id INTEGER PRIMARY KEY,
        account TEXT,            -- the record the details were checked against; NULL when none matched
        claimed_name TEXT,       -- the name the caller gave, as given (compared by its kind)
        method TEXT NOT NULL,    -- the details used, e.g. 'date_of_birth' or 'zip_and_card'
        outcome TEXT NOT NULL,   -- 'verified', 'locked' (record locked) or 'refused' (the call's tries used)
        created_at TEXT
    );

The failed-try count and the lock live on the account record (columns the pack names), so they
persist across calls until staff reset them; a call also stops verifying after its own tries.

Tokens. A quote, hold or cancel reference is a single-use token bound to its kind and owner: the
same request asked twice gives the same token, a token of another owner is answered like an unknown
one (never hint at another caller's booking), and a used token is refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pytest_callm.normalize import identifier
from pytest_callm.toolkit import ToolContext, ToolError

VERIFIED, LOCKED, REFUSED = "verified", "locked", "refused"


@dataclass(frozen=True)
class IdentityRules:
    """How one pack checks identity: where the account records are and when they lock."""

    account_table: str  # e.g. "patients"
    id_column: str = "id"
    failures_column: str = "failed_verifications"  # on the account record
    locked_column: str = "locked"  # 1 once locked; staff unlock
    lock_after: int = 3  # failed tries on one record lock it
    tries_per_call: int = 3  # failed tries in one call end verification for that call
    records_table: str = "verifications"
    failed_code: str = "not_verified"
    failed_message: str = "I wasn't able to verify those details."
    locked_code: str = "account_locked"
    locked_message: str = ("For your security, this record is locked after several unsuccessful verification "
                           "attempts. Our staff can unlock it for you.")
    refused_code: str = "verification_locked"
    refused_message: str = "I'm not able to verify you on this call."


_TRIES = "identity_failures"  # session key: failed tries in this call
_VERIFIED = "identity_verified"  # session key: the account verified in this call


def check_identity(ctx: ToolContext, rules: IdentityRules, *, account: str | None, claimed_name: str | None,
                   method: str, passed: bool) -> None:
    """Record one identity check of `account` (None: the details match no record) and enforce the
    lockout. Returns when the caller is verified; otherwise raises the pack's ToolError, keeping the
    record and the count (a refusal that leaves no trace would let a wrong agent pass)."""
    tries = ctx.session.get(_TRIES, 0)
    if tries >= rules.tries_per_call:
        _record(ctx, rules, account, claimed_name, method, REFUSED)
        raise ToolError(rules.refused_code, rules.refused_message, keep_writes=True)
    row = None if account is None else ctx.db.execute(
        f"SELECT * FROM {rules.account_table} WHERE {rules.id_column} = ?", (account,)).fetchone()
    if row is not None and row[rules.locked_column]:
        _record(ctx, rules, account, claimed_name, method, LOCKED)
        raise ToolError(rules.locked_code, rules.locked_message, keep_writes=True)
    if passed and row is not None:
        _record(ctx, rules, account, claimed_name, method, VERIFIED)
        ctx.db.execute(f"UPDATE {rules.account_table} SET {rules.failures_column} = 0 WHERE {rules.id_column} = ?",
                       (account,))
        ctx.session[_VERIFIED] = account
        return
    ctx.session[_TRIES] = tries + 1
    ctx.session.pop(_VERIFIED, None)
    if row is not None:
        count = row[rules.failures_column] + 1
        ctx.db.execute(f"UPDATE {rules.account_table} SET {rules.failures_column} = ?, {rules.locked_column} = ? "
                       f"WHERE {rules.id_column} = ?", (count, int(count >= rules.lock_after), account))
    raise ToolError(rules.failed_code, rules.failed_message, keep_writes=True)


def verified_account(ctx: ToolContext) -> str | None:
    """The account verified in this call, if any."""
    return ctx.session.get(_VERIFIED)


def forget_verification(ctx: ToolContext) -> None:
    """A new lookup starts over: whoever was verified before is not verified for the next account."""
    ctx.session.pop(_VERIFIED, None)


def _record(ctx: ToolContext, rules: IdentityRules, account: str | None, claimed_name: str | None,
            method: str, outcome: str) -> None:
    same = ctx.db.execute(f"SELECT 1 FROM {rules.records_table} WHERE account IS ? AND claimed_name IS ? "
                          "AND method = ? AND outcome = ?", (account, claimed_name, method, outcome)).fetchone()
    if same is not None:
        return  # verifying the same caller again says nothing new (extra calls are allowed)
    ctx.db.execute(f"INSERT INTO {rules.records_table} (account, claimed_name, method, outcome, created_at) "
                   "VALUES (?, ?, ?, ?, ?)",
                   (account, claimed_name, method, outcome, ctx.now.isoformat(timespec="minutes")))


# --- single-use tokens -------------------------------------------------------------------------

TOKENS_TABLE = "callm_tokens"
_TOKENS_DDL = (f"CREATE TABLE IF NOT EXISTS {TOKENS_TABLE} (token TEXT PRIMARY KEY, kind TEXT NOT NULL, "
               "owner TEXT NOT NULL, payload TEXT NOT NULL, used INTEGER NOT NULL DEFAULT 0)")


def issue_token(ctx: ToolContext, prefix: str, kind: str, owner: str, payload: dict[str, Any]) -> str:
    """A token for `payload` (a quote's amounts, a hold's id), bound to `kind` and `owner`.

    The same request asked twice gives the same token (and refreshes nothing once it is used)."""
    ctx.db.execute(_TOKENS_DDL)
    body = json.dumps(payload, sort_keys=True)
    digest = hashlib.sha1(f"{kind}|{owner}|{body}".encode()).hexdigest()[:6].upper()
    token = f"{prefix}-{digest}"
    ctx.db.execute(f"INSERT INTO {TOKENS_TABLE} (token, kind, owner, payload) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT(token) DO NOTHING", (token, kind, owner, body))
    return token


@dataclass(frozen=True)
class TokenWords:
    """What the caller hears when a token is refused (a pack's own wording)."""

    unknown: str = "I couldn't find that reference."
    wrong_kind: str = "That reference is for a different kind of request."
    used: str = "That reference has already been used."


def use_token(ctx: ToolContext, token: str, kind: str, owner: str, words: TokenWords = TokenWords()) -> dict[str, Any]:
    """Spend a token and return its payload; refusals: invalid_token, wrong_token_kind,
    token_not_yours (said like an unknown one), token_already_used."""
    ctx.db.execute(_TOKENS_DDL)
    wanted = identifier(token)
    row = next((r for r in ctx.db.execute(f"SELECT * FROM {TOKENS_TABLE}") if identifier(r["token"]) == wanted), None)
    if row is None:
        raise ToolError("invalid_token", words.unknown)
    if row["kind"] != kind:
        raise ToolError("wrong_token_kind", words.wrong_kind)
    if row["owner"] != owner:
        raise ToolError("token_not_yours", words.unknown)
    if row["used"]:
        raise ToolError("token_already_used", words.used)
    ctx.db.execute(f"UPDATE {TOKENS_TABLE} SET used = 1 WHERE token = ?", (row["token"],))
    return json.loads(row["payload"])
