"""The recognizer errors of the simulated phone line, each applied to one span of a caller turn.

A turn is held as tokens (words, numbers, separators). `Turn.from_said` first writes the numbers the
way the recognizer writes them (a style, not an error: "two oh six, five five five, oh one four two"
becomes "206-555-0142"); each error then changes one span of that clean transcript and records the
span before and after. Error types (the vocabulary of error profiles):

| type              | what changes                                                                |
|-------------------|-----------------------------------------------------------------------------|
| digits_dropped    | one digit (or two) lost inside one number: 206-555-0142 -> 206-55-0142        |
| digits_added      | one digit added inside one number (a repeat or a stray): $45 -> $445          |
| number_as_words   | one number written in words: 206-555-0142 -> two oh six, five five five, ... |
| misheard_name     | one word of the caller's name -> a sound-alike: Dana -> Dina                 |
| misheard_word     | one word -> a sound-alike: book -> took                                      |
| misheard_phrase   | two or three words -> a sound-alike re-cut: next week -> nex tweak            |
| clipped_start     | the first word or two lost                                                  |
| clipped_end       | the last word or two lost (the final punctuation stays)                     |
| split             | the turn reaches the agent as two messages                                  |
| no_final_period   | the final period (or ? or !) dropped                                        |
| lowercase         | the whole turn in lower case (only the case changes)                        |

Each applied error is recorded as `{"type", "before", "after", "at"}`: `before` is the exact text at
offset `at` of the transcript as it stood when the error was applied, and putting `after` in its
place gives the transcript after it (for `split`, `before` is the pause, the whitespace where the turn
is cut, and `after` is "\n"). Number errors add the digit strings; misheard spans add `source`.

Digit errors never make a clean one-for-one swap: the digit string of every number the line changes,
before and after, is never of equal length differing in exactly one position (`is_clean_swap`), also
when a number takes two digit errors. Span errors keep a word of untouched text between them, so two
errors never merge into one and the profile fitter can count them apart.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_callm.phone.spoken_numbers import Num, find_numbers, phone_groups, render_digits, render_words
from pytest_callm.phone.sounds import sounds

ERROR_TYPES = ("digits_dropped", "digits_added", "number_as_words", "misheard_name", "misheard_word",
               "misheard_phrase", "clipped_start", "clipped_end", "split", "no_final_period", "lowercase")
STYLE_TYPE = "number_format"
MISHEARD = ("misheard_name", "misheard_word", "misheard_phrase")
# the order errors are applied in; an error that cannot apply to a turn is replaced by the first of
# its fallbacks that can, so that the number of errors in a turn is the number drawn
PHASE = {"clipped_start": 0, "clipped_end": 0, "digits_dropped": 1, "digits_added": 1, "number_as_words": 2,
         "misheard_name": 3, "misheard_phrase": 3, "misheard_word": 3, "lowercase": 4, "no_final_period": 5,
         "split": 6}
FALLBACK = {
    "digits_dropped": ("digits_added", "number_as_words"),
    "digits_added": ("digits_dropped", "number_as_words"),
    "number_as_words": ("digits_dropped", "digits_added"),
    "misheard_name": ("misheard_word",),
    "misheard_phrase": ("misheard_word",),
    "misheard_word": ("misheard_phrase",),
    "clipped_start": ("clipped_end",),
    "clipped_end": ("clipped_start",),
    "split": (),
    "no_final_period": ("lowercase",),
    "lowercase": ("no_final_period",),
}
LAST_RESORT = ("misheard_word", "no_final_period", "lowercase", "misheard_phrase", "clipped_start",
               "clipped_end", "split", "number_as_words", "digits_dropped", "digits_added")
DIGIT_FORMS = ("sequence", "cardinal", "money", "year")
# Each try of a number error re-reads the whole turn (`_reparses`): the tries are bounded so that a turn
# of 30,000 numbers, or one number of 60,000 digits, costs a few reads, not one per number or digit.
# Far above any turn a caller says, so the draws of every real turn are as they were.
MAX_NUMBERS_TRIED = 16
MAX_DIGITS_TRIED = 64

_PLAIN = re.compile(r"(?P<word>[A-Za-z]+(?:['\u2019][A-Za-z]+)*)|(?P<sep>[^A-Za-z]+)")
_WORDLIKE = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*")


def is_clean_swap(before: str, after: str) -> bool:
    """Equal length and different in exactly one position: the swap the line must never make."""
    return len(before) == len(after) and sum(a != b for a, b in zip(before, after)) == 1


# ----------------------------------------------------------------------------------------------
# seeded draws, the same in every process and on every machine

class Stream:
    """Uniform draws from SHA-256 of a key and a counter (never Python's salted `hash()`)."""

    def __init__(self, *parts: Any):
        self.key = "\x1f".join(str(p) for p in parts)
        self.n = 0

    def random(self) -> float:
        self.n += 1
        digest = hashlib.sha256(f"{self.key}\x1f{self.n}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0 ** 64

    def below(self, n: int) -> int:
        return min(int(self.random() * n), n - 1)

    def choice(self, seq):
        return seq[self.below(len(seq))]

    def shuffled(self, seq) -> list:
        out = list(seq)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def weighted(self, options: dict[str, float]) -> str:
        total = sum(options.values())
        u = self.random() * total
        for key, weight in options.items():
            u -= weight
            if u < 0:
                return key
        return next(reversed(options))


_GOLDEN_STEP = 0x9E3779B97F4A7C15  # 2**64 times the golden ratio's fractional part, rounded


def set_draw(*key: Any, turn: int) -> float:
    """The uniform that picks turn `turn`'s error set: a start hashed from `key` (tag, task, attempt)
    plus `turn` golden-ratio steps, modulo 1, in exact integer arithmetic.

    Each turn's draw is uniform and fixed by task, attempt and turn alone, and starts of different
    attempts are independent; within one call the draws are spread evenly over [0, 1) rather than
    independent, so how many of a call's turns carry errors depends less on luck. Realized rates
    then sit closer to the profile's (the standard error over 20,000 turns is about half that of
    independent draws)."""
    start = int.from_bytes(hashlib.sha256("\x1f".join(str(p) for p in key).encode()).digest()[:8], "big")
    return ((start + int(turn) * _GOLDEN_STEP) % 2 ** 64) / 2.0 ** 64


# ----------------------------------------------------------------------------------------------
# the turn

@dataclass
class Tok:
    text: str
    cat: str  # word | num | sep
    num: Num | None = None
    digits: str = ""  # numbers: the digits as now written
    as_words: bool = False
    groups: list[int] | None = None  # numbers written in groups (a phone number): the group sizes
    name: bool = False
    reserved: bool = False  # inside or next to a span an error changed


Rewriter = Callable[[str, dict[str, Any]], Any]


@dataclass
class Turn:
    toks: list[Tok]
    habits: dict[str, str]
    rng: Stream
    errors: list[dict[str, Any]] = field(default_factory=list)
    split_at: int | None = None  # token index where the second piece starts
    rewriter: Rewriter | None = None
    rewrites: list[tuple[int, Tok]] = field(default_factory=list)  # (error index, token) of misheard spans

    # -- building -------------------------------------------------------------------------------

    @classmethod
    def from_said(cls, said: str, name_parts: set[str], habits: dict[str, str], rng: Stream,
                  words: bool = True) -> Turn:
        """The clean transcript of `said`. With `words=False` the text between numbers is not cut
        into words (enough when no error will be applied)."""
        cut = _plain_words if words else _plain_block  # no words needed when no error will apply
        toks: list[Tok] = []
        styles: list[dict[str, Any]] = []
        pos = 0
        for num in find_numbers(said):
            cut(said[pos:num.start], name_parts, toks)
            groups = phone_groups(num.digits) if num.form == "sequence" else None
            if groups is None and num.form == "sequence" and len(num.groups) > 1 and not num.spoken:
                groups = list(num.groups)
            written = render_digits(num, num.digits, habits, groups)
            if written != num.text:
                styles.append({"type": STYLE_TYPE, "style": True, "before": num.text, "after": written})
            toks.append(Tok(written, "num", num=num, digits=num.digits, groups=groups))
            pos = num.end
        cut(said[pos:], name_parts, toks)
        return cls(toks, habits, rng, errors=styles)

    @property
    def text(self) -> str:
        return "".join(t.text for t in self.toks)

    def pieces(self) -> list[str]:
        if self.split_at is None:
            return [self.text]
        first = "".join(t.text for t in self.toks[:self.split_at]).rstrip()
        second = "".join(t.text for t in self.toks[self.split_at:]).lstrip()
        return [first, second]

    def _offset(self, index: int) -> int:
        return sum(len(t.text) for t in self.toks[:index])

    def words(self) -> list[int]:
        """Indices of word and number tokens."""
        return [i for i, t in enumerate(self.toks) if t.cat != "sep"]

    def _reserve(self, first: int, last: int) -> None:
        """Mark tokens first..last and the word or number on each side as changed."""
        ws = self.words()
        for k, i in enumerate(ws):
            if first <= i <= last:
                self.toks[i].reserved = True
                if k > 0:
                    self.toks[ws[k - 1]].reserved = True
                if k + 1 < len(ws):
                    self.toks[ws[k + 1]].reserved = True

    def _record(self, kind: str, before: str, after: str, index: int, **extra: Any) -> dict[str, Any]:
        entry = {"type": kind, "before": before, "after": after, "at": self._offset(index), **extra}
        self.errors.append(entry)
        return entry

    # -- applying a drawn set -------------------------------------------------------------------

    def apply(self, drawn: list[str], phases: range = range(7)) -> None:
        """Apply the drawn errors whose phase is in `phases` (the line applies phases 0-3, lets an
        optional rewrite model reword the misheard spans, then applies 4-6)."""
        used = [e["type"] for e in self.errors]
        for kind in sorted(drawn, key=lambda k: (PHASE[k], ERROR_TYPES.index(k))):
            if PHASE[kind] not in phases:
                continue
            for candidate in (kind, *FALLBACK[kind], *LAST_RESORT):
                if candidate in ("split", "lowercase", "no_final_period", "clipped_start", "clipped_end") \
                        and candidate in used:
                    continue  # these happen once a turn
                entry = self.apply_one(candidate)
                if entry is not None:
                    if candidate != kind:
                        entry["drawn"] = kind
                    used.append(candidate)
                    break

    def apply_one(self, kind: str) -> dict[str, Any] | None:
        return getattr(self, "_" + kind)()

    def can_apply(self, kind: str) -> bool:
        """Could `kind` apply to this untouched turn? (A quick test of the same conditions the error
        checks; whether a word has a sound-alike in the dictionary is not looked up.)"""
        ws = self.words()
        nums = [self.toks[i] for i in ws if self.toks[i].cat == "num"]
        plain = lambda i: self.toks[i].cat == "word" and not self.toks[i].name  # noqa: E731
        if kind == "digits_dropped":
            return any(t.num.form in DIGIT_FORMS and len(self._editable(t)) >= 2 for t in nums)
        if kind == "digits_added":
            return any(t.num.form in DIGIT_FORMS for t in nums)
        if kind == "number_as_words":
            return bool(nums)
        if kind == "misheard_name":
            return any(self.toks[i].name for i in ws)
        if kind == "misheard_word":
            return any(plain(i) for i in ws)
        if kind == "misheard_phrase":
            return any(plain(a) and plain(b) and self.toks[a + 1].text == " " and b == a + 2
                       for a, b in zip(ws, ws[1:]))
        if kind == "clipped_start":
            return len(ws) >= 3 and plain(ws[0])
        if kind == "clipped_end":
            return len(ws) >= 3 and plain(ws[-1])
        if kind == "split":
            return len(ws) >= 4
        if kind == "no_final_period":
            last = self.toks[-1] if self.toks else None
            return bool(last) and last.cat == "sep" and last.text.rstrip()[-1:] in (".", "?", "!")
        if kind == "lowercase":
            return self.text != self.text.lower()
        raise ValueError(kind)

    # -- clipped turns --------------------------------------------------------------------------

    def _clip_count(self) -> int:
        ws = self.words()
        if len(ws) < 3:
            return 0
        return 2 if len(ws) >= 8 and self.rng.random() < 0.3 else 1

    def _clipped_start(self) -> dict[str, Any] | None:
        k = self._clip_count()
        ws = self.words()
        while k and any(self.toks[i].cat == "num" or self.toks[i].name or self.toks[i].reserved for i in ws[:k]):
            k -= 1
        if not k:
            return None
        stop = ws[k]  # the first kept word
        lead = 0
        while lead < stop and self.toks[lead].cat == "sep" and not self.toks[lead].text.strip():
            lead += 1
        before = "".join(t.text for t in self.toks[lead:stop])
        entry = self._record("clipped_start", before, "", lead)
        del self.toks[lead:stop]
        self.toks[lead].reserved = True
        return entry

    def _clipped_end(self) -> dict[str, Any] | None:
        k = self._clip_count()
        ws = self.words()
        while k and any(self.toks[i].cat == "num" or self.toks[i].name or self.toks[i].reserved for i in ws[-k:]):
            k -= 1
        if not k:
            return None
        keep_last = ws[-k - 1]  # the last kept word
        if self.toks[keep_last].text.endswith("."):
            return None  # "at 2:30 p.m." would end in two periods
        cut_from, cut_to = keep_last + 1, ws[-1] + 1
        # what separated the kept word from the cut ones goes with them; the final mark stays
        before = "".join(t.text for t in self.toks[cut_from:cut_to])
        entry = self._record("clipped_end", before, "", cut_from)
        del self.toks[cut_from:cut_to]
        self.toks[keep_last].reserved = True
        return entry

    # -- numbers --------------------------------------------------------------------------------

    def _number_targets(self, min_digits: int) -> list[int]:
        """Numbers a digit error may change: written in digits and not changed yet (a second
        digit error on one number could not be told from one, and could add up to a swap)."""
        return [i for i, t in enumerate(self.toks)
                if t.cat == "num" and not t.as_words and t.num.form in DIGIT_FORMS and not t.reserved
                and t.digits == t.num.digits and len(self._editable(t)) >= min_digits]

    @staticmethod
    def _editable(t: Tok) -> str:
        """The digits an error may touch: for money with cents, the dollars only."""
        return t.digits[:-2] if t.num.form == "money" and t.num.cents else t.digits

    def _pick_number(self, targets: list[int]) -> int:
        longest = max(len(self.toks[i].digits) for i in targets)
        top = [i for i in targets if len(self.toks[i].digits) == longest]
        return self.rng.choice(top) if self.rng.random() < 0.7 else self.rng.choice(targets)

    def _number_edit(self, kind: str, index: int, digits: str, pos: int, delta: int) -> dict[str, Any] | None:
        """Write `digits` into number token `index` (changed by `delta` digits at `pos`) if it stays
        one number with those digits and is no clean swap of what was said."""
        tok = self.toks[index]
        if is_clean_swap(tok.num.digits, digits) or digits == tok.num.digits or digits == tok.digits:
            return None
        groups = _regroup(tok.groups, pos, delta)
        written = render_digits(tok.num, digits, self.habits, groups)
        if not self._reparses(index, written, digits):
            return None
        before, before_digits = tok.text, tok.digits
        tok.text, tok.digits, tok.groups = written, digits, groups
        self._reserve(index, index)
        return self._record(kind, before, written, index, number=tok.num.start,
                            digits_before=before_digits, digits_after=digits, said_digits=tok.num.digits)

    def _reparses(self, index: int, written: str, digits: str) -> bool:
        start = self._offset(index)
        text = self.text
        new = text[:start] + written + text[start + len(self.toks[index].text):]
        nums = find_numbers(new)
        count = sum(1 for t in self.toks if t.cat == "num")
        return len(nums) == count and any(n.start == start and n.end == start + len(written)
                                          and n.digits == digits for n in nums)

    def _digits_dropped(self) -> dict[str, Any] | None:
        targets = self._number_targets(2)
        for _ in range(MAX_NUMBERS_TRIED):
            if not targets:
                break
            index = self._pick_number(targets)
            targets.remove(index)
            tok = self.toks[index]
            editable, tail = self._editable(tok), tok.digits[len(self._editable(tok)):]
            for pos in self._drop_positions(editable):
                lose = 2 if len(editable) >= 7 and self.rng.random() < 0.15 else 1
                new = editable[:pos] + editable[pos + lose:]
                if tok.num.form != "sequence" and (not new or new[0] == "0"):
                    continue
                entry = self._number_edit("digits_dropped", index, new + tail, pos, -lose)
                if entry:
                    return entry
        return None

    def _drop_positions(self, digits: str) -> list[int]:
        runs = [i for i in range(1, len(digits)) if digits[i] == digits[i - 1]]
        order = self.rng.shuffled(range(min(len(digits), MAX_DIGITS_TRIED)))
        if runs and self.rng.random() < 0.6:
            first = self.rng.choice(runs)
            order.remove(first)
            order.insert(0, first)
        return order

    def _digits_added(self) -> dict[str, Any] | None:
        targets = self._number_targets(1)
        for _ in range(MAX_NUMBERS_TRIED):
            if not targets:
                break
            index = self._pick_number(targets)
            targets.remove(index)
            tok = self.toks[index]
            editable, tail = self._editable(tok), tok.digits[len(self._editable(tok)):]
            options = []
            for pos in self.rng.shuffled(range(min(len(editable), MAX_DIGITS_TRIED))):
                # a repeated digit, as in "five five five" heard four times, or a stray one
                extra = editable[pos] if self.rng.random() < 0.6 else str(self.rng.below(10))
                options.append((editable[:pos + 1] + extra + editable[pos + 1:], pos))
            for new, pos in options:
                entry = self._number_edit("digits_added", index, new + tail, pos, 1)
                if entry:
                    return entry
        return None

    def _number_as_words(self) -> dict[str, Any] | None:
        targets = [i for i, t in enumerate(self.toks) if t.cat == "num" and not t.as_words
                   and not _other_span_reserved(t)]
        for index in self.rng.shuffled(targets)[:MAX_NUMBERS_TRIED]:
            tok = self.toks[index]
            written = render_words(tok.num, tok.digits, self.habits, tok.groups)
            if not self._reparses(index, written, tok.digits):
                continue
            before = tok.text
            tok.text, tok.as_words = written, True
            self._reserve(index, index)
            return self._record("number_as_words", before, written, index, number=tok.num.start)
        return None

    # -- misheard spans -------------------------------------------------------------------------

    def _span_words(self, names: bool) -> list[int]:
        return [i for i, t in enumerate(self.toks)
                if t.cat == "word" and not t.reserved and t.name == names and _WORDLIKE.fullmatch(t.text)]

    def _replace_word(self, kind: str, index: int) -> dict[str, Any] | None:
        tok = self.toks[index]
        alike = sounds().sound_alike(tok.text, self.rng.below)
        if alike is None:
            return None
        after = _recase(alike, tok.text)
        before = tok.text
        tok.text = after
        self._reserve(index, index)
        entry = self._record(kind, before, after, index, source="dictionary")
        self.rewrites.append((len(self.errors) - 1, tok))
        return entry

    def _misheard_name(self) -> dict[str, Any] | None:
        for index in self.rng.shuffled(self._span_words(names=True)):
            entry = self._replace_word("misheard_name", index)
            if entry:
                return entry
        return None

    def _misheard_word(self) -> dict[str, Any] | None:
        for index in self.rng.shuffled(self._span_words(names=False))[:12]:
            entry = self._replace_word("misheard_word", index)
            if entry:
                return entry
        return None

    def _misheard_phrase(self) -> dict[str, Any] | None:
        free = set(self._span_words(names=False))
        runs = []
        for size in (2, 3):
            for i in sorted(free):
                idx = [i + 2 * k for k in range(size)]
                if all(j in free for j in idx) and all(self.toks[j - 1].text == " " for j in idx[1:]):
                    runs.append(idx)
        for idx in self.rng.shuffled(runs)[:8]:
            words = [self.toks[j].text for j in idx]
            alike = sounds().phrase_alike(words, self.rng.below)
            if alike is None:
                continue
            if len(alike) == len(words):
                after = " ".join(_recase(new, old) for new, old in zip(alike, words))
            else:
                after = _recase(" ".join(alike), words[0])
            before = " ".join(words)
            first, last = idx[0], idx[-1]
            self.toks[first].text = after
            del self.toks[first + 1:last + 1]
            self._reserve(first, first)
            entry = self._record("misheard_phrase", before, after, first, source="dictionary")
            self.rewrites.append((len(self.errors) - 1, self.toks[first]))
            return entry
        return None

    # -- casing, punctuation, splitting ---------------------------------------------------------

    def _lowercase(self) -> dict[str, Any] | None:
        before = self.text
        if before == before.lower():
            return None
        for t in self.toks:
            t.text = t.text.lower()
        return self._record("lowercase", before, self.text, 0)

    def _no_final_period(self) -> dict[str, Any] | None:
        for i in range(len(self.toks) - 1, -1, -1):
            t = self.toks[i]
            if t.cat != "sep":
                return None
            stripped = t.text.rstrip()
            if not stripped:
                continue
            if stripped[-1] not in ".?!" or stripped.endswith(".."):
                return None
            at = self._offset(i) + len(stripped) - 1
            t.text = stripped[:-1] + t.text[len(stripped):]
            if not t.text:
                del self.toks[i]
            entry = {"type": "no_final_period", "before": stripped[-1], "after": "", "at": at}
            self.errors.append(entry)
            return entry
        return None

    def _split(self) -> dict[str, Any] | None:
        if self.split_at is not None:
            return None
        ws = self.words()
        if len(ws) < 4:
            return None
        bounds = []  # (index of the first token of piece two, after punctuation?)
        for k in range(1, len(ws) - 1):
            a, b = ws[k], ws[k + 1]
            between = "".join(t.text for t in self.toks[a + 1:b])
            if between.strip(",.;:?! ") or " " not in between:
                continue
            bounds.append((b, bool(between.strip())))
        if not bounds:
            return None
        marked = [b for b, punct in bounds if punct]
        cut = self.rng.choice(marked) if marked and self.rng.random() < 0.6 else self.rng.choice(bounds)[0]
        self.split_at = cut
        sep = self.toks[cut - 1].text
        gap = sep[len(sep.rstrip()):]  # the pause: the whitespace where the turn is cut
        entry = {"type": "split", "before": gap, "after": "\n", "at": self._offset(cut) - len(gap)}
        self.errors.append(entry)
        return entry

    # -- an optional rewrite model -------------------------------------------------------------

    def rewrite_requests(self) -> list[tuple[dict[str, Any], Tok, dict[str, Any]]]:
        """(error entry, token, context) for each misheard span a rewrite model may reword."""
        text = self.text
        return [(self.errors[i], tok, {"type": self.errors[i]["type"], "turn": text, "at": self.errors[i]["at"],
                                       "suggestion": self.errors[i]["after"]})
                for i, tok in self.rewrites]

    @staticmethod
    def use_rewrite(entry: dict[str, Any], tok: Tok, replacement: Any) -> bool:
        """Put a rewrite model's wording in place of the dictionary's, if it is a usable span: a
        few words on one line, not the span as said, no digits or number words."""
        if not isinstance(replacement, str):
            return False
        replacement = " ".join(replacement.split()).strip(" .,;:!?\"'")
        before = entry["before"]
        if (not replacement or replacement.lower() == before.lower() or len(replacement.split()) > 4
                or len(replacement) > 3 * len(before) + 12 or find_numbers(replacement)
                or tok.text != entry["after"]):
            return False
        tok.text = replacement
        entry["after"] = replacement
        entry["source"] = "model"
        return True


def _other_span_reserved(t: Tok) -> bool:
    """A number next to a changed span stays as it is (unless it is itself the changed span)."""
    return t.reserved and t.digits == t.num.digits and not t.as_words


def _regroup(groups: list[int] | None, pos: int, delta: int) -> list[int] | None:
    """Group sizes after `delta` digits were added (+) or lost (-) at digit position `pos`."""
    if not groups:
        return groups
    out, start = list(groups), 0
    for g, size in enumerate(out):
        if pos < start + size or g == len(out) - 1:
            out[g] = size + delta
            break
        start += size
    return [size for size in out if size > 0]


def _plain_block(text: str, name_parts: set[str], toks: list[Tok]) -> None:
    if text:
        toks.append(Tok(text, "sep"))


def _plain_words(text: str, name_parts: set[str], toks: list[Tok]) -> None:
    for m in _PLAIN.finditer(text):
        piece = m.group(0)
        if m.lastgroup == "word":
            toks.append(Tok(piece, "word", name=piece.lower() in name_parts))
        elif toks and toks[-1].cat == "sep":
            toks[-1].text += piece
        else:
            toks.append(Tok(piece, "sep"))


def _recase(new: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return new.upper()
    if like[:1].isupper():
        return new[:1].upper() + new[1:]
    return new
