"""Straus Dermatology's training scenarios, composed from the practice's own sub-goals (`callm generate`).

A new patient calls to book a first visit: the plan is checked at the office the caller wants
(in network or not, from the seed's acceptance table: both sides drawn), and when it is not, the
caller either goes to an office that takes the plan (one the tool lists) or books there as
self-pay; then scheduling finds the first open new-patient time (from a day the caller names, or
the earliest) and books it with the caller's details; a text (the new-patient forms, or the
appointment's confirmation) is sent only when asked for. Complications: the caller misstates the
date of birth and corrects it, or a relative on the line gives it.

Offices, carriers, acceptance and slots are the seed's; the engine plays each call as it is
composed and checks the draw got the answer it meant (a plan drawn out of network comes back so).
"""

from __future__ import annotations

import datetime as dt

from pytest_callm.authoring.compose import Redraw, Scenario, date_words, seed_rows

AREA_CODES = {"park_ave": ["212", "646", "917"], "brooklyn": ["718", "347", "929"], "hoboken": ["201", "551"],
              "white_plains": ["914"]}
OPENINGS = ["Hi, I'd like to make a first appointment. I've never been to you before.",
            "Hello, I'm a new patient and I need to see a dermatologist.",
            "Hi, I'd like to book a new patient visit, please.",
            "Good morning. I have a rash I want looked at, and I'm not a patient of yours yet."]
THANKS = ["Thank you, that's all.", "Great, thanks so much.", "Perfect, thank you."]


