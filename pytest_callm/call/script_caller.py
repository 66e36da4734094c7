"""The offline caller: answers what the agent asks from the task's script, with no model.

It says the script's opening line, then reads each agent turn the way the script is written: the
question at the end of the turn is matched to the script's conditional lines (`When asked for your
name, say exactly: ...`), an offer to its `If offered ...` lines, something the agent tells to its
`Once the agent has said ...` lines, and a read-back of what the caller said to its read-back lines.
So declines, corrections and refusals come exactly as the script words them, and a line the script
says once is said once. A number read back that the caller never said is corrected first (the
script's line for a wrong read-back, else the caller's own line that gave the number). A question no
line fits is answered from the script's facts ("Your card ends in 3350." becomes "My card ends in
3350."); a question none of them fits gets "I'm not sure." (The task's traits are not read: they hold
the truth a script may have the caller hide at first.) It hangs up with a line the script ends the
call on, or when the agent says goodbye, and never while the agent's turn ends in a question.

Matching is by content words in any inflection (`task.terms.stems`), numbers said in words read as
digits: a condition fits a sentence of the agent when at least half of the words of the smaller of
the two are shared. Where the agent's words and
the script's differ ("who this would be against" for "the opposing party"), the pack's
`caller.json` declares cues: groups of phrases that mean one thing to a caller. Industry knowledge
stays in the pack's file; this module knows only English.

Deterministic: the same task, seed and agent turns give the same caller turns (its few small words,
"Okay." or "Alright.", are drawn from a generator seeded by task and seed). `OpeningCaller` (its
opening line, then nothing useful) stays for smoke tests.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from pytest_callm.call.caller import CallerTurn
from pytest_callm.call.script import EVENT, OFFER, QUESTION, READBACK, Script, ScriptLine, first_person, read_script
from pytest_callm.phone.spoken_numbers import find_numbers
from pytest_callm.task.terms import Stems, stems

CUES_FILE = "caller.json"
NOT_SURE = "I'm not sure."
NOTHING_MORE = "I don't have anything else to add."
ACKNOWLEDGE = ("Okay.", "Alright.", "Okay, thanks.")
GOODBYE = "Okay, bye."
NOTHING_ELSE = "No, that's all."
_ANYTHING_ELSE = re.compile(r"\banything else\b", re.IGNORECASE)
_SENTENCE = re.compile(r"[^.?!]+[.?!]*")
_BYE = re.compile(r"\b(goodbye|good bye|bye)\b", re.IGNORECASE)
_CONFIRMING = re.compile(r"\b(right|correct|confirm|is that|did i get|have i got|that's)\b", re.IGNORECASE)
# Words that carry no meaning of their own in a condition or a question.
STOP = frozenset(stems(
    "a an the and or but of to for in on at by with from as is are was were be been being it its this that "
    "these those there here you your yours yourself me my i we our us he she they them his her their what "
    "which who whom whose when whenever where why how whether if once then after before first only do does "
    "did done have has had can could would will shall should may might must please just also any anything "
    "asked ask asks asking agent tell tells told say says said let know like want get give go now again "
    "read reads back right correct confirm "
    "still yet about so not no yes than up out into over okay ok sure"))


@dataclass(frozen=True)
class Cues:
    """A pack's cue groups: name -> phrases that mean it (`caller.json` "cues")."""

    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def found(self, text: str) -> tuple[set[str], set[str]]:
        """The cues a text holds, and the word stems their phrases cover there (counted once, as the cue)."""
        seen, found, covered = Stems(text), set(), set()
        for name, phrases in self.groups:
            hits = [p for p in phrases if seen.has(p)]
            if hits:
                found.add(f"cue:{name}")
                covered.update(w for p in hits for w in stems(p))
        return found, covered

    def __add__(self, other: Cues) -> Cues:
        return Cues(self.groups + other.groups)


# Words of a condition the agent's words must hold too, as its numbers: they turn what the rest says around.
QUANTIFIERS = frozenset(stems("neither both none either every all"))
# English, not any industry's: a question about a date asks "when"; a summary is an account.
ENGLISH_CUES = Cues((("when", ("when", "date", "what day", "which day", "what time")),
                     ("account", ("account", "summary", "description", "describe")),
                     ("short", ("short", "brief", "briefly", "quick")),
                     ("number", ("phone", "number")),
                     ("amount", ("amount", "how much"))))


