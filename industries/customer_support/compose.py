"""Kestrel's training scenarios, composed from the store's own sub-goals (`callm generate`).

A customer with a fresh account and a scheduled home delivery on its way calls to move the delivery:
verification (the order number, then the billing ZIP and the card's last four), then the orders desk
quotes the new date and, when the caller agrees, confirms it. What decides the answer is drawn on
both sides of each rule in tools.py: the days before the scheduled delivery (two or fewer: a change
fee; more: none), the date wanted (within the 14 days the store can move it, a Sunday, or past the
latest date, when the caller takes the latest date the tool offers), the fee accepted or declined.
Before the delivery, the caller may ask a general question the store answers from its published
words (a topic of `get_store_info`), or whether a product at home is under a recall (a model the
seed's recalls list, or one they do not). Complications: the caller misreads the order number and
corrects it, or asks for one date, then changes their mind to another before agreeing.

(Returns are not composed: every return decision the tools allow, opened or sealed, drop-off or
label, is a locked task's already, so a memorised locked key would pass it.)

Every rule's number is the seed's or tools.py's; the engine plays each call as it is composed and
checks the draw got the answer it meant (a date drawn past the latest comes back date_too_late).
"""

from __future__ import annotations

import datetime as dt

from pytest_callm.authoring.compose import Redraw, Scenario, date_words, seed_rows, spelled_out

# Area codes and ZIP prefixes by state, so an account's phone and billing ZIP belong where it lives.
PLACES = {
    "CO": (["303", "720", "719"], ["802", "803", "809"]), "WA": (["206", "425", "509"], ["981", "980", "992"]),
    "TX": (["214", "512", "713"], ["752", "787", "770"]), "AZ": (["602", "480", "520"], ["850", "852", "857"]),
    "NY": (["212", "718", "518"], ["100", "112", "122"]), "OR": (["503", "541", "971"], ["972", "974", "977"]),
    "IL": (["312", "773", "217"], ["606", "601", "627"]), "FL": (["305", "407", "813"], ["331", "328", "336"]),
}
STATE_NAMES = {"CO": "Colorado", "WA": "Washington", "TX": "Texas", "AZ": "Arizona", "NY": "New York",
               "OR": "Oregon", "IL": "Illinois", "FL": "Florida"}

OPENINGS = ["Hi, I need to change the delivery day for my {product}.",
            "Hello, can I move the delivery of the {product} I ordered?",
            "Hi there, the delivery day for my {product} doesn't work for me anymore.",
            "Good morning. I'd like to reschedule a delivery, the {product}."]
TOPIC_QUESTIONS = {
    "hours": "what time do your stores close?", "return_policy": "how long do I have to return things?",
    "price_match": "do you match other stores' prices?", "membership": "what does Kestrel Plus cost?",
    "protection_plans": "what do your protection plans cover?", "techcrew": "does TechCrew mount TVs?",
    "locations": "where is your nearest store?", "contact": "how do you contact customers, by text?",
}
THANKS = ["Thanks, that's all.", "Great, thank you for your help.", "Perfect, that's everything."]


def _account(s: Scenario, state: str) -> dict:
    name = f"{s.names('first')} {s.names('last')}"
    area_codes, zips = PLACES[state]
    row = {"id": f"cu_{s.rng.randrange(3000, 9000)}", "full_name": name,
           "phone": f"{s.pick(area_codes)}5550{s.rng.randrange(100, 200)}",
           "email": f"{name.lower().replace(' ', '.')}@example.com",
           "billing_zip": f"{s.pick(zips)}{s.rng.randrange(10, 100)}", "card_last4": f"{s.rng.randrange(10000):04d}",
           "home_state": state, "failed_verifications": 0, "account_locked": 0}
    s.records.setdefault("customers", []).append(row)
    s.customer_name = name
    s.trait("full_name", name)
    return row


def _day(day: dt.date) -> str:
    return f"{day.strftime('%A')}, {date_words(day, year=False)}"


