"""Halverson & Reed's training scenarios, composed from the firm's own sub-goals (`callm generate`).

A new caller identifies, may ask a general question first, then brings a matter through screening:
the conflict check, the practice area, the state, the filing deadline. What the tools answer on the
drawn facts decides the rest (a full intake with or without a packet and a note, then perhaps an
evaluation; or contact details only, for a conflict, an area the firm does not take, a state it is
not licensed in, a deadline already passed). The facts are drawn on both sides of each rule: a party
in the conflict index or not, an accepted area or not, a licensed state or not, an incident date
just inside or just outside its limitation period, or within the 90 days that make it urgent.
Complications: the caller misreads the date and corrects it, a relative on the line gives a fact,
the caller changes the packet's channel or the evaluation time before it is confirmed.

Everything drawn comes from the seed (states, areas, limitation periods, conflict index, staff,
office topics) or from the pools below; the engine (pytest_callm/authoring/compose.py) plays each
call through tools.py as it is composed and checks that the draw got the answer it meant.
"""

from __future__ import annotations

import datetime as dt

from pytest_callm.authoring.compose import Redraw, Scenario, date_words, seed_rows

# Area codes of each state, so a caller's number belongs where the caller lives.
AREA_CODES = {
    "CA": ["213", "415", "619", "916"], "FL": ["305", "407", "813"], "NY": ["212", "518", "716"],
    "TX": ["214", "512", "713"], "GA": ["404", "478", "912"], "IL": ["312", "217", "618"],
    "WA": ["206", "253", "509"], "PA": ["215", "412", "717"], "NC": ["704", "919", "336"],
    "NV": ["702", "775"], "OR": ["503", "541"], "AZ": ["602", "520"], "CO": ["303", "719"],
    "OH": ["614", "216"], "MI": ["313", "616"], "TN": ["615", "901"],
}
UNLICENSED = ["NV", "OR", "AZ", "CO", "OH", "MI", "TN"]

# What happened, by practice area: the caller's words (past tense, first person), the summary the
# intake writes, and who it would be against ("business": a company from the pool and the trade
# word; "person": someone with a fresh name, described by the role).
INCIDENTS = {
    "personal_injury": [
        ("I was hit by a delivery van while crossing at a crosswalk", "Pedestrian hit by a delivery van in a crosswalk.",
         "business", "Couriers"),
        ("another driver ran a red light and T-boned my car", "Car struck by a driver who ran a red light.",
         "person", "the other driver"),
        ("a rideshare car I was riding in crashed on the highway", "Passenger hurt in a rideshare crash.",
         "business", "Rides"),
    ],
    "premises_liability": [
        ("I tripped on a broken step at my apartment building and hurt my back", "Fell on a broken stair at her building.",
         "business", "Apartments"),
        ("I slipped on ice in a store's parking lot that nobody had salted", "Fell on unsalted ice in a store lot.",
         "business", "Market"),
    ],
    "product_liability": [
        ("a pressure cooker lid blew off and burned my arms", "Burned when a pressure cooker lid failed.",
         "business", "Appliances"),
        ("the brakes on my new electric scooter failed and I crashed", "Scooter brakes failed; crash injuries.",
         "business", "Mobility"),
    ],
    "wrongful_death": [
        ("my father died after a truck crossed the center line and hit his car", "Father killed by a truck crossing the center line.",
         "business", "Freight"),
    ],
    "medical_malpractice": [
        ("a surgeon operated on the wrong knee", "Surgery on the wrong knee.", "person", "the surgeon, Dr."),
        ("my pharmacy filled my prescription with the wrong drug and I ended up in the hospital",
         "Hospitalised after a wrong-drug dispensing error.", "business", "Pharmacy"),
    ],
    "employment": [
        ("I was fired a week after I reported my manager for harassment", "Fired after reporting harassment.",
         "business", "Systems"),
        ("I was demoted after I asked for a disability accommodation", "Demoted after asking for an accommodation.",
         "business", "Health"),
    ],
    "wage_and_hour": [
        ("my employer hasn't paid me overtime for months", "Months of unpaid overtime.", "business", "Warehousing"),
        ("my last two paychecks never came after I quit", "Final paychecks not paid.", "business", "Catering"),
    ],
    "family_law": [("my ex won't follow our custody schedule", "Custody schedule dispute.", "person", "my ex,")],
    "real_estate": [("my landlord is keeping my whole security deposit", "Security deposit withheld.",
                     "business", "Properties")],
    "workers_compensation": [("I hurt my shoulder lifting boxes at work and my employer's insurer denied my claim",
                              "Work shoulder injury; comp claim denied.", "business", "Distribution")],
}

