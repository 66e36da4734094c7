"""Free text read for what a house rule forbids in it (DESIGN §7a).

The paper never compares free text (a message, a note, a summary): two right agents word it two
ways. But some rules are about what free text must not hold: a clinical message carries no
dictated contact details, a scam report does not name the caller who reported it. A pack declares,
per compared column, what its rule forbids there (`pack.json` compared table `free_text`), and the
database gate reads every row's text for it. Each finder reads numbers as the line writes them,
in digits or in words, through the same number reader the phone line uses.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from pytest_callm.normalize import fold_accents, person, words
from pytest_callm.scoring.grounding import as_digits

_STREET = re.compile(
    r"\b\d{1,6}\s+(?:[a-z0-9']+\s+){0,3}(?:street|st|avenue|ave|road|rd|boulevard|blvd|lane|ln|drive|dr|court|ct|"
    r"way|place|pl|terrace|parkway|pkwy|highway|hwy|circle|cir|square|sq)\b", re.IGNORECASE)
# An address written ("ana.ruiz@example.com") or spoken ("ana ruiz at example dot com"). A written dot
# touches its words: "call her back at home. Thanks" is a sentence, not an address.
_EMAIL = re.compile(r"[\w.+-]+(?:\s*@\s*|\s+at\s+)[\w-]+(?:(?:\.|\s+dot\s+)[\w-]+)+", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_MONTH_DATE = re.compile(r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?,?"
                         r"\s+\d{4}\b", re.IGNORECASE)


def _digit_runs(text: str) -> list[str]:
    """Digit runs, separators inside a number (spaces, dashes, dots, brackets) dropped."""
    return [re.sub(r"\D", "", m) for m in re.findall(r"\+?\(?\d[\d\s().-]*\d", as_digits(text))]


# A date or a date-time as the tools write them ("2026-08-14", "2026-08-04T08:30") is not a number to
# dial: its digits run together like a phone's once the dashes are dropped.
_ISO_STAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?")


def _phone(text: str, caller: dict[str, Any]) -> str | None:
    return next((r for r in _digit_runs(_ISO_STAMP.sub(" ", text)) if 7 <= len(r) <= 11), None)


def _card(text: str, caller: dict[str, Any]) -> str | None:
    return next((r for r in _digit_runs(_ISO_STAMP.sub(" ", text)) if 12 <= len(r) <= 19), None)


def _email(text: str, caller: dict[str, Any]) -> str | None:
    m = _EMAIL.search(text)
    return m.group(0) if m else None


def _street(text: str, caller: dict[str, Any]) -> str | None:
    m = _STREET.search(as_digits(text))
    return m.group(0) if m else None


def _birth_date(text: str, caller: dict[str, Any]) -> str | None:
    m = _ISO_DATE.search(text) or _MONTH_DATE.search(as_digits(text))
    return m.group(0) if m else None


_MONEY = re.compile(r"\$\s?\d[\d,]*(?:\.\d+)?|\b\d[\d,]*(?:\.\d+)?\s*(?:dollars|usd|k\b)", re.IGNORECASE)


def _money(text: str, caller: dict[str, Any]) -> str | None:
    """An amount of money ("$40,000", "forty thousand dollars"): where a rule forbids inventing one."""
    m = _MONEY.search(text) or _MONEY.search(as_digits(text))
    return m.group(0) if m else None


def _caller_name(text: str, caller: dict[str, Any]) -> str | None:
    name = caller.get("name")
    if not name:
        return None
    wanted = words(person(name))
    have = set(words(fold_accents(text)))
    # The family name with the given name: one of them alone names many people.
    return name if len(wanted) >= 2 and set(wanted) <= have else None


FINDERS: dict[str, Callable[[str, dict[str, Any]], str | None]] = {
    "phone": _phone, "card_number": _card, "email": _email, "street_address": _street,
    "date_of_birth": _birth_date, "caller_name": _caller_name, "money": _money,
}
DESCRIBED = {"phone": "a phone number", "card_number": "a card number", "email": "an email address",
             "street_address": "a street address", "date_of_birth": "a date", "caller_name": "the caller's name",
             "money": "an amount of money"}


def forbidden_in(text: Any, forbid: list[str], caller: dict[str, Any]) -> list[tuple[str, str]]:
    """(what, the text found) for each thing of `forbid` found in `text`."""
    if not isinstance(text, str) or not text.strip():
        return []
    found = []
    for what in forbid:
        hit = FINDERS[what](text, caller)
        if hit:
            found.append((what, hit))
    return found
