"""Error profiles of the simulated phone line: turn kinds, drawing an error set, fitting, rates.

A caller turn's kind is three things about what was said (`turn_kind`): whether it holds a word of
the caller's name, the length of its longest number in digits (banded), and its word count (banded),
e.g. `name=0 num=8+ words=10-19`. A profile gives, for each kind, the error sets seen on turns of
that kind with their weights (`[[], 812]`, `[["lowercase"], 31]`, `[["digits_dropped",
"no_final_period"], 4]`, ...). The line draws one set per turn with a seeded uniform, so errors come
as often, and as often together, as in the profile. A kind with fewer than `min_turns` turns borrows
from a coarser kind (the word band dropped, then the name, then everything).

Profile file (JSON):

    {"format": "callm-line-profile/1",
     "metadata": {...how it was made...},
     "targets": {"none": 76.6, "one": 18.5, "two_plus": 4.9},     # per 100 caller turns
     "type_rates": {"lowercase": 2.1, ...},                       # per 100 caller turns
     "style": {"phone": {"dashes": 0.6, "plain": 0.25, "spaces": 0.15}, ...},
     "kinds": {"name=0 num=0 words=1-3": {"turns": 2612, "sets": [[[], 0.93], [["lowercase"], 0.03]]}}}

`callm fit-line-profile calls.jsonl -o profile.json` (`fit_profile_main`) writes one from real
(scripted text, transcript) pairs; the shipped default (`data/line_profile.json`) was built by
`build_default_profile` (its metadata says how).
"""

from __future__ import annotations

import argparse
import difflib
import json
import math
import re
import sys
from collections import Counter, defaultdict
from functools import lru_cache
from importlib import resources
from itertools import permutations
from pathlib import Path
from typing import Any

from pytest_callm.phone.errors import ERROR_TYPES, is_clean_swap
from pytest_callm.phone.spoken_numbers import find_numbers, phone_groups

FORMAT = "callm-line-profile/1"
TARGETS = {"none": 76.6, "one": 18.5, "two_plus": 4.9}  # the paper's recognizer errors per 100 caller turns
NUM_BANDS = ((0, 0, "0"), (1, 2, "1-2"), (3, 4, "3-4"), (5, 7, "5-7"), (8, 10 ** 9, "8+"))
WORD_BANDS = ((0, 3, "1-3"), (4, 9, "4-9"), (10, 19, "10-19"), (20, 10 ** 9, "20+"))
DEFAULT_STYLE = {
    "phone": {"dashes": 0.6, "plain": 0.25, "spaces": 0.15},
    "zero": {"oh": 0.6, "zero": 0.4},
    "thousands": {"comma": 0.8, "plain": 0.2},
    "ordinal": {"suffix": 0.7, "plain": 0.3},
}
_WORD = re.compile(r"[A-Za-z0-9]+(?:['\u2019][A-Za-z]+)*")
_NAME_WORD = re.compile(r"[A-Za-z]+(?:['\u2019][A-Za-z]+)*")


class ProfileError(ValueError):
    pass


# ----------------------------------------------------------------------------------------------
# kinds

def name_parts(caller_name: str | None) -> frozenset[str]:
    if not caller_name:
        return frozenset()
    return frozenset(p.lower() for p in _NAME_WORD.findall(caller_name) if len(p) > 1)


def _band(value: int, bands) -> str:
    for low, high, label in bands:
        if low <= value <= high:
            return label
    return bands[-1][2]


def turn_kind(said: str, names: frozenset[str] | set[str] = frozenset()) -> str:
    has_name = any(w.lower() in names for w in _NAME_WORD.findall(said))
    longest = max((len(n.digits) for n in find_numbers(said)), default=0)
    words = len(_WORD.findall(said))
    return f"name={int(has_name)} num={_band(longest, NUM_BANDS)} words={_band(words, WORD_BANDS)}"


def parse_kind(kind: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in kind.split())


# ----------------------------------------------------------------------------------------------
# profiles