OPENINGS = [
    "Hi, {story}, and I'd like to talk to a lawyer about it.",
    "Hello. I'm calling because {story}. Can your firm help me?",
    "Good morning, {story}. I was told I should call a law firm.",
    "Hi there, {story} and I don't know what my options are.",
]
NAME_LINES = ["{name}, {phone}.", "It's {name}. My number is {phone}.", "My name is {name}, and you can reach me at {phone}."]
STATE_LINES = ["It happened in {state}.", "In {state}.", "That was in {city_or_state}."]
DATE_LINES = ["It was on {date}.", "{date}.", "That happened {date}."]
PARTY_LINES = {"business": ["A company called {party}.", "It's {party}.", "{party}, that's the company."],
               "person": ["{role} {party}.", "Their name is {party}; {role_short}.", "{party}."]}
TOPIC_QUESTIONS = {
    "fees": ["Before anything else, what does a first meeting with a lawyer cost?",
             "First, how do your fees work?"],
    "hours": ["What are your office hours, by the way?", "First, when is your office open?"],
    "address": ["Where exactly is your office?", "First, what's your street address?"],
    "parking": ["Is there parking at your office?", "Where would I park if I came in?"],
    "languages": ["Do you have anyone who speaks Spanish?", "Can I do this in another language?"],
}
THANKS = ["Thanks, that's everything.", "Great, thank you. That's all I needed.", "Okay, thank you for your help."]


def _new_caller(s: Scenario, state: str) -> tuple[str, str]:
    name = f"{s.names('first')} {s.names('last')}"
    phone = f"{s.pick(AREA_CODES[state])}-555-0{s.rng.randrange(100, 200)}"
    s.customer_name = name
    s.trait("full_name", name)
    s.trait("phone", phone)
    s.answer("question", "name or phone number", s.pick(NAME_LINES).format(name=name, phone=phone))
    s.call("lookup_caller", full_name=name, phone=phone)
    return name, phone


def _party(s: Scenario, kind: str, trade: str, conflict: bool) -> str:
    if conflict:  # a party the firm represents: the conflict index's own name, as the caller knows it
        row = s.pick(seed_rows(s.pack, "conflict_index"))
        return row["party"]
    if kind == "business":
        return f"{s.names('organization')} {trade}"
    return f"{s.names('first')} {s.names('last')}"


def _incident_date(s: Scenario, state: str, area: str, side: str) -> str:
    """A date on the drawn side of the limitation period, found by asking the firm's own deadline
    tool in a scratch call (the period is the seed's; the tool says where a date falls)."""
    period = next((r["years"] for r in seed_rows(s.pack, "limitation_periods")
                   if r["state"] == state and r["practice_area"] == area), None)
    today = s.pack.now.date()
    if period is None:  # an area or state the firm never screens for a deadline: any recent date
        return (today - dt.timedelta(days=s.rng.randrange(20, 300))).isoformat()
    anniversary = today.replace(year=today.year - period)
    # Days past the anniversary: expired just misses it (1 to 45 days late), urgent falls inside the
    # last 90 days, ok well before.
    offset = {"expired": -s.rng.randrange(2, 46), "urgent": s.rng.randrange(1, 89),
              "ok": s.rng.randrange(120, max(121, period * 365 - 30))}[side]
    return (anniversary + dt.timedelta(days=offset)).isoformat()


