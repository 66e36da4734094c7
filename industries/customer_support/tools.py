"""Tool logic of Kestrel Electronics, a consumer-electronics retailer with a service brand (TechCrew).

The house rules are stated in the prompts and enforced here as well, so a model that ignores a
prompt meets the same rule in a tool result:
- account-bound support sits behind an identity gate: the account is found by order number, phone
  or name (`find_customer`: every search is a compared `record_access` row, on behalf of whoever
  is verified so far, with the details searched), then verified with the billing ZIP code and the
  last four digits of the card on file (`verify_identity`, through `pytest_callm.front_desk`:
  every try, failed, locked and refused ones included, is a compared `verifications` row with the
  values tried); failed tries count on the customer record across calls and the third locks it (a
  write that stays: `keep_writes=True`); a locked account cannot be verified by phone; the
  account tools read only the verified caller's own records (a look the verification covers);
- the fraud desk is ungated: scam reports are recorded with no identity at all (the verifier reads
  the description for the caller's name, a phone number or an email address);
- every write that moves money is quoted first and confirmed with a single-use token bound to its
  kind and its customer; a fee must be disclosed in the quote and acknowledged in the confirm;
- return windows count from the delivery date and depend on the product class and the membership
  tier (a membership counts when it started on or before the order date); open-box items have
  their own window, marketplace items go back to their seller, recalled items come back any time;
- restocking fees depend on the product class (opened items only) and are capped by state;
  refund = price paid - fee, to the cent, the price paid being after any price match;
- delivery changes cost a fee two days or fewer before the scheduled date and have date limits;
- price matching has its exclusions (marketplace, open box, an unlisted competitor, a price that is
  not lower, outside 15 days of the order), checks the price against the competitor price list the
  pack keeps, and pays once per item (checked again at confirm); a matched item returned or
  cancelled refunds what was paid after the match;
- membership cancellation is prorated by unused days (full refund within 30 days of joining), an
  upgrade's charge over the days it bought; upgrades are charged for the remaining days of the term,
  and a cancellation within 30 days followed by a new signup costs what the upgrade costs, so it is
  a second right way to a higher tier (C5-H4 lists both routes);
- TechCrew appointments are held, then confirmed, against open slots, priced by plan coverage.

Money is integer cents inside, and decimal strings ("989.99") in results. Names, phones, order
numbers, SKUs, tokens, emails, contacts and money are matched with the verifier's own normalizers
(`pytest_callm.normalize`); competitors and membership tiers through the pack's alias tables
(`ctx.values`), so a spelling the tool accepts is one the verifier accepts, and the other way round.
"""

from __future__ import annotations

import datetime as dt
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from pytest_callm.front_desk import (IdentityRules, TokenWords, check_identity, forget_verification, issue_token,
                                     record_access, tried, use_token, verified_account)
from pytest_callm.normalize import contact as contact_key, date as iso_date, email as email_key, identifier, money, person, phone
from pytest_callm.toolkit import ToolContext, ToolError, ToolRegistry

tools = ToolRegistry()

VERIFY_TRIES = 3                 # verification.md: the third failed try locks the account
LOCKED_MESSAGE = ("For your security, this account can't be verified by phone right now. "
                  "I can connect you with a member of our team.")
# front_desk keeps every try as a `verifications` row, with the ZIP and card tried; the failed tries
# and the lock live on the customer record and persist across calls. A call stops verifying after six failed tries in all
# (several accounts tried), which the third failure on one account always reaches first.
IDENTITY = IdentityRules(account_table="customers", failures_column="failed_verifications",
                         locked_column="account_locked", lock_after=VERIFY_TRIES, tries_per_call=2 * VERIFY_TRIES,
                         failed_code="verification_failed",
                         failed_message="Those details don't match what we have on file.",
                         locked_code="account_locked", locked_message=LOCKED_MESSAGE,
                         refused_code="verification_locked",
                         refused_message="I'm not able to verify anyone else on this call. I can connect you with "
                                         "a member of our team.")
TOKEN_WORDS = TokenWords(unknown="I couldn't find that quote. Let me get a fresh one.",
                         wrong_kind="That reference is for a different kind of request.",
                         used="That quote has already been used.")
OPEN_BOX_WINDOW = 14             # days from delivery, for every tier
PRICE_MATCH_DAYS = 15            # days from the order date
FULL_REFUND_DAYS = 30            # membership cancelled within 30 days of joining: full refund
DELIVERY_FEE_CENTS = 1499        # a delivery change two days or fewer before the scheduled date
DELIVERY_FEE_DAYS = 2
DELIVERY_MAX_SHIFT = 14          # a new date at most 14 days after the scheduled one
HOLD_MINUTES = 10
LATE_CANCEL = dt.timedelta(hours=24)
TOKEN_PREFIX = {"return": "RET", "delivery_change": "DLV", "price_match": "PMT", "membership_cancel": "MCX",
                "membership_change": "MCH", "service_hold": "SVH", "service_cancel": "SVC"}
IDENTITY_ASKED = "identity_asked"  # session: an account was searched or an identity tried in this call
SAFETY_NOTE = ("Kestrel never asks for gift cards, wire transfers, cryptocurrency, passwords, a full card number "
               "or remote access.")


# --- small helpers -----------------------------------------------------------------------------

def _stamp(ctx: ToolContext) -> str:
    return ctx.now.isoformat(timespec="minutes")


def _dollars(cents: int) -> str:
    return f"{Decimal(cents) / 100:.2f}"


def _cents(amount: str | float | int, field: str) -> int:
    """A spoken or written amount ("$1,249.99", 49) to integer cents, through the `money` normalizer."""
    try:
        value = Decimal(money(amount))
    except InvalidOperation:
        raise ToolError("invalid_amount", f"Could you tell me the {field} again, in dollars and cents?") from None
    if value < 0:
        raise ToolError("invalid_amount", f"Could you tell me the {field} again, in dollars and cents?")
    return int(value * 100)