@lru_cache(maxsize=16)
def pack_cues(pack_root: str) -> Cues:
    path = Path(pack_root) / CUES_FILE
    if not path.is_file():
        return Cues()
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e})") from None
    groups = raw.get("cues") if isinstance(raw, dict) else None
    if not isinstance(groups, dict) or not all(
            isinstance(v, list) and v and all(isinstance(p, str) and p.strip() for p in v) for v in groups.values()):
        raise ValueError(f"{path}: field 'cues' must map each cue name to a list of phrases")
    return Cues(tuple((name, tuple(phrases)) for name, phrases in groups.items()))


class Meaning:
    """The content words of a text, and the cues it holds."""

    def __init__(self, text: str, cues: Cues):
        found, covered = cues.found(text)
        self.words = {w for w in stems(_as_digits(text)) if w not in STOP and w not in covered} | found

    def fit(self, other: Meaning) -> tuple[float, int]:
        """How well two texts mean the same: the share of the smaller's words the other has, and how many."""
        if not self.words or not other.words:
            return 0.0, 0
        shared = len(self.words & other.words)
        return shared / min(len(self.words), len(other.words)), shared


@lru_cache(maxsize=20_000)
def meaning(text: str, cues: Cues) -> Meaning:
    """`Meaning(text, cues)`, kept: every attempt of a task reads the same script lines again (a tenth
    of an oracle attempt's time went to reading them), and agents say the same sentences."""
    return Meaning(text, cues)


def _as_digits(text: str) -> str:
    """Numbers said in words as their digits ("November seventh" is "November 7"), so a read-back in
    either form meets the script's."""
    out, at = [], 0
    for n in find_numbers(text):
        out.extend([text[at:n.start], f" {n.digits} "])
        at = n.end
    out.append(text[at:])
    return "".join(out)


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text or "") if s.strip()]


_CONDITIONAL = re.compile(r"^\W*(after that,?\s*)?(only\s+)?(when|whenever|if|once|after|the first time)\b",
                          re.IGNORECASE)


def _alternatives(line: ScriptLine) -> list[str]:
    """A condition's alternatives ("your name or date of birth": each), its whole self and its phrases.
    The word that makes it a condition goes ("When asked when it happened": "asked when it happened")."""
    when = _CONDITIONAL.sub("", line.when)
    parts = re.split(r",|\bor\b|\band\b|\(|\)", when)
    return [when, *(p for p in parts if p.strip()), *line.phrases]