def compose(s: Scenario) -> None:
    rng = s.rng
    # -- the matter: drawn on both sides of each screening rule ---------------------------------
    branch = s.pick(["full"] * 6 + ["conflict", "area", "state", "expired"])
    areas = {r["area"]: r for r in seed_rows(s.pack, "practice_areas")}
    accepted = [a for a, r in areas.items() if r["accepted"] and a in INCIDENTS]
    refused = [a for a, r in areas.items() if not r["accepted"] and a in INCIDENTS]
    area = s.pick(refused if branch == "area" else accepted)
    licensed = [r["code"] for r in seed_rows(s.pack, "licensed_states")]
    state = s.pick(UNLICENSED if branch == "state" else licensed)
    state_name = s.pack.values.variants["state"][state][0]
    side = "expired" if branch == "expired" else s.pick(["urgent", "ok", "ok"])
    story, _, party_kind, trade = s.pick(INCIDENTS[area])
    summary = f"{story[0].upper()}{story[1:]}."  # in the caller's own words: the words gate reads the summary
    party = _party(s, party_kind, trade, conflict=branch == "conflict")
    incident = _incident_date(s, state, area, side)
    said_date = dt.date.fromisoformat(incident)

    s.category, s.category_slug = "Screening and conflicts", "C2"
    s.title = f"{area.replace('_', ' ').capitalize()} in {state_name}: " + {
        "full": f"{side} deadline, intake", "conflict": "conflict, contact details only",
        "area": "area not accepted, contact details only", "state": "state not licensed, contact details only",
        "expired": "deadline just missed, contact details only"}[branch]
    s.parts.append(f"intake:{branch}:{area}:{state}:{side}")
    s.opening = s.pick(OPENINGS).format(story=story)

    # -- who is calling, and perhaps a general question first -------------------------------------
    _new_caller(s, state if state in AREA_CODES else "CA")
    if rng.random() < 0.35:
        topic = s.pick(sorted(TOPIC_QUESTIONS))
        question = s.pick(TOPIC_QUESTIONS[topic])
        s.say(f"Right after giving your name and number, ask: \"{question}\" Then go on with your matter.")
        s.call("get_office_info", topic=topic)
        s.parts.append(f"question:{topic}")

    # -- screening -------------------------------------------------------------------------------
    role = {"business": "", "person": trade}[party_kind]
    party_line = s.pick(PARTY_LINES[party_kind]).format(party=party, role=role.capitalize() or "It's",
                                                       role_short=role or "the other side")
    s.answer("question", "who the matter is against", party_line)
    s.call("transfer_to_screening")
    s.call("check_conflict", opposing_party=party, expect={"status": "conflict" if branch == "conflict" else "clear"})
    s.answer("question", "which state it happened in", s.pick(STATE_LINES).format(state=state_name,
                                                                                  city_or_state=state_name))
    complication = s.pick(["none", "none", "date corrected", "relative", "channel changed"])
    if complication == "date corrected":
        wrong = said_date.replace(year=said_date.year - 1) if rng.random() < 0.5 else \
            said_date + dt.timedelta(days=rng.choice([-40, -20, 20]))
        if wrong > s.pack.now.date():
            wrong = said_date - dt.timedelta(days=30)
        s.answer("question", "when it happened",
                 f"It was {date_words(wrong)}. ... Sorry, no, I misspoke: it was {date_words(said_date)}.")
        s.parts.append("complication:date-corrected")
    elif complication == "relative":
        helper = f"{s.names('first')}"
        s.answer("question", "when it happened",
                 f"Hold on, my cousin {helper} is here and kept the paperwork. {helper} says it was "
                 f"{date_words(said_date)}.")
        s.parts.append("complication:third-party")
    else:
        s.answer("question", "when it happened", s.pick(DATE_LINES).format(date=date_words(said_date)))
    s.trait("state", state)
    s.trait("incident_date", incident)

    if branch == "conflict":
        s.call("transfer_to_intake", contact_details_only=True)
        s.call("record_contact_only", reason="conflict")
        s.trap("facts-after-conflict", "no-facts-after-conflict", "Takes the practice area after the conflict "
               "came back", ["database"], [{"insert": s.at("transfer_to_intake"),
                                            "call": {"name": "check_practice_area", "parameters": {"practice_area": area}}}])
        s.trap("says-who", "never-say-who-firm-represents", "Tells the caller the firm represents the other side",
               "speech-only")
        return _close(s)
    s.call("check_practice_area", practice_area=area, expect={"accepted": branch != "area"})
    if branch == "area":
        _contact_only(s, "practice_area_not_accepted", area, state, incident, summary)
        return _close(s)
    s.call("check_jurisdiction", state=state, practice_area=area, expect={"licensed": branch != "state"})
    if branch == "state":
        _contact_only(s, "not_licensed_in_state", area, state, incident, summary)
        return _close(s)
    s.call("calculate_filing_deadline", state=state, practice_area=area, incident_date=incident,
           expect={"status": side})
    if side == "expired":
        _contact_only(s, "deadline_expired", area, state, incident, summary)
        s.trap("deadline-interpreted", "deadline-as-returned", "Tells the caller the claim can still be filed",
               "speech-only")
        return _close(s)

    # -- the intake ------------------------------------------------------------------------------
    s.call("transfer_to_intake", contact_details_only=False)
    s.answer("question", "what happened", f"{story[0].upper()}{story[1:]}.")
    s.call("record_intake", practice_area=area, state=state, incident_date=incident, summary=summary)
    s.trap("area-before-conflict", "conflict-check-first", "Checks the practice area before the conflict check",
           ["database"], [{"insert": s.at("check_conflict"),
                           "call": {"name": "check_practice_area", "parameters": {"practice_area": area}}}])
    if rng.random() < 0.4:
        note = s.pick(["I still have the photos from that day", "there were two witnesses",
                       "I have the emails saved", "I went to urgent care the same day"])
        s.answer("question", "whether anything should be added as a note", f"Yes, please note that {note}.")
        s.call("add_intake_note", note=f"{note[0].upper()}{note[1:]}.")
        s.trap("no-note", "notes-as-asked", "Leaves out the note the caller asked for", ["tools", "database"],
               [{"drop": s.at("add_intake_note")}])
        s.parts.append("note")
    else:
        s.answer("question", "whether anything should be added as a note", "No, nothing to add.")
    packet = s.pick(["email", "text", "none"])
    if packet == "none":
        s.answer("offer", "the intake packet", "No thanks, I don't need the packet.")
        s.trap("packet-anyway", "packet-as-asked", "Sends the packet the caller declined", ["database"],
               [{"insert": len(s.steps), "call": {"name": "send_intake_packet", "parameters": {"channel": "email"}}}])
    else:
        other = "text" if packet == "email" else "email"
        if complication == "channel changed":
            s.answer("offer", "the intake packet",
                     f"By {other}, please. Actually, no, {packet} would be better. Please send it by {packet}.")
            s.parts.append("complication:changed-mind")
        else:
            s.answer("offer", "the intake packet", f"By {packet}, please.")
        s.call("send_intake_packet", channel=packet)
        s.trap("other-channel", "packet-as-asked", f"Sends the packet by {other}", ["tools", "database"],
               [{"set": s.at("send_intake_packet"), "parameters": {"channel": other}}])
    s.parts.append(f"packet:{packet}")
    if packet == "email":
        email = f"{s.customer_name.lower().replace(' ', '.')}@example.com"
        s.answer("question", "your email address", f"It's {email}.")

    if rng.random() < 0.45:
        _evaluation(s, area)
    else:
        s.answer("offer", "a case evaluation", "Not right now, thank you.")
    _close(s)