def _prorate(cents: int, numerator: int, denominator: int) -> int:
    """cents * numerator / denominator, rounded half up to the cent."""
    exact = Decimal(cents) * numerator / denominator
    return int(exact.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _date(text: str) -> dt.date:
    return dt.date.fromisoformat(iso_date(text))  # the `date` kind: a date-time counts by its day


def _verified(ctx: ToolContext) -> str:
    """The caller verified in this call, whose own record the account tools read (a look that the
    verification row already covers: `record_access` keeps nothing new for it)."""
    customer_id = verified_account(ctx)
    if customer_id is None:
        raise ToolError("not_verified", "I need to verify your account before I can do that.")
    record_access(ctx, record=customer_id)
    return customer_id


def _customer(ctx: ToolContext, customer_id: str):
    return ctx.db.execute("SELECT * FROM customers WHERE id = ?", (customer_id,)).fetchone()


def _own_order(ctx: ToolContext, customer_id: str, order_number: str):
    key = identifier(order_number)
    row = next((o for o in ctx.db.execute("SELECT * FROM orders WHERE customer_id = ?", (customer_id,))
                if identifier(o["order_number"]) == key), None)
    if row is None:  # said the same way whether the order is someone else's or does not exist
        raise ToolError("order_not_found", "I don't see that order number on your account.")
    return row


def _caller_order(ctx: ToolContext, order_number: str):
    """(the verified caller, their order `order_number`), for every tool that takes an order number.

    A look at an order is a look at its owner's record: one at another customer's order (a
    neighbor's, a spouse's), or at any order before the caller is verified (after a lock, say), is a
    `record_access` row (whose order, on behalf of whom, the order number tried), kept although the
    tool refuses: the caller hears `order_not_found` or `not_verified`, never whose the order is."""
    customer_id = verified_account(ctx)
    if customer_id is not None:
        record_access(ctx, record=customer_id)  # the caller's own record: covered by the verification
    key = identifier(order_number)
    owner = next((o["customer_id"] for o in ctx.db.execute("SELECT order_number, customer_id FROM orders")
                  if identifier(o["order_number"]) == key), None)
    if customer_id is None:
        record_access(ctx, record=owner, outcome="not_verified", details=tried(identifier=order_number))
        raise ToolError("not_verified", "I need to verify your account before I can do that.", keep_writes=True)
    if owner is not None and owner != customer_id:
        record_access(ctx, record=owner, outcome="not_on_account", details=tried(identifier=order_number))
        raise ToolError("order_not_found", "I don't see that order number on your account.", keep_writes=True)
    return customer_id, _own_order(ctx, customer_id, order_number)


def _item(ctx: ToolContext, order, sku: str):
    key = identifier(sku)
    row = next((i for i in ctx.db.execute(
        "SELECT oi.*, p.name, p.class, p.model_number FROM order_items oi JOIN products p ON p.sku = oi.sku "
        "WHERE oi.order_number = ? ORDER BY oi.id", (order["order_number"],)) if identifier(i["sku"]) == key), None)
    if row is None:
        raise ToolError("item_not_on_order", "I don't see that item on this order.")
    return row


def _matched_cents(ctx: ToolContext, order_number: str, sku: str | None = None) -> int:
    """Price-match refunds already issued on an order (or one of its items)."""
    sql = "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE order_number = ? AND kind = 'price_match'"
    args: tuple = (order_number,)
    if sku is not None:
        sql, args = sql + " AND sku = ?", (order_number, sku)
    return ctx.db.execute(sql, args).fetchone()[0]


def _paid_cents(ctx: ToolContext, order, item) -> int:
    """What the customer paid for an item after any price match: a return or a cancellation refunds
    this, never the price and the match both."""
    return item["price_cents"] - _matched_cents(ctx, order["order_number"], item["sku"])


def _recall(ctx: ToolContext, model_number: str):
    key = identifier(model_number)
    return next((r for r in ctx.db.execute("SELECT * FROM recalls") if identifier(r["model_number"]) == key), None)


def _active_membership(ctx: ToolContext, customer_id: str):
    return ctx.db.execute("SELECT m.*, t.label, t.annual_fee_cents, t.rank FROM memberships m "
                          "JOIN membership_tiers t ON t.tier = m.tier "
                          "WHERE m.customer_id = ? AND m.status = 'active' AND m.renews_on > ? "
                          "ORDER BY m.id DESC LIMIT 1", (customer_id, ctx.today.isoformat())).fetchone()


def _tier_for_order(ctx: ToolContext, customer_id: str, order) -> str:
    """The membership that sets an order's return window: active now and started by the order date."""
    membership = _active_membership(ctx, customer_id)
    if membership is None or membership["started_on"] > order["placed_on"]:
        return "none"
    return membership["tier"]


def _issue_token(ctx: ToolContext, kind: str, customer_id: str, payload: dict) -> str:
    """A token bound to its kind and customer (front_desk's). The same quote asked twice gives the same token."""
    return issue_token(ctx, TOKEN_PREFIX[kind], kind, customer_id, payload)


def _use_token(ctx: ToolContext, token: str, kind: str, customer_id: str) -> dict:
    return use_token(ctx, token, kind, customer_id, TOKEN_WORDS)


def _need_ack(fee_cents: int, acknowledged: bool) -> None:
    if fee_cents > 0 and not acknowledged:
        raise ToolError("fee_not_acknowledged",
                        f"Before I go ahead, I need you to agree to the {_dollars(fee_cents)} dollar fee.")


# --- reception ---------------------------------------------------------------------------------

@tools.tool
def get_store_info(ctx: ToolContext, topic: str) -> dict:
    row = ctx.db.execute("SELECT answer FROM store_info WHERE topic = ?", (topic,)).fetchone()
    return {"topic": topic, "answer": row["answer"]}


@tools.tool
def check_recall(ctx: ToolContext, model_number: str) -> dict:
    if not identifier(model_number):
        raise ToolError("invalid_model_number", "Could you read me the model number on the product's label?")
    recall = _recall(ctx, model_number)
    if recall is None:
        return {"model_number": model_number.strip(), "recalled": False,
                "note": "No recall is on record for this model number."}
    return {"model_number": recall["model_number"], "recalled": True, "recall_id": recall["id"],
            "product": recall["product"], "hazard": recall["hazard"], "remedy": recall["remedy"],
            "announced_on": recall["announced_on"]}


@tools.tool
def escalate_to_human(ctx: ToolContext, reason: str, summary: str) -> dict:
    cur = ctx.db.execute("INSERT INTO escalations (customer_id, reason, summary, created_at) VALUES (?, ?, ?, ?)",
                         (verified_account(ctx), reason, summary, _stamp(ctx)))
    return {"escalation_id": cur.lastrowid, "status": "transferring"}


# --- verification ------------------------------------------------------------------------------

@tools.tool
def find_customer(ctx: ToolContext, order_number: str | None = None, phone_number: str | None = None,
                  full_name: str | None = None) -> dict:
    given = {k: v for k, v in (("order_number", order_number), ("phone_number", phone_number),
                               ("full_name", full_name)) if v is not None and str(v).strip()}
    ctx.session[IDENTITY_ASKED] = True  # the call has been to the identity gate (kept by a scam report)
    if not given:
        raise ToolError("missing_lookup_details", "Could I have your order number, or the phone number on the account?")
    if "phone_number" in given and len(phone(given["phone_number"])) != 10:
        raise ToolError("invalid_phone", "I didn't catch the full ten-digit number. Could you repeat it?")
    candidates = ctx.db.execute("SELECT * FROM customers ORDER BY id").fetchall()
    if "order_number" in given:
        key = identifier(given["order_number"])
        owners = {o["customer_id"] for o in ctx.db.execute("SELECT order_number, customer_id FROM orders")
                  if identifier(o["order_number"]) == key}
        candidates = [c for c in candidates if c["id"] in owners]
    if "phone_number" in given:
        candidates = [c for c in candidates if c["phone"] == phone(given["phone_number"])]
    if "full_name" in given:
        candidates = [c for c in candidates if person(c["full_name"]) == person(given["full_name"])]
    # Every search is on the record, on behalf of whoever is verified so far (front_desk.record_access):
    # a look at someone else's account (a husband's, a neighbor's) is a row; so is a search that found
    # nobody, or more than one account, with the details tried (a misheard digit retried is forgiven
    # when the caller was heard saying it; a guess is not). Finding the verified caller's own account
    # again adds nothing.
    details = tried(identifier=given.get("order_number"), phone=given.get("phone_number"),
                    person=given.get("full_name"))
    if len(candidates) == 1:
        record_access(ctx, record=candidates[0]["id"], outcome="found", details=details)
    else:
        record_access(ctx, record=None, outcome="not_found" if not candidates else "multiple_matches", details=details)
    # A new search starts over: whoever was verified before is not verified for this account.
    forget_verification(ctx)
    ctx.session.pop("candidate", None)
    if not candidates:
        raise ToolError("customer_not_found", "I couldn't find an account with those details.", keep_writes=True)
    if len(candidates) > 1:  # the search is reset (kept), and nothing says whose the accounts are
        raise ToolError("multiple_matches", "I found more than one account with that name. Could you give me "
                        "your order number or the phone number on the account?", keep_writes=True)
    ctx.session["candidate"] = candidates[0]["id"]
    return {"found": True, "searched_by": sorted(given),
            "next_step": "Verify with the billing ZIP code and the last four digits of the card on file."}


@tools.tool
def verify_identity(ctx: ToolContext, billing_zip: str, card_last4: str) -> dict:
    ctx.session[IDENTITY_ASKED] = True
    customer_id = ctx.session.get("candidate")
    if customer_id is None:
        raise ToolError("no_account_selected", "Let me find your account first. What's your order number?")
    customer = _customer(ctx, customer_id)
    passed = identifier(billing_zip) == customer["billing_zip"] and identifier(card_last4) == customer["card_last4"]
    try:  # every try is a `verifications` row; failures count on the customer record, across calls
        check_identity(ctx, IDENTITY, account=customer_id, claimed_name=None, method="zip_and_card", passed=passed,
                       details=tried(identifier=billing_zip, identifier_2=card_last4))
    except ToolError as refusal:
        if refusal.error_code != "verification_failed":
            raise
        now = _customer(ctx, customer_id)
        if now["account_locked"]:  # this failure locked the account
            raise ToolError("account_locked", LOCKED_MESSAGE, keep_writes=True) from None
        raise ToolError("verification_failed", refusal.caller_safe_message,
                        {"tries_left": VERIFY_TRIES - now["failed_verifications"]}, keep_writes=True) from None
    membership = _active_membership(ctx, customer_id)
    orders = [o["order_number"] for o in ctx.db.execute(
        "SELECT order_number FROM orders WHERE customer_id = ? ORDER BY placed_on DESC", (customer_id,))]
    return {"verified": True, "customer_id": customer_id, "full_name": customer["full_name"],
            "orders": orders, "membership_tier": membership["tier"] if membership else None}


# --- orders ------------------------------------------------------------------------------------

def _order_view(ctx: ToolContext, order) -> dict:
    items = ctx.db.execute("SELECT oi.*, p.name, p.model_number FROM order_items oi JOIN products p ON p.sku = oi.sku "
                           "WHERE oi.order_number = ? ORDER BY oi.id", (order["order_number"],)).fetchall()
    return {"order_number": order["order_number"], "placed_on": order["placed_on"], "status": order["status"],
            "fulfillment": order["fulfillment"], "scheduled_delivery": order["scheduled_delivery"],
            "delivered_on": order["delivered_on"], "carrier": order["carrier"], "ship_state": order["ship_state"],
            "items": [{"sku": i["sku"], "name": i["name"], "model_number": i["model_number"],
                       "price": _dollars(i["price_cents"]), "condition": i["condition"], "seller": i["seller"],
                       "recalled": _recall(ctx, i["model_number"]) is not None} for i in items]}


@tools.tool
def get_order(ctx: ToolContext, order_number: str) -> dict:
    return _order_view(ctx, _caller_order(ctx, order_number)[1])


@tools.tool
def list_orders(ctx: ToolContext) -> dict:
    customer_id = _verified(ctx)
    rows = ctx.db.execute("SELECT * FROM orders WHERE customer_id = ? ORDER BY placed_on DESC", (customer_id,))
    return {"orders": [_order_view(ctx, o) for o in rows.fetchall()]}


@tools.tool
def cancel_order(ctx: ToolContext, order_number: str, reason: str) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    if order["status"] != "processing":
        raise ToolError("cannot_cancel", "This order has already left our warehouse, so it can't be cancelled.",
                        {"status": order["status"]})
    total = ctx.db.execute("SELECT SUM(price_cents) FROM order_items WHERE order_number = ?",
                           (order["order_number"],)).fetchone()[0] - _matched_cents(ctx, order["order_number"])
    ctx.db.execute("UPDATE orders SET status = 'cancelled' WHERE order_number = ?", (order["order_number"],))
    cur = ctx.db.execute("INSERT INTO refunds (customer_id, order_number, sku, kind, amount_cents, status, created_at) "
                         "VALUES (?, ?, NULL, 'order_cancel', ?, 'issued', ?)",
                         (customer_id, order["order_number"], total, _stamp(ctx)))
    return {"order_number": order["order_number"], "status": "cancelled", "refund_id": cur.lastrowid,
            "refund_amount": _dollars(total)}


@tools.tool
def quote_delivery_change(ctx: ToolContext, order_number: str, new_date: str) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    if order["status"] not in ("processing", "in_transit") or order["scheduled_delivery"] is None:
        raise ToolError("not_reschedulable", "This order doesn't have a delivery date I can change.")
    if order["fulfillment"] != "scheduled":
        raise ToolError("not_reschedulable", "This order ships by carrier, so we can't change its delivery date.")
    current = _date(order["scheduled_delivery"])
    wanted = _date(new_date)
    lead = (current - ctx.today).days
    if lead <= 0:
        raise ToolError("too_late_to_change", "Your delivery is today, so the date can't be changed now.")
    if wanted == current:
        raise ToolError("same_date", "Your delivery is already scheduled for that day.")
    if wanted <= ctx.today:
        raise ToolError("date_too_soon", "The earliest date I can offer is tomorrow.")
    if wanted.weekday() == 6:
        raise ToolError("no_sunday_delivery", "We don't deliver on Sundays. Would another day work?")
    latest = current + dt.timedelta(days=DELIVERY_MAX_SHIFT)
    if wanted > latest:
        raise ToolError("date_too_late", "That's further out than I can move it.", {"latest_date": latest.isoformat()})
    fee = DELIVERY_FEE_CENTS if lead <= DELIVERY_FEE_DAYS else 0
    payload = {"order_number": order["order_number"], "new_date": wanted.isoformat(), "fee_cents": fee}
    token = _issue_token(ctx, "delivery_change", customer_id, payload)
    return {"order_number": order["order_number"], "current_date": current.isoformat(),
            "new_date": wanted.isoformat(), "fee": _dollars(fee), "days_before_delivery": lead,
            "change_token": token}


@tools.tool
def confirm_delivery_change(ctx: ToolContext, change_token: str, fee_acknowledged: bool) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, change_token, "delivery_change", customer_id)
    _need_ack(quote["fee_cents"], fee_acknowledged)
    current = ctx.db.execute("SELECT scheduled_delivery FROM orders WHERE order_number = ?",
                             (quote["order_number"],)).fetchone()["scheduled_delivery"]
    ctx.db.execute("UPDATE orders SET scheduled_delivery = ? WHERE order_number = ?",
                   (quote["new_date"], quote["order_number"]))
    # Every confirmed change is a row of the delivery log (from, to, fee): a change the caller
    # refused stays on the record even when a later change moves the order again.
    ctx.db.execute("INSERT INTO delivery_changes (customer_id, order_number, from_date, to_date, fee_cents, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?)", (customer_id, quote["order_number"], current, quote["new_date"],
                                                 quote["fee_cents"], _stamp(ctx)))
    if quote["fee_cents"]:
        ctx.db.execute("INSERT INTO charges (customer_id, order_number, kind, amount_cents, created_at) "
                       "VALUES (?, ?, 'delivery_change_fee', ?, ?)",
                       (customer_id, quote["order_number"], quote["fee_cents"], _stamp(ctx)))
    return {"order_number": quote["order_number"], "scheduled_delivery": quote["new_date"],
            "fee_charged": _dollars(quote["fee_cents"]), "status": "rescheduled"}


