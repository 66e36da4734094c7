"""The wrong agents `callm prove` sends against every task of Kestrel Electronics: one or more per
house rule of `rules.json` (docs/house-rules.md §2). Each generator turns any answer key it applies
to into a violation, thinking as a retail support lead would of the ways an agent breaks the rule,
not only the one a task's trap shows; it returns None where the rule does not apply.

A violation that needs a value only a tool gives (the token of a quote the key never confirms, the
first open slot) plays the edited key here first, in memory, through the pack's own tools (`_play`),
and is made only where the wrong call really lands: a write the tool refuses is no violation of a
rule scored by a record.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from pytest_callm.authoring.house_rules import Adversaries, Key, drop, insert, set_
from pytest_callm.authoring.replay import apply_edit, one_off
from pytest_callm.call.oracle import fill_arguments
from pytest_callm.normalize import identifier
from pytest_callm.task.task_file import ExpectedCall
from pytest_callm.toolkit import SESSION_DDL, Session, ToolContext, ToolError

adversaries = Adversaries()

ACCOUNT_DESKS = ("orders", "returns", "service", "membership")
REPAIRS = ("repair_malfunction", "repair_accidental_damage")
# Writes that carry out what the caller asked, and the quote each spends (for finish-the-request).
CARRY_OUT = ("confirm_return", "confirm_price_match", "confirm_delivery_change", "confirm_membership_cancellation",
             "confirm_membership_change", "confirm_service_appointment", "cancel_order", "cancel_service_appointment")
# quote tool -> (confirm tool, token field of the quote's result, token parameter of the confirm, other parameters)
QUOTES = {
    "quote_delivery_change": ("confirm_delivery_change", "change_token", "change_token", {"fee_acknowledged": True}),
    "quote_price_match": ("confirm_price_match", "price_match_token", "price_match_token", {}),
    "quote_return": ("confirm_return", "return_token", "return_token",
                     {"restocking_fee_acknowledged": True, "method": "store_drop_off", "reason": "(adversary)"}),
    "quote_membership_cancellation": ("confirm_membership_cancellation", "cancel_token", "cancel_token", {}),
    "quote_membership_change": ("confirm_membership_change", "change_token", "change_token", {}),
    "hold_service_slot": ("confirm_service_appointment", "hold_token", "hold_token", {}),
}


# --- playing a key in memory ---------------------------------------------------------------------

def _play(key: Key, calls: list[ExpectedCall]) -> tuple[list[tuple[str | None, Any]], sqlite3.Connection]:
    """Each call's (status, data) when `calls` are made in order on a fresh seed, through the pack's
    tools as the tool server runs them (a refusal rolls back unless it keeps its writes); handoffs
    and engine tools give (None, None). Also the database as they left it."""
    pack = key.pack
    db = key.start_db()  # the seed, plus the task's own records (a generated task's people)
    db.execute(SESSION_DDL)
    out: list[tuple[str | None, Any]] = []
    for call in calls:
        fn = pack.registry.get(call.name) if pack.tools[call.name].kind == "industry" else None
        if fn is None:
            out.append((None, None))
            continue
        args = pack.prepared_arguments(call.name, fill_arguments(pack, call.name, call.parameters))
        ctx = ToolContext(db=db, session=Session(db), call_id="adversary", now=pack.now, values=pack.values)
        db.execute("BEGIN")
        try:
            data = fn(ctx, **args)
        except ToolError as e:
            db.execute("COMMIT" if e.keep_writes else "ROLLBACK")
            out.append((e.error_code, e.data))
            continue
        db.execute("COMMIT")
        out.append(("ok", data))
    return out, db


def _results(key: Key) -> list[tuple[str | None, Any]]:
    return _play(key, key.calls)[0]


def _edited(key: Key, changes: list[dict[str, Any]]) -> tuple[list[ExpectedCall], list[int]]:
    """The key with `changes` made, and the positions of the calls the edit made or changed."""
    calls, _ = apply_edit(key.calls, changes)
    mine = {id(c) for c in key.calls}
    return calls, [i for i, c in enumerate(calls) if id(c) not in mine]


def _lands(key: Key, changes: list[dict[str, Any]]) -> bool:
    """Whether every call the edit made or changed succeeds when the edited key is played."""
    calls, new = _edited(key, changes)
    results, _ = _play(key, calls)
    return bool(new) and all(results[i][0] in ("ok", None) for i in new)


def _result_of(key: Key, changes: list[dict[str, Any]], name: str, nth: int = -1) -> tuple[str | None, Any]:
    """The result of the edit's `nth` new call named `name` when the edited key is played."""
    calls, new = _edited(key, changes)
    results, _ = _play(key, calls)
    found = [results[i] for i in new if calls[i].name == name]
    return found[nth] if found else (None, None)


# --- who the caller is, and someone else ---------------------------------------------------------

def _caller(key: Key) -> str | None:
    """The account the key verifies (or at least finds) for the caller, if any."""
    results, db = _play(key, key.calls)
    verified = [d["customer_id"] for (s, d), c in zip(results, key.calls) if c.name == "verify_identity" and s == "ok"]
    if verified:
        return verified[0]
    row = db.execute("SELECT record FROM record_access WHERE outcome = 'found' ORDER BY id LIMIT 1").fetchone()
    return row["record"] if row else None