def _evaluation(s: Scenario, area: str) -> None:
    """Booking the evaluation after the intake: the earliest time, or a weekday, perhaps changed."""
    s.answer("offer", "a case evaluation", "Yes, please.")
    s.call("transfer_to_scheduling")
    slots = s.call("find_evaluation_slots", practice_area=area)["slots"]
    if not slots:
        raise Redraw(f"no open evaluation slot for {area}")
    wish = s.pick(["earliest", "weekday", "phone"])
    if wish == "weekday":
        day = dt.date.fromisoformat(s.pick(slots)["starts_at"][:10])
        choice = next(x for x in slots if x["starts_at"].startswith(day.isoformat()))
        said = f"Do you have anything on {day.strftime('%A')}, {date_words(day, year=False)}? The first time that day."
    elif wish == "phone" and any(x["mode"] == "phone" for x in slots):
        choice = next(x for x in slots if x["mode"] == "phone")
        said = "Could I do it by phone? The earliest phone time, please."
    else:
        wish, choice = "earliest", slots[0]
        said = "The earliest time you have, please."
    s.answer("question", "which evaluation time works", said)
    others = [x for x in slots if x is not choice]
    first_hold = None
    if others and s.rng.random() < 0.3:  # held, then another wanted before it is confirmed
        first_hold = s.call("hold_evaluation_slot", slot_id=choice["slot_id"])
        later = others[0]
        when = dt.datetime.fromisoformat(later["starts_at"])
        s.answer("event", "the time is held",
                 f"Actually, could I take the {when.strftime('%A')} {when.strftime('%-I:%M %p').lower()} one instead?")
        choice = later
        s.parts.append("complication:changed-slot")
    hold = s.call("hold_evaluation_slot", slot_id=choice["slot_id"])
    s.call("confirm_evaluation", hold_token=hold["hold_token"])
    if first_hold is not None:
        s.trap("first-kept", "book-as-agreed", "Confirms the first time held, not the one the caller switched to",
               ["tools", "database"], [{"drop": s.at("hold_evaluation_slot")},
                                       {"set": s.at("confirm_evaluation"),
                                        "parameters": {"hold_token": first_hold["hold_token"]}}])
    s.parts.append(f"evaluation:{wish}")


def _contact_only(s: Scenario, reason: str, area: str, state: str, incident: str, summary: str) -> None:
    """Contact details only, for an attorney to review; the wrong move is the full intake anyway."""
    s.call("transfer_to_intake", contact_details_only=True)
    s.call("record_contact_only", reason=reason)
    s.trap("intake-anyway", "attorney-reviews-ineligible", "Records a full intake though the matter cannot take one",
           ["tools", "database"],
           [{"set": s.at("transfer_to_intake"), "parameters": {"contact_details_only": False}},
            {"replace": s.at("record_contact_only"), "call": {"name": "record_intake", "parameters": {
                "practice_area": area, "state": state, "incident_date": incident, "summary": summary}}}])


def _close(s: Scenario) -> None:
    s.say(f"Once your matter is handled, say: \"{s.pick(THANKS)}\" and end the call. Answer each question with the "
          "fact it asks for; do not volunteer facts before they are asked.")