def compose(s: Scenario) -> None:
    rng, today = s.rng, s.pack.now.date()
    products = {p["sku"]: p for p in seed_rows(s.pack, "products")}
    big = [p for p in products.values() if p["class"] in ("major_appliances", "general") and
           any(w in p["name"].lower() for w in ("tv", "washer", "dryer", "refrigerator", "range", "dishwasher", "oled"))]
    product = s.pick(big or list(products.values()))
    state = s.pick(sorted(PLACES))
    lead = s.pick([1, 2, 2, 3, 4, 6, 9])  # days to the scheduled delivery: two or fewer cost a fee
    current = today + dt.timedelta(days=lead)
    wish = s.pick(["within", "within", "within", "sunday", "too late"])
    latest = current + dt.timedelta(days=14)
    if wish == "within":
        wanted = current + dt.timedelta(days=rng.choice([d for d in range(-lead + 1, 15) if d]))
        if wanted.weekday() == 6:
            wanted += dt.timedelta(days=1)
        if wanted == current or wanted > latest:
            raise Redraw("the day drawn is the current one or past the latest")
    elif wish == "sunday":
        wanted = next(current + dt.timedelta(days=d) for d in range(1, 15) if (current + dt.timedelta(days=d)).weekday() == 6)
    else:
        wanted = latest + dt.timedelta(days=rng.randrange(1, 10))
    fee_due = lead <= 2
    declines = fee_due and rng.random() < 0.3
    price = rng.randrange(300, 2400) * 100 - 1

    account = _account(s, state)
    order_number = f"KE-{rng.randrange(101000, 109999)}"
    placed = today - dt.timedelta(days=rng.randrange(3, 12))
    s.records["orders"] = [{"order_number": order_number, "customer_id": account["id"], "placed_on": placed.isoformat(),
                            "status": "in_transit", "fulfillment": "scheduled", "ship_state": state,
                            "scheduled_delivery": current.isoformat(), "delivered_on": None,
                            "carrier": "Kestrel Delivery"}]
    s.records["order_items"] = [{"order_number": order_number, "sku": product["sku"], "price_cents": price,
                                 "condition": "new", "seller": "Kestrel"}]
    s.start()

    name = product["name"]
    s.category, s.category_slug = "Orders and delivery", "C2"
    s.title = f"{name} due in {lead} day(s), moved to a day {wish.replace('within', 'within 14 days')}" + \
              (", fee declined" if declines else ", fee agreed" if fee_due else "")
    s.parts.append(f"delivery:{product['sku']}:{lead}:{wish}:{(wanted - current).days:+d}:{wanted.strftime('%a')}:"
                   f"{'fee' if fee_due else 'no fee'}:{'declined' if declines else 'agreed'}")
    s.opening = s.pick(OPENINGS).format(product=name)
    s.say(f"You ordered the {name} from Kestrel, order {order_number}, to your home in {STATE_NAMES[state]}; "
          f"it is due on {_day(current)}.")

    _side_question(s, lead, wish)
    _verify(s, account, order_number)
    s.call("transfer_to_orders")
    complication = s.pick(["none", "none", "changed day"])
    if complication == "changed day" and wish == "within":
        other = wanted + dt.timedelta(days=1 if wanted + dt.timedelta(days=1) <= latest else -1)
        if other.weekday() == 6 or other == current or other <= today:
            raise Redraw("no other day next to the one drawn")
        s.answer("question", "which day you would like instead", f"Could you do {_day(other)}?")
        s.call("quote_delivery_change", order_number=order_number, new_date=other.isoformat())
        s.answer("event", "the agent quotes that day", f"Hmm, actually, {_day(wanted)} would be better. Can you do that instead?")
        s.parts.append("complication:changed-mind")
    else:
        s.answer("question", "which day you would like instead", f"Could you move it to {_day(wanted)}?")
    if wish == "sunday":
        s.call("quote_delivery_change", order_number=order_number, new_date=wanted.isoformat(),
               expect={"status": "no_sunday_delivery"})
        wanted += dt.timedelta(days=1)
        s.answer("event", "the agent says there is no Sunday delivery", f"Oh, then the Monday after, {_day(wanted)}.")
    elif wish == "too late":
        refused = s.call("quote_delivery_change", order_number=order_number, new_date=wanted.isoformat(),
                         expect={"status": "date_too_late"})
        wanted = dt.date.fromisoformat(refused["latest_date"])
        s.answer("event", "the agent says that is too far out", "Then the latest day you can do, please.")
        if wanted.weekday() == 6:
            raise Redraw("the latest day is a Sunday")
    quote = s.call("quote_delivery_change", order_number=order_number, new_date=wanted.isoformat())
    if declines:
        s.answer("event", "the agent tells you about a change fee", "Oh, I don't want to pay a fee. Leave it as it is, then.")
        s.trap("changed-anyway", "delivery-change-agreed", "Confirms the change the caller declined with its fee",
               ["database"], [{"insert": len(s.steps), "call": {"name": "confirm_delivery_change", "parameters": {
                   "change_token": quote["change_token"], "fee_acknowledged": True}}}])
        return _close(s)
    if fee_due:
        s.answer("event", "the agent tells you about a change fee", "That's fine, go ahead.")
        s.call("confirm_delivery_change", change_token=quote["change_token"], fee_acknowledged=True)
        s.trap("fee-unacknowledged", "fee-needs-agreement", "Confirms without the caller's agreement to the fee",
               ["tools", "database"], [{"set": s.at("confirm_delivery_change"), "parameters": {"fee_acknowledged": False}}],
               refused_with="fee_not_acknowledged")
    else:
        s.answer("event", "the agent reads back the new day", "Yes, please go ahead.")
        s.call("confirm_delivery_change", loose={"fee_acknowledged": False}, change_token=quote["change_token"])
        s.trap("not-confirmed", "finish-the-request", "Quotes the new day but never confirms it", ["tools", "database"],
               [{"drop": s.at("confirm_delivery_change")}])
    _close(s)


