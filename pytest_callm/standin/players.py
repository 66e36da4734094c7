"""The stand-in models: scripted players of many tasks at once, each answering as one model id.

They exist so that everything around a model can be seen working with no key and no weights (the
keyless demo, the RL docs' policy server, tests). They are not models and their scores say nothing
about any model. What each one reads:

- `KeyAgent` (the agents `stand-in-strong`, `stand-in-middling`, `stand-in-careless`) is a scripted
  policy that READS THE TASK'S ANSWER KEY: it tells the task from what the caller said (book.py),
  then makes the key's calls in order, one per request, as the oracle does. Its level of care plants
  its quality: on a share of the attempts (strong none, middling about 35%, careless about 80%) it
  makes one mistake a careless agent makes (a call skipped, a value mistyped, the call ended
  halfway), decided by a hash of the task and of what it heard, so it answers alike to alike, as a
  model at temperature 0 would, and differs between attempts only where the phone line made the
  caller's words differ. Its first token comes after a set delay (strong 1,200 ms, over the paper's
  1,000 ms line; middling 300 ms; careless 120 ms), so that speed and quality can be weighed.
- `BriefCaller` (`stand-in-caller`) plays the caller from the caller's brief alone, the same brief
  any caller model is sent (its system prompt): it opens with the script's first line, answers a
  question about itself from its traits, says the script's line whose cue best matches what the
  agent said, and hangs up when the agent says goodbye. It never sees the answer key.

Every player is a deterministic function of the request: no state is kept between requests, so any
number of calls can be in flight.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pytest_callm.call.oracle import PlannedCall, plan_answer_key
from pytest_callm.standin.answer_key import play_plan
from pytest_callm.standin.book import Entry, TaskBook, opening_line, quoted_lines, words

ASK_NAME = "I can help with that. May I have your full name and the phone number on your file, please?"
MAX_CALLS_PER_TURN = 7  # then a spoken line, so the caller hears the agent (the engine's bound is 8 requests a turn)


@dataclass(frozen=True)
class Care:
    """How carefully a stand-in agent plays the key: how often it makes one mistake, which kinds, and
    how fast its first token comes."""

    name: str
    mistake_share: float  # of the attempts, the share with one planted mistake
    mistakes: tuple[str, ...]  # drawn among: "skips_a_call", "mistypes_a_value", "ends_early"
    first_token_ms: float


STRONG = Care("stand-in-strong", 0.0, (), 1200.0)  # no planted mistake; slow: over the 1,000 ms line
MIDDLING = Care("stand-in-middling", 0.35, ("skips_a_call", "mistypes_a_value"), 300.0)
CARELESS = Care("stand-in-careless", 0.8, ("ends_early", "skips_a_call", "mistypes_a_value"), 120.0)
AGENTS = (STRONG, MIDDLING, CARELESS)
CALLER = "stand-in-caller"


def _draw(*parts: str) -> float:
    """A number in [0, 1) that depends only on the parts: the same conversation, the same choice."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2 ** 64