@tools.tool
def quote_price_match(ctx: ToolContext, order_number: str, sku: str, competitor: str, competitor_price: str) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    item = _item(ctx, order, sku)
    if item["seller"] != "Kestrel":
        raise ToolError("marketplace_item_excluded", "Items sold by marketplace sellers aren't eligible for a price match.")
    if item["condition"] == "open_box":
        raise ToolError("open_box_excluded", "Open-box items aren't eligible for a price match.")
    if order["status"] == "cancelled":
        raise ToolError("cannot_price_match", "This order was cancelled and refunded, so there's nothing to match.")
    if ctx.db.execute("SELECT 1 FROM returns WHERE order_number = ? AND sku = ?",
                      (order["order_number"], item["sku"])).fetchone():
        raise ToolError("already_returned", "A return for this item is already on file, so it can't be price matched.")
    if (ctx.today - _date(order["placed_on"])).days > PRICE_MATCH_DAYS:
        raise ToolError("outside_price_match_window", "Price matches are available for 15 days after the order "
                        "date, and this order is past that.")
    if _matched_cents(ctx, order["order_number"], item["sku"]):
        raise ToolError("already_price_matched", "This item has already been price matched.")
    name = ctx.values.canonical("competitor", competitor)
    listed = name is not None and ctx.db.execute("SELECT 1 FROM competitors WHERE name = ?", (name,)).fetchone()
    if not listed:
        raise ToolError("competitor_not_eligible", "That retailer isn't one we price-match.",
                        {"competitors": [r["name"] for r in ctx.db.execute("SELECT name FROM competitors")]})
    price = _cents(competitor_price, "competitor's price")
    # The price is checked against the competitor price list Kestrel keeps, never taken on the caller's word.
    listed = ctx.db.execute("SELECT price_cents FROM competitor_prices WHERE competitor = ? AND sku = ?",
                            (name, item["sku"])).fetchone()
    if listed is None or listed["price_cents"] != price:
        raise ToolError("price_not_verified", f"I can't confirm that price at {name} for this item. Could you check "
                        "the price on their site again?")
    if price >= item["price_cents"]:
        raise ToolError("not_lower_price", "That price isn't lower than what you paid, so there's no difference to refund.")
    difference = item["price_cents"] - price
    payload = {"order_number": order["order_number"], "sku": item["sku"], "competitor": name,
               "competitor_price_cents": price, "refund_cents": difference}
    token = _issue_token(ctx, "price_match", customer_id, payload)
    return {"order_number": order["order_number"], "sku": item["sku"], "product": item["name"],
            "price_paid": _dollars(item["price_cents"]), "competitor": name, "competitor_price": _dollars(price),
            "refund_amount": _dollars(difference), "price_match_token": token}