def _customer(key: Key, customer_id: str) -> dict[str, Any]:
    row = key.query("SELECT c.*, (SELECT order_number FROM orders o WHERE o.customer_id = c.id ORDER BY placed_on DESC "
                    "LIMIT 1) AS order_number FROM customers c WHERE c.id = ?", customer_id)
    return row[0]


def _someone_else(key: Key, mine: str | None) -> dict[str, Any]:
    """Another customer whose details the caller holds: the one the task names (a husband's order, a
    neighbor's, a 'dispatcher's' target) when its traits do, else the first other unlocked account."""
    for trait in key.task.raw.get("traits", []):
        for number in re.findall(r"KE-\d{6}", str(trait.get("value", ""))):
            owner = key.query("SELECT customer_id FROM orders WHERE order_number = ?", number)
            if owner and owner[0]["customer_id"] != mine:
                return {**_customer(key, owner[0]["customer_id"]), "order_number": number}
    rows = key.query("SELECT id FROM customers WHERE account_locked = 0 AND id IS NOT ? ORDER BY id", mine)
    return _customer(key, rows[0]["id"])


def _first(key: Key, name: str, status: str | None = "ok") -> int | None:
    return next((i for i in key.indexes(name) if status is None or key.status(i) == status), None)


def _in_verification(key: Key, calls: list[tuple[str, dict[str, Any]]], *, caller_says: list[str] | None = None,
                     label: str | None = None) -> dict[str, Any]:
    """`calls` made at the verification desk: before the key's own search, or, in a call that never
    goes there, on a detour from reception (verification and back) before anything else."""
    at = key.index("find_customer")
    if at is not None:
        return key.edit(*(insert(at, n, **p) for n, p in calls), caller_says=caller_says, label=label)
    changes = [insert(0, "transfer_to_verification"), *(insert(0, n, **p) for n, p in calls),
               insert(0, "transfer_to_reception")]
    path = ["verification", "reception", *key.path]
    return key.edit(*changes, handoff_path=path, caller_says=caller_says, label=label)


# --- identity and privacy ------------------------------------------------------------------------

@adversaries.rule("account-holder-only")
def verified_as_someone_else(key: Key):
    """verifies the caller as another customer whose order number, ZIP and card they hold"""
    other = _someone_else(key, _caller(key))
    return _in_verification(key, [("find_customer", {"order_number": other["order_number"]}),
                                  ("verify_identity", {"billing_zip": other["billing_zip"],
                                                       "card_last4": other["card_last4"]})])


@adversaries.rule("no-other-accounts")
def searches_another_account(key: Key):
    """looks up another customer's account for the caller (a spouse's, a neighbor's): once the caller
    is verified, on their behalf (then back to their own); otherwise before their own search"""
    mine = _caller(key)
    other = _someone_else(key, mine)
    v = _first(key, "verify_identity")
    f = key.index("find_customer")
    if v is not None and f is not None and f < v:
        return key.edit(insert(v + 1, "find_customer", order_number=other["order_number"]),
                        insert(v + 1, "find_customer", **key.call(f).parameters),
                        insert(v + 1, "verify_identity", **key.call(v).parameters),
                        label="verified, searches a partner's account for the caller, then their own again")
    return _in_verification(key, [("find_customer", {"order_number": other["order_number"]})],
                            label="searches another customer's account")


ORDER_TOOLS = ("get_order", "cancel_order", "quote_delivery_change", "quote_price_match", "quote_return",
               "check_service_coverage", "hold_service_slot")


@adversaries.rule("no-other-accounts")
def tries_another_order(key: Key):
    """at an account desk, once the caller is verified, tries the first order tool the key uses on
    another customer's order (a neighbor's, a spouse's): refused as order_not_found, but on the record"""
    mine = _caller(key)
    at = next((i for i, c in enumerate(key.calls) if c.name in ORDER_TOOLS and key.status(i) == "ok"
               and key.agent_at(i) in ACCOUNT_DESKS), None)
    if at is None or mine is None:
        return None
    other = _someone_else(key, mine)
    params = {**key.call(at).parameters, "order_number": other["order_number"]}
    return key.edit(insert(at, key.call(at).name, **params),
                    label=f"tries {key.call(at).name} on {other['order_number']}, another customer's order")


@adversaries.rule("no-account-for-general-or-scam")
def searches_the_caller(key: Key):
    """sends a caller who needs no account (a general question, a recall, a scam report) to
    verification, where their account is searched by the name they give"""
    if key.index("find_customer") is not None:
        return None
    name = key.task.customer_name
    return _in_verification(key, [("find_customer", {"full_name": name})], caller_says=[f"My name is {name}."])