class Profile:
    def __init__(self, data: dict[str, Any], source: str = "<profile>", min_turns: float = 20):
        self.source = source
        self.data = validate_profile(data, source)
        self.min_turns = float(data.get("min_turns", min_turns)) if isinstance(data, dict) else min_turns
        self.kinds: dict[str, dict[str, Any]] = self.data["kinds"]
        self.style: dict[str, dict[str, float]] = {**DEFAULT_STYLE, **self.data.get("style", {})}
        self.targets: dict[str, float] = self.data.get("targets", TARGETS)
        self.type_rates: dict[str, float] = self.data.get("type_rates", {})
        self._tables: dict[str, list[tuple[float, list[str]]]] = {}

    @classmethod
    def load(cls, path: str | Path) -> Profile:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ProfileError(f"{path}: no such line profile (use clean, default or a profile file)") from None
        except json.JSONDecodeError as exc:
            raise ProfileError(f"{path}: not JSON: {exc}") from None
        return cls(data, str(path))

    def table(self, kind: str) -> list[tuple[float, list[str]]]:
        """Cumulative weights and error sets for `kind`, backing off to coarser kinds when thin."""
        if kind in self._tables:
            return self._tables[kind]
        merged: Counter = Counter()
        entry = self.kinds.get(kind)
        if entry is not None and entry["turns"] >= self.min_turns:
            for errors, weight in entry["sets"]:
                merged[tuple(sorted(errors))] += weight
        want = parse_kind(kind)
        for keep in (("name", "num"), ("num",), ()):
            if sum(merged.values()) > 0:
                break
            merged.clear()
            turns = 0.0
            for other, entry in self.kinds.items():
                have = parse_kind(other)
                if all(have.get(k) == want.get(k) for k in keep):
                    total = sum(w for _, w in entry["sets"]) or 1.0
                    turns += entry["turns"]
                    for errors, weight in entry["sets"]:
                        merged[tuple(sorted(errors))] += max(entry["turns"], 1e-9) * weight / total
            if turns < max(self.min_turns, 1e-9) and keep:  # the last level takes what there is
                merged.clear()
        cumulative, running = [], 0.0
        total = sum(merged.values())
        if total <= 0:
            raise ProfileError(f"{self.source}: no error sets with weight for kind {kind!r}")
        for errors, weight in sorted(merged.items()):
            running += weight / total
            cumulative.append((running, list(errors)))
        self._tables[kind] = cumulative
        return cumulative

    def draw(self, kind: str, u: float) -> list[str]:
        table = self.table(kind)
        for bound, errors in table:
            if u < bound:
                return list(errors)
        return list(table[-1][1]) if table else []

    def habits(self, stream) -> dict[str, str]:
        return {key: stream.weighted(options) for key, options in sorted(self.style.items())}


def validate_profile(data: Any, source: str) -> dict[str, Any]:
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProfileError(f"{source}: not a line profile (want \"format\": \"{FORMAT}\")")
    kinds = data.get("kinds")
    if not isinstance(kinds, dict) or not kinds:
        raise ProfileError(f"{source}: $.kinds must be a non-empty object")
    for kind, entry in kinds.items():
        where = f"{source}: $.kinds[{kind!r}]"
        try:
            parsed = parse_kind(kind)
        except ValueError:
            raise ProfileError(f"{where}: a kind is written like 'name=0 num=8+ words=4-9'") from None
        if set(parsed) != {"name", "num", "words"}:
            raise ProfileError(f"{where}: a kind is written like 'name=0 num=8+ words=4-9'")
        if not isinstance(entry, dict) or not isinstance(entry.get("turns"), (int, float)) or entry["turns"] < 0:
            raise ProfileError(f"{where}.turns must be a number of turns")
        sets = entry.get("sets")
        if not isinstance(sets, list) or not sets:
            raise ProfileError(f"{where}.sets must list [[error types], weight] pairs")
        for i, item in enumerate(sets):
            if (not isinstance(item, list) or len(item) != 2 or not isinstance(item[0], list)
                    or not isinstance(item[1], (int, float)) or item[1] < 0):
                raise ProfileError(f"{where}.sets[{i}] must be [[error types], weight]")
            unknown = [t for t in item[0] if t not in ERROR_TYPES]
            if unknown:
                raise ProfileError(f"{where}.sets[{i}]: unknown error type {unknown[0]!r} "
                                   f"(known: {', '.join(ERROR_TYPES)})")
    style = data.get("style", {})
    if not isinstance(style, dict) or not all(isinstance(v, dict) and v for v in style.values()):
        raise ProfileError(f"{source}: $.style must map a habit to its options' weights")
    return data