class ScriptCaller:
    """One call's offline caller (`respond` is what the engine calls each turn)."""

    FIT = 0.5  # the least share of shared words for a condition to fit

    def __init__(self, task, pack, seed: int = 1, *, cues: Cues | None = None):
        self.task = task
        self.script: Script = read_script(task.raw)
        self.cues = ENGLISH_CUES + (cues if cues is not None else pack_cues(str(pack.root)))
        self.random = random.Random(f"{task.task_id}:{seed}")
        self.said: list[str] = []  # everything this caller has said, in order
        self.used: set[int] = set()  # lines said (a once line is not said again)
        self.turns = 0
        # A condition's alternatives; a piece that is only numbers ("nineteen eighty-three" of a date
        # cut at its comma) is part of a value, not a condition.
        self._alts = {ln.index: [m for m in (meaning(a, self.cues) for a in _alternatives(ln))
                                 if not all(w.isdigit() for w in m.words)] for ln in self.script.lines}
        self._facts = [(f, meaning(f, self.cues)) for f in self.script.facts]

    # --- matching --------------------------------------------------------------------------------

    def _best(self, kinds: tuple[str, ...], said: list[str], keep=None) -> ScriptLine | None:
        """The line of one of `kinds` whose condition best fits one of the agent's sentences `said`."""
        best, best_key = None, None
        targets = [meaning(s, self.cues) for s in said]
        for line in self.script.lines:
            if line.kind not in kinds or (line.once and line.index in self.used) or (keep and not keep(line)):
                continue
            for alt in self._alts[line.index]:
                for target in targets:
                    if {w for w in alt.words if w in QUANTIFIERS or w.isdigit()} - target.words:
                        continue  # "neither item", "December fifth": a quantifier or a number must be there too
                    share, shared = alt.fit(target)
                    key = (share, shared, -len(alt.words), -line.index)
                    if share >= self.FIT and (best_key is None or key > best_key):
                        best, best_key = line, key
        return best

    def _reads_back(self, question: str) -> bool:
        """Whether the agent's question repeats something the caller said: a number, a name, a month."""
        said = " ".join(self.said)
        numbers = {n.digits for n in find_numbers(said)}
        if any(n.digits in numbers for n in find_numbers(question)):
            return True
        names = {w for w in re.findall(r"\b[A-Z][a-z]+", said)}
        return any(w in names for w in re.findall(r"(?<=\w )[A-Z][a-z]+", question))

    def _misread(self, turn: str) -> str | None:
        """A number read back that the caller never said: corrected by the script's line for a wrong
        read-back when one fits, else by the caller's own line that said the number it meant."""
        if not _CONFIRMING.search(turn):
            return None
        said = {n.digits: text for text in self.said for n in find_numbers(text) if len(n.digits) >= 3}
        wrong = [n.digits for n in find_numbers(turn) if len(n.digits) >= 3 and n.digits not in said]
        if not wrong:
            return None
        line = self._best((READBACK,), [turn], lambda ln: not ln.say.lower().startswith("yes"))
        if line is not None:
            return line.say
        # The number the caller meant: the one it said of the same length, nearest in digits.
        close = [d for d in said if len(d) == len(wrong[0])] or list(said)
        if not close:
            return None
        meant = max(close, key=lambda d: sum(a == b for a, b in zip(d, wrong[0])))
        return f"No, that's not right. {said[meant]}"

    def _from_facts(self, question: str) -> str | None:
        target = meaning(question, self.cues)
        scored = [(m.fit(target), f) for f, m in self._facts]
        scored = [(s, f) for s, f in scored if s[0] >= self.FIT]
        return first_person(max(scored, key=lambda x: x[0])[1]) if scored else None

    def answer(self, agent_said: str) -> tuple[str, bool]:
        """What the caller says to one agent turn, and whether it hangs up."""
        parts = sentences(agent_said)
        questions = [s for s in parts if s.endswith("?")]
        question = questions[-1] if questions else None
        if question is not None:
            corrected = self._misread(agent_said)
            if corrected is not None:
                return corrected, False
            reads_back = self._reads_back(agent_said)
            kinds = (QUESTION, OFFER, READBACK) if reads_back else (QUESTION, OFFER)
            # A read-back is the whole turn ("Let me read that back: ... Is that right?").
            line = self._best(kinds, [agent_said] if reads_back else [question])
            if line is not None and line.before_answer:
                self.used.add(line.index)
                rest = self._best(kinds, [question])
                if rest is not None:
                    self.used.add(rest.index)
                return (f"{line.say} {rest.say}" if rest is not None else line.say), False
            if line is None:
                line = self._best((OFFER, EVENT), parts)
                line = line if line is not None and not line.ends_call else None
            if line is not None:
                self.used.add(line.index)
                return line.say, False
            if _ANYTHING_ELSE.search(question):
                return NOTHING_ELSE, False
            return self._from_facts(question) or NOT_SURE, False
        line = self._best((EVENT, OFFER), parts)
        if line is not None:
            self.used.add(line.index)
            return line.say, line.ends_call
        if _BYE.search(agent_said or ""):  # the agent said goodbye: so does the caller
            return GOODBYE, True
        return self.random.choice(ACKNOWLEDGE), False

    async def respond(self, agent_said: str) -> CallerTurn:
        self.turns += 1
        if self.turns == 1:
            text, hang_up = self.script.opening or "Hello?", False
        else:
            text, hang_up = self.answer(agent_said)
        self.said.append(text)
        return CallerTurn(text, hang_up=hang_up)


class OpeningCaller:
    """The smoke-test caller: the task's opening line, then `NOTHING_MORE` every turn. It never hangs
    up and answers nothing, so it suits policies that act on the task's facts (an answer-key policy),
    not learning to ask."""

    def __init__(self, task):
        self.opening = read_script(task.raw).opening or "Hello?"
        self.turns = 0

    async def respond(self, agent_said: str) -> CallerTurn:
        self.turns += 1
        return CallerTurn(self.opening if self.turns == 1 else NOTHING_MORE)


OFFLINE_CALLERS = {"script": ScriptCaller, "opening": OpeningCaller}


def make_offline_caller(kind: str, task, pack, seed: int):
    """The offline caller named `kind` ("script", the default, or "opening") for one call."""
    if kind == "script":
        return ScriptCaller(task, pack, seed)
    if kind == "opening":
        return OpeningCaller(task)
    raise ValueError(f"offline caller {kind!r}: 'script' (answers from the task's script) or 'opening' "
                     "(its opening line, then nothing: a smoke test)")