@tools.tool
def confirm_price_match(ctx: ToolContext, price_match_token: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, price_match_token, "price_match", customer_id)
    # One match per item, checked again here: two quotes (two competitors) never both pay out.
    if _matched_cents(ctx, quote["order_number"], quote["sku"]):
        raise ToolError("already_price_matched", "This item has already been price matched.")
    order = ctx.db.execute("SELECT * FROM orders WHERE order_number = ?", (quote["order_number"],)).fetchone()
    if order["status"] == "cancelled" or ctx.db.execute("SELECT 1 FROM returns WHERE order_number = ? AND sku = ?",
                                                        (quote["order_number"], quote["sku"])).fetchone():
        raise ToolError("cannot_price_match", "This item was cancelled or returned, so there's nothing to match.")
    cur = ctx.db.execute("INSERT INTO refunds (customer_id, order_number, sku, kind, amount_cents, status, created_at) "
                         "VALUES (?, ?, ?, 'price_match', ?, 'issued', ?)",
                         (customer_id, quote["order_number"], quote["sku"], quote["refund_cents"], _stamp(ctx)))
    return {"refund_id": cur.lastrowid, "refund_amount": _dollars(quote["refund_cents"]), "status": "issued",
            "to": "original payment"}


# --- returns -----------------------------------------------------------------------------------

