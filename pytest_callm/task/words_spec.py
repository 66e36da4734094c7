"""What a pack tells the words gate (DESIGN §7b), read from its `words.json` and `rules.json`.

The engine reads the agent's speech and free text the same way for every pack; what it reads them
for is the pack's:

- `claims`      how an agent says it did an act ("booked", "cancelled"), per act, with the tools that
                do it: a claim with no successful call of one of them in the call is a false claim.
- `results`     statements a tool's result rules out ("no conflict" after check_conflict found one), in
                speech, or in the free text it `reads` (after a conflict, a handoff summary with facts).
- `free_text`   per read free-text argument (`tool.param`, `transfer_to_*` for every handoff): what it
                is for (`for`, for people), the kinds of domain term it must carry when the caller
                said them (`must_hold`), whether every word of it must be the caller's
                (`said_by_the_caller`: a pharmacy), whether its facts come from the call alone,
                never from the prompts (`from_the_call`: a message, a note, a summary of the
                caller's account), and what a rule forbids in it (`forbid`, the
                finders of scoring/free_text.py) with that rule's id.
- `terms`       the pack's checkable domain terms by kind (injuries, symptoms, products): a term the
                agent states must be grounded in the call, like a number; `terms_from_the_call` names
                the kinds the prompts never ground (the staff a tool assigned, a matter's stage);
                `terms_that_classify` the kinds an agent names in its own words to say what the
                call is about (a matter's type), which even a `from_the_call` text may take from
                the prompts.
- rule classes  in `rules.json`, a speech rule's `words`: the patterns of sentences that break it,
                the patterns that keep a sentence that matched (a refusal, a hand-off to staff), and
                labelled sentences of each side (`breaks`, `keeps`) in the pack's own words: `callm
                prove` prints each class's precision and recall on them, and they calibrate a judge.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Callable

WORDS_FILE = "words.json"
RULES_FILE = "rules.json"
READS = ("speech", "free_text")


@dataclass(frozen=True)
class RuleClass:
    """Sentences that break one speech rule, as patterns with their labelled examples."""

    rule: str
    finds: tuple[re.Pattern, ...]
    unless: tuple[re.Pattern, ...]
    breaks: tuple[str, ...]
    keeps: tuple[str, ...]
    reads: tuple[str, ...] = READS  # "speech", "free_text", or named free-text arguments ("transfer_to_*.handoff_summary")
    agents: tuple[str, ...] = ()  # the agents whose words it reads (empty: every agent)
    # Tools whose result, stated back, is no break: "Kestrel will refund the full price" after
    # check_recall returned that remedy is the recall read to the caller, not a promise of one's own.
    read_back: tuple[str, ...] = ()

    def reads_free_text(self, tool: str, param: str) -> bool:
        """Whether it reads this free-text argument: all of them, or the ones it names."""
        return "free_text" in self.reads or any(fnmatchcase(tool, w.partition(".")[0]) and w.partition(".")[2] == param
                                                for w in self.reads if "." in w)

    def hit(self, sentence: str) -> str | None:
        """The part of a normalized sentence that breaks the rule, or None. A refusal keeps only its
        own side of a "but": "I can't say much, but Dr. Sato is a client of ours" still says it."""
        for part in _BUT.split(sentence):
            for pattern in self.finds:
                m = pattern.search(part)
                if m and not any(u.search(part) for u in self.unless):
                    return m.group(0)
        return None


_BUT = re.compile(r",?\s+\bbut\b\s+")


@dataclass(frozen=True)
class Claim:
    """Words that claim an act, and the tools that do it."""

    says: tuple[str, ...]
    tools: tuple[str, ...]
    rule: str
    pattern: re.Pattern
    as_said: bool = False  # matched as written, as a summary says it ("refill sent")


@dataclass(frozen=True)
class ResultStatement:
    """Statements a tool's result rules out: `when` the result's data has these values (a dotted
    field reads into lists, where every item must have it: "appointments.location")."""

    tool: str
    when: dict[str, Any]
    contradicted_by: tuple[re.Pattern, ...]
    rule: str
    means: str  # what the result said, for people
    reads: tuple[str, ...] = ()  # free-text arguments ("tool.param", wildcards allowed) it reads; none: speech

    def reads_text(self, tool: str, param: str) -> bool:
        return any(fnmatchcase(tool, w.partition(".")[0]) and w.partition(".")[2] == param for w in self.reads)


@dataclass(frozen=True)
class Figure:
    """Which tool results a figure about one thing must come from: a date said about the booking is
    the booking's date, not another slot's; a refund is the refund, not the price paid."""

    about: re.Pattern  # words that make a clause about the thing ("refund", "get ... back")
    kinds: tuple[str, ...]  # fact kinds checked: money, percent, date, time, or a kind of `terms`
    sources: tuple[tuple[str, str], ...]  # (tool, result field or "*"); none: no tool gives such a figure
    means: str  # what the figure is, for people
    rule: str
    reads: tuple[str, ...] = ()  # free-text arguments ("tool.param") it reads too; speech always
    words: tuple[str, ...] = ()  # `about` as written

    def reads_text(self, tool: str, param: str) -> bool:
        return any(fnmatchcase(tool, w.partition(".")[0]) and w.partition(".")[2] == param for w in self.reads)


@dataclass(frozen=True)
class FreeTextUse:
    """One read free-text argument: what it is for and what it must and must not hold."""

    where: str  # "record_intake.summary", "transfer_to_*.handoff_summary"
    purpose: str
    must_hold: tuple[str, ...] = ()  # kinds of `terms` it carries when the caller said them
    forbid: tuple[str, ...] = ()  # finders of scoring/free_text.py
    rule: str | None = None
    said_by_the_caller: bool = False  # every word it holds is the caller's (a pharmacy the caller named)
    # Its facts come from this call (the caller's words, the call's tool results), never from the
    # prompts alone: the triage prompt lists bleeding, yet bleeding in a care-team message is the caller's.
    from_the_call: bool = False

    def applies(self, tool: str, param: str) -> bool:
        name, _, p = self.where.partition(".")
        return p == param and fnmatchcase(tool, name)


@dataclass(frozen=True)
class DisclosureSpec:
    """Where the pack keeps people and their records: the sources disclosure protects."""

    people_table: str
    id_column: str
    name_column: str
    records: dict[str, str]  # table -> the column naming whose record a row is
    rule: str
    # Tools whose success says the caller is not the person the call had verified (a daughter who gave
    # her mother's name and birth date): what the records told before is no longer theirs to hear.
    caller_is_not: tuple[str, ...] = ()


@dataclass(frozen=True)
class WordsSpec:
    classes: tuple[RuleClass, ...] = ()
    claims: tuple[Claim, ...] = ()
    results: tuple[ResultStatement, ...] = ()
    free_text: tuple[FreeTextUse, ...] = ()
    terms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    inventions_rule: str | None = None  # the house rule an invented fact breaks (`invented_facts_rule`)
    disclosure: DisclosureSpec | None = None
    speech_rules: dict[str, str] = field(default_factory=dict)  # every speech rule's id -> its sentence (a judge reads them)
    # Kinds of terms only the call grounds (heard, the script, a tool result), never the prompts: the
    # firm's staff are all named in its prompts, yet the attorney on a matter is the one a tool named.
    call_only_terms: tuple[str, ...] = ()
    figures: tuple[Figure, ...] = ()
    # A term said in one of several ways ("dr. rao", "anil rao"): every way -> the one it stands for.
    term_aliases: dict[str, str] = field(default_factory=dict)
    # Kinds of terms the agent names in its own words to say what a call is about ("retaliation" for
    # "fired after I reported it"): a text that carries the call's facts may hold them from the prompts.
    classifying_terms: tuple[str, ...] = ()

    def use_of(self, tool: str, param: str) -> FreeTextUse | None:
        return next((u for u in self.free_text if u.applies(tool, param)), None)


# How a sentence claims a done act: "I've booked", "it's been cancelled", "is now scheduled", "I sent".
_DONE_BY_ME = r"\b(?:i|we)(?:'ve| have|'ve just| have just| just| already| have already|'ve already)?\s+(?:now\s+|also\s+|successfully\s+|gone ahead and\s+)?"
_DONE_TO_IT = r"\b(?:is|are|was|were|has been|have been|'s been|'s|it's|that's)\s+(?:now\s+|all\s+|also\s+|been\s+|successfully\s+|already\s+)*"


def claim_pattern(says: list[str]) -> re.Pattern:
    """"..." in a claim stands for up to three words: "sent your ... refill" is "sent your Temovate refill"."""
    def one(w: str) -> str:
        return r"(?:\s+\S+){0,3}\s+".join(re.escape(part.strip()) for part in w.lower().split("..."))
    words = "|".join(one(w) for w in sorted(says, key=len, reverse=True))
    return re.compile(rf"(?:{_DONE_BY_ME}|{_DONE_TO_IT})(?:{words})\b")


def about_pattern(words: list[str]) -> re.Pattern:
    """Words that make a clause about one thing; "..." stands for up to five words ("get ... back")."""
    def one(w: str) -> str:
        return r"(?:\s+\S+){0,5}\s+".join(re.escape(part.strip()) for part in w.lower().split("..."))
    return re.compile(r"\b(?:" + "|".join(one(w) for w in sorted(words, key=len, reverse=True)) + r")\b")


def _compile(raw: Any, where: str, problems: list[str]) -> tuple[re.Pattern, ...]:
    out = []
    for i, text in enumerate(raw or []):
        try:
            out.append(re.compile(text, re.IGNORECASE))
        except (re.error, TypeError) as e:
            problems.append(f"{where}[{i}]: not a regular expression ({e})")
    return tuple(out)


def _strings(raw: Any, where: str, problems: list[str]) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(s, str) for s in raw):
        problems.append(f"{where}: expected a list of strings")
        return ()
    return tuple(raw)


def load_words(pack_dir: Path, tools: set[str], agents: set[str], problems: list[str],
               columns: dict[str, tuple[str, ...]] | None = None,
               seed_column: Callable[[str, str], list[str]] | None = None) -> WordsSpec:
    """The pack's words data; each problem names the file and the field."""
    classes, speech_rules = _load_classes(pack_dir / RULES_FILE, agents, problems)
    path = pack_dir / WORDS_FILE
    if not path.is_file():
        return WordsSpec(classes=classes, speech_rules=speech_rules)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        problems.append(f"{WORDS_FILE}: cannot be read as JSON ({e})")
        return WordsSpec(classes=classes, speech_rules=speech_rules)
    if not isinstance(raw, dict):
        problems.append(f"{WORDS_FILE}: expected an object")
        return WordsSpec(classes=classes, speech_rules=speech_rules)

    def known_tool(name: str, where: str) -> None:
        if not any(fnmatchcase(t, name) for t in tools):
            problems.append(f"{WORDS_FILE}: {where} names tool {name!r}, which tools.json does not declare")

    claims = []
    for i, c in enumerate(raw.get("claims", [])):
        where = f"claims[{i}]"
        says = _strings(c.get("says"), f"{WORDS_FILE}: {where}.says", problems)
        ctools = _strings(c.get("tools"), f"{WORDS_FILE}: {where}.tools", problems)
        for t in ctools:
            known_tool(t, f"{where}.tools")
        if "tools" not in c:
            problems.append(f"{WORDS_FILE}: {where}.tools: the tools that do the act ([] where no tool can)")
        if says:  # "as_said": the words claim the act as they stand ("your plan will cover it"), no "I've ..." needed
            pattern = about_pattern(list(says)) if c.get("as_said") else claim_pattern(list(says))
            claims.append(Claim(says, ctools, str(c.get("rule", "")), pattern, bool(c.get("as_said"))))
    results = []
    for i, r in enumerate(raw.get("results", [])):
        where = f"results[{i}]"
        known_tool(str(r.get("tool")), f"{where}.tool")
        if not isinstance(r.get("when"), dict):
            problems.append(f"{WORDS_FILE}: {where}.when: expected an object of result fields and values")
            continue
        reads = _strings(r.get("reads"), f"{WORDS_FILE}: {where}.reads", problems)
        for w in reads:
            if "." not in w:
                problems.append(f"{WORDS_FILE}: {where}.reads: {w!r} is not \"tool.parameter\"")
            else:
                known_tool(w.partition(".")[0], f"{where}.reads")
        results.append(ResultStatement(str(r["tool"]), dict(r["when"]),
                                       _compile(r.get("contradicted_by"), f"{WORDS_FILE}: {where}.contradicted_by", problems),
                                       str(r.get("rule", "")), str(r.get("means", "")), reads))
    terms = {}
    for kind, listed in (raw.get("terms") or {}).items():
        terms[kind] = tuple(t.lower() for t in _strings(listed, f"{WORDS_FILE}: terms.{kind}", problems))
    uses = []
    for where, spec in (raw.get("free_text") or {}).items():
        if "." not in where or not isinstance(spec, dict):
            problems.append(f"{WORDS_FILE}: free_text.{where}: expected \"tool.parameter\": {{...}}")
            continue
        known_tool(where.partition(".")[0], f"free_text.{where}")
        must = _strings(spec.get("must_hold"), f"{WORDS_FILE}: free_text.{where}.must_hold", problems)
        for kind in must:
            if kind not in terms:
                problems.append(f"{WORDS_FILE}: free_text.{where}.must_hold names {kind!r}, which terms does not declare")
        uses.append(FreeTextUse(where, str(spec.get("for", "")), must,
                                _strings(spec.get("forbid"), f"{WORDS_FILE}: free_text.{where}.forbid", problems),
                                spec.get("rule"), bool(spec.get("said_by_the_caller")),
                                bool(spec.get("from_the_call"))))
    figures = []
    for i, f in enumerate(raw.get("figures", [])):
        where = f"{WORDS_FILE}: figures[{i}]"
        about = _strings(f.get("about"), f"{where}.about", problems)
        kinds = _strings(f.get("kinds"), f"{where}.kinds", problems)
        for kind in kinds:
            if kind not in FIGURE_KINDS and kind not in terms and kind not in (raw.get("terms_from_seed") or {}):
                problems.append(f"{where}.kinds: {kind!r} is neither one of {', '.join(FIGURE_KINDS)} nor a kind of terms")
        sources = []
        for src in _strings(f.get("from"), f"{where}.from", problems):
            tool, _, fld = src.partition(".")
            known_tool(tool, f"figures[{i}].from")
            sources.append((tool, fld or "*"))
        if "from" not in f:
            problems.append(f"{where}.from: the tool results such a figure comes from ([] where no tool gives one)")
        reads = _strings(f.get("reads"), f"{where}.reads", problems)
        if about and kinds:
            figures.append(Figure(about_pattern(list(about)), kinds, tuple(sources), str(f.get("means", "")),
                                  str(f.get("rule", "")), reads, about))
    aliases: dict[str, str] = {}
    for kind, source in (raw.get("terms_from_seed") or {}).items():
        table, _, column = str(source).partition(".")
        if seed_column is None or columns is None or column not in columns.get(table, ()):
            problems.append(f"{WORDS_FILE}: terms_from_seed.{kind}: {source!r} is not a column of db/schema.sql")
            continue
        said_as = []
        for name in seed_column(table, column):
            for way in ways_to_say(name):
                aliases[way] = name.lower()
                said_as.append(way)
        terms[kind] = tuple(dict.fromkeys([*terms.get(kind, ()), *said_as]))
    disclosure = _load_disclosure(raw.get("disclosure"), columns, problems)
    for tool in disclosure.caller_is_not if disclosure else ():
        known_tool(tool, "disclosure.caller_is_not")
    call_only = _strings(raw.get("terms_from_the_call"), f"{WORDS_FILE}: terms_from_the_call", problems)
    classify = _strings(raw.get("terms_that_classify"), f"{WORDS_FILE}: terms_that_classify", problems)
    for key, kinds in (("terms_from_the_call", call_only), ("terms_that_classify", classify)):
        for kind in kinds:
            if kind not in terms:
                problems.append(f"{WORDS_FILE}: {key} names {kind!r}, which terms does not declare")
    return WordsSpec(classes, tuple(claims), tuple(results), tuple(uses), terms, raw.get("invented_facts_rule"),
                     disclosure, speech_rules, call_only, tuple(figures), aliases, classify)