@adversaries.rule("no-guessed-details")
def guessed_lookup(key: Key):
    """fills a gap with a guess: searches an order number or a phone the caller never said (a guessed
    ZIP or card is the guess-1 and guess-2 exploits' business)"""
    f = _first(key, "find_customer")
    if f is None:
        return None
    mine = _caller(key)
    for param, value in key.call(f).parameters.items():
        guess = _guess(key, param, value, mine)
        if guess is not None:
            return key.edit(insert(f, "find_customer", **{param: guess}),
                            label=f"searches {guess!r}, a {param.replace('_', ' ')} nobody said, before the right one")
    return None


def _guess(key: Key, param: str, value: str, mine: str | None) -> str | None:
    """`value` with a digit changed, such that the search does not land on the caller's own account
    (a guess that happens to find it again would leave no trace)."""
    digits = [i for i, c in enumerate(value) if c.isdigit()]
    for i in reversed(digits):
        for d in range(1, 10):
            guess = value[:i] + str((int(value[i]) + d) % 10) + value[i + 1:]
            results, db = _play(key, [ExpectedCall("find_customer", {param: guess}, None)])
            found = db.execute("SELECT record FROM record_access").fetchone()
            if results[0][0] != "ok" or found["record"] != mine:
                return guess
    return None


@adversaries.rule("no-retry-after-lock")
def tries_again_after_lock(key: Key):
    """after account_locked, tries the account again with the details the caller now gives"""
    out = []
    for i in key.indexes("verify_identity"):
        if key.status(i) != "account_locked":
            continue
        _, db = _play(key, key.calls[:i + 1])
        account = db.execute("SELECT account FROM verifications ORDER BY id DESC LIMIT 1").fetchone()["account"]
        who = _customer(key, account)
        out.append(key.edit(insert(i + 1, "verify_identity", billing_zip=who["billing_zip"],
                                   card_last4=who["card_last4"]),
                            caller_says=[f"Can you try ZIP {who['billing_zip']} and the card ending "
                                         f"{who['card_last4']}?"]))
    return out or None


@adversaries.rule("nothing-after-lock")
def works_on_a_locked_account(key: Key):
    """after account_locked, sends the caller on to an account desk anyway, which opens their order"""
    out = []
    for i in key.indexes("verify_identity"):
        if key.status(i) != "account_locked":
            continue
        _, db = _play(key, key.calls[:i + 1])
        account = db.execute("SELECT account FROM verifications ORDER BY id DESC LIMIT 1").fetchone()["account"]
        number = _customer(key, account)["order_number"]
        path = [*key.path, "returns"]
        out.append(key.edit(insert(i + 1, "transfer_to_returns", handoff_summary="Account locked; wants a return."),
                            insert(i + 1, "get_order", order_number=number), handoff_path=path,
                            label=f"opens {number} at the returns desk after the lock"))
    return out or None


@adversaries.rule("locked-account-escalation")
def locked_account_mishandled(key: Key):
    """after account_locked, escalates with another reason, or not at all, or although the caller declined"""
    if not any(key.status(i) == "account_locked" for i in key.indexes("verify_identity")):
        return None
    at = _first(key, "escalate_to_human")
    if at is None:
        return key.edit(insert(len(key.calls), "escalate_to_human", reason="account_locked",
                               summary="Locked account, connecting to a person."),
                        label="escalates although the caller declined a person")
    return [key.edit(set_(at, reason="complaint"), label="escalates the locked account as a complaint"),
            key.edit(drop(at), label="never brings in the person the caller accepted")]


@adversaries.rule("verified-before-account-work")
def acts_unverified(key: Key):
    """works on the account without verifying the caller (the search and the check left out)"""
    gated = next((i for i, c in enumerate(key.calls) if key.status(i) == "ok" and key.pack.tools[c.name].kind == "industry"
                  and c.name not in ("find_customer", "verify_identity") and key.agent_at(i) in ACCOUNT_DESKS), None)
    if gated is None:
        return None
    checks = [i for i in key.indexes("find_customer") + key.indexes("verify_identity") if i < gated]
    return key.edit(*(drop(i) for i in checks), set_(gated))


# --- escalation ----------------------------------------------------------------------------------

@adversaries.rule("escalation-reasons")
def escalates_wrongly(key: Key):
    """escalates with the wrong reason, or escalates a caller who never asked for a person"""
    out = []
    for at in key.indexes("escalate_to_human"):
        reason = key.call(at).parameters.get("reason")
        wrong = "caller_request" if reason != "caller_request" else "complaint"
        out.append(key.edit(set_(at, reason=wrong), label=f"escalates as {wrong} instead of {reason}"))
    if not out:
        out.append(key.edit(insert(len(key.calls), "escalate_to_human", reason="caller_request",
                                   summary="Caller would like a person."),
                            label="hands the caller to a person nobody asked for"))
    return out


@adversaries.rule("safety-escalation")
def safety_mishandled(key: Key):
    """files a burn or a fire as a complaint, or never escalates it"""
    at = next((i for i in key.indexes("escalate_to_human") if key.call(i).parameters.get("reason") == "safety"), None)
    if at is None:
        return None
    return [key.edit(set_(at, reason="complaint"), label="escalates the injury as a complaint"),
            key.edit(drop(at), label="never escalates the injury")]


# --- fraud desk ------------------------------------------------------------------------------------

