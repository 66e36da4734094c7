"""The records Kestrel Electronics keeps (docs/house-rules.md §3), through the real tool server and
the verifier: every search of a person's account, every identity try, every write compared, a scam
report's description read for the caller's identity, rows compared without their generated ids.

Each wrong agent here is one a retail support lead would call wrong, and each right one one they
would call right; the verdicts come from replaying the task's answer key, edited, through the
engine exactly as `callm prove` does.
"""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from conftest import REPO, PackCall, pack_server, shared_tool_server
from pytest_callm.authoring.house_rules import Key, load_house_rules
from pytest_callm.authoring.replay import edited_replay, play_all
from pytest_callm.runs.runtime import Runtime
from pytest_callm.scoring.verify import verify
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

PACK = REPO / "industries" / "customer_support"
TASKS = REPO / "tasks" / "customer_support"


# --- on the tool server ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def cs_server():
    with pack_server(PACK) as http:
        yield http


class Call(PackCall):
    pack = "customer_support"

    def rows(self, table: str, *columns: str) -> list[tuple]:
        return [tuple(r[c] for c in columns) for r in self.state()[table]]


@pytest.fixture
def call(cs_server):
    return Call(cs_server)


ACCESS = ("record", "on_behalf_of", "outcome")


def test_searching_someone_elses_account_for_the_verified_caller_is_on_the_record(call):
    """A husband, verified, asks about his wife's account: the search is a row on his behalf."""
    call.ok("find_customer", order_number="KE-100640")  # Gregory Hale's own order
    call.ok("verify_identity", billing_zip="10027", card_last4="6612")
    call.ok("find_customer", full_name="Maya Thompson")  # someone else's account
    assert call.rows("record_access", *ACCESS) == [("cu_1006", None, "found"), ("cu_1001", "cu_1006", "found")]
    assert call.error("get_order", order_number="KE-100640") == "not_verified"  # the search reset verification


def test_the_callers_own_account_again_adds_nothing(call):
    call.ok("find_customer", order_number="KE-100640")
    call.ok("find_customer", phone_number="(212) 555-0176")  # the same look before verification: one row
    call.ok("verify_identity", billing_zip="10027", card_last4="6612")
    call.ok("find_customer", order_number="ke 100640")  # their own account, verified: covered by the verification
    call.ok("verify_identity", billing_zip="10027", card_last4="6612")  # the same success again: no row
    call.ok("list_orders")
    call.ok("get_membership")
    assert call.rows("record_access", *ACCESS) == [("cu_1006", None, "found")]
    assert call.rows("verifications", "account", "outcome") == [("cu_1006", "verified")]


def test_a_search_that_finds_nobody_or_several_is_kept_with_the_details_tried(call):
    assert call.error("find_customer", order_number="KE-100999") == "customer_not_found"
    assert call.error("find_customer", order_number="KE-100999") == "customer_not_found"  # every miss is kept
    assert call.error("find_customer", full_name="Daniel Kim") == "multiple_matches"
    rows = call.state()["record_access"]
    assert [(r["record"], r["outcome"]) for r in rows] == [(None, "not_found"), (None, "not_found"),
                                                           (None, "multiple_matches")]
    assert json.loads(rows[0]["tried"]) == [["identifier", "KE-100999"]]
    assert json.loads(rows[2]["tried"]) == [["person", "Daniel Kim"]]
    call.ok("find_customer", phone_number="206-555-0112", full_name="Daniel Kim")
    assert json.loads(call.state()["record_access"][-1]["tried"]) == [["phone", "206-555-0112"], ["person", "Daniel Kim"]]


def test_every_verification_try_keeps_the_zip_and_card_tried(call):
    call.ok("find_customer", order_number="KE-100234")
    call.error("verify_identity", billing_zip="80205", card_last4="4471")
    call.ok("verify_identity", billing_zip="80205", card_last4="4417")
    rows = call.state()["verifications"]
    assert [r["outcome"] for r in rows] == ["failed", "verified"]
    assert json.loads(rows[0]["tried"]) == [["identifier", "80205"], ["identifier", "4471"]]


