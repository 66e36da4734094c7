"""A realistic mix of synthetic caller turns, for calibrating and checking the phone line.

Shaped like the caller side of front-desk calls (clinic, law office, customer support): about a
quarter short acknowledgements, turns giving a name, a phone number, a date or time, a dollar amount
or an account number (mostly spoken the way the simulated caller is told to speak them, sometimes in
digits), ordinary requests, and long explanations that may carry any of these. Nothing here is data
from real calls; it is a mix to measure the line on. `synthetic_turns(n, seed)` is deterministic and
comes as calls of four turns by one caller.
"""

from __future__ import annotations

import random

from pytest_callm.phone.spoken_numbers import ONES_WORDS, cardinal_words, ordinal_words, year_words

FIRST = ["Dana", "Maria", "James", "Linda", "Robert", "Susan", "Michael", "Karen", "David", "Nancy", "Daniel",
         "Lisa", "Kevin", "Sandra", "Brian", "Donna", "Jason", "Carol", "Eric", "Sharon", "Steven", "Laura",
         "Peter", "Emily", "Thomas", "Rachel", "Anthony", "Megan", "Carlos", "Grace", "Ahmed", "Priya",
         "Wei", "Olivia", "Ethan", "Sofia", "Marcus", "Hannah", "Jamal", "Chloe"]