def _return_terms(ctx: ToolContext, customer_id: str, order, item, opened: bool) -> dict:
    """The quote of a return, or a ToolError saying why the item cannot come back through Kestrel."""
    if item["seller"] != "Kestrel":
        raise ToolError("marketplace_item", f"This item was sold by {item['seller']}, a marketplace seller, so its "
                        "return goes through the seller.", {"seller": item["seller"]})
    if order["delivered_on"] is None:
        raise ToolError("not_delivered", "This order hasn't been delivered yet, so it can't be returned yet.")
    returned = ctx.db.execute("SELECT 1 FROM returns WHERE order_number = ? AND sku = ?",
                              (order["order_number"], item["sku"])).fetchone()
    if returned:
        raise ToolError("already_returned", "A return for this item is already on file.")
    delivered = _date(order["delivered_on"])
    if _recall(ctx, item["model_number"]) is not None:
        return {"kind": "recall", "window_days": None, "return_by": None, "tier": None, "fee_cents": 0}
    cls = ctx.db.execute("SELECT * FROM product_classes WHERE class = ?", (item["class"],)).fetchone()
    tier = _tier_for_order(ctx, customer_id, order)
    window = OPEN_BOX_WINDOW if item["condition"] == "open_box" else cls[f"window_{tier}"]
    return_by = delivered + dt.timedelta(days=window)
    if ctx.today > return_by:
        raise ToolError("outside_return_window", "This item is past its return window.",
                        {"delivered_on": delivered.isoformat(), "window_days": window,
                         "return_by": return_by.isoformat(), "tier": tier})
    pct = cls["restocking_pct"] if opened else 0
    cap = ctx.db.execute("SELECT max_pct FROM state_fee_caps WHERE state = ?", (order["ship_state"],)).fetchone()
    if cap is not None:
        pct = min(pct, cap["max_pct"])
    fee = _prorate(_paid_cents(ctx, order, item), pct, 100)
    return {"kind": "standard", "window_days": window, "return_by": return_by.isoformat(), "tier": tier,
            "fee_cents": fee, "fee_pct": pct}


def _log_return_quote(ctx: ToolContext, customer_id: str, order, item, opened: bool) -> None:
    """The returns log: each item quoted (within its window or past it), with the caller's answer to
    "opened" as it was given. The same quote asked again adds nothing; a quote with the other answer
    is a second row, so an answer changed to fish for a better result is on the record."""
    seen = ctx.db.execute("SELECT 1 FROM return_quotes WHERE customer_id = ? AND order_number = ? AND sku = ? "
                          "AND opened = ?", (customer_id, order["order_number"], item["sku"], int(bool(opened)))).fetchone()
    if seen is None:
        ctx.db.execute("INSERT INTO return_quotes (customer_id, order_number, sku, opened, created_at) "
                       "VALUES (?, ?, ?, ?, ?)", (customer_id, order["order_number"], item["sku"], int(bool(opened)),
                                                  _stamp(ctx)))


@tools.tool
def quote_return(ctx: ToolContext, order_number: str, sku: str, opened: bool) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    item = _item(ctx, order, sku)
    try:
        terms = _return_terms(ctx, customer_id, order, item, opened)
    except ToolError as refusal:
        if refusal.error_code != "outside_return_window":
            raise
        _log_return_quote(ctx, customer_id, order, item, opened)
        raise ToolError(refusal.error_code, refusal.caller_safe_message, refusal.data, keep_writes=True) from None
    _log_return_quote(ctx, customer_id, order, item, opened)
    paid = _paid_cents(ctx, order, item)
    refund = paid - terms["fee_cents"]
    payload = {"order_number": order["order_number"], "sku": item["sku"], "kind": terms["kind"],
               "opened": bool(opened), "fee_cents": terms["fee_cents"], "refund_cents": refund}
    token = _issue_token(ctx, "return", customer_id, payload)
    return {"order_number": order["order_number"], "sku": item["sku"], "product": item["name"],
            "return_type": terms["kind"], "price_paid": _dollars(paid),
            "price_matched": _dollars(item["price_cents"] - paid) if paid != item["price_cents"] else None,
            "opened": bool(opened),
            "membership_tier_applied": terms["tier"], "window_days": terms["window_days"],
            "return_by": terms["return_by"], "restocking_fee": _dollars(terms["fee_cents"]),
            "refund_amount": _dollars(refund), "return_token": token,
            "disclosure": "Tell the caller the restocking fee and the refund amount, and get their agreement to the "
                          "fee, before confirming."}


@tools.tool
def confirm_return(ctx: ToolContext, return_token: str, restocking_fee_acknowledged: bool, method: str,
                   reason: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, return_token, "return", customer_id)
    _need_ack(quote["fee_cents"], restocking_fee_acknowledged)
    if ctx.db.execute("SELECT 1 FROM returns WHERE order_number = ? AND sku = ?",
                      (quote["order_number"], quote["sku"])).fetchone():
        raise ToolError("already_returned", "A return for this item is already on file.")
    cur = ctx.db.execute(
        "INSERT INTO returns (customer_id, order_number, sku, kind, opened, restocking_fee_cents, refund_cents, "
        "method, status, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'authorized', ?, ?)",
        (customer_id, quote["order_number"], quote["sku"], quote["kind"], int(quote["opened"]), quote["fee_cents"],
         quote["refund_cents"], method, reason, _stamp(ctx)))
    ctx.session["returned"] = True  # a membership cancelled later in this call records that it came after
    ctx.db.execute("INSERT INTO refunds (customer_id, order_number, sku, kind, amount_cents, status, created_at) "
                   "VALUES (?, ?, ?, 'return', ?, 'pending', ?)",
                   (customer_id, quote["order_number"], quote["sku"], quote["refund_cents"], _stamp(ctx)))
    return {"return_id": cur.lastrowid, "status": "authorized", "method": method,
            "restocking_fee": _dollars(quote["fee_cents"]), "refund_amount": _dollars(quote["refund_cents"]),
            "refund_status": "pending: issued to the original payment when the item is received"}