def _side_question(s: Scenario, lead: int, wish: str) -> None:
    """A question before the delivery: a general topic, or a recall check on a model at home."""
    side = s.pick(["none", "none", "topic", "recall"])
    if side == "topic":
        topic = s.pick(sorted(TOPIC_QUESTIONS))
        s.say(f"Before anything else, ask: \"Quick question first: {TOPIC_QUESTIONS[topic]}\"")
        s.call("get_store_info", topic=topic)
        s.parts.append(f"question:{topic}")
    elif side == "recall":
        recalled = [r["model_number"] for r in seed_rows(s.pack, "recalls")]
        models = [p["model_number"] for p in seed_rows(s.pack, "products") if p["model_number"] not in recalled]
        model = s.pick(recalled if s.rng.random() < 0.4 else models)
        s.say("Before anything else, ask whether a product you have at home is under a recall.")
        s.answer("question", "the model number", f"It's {spelled_out(model)}.")
        s.call("check_recall", model_number=model, expect={"recalled": model in recalled})
        s.parts.append(f"recall:{model}:{model in recalled}")


def _verify(s: Scenario, account: dict, order_number: str) -> None:
    """Verification: the order number (perhaps misread first), then the ZIP and the card's last four."""
    if s.rng.random() < 0.25:
        digits = order_number[3:]
        slip = digits[:-2] + digits[-1] + digits[-2] if digits[-1] != digits[-2] else \
            digits[:-1] + str((int(digits[-1]) + 3) % 10)
        s.answer("question", "the order number", f"It's {spelled_out('KE-' + slip)}. Oh wait, sorry, I misread "
                                                 f"that: it's {spelled_out(order_number)}.")
        s.parts.append("complication:misread-id")
    else:
        s.answer("question", "the order number", s.pick(["It's {n}.", "{n}.", "The order number is {n}."]).format(
            n=order_number))
    s.answer("question", "the billing ZIP code and the last four digits of the card",
             f"The ZIP is {account['billing_zip']} and the card ends in {account['card_last4']}.")
    s.call("transfer_to_verification")
    s.call("find_customer", order_number=order_number)
    s.call("verify_identity", billing_zip=account["billing_zip"], card_last4=account["card_last4"])


def _close(s: Scenario) -> None:
    if not s.steps:
        raise Redraw("nothing composed")
    s.say(f"When your request is handled, say: \"{s.pick(THANKS)}\" and end the call. Answer each question with the "
          "fact it asks for.")