LAST = ["Whitfield", "Garcia", "Johnson", "Miller", "Davis", "Martinez", "Anderson", "Taylor", "Thomas", "Moore",
        "Jackson", "Martin", "Lee", "Thompson", "White", "Harris", "Clark", "Lewis", "Robinson", "Walker",
        "Young", "Allen", "King", "Wright", "Scott", "Green", "Baker", "Adams", "Nelson", "Hill", "Campbell",
        "Mitchell", "Roberts", "Carter", "Phillips", "Evans", "Turner", "Nguyen", "Patel", "Kowalski"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"]

ACKS = ["Yes.", "No.", "Yeah.", "Okay.", "Sure.", "That's right.", "Correct.", "Yes, please.", "No, thanks.",
        "Thank you.", "Okay, great.", "Go ahead.", "Perfect.", "That works.", "Sounds good.", "Not yet.",
        "Hello?", "Got it.", "Yes, that's correct.", "No, that's all.", "Okay, thank you so much.", "Right.",
        "Great, thanks.", "Sure, go ahead.", "Yep.", "Nope, that's it.", "Hmm, okay.", "Alright."]
REQUESTS = [
    "I'd like to book a check-up for my dog.",
    "Can you check if my insurance is accepted there?",
    "I need to reschedule my appointment.",
    "I'm calling about a charge on my last bill.",
    "Do you have anything earlier in the week?",
    "I want to cancel my subscription.",
    "Could you transfer me to billing?",
    "I was told someone would call me back.",
    "Is the office on Park Avenue open on weekends?",
    "My order never arrived.",
    "I'd like a refund for the second item.",
    "Can I get the first available slot?",
    "What time do you close today?",
    "I'm a new patient.",
    "I need to update my address.",
    "Please don't put me on a waitlist.",
    "I don't want a confirmation text.",
    "Could you read that back to me?",
    "I think there's a mistake in my account.",
    "Can you tell me what documents I need to bring?",
    "I'd like to speak with an attorney about a lease.",
    "The package was damaged when it arrived.",
    "I have a question about my prescription.",
    "Can we do the morning instead?",
    "My password reset link isn't working.",
    "Is there a fee for changing the date?",
    "I need a copy of my records.",
    "Which location is closest to downtown?",
    "I'd rather keep the original time.",
    "Actually, make that the afternoon.",
]
OPENERS = ["Hi, yeah,", "Hello,", "Um, so", "Okay, so", "Yeah, so", "Hi there,", "Right, so", "Well,"]
MIDDLES = [
    "I've been trying to sort this out for about a week now",
    "the last person I spoke to said it would be fixed by now",
    "my daughter usually handles this but she's away",
    "I looked on the website but I couldn't find the right page",
    "I'm not sure if I'm calling the right department",
    "it's kind of urgent because I'm traveling next month",
    "I already paid the first part of it",
    "the email I got said to call this number",
    "I just want to make sure it's done correctly this time",
    "nobody told me there would be an extra charge",
]


def _spoken_digits(digits: str, rng: random.Random) -> str:
    zero = "oh" if rng.random() < 0.7 else "zero"
    return " ".join(zero if d == "0" else ONES_WORDS[int(d)] for d in digits)


def _phone(rng: random.Random) -> str:
    area = f"{rng.randint(2, 9)}{rng.randint(0, 9)}{rng.randint(0, 9)}"
    line = f"{rng.randint(0, 9999):04d}"
    digits = area + "555" + line
    if rng.random() < 0.25:
        return f"{digits[:3]}-{digits[3:6]}-{digits[6:]}"
    return ", ".join(_spoken_digits(g, rng) for g in (digits[:3], digits[3:6], digits[6:]))


def _date(rng: random.Random) -> str:
    month, day = rng.choice(MONTHS), rng.randint(1, 28)
    if rng.random() < 0.15:
        return f"{month} {day}"
    return f"{month} {ordinal_words(day)}"


def _time(rng: random.Random) -> str:
    hour, minute = rng.randint(8, 12) if rng.random() < 0.5 else rng.randint(1, 5), rng.choice([0, 15, 30, 45])
    if rng.random() < 0.15:
        return f"{hour}:{minute:02d}"
    words = cardinal_words(hour) + (" o'clock" if minute == 0 else f" {cardinal_words(minute)}")
    return words + (rng.choice([" a.m.", " p.m.", " in the morning", ""]) if rng.random() < 0.4 else "")


def _money(rng: random.Random) -> str:
    dollars = rng.choice([rng.randint(5, 99), rng.randint(100, 999), rng.randint(1000, 4999)])
    cents = rng.choice([0, 0, 0, 50, 99, rng.randint(1, 99)])
    if rng.random() < 0.2:
        return f"${dollars:,}" + (f".{cents:02d}" if cents else "")
    out = f"{cardinal_words(dollars)} dollars"
    return out + (f" and {cardinal_words(cents)} cents" if cents else "")


def _ident(rng: random.Random) -> str:
    digits = "".join(str(rng.randint(0, 9)) for _ in range(rng.choice([5, 6, 8, 9])))
    if rng.random() < 0.3:
        return digits
    return _spoken_digits(digits, rng)


def _name_turn(rng: random.Random, first: str, last: str) -> str:
    return rng.choice([f"My name is {first} {last}.", f"It's {first} {last}.", f"{first} {last}.",
                       f"This is {first} {last}.", f"Yes, this is {first}.", f"The last name is {last}.",
                       f"It should be under {first} {last}.", f"Yeah, it's {first}, {first} {last}.",
                       f"Hi, this is {first} {last}, I'm calling about my appointment."])


def _detail_turn(rng: random.Random) -> str:
    kind = rng.random()
    if kind < 0.28:
        return rng.choice([f"My number is {_phone(rng)}.", f"It's {_phone(rng)}.",
                           f"You can reach me at {_phone(rng)}.", f"Sure, it's {_phone(rng)}."])
    if kind < 0.62:
        year = year_words(rng.randint(1940, 2005))
        return rng.choice([f"Do you have anything on {_date(rng)}?", f"My date of birth is {_date(rng)}, {year}.",
                           f"Can I come in at {_time(rng)}?", f"{rng.choice(DAYS)} at {_time(rng)} works for me.",
                           f"How about {_date(rng)} at {_time(rng)}?", f"It was on {_date(rng)}."])
    if kind < 0.82:
        return rng.choice([f"I was charged {_money(rng)} twice.", f"The bill says {_money(rng)}.",
                           f"Why is it {_money(rng)} now?", f"I paid {_money(rng)} last month."])
    return rng.choice([f"My member ID is {_ident(rng)}.", f"The order number is {_ident(rng)}.",
                       f"The case number is {_ident(rng)}.",
                       f"The zip code is {_spoken_digits(str(rng.randint(10000, 99999)), rng)}."])


def _long_turn(rng: random.Random, first: str, last: str) -> str:
    parts = [rng.choice(OPENERS)]
    if rng.random() < 0.25:
        parts.append(f"this is {first} {last},")
    parts.append(rng.choice(MIDDLES) + ",")
    parts.append(rng.choice(["and", "but", "so"]) + " " + rng.choice(MIDDLES) + ".")
    sentence = " ".join(parts)
    if rng.random() < 0.5:
        sentence += " " + rng.choice(REQUESTS)
    if rng.random() < 0.3:
        sentence += " " + _detail_turn(rng)
    if rng.random() < 0.3:
        middle = rng.choice(MIDDLES)
        sentence += " " + middle[0].upper() + middle[1:] + "."
    return sentence


def synthetic_turn(rng: random.Random, first: str, last: str) -> str:
    """One caller turn of a caller named `first last`."""
    r = rng.random()
    if r < 0.26:
        return rng.choice(ACKS)
    if r < 0.35:
        return _name_turn(rng, first, last)
    if r < 0.60:
        return _detail_turn(rng)
    if r < 0.84:
        said = rng.choice(REQUESTS)
        if rng.random() < 0.2:
            said = rng.choice(["Okay.", "Yes.", "Right.", "Hmm."]) + " " + said
        return said
    return _long_turn(rng, first, last)


def synthetic_turns(n: int, seed: str = "callm-line-mix", turns_per_call: int = 4) -> list[tuple[str, str]]:
    """`n` caller turns and their caller's name, as calls of `turns_per_call` turns by one caller."""
    rng = random.Random(seed)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        first, last = rng.choice(FIRST), rng.choice(LAST)
        for _ in range(min(turns_per_call, n - len(out))):
            out.append((synthetic_turn(rng, first, last), f"{first} {last}"))
    return out