# --- service (TechCrew) ------------------------------------------------------------------------

def _service_type(ctx: ToolContext, service_type: str):
    return ctx.db.execute("SELECT * FROM service_types WHERE service_type = ?", (service_type,)).fetchone()


def _coverage(ctx: ToolContext, customer_id: str, order, item, stype) -> dict:
    plan = ctx.db.execute("SELECT * FROM protection_plans WHERE customer_id = ? AND order_number = ? AND sku = ?",
                          (customer_id, order["order_number"], item["sku"])).fetchone()
    active = plan is not None and plan["starts_on"] <= ctx.today.isoformat() < plan["ends_on"]
    covers = {"standard": {"repair_malfunction"}, "accident": {"repair_malfunction", "repair_accidental_damage"}}
    covered = active and stype["service_type"] in covers[plan["plan_type"]]
    return {"covered": covered, "plan_id": plan["id"] if plan else None,
            "plan_type": plan["plan_type"] if plan else None, "plan_ends_on": plan["ends_on"] if plan else None,
            "plan_active": active, "price_cents": 0 if covered else stype["price_cents"]}


@tools.tool
def get_protection_plans(ctx: ToolContext) -> dict:
    customer_id = _verified(ctx)
    rows = ctx.db.execute("SELECT pp.*, p.name FROM protection_plans pp JOIN products p ON p.sku = pp.sku "
                          "WHERE pp.customer_id = ? ORDER BY pp.starts_on", (customer_id,)).fetchall()
    today = ctx.today.isoformat()
    return {"plans": [{"plan_id": r["id"], "order_number": r["order_number"], "sku": r["sku"], "product": r["name"],
                       "plan_type": r["plan_type"], "starts_on": r["starts_on"], "ends_on": r["ends_on"],
                       "active": r["starts_on"] <= today < r["ends_on"]} for r in rows]}


@tools.tool
def check_service_coverage(ctx: ToolContext, order_number: str, sku: str, service_type: str) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    item = _item(ctx, order, sku)
    stype = _service_type(ctx, service_type)
    cover = _coverage(ctx, customer_id, order, item, stype)
    return {"order_number": order["order_number"], "sku": item["sku"], "product": item["name"],
            "service_type": service_type, "covered": cover["covered"], "plan_id": cover["plan_id"],
            "plan_type": cover["plan_type"], "plan_active": cover["plan_active"],
            "plan_ends_on": cover["plan_ends_on"], "price": _dollars(cover["price_cents"])}


def _open_slots(ctx: ToolContext, category: str):
    now = _stamp(ctx)
    return ctx.db.execute(
        "SELECT * FROM service_slots s WHERE s.category = ? AND s.starts_at > ? "
        "AND NOT EXISTS (SELECT 1 FROM service_appointments a WHERE a.slot_id = s.id AND a.status = 'scheduled') "
        "AND NOT EXISTS (SELECT 1 FROM service_holds h WHERE h.slot_id = s.id AND h.status = 'active' "
        "AND h.expires_at > ?) ORDER BY s.starts_at, s.id", (category, now, now)).fetchall()


@tools.tool
def find_service_slots(ctx: ToolContext, service_type: str) -> dict:
    stype = _service_type(ctx, service_type)
    return {"service_type": service_type, "category": stype["category"],
            "slots": [{"slot_id": s["id"], "starts_at": s["starts_at"], "location": s["location"],
                       "technician": s["technician"]} for s in _open_slots(ctx, stype["category"])]}


@tools.tool
def hold_service_slot(ctx: ToolContext, slot_id: str, order_number: str, sku: str, service_type: str) -> dict:
    customer_id, order = _caller_order(ctx, order_number)
    item = _item(ctx, order, sku)
    if order["delivered_on"] is None:
        raise ToolError("not_delivered", "TechCrew can book this once the item has been delivered.")
    stype = _service_type(ctx, service_type)
    key = identifier(slot_id)
    slot = next((s for s in ctx.db.execute("SELECT * FROM service_slots") if identifier(s["id"]) == key), None)
    if slot is None:
        raise ToolError("slot_unavailable", "That time isn't available.")
    if slot["category"] != stype["category"]:
        raise ToolError("slot_wrong_service", "That time is for a different kind of TechCrew visit.")
    if slot["id"] not in {s["id"] for s in _open_slots(ctx, stype["category"])}:
        raise ToolError("slot_unavailable", "That time is no longer available.")
    now = _stamp(ctx)
    # A lapsed hold on this slot is marked expired as soon as someone holds the slot again.
    ctx.db.execute("UPDATE service_holds SET status = 'expired' WHERE slot_id = ? AND status = 'active' "
                   "AND expires_at <= ?", (slot["id"], now))
    # One hold per customer: holding another slot releases the previous hold.
    ctx.db.execute("UPDATE service_holds SET status = 'released' WHERE customer_id = ? AND status = 'active'",
                   (customer_id,))
    expires = (ctx.now + dt.timedelta(minutes=HOLD_MINUTES)).isoformat(timespec="minutes")
    cur = ctx.db.execute("INSERT INTO service_holds (slot_id, customer_id, expires_at, status, created_at) "
                         "VALUES (?, ?, ?, 'active', ?)", (slot["id"], customer_id, expires, now))
    cover = _coverage(ctx, customer_id, order, item, stype)
    payload = {"hold_id": cur.lastrowid, "slot_id": slot["id"], "order_number": order["order_number"],
               "sku": item["sku"], "service_type": service_type, "plan_id": cover["plan_id"] if cover["covered"] else None,
               "price_cents": cover["price_cents"]}
    token = _issue_token(ctx, "service_hold", customer_id, payload)
    return {"hold_token": token, "slot_id": slot["id"], "starts_at": slot["starts_at"], "location": slot["location"],
            "technician": slot["technician"], "service_type": service_type, "product": item["name"],
            "covered_by_plan": cover["covered"], "price": _dollars(cover["price_cents"]), "expires_at": expires}


