"""front_desk: the identity checks and tokens every pack keeps the same way, on a real SQLite file."""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from pytest_callm.front_desk import (IdentityRules, check_identity, forget_verification, issue_token, use_token,
                                     verified_account)
from pytest_callm.toolkit import SESSION_DDL, Session, ToolContext, ToolError

SCHEMA = """
CREATE TABLE accounts (id TEXT PRIMARY KEY, name TEXT, failed_verifications INTEGER NOT NULL DEFAULT 0,
                       locked INTEGER NOT NULL DEFAULT 0);
CREATE TABLE verifications (id INTEGER PRIMARY KEY, account TEXT, claimed_name TEXT, method TEXT NOT NULL,
                            outcome TEXT NOT NULL, created_at TEXT);
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
    check_identity(ctx, RULES, account="A-2", claimed_name="Ana Ruiz", method="dob", passed=True)  # said once
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
    # Plain failed tries are counted on the record, not logged: a misheard digit tried and then
    # corrected is an extra call; a refused try and a try on a locked record are on the record.
    assert [r[3] for r in records(db)] == ["refused", "locked"]


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