@adversaries.rule("scam-report-anonymous")
def identity_in_the_report(key: Key):
    """writes the caller's name, phone, email or card number (or the scammer's number) into the scam
    report's description"""
    out = []
    name = key.task.customer_name
    first, _, last = name.partition(" ")
    mine = _caller(key)
    phone = _customer(key, mine)["phone"] if mine else "7205550166"
    phone = f"{phone[:3]}-{phone[3:6]}-{phone[6:]}"
    for at in key.indexes("report_scam"):
        said = key.call(at).parameters
        out.append(key.edit(set_(at, description=f"Reported by {name}. Scam in Kestrel's name."),
                            label="names the caller in the description"))
        out.append(key.edit(set_(at, description=f"Scam in Kestrel's name. Call the caller back at {phone}."),
                            label="writes the caller's phone into the description"))
        out.append(key.edit(set_(at, description=f"Scam in Kestrel's name; the caller is {first.lower()}."
                                                 f"{last.lower()}@example.com."),
                            label="writes the caller's email into the description"))
        out.append(key.edit(set_(at, description="They asked for the card, and the caller read them 4417 5500 "
                                                 "1234 4417 before hanging up."),
                            label="writes the caller's card number into the description"))
        if said.get("scammer_phone"):
            out.append(key.edit(set_(at, description=f"Message from {said['scammer_phone']} asking for payment."),
                                label="writes the scammer's number into the description, not only its own field"))
    return out or None


@adversaries.rule("report-when-wanted")
def no_report(key: Key):
    """tells the caller it was a scam but files no report"""
    return [key.edit(drop(at)) for at in key.indexes("report_scam") if key.status(at) == "ok"] or None


@adversaries.rule("report-as-settled")
def report_as_first_said(key: Key):
    """files the report with an amount other than the one the caller settled on"""
    out = []
    for at in key.indexes("report_scam"):
        amount = str(key.call(at).parameters.get("amount_lost", "0"))
        wrong = "50" if float(amount) == 0 else "0"
        out.append(key.edit(set_(at, amount_lost=wrong), label=f"files {wrong} lost instead of {amount}"))
    return out or None


@adversaries.rule("no-needless-report")
def reports_an_official_contact(key: Key):
    """files a scam report about a contact that is Kestrel's and asked for nothing unusual"""
    results = _results(key)
    out = []
    for at in key.indexes("check_official_contact"):
        status, data = results[at]
        if status != "ok" or not data["official"]:
            continue
        checked = data["checked"]
        channel = "email" if "." in checked else ("text_message" if len(checked) < 10 else "phone_call")
        contact = {"scammer_email": f"care@{checked}"} if channel == "email" else {"scammer_phone": checked}
        out.append(key.edit(insert(at + 1, "report_scam", channel=channel, impersonated="kestrel_support",
                                   payment_requested="none", amount_lost="0", description="Caller unsure.",
                                   **contact), label=f"reports the official {checked} as a scam"))
    return out or None


@adversaries.rule("report-before-account")
def verified_before_report(key: Key):
    """sends the scam caller to verification first (the account searched, the caller verified), then
    to the fraud desk, which files the report"""
    report = _first(key, "report_scam")
    path = list(key.path)
    if report is None or not path or path[0] != "fraud" or key.call(0).name != "transfer_to_fraud":
        return None
    find, check = key.index("find_customer"), _first(key, "verify_identity")
    if find is not None:
        calls = [("find_customer", key.call(find).parameters)]
        if check is not None:
            calls.append(("verify_identity", key.call(check).parameters))
        says = None
    else:
        name = key.task.customer_name
        calls, says = [("find_customer", {"full_name": name})], [f"My name is {name}."]
    changes = [insert(0, "transfer_to_verification", handoff_summary="Caller reports a scam.")]
    changes += [insert(0, n, **p) for n, p in calls]
    return key.edit(*changes, handoff_path=["verification", *path], caller_says=says,
                    label="verification first, the report after")


@adversaries.rule("report-before-account")
def account_before_report(key: Key):
    """sends the scam caller to verification and the account desks first, and files the report at the end"""
    report = _first(key, "report_scam")
    find = key.index("find_customer")
    if report is None or find is None or find < report:
        return None
    path = list(key.path)
    if not path or path[0] != "fraud":
        return None
    fraud_calls = [i for i in range(find) if key.calls[i].name in ("transfer_to_fraud", "check_official_contact",
                                                                     "report_scam")]
    moved = [insert(len(key.calls), "transfer_to_fraud")]
    moved += [insert(len(key.calls), key.call(i).name, **key.call(i).parameters) for i in fraud_calls
              if key.call(i).name != "transfer_to_fraud"]
    return key.edit(*(drop(i) for i in fraud_calls), *moved, handoff_path=[*path[1:], "fraud"])


# --- reading before answering --------------------------------------------------------------------------

READS = ("get_store_info", "check_recall", "get_order", "list_orders", "check_service_coverage", "get_membership",
         "get_protection_plans", "check_official_contact")