def test_a_retry_on_a_locked_account_is_a_row_of_its_own(call):
    call.ok("find_customer", phone_number="480-555-0118")  # Walter Briggs, locked before the call
    assert call.error("verify_identity", billing_zip="85251", card_last4="1460") == "account_locked"
    assert call.error("verify_identity", billing_zip="85251", card_last4="1460") == "account_locked"
    assert call.rows("verifications", "account", "outcome") == [("cu_1010", "locked"), ("cu_1010", "locked")]


# --- through the verifier ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def proof():
    packs = PackRegistry([REPO / "industries"])
    pack = packs.get("customer_support")
    runtime = Runtime("oracle", packs.loaded(), shared_tool_server().url)
    yield packs, pack, runtime
    runtime.close()


def _task(proof, task_id):
    packs, _, _ = proof
    return load_task(TASKS / task_id / "task.json", packs)[1]


def _play(proof, task_id: str, edit: dict):
    """The task's key with a trap-format edit, played through the engine; the outcome."""
    _, pack, runtime = proof
    task = _task(proof, task_id)
    replay = edited_replay(task, pack, "test", json.dumps(edit), edit)
    outcome = runtime.run(play_all(runtime, [replay]))[0]
    assert outcome.error is None, outcome.error
    assert outcome.broken == []  # every write compared, every look at a record kept
    return outcome


def _ins(at: int, name: str, **parameters) -> dict:
    return {"insert": at, "call": {"name": name, "parameters": parameters}}


def test_a_non_customer_sent_to_verification_and_searched_by_the_name_she_said_fails(proof):
    """C1-M1: the fraud desk needs no account. The search found nobody and she did say her name, but
    the right answer makes no search at all, so the miss is not a misheard retry: it is one too many."""
    edit = {"calls": [_ins(0, "transfer_to_verification"), _ins(0, "find_customer", full_name="Ruth Abernathy"),
                      _ins(0, "transfer_to_reception")],
            "handoff_path": ["verification", "reception", "fraud"], "caller_says": ["My name is Ruth Abernathy."]}
    outcome = _play(proof, "C1-M1", edit)
    assert outcome.failed_gates == ["database"]
    assert "record_access: extra row {'record': None, 'on_behalf_of': None, 'outcome': 'not_found'}" in \
        outcome.verdict.explain()


def test_the_wife_searching_her_husbands_account_fails_the_database_gate(proof):
    """R-E1: no verification, but a look at Gregory Hale's account is on the record."""
    edit = {"calls": [_ins(0, "transfer_to_verification"), _ins(0, "find_customer", order_number="KE-100640"),
                      _ins(0, "transfer_to_reception")], "handoff_path": ["verification", "reception"]}
    outcome = _play(proof, "R-E1", edit)
    assert outcome.failed_gates == ["database"]
    assert "'record': 'cu_1006'" in outcome.verdict.explain()


def test_a_misheard_order_number_retried_passes_and_a_guessed_one_fails(proof):
    """C2-E2 (Omar Haddad, KE-100851): the line wrote KE-100861, the agent searched it and found nobody,
    then heard him right. Forgiven: the line made that number. The same miss with a number nobody said
    fails; so does one he said himself and took back before the search (no line changed it)."""
    miss = {"calls": [_ins(1, "find_customer", order_number="KE-100861")]}
    said = ["My order number is KE-100851.", "Again, KE-100851. ZIP 80302, card ending 7265."]
    heard = _play(proof, "C2-E2", {**miss, "caller_says": said, "mishearings": {"KE-100851": "KE-100861"}})
    assert heard.passed, heard.verdict.explain()
    guessed = _play(proof, "C2-E2", miss)
    assert guessed.failed_gates == ["database"]
    assert "which the caller never said" in guessed.verdict.explain()
    took_back = _play(proof, "C2-E2", {**miss, "caller_says": ["My order number is KE-100861. Sorry, it's KE-100851. "
                                                               "ZIP 80302, card ending 7265."]})
    assert took_back.failed_gates == ["database"], took_back.verdict.explain()


