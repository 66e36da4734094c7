"""Value normalization shared by the verifier's gates AND the packs' tool logic (DESIGN §7).

Two values are the same when their normal forms are equal. A pack declares, per tool parameter
(`tools.json` scoring `kinds`) and per compared column (`pack.json` compared table `kinds`), which
kind of value it holds; each kind has one function here, and a pack's `tools.py` imports the same
functions for its own matching, so a value the tool treats as the same party is the same party to
the verifier. A value with no declared kind goes through `normalize`, the general rule.

Kinds:
- `organization` case, punctuation, "&"/"and", a leading "the", corporate suffixes (Inc., LLC...),
                 post-nominals and common abbreviations ("Mfg." is "Manufacturing")
- `person`       case, punctuation, honorifics (Mr., Dr., Attorney...) and post-nominals (MD, Esq...)
- `party`        either of the above: a person or an organization on the other side of a matter
- `identifier`   letters and digits only, case-folded: "hr 24 0117" is "HR-24-0117"
- `phone`        digits only, a leading 1 of an eleven-digit North American number dropped
- `date`         ISO calendar dates; an ISO date-time is cut to its date
- `money`        amounts to the cent: "$1,250" is 1250.00
- `email`        case, spaces, and the spoken "at" / "dot"
- `contact`      a way to reach someone: a phone number (as `phone`), an email address (as `email`) or a
                 web address, which counts by its registrable domain ("https://www.kestrel.com/help" and
                 "support.kestrel.com" are "kestrel.com")
- any other name is an alias table of the pack (`pack.json` aliases): every variant maps to its
  canonical value; variants are matched after folding case, punctuation and a leading title, and
  the words (and, if it says so, numbers) the pack declares do not change the value (`alias_ignore`).

What normalization never forgives is a different value: "Harbor Lane Industries" is not
"Harborline Industries", and a misheard digit is a different number.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

_PHONE = re.compile(r"\+?\(?\d[\d\s().-]*")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2})(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?")
_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")

# Words that name the form of a company, not the company.
CORPORATE_SUFFIXES = frozenset({
    "inc", "incorporated", "llc", "llp", "lp", "ltd", "limited", "co", "corp", "corporation", "company",
    "plc", "pllc", "pc", "gmbh",
})
# Words in front of a name that are not part of it.
HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "mx", "dr", "doctor", "prof", "professor", "attorney", "sir"})
# Degrees and licences behind a name ("Evelyn Sato, MD"): not part of it. Jr., Sr., II, III are not
# here: they tell a father from a son. PA is not either (a state, and not always a title).
POST_NOMINALS = frozenset({
    "md", "do", "dds", "dmd", "dvm", "phd", "psyd", "edd", "pharmd", "jd", "llm", "esq", "esquire",
    "rn", "np", "lpn", "aprn", "lcsw", "cpa", "cfa", "mba", "mph", "facs",
})
# Abbreviations in organization names, each to the one word it stands for.
ORGANIZATION_ABBREVIATIONS = {
    "mgmt": "management", "mgt": "management", "mfg": "manufacturing", "svc": "services", "svcs": "services",
    "intl": "international", "assn": "association", "bros": "brothers", "natl": "national", "ctr": "center",
    "grp": "group", "hldgs": "holdings", "sys": "systems", "dept": "department", "co": "company",
}


# --- the general rule --------------------------------------------------------------------------

def normalize(value: Any) -> Any:
    """The general rule, for values without a declared kind.

    Case and inner whitespace never matter; phone-like numbers of seven or more digits compare as
    digits (the paper: `206-555-0220` equals `2065550220`); other numbers by value; "true"/"false" as
    booleans (never equal to 1 or 0); date-times to the minute.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)  # tagged, so True never equals 1
    if isinstance(value, (int, float)):
        if value >= 1_000_000 and float(value).is_integer():
            return str(int(value))  # long numbers compare as digit strings, like phone numbers
        return float(value)
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, normalize(v)) for k, v in value.items()))
    text = " ".join(str(value).split()).casefold()
    if text in ("true", "false"):
        return ("bool", text == "true")
    if _ISO_DATE.fullmatch(text):
        return text
    dt_match = _ISO_DATETIME.fullmatch(text.upper())
    if dt_match:
        return f"{dt_match.group(1)}T{dt_match.group(2)}"
    if _NUMBER.fullmatch(text) and "." in text:
        return float(text)
    if _PHONE.fullmatch(text) and sum(c.isdigit() for c in text) >= 7:
        return re.sub(r"\D", "", text)
    if _NUMBER.fullmatch(text):
        return float(text)
    return text