@tools.tool
def confirm_service_appointment(ctx: ToolContext, hold_token: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, hold_token, "service_hold", customer_id)
    hold = ctx.db.execute("SELECT * FROM service_holds WHERE id = ?", (quote["hold_id"],)).fetchone()
    if hold["status"] != "active" or hold["expires_at"] <= _stamp(ctx):
        raise ToolError("hold_expired", "That hold has lapsed. Let me look for the time again.")
    slot = ctx.db.execute("SELECT * FROM service_slots WHERE id = ?", (hold["slot_id"],)).fetchone()
    ctx.db.execute("UPDATE service_holds SET status = 'confirmed' WHERE id = ?", (hold["id"],))
    cur = ctx.db.execute(
        "INSERT INTO service_appointments (customer_id, slot_id, starts_at, service_type, order_number, sku, plan_id, "
        "price_cents, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'scheduled', ?)",
        (customer_id, slot["id"], slot["starts_at"], quote["service_type"], quote["order_number"], quote["sku"],
         quote["plan_id"], quote["price_cents"], _stamp(ctx)))
    return {"appointment_id": cur.lastrowid, "starts_at": slot["starts_at"], "location": slot["location"],
            "service_type": quote["service_type"], "price": _dollars(quote["price_cents"]),
            "payment": "due at the appointment" if quote["price_cents"] else "covered by the protection plan",
            "status": "scheduled"}


@tools.tool
def list_service_appointments(ctx: ToolContext) -> dict:
    customer_id = _verified(ctx)
    rows = ctx.db.execute("SELECT a.*, s.location, st.label FROM service_appointments a "
                          "JOIN service_slots s ON s.id = a.slot_id JOIN service_types st ON st.service_type = a.service_type "
                          "WHERE a.customer_id = ? AND a.status = 'scheduled' ORDER BY a.starts_at",
                          (customer_id,)).fetchall()
    out = []
    for r in rows:
        token = _issue_token(ctx, "service_cancel", customer_id, {"appointment_id": r["id"]})
        out.append({"appointment_id": r["id"], "starts_at": r["starts_at"], "location": r["location"],
                    "service": r["label"], "service_type": r["service_type"], "order_number": r["order_number"],
                    "price": _dollars(r["price_cents"]), "cancel_token": token})
    return {"appointments": out}


@tools.tool
def cancel_service_appointment(ctx: ToolContext, cancel_token: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, cancel_token, "service_cancel", customer_id)
    row = ctx.db.execute("SELECT * FROM service_appointments WHERE id = ?", (quote["appointment_id"],)).fetchone()
    if row["status"] != "scheduled":
        raise ToolError("appointment_not_found", "I don't see that appointment as booked.")
    if dt.datetime.fromisoformat(row["starts_at"]) - ctx.now < LATE_CANCEL:
        raise ToolError("too_late_to_cancel", "Appointments within 24 hours can't be cancelled by phone.")
    # Kept at the act (house-rules §3.4): whether the replacement was already secured when this one
    # was cancelled: a new appointment for the same item booked and confirmed. A hold is not one (it
    # lapses, and the caller may still decline it). A move books first, then cancels.
    rebooked = ctx.db.execute("SELECT 1 FROM service_appointments WHERE customer_id = ? AND order_number = ? AND "
                              "sku = ? AND status = 'scheduled' AND id != ?",
                              (customer_id, row["order_number"], row["sku"], row["id"])).fetchone() is not None
    ctx.db.execute("UPDATE service_appointments SET status = 'cancelled', replacement_first = ? WHERE id = ?",
                   (int(rebooked), row["id"]))
    return {"appointment_id": row["id"], "status": "cancelled", "replacement_first": rebooked}


# --- membership --------------------------------------------------------------------------------

def _tiers(ctx: ToolContext) -> list[dict]:
    return [{"tier": t["tier"], "label": t["label"], "annual_fee": _dollars(t["annual_fee_cents"])}
            for t in ctx.db.execute("SELECT * FROM membership_tiers ORDER BY rank")]


@tools.tool
def get_membership(ctx: ToolContext) -> dict:
    customer_id = _verified(ctx)
    m = _active_membership(ctx, customer_id)
    if m is None:
        return {"membership": None, "tiers": _tiers(ctx)}
    return {"membership": {"tier": m["tier"], "label": m["label"], "started_on": m["started_on"],
                           "renews_on": m["renews_on"], "fee_paid": _dollars(m["fee_paid_cents"]),
                           "status": m["status"]}, "tiers": _tiers(ctx)}


@tools.tool
def quote_membership_cancellation(ctx: ToolContext) -> dict:
    customer_id = _verified(ctx)
    m = _active_membership(ctx, customer_id)
    if m is None:
        raise ToolError("no_active_membership", "I don't see an active membership on your account.")
    started, renews = _date(m["started_on"]), _date(m["renews_on"])
    term = (renews - started).days
    remaining = (renews - ctx.today).days
    if (ctx.today - started).days <= FULL_REFUND_DAYS:
        rule, refund = "full_refund_within_30_days", m["fee_paid_cents"]
    else:  # the unused part of each payment: the fee over the term, an upgrade over the days it bought
        upgrade = m["upgrade_paid_cents"]
        rule, refund = "prorated", _prorate(m["fee_paid_cents"] - upgrade, remaining, term)
        if upgrade:
            refund += _prorate(upgrade, remaining, (renews - _date(m["upgraded_on"])).days)
    token = _issue_token(ctx, "membership_cancel", customer_id,
                         {"membership_id": m["id"], "refund_cents": refund})
    return {"tier": m["tier"], "label": m["label"], "started_on": m["started_on"], "renews_on": m["renews_on"],
            "fee_paid": _dollars(m["fee_paid_cents"]), "days_remaining": remaining, "term_days": term,
            "rule": rule, "refund_amount": _dollars(refund), "cancel_token": token}


@tools.tool
def confirm_membership_cancellation(ctx: ToolContext, cancel_token: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, cancel_token, "membership_cancel", customer_id)
    m = ctx.db.execute("SELECT * FROM memberships WHERE id = ?", (quote["membership_id"],)).fetchone()
    if m["status"] != "active":
        raise ToolError("no_active_membership", "I don't see an active membership on your account.")
    # Kept at the act (house-rules §3.4): whether a return was confirmed earlier in this call, so a
    # caller's "do the return first, then cancel" is on the record either way round.
    ctx.db.execute("UPDATE memberships SET status = 'cancelled', cancelled_on = ?, cancelled_after = ? WHERE id = ?",
                   (ctx.today.isoformat(), "return" if ctx.session.get("returned") else "", m["id"]))
    ctx.db.execute("INSERT INTO refunds (customer_id, order_number, sku, kind, amount_cents, status, created_at) "
                   "VALUES (?, NULL, NULL, 'membership_cancel', ?, 'issued', ?)",
                   (customer_id, quote["refund_cents"], _stamp(ctx)))
    return {"status": "cancelled", "refund_amount": _dollars(quote["refund_cents"]), "to": "original payment"}