FIGURE_KINDS = ("money", "percent", "date", "time", "number", "duration")
_TITLES = ("dr.", "dr")


def ways_to_say(name: str) -> list[str]:
    """How a person's name from the records is said: "Dr. Anil Rao" is also "Anil Rao" and "Dr. Rao"."""
    words = name.lower().replace(",", " ").split()
    title = words[0] if words and words[0] in _TITLES else None
    bare = words[1:] if title else words
    out = [" ".join(words), " ".join(bare)]
    if len(bare) >= 2:
        out += [f"dr. {bare[-1]}", f"dr {bare[-1]}"] if title else []
    return list(dict.fromkeys(w for w in out if w))


def _load_disclosure(raw: Any, columns: dict[str, tuple[str, ...]] | None, problems: list[str]) -> DisclosureSpec | None:
    if raw is None:
        return None
    where = f"{WORDS_FILE}: disclosure"
    people = raw.get("people") if isinstance(raw, dict) else None
    if not isinstance(people, dict) or not all(isinstance(people.get(k), str) for k in ("table", "id", "name")):
        problems.append(f"{where}.people: expected {{\"table\", \"id\", \"name\"}} naming the people table and its columns")
        return None
    records = raw.get("records") or {}
    if not isinstance(records, dict) or not all(isinstance(v, str) for v in records.values()):
        problems.append(f"{where}.records: expected {{table: the column naming whose record a row is}}")
        return None
    if columns is not None:
        wanted = [(people["table"], people["id"]), (people["table"], people["name"]), *records.items()]
        for table, column in wanted:
            if column not in columns.get(table, ()):
                problems.append(f"{where}: {table}.{column} is not a column of db/schema.sql")
    caller_is_not = _strings(raw.get("caller_is_not"), f"{where}.caller_is_not", problems)
    return DisclosureSpec(people["table"], people["id"], people["name"], dict(records), str(raw.get("rule", "")),
                          caller_is_not)