def same(expected: Any, actual: Any) -> bool:
    return normalize(expected) == normalize(actual)


# --- one function per kind of value ------------------------------------------------------------

def fold_accents(text: str) -> str:
    """"José Núñez" -> "Jose Nunez": a name is the same name with or without its accents."""
    if text.isascii():
        return text
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def words(text: str) -> list[str]:
    """Lower-case words, accents and punctuation dropped: "O'Neil" and "L.L.C." stay one word,
    "Smith-Jones" is two, "Núñez" is "nunez"."""
    text = str(text)
    return list(_kept_words(text) if len(text) <= KEPT_CHARS else _words(text))


def _words(text: str) -> tuple[str, ...]:
    text = re.sub(r"['\u2019.]", "", fold_accents(text).casefold().replace("&", " and "))
    return tuple(re.sub(r"[^\w\s]|_", " ", text).split())


# Every normalizer starts with words(), and a run reads the same values again and again: a value's
# words are remembered, a long text's (a tool result, a speech read once) are not.
_kept_words = lru_cache(maxsize=16_384)(_words)


def _drop_titles(ws: list[str]) -> list[str]:
    # Only leading titles, and never the last word: "Ms" alone is Mississippi, not a title.
    start = 0  # an index, not repeated slicing: a string of a million titles is read once
    while len(ws) - start > 1 and ws[start] in HONORIFICS:
        start += 1
    return ws[start:]


def _drop_post_nominals(ws: list[str]) -> list[str]:
    # Only behind two words or more: "Evelyn Sato MD" is Evelyn Sato, but in "John Do" "Do" is the name.
    end = len(ws)
    while end > 2 and ws[end - 1] in POST_NOMINALS:
        end -= 1
    return ws[:end]


GENERATIONAL = frozenset({"jr", "sr", "ii", "iii", "iv"})