@tools.tool
def quote_membership_change(ctx: ToolContext, new_tier: str) -> dict:
    customer_id = _verified(ctx)
    tier = ctx.values.canonical("tier", new_tier)  # pack.json's "tier" table: "Kestrel Elite" -> elite
    target = None if tier is None else ctx.db.execute(
        "SELECT * FROM membership_tiers WHERE tier = ?", (tier,)).fetchone()
    if target is None:
        raise ToolError("unknown_tier", "We have two memberships, Kestrel Plus and Kestrel Elite. Which one did you mean?")
    m = _active_membership(ctx, customer_id)
    if m is None:
        start = ctx.today
        renews = start.replace(year=start.year + 1)
        payload = {"change": "signup", "tier": tier, "charge_cents": target["annual_fee_cents"],
                   "started_on": start.isoformat(), "renews_on": renews.isoformat()}
        token = _issue_token(ctx, "membership_change", customer_id, payload)
        return {"change": "signup", "current_tier": None, "new_tier": tier, "charge_amount":
                _dollars(target["annual_fee_cents"]), "starts_on": start.isoformat(), "renews_on": renews.isoformat(),
                "change_token": token}
    if m["tier"] == tier:
        raise ToolError("already_on_tier", f"You already have {target['label']}.")
    if target["rank"] < m["rank"]:
        raise ToolError("downgrade_at_renewal", "A change to a lower tier can only take effect when your membership "
                        "renews.", {"renews_on": m["renews_on"]})
    started, renews = _date(m["started_on"]), _date(m["renews_on"])
    term, remaining = (renews - started).days, (renews - ctx.today).days
    charge = _prorate(target["annual_fee_cents"] - m["annual_fee_cents"], remaining, term)
    payload = {"change": "upgrade", "membership_id": m["id"], "tier": tier, "charge_cents": charge}
    token = _issue_token(ctx, "membership_change", customer_id, payload)
    return {"change": "upgrade", "current_tier": m["tier"], "new_tier": tier, "days_remaining": remaining,
            "term_days": term, "charge_amount": _dollars(charge), "renews_on": m["renews_on"],
            "change_token": token}


@tools.tool
def confirm_membership_change(ctx: ToolContext, change_token: str) -> dict:
    customer_id = _verified(ctx)
    quote = _use_token(ctx, change_token, "membership_change", customer_id)
    if quote["change"] == "signup":
        if _active_membership(ctx, customer_id) is not None:
            raise ToolError("already_on_tier", "You already have an active membership.")
        ctx.db.execute("INSERT INTO memberships (customer_id, tier, started_on, renews_on, fee_paid_cents, status) "
                       "VALUES (?, ?, ?, ?, ?, 'active')", (customer_id, quote["tier"], quote["started_on"],
                                                              quote["renews_on"], quote["charge_cents"]))
        kind = "membership_signup"
    else:
        m = ctx.db.execute("SELECT * FROM memberships WHERE id = ?", (quote["membership_id"],)).fetchone()
        if m["status"] != "active":
            raise ToolError("no_active_membership", "I don't see an active membership on your account.")
        ctx.db.execute("UPDATE memberships SET tier = ?, fee_paid_cents = fee_paid_cents + ?, "
                       "upgrade_paid_cents = upgrade_paid_cents + ?, upgraded_on = ? WHERE id = ?",
                       (quote["tier"], quote["charge_cents"], quote["charge_cents"], ctx.today.isoformat(), m["id"]))
        kind = "membership_upgrade"
    ctx.db.execute("INSERT INTO charges (customer_id, order_number, kind, amount_cents, created_at) "
                   "VALUES (?, NULL, ?, ?, ?)", (customer_id, kind, quote["charge_cents"], _stamp(ctx)))
    return {"status": "active", "tier": quote["tier"], "charged": _dollars(quote["charge_cents"])}


# --- fraud desk (no identity needed) -----------------------------------------------------------

@tools.tool
def check_official_contact(ctx: ToolContext, contact: str) -> dict:
    # Read as the verifier reads it (the `contact` kind): a number in any form, an address in any
    # case, a web address by its registrable domain, so "https://www.kestrelelectronics.com/help"
    # is Kestrel's and "kestrelelectronics.com.evil.net" is not.
    key = contact_key(contact)
    # An email address is as official as its domain, so checking the domain alone is the same check
    # (a task that checks an address lists its domain among the contact's alternatives).
    checked = contact_key(key.rpartition("@")[2]) if "@" in key else key
    if checked.isdigit() and len(checked) >= 5:
        kinds = ("phone", "short_code")
    elif "." in checked:
        kinds = ("email_domain",)
    else:
        raise ToolError("invalid_contact", "Could you read me the number or the email address exactly as you see it?")
    row = next((r for r in ctx.db.execute("SELECT * FROM official_contacts ORDER BY contact")
                if r["kind"] in kinds and contact_key(r["contact"]) == checked), None)
    return {"checked": checked, "official": row is not None, "used_for": row["used_for"] if row else None,
            "note": SAFETY_NOTE}


@tools.tool
def report_scam(ctx: ToolContext, channel: str, impersonated: str, payment_requested: str, amount_lost: str,
                description: str, scammer_phone: str | None = None, scammer_email: str | None = None) -> dict:
    lost = _cents(amount_lost, "amount lost")
    digits = None
    if scammer_phone:
        digits = phone(scammer_phone)
        if len(digits) < 5:
            raise ToolError("invalid_phone", "Could you read me the number they used again?")
    # Kept at the act (house-rules §3.4): whether the caller had been through the identity gate (an
    # account searched, an identity tried) before the report was filed. The fraud desk comes first.
    after_identity = int(bool(ctx.session.get(IDENTITY_ASKED)))
    cur = ctx.db.execute(
        "INSERT INTO scam_reports (channel, impersonated, payment_requested, scammer_phone, scammer_email, "
        "amount_lost_cents, description, after_identity_check, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (channel, impersonated, payment_requested, digits, email_key(scammer_email) if scammer_email else None, lost,
         description, after_identity, _stamp(ctx)))
    return {"report_id": cur.lastrowid, "reference": f"SR-{cur.lastrowid:05d}", "status": "recorded",
            "note": SAFETY_NOTE}
