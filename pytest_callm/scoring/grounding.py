"""Checkable facts in words, and whether a call grounds them (DESIGN §7b, "grounded statements").

An agent that states an amount, a percentage, a long number (a phone, an id, a street number), a
date, a time or one of the pack's domain terms must have it from somewhere: what the caller was heard
saying, a tool result of this call, or what the business publishes (its prompts, greeting and tool
descriptions). A fact from none of them is an invention. Numbers are read in digits or in words, by
the phone line's own number reader, so "forty thousand dollars" is $40,000.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from pytest_callm.normalize import fold_accents
from pytest_callm.phone.spoken_numbers import find_numbers
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
_TIME = re.compile(r"\b(\d{1,2})(?::(\d{2}))?\s*(?:([ap])\.?\s?m\b\.?|o'clock\b|in the (?:morning|afternoon|evening)\b|at night\b)"
                   r"|\b(\d{1,2}):(\d{2})\b", re.IGNORECASE)


def as_digits(text: str) -> str:
    """The text with every number written in digits ("forty thousand" -> "40000")."""
    out, at = [], 0
    for n in find_numbers(text):
        if n.spoken:
            digits = n.digits
            if n.form == "money":  # "forty thousand dollars" is read with its unit: "$40000"
                digits = "$" + (f"{digits[:-2]}.{digits[-2:]}" if n.cents else digits)
            out.extend([text[at:n.start], digits])
            at = n.end
    out.append(text[at:])
    return "".join(out)


def _value(text: str) -> Decimal | None:
    try:
        return Decimal(text.replace(",", ""))
    except InvalidOperation:
        return None


@dataclass(frozen=True)
class Fact:
    kind: str  # money, percent, number, date, time, term
    text: str  # as stated
    key: object  # what a source must hold
    of: str = ""  # a term's kind (the pack's `terms`)


def facts_in(text: str, terms: dict[str, tuple[str, ...]]) -> list[Fact]:
    """The checkable facts an agent states in `text`."""
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
        if m.group(4):
            hour, minute = int(m.group(4)), int(m.group(5))
        else:
            hour, minute = int(m.group(1)), int(m.group(2) or 0)
        if hour <= 24 and minute < 60:
            out.append(Fact("time", m.group(0).strip(), (hour % 12, minute)))
            taken.append(m.span())
    for m in [*_MONTH_DAY.finditer(plain), *_DAY_OF_MONTH.finditer(plain)]:
        month, day = (m.group(1), m.group(2)) if m.re is _MONTH_DAY else (m.group(2), m.group(1))
        year = m.group(3) if m.re is _MONTH_DAY else None
        if 1 <= int(day) <= 31:  # with its year when one is said: April 4, 2028 is not April 4, 2029
            key = (_MONTH[month.lower()], int(day)) + ((int(year),) if year else ())
            out.append(Fact("date", m.group(0).strip(), key))
            taken.append(m.span())
    for m in _LONG.finditer(plain):
        digits = re.sub(r"\D", "", m.group(0))
        inside = any(a <= m.start() < b for a, b in taken)
        if len(digits) >= 5 and not inside and not re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0).strip()):
            out.append(Fact("number", m.group(0).strip(), digits))
    said = Stems(plain)
    for kind, listed in terms.items():
        for term in listed:
            if said.has(term):
                out.append(Fact("term", term, term, kind))
    return out


def _roundings(n: Decimal) -> tuple[Decimal, ...]:
    try:
        return n, n.quantize(Decimal(1)), n.quantize(Decimal("0.1"))
    except InvalidOperation:  # past the context's precision: only the number itself
        return (n,)


@dataclass
class Grounds:
    """Everything a call makes known, indexed for `holds(fact)`."""

    numbers: set[Decimal] = field(default_factory=set)
    digits: list[str] = field(default_factory=list)
    dates: set[tuple[int, int]] = field(default_factory=set)
    times: set[tuple[int, int]] = field(default_factory=set)
    words: Stems = field(default_factory=Stems)  # for terms

    def add(self, texts: Iterable[str]) -> Grounds:
        for raw in texts:
            if not raw:
                continue
            plain = as_digits(fold_accents(raw))
            self.words.extend(plain)
            for m in _ANY_NUMBER.finditer(plain):
                v = _value(m.group(0))
                if v is not None:
                    self.numbers.add(v)
            self.digits.extend(re.sub(r"\D", "", m.group(0)) for m in _LONG.finditer(plain))
            for m in _ISO_DATE.finditer(plain):
                self.dates.add((int(m.group(2)), int(m.group(3))))
                self.dates.add((int(m.group(2)), int(m.group(3)), int(m.group(1))))
            for m in [*_MONTH_DAY.finditer(plain), *_DAY_OF_MONTH.finditer(plain)]:
                month, day = (m.group(1), m.group(2)) if m.re is _MONTH_DAY else (m.group(2), m.group(1))
                self.dates.add((_MONTH[month.lower()], int(day)))
                if m.re is _MONTH_DAY and m.group(3):
                    self.dates.add((_MONTH[month.lower()], int(day), int(m.group(3))))
            for m in re.finditer(r"T(\d{2}):(\d{2})", plain):
                self.times.add((int(m.group(1)) % 12, int(m.group(2))))
            for m in _TIME.finditer(plain):
                hour, minute = (int(m.group(4)), int(m.group(5))) if m.group(4) else (int(m.group(1)), int(m.group(2) or 0))
                self.times.add((hour % 12, minute))
        return self

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
        if fact.kind == "time":
            return fact.key in self.times
        return self.words.has(str(fact.key))
