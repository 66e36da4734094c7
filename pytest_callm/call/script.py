"""A task's caller script read as lines: what to say, and when (for the offline caller).

A task's `intent` is the locked caller script in prose: `When asked for your name, say exactly:
"Ruth Adeyemi."`, `If offered a case evaluation, say exactly: "Not yet."`, `Once the agent has said
the packet was sent, say exactly: "Thanks. Bye." End the call.` Every quoted line after `exactly:` is
one `ScriptLine`: the condition written before it, the kind of moment it answers (a question, an
offer, a read-back, something the agent tells, or the opening), whether it is said once only and
whether it ends the call. `scripted_responses` (the task file's structured form of some of these
lines) add their kind, their short match phrase and `occurrence_mode`. Sentences of the script that
state a fact ("Your billing ZIP code is 78704.") are kept too: the caller answers from them when no
line fits the question.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

QUESTION, OFFER, READBACK, EVENT, OPENING = "question", "offer", "readback", "event", "opening"

_QUOTE = re.compile(r'"([^"]*)"')
_EXACTLY = re.compile(r"exactly:\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ENDS_CALL = re.compile(r"\b(end the call|hang up)\b", re.IGNORECASE)
_ONCE = re.compile(r"\b(the first time|do not (ask|say) (that|this|it) again|only once|once only)\b", re.IGNORECASE)
# A line said before the answer to the agent's question, not instead of it.
_THEN_ANSWER = re.compile(r"^\s*and then answer", re.IGNORECASE)
_HIDDEN = re.compile(r"\b(wrong|slip|misspe\w*|mix\w*|at first|really|actually|pretend\w*)\b", re.IGNORECASE)
_INSTRUCTION = re.compile(r"\b(say|ask|answer|reply|tell|give|repeat|stay|never|always|do not|don't|accept|decline"
                          r"|refuse|insist|end the call|open with|pretend)\b", re.IGNORECASE)


@dataclass
class ScriptLine:
    say: str
    when: str  # the condition, as the script writes it
    kind: str  # QUESTION, OFFER, READBACK, EVENT or OPENING
    once: bool = False
    ends_call: bool = False
    before_answer: bool = False  # said first, then the agent's question is answered
    phrases: list[str] = field(default_factory=list)  # scripted_responses' match phrases for this line
    index: int = 0  # its place in the script


@dataclass
class Script:
    opening: str | None
    lines: list[ScriptLine]
    facts: list[str]  # sentences of the script that state something about the caller


def _kind(when: str) -> str:
    w = when.lower()
    if re.search(r"\bopen with\b", w):
        return OPENING
    if re.search(r"\bread(s|ing)? (\w+ )?back\b|\brepeats? (\w+ )?back\b", w):
        return READBACK
    if re.search(r"\b(offered|offers?|suggests?|proposes?)\b", w):
        return OFFER
    if re.search(r"\b(asked|asks?|asking)\b", w):
        return QUESTION
    return EVENT


def _condition(before: str) -> str:
    """The condition of a line: the text of its own sentence before `say exactly:`."""
    text = _EXACTLY.sub("", before).rstrip()
    text = re.sub(r",?\s*(first\s+)?(say|ask|answer|reply|tell|add|explain|insist)\w*(\s+\w+)?\s*$", "", text,
                  flags=re.IGNORECASE)
    parts = _SENTENCE_END.split(text)
    return parts[-1].strip(" ,;:") if parts else ""


def read_script(raw: dict) -> Script:
    """The lines and facts of one task's script (`raw`: the task file as JSON)."""
    intent = raw.get("intent") or ""
    pieces = _QUOTE.split(intent)  # even: prose; odd: quoted words
    opening: str | None = None
    lines: list[ScriptLine] = []
    for i in range(1, len(pieces), 2):
        before = pieces[i - 1]
        if not _EXACTLY.search(before):
            continue  # a quote that is not a line to say ("Never say "Bye" while ...")
        after = pieces[i + 1] if i + 1 < len(pieces) else ""
        # What the script adds after the line, up to the next line it quotes.
        rest = after if i + 2 >= len(pieces) or not _EXACTLY.search(after) else \
            _SENTENCE_END.split(after)[0] if _SENTENCE_END.search(after) else ""
        when = _condition(before)
        kind = _kind(when) if not re.search(r"\bopen with\s+exactly:\s*$", before, re.IGNORECASE) else OPENING
        if kind == OPENING:
            opening = opening or pieces[i]
            continue
        lines.append(ScriptLine(say=pieces[i], when=when, kind=kind,
                                once=bool(_ONCE.search(when) or _ONCE.search(rest[:120])),
                                ends_call=bool(_ENDS_CALL.search(rest.split('"')[0][:200])),
                                before_answer=bool(_THEN_ANSWER.search(after)), index=len(lines)))
    for r in raw.get("scripted_responses") or []:
        value, phrase = r.get("response_value"), r.get("match_phrase")
        match = [ln for ln in lines if ln.say == value]
        if not match and value:  # a line only the structured form holds
            line = ScriptLine(say=value, when=phrase or "", kind=_response_kind(r), index=len(lines))
            lines.append(line)
            match = [line]
        for line in match:
            if phrase:
                line.phrases.append(phrase)
            if r.get("occurrence_mode") == "first":
                line.once = True
    # Facts are "Your ..." sentences: "You ..." ones also tell the caller how to act, and what it hides
    # at first ("You have her name slightly wrong", "you get it wrong twice") must not be answered.
    facts = [s.strip() for piece in pieces[0::2] for s in _SENTENCE_END.split(piece)
             if re.match(r"\s*your\b", s, re.IGNORECASE) and not _INSTRUCTION.search(s) and not _HIDDEN.search(s)
             and len(s.split()) >= 4]
    return Script(opening=opening, lines=lines, facts=facts)


def _response_kind(response: dict) -> str:
    return {"question": QUESTION, "offer": OFFER}.get(response.get("match_type"), EVENT)


def first_person(sentence: str) -> str:
    """A fact of the script ("Your card ends in 3350.") as the caller says it ("My card ends in 3350.")."""
    swaps = {"your": "my", "yours": "mine", "you": "I", "you're": "I'm", "yourself": "myself", "are": "am"}
    out, after_you = [], False
    for word in sentence.split():
        bare = word.lower().strip(",.;:")
        if bare == "are" and not after_you:
            out.append(word)
            continue
        if bare in swaps:
            new = swaps[bare]
            new = new[0].upper() + new[1:] if word[0].isupper() and new != "I" else new
            out.append(new + word[len(bare):] if word.lower().startswith(bare) else new)
        else:
            out.append(word)
        after_you = bare == "you"
    return " ".join(out)
