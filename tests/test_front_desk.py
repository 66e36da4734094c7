"""front_desk: the identity checks and tokens every pack keeps the same way, on a real SQLite file."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3

import pytest

from pytest_callm.front_desk import (IdentityRules, check_identity, forget_verification, issue_token, record_access,
                                     tried, use_token, verified_account)
from pytest_callm.toolkit import SESSION_DDL, Session, ToolContext, ToolError

SCHEMA = """
CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT, failed_verifications INTEGER NOT NULL DEFAULT 0,
                       locked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE verifications (id INTEGER PRIMARY KEY, account TEXT, claimed_name TEXT, method TEXT NOT NULL,
                            outcome TEXT NOT NULL, tried TEXT, created_at TEXT);
CREATE TABLE record_access (id INTEGER PRIMARY KEY, record TEXT, on_behalf_of TEXT, outcome TEXT NOT NULL,
                            tried TEXT, created_at TEXT);
INSERT INTO accounts (id, name) VALUES ('A-1', 'Ana Ruiz'), ('A-2', 'Ben Ruiz');
"""
RULES = IdentityRules(account_table="accounts", lock_after=3, tries_per_call=2)


@pytest.fixture
def db(tmp_path):
    conn = sqlite3.connect(tmp_path / "call.db")
    conn.row_factory = sqlite3.Row
    conn.executescript(SCHEMA)
    yield conn
    conn.close()


def call(db):
    """A new call on the same database: a fresh session, the records and the accounts kept."""
    db.execute("DROP TABLE IF EXISTS callm_session")
    db.execute(SESSION_DDL)
    return ToolContext(db=db, session=Session(db), call_id="c", now=dt.datetime(2026, 8, 3, 9, 0))


def records(db):
    return [tuple(r) for r in db.execute("SELECT account, claimed_name, method, outcome FROM verifications")]


def fails(ctx, account, code, passed=False):
    with pytest.raises(ToolError) as caught:
        check_identity(ctx, RULES, account=account, claimed_name="Ana Ruiz", method="dob", passed=passed)
    assert caught.value.error_code == code and caught.value.keep_writes


def test_every_check_is_a_record_and_a_pass_verifies_that_account(db):
    ctx = call(db)
    check_identity(ctx, RULES, account="A-2", claimed_name="Ana Ruiz", method="dob", passed=True)
    assert verified_account(ctx) == "A-2"
    check_identity(ctx, RULES, account="A-2", claimed_name="ana ruiz", method="dob", passed=True)  # said once
    check_identity(ctx, RULES, account="A-2", claimed_name="Ruiz, Ana", method="dob", passed=True)  # the same person
    # Verified on someone else's account: the record says so, which an expected state does not.
    assert records(db) == [("A-2", "Ana Ruiz", "dob", "verified")]
    forget_verification(ctx)
    assert verified_account(ctx) is None


def test_failed_tries_lock_the_record_across_calls_and_a_call_stops_after_its_own(db):
    ctx = call(db)
    fails(ctx, "A-1", "not_verified")
    fails(ctx, None, "not_verified")  # details that match no record count in the call only
    fails(ctx, "A-1", "verification_locked")  # this call's two tries are used
    ctx = call(db)  # a new call: the record's count is still there
    fails(ctx, "A-1", "not_verified")
    fails(ctx, "A-1", "not_verified")
    ctx = call(db)
    fails(ctx, "A-1", "account_locked", passed=True)  # even with the right details
    assert tuple(db.execute("SELECT failed_verifications, locked FROM accounts WHERE id = 'A-1'").fetchone()) == (3, 1)
    # Every try is on the record, repeats, refusals and tries on a locked record included (the
    # verifier forgives a failed try only when the caller was heard saying every value it tried).
    assert [r[3] for r in records(db)] == ["failed", "failed", "refused", "failed", "failed", "locked"]


def test_a_try_keeps_the_details_tried_with_their_kinds(db):
    ctx = call(db)
    with pytest.raises(ToolError):
        check_identity(ctx, RULES, account=None, claimed_name="Ana Ruiz", method="dob", passed=False,
                       details=tried(person="Ana Ruiz", date="1990-01-02", person_2=None))
    row = db.execute("SELECT outcome, tried FROM verifications").fetchone()
    assert row[0] == "failed" and json.loads(row[1]) == [["person", "Ana Ruiz"], ["date", "1990-01-02"]]


def test_a_look_at_a_record_is_kept_once_and_the_verified_callers_own_is_not(db):
    ctx = call(db)
    record_access(ctx, record="A-1", details=tried(phone="5550100"))  # before verification: on the record
    record_access(ctx, record="A-1")  # the same look again adds nothing
    record_access(ctx, record=None, outcome="not_found", details=tried(phone="5550199"))
    record_access(ctx, record=None, outcome="not_found", details=tried(phone="5550199"))  # every miss is kept
    check_identity(ctx, RULES, account="A-1", claimed_name="Ana Ruiz", method="dob", passed=True)
    record_access(ctx, record="A-1")  # her own record, verified: covered by the verification
    record_access(ctx, record="A-2")  # her husband's: on the record, on her behalf
    rows = [tuple(r) for r in db.execute("SELECT record, on_behalf_of, outcome FROM record_access")]
    assert rows == [("A-1", None, "found"), (None, None, "not_found"), (None, None, "not_found"), ("A-2", "A-1", "found")]
    assert ctx.access_logged


def test_a_pass_resets_the_records_count(db):
    ctx = call(db)
    fails(ctx, "A-1", "not_verified")
    check_identity(ctx, RULES, account="A-1", claimed_name="Ana Ruiz", method="dob", passed=True)
    assert db.execute("SELECT failed_verifications FROM accounts WHERE id = 'A-1'").fetchone()[0] == 0


def test_a_token_is_single_use_bound_to_kind_and_owner_and_the_same_request_gets_the_same_token(db):
    ctx = call(db)
    token = issue_token(ctx, "Q", "refund", "A-1", {"amount": "12.50"})
    assert token == issue_token(ctx, "Q", "refund", "A-1", {"amount": "12.50"}) != \
        issue_token(ctx, "Q", "refund", "A-1", {"amount": "12.51"})
    for spent, kind, owner, code in [(token, "cancel", "A-1", "wrong_token_kind"),
                                     (token, "refund", "A-2", "token_not_yours"),
                                     ("Q-000000", "refund", "A-1", "invalid_token")]:
        with pytest.raises(ToolError) as caught:
            use_token(ctx, spent, kind, owner)
        assert caught.value.error_code == code
    assert use_token(ctx, token.lower(), "refund", "A-1") == {"amount": "12.50"}  # spelled any way
    with pytest.raises(ToolError) as caught:
        use_token(ctx, token, "refund", "A-1")
    assert caught.value.error_code == "token_already_used"