def _load_classes(path: Path, agents: set[str], problems: list[str]) -> tuple[tuple[RuleClass, ...], dict[str, str]]:
    if not path.is_file():
        return (), {}
    try:
        rules = json.loads(path.read_text(encoding="utf-8")).get("rules", [])
    except (OSError, ValueError, AttributeError) as e:
        problems.append(f"{RULES_FILE}: cannot be read ({e})")
        return (), {}
    out = []
    speech = {str(r.get("id")): str(r.get("rule", "")) for r in rules
              if isinstance(r, dict) and r.get("scored_by") == "speech"}
    for rule in rules:
        spec = rule.get("words") if isinstance(rule, dict) else None
        if spec is None:
            continue
        where = f"{RULES_FILE}: rule {rule.get('id')!r} words"
        reads = _strings(spec.get("reads", list(READS)), f"{where}.reads", problems)
        for r in reads:
            if r not in READS and not re.fullmatch(r"[\w*?]+\.\w+", r):
                problems.append(f"{where}.reads: {r!r} is not one of {', '.join(READS)} nor \"tool.parameter\"")
        bound = tuple(a for a in rule.get("agents", []) if a in agents) if spec.get("only_its_agents") else ()
        out.append(RuleClass(str(rule.get("id")), _compile(spec.get("finds"), f"{where}.finds", problems),
                             _compile(spec.get("unless"), f"{where}.unless", problems),
                             _strings(spec.get("breaks"), f"{where}.breaks", problems),
                             _strings(spec.get("keeps"), f"{where}.keeps", problems), reads, bound,
                             tuple(_strings(spec.get("read_back", []), f"{where}.read_back", problems))))
    return tuple(out), speech
