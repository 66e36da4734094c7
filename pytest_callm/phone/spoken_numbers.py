"""Numbers in a caller turn, for the simulated phone line.

A caller writes numbers as people say them ("two oh six, five five five, oh one four two", "April
fifth, twenty twenty-six", "forty-five dollars") or sometimes as digits. A phone recognizer writes
most of them as digits. This module finds every number in a turn, in either form, and renders a
number both ways: as digits, in a recognizer's habits (dashes, grouping, `$`, ordinal suffixes), and
as words. The line uses it for the recognizer's number style and for the number errors; the profile
fitter uses it to line up numbers between a script and a transcript.

A number is one `Num`: its character span in the text, its digit string (`digits`, what the
no-clean-swap rule is checked on) and its shape (`form`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

DIGIT_WORDS = {"zero": 0, "oh": 0, "o": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
               "seven": 7, "eight": 8, "nine": 9}
TEENS = {"ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}
SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
            "eighth": 8, "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13,
            "fourteenth": 14, "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18,
            "nineteenth": 19, "twentieth": 20, "thirtieth": 30}
MONTHS = {"january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december"}
# a lone small number word ("one more thing") stays a word, as recognizers leave it, unless a unit
# follows that makes it a quantity a recognizer writes in digits
UNIT_WORDS = {"dollars", "dollar", "bucks", "cents", "percent", "o'clock"}
MAX_SAID_DIGITS = 15  # longer amounts are written out digit by digit (`render_words`)
MERIDIEM = re.compile(r"\s*(?:a\.m\.|p\.m\.|am\b|pm\b|AM\b|PM\b|A\.M\.|P\.M\.)")

NUMBER_VOCAB = set(DIGIT_WORDS) | set(TEENS) | set(TENS) | set(SCALES) | set(ORDINALS)
# words the sound-alike search must never produce, or it would invent a number or a date
NUMERIC_WORDS = NUMBER_VOCAB | MONTHS | {"a", "and", "dollars", "dollar", "cents", "bucks", "percent",
                                         "o'clock", "am", "pm", "double", "triple"}

_STARTERS = set(DIGIT_WORDS) | set(TEENS) | set(TENS) | set(ORDINALS) | {"a"}
_CARDINAL_PARTS = set(DIGIT_WORDS) | set(TEENS) | set(TENS) | set(SCALES) | {"and", "a"}

_LETTERS = re.compile(r"[a-z]+")

ONES_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
              "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
              "nineteen"]
TENS_WORDS = {v: k for k, v in TENS.items()}
ORDINAL_WORDS = {v: k for k, v in ORDINALS.items()}


@dataclass
class Num:
    start: int
    end: int
    text: str
    digits: str
    form: str  # sequence | cardinal | ordinal | money | time | year
    spoken: bool  # written in words
    groups: list[int] = field(default_factory=list)  # digit-group sizes as written (sequence)
    cents: bool = False  # money with a cents part (the last two digits)

    @property
    def value(self) -> int:
        return int(self.digits) if self.digits else 0


# ----------------------------------------------------------------------------------------------
# finding numbers

_DIGIT_FORM = re.compile(
    r"\$\d{1,3}(?:,\d{3})+(?:\.\d{2})?(?!\d)"     # $1,250.00
    r"|\$\d+(?:\.\d{2})?(?![\d,])"                 # $45.50
    r"|\b\d{1,2}:\d{2}\b(?:\s?(?:[AaPp]\.[Mm]\.|[AaPp][Mm]\b))?"  # 10:30, 10:30 AM
    r"|\b\d+(?:st|nd|rd|th)\b"                    # 5th
    r"|\b\d+(?:-\d+)+\b"                          # 206-555-0142, 1-800-555-0199
    r"|\b\d{2,4}(?:[ .]\d{2,5}){2,3}\b"           # 206 555 0142, 206.555.0142 (and one lost digit)
    r"|\b\d{3}[ .]\d{4}\b"                        # 555 0142
    r"|\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b"          # 12,500
    r"|\b\d+(?:\.\d+)?\b"                         # 42, 3.5
)
_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")


def _digit_form(match: re.Match) -> Num:
    text = match.group(0)
    digits = re.sub(r"\D", "", text)
    at = (match.start(), match.end(), text, digits)
    if text.startswith("$"):
        return Num(*at, "money", False, cents="." in text)
    if ":" in text:
        return Num(*at, "time", False)
    if text[-2:].isalpha():
        return Num(*at, "ordinal", False)
    if re.search(r"\d[- ]\d|\d\.\d{3}", text):
        return Num(*at, "sequence", False, groups=[len(g) for g in re.split(r"[- .]", text)])
    if "," in text or "." in text:
        return Num(*at, "cardinal", False)
    if len(digits) >= 5:
        return Num(*at, "sequence", False, groups=[len(digits)])
    if len(digits) == 4 and 1900 <= int(digits) <= 2099:
        return Num(*at, "year", False)
    return Num(*at, "cardinal", False)


def _words(text: str) -> list[tuple[int, int, str]]:
    """Word tokens with spans; hyphenated compounds ("forty-five") come apart."""
    return [(m.start(), m.end(), m.group(0).lower()) for m in _WORD.finditer(text)]


def _sep_ok(text: str, a: int, b: int, commas: bool) -> bool:
    between = text[a:b]
    allowed = " -," if commas else " -"
    return 0 < len(between) <= 3 and all(c in allowed for c in between) and between.count(",") <= 1


def _parse_cardinal(toks: list[str], i: int, n: int | None = None) -> tuple[int, int] | None:
    """A cardinal starting at toks[i] ("three hundred and twelve"), read no further than toks[n - 1]:
    (value, tokens used), or None. The bound is an index, not a copy of the list (a copy per number
    made a long turn quadratic)."""
    total, current, j, last = 0, 0, i, None
    n = len(toks) if n is None else n
    while j < n:
        t = toks[j]
        if t == "a" and j == i and j + 1 < n and toks[j + 1] in ("hundred", "thousand"):
            current, last = 1, "unit"
        elif t in DIGIT_WORDS and t not in ("oh", "o", "zero") and last in (None, "hundred", "scale", "tens"):
            current += DIGIT_WORDS[t]
            last = "unit"
        elif t in TEENS and last in (None, "hundred", "scale"):
            current += TEENS[t]
            last = "teen"
        elif t in TENS and last in (None, "hundred", "scale"):
            current += TENS[t]
            last = "tens"
        elif t == "hundred" and last in ("unit", "teen") and 0 < current < 100:
            current *= 100
            last = "hundred"
            if j + 2 < n and toks[j + 1] == "and" and (toks[j + 2] in TENS or toks[j + 2] in TEENS
                                                       or toks[j + 2] in DIGIT_WORDS):
                j += 1
        elif t in ("thousand", "million") and last in ("unit", "teen", "tens", "hundred") and current:
            total += current * SCALES[t]
            current, last = 0, "scale"
        else:
            break
        j += 1
    if j == i or (j == i + 1 and toks[i] == "a"):
        return None
    return total + current, j - i


def find_numbers(text: str) -> list[Num]:
    """Every number in `text`, digit-form and spoken, in order of position (a fresh list; the `Num`
    objects are shared between calls and must not be changed)."""
    return list(_find_numbers(text))


@lru_cache(maxsize=8192)
def _find_numbers(text: str) -> tuple[Num, ...]:
    lowered = text.lower()
    if len(lowered) != len(text):  # a letter whose lower case is longer: keep offsets aligned
        lowered = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    has_digit = any(c.isdigit() for c in text)
    if not has_digit and _STARTERS.isdisjoint(_LETTERS.findall(lowered)):
        return ()
    found = [_digit_form(m) for m in _DIGIT_FORM.finditer(text)] if has_digit else []
    words = [(m.start(), m.end(), m.group(0)) for m in _WORD.finditer(lowered)]
    if found:  # words inside a digit-form number are its own: one walk over both, in order (linear)
        kept, spans, k = [], [(n.start, n.end) for n in found], 0
        for w in words:
            while k < len(spans) and spans[k][1] <= w[0]:
                k += 1
            if not (k < len(spans) and spans[k][0] <= w[0]):
                kept.append(w)
        words = kept
    toks = [w[2] for w in words]
    i = 0
    while i < len(words):
        if toks[i] not in _STARTERS:
            i += 1
            continue
        num = _spoken_at(text, words, toks, i)
        if num is None:
            i += 1
            continue
        found.append(num[0])
        i += num[1]
    found.sort(key=lambda n: n.start)
    return tuple(found)


def _linked(text: str, words, i: int, k: int, commas: bool = False) -> bool:
    """Are words i..i+k-1 adjacent, separated only by spaces and hyphens (and commas if allowed)?"""
    return all(_sep_ok(text, words[j][1], words[j + 1][0], commas) for j in range(i, i + k - 1))


def _spoken_at(text: str, words, toks, i: int) -> tuple[Num, int] | None:
    t = toks[i]
    start = words[i][0]

    def make(k: int, digits: str, form: str, end: int | None = None, **kw) -> tuple[Num, int]:
        stop = words[i + k - 1][1] if end is None else end
        return Num(start, stop, text[start:stop], digits, form, True, **kw), k

    # a digit sequence: three or more digit words ("two oh six, five five five")
    if t in DIGIT_WORDS and t != "o":
        k = 1
        while i + k < len(toks) and toks[i + k] in DIGIT_WORDS and _linked(text, words, i + k - 1, 2, commas=True):
            k += 1
        if k >= 3 and t not in ("oh",):
            digits = "".join(str(DIGIT_WORDS[x]) for x in toks[i:i + k])
            groups, size = [], 1
            for j in range(i + 1, i + k):
                if "," in text[words[j - 1][1]:words[j][0]]:
                    groups.append(size)
                    size = 0
                size += 1
            groups.append(size)
            return make(k, digits, "sequence", groups=groups)
    # month + ordinal, or ordinal + "of" + month
    if t in ORDINALS or (t in TENS and i + 1 < len(toks) and toks[i + 1] in ORDINALS
                         and ORDINALS[toks[i + 1]] < 10 and _linked(text, words, i, 2)):
        k = 1 if t in ORDINALS else 2
        value = ORDINALS[t] if k == 1 else TENS[t] + ORDINALS[toks[i + 1]]
        before = toks[i - 1] if i > 0 else ""
        after = toks[i + k:i + k + 2]
        if before in MONTHS or (after[:1] == ["of"] and after[1:2] and after[1] in MONTHS):
            return make(k, str(value), "ordinal")
        return None
    # a time: hour 1-12, then minutes ("ten thirty", "nine oh five") or "o'clock"
    hour = DIGIT_WORDS.get(t) if t not in ("oh", "o", "zero") else None
    hour = hour if hour is not None else TEENS.get(t) if t in ("ten", "eleven", "twelve") else hour
    if hour and i + 1 < len(toks) and _linked(text, words, i, 2):
        nxt = toks[i + 1]
        if nxt == "o'clock":
            m = MERIDIEM.match(text, words[i + 1][1])
            return make(2, f"{hour}00", "time", end=m.end() if m else None)
        minute, k = None, 0
        if nxt in ("oh", "o") and i + 2 < len(toks) and toks[i + 2] in DIGIT_WORDS \
                and _linked(text, words, i + 1, 2):
            minute, k = DIGIT_WORDS[toks[i + 2]], 3
        elif nxt in TENS and TENS[nxt] <= 50:
            minute, k = TENS[nxt], 2
            if (i + 2 < len(toks) and toks[i + 2] in DIGIT_WORDS and DIGIT_WORDS[toks[i + 2]]
                    and toks[i + 2] not in ("oh", "o") and _linked(text, words, i + 1, 2)):
                minute, k = minute + DIGIT_WORDS[toks[i + 2]], 3
        elif nxt in TEENS and hour <= 12:
            minute, k = TEENS[nxt], 2
        if minute is not None and not (i + k < len(toks) and toks[i + k] in (set(DIGIT_WORDS) | set(TENS))
                                       and _linked(text, words, i + k - 1, 2, commas=True)):
            end = words[i + k - 1][1]
            m = MERIDIEM.match(text, end)
            return make(k, f"{hour}{minute:02d}", "time", end=m.end() if m else None)
    # a year: "nineteen eighty-four", "twenty twenty-six", "twenty oh five"
    if (t in TEENS and TEENS[t] >= 13 or t == "twenty") and i + 1 < len(toks) and _linked(text, words, i, 2):
        head = TEENS.get(t, 20)
        nxt = toks[i + 1]
        tail, k = None, 0
        if nxt in TENS:
            tail, k = TENS[nxt], 2
            if i + 2 < len(toks) and toks[i + 2] in DIGIT_WORDS and DIGIT_WORDS[toks[i + 2]] and \
                    toks[i + 2] not in ("oh", "o") and _linked(text, words, i + 1, 2):
                tail, k = tail + DIGIT_WORDS[toks[i + 2]], 3
        elif nxt in TEENS:
            tail, k = TEENS[nxt], 2
        elif nxt in ("oh", "o") and i + 2 < len(toks) and toks[i + 2] in DIGIT_WORDS \
                and _linked(text, words, i + 1, 2):
            tail, k = DIGIT_WORDS[toks[i + 2]], 3
        if tail is not None:
            return make(k, f"{head}{tail:02d}", "year")
    # a cardinal, maybe money: only words joined by spaces or hyphens belong to it
    reach = 1
    while i + reach < len(toks) and toks[i + reach] in _CARDINAL_PARTS and _linked(text, words, i + reach - 1, 2):
        reach += 1
    parsed = _parse_cardinal(toks, i, i + reach)
    if parsed is None:
        return None
    value, k = parsed
    nxt = toks[i + k] if i + k < len(toks) else ""
    linked_next = i + k < len(toks) and _linked(text, words, i + k - 1, 2)
    if nxt in ("dollars", "dollar", "bucks") and linked_next:
        k_end = k + 1
        cents = None
        rest = toks[i + k_end:i + k_end + 2]  # a window, not a copy of the rest of the turn
        if rest[:1] == ["and"] and len(rest) > 1:
            sub = _parse_cardinal(toks, i + k_end + 1)
            if sub and sub[0] < 100 and i + k_end + 1 + sub[1] < len(toks) and \
                    toks[i + k_end + 1 + sub[1]] in ("cents", "cent"):
                cents = sub[0]
                k_end += 2 + sub[1]
        digits = f"{value}{cents:02d}" if cents is not None else str(value)
        return make(k_end, digits, "money", cents=cents is not None)
    if k == 1 and value < 10 and not (nxt in UNIT_WORDS and linked_next):
        m = MERIDIEM.match(text, words[i][1])
        if not m:
            return None  # a lone small number word stays a word
        return make(1, f"{value}00", "time", end=m.end())
    if t == "a" and k == 1:
        return None
    return make(k, str(value), "cardinal")


def longest_number(text: str) -> int:
    nums = find_numbers(text)
    return max((len(n.digits) for n in nums), default=0)


# ----------------------------------------------------------------------------------------------
# writing numbers

def cardinal_words(n: int) -> str:
    if n < 20:
        return ONES_WORDS[n]
    if n < 100:
        tens, ones = divmod(n, 10)
        return TENS_WORDS[tens * 10] + (f"-{ONES_WORDS[ones]}" if ones else "")
    if n < 1000:
        hundreds, rest = divmod(n, 100)
        return f"{ONES_WORDS[hundreds]} hundred" + (f" {cardinal_words(rest)}" if rest else "")
    if n < 1_000_000:
        thousands, rest = divmod(n, 1000)
        return f"{cardinal_words(thousands)} thousand" + (f" {cardinal_words(rest)}" if rest else "")
    millions, rest = divmod(n, 1_000_000)
    return f"{cardinal_words(millions)} million" + (f" {cardinal_words(rest)}" if rest else "")


def ordinal_words(n: int) -> str:
    if n in ORDINAL_WORDS:
        return ORDINAL_WORDS[n]
    tens, ones = divmod(n, 10)
    if n < 100 and ones:
        return f"{TENS_WORDS[tens * 10]}-{ORDINAL_WORDS[ones]}"
    return cardinal_words(n) + "th"


def year_words(n: int) -> str:
    head, tail = divmod(n, 100)
    if n % 1000 < 10 and 2000 <= n < 2010:
        return cardinal_words(n)
    if tail == 0:
        return f"{cardinal_words(head)} hundred"
    if tail < 10:
        return f"{cardinal_words(head)} oh {ONES_WORDS[tail]}"
    return f"{cardinal_words(head)} {cardinal_words(tail)}"


def ordinal_suffix(n: int) -> str:
    if 10 <= n % 100 <= 20:
        return "th"
    return {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def split_groups(digits: str, groups: list[int]) -> list[str]:
    """Cut `digits` into groups of the given sizes; the last group takes what remains."""
    out, pos = [], 0
    for size in groups[:-1]:
        out.append(digits[pos:pos + size])
        pos += size
    out.append(digits[pos:])
    return [g for g in out if g]


def phone_groups(digits: str) -> list[int] | None:
    if len(digits) == 10:
        return [3, 3, 4]
    if len(digits) == 11 and digits[0] == "1":
        return [1, 3, 3, 4]
    if len(digits) == 7:
        return [3, 4]
    return None


def render_digits(num: Num, digits: str, habits: dict[str, str], groups: list[int] | None = None) -> str:
    """`digits` written as a recognizer writes `num`'s shape, with the turn's habits."""
    form = num.form
    if form == "money":
        if num.cents and len(digits) >= 3:
            whole, cents = digits[:-2], digits[-2:]
        else:
            whole, cents = digits, None
        whole = whole or "0"
        whole = _with_commas(whole) if habits.get("thousands", "comma") == "comma" and len(whole) > 3 else whole
        return f"${whole}" + (f".{cents}" if cents is not None else "")
    if form == "time":
        hour, minute = digits[:-2] or "0", digits[-2:]
        return f"{hour}:{minute}{_meridiem(num)}"
    if form == "ordinal":
        return f"{digits}{ordinal_suffix(int(digits[-2:]))}" if habits.get("ordinal", "suffix") == "suffix" else digits
    if form == "year":
        return digits
    if form == "cardinal":
        if habits.get("thousands", "comma") == "comma" and len(digits) > 4:
            return _with_commas(digits)
        return digits
    # a sequence: grouped (a phone number) in the habit of the turn, else plain
    style = habits.get("phone", "dashes")
    if groups and len(groups) > 1 and style != "plain":
        return ("-" if style == "dashes" else " ").join(split_groups(digits, groups))
    return digits


def _with_commas(digits: str) -> str:
    """`f"{int(digits):,}"` without the int: Python refuses to convert more than 4,300 digits."""
    digits = digits.lstrip("0") or "0"
    head = len(digits) % 3 or 3
    return ",".join([digits[:head], *(digits[i:i + 3] for i in range(head, len(digits), 3))])


def _meridiem(num: Num) -> str:
    """The a.m. or p.m. of a time, spelt as the caller wrote it (so a final period in "a.m." stays)."""
    m = MERIDIEM.search(num.text)
    return " " + m.group(0).strip() if m else ""


def render_words(num: Num, digits: str, habits: dict[str, str], groups: list[int] | None = None) -> str:
    """`digits` written out in words, as a recognizer that missed the number writes it."""
    form = num.form
    if form in ("money", "cardinal", "ordinal") and len(digits) > MAX_SAID_DIGITS:
        form = "sequence"  # no one says a number that long as one: it is read out digit by digit
    if form == "money":
        whole, cents = (digits[:-2], digits[-2:]) if num.cents and len(digits) >= 3 else (digits, None)
        value = int(whole or "0")
        out = f"{cardinal_words(value)} dollar{'s' if value != 1 else ''}"
        if cents is not None and int(cents):
            out += f" and {cardinal_words(int(cents))} cents"
        return out
    if form == "time":
        hour, minute = int(digits[:-2] or "0"), int(digits[-2:])
        if minute == 0:
            out = f"{cardinal_words(hour)} o'clock"
        elif minute < 10:
            out = f"{cardinal_words(hour)} oh {ONES_WORDS[minute]}"
        else:
            out = f"{cardinal_words(hour)} {cardinal_words(minute)}"
        return out + _meridiem(num)
    if form == "ordinal":
        return ordinal_words(int(digits))
    if form == "year":
        return year_words(int(digits))
    if form == "cardinal":
        return cardinal_words(int(digits))
    zero = habits.get("zero", "oh")
    word = lambda d: zero if d == "0" else ONES_WORDS[int(d)]  # noqa: E731
    groups = groups or [len(digits)]
    return ", ".join(" ".join(word(d) for d in g) for g in split_groups(digits, groups))