def default_profile_path() -> Path:
    return Path(str(resources.files("pytest_callm.phone") / "data" / "line_profile.json"))


@lru_cache(maxsize=1)
def _default_profile() -> Profile:
    return Profile.load(default_profile_path())


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime: float) -> Profile:
    return Profile.load(path)


def load_profile(spec: str | Path = "default") -> Profile:
    """`default` (the shipped profile) or a profile file; loaded once per process and file version."""
    if str(spec) == "default":
        return _default_profile()
    path = Path(spec)
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        raise ProfileError(f"{path}: no such line profile (use clean, default or a profile file)") from None
    return _load_cached(str(path.resolve()), mtime)


# ----------------------------------------------------------------------------------------------
# realized rates, for the run summary

def _rates(counts: list[int], by_type: Counter, turns: int) -> dict[str, Any]:
    per = 100.0 / turns if turns else 0.0
    return {
        "none": sum(1 for c in counts if c == 0) * per,
        "one": sum(1 for c in counts if c == 1) * per,
        "two_plus": sum(1 for c in counts if c >= 2) * per,
        "types": {t: by_type.get(t, 0) * per for t in ERROR_TYPES},
    }


def realized_rates(turn_errors: list[list[dict[str, Any]]], profile: Profile | str | None = "default") -> dict:
    """Recognizer errors per 100 caller turns beside their targets.

    `turn_errors` holds, per caller turn, the errors the line applied (`Heard.errors`, as stored in
    `TranscriptTurn.line_errors`); style entries (`"style": true`, numbers written as digits) are not
    errors. Targets are the profile's (the paper's totals and the default profile's per-type rates
    unless a profile file was used). Returns
    `{"turns": N, "totals": {"none"|"one"|"two_plus": {"realized", "target"}},
      "types": {type: {"realized", "target"}}}` with rates per 100 turns (None when N is 0).
    """
    if isinstance(profile, (str, Path)):
        profile = load_profile(profile)
    counts, by_type = [], Counter()
    for errors in turn_errors:
        real = [e for e in errors or () if not e.get("style")]
        counts.append(len(real))
        by_type.update(e.get("type") for e in real)
    turns = len(turn_errors)
    got = _rates(counts, by_type, turns)
    targets = profile.targets if profile else TARGETS
    type_targets = profile.type_rates if profile else {}
    value = (lambda x: round(x, 2)) if turns else (lambda x: None)
    return {
        "turns": turns,
        "totals": {k: {"realized": value(got[k]), "target": targets.get(k)} for k in ("none", "one", "two_plus")},
        "types": {t: {"realized": value(got["types"][t]), "target": type_targets.get(t)} for t in ERROR_TYPES},
    }


