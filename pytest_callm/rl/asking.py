"""The question-asking key: a scripted policy that plays the answer key, but asks for what it needs.

It plays the task's answer key one call per request, as the oracle does, with one difference: a
value the caller is to give (a constrained argument of the key that the task's script says in some
spelling and no earlier tool result holds) is not taken from the key. Before the call, the policy
asks for it in plain words built from the parameter's name ("Could you tell me the incident
date?"), and it writes the call only once the caller's words, as heard through the phone line, hold
that value (the verifier's own reader of heard values, `scoring/heard.py`, in the kind the pack
declares). A value not heard at once is read back as heard (a caller who misspoke corrects it), then
asked for again; a value still unheard after four tries is left out of the call, which then fails as the
key's calls without it fail. A free-text argument the pack says must hold the caller's words (a
summary of what happened) is asked for once, and a choice among a parameter's listed options (a
practice area, a topic) or a value the business publishes (its staff's names) is the agent's own
knowledge, taken from the key as the oracle takes it. The caller's account, with any correction the
script makes in it, is so heard before the call; and a tool's refusal is told to the caller in the
words the tool gives for it (`caller_safe_message`), as an agent would.

What it measures: whether a caller answers what it is asked. Played against the offline caller
(`script_caller.ScriptCaller`) on every locked task, it is the check that the offline caller gives a
policy every fact the key needs (`benchmarks/asking_policy.py` prints the share; docs/rl.md). It is
not a model: its questions come from parameter names, and the key decides which values to listen for.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from pytest_callm.call.oracle import ScriptedModel, _requests_this_turn, plan_answer_key
from pytest_callm.model.protocol import ModelReply, ModelRequest
from pytest_callm.phone.spoken_numbers import find_numbers
from pytest_callm.task.terms import Stems
from pytest_callm.scoring.heard import Heard
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task

MAX_ASKS = 4  # asks for one value before the policy gives up on it


_MONTH_DAY = re.compile(r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
                        r"\s+\d{1,2}(st|nd|rd|th)?(,?\s+\d{4})?")
_NAME = re.compile(r"(?<=\w )[A-Z][a-z]+(?: [A-Z][a-z]+)+")


def read_back(answer: str) -> str:
    """What a careful agent reads back of an answer: its dates, numbers and names, not its words."""
    dates = [m.group(0) for m in _MONTH_DAY.finditer(answer)]
    rest = _MONTH_DAY.sub(" ", answer)
    values = dates + [n.text for n in find_numbers(rest) if len(n.digits) >= 3] + _NAME.findall(rest)
    return ", ".join(values) or answer.rstrip(".")


def question_for(param: str, asked: int, last_answer: str) -> str:
    """The policy's question for a parameter: asked, then the last answer that held a value read back
    (a caller who misspoke corrects it), then asked again, plainer."""
    words = param.replace("_", " ")
    if asked == 1 and last_answer:
        return f"Let me read that back: {read_back(last_answer)}. Is that right?"
    return (f"Could you tell me the {words}?", f"Sorry, could you give me the exact {words}?",
            f"Sorry, could you give me the exact {words}?",
            f"I still need the exact {words}. What is it, please?")[min(asked, 3)]


def summary_question(param: str) -> str:
    return f"Could you tell me briefly, for the {param.replace('_', ' ')}, what happened?"


def holds(heard: Heard, pack: Pack, kind: str | None, value: Any) -> bool:
    """Whether `heard` holds `value` of `kind`: for an alias table of the pack, any of its spellings."""
    if isinstance(value, (list, tuple)):
        return all(holds(heard, pack, kind, v) for v in value)
    if isinstance(value, bool) or value is None:
        return False
    table = pack.values.tables.get(kind) if kind else None
    if table is not None:
        canonical = pack.values.canonical(kind, value) or value
        return any(heard.has(None, v) for v in [canonical, *table.get(canonical, [])])
    return heard.has(kind, value)


class QuestionAskingModel(ScriptedModel):
    name = "question-asking-key"

    def __init__(self, task: Task, pack: Pack, max_requests_per_turn: int = 8):
        super().__init__(plan_answer_key(task, pack), max_requests_per_turn, pack=pack)
        self.task = task
        self.script = Heard([task.raw.get("intent") or ""])
        self.published = Heard(pack.published_texts())  # what the business itself knows (its staff)
        self.asked: Counter[str] = Counter()
        self.told: set[str] = set()  # tool calls whose refusal the caller was told
        self.given_up: set[tuple[int, str]] = set()  # (plan position, parameter): played without it

    def caller_values(self, position: int, results: Heard) -> list[tuple[str, str | None, Any]]:
        """(parameter, kind, value) of the planned call that the caller is to give."""
        call = self.plan[position]
        if call.key_index is None:
            return []
        spec = self.pack.tools[call.name]
        given = self.task.exp_tool_calls[call.key_index].parameters
        out = []
        properties = spec.parameters.get("properties", {})
        for param, value in given.items():
            kind = spec.kinds.get(param)
            if "enum" in properties.get(param, {}):
                continue  # a choice among the tool's options: the agent's judgement of what it heard
            if param in spec.free_text or not holds(self.script, self.pack, kind, value) \
                    or holds(results, self.pack, kind, value) or holds(self.published, self.pack, kind, value):
                continue
            out.append((param, kind, value))
        return out

    def summaries(self, position: int) -> list[str]:
        """Free-text parameters of the planned call that must carry the caller's words."""
        call = self.plan[position]
        out = []
        for param in self.pack.tools[call.name].free_text:
            use = self.pack.words.use_of(call.name, param)
            if use is not None and use.must_hold:
                out.append(param)
        return out

    async def respond(self, request: ModelRequest) -> ModelReply:
        messages = request.messages
        last = messages[-1] if messages else {}
        if last.get("role") == "tool" and last.get("tool_call_id") not in self.told:
            self.told.add(last.get("tool_call_id"))
            result = json.loads(last.get("content") or "{}")
            if not result.get("ok") and result.get("caller_safe_message"):
                return ModelReply(text=result["caller_safe_message"], ttft_ms=0.0)  # what the tool says to say
        if self.finished or _requests_this_turn(messages) >= self.max_calls_per_turn:
            return await super().respond(request)
        heard = Heard([str(m.get("content") or "") for m in messages if m.get("role") == "user"])
        results = Heard([str(m.get("content") or "") for m in messages if m.get("role") == "tool"])
        for param in self.summaries(self.position):
            if not self.asked[f"summary:{param}"]:
                self.asked[f"summary:{param}"] += 1
                return ModelReply(text=summary_question(param), ttft_ms=0.0)
        for param, kind, value in self.caller_values(self.position, results):
            if holds(heard, self.pack, kind, value) or (self.position, param) in self.given_up:
                continue
            if self.asked[f"{param}={value}"] >= MAX_ASKS:
                self.given_up.add((self.position, param))
                continue
            self.asked[f"{param}={value}"] += 1
            # What is read back: the last caller turn that held a date, a number or a name.
            last = next((text for m in reversed(messages) if m.get("role") == "user"
                         and (text := str(m.get("content") or "")) and read_back(text) != text.rstrip(".")), "")
            return ModelReply(text=question_for(param, self.asked[f"{param}={value}"] - 1, last), ttft_ms=0.0)
        missing = {p for pos, p in self.given_up if pos == self.position}
        if missing:  # never heard: the call goes without it, never with the key's value
            call = self.plan[self.position]
            call.arguments = {k: v for k, v in call.arguments.items() if k not in missing}
        return await super().respond(request)

    def _written(self, call, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """As the oracle writes free text, and the key's own account also gains the domain terms the
        caller said that it leaves out (it was written for a caller who said less)."""
        out = super()._written(call, messages)
        heard = Stems(" ".join(str(m.get("content") or "") for m in messages if m.get("role") == "user"))
        for param in self.pack.tools[call.name].free_text:
            use = self.pack.words.use_of(call.name, param)
            if use is None or not use.must_hold or not isinstance(out.get(param), str):
                continue
            written = Stems(out[param])
            terms = [t for kind in use.must_hold for t in self.pack.words.terms.get(kind, ())
                     if heard.has(t) and not written.has(t)]
            if terms:
                out[param] = f"{out[param].rstrip('.')}; also: {', '.join(terms)}."
        return out
