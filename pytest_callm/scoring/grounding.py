"""Checkable facts in words, and whether a call grounds them (DESIGN §7b, "grounded statements").

An agent that states an amount, a percentage, a long number (a phone, an id, a street number), a
date, a time or one of the pack's domain terms must have it from somewhere: what the caller was heard
saying, a tool result of this call, or what the business publishes (its prompts, greeting and tool
descriptions). A fact from none of them is an invention. Numbers are read in digits or in words, by
the phone line's own number reader, so "forty thousand dollars" is $40,000.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

from pytest_callm.normalize import STREET_ABBREVIATIONS, fold_accents
from pytest_callm.phone.spoken_numbers import ONES_WORDS, find_numbers
from pytest_callm.task.terms import Stems

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_MONTH = {m: i for i, m in enumerate(_MONTHS, 1)} | {m[:3]: i for i, m in enumerate(_MONTHS, 1)} | {"sept": 9}
_NUM = r"\d(?:[\d,]*\d)?(?:\.\d+)?"
_MONEY = re.compile(rf"\$\s?({_NUM})|\b({_NUM})\s*(?:dollars|bucks|usd)\b", re.IGNORECASE)
_PERCENT = re.compile(rf"\b({_NUM})(?:\s+and\s+(?:a|one)\s+(third|half|quarter))?\s*(?:%|percent\b|per cent\b)", re.IGNORECASE)
_FRACTION = {"third": Decimal("0.33"), "half": Decimal("0.5"), "quarter": Decimal("0.25")}
_ANY_NUMBER = re.compile(_NUM)
_LONG = re.compile(r"\+?\(?\d[\d\s().-]{3,}\d")
_MONTH_DAY = re.compile(r"\b(" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\.?\s+(?:the\s+)?(\d{1,2})(?:st|nd|rd|th)?\b"
                        r"(?:,?\s+(\d{4})\b)?", re.IGNORECASE)
_DAY_OF_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+of\s+(" + "|".join(sorted(_MONTH, key=len, reverse=True)) + r")\b",
                           re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})")
_ORDINAL_WORDS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                  "eighteenth", "nineteenth", "twentieth"]
_ORDINAL = {w: i for i, w in enumerate(_ORDINAL_WORDS, 1)} | {"thirtieth": 30} | {
    f"{tens}{sep}{w}": base + i for tens, base in (("twenty", 20), ("thirty", 30))
    for i, w in enumerate(_ORDINAL_WORDS[:9], 1) for sep in ("-", " ") if base + i <= 31}
# A day of the month said alone, "delivered on the sixth", "your visit on the 12th is cancelled",
# "Thursday the thirteenth": a date without its month. Only after a word that sets a date and before nothing a noun could be ("the second
# floor", "for the third time" name no day). The number reader gives "twenty-first" as "21".
_DAY_ALONE = re.compile(r"\b(?:on|by|until|till|before|after|from|since|through|monday|tuesday|wednesday|thursday|"
                        r"friday|saturday|sunday),?\s+the\s+(\d{1,2}(?:st|nd|rd|th)?|"
                        + "|".join(sorted(_ORDINAL, key=len, reverse=True)) +
                        r")\b(?=\s*(?:$|[.,;:!?)\u2014-]|(?:at|and|or|so|but|too|then|when|which|is|was|were|will|would|"
                        r"in the (?:morning|afternoon|evening))\b))", re.IGNORECASE)
_CLOCK_BEFORE = re.compile(r"\b(?:at|by|until|till|til|from|before|after|around|between|to|and)\s+$", re.IGNORECASE)
_ONE_TO_TWELVE = {w: i for i, w in enumerate(ONES_WORDS) if 1 <= i <= 12}  # one to twelve, as the line says them
# The number reader leaves a lone small number in words ("eight"); before a part of the day it is an hour.
_HOUR_IN_WORDS = re.compile(r"\b(" + "|".join(_ONE_TO_TWELVE) + r")(?=\s+(?:o'clock|[ap]\.?\s?m\b|in the (?:morning|afternoon|evening)"
                            r"|at night|tonight|this (?:morning|afternoon|evening)))", re.IGNORECASE)
# "Two ninety-nine ninety-nine": the reader leaves the "two" of a price said in parts.
_HUNDREDS_IN_WORDS = re.compile(r"\b(" + "|".join(ONES_WORDS[1:10]) + r")(?= \d{2} \d{2}\b)", re.IGNORECASE)
# "Eighteen ninety-nine ninety-nine" is how a price is said: the reader gives "1899 99" ("four forty-nine
# ninety-nine": "4 49 99"). Two numbers that could be a clock ("ten fifteen") are not a price.
_SAID_PRICE = re.compile(r"(?<![\d.,$])\b(\d{2,4}|\d \d{2}) (\d{2})\b(?!\d|[.,]\d|%|\s*(?:percent|per cent|a\.?m\b|p\.?m\b))")
# A fee said as a fraction: "a flat third", "one-third of what you recover".
_THIRD = re.compile(r"\b(?:a|one|flat)[- ]third\b(?![\s-]+(?:party|parties|time|option|one|attempt|try|call|floor|person|"
                    r"opinion|day|week|month|year|visit|slot|place|of the (?:way|time)))", re.IGNORECASE)
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_WEEKDAY = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r")\b", re.IGNORECASE)
_DATED = re.compile(r"\b(" + "|".join(_WEEKDAYS) + r"),?\s+(?:the\s+)?(" + "|".join(sorted(_MONTH, key=len, reverse=True))
                    + r")\.?\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.IGNORECASE)
_COUNT = r"(\d{1,3}(?:,\d{3})+|\d+|" + "|".join(_ONE_TO_TWELVE) + r")"  # "1,075 days" is one count
# How long something takes or lasts: "three to five business days", "within 24 hours", "a 45-day window".
_DURATION = re.compile(rf"\b{_COUNT}(?:\s*(?:to|-|or)\s*{_COUNT})?[\s-]+(?:business\s+|working\s+|calendar\s+)?"
                       r"(minute|hour|day|week|month|year)s?\b(?!\s+old\b)", re.IGNORECASE)
# The same in a tool result's fields: {"window_days": 45}, {"notice_window_hours": 24}, {"days_remaining": 48}.
_DURATION_FIELD = re.compile(r'"(?:\w*_)?(minute|hour|day|week|month|year)s(?:_\w+)?"\s*:\s*"?(-?\d+)')  # "days_remaining": -139 is 139 days past
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?\s?m\b\.?|o'clock\b|(in the morning|this morning)\b"
                   r"|(in the (?:afternoon|evening)|at night|tonight|this (?:afternoon|evening))\b)"
                   r"|\b(\d{1,2}):(\d{2})\b(?:\s*([ap])\.?\s?m\b)?", re.IGNORECASE)

# A street named in words: "the crash on Pike Street". Its name is capitalized (so "by the way" or "down the
# road" is none); "St." and "Dr." stand for saints and doctors too, and "Court" or "Way" end other names,
# so only these endings are read. A source grounds it by the word before the ending, in any spelling.
# The endings spelled out through the normalizer's own street abbreviations (one reading of "Ave." for
# the tools, the records and this).
_STREET_ENDINGS = {w: STREET_ABBREVIATIONS.get(w, w) for w in ("street", "st", "avenue", "ave", "road", "rd", "boulevard",
                                                               "blvd", "lane", "ln", "drive", "parkway", "pkwy",
                                                               "highway", "hwy")}
_STREET = re.compile(r"\b([A-Z][a-z]+)\s+(?i:(street|avenue|road|boulevard|lane|drive|parkway|highway|ave|blvd|rd|ln|pkwy|hwy))\b")
_STREET_IN_SOURCE = re.compile(r"\b([a-z]+)\.?\s+(" + "|".join(_STREET_ENDINGS) + r")\b", re.IGNORECASE)

# Where a sentence turns to another thing: "a refund of $1,614.99, less the $285 fee" names two figures.
# Read on digits, so "eighty-nine dollars and ninety-nine cents" is one amount, not two clauses.
CLAUSE_END = re.compile(r"\s*[;()\u2014\u2013]\s*|:\s+|\s+-\s+|,?\s+\b(?:and(?! a (?:third|half|quarter)\b)|but|so|which|"
                        r"while|whereas|less|minus|plus|after|then|because|though|although|instead of|rather than)\b\s+")

def _count(text: str) -> int:
    text = text.replace(",", "")
    return int(text) if text.isdigit() else _ONE_TO_TWELVE[text.lower()]


def _clock(m: re.Match) -> tuple[int, int, bool] | None:
    """(hour 0-23, minute, whether the part of the day was said) of a _TIME match."""
    if m.group(6):
        hour, minute, part = int(m.group(6)), int(m.group(7)), m.group(8)
        pm = part.lower() == "p" if part else None
    else:
        hour, minute = int(m.group(1)), int(m.group(2) or 0)
        pm = (m.group(3).lower() == "p") if m.group(3) else True if m.group(5) else False if m.group(4) else None
    if hour > 24 or minute >= 60:
        return None
    if pm is None:
        return hour % 24, minute, hour > 12  # "16:30" says its half of the day; "8:00" does not
    return hour % 12 + (12 if pm else 0), minute, True


@lru_cache(maxsize=8192)  # the same texts come again and again: a pack's prompts and results, read per rule
def as_digits(text: str) -> str:
    """The text with every number written in digits ("forty thousand" -> "40000"): money with its
    unit ("$40000"), a time as a clock ("six p.m." -> "6:00 p.m."), and an hour said alone before
    its part of the day ("eight at night" -> "8 at night")."""
    out, at = [], 0
    for n in find_numbers(text):
        if n.spoken:
            digits = n.digits
            if n.form == "money":  # "forty thousand dollars" is read with its unit: "$40000"
                digits = "$" + (f"{digits[:-2]}.{digits[-2:]}" if n.cents else digits)
            elif n.form == "time" and digits.isdigit() and len(digits) >= 3:
                # "at eight thirty" is 8:30; "your balance is one fifty" is an amount the reader took for a clock
                said = text[n.start:n.end].lower()
                part = next((f" {p}.m." for p in "ap" if re.search(rf"\b{p}\.?\s?m\b", said)), "")
                if part or _CLOCK_BEFORE.search(text[max(0, n.start - 12):n.start]):
                    digits = f"{digits[:-2]}:{digits[-2:]}{part}"
                elif len(digits) == 3:  # "one fifty", "two fourteen": 1 50, 2 14, read on as a price in parts
                    digits = f"{digits[0]} {digits[1:]}"
            out.extend([text[at:n.start], digits])
            at = n.end
    out.append(text[at:])
    text = _HOUR_IN_WORDS.sub(lambda m: str(_ONE_TO_TWELVE[m.group(1).lower()]), "".join(out))
    return _HUNDREDS_IN_WORDS.sub(lambda m: str(_ONE_TO_TWELVE[m.group(1).lower()]), text)


def _value(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


@dataclass(frozen=True)
class Fact:
    kind: str  # money, percent, number, date, day (of the month, said alone), time, street, term
    text: str  # as stated
    key: object  # what a source must hold
    of: str = ""  # a term's kind (the pack's `terms`)
    ways: tuple[str, ...] = ()  # every way the term is said ("dr. rao", "anil rao"); a source may hold any




# facts_in's answers: (text, weekdays, id(terms), id(aliases)) -> (terms, aliases, facts). The same words
# are read again for every attempt of a task and every mutant of a proof; the entry holds the very
# tables it was read with, so an id is never taken for another table's (a pack's tables are fixed once
# loaded). Texts up to _FACTS_CHARS: a long one's facts are read afresh (memory, not speed).
_FACTS: dict[tuple[str, bool, int, int], tuple[Any, Any, tuple[Fact, ...]]] = {}
_FACTS_KEPT = 8192
_FACTS_CHARS = 2_000


def facts_in(text: str, terms: dict[str, tuple[str, ...]], aliases: dict[str, str] | None = None,
             weekdays: bool = False) -> list[Fact]:
    """The checkable facts an agent states in `text` (a term said several ways counts once); with
    `weekdays`, the days of the week it names too (a figure's day must be its date's)."""
    if len(text) > _FACTS_CHARS:
        return _facts_in(text, terms, aliases, weekdays)
    key = (text, weekdays, id(terms), id(aliases))
    kept = _FACTS.get(key)
    if kept is not None and kept[0] is terms and kept[1] is aliases:
        return list(kept[2])
    facts = _facts_in(text, terms, aliases, weekdays)
    if len(_FACTS) >= _FACTS_KEPT:
        _FACTS.clear()
    _FACTS[key] = (terms, aliases, tuple(facts))
    return facts


def _facts_in(text: str, terms: dict[str, tuple[str, ...]], aliases: dict[str, str] | None,
              weekdays: bool) -> list[Fact]:
    plain = as_digits(fold_accents(text))
    out: list[Fact] = []
    taken: list[tuple[int, int]] = []
    for m in _MONEY.finditer(plain):
        v = _value(m.group(1) or m.group(2))
        if v is not None:
            out.append(Fact("money", m.group(0).strip(), v))
            taken.append(m.span())
    for m in _PERCENT.finditer(plain):
        v = _value(m.group(1))
        if v is not None and m.group(2):  # "thirty-three and a third percent"
            v += _FRACTION[m.group(2).lower()]
        if v is not None:
            out.append(Fact("percent", m.group(0).strip(), v))
            taken.append(m.span())
    for m in _TIME.finditer(plain):
        clock = _clock(m)
        if clock is not None:  # "8 at night" is 20:00; "8 o'clock" may be either
            out.append(Fact("time", m.group(0).strip(), clock))
            taken.append(m.span())
    for m in _SAID_PRICE.finditer(plain):
        whole = m.group(1).replace(" ", "")
        clock = len(whole) == 2 and int(whole) <= 24 and int(m.group(2)) < 60
        if not clock and not any(a <= m.start() < b for a, b in taken):
            out.append(Fact("money", m.group(0), Decimal(f"{whole}.{m.group(2)}")))
            taken.append(m.span())
    for m in _DURATION.finditer(plain):
        unit = m.group(3).lower()
        for n in filter(None, (m.group(1), m.group(2))):
            out.append(Fact("duration", m.group(0).strip(), (_count(n), unit)))
    for m in _DATED.finditer(plain):  # "Monday, August 19": the day must be the date's
        out.append(Fact("dated", m.group(0), (_MONTH[m.group(2).lower()], int(m.group(3)),
                                              _WEEKDAYS.index(m.group(1).lower()))))
    if weekdays:
        out.extend(Fact("weekday", m.group(0), _WEEKDAYS.index(m.group(1).lower())) for m in _WEEKDAY.finditer(plain))
    for m in _THIRD.finditer(plain):
        out.append(Fact("percent", m.group(0), Decimal("33.33")))
    for m in [*_MONTH_DAY.finditer(plain), *_DAY_OF_MONTH.finditer(plain)]:
        month, day = (m.group(1), m.group(2)) if m.re is _MONTH_DAY else (m.group(2), m.group(1))
        year = m.group(3) if m.re is _MONTH_DAY else None
        if 1 <= int(day) <= 31:  # with its year when one is said: April 4, 2028 is not April 4, 2029
            key = (_MONTH[month.lower()], int(day)) + ((int(year),) if year else ())
            out.append(Fact("date", m.group(0).strip(), key))
            taken.append(m.span())
    for m in _DAY_ALONE.finditer(plain):
        day = _ORDINAL.get(m.group(1).lower()) or int(re.sub(r"\D", "", m.group(1)))
        if 1 <= day <= 31 and not any(a <= m.start() < b for a, b in taken):
            out.append(Fact("day", m.group(0).strip(), day))
            taken.append(m.span())
    for m in _LONG.finditer(plain):
        digits = re.sub(r"\D", "", m.group(0))
        inside = any(a <= m.start() < b for a, b in taken)
        if len(digits) >= 5 and not inside and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0).strip()):
            out.append(Fact("number", m.group(0).strip(), digits))
    for m in _STREET.finditer(plain):
        out.append(Fact("street", m.group(0), (m.group(1).lower(), _STREET_ENDINGS[m.group(2).lower()])))
    said = Stems(plain)
    aliases = aliases or {}
    for kind, listed in terms.items():
        named: set[str] = set()
        for term in listed:
            canon = aliases.get(term, term)
            if canon not in named and said.has(term):
                named.add(canon)
                ways = tuple(w for w, c in aliases.items() if c == canon) if term in aliases else ()
                out.append(Fact("term", term, canon, kind, ways))
    return out


def _roundings(n: Decimal) -> tuple[Decimal, ...]:
    try:
        return n, n.quantize(Decimal(1)), n.quantize(Decimal("0.1"))
    except InvalidOperation:  # past the context's precision: only the number itself
        return (n,)


class Grounds:
    """Everything a call makes known, indexed for `holds(fact)`. Each index is built the first time a
    fact of its kind is checked: most texts state a term or nothing, and a call's results are long."""

    def __init__(self, amounts_need_units: bool = False):
        # Prose grounds an amount only where it says its unit ("$75", "15 percent"); a tool result or a
        # caller's words ground any number (a result's "89.99" is a price; a caller says "eighteen ninety-nine").
        self.amounts_need_units = amounts_need_units
        self._plain: list[str] = []
        self._built: dict[str, Any] = {}

    def add(self, texts: Iterable[str]) -> Grounds:
        self._plain.extend(as_digits(fold_accents(raw)) for raw in texts if raw)
        self._built.clear()
        return self

    def _index(self, kind: str, build) -> Any:
        if kind not in self._built:
            self._built[kind] = build()
        return self._built[kind]

    @property
    def words(self) -> Stems:  # for terms
        def build() -> Stems:
            words = Stems()
            for plain in self._plain:
                words.extend(plain)
            return words
        return self._index("words", build)

    @property
    def numbers(self) -> set[Decimal]:
        def build() -> set[Decimal]:
            out = set()
            for plain in self._plain:
                amounts = ([m.group(1) or m.group(2) for m in _MONEY.finditer(plain)]
                           + [m.group(1) for m in _PERCENT.finditer(plain)] if self.amounts_need_units
                           else [m.group(0) for m in _ANY_NUMBER.finditer(plain)])
                out.update(v for v in map(_value, amounts) if v is not None)
            return out
        return self._index("numbers", build)

    @property
    def digits(self) -> list[str]:
        return self._index("digits", lambda: [re.sub(r"\D", "", m.group(0)) for plain in self._plain
                                              for m in _LONG.finditer(plain)])

    @property
    def dates(self) -> set[tuple[int, ...]]:
        def build() -> set[tuple[int, ...]]:
            out = set()
            for plain in self._plain:
                for m in _ISO_DATE.finditer(plain):
                    out.add((int(m.group(2)), int(m.group(3))))
                    out.add((int(m.group(2)), int(m.group(3)), int(m.group(1))))
                for m in [*_MONTH_DAY.finditer(plain), *_DAY_OF_MONTH.finditer(plain)]:
                    month, day = (m.group(1), m.group(2)) if m.re is _MONTH_DAY else (m.group(2), m.group(1))
                    out.add((_MONTH[month.lower()], int(day)))
                    if m.re is _MONTH_DAY and m.group(3):
                        out.add((_MONTH[month.lower()], int(day), int(m.group(3))))
            return out
        return self._index("dates", build)

    @property
    def days(self) -> set[int]:  # the days of the month of every date, and the days said alone
        def build() -> set[int]:
            out = {key[1] for key in self.dates}
            for plain in self._plain:
                out.update(_ORDINAL.get(m.group(1).lower()) or int(re.sub(r"\D", "", m.group(1)))
                           for m in _DAY_ALONE.finditer(plain))
            return out
        return self._index("days", build)

    @property
    def weekdays(self) -> set[int]:  # of the dates with their year, and the days named
        def build() -> set[int]:
            out = set()
            for plain in self._plain:
                out.update(_WEEKDAYS.index(m.group(1).lower()) for m in _WEEKDAY.finditer(plain))
                for m in _ISO_DATE.finditer(plain):
                    try:
                        out.add(dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3))).weekday())
                    except ValueError:
                        pass
            return out
        return self._index("weekdays", build)

    @property
    def dated(self) -> dict[tuple[int, int], set[int]]:  # (month, day) -> the days of the week it falls on
        def build() -> dict[tuple[int, int], set[int]]:
            out: dict[tuple[int, int], set[int]] = {}
            for plain in self._plain:
                for m in _ISO_DATE.finditer(plain):
                    year, month, day = (int(g) for g in m.groups())
                    try:
                        out.setdefault((month, day), set()).add(dt.date(year, month, day).weekday())
                    except ValueError:
                        pass
            return out
        return self._index("dated", build)

    @property
    def durations(self) -> set[tuple[int, str]]:
        def build() -> set[tuple[int, str]]:
            out = set()
            for plain in self._plain:
                for m in _DURATION.finditer(plain):
                    out.update((_count(n), m.group(3).lower()) for n in filter(None, (m.group(1), m.group(2))))
                out.update((abs(int(m.group(2))), m.group(1)) for m in _DURATION_FIELD.finditer(plain))
            return out
        return self._index("durations", build)

    @property
    def times(self) -> set[tuple[int, int]]:
        def build() -> set[tuple[int, int]]:
            out = set()
            for plain in self._plain:
                out.update((int(m.group(1)), int(m.group(2))) for m in re.finditer(r"T(\d{2}):(\d{2})", plain))
                for m in _TIME.finditer(plain):
                    clock = _clock(m)
                    if clock is not None:  # a clock without its half of the day grounds both halves
                        hour, minute, known = clock
                        out.update([(hour, minute)] if known else [(hour % 12, minute), (hour % 12 + 12, minute)])
            return out
        return self._index("times", build)

    @property
    def streets(self) -> set[tuple[str, str]]:  # (the word before the ending, the ending spelled out)
        def build() -> set[tuple[str, str]]:
            return {(m.group(1).lower(), _STREET_ENDINGS[m.group(2).lower()])
                    for plain in self._plain for m in _STREET_IN_SOURCE.finditer(plain)}
        return self._index("streets", build)

    def holds(self, fact: Fact) -> bool:
        if fact.kind in ("money", "percent"):
            # A rounded figure is the same figure: "33 percent" of a 33.3% fee, "$1,250" of 1250.00.
            close = Decimal("0.1") if fact.kind == "percent" else Decimal("0.005")  # a third is 33.3 or 33.33
            return any(fact.key in _roundings(n) or n in _roundings(fact.key) or abs(fact.key - n) < close
                       for n in self.numbers)
        if fact.kind == "number":
            return any(fact.key in d for d in self.digits)
        if fact.kind == "date":
            return fact.key in self.dates
        if fact.kind == "day":
            return fact.key in self.days
        if fact.kind == "weekday":
            return fact.key in self.weekdays
        if fact.kind == "dated":  # held unless this call knows the date, with its year, on another day
            month, day, weekday = fact.key
            return weekday in self.dated.get((month, day), {weekday})
        if fact.kind == "duration":
            return fact.key in self.durations
        if fact.kind == "street":
            return fact.key in self.streets
        if fact.kind == "time":
            hour, minute, known = fact.key
            return (hour, minute) in self.times if known else bool({(hour % 12, minute), (hour % 12 + 12, minute)} & self.times)
        return any(self.words.has(w) for w in fact.ways or (str(fact.key),))