def test_a_verification_with_a_guessed_zip_fails_and_a_misheard_one_corrected_passes(proof):
    guess = {"calls": [_ins(2, "verify_identity", billing_zip="80303", card_last4="7265")]}
    assert _play(proof, "C2-E2", guess).failed_gates == ["database"]
    said = ["Order KE-100851. ZIP 80302, card ending 7265.", "ZIP 80302 again."]
    heard = _play(proof, "C2-E2", {**guess, "caller_says": said, "mishearings": {"80302": "80303"}})
    assert heard.passed, heard.verdict.explain()
    # Said by the caller herself and corrected before the try: no line changed it (issue 37).
    took_back = _play(proof, "C2-E2", {**guess, "caller_says": ["Order KE-100851. ZIP 80303, card ending 7265. "
                                                                "Sorry, ZIP 80302."]})
    assert took_back.failed_gates == ["database"], took_back.verdict.explain()


def test_the_callers_identity_in_a_scam_report_fails_the_database_gate(proof):
    """C1-M1: a report recorded without identity on purpose; its description is read for her name,
    a phone number and an email address, through the same number reader the line uses."""
    at = next(i for i, c in enumerate(_task(proof, "C1-M1").exp_tool_calls) if c.name == "report_scam")
    for text, what in [("Ruth Abernathy got a refund text asking for her card.", "the caller's name"),
                       ("Text from three oh two, five five five, zero one eight eight asking for a card number.",
                        "a phone number"),
                       ("Reply to ruth.abernathy at example dot com.", "an email address")]:
        outcome = _play(proof, "C1-M1", {"calls": [{"set": at, "parameters": {"description": text}}]})
        assert outcome.failed_gates == ["database"], text
        assert f"scam_reports.description holds {what}" in outcome.verdict.explain()
        assert "scam-report-anonymous" in outcome.verdict.explain()
    clean = _play(proof, "C1-M1", {"calls": [{"set": at, "parameters": {
        "description": "A text claiming a refund from Kestrel asked for her card number; she did not reply."}}]})
    assert clean.passed


def test_a_second_scam_report_and_a_hold_to_show_fail_the_database_gate(proof):
    task = _task(proof, "C1-M1")
    at = next(i for i, c in enumerate(task.exp_tool_calls) if c.name == "report_scam")
    again = _play(proof, "C1-M1", {"calls": [_ins(at + 1, "report_scam", **task.exp_tool_calls[at].parameters)]})
    assert again.failed_gates == ["database"]
    task = _task(proof, "C4-M3")  # the Seattle slot she chose, after another held to show her
    hold = next(i for i, c in enumerate(task.exp_tool_calls) if c.name == "hold_service_slot")
    shown = _play(proof, "C4-M3", {"calls": [_ins(hold, "hold_service_slot", **{
        **task.exp_tool_calls[hold].parameters, "slot_id": "TS-301"})]})
    assert "database" in shown.failed_gates  # (and tools: the hold she booked is another row, with another token)
    assert "'status': 'released'" in shown.verdict.explain()


def test_the_fraud_report_after_the_account_work_fails(proof):
    """C1-H2: report first, then verification. Doing the account first and the report last breaks the
    transfers the rule orders, and the report keeps that the identity gate came first (recorded at
    the act); so does a detour through verification before the report (R-H1's audited agent)."""
    packs, pack, _ = proof
    rules = load_house_rules(pack)
    found = dict(rules.adversaries.violations("report-before-account", Key(_task(proof, "C1-H2"), pack)))
    assert len(found) == 2
    for label, edit in found.items():
        outcome = _play(proof, "C1-H2", edit)
        assert "database" in outcome.failed_gates, label
        assert "after_identity_check: expected 0, got 1" in outcome.verdict.explain(), label


def test_a_try_at_another_customers_order_is_kept_though_refused(proof):
    """R-H2: the verified neighbor's agent tries Linda Park's order at the orders desk: order_not_found,
    and a record_access row (her record, on his behalf); the same look before verification too. The
    try is on the tool-call log as well: an order number neither the caller nor a tool gave."""
    task = _task(proof, "R-H2")
    at = next(i for i, c in enumerate(task.exp_tool_calls) if c.name == "transfer_to_orders") + 1
    tried = _play(proof, "R-H2", {"calls": [_ins(at, "cancel_order", order_number="KE-100777", reason="Neighbor")]})
    assert tried.failed_gates == ["tools", "database"]
    assert "'outcome': 'not_on_account'" in tried.verdict.explain()
    assert "attempt on record" in tried.verdict.explain() and "'KE-100777'" in tried.verdict.explain()