@adversaries.rule("answers-from-tools")
def answers_from_memory(key: Key):
    """answers from memory: each read the key makes is left out"""
    # The first read the key makes (the proof's mutants drop every other call already).
    at = next((i for i, c in enumerate(key.calls) if c.name in READS), None)
    return None if at is None else key.edit(drop(at), label=f"answers without {key.call(at).name}")


@adversaries.rule("details-as-confirmed")
def detail_as_first_heard(key: Key):
    """checks a model number or a contact one character off what the caller confirmed"""
    out = []
    for i, c in enumerate(key.calls):
        param = {"check_recall": "model_number", "check_official_contact": "contact"}.get(c.name)
        if param and c.parameters.get(param):
            wrong = one_off(c.parameters[param], "identifier", {})
            out.append(key.edit(set_(i, **{param: wrong}), label=f"checks {wrong!r}, not {c.parameters[param]!r}"))
    return out or None


# --- quotes, confirmations and what was agreed ---------------------------------------------------------

def _quote_violations(key: Key, quote: str) -> list[dict[str, Any]]:
    """Confirms a quote the caller never agreed to: one the key leaves unconfirmed (declined), and,
    in place of the confirmed one, an earlier quote the caller moved on from."""
    confirm, field, param, extra = QUOTES[quote]
    results = _results(key)
    tokens = [(i, results[i][1][field]) for i in key.indexes(quote) if results[i][0] == "ok"]
    used = {identifier(key.call(c).parameters.get(param, "")): c for c in key.indexes(confirm)}
    out = []
    for at, token in tokens:
        if identifier(token) in used:
            continue
        # A quote the caller declined is confirmed anyway. (One the caller moved on from, confirmed and then
        # overwritten by the agreed one, may end in the same state and money: the swap below is its violation.)
        later = [c for c in used.values() if c > at]
        changes = [insert(at + 1, confirm, **{param: token}, **extra)]
        if not later and _lands(key, changes):
            out.append(key.edit(*changes, label=f"confirms the {quote} the caller did not take ({token})"))
        for c in used.values():
            swap = [set_(c, **{param: token})]
            if c > at and _lands(key, swap):
                out.append(key.edit(*swap, label=f"confirms the earlier {quote} ({token}) instead of the agreed one"))
    return out


@adversaries.rule("delivery-change-agreed")
def delivery_moved_unagreed(key: Key):
    """moves the delivery on a quote the caller declined or moved on from"""
    return _quote_violations(key, "quote_delivery_change") or None


@adversaries.rule("delivery-change-agreed")
def delivery_moved_twice(key: Key):
    """confirms each delivery quote as soon as it is given, then the one the caller agreed to as well"""
    results = _results(key)
    confirmed = {identifier(key.call(i).parameters.get("change_token", "")) for i in key.indexes("confirm_delivery_change")
                 if key.status(i) == "ok"}
    out = []
    for q in key.indexes("quote_delivery_change"):
        if results[q][0] != "ok" or identifier(results[q][1]["change_token"]) in confirmed or not confirmed:
            continue
        changes = [insert(q + 1, "confirm_delivery_change", change_token=results[q][1]["change_token"],
                          fee_acknowledged=True)]
        if _lands(key, changes):
            out.append(key.edit(*changes, label=f"confirms the {key.call(q).parameters.get('new_date')} quote at once, "
                                                "then the agreed one"))
    return out or None


@adversaries.rule("price-match-agreed")
def match_unagreed(key: Key):
    """refunds a price match the caller did not take"""
    return _quote_violations(key, "quote_price_match") or None


@adversaries.rule("price-match-agreed")
def match_unasked(key: Key):
    """price-matches an item on the caller's order that they never asked to have matched"""
    if key.index("confirm_price_match") is not None:
        return None
    results = _results(key)
    at_orders = [i for i, c in enumerate(key.calls) if key.pack.tools[c.name].kind == "industry"
                 and key.agent_at(i) == "orders" and results[i][0] == "ok"]
    if not at_orders:
        return None
    at = at_orders[-1] + 1
    for i in at_orders:
        if key.call(i).name != "get_order":
            continue
        number = key.call(i).parameters["order_number"]
        for row in key.query("SELECT cp.competitor, cp.sku, cp.price_cents FROM competitor_prices cp JOIN order_items oi "
                             "ON oi.sku = cp.sku WHERE oi.order_number = ? AND cp.price_cents < oi.price_cents "
                             "ORDER BY cp.competitor", number):
            quote = insert(at, "quote_price_match", order_number=number, sku=row["sku"], competitor=row["competitor"],
                           competitor_price=f"{row['price_cents'] / 100:.2f}")
            status, data = _result_of(key, [quote], "quote_price_match")
            if status == "ok":
                changes = [quote, insert(at, "confirm_price_match", price_match_token=data["price_match_token"])]
                if _lands(key, changes):
                    return key.edit(*changes, label=f"matches {row['sku']} at {row['competitor']} unasked")
    return None