def _mistype(value: str) -> str:
    """A slip of the keyboard: the last digit one higher, else two letters swapped."""
    for i in range(len(value) - 1, -1, -1):
        if value[i].isdigit():
            return value[:i] + str((int(value[i]) + 1) % 10) + value[i + 1:]
    letters = [i for i in range(1, len(value) - 1) if value[i].isalpha() and value[i + 1].isalpha()
               and value[i] != value[i + 1]]
    if not letters:
        return value + "x"
    i = letters[len(letters) // 2]
    return value[:i] + value[i + 1] + value[i] + value[i + 2:]


def planted(plan: list[PlannedCall], entry: Entry, mistake: str) -> list[PlannedCall]:
    """The plan with one mistake of this kind, where the task allows one (else unchanged)."""
    tools = entry.pack.tools
    work = [i for i, c in enumerate(plan) if tools[c.name].kind == "industry"]
    if not work:
        return plan
    if mistake == "skips_a_call":  # the last piece of work: mostly the write that finishes the task
        return [c for i, c in enumerate(plan) if i != work[-1]]
    if mistake == "ends_early":  # half the work, then goodbye
        end = [c for c in plan if tools[c.name].ends_call]
        return plan[:work[len(work) // 2]] + end
    for i in reversed(work):  # "mistypes_a_value": the last compared text it types
        call = plan[i]
        compared = [p for p, v in call.arguments.items()
                    if isinstance(v, str) and v and p not in tools[call.name].free_text]
        if compared:
            arguments = {**call.arguments, compared[0]: _mistype(call.arguments[compared[0]])}
            return [*plan[:i], PlannedCall(call.name, arguments, None, call.key_index, call.agent), *plan[i + 1:]]
    return plan


class KeyAgent:
    """A stand-in agent: plays the answer key of the task it recognises, with its level of care."""

    def __init__(self, book: TaskBook, care: Care):
        self.book = book
        self.care = care
        self._plan = lru_cache(maxsize=4096)(self._plan_for)

    def _plan_for(self, name: str, heard_first: str) -> tuple[PlannedCall, ...]:
        entry = next(e for e in self.book.entries if e.name == name)
        plan = plan_answer_key(entry.task, entry.pack)
        if _draw(self.care.name, name, heard_first, "mistake?") < self.care.mistake_share:
            kinds = self.care.mistakes
            kind = kinds[int(_draw(self.care.name, name, heard_first, "which") * len(kinds))]
            plan = planted(plan, entry, kind)
        return tuple(plan)

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        step = self._step(body["messages"])
        step["delay_ms"] = self.care.first_token_ms
        return step

    def _step(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        asked = sum(1 for m in messages if m["role"] == "assistant" and m.get("content") == ASK_NAME)
        entry = self.book.for_agent(messages, sure_only=asked == 0)
        if entry is None:
            return {"text": ASK_NAME}  # two tasks open alike: who is calling decides
        heard_first = next(str(m.get("content") or "") for m in messages if m["role"] == "user")
        return play_plan(self._plan(entry.name, heard_first), messages, MAX_CALLS_PER_TURN)


# The agent asks about a trait when its turn names one of these words (trait name -> cue words).
TRAIT_CUES = {"full_name": {"name"}, "phone": {"phone", "number", "callback", "reach"},
              "date_of_birth": {"birth", "dob", "born"}, "email": {"email"}}
_GOODBYE = re.compile(r"\b(goodbye|good bye|bye|have a (?:good|great|nice) day|thank you for calling)\b", re.I)
_DONE_LINE = re.compile(r"that's all|that is all|goodbye|bye", re.I)
MAX_CALLER_TURNS = 24  # then it thanks the agent and hangs up (the engine's own bound is 30 exchanges)


class BriefCaller:
    """The stand-in caller: says what its brief tells it to, turn by turn; hangs up after goodbye."""

    def __init__(self, book: TaskBook):
        self.book = book

    def step(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        system = next((str(m.get("content") or "") for m in messages if m["role"] == "system"), "")
        entry = self.book.for_caller(system)
        said = [str(m["content"]) for m in messages if m["role"] == "assistant" and m.get("content")]
        agent_said = next((str(m.get("content") or "") for m in reversed(messages) if m["role"] == "user"), "")
        held = messages and messages[-1]["role"] == "tool"  # its hang-up was refused: the agent asked something
        raw = entry.task.raw
        intent = raw.get("intent", "")
        if not said:
            return {"text": opening_line(intent)}
        asking = agent_said.rstrip().rstrip("\"'").endswith("?") or held
        if len(said) >= MAX_CALLER_TURNS or (_GOODBYE.search(agent_said) and not asking):
            last = next((line for _, line in quoted_lines(intent) if _DONE_LINE.search(line) and line not in said),
                        "Thank you, goodbye.")
            return {"text": last, "tool_calls": [{"name": "hang_up", "arguments": {}}]}
        return {"text": self._answer(raw, intent, agent_said, said, asking)}

    @staticmethod
    def _answer(raw: dict[str, Any], intent: str, agent_said: str, said: list[str], asking: bool) -> str:
        """A trait when asked about one; else the script's line whose cue the agent's words match best."""
        heard = words(agent_said)
        if asking:
            traits = {t["trait_name"]: str(t["value"]) for t in raw.get("traits", [])}
            traits.setdefault("full_name", raw.get("customer_name", ""))
            answers = [value for trait, value in traits.items()
                       if value and heard & TRAIT_CUES.get(trait, set(trait.split("_")) - {"full"})]
            if answers:
                return ", ".join(dict.fromkeys(answers)) + "."
        opening = opening_line(intent)
        cued = [(len(heard & words(cue)), line) for cue, line in quoted_lines(intent)
                if line != opening and line not in said and not _DONE_LINE.search(line)]
        best = max(cued, default=(0, ""))
        if best[0] >= 2:
            return best[1]
        return "Yes, please go ahead." if asking else "Okay, thank you."
