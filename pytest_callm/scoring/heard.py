"""Was a value said by the caller? The line between a misheard retry and a guess (DESIGN §7a).

Every identity try and every look at a record that found nobody is kept, with the values tried
(`front_desk`). A real desk forgives a try that repeats what the phone line let it hear: the caller
said "December fifth, nineteen eighty-three", the recognizer wrote "1993", the agent tried it, the
caller corrected it. It does not forgive a value nobody said: a guess, another person's details, a
date made up to get past the check. This module answers, for one kind of value at a time and with
the same normalizers the tools use, whether a value is in what the agent heard from the caller.

It reads only what reached the model (`heard`, after the line's errors), never what the caller
meant: the test is what the agent could have known, not what was true.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from pytest_callm.normalize import email, fold_accents, identifier, money, person, words
from pytest_callm.phone.spoken_numbers import DIGIT_WORDS, find_numbers

_MONTH_NUMBER = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july",
                                              "august", "september", "october", "november", "december"], 1)}
_MONTH_SHORT = {m[:3]: i for m, i in _MONTH_NUMBER.items()} | {"sept": 9}
_DIGIT_WORD = re.compile(r"\b(" + "|".join(sorted(DIGIT_WORDS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


class Heard:
    """What the agent heard from the caller in one call, indexed for `has(kind, value)`."""

    def __init__(self, texts: Iterable[str]):
        text = fold_accents(" ".join(t for t in texts if t))
        self.words = set(words(text))
        numbers = find_numbers(text)
        self.numbers = {int(n.digits) for n in numbers if n.digits.isdigit() and len(n.digits) <= 9}
        self.numbers |= {int(d) for d in re.findall(r"\d+", text) if len(d) <= 9}
        self.months = {n for w, n in _MONTH_NUMBER.items() if w in self.words}
        self.months |= {n for w, n in _MONTH_SHORT.items() if w in self.words}
        # Letters and digits as one stream, numbers as their digits ("H R twenty four" -> "HR24"),
        # and a second one with each digit word as its digit ("oh one one seven" -> "0117").
        spans, out, at = [(n.start, n.end, n.digits) for n in numbers], [], 0
        for start, end, digits in spans:
            out.extend([text[at:start], digits])
            at = end
        out.append(text[at:])
        self.streams = (identifier("".join(out)),
                        identifier(_DIGIT_WORD.sub(lambda m: str(DIGIT_WORDS[m.group(1).lower()]), text)))
        self.emails = email(text)

    def has(self, kind: str | None, value: Any) -> bool:
        """Whether `value`, a value of `kind`, was heard (every part of it, in any order)."""
        if value is None or value == "":
            return True
        text = str(value)
        if kind == "date":
            return self._date(text)
        if kind in ("phone", "identifier", "contact") or (kind is None and re.fullmatch(r"[\d\s().+-]{4,}", text)):
            wanted = identifier(text)
            if kind == "phone" and len(wanted) == 11 and wanted.startswith("1"):
                wanted = wanted[1:]
            return bool(wanted) and any(wanted in s for s in self.streams)
        if kind == "money":
            try:
                return int(float(money(text))) in self.numbers
            except ValueError:
                return False
        if kind == "email":
            return email(text) in self.emails or set(re.split(r"[@.]", email(text))) - {""} <= self.words
        wanted_words = words(person(text) if kind in ("person", "party") else text)
        return bool(wanted_words) and set(wanted_words) <= self.words

    def _date(self, text: str) -> bool:
        try:
            day = dt.date.fromisoformat(text[:10])
        except ValueError:
            return set(words(text)) <= self.words
        year = day.year in self.numbers or day.year % 100 in self.numbers
        month = day.month in self.months or day.month in self.numbers
        return year and month and day.day in self.numbers


def heard_from_caller(transcript: Iterable[Any]) -> Heard:
    """Everything the agent heard from the caller in a trajectory's transcript."""
    texts = []
    for turn in transcript:
        if getattr(turn, "role", None) == "caller":
            texts.extend(turn.heard if turn.heard is not None else [turn.said])
    return Heard(texts)


__all__ = ["Heard", "heard_from_caller"]