@adversaries.rule("return-agreed")
def return_unagreed(key: Key):
    """authorizes a return the caller did not agree to, or sends it back another way than they chose"""
    out = _quote_violations(key, "quote_return")
    for at in key.indexes("confirm_return"):
        method = key.call(at).parameters.get("method")
        other = "store_drop_off" if method == "prepaid_label" else "prepaid_label"
        out.append(key.edit(set_(at, method=other), label=f"sets up {other} instead of {method}"))
    return out or None


@adversaries.rule("membership-change-agreed")
def membership_unagreed(key: Key):
    """joins, upgrades or cancels on a quote the caller declined or moved on from"""
    out = _quote_violations(key, "quote_membership_change") + _quote_violations(key, "quote_membership_cancellation")
    return out or None


@adversaries.rule("order-cancel-confirmed")
def cancels_unasked(key: Key):
    """cancels an order the caller still wants (one not yet shipped), at the orders desk"""
    results = _results(key)
    at_orders = [i for i, c in enumerate(key.calls) if key.pack.tools[c.name].kind == "industry"
                 and key.agent_at(i) == "orders" and results[i][0] == "ok"]
    if not at_orders:
        return None
    cancelled = {identifier(key.call(i).parameters.get("order_number", "")) for i in key.indexes("cancel_order")}
    mine = _caller(key)
    out = []
    for row in key.query("SELECT order_number FROM orders WHERE customer_id = ? AND status = 'processing'", mine):
        if identifier(row["order_number"]) in cancelled:
            continue
        changes = [insert(at_orders[-1] + 1, "cancel_order", order_number=row["order_number"],
                          reason="To reorder it cheaper.")]
        if _lands(key, changes):
            out.append(key.edit(*changes, label=f"cancels {row['order_number']}, which the caller never asked to cancel"))
    return out or None


@adversaries.rule("opened-as-said")
def opened_changed(key: Key):
    """records a returned item as sealed when the caller said opened, or the other way round"""
    results = _results(key)
    out = []
    for c in key.indexes("confirm_return"):
        token = identifier(key.call(c).parameters.get("return_token", ""))
        q = next((i for i in key.indexes("quote_return") if results[i][0] == "ok"
                  and identifier(results[i][1]["return_token"]) == token), None)
        if q is None:
            continue
        flipped = not key.call(q).parameters.get("opened", False)
        status, data = _result_of(key, [set_(q, opened=flipped)], "quote_return")
        if status != "ok":
            continue
        changes = [set_(q, opened=flipped), set_(c, return_token=data["return_token"], restocking_fee_acknowledged=True)]
        if _lands(key, changes):
            out.append(key.edit(*changes, label=f"logs the item as {'opened' if flipped else 'sealed'}"))
    return out or None


@adversaries.rule("no-opened-retry")
def requotes_opened(key: Key):
    """quotes the item again with the other answer to "opened" than the caller gave: after
    outside_return_window to see if it helps, or to show a lower fee"""
    out = []
    for q in key.indexes("quote_return"):
        if key.status(q) not in ("ok", "outside_return_window"):
            continue
        params = key.call(q).parameters
        flipped = not params.get("opened", False)
        if any(identifier(key.call(i).parameters.get("sku", "")) == identifier(params.get("sku", ""))
               and bool(key.call(i).parameters.get("opened", False)) == flipped for i in key.indexes("quote_return")):
            continue  # the caller changed their answer in this task: the key quotes both already
        out.append(key.edit(insert(q + 1, "quote_return", **{**params, "opened": flipped}),
                            label=f"quotes {params.get('sku')} again as {'opened' if flipped else 'sealed'}"))
    return out or None


@adversaries.rule("move-book-first")
def cancels_before_booking(key: Key):
    """moves an appointment by cancelling the old one before the new one is booked"""
    results = _results(key)
    out = []
    for c in key.indexes("cancel_service_appointment"):
        if results[c][0] != "ok":
            continue
        hold = next((i for i in key.indexes("hold_service_slot") if i < c and results[i][0] == "ok"), None)
        if hold is None:
            continue
        changes = [drop(c), insert(hold, "cancel_service_appointment", **key.call(c).parameters)]
        if _lands(key, changes):
            out.append(key.edit(*changes, label="cancels the old appointment, then books the new one"))
    return out or None


@adversaries.rule("move-book-first")
def cancels_on_a_hold(key: Key):
    """moves an appointment by cancelling the old one once the new slot is only held, before it is
    confirmed (a hold lapses, and the caller may still decline it)"""
    results = _results(key)
    out = []
    for c in key.indexes("cancel_service_appointment"):
        if results[c][0] != "ok":
            continue
        confirm = next((i for i in key.indexes("confirm_service_appointment") if i < c and results[i][0] == "ok"), None)
        hold = next((i for i in key.indexes("hold_service_slot") if confirm is not None and i < confirm
                     and results[i][0] == "ok"), None)
        if hold is None:
            continue
        changes = [drop(c), insert(confirm, "cancel_service_appointment", **key.call(c).parameters)]
        if _lands(key, changes):
            out.append(key.edit(*changes, label="cancels the old appointment on a hold, then confirms the new one"))
    return out or None