def _last_first(text: str, keep_if: frozenset[str] = frozenset()) -> str:
    """"Whitman, Clara" -> "Clara Whitman", as a form or a list writes a name. A part after a comma
    that is only post-nominals or a generation ("Sato, MD", "Smith, Jr.") is not a first name, nor is
    one holding a word of `keep_if` (an organization's "Kessler, Inc.")."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) < 2:
        return str(text)
    tail = []
    while len(parts) > 1 and words(parts[-1]) and all(w in POST_NOMINALS or w in GENERATIONAL
                                                      for w in words(parts[-1])):
        tail.append(parts.pop())
    tail.reverse()
    if len(parts) == 2 and all(words(p) for p in parts) and not any(w in keep_if for p in parts for w in words(p)):
        parts = [parts[1], parts[0]]
    return " ".join([*parts, *tail])


def person(text: str) -> str:
    """"Dr. Evelyn Sato, MD" -> "evelyn sato"; "Sato, Evelyn" and "Évelyn Sato" too; suffixes such as
    Jr. are kept (they tell people apart)."""
    return " ".join(_drop_post_nominals(_drop_titles(words(_last_first(text, CORPORATE_SUFFIXES)))))


def organization(text: str) -> str:
    """"The Kessler Mfg. Co." -> "kessler manufacturing"; "Dana Cole, Esq." -> "dana cole"."""
    ws = words(text)
    if len(ws) > 1 and ws[0] == "the":
        ws = ws[1:]
    # Expanded first, so "Co." in the middle is "company" and at the end is dropped as a suffix.
    ws = [ORGANIZATION_ABBREVIATIONS.get(w, w) for w in ws]
    end = len(ws)
    while True:
        if end > 1 and ws[end - 1] in CORPORATE_SUFFIXES:
            end -= 1
        elif end > 2 and ws[end - 1] in POST_NOMINALS:  # "Cole Law Group, Esq." as for `person`
            end -= 1
        else:
            return " ".join(ws[:end])


def party(text: str) -> str:
    """A person or an organization: titles in front and corporate suffixes behind both go; a person
    written "Last, First" is the same person (never a company: "Kessler, Inc." stays Kessler)."""
    return organization(" ".join(_drop_titles(words(_last_first(text, CORPORATE_SUFFIXES | {"and"})))))


def identifier(text: str) -> str:
    """Case numbers, codes, member ids: "hr 24 0117" -> "HR240117"."""
    return re.sub(r"[^0-9A-Z]", "", str(text).upper())


def phone(text: str) -> str:
    """Digits only; "+1 (206) 555-0220" -> "2065550220"."""
    digits = re.sub(r"\D", "", str(text))
    if len(digits) == 11 and digits.startswith("1"):
        digits = digits[1:]
    return digits


def date(text: str) -> str:
    """An ISO calendar date; an ISO date-time counts by its day. Anything else stays as folded text.

    The tool server reads a date-time given for a `"format": "date"` parameter the same way, so a
    date-time where a date is asked is accepted by both or by neither.
    """
    raw = " ".join(str(text).split())
    timed = _ISO_DATETIME.fullmatch(raw.upper())
    day = timed.group(1) if timed else raw
    try:
        return dt.date.fromisoformat(day).isoformat() if _ISO_DATE.fullmatch(day) else raw.casefold()
    except ValueError:  # "2026-02-30"
        return raw.casefold()


def money(value: Any) -> str:
    """An amount to the cent: "$1,250", 1250 and "1250.00" are all "1250.00"."""
    raw = re.sub(r"[\s,$]|usd|dollars?", "", str(value).casefold())
    try:
        return str(Decimal(raw).quantize(Decimal("0.01")))
    except InvalidOperation:
        return str(value).casefold().strip()


_SPOKEN_EMAIL = [(re.compile(r"\s+at\s+"), "@"), (re.compile(r"\s+dot\s+"), "."),
                 (re.compile(r"\s+(underscore)\s+"), "_"), (re.compile(r"\s+(dash|hyphen)\s+"), "-")]


def email(text: str) -> str:
    """"Clara dot Whitman at example dot com" -> "clara.whitman@example.com"."""
    out = f" {str(text).casefold().strip()} "
    for pattern, symbol in _SPOKEN_EMAIL:
        out = pattern.sub(symbol, out)
    return re.sub(r"\s+", "", out)


_SCHEME = re.compile(r"[a-z][a-z0-9+.-]*://")
# Second-level labels under a country code that are registries, not names: "kestrel.co.uk".
_PUBLIC_SECOND_LEVEL = frozenset({"co", "com", "org", "net", "gov", "ac", "edu"})


def registrable_domain(host: str) -> str:
    """The domain someone registered: "support.kestrel.com" -> "kestrel.com".

    Without the public suffix list: the last two labels, three under a country code's registry
    ("shop.kestrel.co.uk" -> "kestrel.co.uk"). "kestrel.com.evil.net" is "evil.net".
    """
    labels = [label for label in host.casefold().strip(".").split(".") if label]
    if all(label.isdigit() for label in labels):  # an IP address is its own domain
        return ".".join(labels)
    keep = 3 if len(labels) > 2 and len(labels[-1]) == 2 and labels[-2] in _PUBLIC_SECOND_LEVEL else 2
    return ".".join(labels[-keep:])


def contact(text: str) -> str:
    """How someone was reached, as one value: phone digits, an email address, or a web domain.

    "+1 302-555-0188", "(302) 555-0188" -> "3025550188"; "Help AT Kestrel dot com" ->
    "help@kestrel.com"; "https://www.kestrel.com:443/help?x=1", "support.kestrel.com" -> "kestrel.com".
    """
    raw = " ".join(str(text).split()).casefold()
    raw = re.sub(r"^(tel|sms|mailto):", "", raw)
    if not re.search(r"[^\W\d_]", raw):  # no letters: a number, however it is punctuated
        return phone(raw)
    if not _SCHEME.match(raw):
        folded = email(raw)  # the spoken "at" and "dot", and no spaces
        if "@" in folded:
            local, _, host = folded.rpartition("@")
            return f"{local}@{host.strip('.')}"
        raw = folded
    scheme = _SCHEME.match(raw)  # anchored: a search would retry the letters at every offset (quadratic)
    host = raw[scheme.end():] if scheme else raw
    host = re.split(r"[/?#]", host, maxsplit=1)[0].rpartition("@")[2]  # no path, query, user
    host = re.sub(r":\d*$", "", host)  # no port
    return registrable_domain(host)


# Street words people shorten, each to the word it stands for, and the small words a place is said
# with ("the CVS on Lexington"), which do not change which place it is.
STREET_ABBREVIATIONS = {
    "st": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard", "dr": "drive",
    "ln": "lane", "pl": "place", "ct": "court", "pkwy": "parkway", "hwy": "highway", "sq": "square",
    "n": "north", "s": "south", "e": "east", "w": "west",
}
_PLACE_FILLER = frozenset({"the", "on", "at", "in", "by"})


def place(text: str) -> str:
    """A business known by where it is: "The CVS on Lexington Ave." -> "cvs lexington avenue". Another
    street, or another business on the same street, is another place."""
    return " ".join(STREET_ABBREVIATIONS.get(w, w) for w in words(str(text)) if w not in _PLACE_FILLER)


KINDS: dict[str, Callable[[Any], Any]] = {
    "organization": organization, "person": person, "party": party, "identifier": identifier,
    "phone": phone, "date": date, "money": money, "email": email, "contact": contact, "place": place,
}


def alias_fold(text: Any) -> str:
    """How an alias table matches a variant: case, punctuation and a leading title do not matter."""
    return " ".join(_drop_titles(words(str(text))))


_UNKNOWN = object()
KEYS_KEPT = 16_384  # values whose key a ValueKinds remembers (then it starts again)
KEPT_CHARS = 1_000  # a longer text is read afresh each time, never remembered (memory, not speed)


class ValueKinds:
    """A pack's kinds: the built-in normalizers plus its alias tables, for the verifier and the tools.

    `alias_tables` maps table name -> {canonical: [variants]} as written in `pack.json`.
    `ignore` maps table name -> {"words": [...], "numbers": bool} (`pack.json` alias_ignore): what a
    name may carry beside the variant without naming another value, such as a medication's dosage
    form and strength ("Retin-A cream 0.05%" is "Retin-A"). The pack declares these words, not this
    module: "solution" or "wash" is a dosage form in one table and part of a name in another.
    `collisions` lists variants that two canonical values claim once folded (a pack problem).
    An ignored part may still have to agree when both sides state it (`alias_ignore` "must_agree":
    `numbers`, and `forms`, groups of words that name one form): "tretinoin 0.1% cream" is not
    "tretinoin 0.05% cream", nor "clobetasol cream" "clobetasol ointment"; "tretinoin" is either.
    """

    def __init__(self, alias_tables: Mapping[str, Mapping[str, list[str]]] | None = None,
                 ignore: Mapping[str, Mapping[str, Any]] | None = None):
        self.ignore: dict[str, tuple[frozenset[str], bool]] = {
            table: (frozenset(w for word in spec.get("words", []) for w in words(word)), bool(spec.get("numbers")))
            for table, spec in (ignore or {}).items()}
        # table -> (numbers must agree, word -> its form group)
        self.agree: dict[str, tuple[bool, dict[str, int]]] = {
            table: (bool(spec["must_agree"].get("numbers")),
                    {w: i for i, group in enumerate(spec["must_agree"].get("forms", [])) for word in group
                     for w in words(word)})
            for table, spec in (ignore or {}).items() if spec.get("must_agree")}
        self.tables: dict[str, dict[str, str]] = {}
        self.variants = {t: {c: list(vs) for c, vs in m.items()} for t, m in (alias_tables or {}).items()}
        self.collisions: list[str] = []
        for table, mapping in (alias_tables or {}).items():
            folded: dict[str, str] = {}
            first: dict[str, str] = {}  # folded form -> the variant that claimed it
            for canon, variants in mapping.items():
                for variant in [canon, *variants]:
                    key = self.fold(table, variant)
                    if folded.get(key, canon) != canon:
                        self.collisions.append(f"{table}: {first[key]!r} ({folded[key]}) and {variant!r} ({canon}) "
                                               f"are both read as {key!r}")
                    folded[key] = canon
                    first.setdefault(key, variant)
            self.tables[table] = folded
        # key()'s answers for text and whole numbers: a run compares the same values again and again
        # (every row of every attempt against the same expected state). Keyed by type too: 1 is not "1".
        # The tables above are fixed once built: an answer is never stale.
        self._keys: dict[tuple[str | None, type, Any], Any] = {}

    def fold(self, table: str, value: Any) -> str:
        """The form in which `table` looks a variant up: `alias_fold`, less the words it ignores."""
        skip, numbers = self.ignore.get(table, (frozenset(), False))
        if not skip and not numbers:
            return alias_fold(value)
        # "100mg" is "100 mg"; "B12" stays one word (a letter then a digit is part of a name).
        ws = _drop_titles(words(re.sub(r"(\d)(?=[^\W\d_])", r"\1 ", str(value))))
        kept = [w for w in ws if w not in skip and not (numbers and w.isdigit())]
        # A name that is all form and strength ("cream", "40 mg") is not emptied into a match.
        return " ".join(kept) if kept else " ".join(ws)

    def known(self, kind: str) -> bool:
        return kind in KINDS or kind in self.tables

    def canonical(self, table: str, value: Any) -> str | None:
        """The canonical value an alias table gives `value`, or None when it lists no such variant."""
        return self.tables[table].get(self.fold(table, value))

    def key(self, kind: str | None, value: Any) -> Any:
        """The normal form of `value` read as `kind` (None: the general rule).

        A list of values of a declared kind (a set of offices) compares item by item, in any order.
        """
        if (value.__class__ is not str or len(value) > KEPT_CHARS) and value.__class__ is not int:
            return self._key(kind, value)
        memo = (kind, value.__class__, value)
        found = self._keys.get(memo, _UNKNOWN)
        if found is _UNKNOWN:
            if len(self._keys) >= KEYS_KEPT:
                self._keys.clear()
            found = self._keys[memo] = self._key(kind, value)
        return found

    def _key(self, kind: str | None, value: Any) -> Any:
        if isinstance(value, (list, tuple)) and kind is not None:
            return ("items", tuple(sorted((self.key(kind, v) for v in value), key=repr)))
        if value is None or kind is None or isinstance(value, (bool, list, tuple, dict)):
            return normalize(value)
        if kind in KINDS:
            if isinstance(value, (int, float)) and kind not in ("money", "phone", "identifier", "contact"):
                return normalize(value)
            return (kind, KINDS[kind](value))
        canon = self.canonical(kind, value)
        return ("alias", canon) if canon is not None else ("alias?", self.fold(kind, value))

    def same(self, kind: str | None, expected: Any, actual: Any) -> bool:
        return self.key(kind, expected) == self.key(kind, actual) and not self.disagree(kind, expected, actual)

    def stated(self, table: str, value: Any) -> tuple[frozenset[str], frozenset[int]]:
        """The strengths (numbers, as decimals) and forms (group numbers) `value` states, where the
        table says they must agree."""
        numbers, forms = self.agree.get(table, (False, {}))
        text = str(value)
        found = frozenset(str(Decimal(n).normalize()) for n in re.findall(r"\d+(?:\.\d+)?", text)) if numbers else frozenset()
        return found, frozenset(forms[w] for w in words(text) if w in forms)

    def disagree(self, kind: str | None, a: Any, b: Any) -> list[str]:
        """What two values of one alias table both state and state differently ("strength", "form"):
        a part only one of them states is no disagreement (omitting it stays right)."""
        if kind not in self.agree or a is None or b is None or isinstance(a, (list, tuple, dict, bool)) \
                or isinstance(b, (list, tuple, dict, bool)):
            return []
        (na, fa), (nb, fb) = self.stated(kind, a), self.stated(kind, b)
        return [what for what, x, y in (("strength", na, nb), ("form", fa, fb)) if x and y and x != y]