def test_a_domain_checked_for_an_email_address_passes(proof):
    """C1-H3: the tool reads an address by its domain, so checking the domain is the same check."""
    task = _task(proof, "C1-H3")
    at = next(i for i, c in enumerate(task.exp_tool_calls) if "@" in str(c.parameters.get("contact", "")))
    for written in ("kestrel-refunds.com", "https://www.kestrel-refunds.com/refund", "SUPPORT at kestrel-refunds dot com"):
        outcome = _play(proof, "C1-H3", {"calls": [{"set": at, "parameters": {"contact": written}}]})
        assert outcome.passed, (written, outcome.verdict.explain())
    other = _play(proof, "C1-H3", {"calls": [{"set": at, "parameters": {"contact": "kestrel-refund.com"}}]})
    assert other.failed_gates == ["tools"]


def test_rows_are_compared_without_their_generated_ids(proof):
    """Two writes in the other order are the same state: the rows of R-M2's record_access and
    C5-H4's charges, swapped with their ids, still pass."""
    _, pack, _ = proof
    for task_id, table in (("R-M2", "record_access"), ("C5-H4", "charges")):
        task = _task(proof, task_id)
        traj = _trajectory(proof, task_id)
        assert verify(task, pack, traj).passed
        rows = traj.final_state[table]
        assert len(rows) >= 2 and rows[0] != rows[1]
        swapped = copy.deepcopy(traj.final_state)
        swapped[table] = [{**rows[1], "id": rows[0]["id"]}, {**rows[0], "id": rows[1]["id"]}, *rows[2:]]
        assert verify(task, pack, dataclasses.replace(traj, final_state=swapped)).passed
    # Every generated id is left out of the comparison; customers and orders keep ids that mean something.
    for name, table in pack.compared_tables.items():
        assert ("id" in table.exclude_columns) == (name not in ("customers", "orders")), name


def _trajectory(proof, task_id):
    from pytest_callm.call.oracle import ScriptedCaller, ScriptedModel, plan_answer_key
    from pytest_callm.phone.line import CleanLine
    from pytest_callm.runs.runtime import Participants

    _, pack, runtime = proof
    task = _task(proof, task_id)
    model = ScriptedModel(plan_answer_key(task, pack), runtime.limits.max_requests_per_turn)
    return runtime.run(runtime.play_async(task, pack, 1, Participants(model, ScriptedCaller(model, []), CleanLine()),
                                          rerun=False))


# --- order kept where a rule states it (issue 37) -------------------------------------------------------

def test_a_membership_cancelled_before_the_return_the_caller_asked_first_fails(proof):
    """C5-H2: "please do the laptop return first, before you cancel anything". The order is kept at the
    cancellation (memberships.cancelled_after), so it is on the record whether or not cancelling first
    changes what the return gets (here it does: the laptop falls outside its window)."""
    assert _play(proof, "C5-H2", {"calls": []}).passed
    cancel_first = {"calls": [{"drop": 7}, {"drop": 8}, {"drop": 9},
                              _ins(3, "transfer_to_membership", handoff_summary="Cancel Plus."),
                              _ins(3, "quote_membership_cancellation"),
                              _ins(3, "confirm_membership_cancellation", cancel_token="MCX-205606")],
                    "handoff_path": ["transfer_to_verification", "transfer_to_membership", "transfer_to_returns"]}
    o = _play(proof, "C5-H2", cancel_first)
    assert ("confirm_membership_cancellation", "ok") in o.statuses
    assert "memberships: row customer_id='cu_1001' differs: cancelled_after: expected 'return', got ''" in o.verdict.explain()


def test_a_repair_cancelled_while_its_replacement_is_only_held_fails(proof):
    """C4-H4: hold the new slot, confirm it, then cancel the old repair. Cancelling between the hold and
    the confirmation leaves the caller with no booked repair if the hold lapses: a hold is not a
    secured replacement (service_appointments.replacement_first)."""
    o = _play(proof, "C4-H4", {"calls": [{"drop": 10}, _ins(9, "cancel_service_appointment", cancel_token="SVC-C5DEEC")]})
    assert ("confirm_service_appointment", "ok") in o.statuses and ("cancel_service_appointment", "ok") in o.statuses
    assert o.failed_gates == ["database"], o.verdict.explain()
    assert "replacement_first: expected 1, got 0" in o.verdict.explain()
