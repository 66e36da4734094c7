"""Was a value said by the caller? The line between a misheard retry and a guess (DESIGN §7a).

Every identity try and every look at a record that found nobody is kept, with the values tried
(`front_desk`). A real desk forgives a try that repeats what the phone line let it hear: the caller
said "December fifth, nineteen eighty-three", the recognizer wrote "1993", the agent tried it, the
caller corrected it. It does not forgive a value nobody said: a guess, another person's details, a
date made up to get past the check. This module answers, for one kind of value at a time and with
the same normalizers the tools use, whether a value is in what the agent heard from the caller.

It reads only what reached the model (`heard`, after the line's errors), never what the caller
meant: the test is what the agent could have known, not what was true. `CallerWords` adds what the
caller said before the line, and when: a value heard but never said is one the line made, and a value
the caller gave only after a try is a correction of it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from typing import Any

from pytest_callm.call.oracle import ORACLE_CALLER_LINE
from pytest_callm.normalize import email, fold_accents, identifier, money, person, words
from pytest_callm.phone.spoken_numbers import DIGIT_WORDS, find_numbers

_MONTH_NUMBER = {m: i for i, m in enumerate(["january", "february", "march", "april", "may", "june", "july",
                                              "august", "september", "october", "november", "december"], 1)}
_MONTH_SHORT = {m[:3]: i for m, i in _MONTH_NUMBER.items()} | {"sept": 9}
_SEPARATOR = re.compile(r"\b(?:dash|hyphen)\b", re.IGNORECASE)
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
        # A spoken separator is no part of the code: "K E dash 1 0 8 3 1 3" is KE-108313.
        self.streams = (identifier(_SEPARATOR.sub("", "".join(out))),
                        identifier(_SEPARATOR.sub("", _DIGIT_WORD.sub(lambda m: str(DIGIT_WORDS[m.group(1).lower()]), text))))
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

    def near(self, kind: str | None, value: Any) -> bool:
        """Whether a number or code one edit from `value` was heard (a digit or letter changed, dropped,
        added, or two neighbours swapped), where `value` itself was not: what the agent changed itself."""
        if kind not in ("identifier", "phone") or self.has(kind, value):
            return False
        wanted = identifier(str(value))
        if kind == "phone" and len(wanted) == 11 and wanted.startswith("1"):
            wanted = wanted[1:]
        if len(wanted) < 4:
            return False
        # Each spelling one edit from `wanted` looked for in the stream (a substring search in C), not
        # each window of the stream compared with it (a Python loop per character heard: the verifier's
        # costliest step on a long call). A changed or added character is one the stream holds.
        return any(variant in stream for stream in self.streams for variant in _one_edit_away(wanted, set(stream)))

    def _date(self, text: str) -> bool:
        try:
            day = dt.date.fromisoformat(text[:10])
        except ValueError:
            return set(words(text)) <= self.words
        year = day.year in self.numbers or day.year % 100 in self.numbers
        month = day.month in self.months or day.month in self.numbers
        return year and month and day.day in self.numbers


def _one_edit_away(text: str, alphabet: set[str]) -> Iterable[str]:
    """Every text one edit from `text` (a character of `alphabet` for one of it or added, one dropped,
    two different neighbours swapped), never `text` itself."""
    for i, char in enumerate(text):
        yield text[:i] + text[i + 1:]
        for other in alphabet:
            if other != char:
                yield text[:i] + other + text[i + 1:]
        if i + 1 < len(text) and text[i + 1] != char:
            yield text[:i] + text[i + 1] + char + text[i + 2:]
    for i in range(len(text) + 1):
        for other in alphabet:
            yield text[:i] + other + text[i:]


class CallerWords:
    """One call's caller turns: what was said, what was heard, and when (ms from the call's start)."""

    def __init__(self, transcript: Iterable[Any]):
        self.turns = [(turn.at_ms, turn.said or "", turn.heard if turn.heard is not None else [turn.said])
                      for turn in transcript if getattr(turn, "role", None) == "caller"]
        # A replay with no caller (the oracle's) gives no words to hold a try to.
        self.spoke = any(said.strip() and said != ORACLE_CALLER_LINE for _, said, _ in self.turns)
        self.heard = Heard(t for _, _, pieces in self.turns for t in pieces)
        self.said = Heard(said for _, said, _ in self.turns)
        self._spans: dict[tuple[float, float], Heard] = {}

    def line_made(self, kind: str | None, value: Any) -> bool:
        """Heard, never said: the phone line's making of what the caller said."""
        return self.heard.has(kind, value) and not self.said.has(kind, value)

    def heard_between(self, start: float, end: float) -> Heard:
        """What the agent heard in caller turns from `start` to `end` ms."""
        key = (start, end)
        if key not in self._spans:
            self._spans[key] = Heard(t for at, _, pieces in self.turns if start <= at <= end for t in pieces)
        return self._spans[key]


def heard_from_caller(transcript: Iterable[Any]) -> Heard:
    """Everything the agent heard from the caller in a trajectory's transcript."""
    texts = []
    for turn in transcript:
        if getattr(turn, "role", None) == "caller":
            texts.extend(turn.heard if turn.heard is not None else [turn.said])
    return Heard(texts)


__all__ = ["CallerWords", "Heard", "heard_from_caller"]
