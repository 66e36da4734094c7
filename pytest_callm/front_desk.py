"""What every pack's front desk keeps the same way: identity checks and single-use tokens.

Identity. A real desk records every identity try: who claimed to be whom, on which record, by which
details, and the outcome. Each pack keeps the rows in a compared table of its own schema, with
these columns (the pack's `schema.sql`):

    CREATE TABLE verifications (
        id INTEGER PRIMARY KEY,
        account TEXT,            -- the record the details were checked against; NULL when none matched
        claimed_name TEXT,       -- the name the caller gave, as given (compared by its kind)
        method TEXT NOT NULL,    -- the details used, e.g. 'date_of_birth' or 'zip_and_card'
        outcome TEXT NOT NULL,   -- 'verified', 'failed', 'locked' (record locked) or 'refused' (the call's tries used)
        tried TEXT,              -- JSON [[kind, value], ...]: the details tried (not compared; read by the verifier)
        created_at TEXT
    );

Every try is a row, repeats and tries on a locked record included: a guess is on the record. A
failed try whose every value the caller was heard saying (a digit the phone line misheard, tried,
then corrected) is forgiven by the verifier (`forgive_if_heard` in `pack.json`); one with a value
nobody said is not. Only a repeated successful check of the same person on the same record adds
nothing (the name compared as a person: "Dr. Ana Ruiz" is "ana ruiz"). The failed-try count and the
lock live on the account record (columns the pack names), so they persist across calls until staff
reset them; a call also stops verifying after its own tries.

Access. Every look at a person's record leaves a row (`record_access` below): whose record, on
whose behalf, the outcome, the details used. A look at the record of the caller verified in this
call is covered by the verification row and adds nothing, so touching one's own record again is
harmless; a look at anyone else's record, or any record before verification, is on the record.
The tool server checks the promise: a tool that reads one of the pack's people tables
(`pack.json` "people") without calling `record_access` or `check_identity` is reported by
`callm prove` as a broken invariant.

Tokens. A quote, hold or cancel reference is a single-use token bound to its kind and owner: the
same request asked twice gives the same token, a token of another owner is answered like an unknown
one (never hint at another caller's booking), and a used token is refused.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pytest_callm.normalize import identifier, person
from pytest_callm.toolkit import ToolContext, ToolError

VERIFIED, FAILED, LOCKED, REFUSED = "verified", "failed", "locked", "refused"


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
VERIFIED_OUTCOMES = frozenset({VERIFIED})
Tried = list  # [[kind, value], ...]: the details of one try, each with its kind of value


def tried(**values: Any) -> Tried:
    """The details of a try as the record keeps them: `tried(person="Ana Ruiz", date="1990-01-02")`.
    Keyword names are kinds of value (normalize.KINDS); a value that is None is left out."""
    return [[kind.rstrip("_0123456789"), value] for kind, value in values.items() if value not in (None, "")]


def check_identity(ctx: ToolContext, rules: IdentityRules, *, account: str | None, claimed_name: str | None,
                   method: str, passed: bool, details: Tried | None = None) -> None:
    """Record one identity check of `account` (None: the details match no record) and enforce the
    lockout. Returns when the caller is verified; otherwise raises the pack's ToolError, keeping the
    record and the count (a refusal that leaves no trace would let a wrong agent pass)."""
    ctx.access_logged = True
    tries = ctx.session.get(_TRIES, 0)
    if tries >= rules.tries_per_call:
        _record(ctx, rules, account, claimed_name, method, REFUSED, details)
        raise ToolError(rules.refused_code, rules.refused_message, keep_writes=True)
    row = None if account is None else ctx.db.execute(
        f"SELECT * FROM {rules.account_table} WHERE {rules.id_column} = ?", (account,)).fetchone()
    if row is not None and row[rules.locked_column]:
        _record(ctx, rules, account, claimed_name, method, LOCKED, details)
        raise ToolError(rules.locked_code, rules.locked_message, keep_writes=True)
    if passed and row is not None:
        _record(ctx, rules, account, claimed_name, method, VERIFIED, details)
        ctx.db.execute(f"UPDATE {rules.account_table} SET {rules.failures_column} = 0 WHERE {rules.id_column} = ?",
                       (account,))
        ctx.session[_VERIFIED] = account
        return
    _record(ctx, rules, account, claimed_name, method, FAILED, details)
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
            method: str, outcome: str, details: Tried | None) -> None:
    if outcome in VERIFIED_OUTCOMES:
        wanted = person(claimed_name) if claimed_name else None
        for r in ctx.db.execute(f"SELECT claimed_name FROM {rules.records_table} WHERE account IS ? AND method = ? "
                                "AND outcome = ?", (account, method, outcome)):
            if (person(r[0]) if r[0] else None) == wanted:
                return  # the same person verified again on the same record says nothing new
    ctx.db.execute(f"INSERT INTO {rules.records_table} (account, claimed_name, method, outcome, tried, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)",
                   (account, claimed_name, method, outcome, json.dumps(details or []),
                    ctx.now.isoformat(timespec="minutes")))


# --- access to a person's record ---------------------------------------------------------------

ACCESS_TABLE = "record_access"
FOUND, NOT_FOUND = "found", "not_found"


def record_access(ctx: ToolContext, *, record: str | None, outcome: str = FOUND, details: Tried | None = None,
                  on_behalf_of: str | None = None, table: str = ACCESS_TABLE) -> None:
    """Keep a look at a person's record (`record`: its id; None when the details matched none).

    `on_behalf_of` defaults to the account verified in this call. A look at the verified caller's own
    record adds nothing (the verification row covers it); a look already on the record (the same
    record, on behalf of the same account, with the same outcome) adds nothing either. A look that
    found nobody is kept every time, with the details tried, like a failed identity try."""
    ctx.access_logged = True
    behalf = verified_account(ctx) if on_behalf_of is None else on_behalf_of
    if record is not None and record == behalf:
        return
    if record is not None and ctx.db.execute(
            f"SELECT 1 FROM {table} WHERE record IS ? AND on_behalf_of IS ? AND outcome = ?",
            (record, behalf, outcome)).fetchone():
        return
    ctx.db.execute(f"INSERT INTO {table} (record, on_behalf_of, outcome, tried, created_at) VALUES (?, ?, ?, ?, ?)",
                   (record, behalf, outcome, json.dumps(details or []), ctx.now.isoformat(timespec="minutes")))


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