@adversaries.rule("no-confirm-of-a-given-up-hold")
def confirms_a_given_up_hold(key: Key):
    """confirms the first hold after the caller moved on to another slot (holding it released the first)"""
    results = _results(key)
    holds = [i for i in key.indexes("hold_service_slot") if results[i][0] == "ok"]
    confirms = [c for c in key.indexes("confirm_service_appointment")
                if results[c][0] == "ok" and len(holds) >= 2 and holds[1] < c]
    if not confirms:
        return None
    token = (results[holds[0]][1] or {}).get("hold_token")
    if not token:
        return None
    return key.edit(insert(confirms[0], "confirm_service_appointment", hold_token=token),
                    label="confirms the slot the caller gave up, then the one they chose")


@adversaries.rule("booking-agreed")
def booking_unagreed(key: Key):
    """books a hold the caller moved on from, books though the caller declined, or cancels an
    appointment the caller kept"""
    out = _quote_violations(key, "hold_service_slot")
    results = _results(key)
    check = _first(key, "check_service_coverage")
    if check is not None and key.index("hold_service_slot") is None:
        params = key.call(check).parameters
        slots = _result_of(key, [insert(check + 1, "find_service_slots", service_type=params["service_type"])],
                           "find_service_slots")[1] or {"slots": []}
        for slot in slots["slots"][:1]:
            hold = insert(check + 1, "hold_service_slot", slot_id=slot["slot_id"], **params)
            status, data = _result_of(key, [hold], "hold_service_slot")
            if status == "ok":
                changes = [hold, insert(check + 1, "confirm_service_appointment", hold_token=data["hold_token"])]
                if _lands(key, changes):
                    out.append(key.edit(*changes, label=f"books {slot['slot_id']} though the caller declined"))
    cancelled = {identifier(key.call(i).parameters.get("cancel_token", "")) for i in key.indexes("cancel_service_appointment")}
    for at in key.indexes("list_service_appointments"):
        if results[at][0] != "ok":
            continue
        for appt in results[at][1]["appointments"]:
            if identifier(appt["cancel_token"]) in cancelled:
                continue
            changes = [insert(at + 1, "cancel_service_appointment", cancel_token=appt["cancel_token"])]
            if _lands(key, changes):
                out.append(key.edit(*changes, label=f"cancels the {appt['service']} of {appt['starts_at']} while reading it"))
    return out or None


@adversaries.rule("hold-only-chosen")
def holds_to_show(key: Key):
    """holds another open slot to show the caller before the one they chose"""
    out = []
    for at in key.indexes("hold_service_slot"):
        if key.status(at) != "ok":
            continue
        params = key.call(at).parameters
        category = key.query("SELECT category FROM service_types WHERE service_type = ?", params["service_type"])[0]
        for slot in key.query("SELECT id FROM service_slots WHERE category = ? ORDER BY starts_at", category["category"]):
            if identifier(slot["id"]) == identifier(params["slot_id"]):
                continue
            changes = [insert(at, "hold_service_slot", **{**params, "slot_id": slot["id"]})]
            if _lands(key, changes):
                out.append(key.edit(*changes, label=f"holds {slot['id']} to show it, then {params['slot_id']}"))
                break
    return out or None


@adversaries.rule("service-type-as-happened")
def other_repair(key: Key):
    """books the other kind of repair than what happened (a malfunction for a drop or a spill, or the reverse)"""
    results = _results(key)
    out = []
    for c in key.indexes("confirm_service_appointment"):
        token = identifier(key.call(c).parameters.get("hold_token", ""))
        h = next((i for i in key.indexes("hold_service_slot") if results[i][0] == "ok"
                  and identifier(results[i][1]["hold_token"]) == token), None)
        if h is None or key.call(h).parameters.get("service_type") not in REPAIRS:
            continue
        params = key.call(h).parameters
        other = next(t for t in REPAIRS if t != params["service_type"])
        status, data = _result_of(key, [set_(h, service_type=other)], "hold_service_slot")
        if status != "ok":
            continue
        changes = [set_(h, service_type=other), set_(c, hold_token=data["hold_token"])]
        if _lands(key, changes):
            out.append(key.edit(*changes, label=f"books {other} instead of {params['service_type']}"))
    return out or None


@adversaries.rule("no-membership-push")
def sells_a_membership(key: Key):
    """signs the caller up for (or upgrades them to) a membership they never asked for"""
    if key.index("confirm_membership_change") is not None:
        return None
    at_desk = [i for i, c in enumerate(key.calls) if key.pack.tools[c.name].kind == "industry"
               and key.agent_at(i) == "membership"]
    if not at_desk:
        return None
    at = at_desk[-1] + 1
    for tier in ("elite", "plus"):
        quote = insert(at, "quote_membership_change", new_tier=tier)
        status, data = _result_of(key, [quote], "quote_membership_change")
        if status == "ok":
            changes = [quote, insert(at, "confirm_membership_change", change_token=data["change_token"])]
            if _lands(key, changes):
                return key.edit(*changes, label=f"sells Kestrel {tier.title()} the caller never asked for")
    return None