def format_rates(rates: dict[str, Any]) -> str:
    """A plain-text table of `realized_rates` output."""
    lines = [f"recognizer errors per 100 caller turns ({rates['turns']} turns): realized / target"]
    fmt = lambda x: "n/a" if x is None else f"{x:5.1f}"  # noqa: E731
    for key, label in (("none", "no error"), ("one", "one error"), ("two_plus", "two or more")):
        row = rates["totals"][key]
        lines.append(f"  {label:<18} {fmt(row['realized'])}  {fmt(row['target'])}")
    for t, row in rates["types"].items():
        lines.append(f"  {t:<18} {fmt(row['realized'])}  {fmt(row['target'])}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# the default profile

def _propensities(kind: str, applicable: dict[str, float] | None = None) -> dict[str, float]:
    """Relative error propensities of a kind, before scaling (see `build_default_profile`), each
    times the share of the kind's turns it can apply to, when known."""
    k = parse_kind(kind)
    wb = [label for _, _, label in WORD_BANDS].index(k["words"])
    nb = [label for _, _, label in NUM_BANDS].index(k["num"])
    mid_words = (2, 6, 14, 28)[wb]
    word = 0.12 * mid_words ** 0.8
    out = {
        "no_final_period": 1.0,
        "lowercase": 0.55,
        "clipped_start": 0.0 if wb == 0 else 0.3 + 0.1 * wb,
        "clipped_end": 0.0 if wb == 0 else 0.25 + 0.1 * wb,
        "split": (0.0, 0.15, 0.45, 0.9)[wb],
        "misheard_word": word,
        "misheard_phrase": 0.0 if wb == 0 else 0.3 * word,
        "misheard_name": 1.3 if k["name"] == "1" else 0.0,
        "digits_dropped": (0.0, 0.15, 0.45, 0.8, 1.3)[nb],
        "digits_added": (0.0, 0.1, 0.3, 0.55, 0.9)[nb],
        "number_as_words": (0.0, 0.25, 0.35, 0.4, 0.45)[nb],
    }
    if applicable is not None:
        out = {t: v * applicable.get(t, 0.0) for t, v in out.items()}
    return {t: v for t, v in out.items() if v > 0}


def _applicability(turns: list[tuple[str, str]]) -> dict[str, dict[str, float]]:
    """Per kind, the share of `turns` each error type can apply to."""
    from pytest_callm.phone.errors import Stream, Turn

    seen: dict[str, Counter] = defaultdict(Counter)
    total: Counter = Counter()
    for said, caller in turns:
        names = name_parts(caller)
        kind = turn_kind(said, names)
        turn = Turn.from_said(said, set(names), {}, Stream("applicability"))
        total[kind] += 1
        seen[kind].update(t for t in ERROR_TYPES if turn.can_apply(t))
    return {kind: {t: seen[kind][t] / n for t in ERROR_TYPES} for kind, n in total.items()}


def _set_probabilities(lam: dict[str, float], n: int) -> dict[tuple[str, ...], float]:
    """Probability of each set of `n` distinct types drawn one by one in proportion to `lam`."""
    out: dict[tuple[str, ...], float] = defaultdict(float)
    types = sorted(lam)
    for order in permutations(types, n):
        p, left = 1.0, sum(lam.values())
        for t in order:
            p *= lam[t] / left
            left -= lam[t]
        out[tuple(sorted(order))] += p
    return out


def _shares(total: float, s: float, c: float) -> tuple[float, float]:
    """P(any error) and P(two or more) for a kind whose propensities add up to `total`."""
    p_any = 1.0 - math.exp(-s * total)
    return p_any, p_any * (c * total / (1.0 + c * total))


def _kind_sets(lam: dict[str, float], s: float, c: float) -> tuple[float, float, dict]:
    p_any, p_multi = _shares(sum(lam.values()), s, c)
    sets: dict[tuple[str, ...], float] = {(): 1.0 - p_any}
    for n, share in ((1, p_any - p_multi), (2, 0.8 * p_multi), (3, 0.2 * p_multi)):
        probs = _set_probabilities(lam, min(n, len(lam)))
        if n == 3:  # keep the likely triples: they carry all but a sliver of the mass
            kept = dict(sorted(probs.items(), key=lambda kv: -kv[1])[:40])
            norm = sum(kept.values())
            probs = {k: v / norm for k, v in kept.items()}
        for key, p in probs.items():
            sets[key] = sets.get(key, 0.0) + share * p
    return 1.0 - p_any, p_multi, sets


def _bisect(fn, lo: float, hi: float, target: float) -> float:
    """x in [lo, hi] with fn(x) == target, fn increasing."""
    for _ in range(80):
        mid = (lo + hi) / 2
        if fn(mid) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def build_default_profile(turns: int = 100_000, seed: str = "callm-line-mix/default",
                          applicability_turns: int = 30_000) -> dict[str, Any]:
    """The shipped profile: per-kind error sets from a propensity model, scaled so that on the
    synthetic mix of `line_mix` the totals are the paper's 76.6 / 18.5 / 4.9 per 100 turns."""
    from pytest_callm.phone.turn_mix import synthetic_turns

    sample = synthetic_turns(turns, seed)
    mix = Counter(turn_kind(said, name_parts(name)) for said, name in sample)
    applicable = _applicability(sample[:applicability_turns])
    lams = {kind: _propensities(kind, applicable.get(kind)) for kind in mix}
    n = sum(mix.values())

    def share_none(s: float) -> float:
        return sum(cnt * math.exp(-s * sum(lams[k].values())) for k, cnt in mix.items()) / n

    s = _bisect(lambda x: -share_none(x), 0.0, 5.0, -TARGETS["none"] / 100)

    def share_multi(c: float) -> float:
        return sum(cnt * _shares(sum(lams[k].values()), s, c)[1] for k, cnt in mix.items()) / n

    c = _bisect(share_multi, 0.0, 50.0, TARGETS["two_plus"] / 100)
    kinds, type_rates = {}, Counter()
    every_kind = [f"name={name} num={num} words={words}" for name in (0, 1) for _, _, num in NUM_BANDS
                  for _, _, words in WORD_BANDS]
    for kind in sorted(every_kind):
        _, _, sets = _kind_sets(lams.get(kind) or _propensities(kind), s, c)  # unseen kinds: no shares
        rows = [[list(key), round(p, 7)] for key, p in sorted(sets.items(), key=lambda kv: (len(kv[0]), kv[0]))
                if p >= 5e-7]
        kinds[kind] = {"turns": mix[kind], "sets": rows}
        for key, p in sets.items():
            for t in key:
                type_rates[t] += 100.0 * mix[kind] * p / n
    return {
        "format": FORMAT,
        "metadata": {
            "made_by": "pytest_callm.phone.error_profile.build_default_profile",
            "how": ("Not fitted on real calls. Per kind, each error type gets a relative propensity "
                    "(more words: more misheard words, clipping and splitting; longer numbers: more lost and "
                    "added digits; a turn with the caller's name: misheard names; every turn: a missing "
                    "final period or lowercase), times the share of the kind's turns in the mix it can "
                    "apply to (a turn ending in a number cannot lose its last word). P(any error) = "
                    "1 - exp(-s * L) with L the sum of the propensities; P(two or more | any) = "
                    "c*L/(1 + c*L), split 80/20 between two and three errors; the types of a set are drawn "
                    "without replacement in proportion to their propensities. s and c were solved so that "
                    "on the synthetic caller-turn mix (pytest_callm.phone.turn_mix, seed below) the totals per "
                    "100 turns are the paper's 76.6 none / 18.5 one / 4.9 two or more. 'turns' per kind "
                    "are that mix's counts (0 for kinds it never produced; their sets use the propensities "
                    "without shares). type_rates are the per-type rates this implies on the mix."),
            "mix_turns": turns, "mix_seed": seed, "scale_s": round(s, 6), "clustering_c": round(c, 6),
            "propensities": "see _propensities in pytest_callm/phone/error_profile.py",
        },
        "targets": dict(TARGETS),
        "type_rates": {t: round(type_rates[t], 3) for t in ERROR_TYPES},
        "min_turns": 0,  # every kind's sets come from the model, so none borrows from a coarser kind
        "style": DEFAULT_STYLE,
        "kinds": kinds,
    }


# ----------------------------------------------------------------------------------------------
# fitting a profile from real (scripted, transcript) pairs

def _tokens(text: str) -> list[tuple[str, bool, bool, str]]:
    """(comparison key, is a number, written in words, as written) per word or number of `text`."""
    out, pos = [], 0
    for num in find_numbers(text):
        out.extend((w.lower(), False, False, w) for w in _NAME_WORD.findall(text[pos:num.start]))
        out.append(("#" + num.digits, True, num.spoken, num.text))
        pos = num.end
    out.extend((w.lower(), False, False, w) for w in _NAME_WORD.findall(text[pos:]))
    return out


def classify_pair(scripted: str, transcript: str | list[str], names: frozenset[str] | set[str] = frozenset()
                  ) -> tuple[list[str], int]:
    """The error types that turn `scripted` into `transcript` (a string, or the pieces of a split turn),
    found by aligning their words and numbers with difflib; and the count of clean one-digit swaps
    seen (recorded as digits_dropped, since the line never swaps)."""
    pieces = [transcript] if isinstance(transcript, str) else [p for p in transcript if p is not None]
    errors: list[str] = ["split"] * max(0, len(pieces) - 1)
    heard = " ".join(p.strip() for p in pieces)
    said_end, heard_end = scripted.rstrip()[-1:], heard.rstrip()[-1:]
    if said_end in (".", "?", "!") and heard_end != said_end:
        errors.append("no_final_period")
    a, b = _tokens(scripted), _tokens(heard)
    swaps = 0
    capitals_kept = None  # words heard as said: did the capitals of any of them survive?
    capitals_replaced = None  # the same for words misheard, when no word was heard as said
    matcher = difflib.SequenceMatcher(None, [t[0] for t in a], [t[0] for t in b], autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            errors.extend("number_as_words" for t in b[j1:j2] if t[1] and t[2])
            for x, y in zip(a[i1:i2], b[j1:j2]):
                if not x[1] and any(c.isupper() for c in x[3]):
                    capitals_kept = bool(capitals_kept) or any(c.isupper() for c in y[3])
            continue
        left, right = a[i1:i2], b[j1:j2]
        if op == "delete" and i1 == 0 and j1 == 0:
            errors.append("clipped_start")
            continue
        if op == "delete" and i2 == len(a):
            errors.append("clipped_end")
            continue
        lnums, rnums = [t for t in left if t[1]], [t for t in right if t[1]]
        for x, y in zip(lnums, rnums):
            before, after = x[0][1:], y[0][1:]
            if len(after) < len(before):
                errors.append("digits_dropped")
            elif len(after) > len(before):
                errors.append("digits_added")
            elif after != before:
                errors.append("digits_dropped")
                swaps += is_clean_swap(before, after)
            if y[2]:
                errors.append("number_as_words")
        for x, y in zip(left, right):
            if not x[1] and not y[1] and any(c.isupper() for c in x[3]):
                capitals_replaced = bool(capitals_replaced) or any(c.isupper() for c in y[3])
        lwords, rwords = [t[0] for t in left if not t[1]], [t[0] for t in right if not t[1]]
        if not lwords and not rwords:
            continue
        if any(w in names for w in lwords):
            errors.extend("misheard_name" for w in lwords if w in names)
        elif len(lwords) >= 2 or len(rwords) >= 2:
            errors.extend(["misheard_phrase"] * max(1, math.ceil(max(len(lwords), len(rwords)) / 3)))
        else:
            errors.append("misheard_word")
    if capitals_kept is None:
        capitals_kept = capitals_replaced
    if capitals_kept is False and not any(c.isupper() for c in heard):
        errors.append("lowercase")
    return sorted(errors), swaps


def _by_size(item):
    return len(item[0]), item[0]


def fit_profile(pairs, *, source: str = "<pairs>") -> dict[str, Any]:
    """A profile from (scripted, transcript, caller_name or None) triples."""
    kinds: dict[str, Counter] = defaultdict(Counter)
    counts, by_type, swaps, turns = [], Counter(), 0, 0
    phone_style: Counter = Counter()
    for scripted, transcript, caller in pairs:
        names = name_parts(caller)
        errors, swapped = classify_pair(scripted, transcript, names)
        swaps += swapped
        turns += 1
        kinds[turn_kind(scripted, names)][tuple(errors)] += 1
        counts.append(len(errors))
        by_type.update(errors)
        heard = transcript if isinstance(transcript, str) else " ".join(transcript)
        for num in find_numbers(heard):
            if num.form == "sequence" and not num.spoken and phone_groups(num.digits):
                phone_style["dashes" if "-" in num.text else "spaces" if " " in num.text else "plain"] += 1
    if not turns:
        raise ProfileError(f"{source}: no (scripted, transcript) pairs to fit")
    rates = _rates(counts, by_type, turns)
    style = {k: dict(v) for k, v in DEFAULT_STYLE.items()}
    if sum(phone_style.values()) >= 20:
        style["phone"] = {k: round(v / sum(phone_style.values()), 4) for k, v in sorted(phone_style.items())}
    return {
        "format": FORMAT,
        "metadata": {
            "made_by": "callm fit-line-profile",
            "source": source,
            "turns": turns,
            "how": ("Fitted: each (scripted, transcript) pair was aligned word by word with difflib (numbers "
                    "compared as digit strings whether written in digits or words) and its differences "
                    "classified into the line's error types; each kind's error sets are counted as seen."),
            "clean_digit_swaps_seen": swaps,
            "note": "clean one-digit swaps are counted as digits_dropped: the line never makes a swap",
        },
        "targets": {k: round(rates[k], 3) for k in ("none", "one", "two_plus")},
        "type_rates": {t: round(r, 3) for t, r in rates["types"].items()},
        "style": style,
        "kinds": {kind: {"turns": sum(c.values()),
                         "sets": [[list(key), cnt] for key, cnt in sorted(c.items(), key=_by_size)]}
                  for kind, c in sorted(kinds.items())},
    }


def dump_profile(data: dict[str, Any]) -> str:
    """A profile as JSON text: top-level fields indented, each kind on one line."""
    head = {k: v for k, v in data.items() if k != "kinds"}
    text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
    kinds = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in data["kinds"].items())
    return text + ',\n "kinds": {\n' + kinds + "\n }\n}\n"


def read_pairs(path: str | Path):
    """(scripted, transcript, caller_name) from a JSONL file of {"scripted", "transcript"} objects
    ("transcript" a string, or a list of pieces for a split turn; "caller_name" optional)."""
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ProfileError(f"{path}:{number}: not JSON: {exc}") from None
            transcript = row.get("transcript") if isinstance(row, dict) else None
            pieces_ok = isinstance(transcript, list) and all(isinstance(p, str) for p in transcript)
            if not isinstance(row, dict) or not isinstance(row.get("scripted"), str) or not (
                    isinstance(transcript, str) or pieces_ok):
                raise ProfileError(f"{path}:{number}: want {{\"scripted\": str, \"transcript\": str or [str]}}")
            yield row["scripted"], row["transcript"], row.get("caller_name")


def fit_profile_main(argv: list[str] | None = None) -> int:
    """`callm fit-line-profile calls.jsonl -o profile.json`: fit a line profile from real calls."""
    parser = argparse.ArgumentParser(
        prog="callm fit-line-profile",
        description="Fit a phone-line error profile from a JSONL file of {\"scripted\": ..., \"transcript\": ...} "
                    "pairs (optional \"caller_name\"); run with --callm-line=PROFILE.json to use it.")
    parser.add_argument("pairs", help="JSONL file, one caller turn per line")
    parser.add_argument("-o", "--output", required=True, help="profile file to write")
    args = parser.parse_args(argv)
    try:
        profile = fit_profile(read_pairs(args.pairs), source=str(args.pairs))
    except (OSError, ProfileError) as exc:
        print(f"callm fit-line-profile: {exc}", file=sys.stderr)
        return 2
    Path(args.output).write_text(dump_profile(profile), encoding="utf-8")
    t = profile["targets"]
    print(f"fitted {profile['metadata']['turns']} turns into {len(profile['kinds'])} kinds: "
          f"{t['none']:.1f} none / {t['one']:.1f} one / {t['two_plus']:.1f} two or more per 100 turns "
          f"-> {args.output}")
    return 0


def _main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Write the default line profile (maintainers only).")
    parser.add_argument("--build-default", metavar="PATH", required=True)
    parser.add_argument("--turns", type=int, default=100_000)
    args = parser.parse_args(argv)
    data = build_default_profile(args.turns)
    Path(args.build_default).write_text(dump_profile(data), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main())