def compose(s: Scenario) -> None:
    rng, today = s.rng, s.pack.now.date()
    offices = {r["id"]: r for r in seed_rows(s.pack, "offices")}
    carriers = {r["code"]: r["name"] for r in seed_rows(s.pack, "carriers") if r["code"] != "SELF_PAY"}
    accepted = {(r["office_id"], r["carrier"]): bool(r["accepted"]) for r in seed_rows(s.pack, "plan_acceptance")}
    network = s.pick(["in", "in", "out"])
    pairs = [(o, c) for (o, c), ok in accepted.items() if c in carriers and ok == (network == "in")]
    office_id, carrier = s.pick(sorted(pairs))
    office, carrier_name = offices[office_id]["name"], carriers[carrier]
    age = rng.randrange(19, 80)
    birth = dt.date(today.year - age, 1, 1) + dt.timedelta(days=rng.randrange(365))
    if (today.month, today.day) < (birth.month, birth.day):
        age -= 1  # the age the caller states matches the date of birth
    name = f"{s.names('first')} {s.names('last')}"
    phone = f"{s.pick(AREA_CODES[office_id])}-555-0{rng.randrange(100, 200)}"
    s.customer_name = name
    s.trait("full_name", name)
    s.trait("date_of_birth", birth.isoformat())
    s.trait("phone", phone)
    s.category, s.category_slug = "Insurance and new patients", "C3"
    s.opening = s.pick(OPENINGS)
    s.say(f"You are {name}, {age} years old, and you want to be seen at the {office} office. Your insurance is "
          f"{carrier_name}.")

    # -- the plan at the office the caller wants ---------------------------------------------------
    s.answer("question", "which insurance you have", f"I have {carrier_name}.")
    s.answer("question", "which office you would like", f"The {office} office, please.")
    result = s.call("check_plan_acceptance", office=office, carrier=carrier_name, expect={"accepted": network == "in"})
    book_office, book_carrier = office, carrier_name
    if network == "out":
        others = [o for o in result["offices_accepting"] if o != office]
        if others and rng.random() < 0.6:
            book_office = others[0]
            s.answer("event", "the agent says the office is out of network for your plan",
                     "Oh. Then which office does take it? I'll go to the first one you have.")
            s.parts.append("out-of-network:other-office")
        else:
            book_carrier = "self-pay"
            s.answer("event", "the agent says the office is out of network for your plan",
                     f"I really want {office}. I'll pay myself then, as self-pay.")
            s.parts.append("out-of-network:self-pay")
    s.title = f"New patient with {carrier_name} at {office}" + (
        "" if network == "in" else f": out of network, booked {'at ' + book_office if book_office != office else 'self-pay'}")
    s.parts.insert(0, f"new-patient:{office_id}:{carrier}:{network}")

    # -- the first open time ------------------------------------------------------------------------
    s.call("transfer_to_scheduling")
    if rng.random() < 0.5:
        start = today + dt.timedelta(days=rng.randrange(2, 12))
        s.answer("question", "when you would like to come in",
                 f"Anything on or after {start.strftime('%A')}, {date_words(start, year=False)}. The first time you have then.")
        slots = s.call("find_open_slots", office=book_office, visit_type="new_patient", earliest_date=start.isoformat())
        s.parts.append("from-a-day")
    else:
        s.answer("question", "when you would like to come in", "The earliest time you have, please.")
        slots = s.call("find_open_slots", office=book_office, visit_type="new_patient")
        s.parts.append("earliest")
    if not slots["slots"]:
        raise Redraw(f"no open new-patient time at {book_office}")
    slot = slots["slots"][0]

    # -- the patient's details ----------------------------------------------------------------------
    said_birth = date_words(birth)
    complication = s.pick(["none", "none", "dob corrected", "relative"])
    if complication == "dob corrected":
        wrong = birth.replace(day=1 if birth.day != 1 else 2)
        s.answer("question", "your date of birth",
                 f"{date_words(wrong)}. Sorry, no: it's {said_birth}. I always mix that up.")
        s.parts.append("complication:dob-corrected")
    elif complication == "relative":
        helper = s.names("first")
        s.answer("question", "your date of birth",
                 f"My partner {helper} is here, let me ask... {helper} says {said_birth}. Yes, that's it.")
        s.parts.append("complication:third-party")
    else:
        s.answer("question", "your date of birth", f"{said_birth}.")
    s.answer("question", "your full name and phone number", f"{name}, {phone}.")
    booked = s.call("book_new_patient_visit", slot_id=slot["slot_id"], visit_type="new_patient", full_name=name,
                    date_of_birth=birth.isoformat(), phone=phone, carrier=book_carrier)
    at_booking = s.at("book_new_patient_visit")
    if complication == "dob corrected":
        s.trap("first-date-kept", "use-the-corrected-value", "Books with the date of birth the caller corrected",
               ["tools", "database"], [{"set": at_booking, "parameters": {"date_of_birth": wrong.isoformat()}}])
    if network == "out":
        s.trap("booked-out-of-network", "plan-accepted-at-office",
               f"Books at {office} under {carrier_name}, which that office does not take",
               ["tools", "database"] if book_office == office else ["tools"],
               [{"set": at_booking, "parameters": {"carrier": carrier_name}}] if book_office == office else
               [{"set": s.at("find_open_slots"), "parameters": {"office": office}}])

    # -- a text, only when asked --------------------------------------------------------------------
    text = s.pick(["none", "forms", "confirmation"])
    if text == "forms":
        s.answer("event", "the visit is booked", "Could you text me the new patient forms?")
        s.call("send_text_message", message_type="new_patient_forms", appointment_id=booked["appointment_id"])
    elif text == "confirmation":
        s.answer("event", "the visit is booked", "Can you text me a confirmation of that?")
        s.call("send_text_message", message_type="appointment_confirmation", appointment_id=booked["appointment_id"])
    else:
        s.answer("offer", "a text", "No need, thank you.")
        s.forbidden.append("send_text_message")
        s.trap("unasked-text", "texts-only-when-asked", "Texts a confirmation the caller never asked for",
               ["tools", "database"], [{"insert": len(s.steps), "call": {
                   "name": "send_text_message", "parameters": {"message_type": "appointment_confirmation",
                                                               "appointment_id": booked["appointment_id"]}}}])
    if text != "none":
        s.trap("no-text", "texts-only-when-asked", "Never sends the text the caller asked for", ["tools", "database"],
               [{"drop": s.at("send_text_message")}])
    s.parts.append(f"text:{text}")
    s.say(f"When you are booked, say: \"{s.pick(THANKS)}\" and end the call. Answer each question with the fact it "
          "asks for.")