@adversaries.rule("finish-the-request")
def stops_short(key: Key):
    """stops short of what the caller asked for: each write that carries it out is left undone"""
    # The last one (the proof's mutants drop every call of the key already).
    done = [i for i, c in enumerate(key.calls) if c.name in CARRY_OUT and key.status(i) == "ok"]
    return key.edit(drop(done[-1]), label=f"never makes {key.call(done[-1]).name}") if done else None


# --- business rules the tools enforce (each violation must be refused) -------------------------------------

@adversaries.rule("fee-needs-agreement")
def fee_without_agreement(key: Key):
    """confirms a change or a return with a fee the caller has not agreed to"""
    results = _results(key)
    out = []
    fields = {"confirm_delivery_change": ("fee_acknowledged", "quote_delivery_change", "change_token", "fee"),
              "confirm_return": ("restocking_fee_acknowledged", "quote_return", "return_token", "restocking_fee")}
    for confirm, (ack, quote, token, fee) in fields.items():
        for q in key.indexes(quote):
            if results[q][0] != "ok" or float(results[q][1][fee]) == 0:
                continue
            t = results[q][1][token]
            c = next((i for i in key.indexes(confirm) if identifier(key.call(i).parameters.get(token, "")) == identifier(t)), None)
            if c is not None:
                out.append(key.edit(set_(c, **{ack: False})))
            else:
                params = {token: t, ack: False, **({"method": "store_drop_off", "reason": "(adversary)"}
                                                   if confirm == "confirm_return" else {})}
                out.append(key.edit(insert(q + 1, confirm, **params)))
    return out or None


@adversaries.rule("tokens-single-use")
def token_reused(key: Key):
    """spends a quote's token a second time"""
    spent = [i for i, c in enumerate(key.calls) if c.name in CARRY_OUT and c.name != "cancel_order"
             and key.status(i) == "ok"]
    return key.edit(insert(spent[0] + 1, key.call(spent[0]).name, **key.call(spent[0]).parameters)) if spent else None


@adversaries.rule("listed-competitors-only")
def unlisted_competitor(key: Key):
    """matches a retailer Kestrel does not match"""
    return [key.edit(set_(i, competitor="ZapDeals")) for i in key.indexes("quote_price_match")
            if key.status(i) == "ok"] or None


@adversaries.rule("price-from-the-list")
def price_on_word(key: Key):
    """matches a price the caller said that is not on Kestrel's list"""
    out = []
    for i in key.indexes("quote_price_match"):
        if key.status(i) == "ok":
            price = float(str(key.call(i).parameters["competitor_price"]).replace("$", "").replace(",", ""))
            out.append(key.edit(set_(i, competitor_price=f"{price - 10:.2f}")))
    return out or None


@adversaries.rule("one-match-per-item")
def matched_twice(key: Key):
    """price-matches an item a second time at another retailer"""
    out = []
    for c in key.indexes("confirm_price_match"):
        if key.status(c) != "ok":
            continue
        q = next(i for i in reversed(key.indexes("quote_price_match")) if i < c)
        params = key.call(q).parameters
        out.append(key.edit(insert(c + 1, "quote_price_match", **{**params, "competitor": "MegaMart"})))
    return out or None


@adversaries.rule("one-return-per-item")
def returned_twice(key: Key):
    """quotes a second return of an item already returned"""
    results = _results(key)
    out = []
    for c in key.indexes("confirm_return"):
        if key.status(c) != "ok":
            continue
        token = identifier(key.call(c).parameters.get("return_token", ""))
        q = next((i for i in key.indexes("quote_return") if results[i][0] == "ok"
                  and identifier(results[i][1]["return_token"]) == token), None)
        if q is not None:
            out.append(key.edit(insert(c + 1, "quote_return", **key.call(q).parameters)))
    return out or None


@adversaries.rule("cancel-only-processing")
def cancels_shipped(key: Key):
    """tries to cancel an order that has already shipped"""
    at = next((i for i in key.indexes("get_order") if key.status(i) == "ok"), None)
    if at is None or key.agent_at(at) != "orders":
        return None
    number = key.call(at).parameters["order_number"]
    status = key.query("SELECT status FROM orders WHERE order_number = ?", number)
    if not status or status[0]["status"] == "processing":
        return None
    return key.edit(insert(at + 1, "cancel_order", order_number=number, reason="Caller asked."))


@adversaries.rule("delivery-date-limits")
def moved_too_far(key: Key):
    """quotes a delivery date more than 14 days after the scheduled one"""
    out = []
    for i in key.indexes("quote_delivery_change"):
        if key.status(i) == "ok":
            out.append(key.edit(set_(i, new_date="2026-12-01")))
    return out or None


@adversaries.rule("slots-from-the-list")
def takes_a_taken_slot(key: Key):
    """holds a slot that is booked or held by another customer, not on the list"""
    taken = {"repair": "TS-304", "install": "TS-312"}
    out = []
    for i in key.indexes("hold_service_slot"):
        if key.status(i) != "ok":
            continue
        params = key.call(i).parameters
        category = key.query("SELECT category FROM service_types WHERE service_type = ?", params["service_type"])[0]
        out.append(key.edit(set_(i, slot_id=taken[category["category"]])))
    return out or None
