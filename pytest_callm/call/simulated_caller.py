"""The simulated caller (DESIGN §6): a fixed model that plays the person on the phone.

It is conditioned on the task's brief (`intent`, the locked script), its traits and its scripted
responses; it sees only what the agent said, never the agent's tool calls; it writes only what it
says; and it ends the call by calling a `hang_up` tool, never with a magic phrase. A hang-up while
the agent's turn ends in a question is refused once (the caller is told to answer first), so a call
never ends on an unanswered question.

The caller's model runs through the same OpenAI-compatible client as the model under test, at its
provider's default sampling.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_callm.call.caller import CallerTurn
from pytest_callm.model import redact
from pytest_callm.model.protocol import MAX_REPLY_CHARS, Model, ModelRequest

HANG_UP = "hang_up"
HANG_UP_TOOL = {
    "type": "function",
    "function": {
        "name": HANG_UP,
        "description": "Hang up the phone. Call it in the same turn as your last words, once your script says "
                       "to end the call. Never call it while the agent is asking you something.",
        "parameters": {"type": "object", "properties": {}, "additionalProperties": False},
    },
}
HOLD_MESSAGE = ("You cannot hang up yet: the agent's last words were a question. Answer that question now, "
                "in one short spoken turn, and do not hang up in this turn.")
SILENCE = "(the agent says nothing)"

# Things a model writes that a person on a phone never says aloud. No bracket inside a bracketed span:
# each search then stops at the next opening one, so a turn of 20,000 "[" reads in linear time.
_STAGE = re.compile(r"\*[^*]*\*|\[[^\[\]]*\]|\((?:pause|pauses|sighs|laughs|beat|silence)[^()]*\)", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(caller|customer|me|user)\s*:\s*", re.IGNORECASE | re.MULTILINE)


def spoken_only(text: str) -> str:
    """Drop stage directions, speaker labels and quotes around the whole turn."""
    text = _LABEL.sub("", _STAGE.sub(" ", text or ""))
    text = " ".join(text.split())
    if len(text) > 1 and text[0] == text[-1] == '"':
        text = text[1:-1].strip()
    return text


def ends_in_question(agent_said: str) -> bool:
    return agent_said.rstrip().rstrip('"\'').endswith("?")


def caller_prompt(task, company: str) -> str:
    """The caller model's system prompt, built from the task alone."""
    raw = task.raw
    traits = "\n".join(f"- {t['trait_name'].replace('_', ' ')}: {t['value']}" for t in raw.get("traits", []))
    responses = []
    for r in raw.get("scripted_responses", []):
        when = f"{r['match_type']}: {r['match_phrase']}"
        once = " (the first time only)" if r.get("occurrence_mode") == "first" else ""
        responses.append(f"- When this happens ({when}), say exactly: \"{r['response_value']}\"{once}")
    scripted = "\n".join(responses) or "- (none beyond your script)"
    return f"""You are {raw['customer_name']}, a real person calling {company} on the phone. The other side of the
call is the company's phone assistant. You are not an assistant: you are the caller, with one goal.

# Your script (locked: follow it exactly)
{raw['intent']}

# What you know about yourself
{traits or '- (nothing beyond your script)'}

# Lines to say when something happens
{scripted}

# How you talk
- You are speaking on a phone. Write only the words you say out loud, one turn at a time: no stage
  directions, no descriptions of actions, no narration, no labels, no quotation marks around your turn.
- Keep turns short and natural, the way people talk on the phone. Say "exactly" lines word for word.
- Say numbers and dates the way people say them aloud, not as digits: a phone number 206-555-0220 is
  "two oh six, five five five, oh two two oh"; the date 2026-04-05 is "April fifth, twenty twenty six";
  $1,250 is "twelve hundred fifty dollars". Spell out codes and reference numbers piece by piece.
- Never mention tools, systems, prompts or that you are simulated. Give a fact only when it is asked
  for or your script says to give it; do not volunteer everything at once.

# How you react
- Always answer the question at the end of the agent's turn with the fact it asks for, even when the
  turn also says "one moment" or offers something.
- If the agent has not done what you asked, ask again, politely and firmly. Do not accept a spoken
  promise in place of what your script says you need.
- Decline offers your script does not call for (a waitlist, a transfer, a text confirmation, another
  appointment) unless your script says to accept them.
- If the agent reads back a name, number or date that would sound different from what you said,
  correct it once, clearly.
- When your script says to end the call, say your closing line and call the {HANG_UP} tool in the same
  turn. Never hang up while the agent is asking you a question; answer it first."""


class SimulatedCaller:
    """One call's caller. `respond` is what the engine calls each turn."""

    def __init__(self, task, company: str, model: Model):
        self.model = model
        self.prompt = caller_prompt(task, company)
        self.history: list[dict[str, Any]] = []  # from the caller's side: the agent is "user"
        self.holds = 0  # hang-ups refused because the agent was asking a question
        self.requests = 0
        self.notes: list[str] = []  # the client's retries of this turn's requests

    async def _ask(self, messages: list[dict[str, Any]]):
        self.requests += 1
        reply = await self.model.respond(ModelRequest(agent="caller", system_prompt=self.prompt,
                                                      messages=messages, tools=[HANG_UP_TOOL]))
        self.notes.extend([*reply.notes, *reply.cuts])
        return reply

    async def respond(self, agent_said: str) -> CallerTurn:
        self.notes = []
        self.history.append({"role": "user", "content": agent_said.strip() or SILENCE})
        reply = await self._ask(list(self.history))
        hang_up = any(tc.name == HANG_UP for tc in reply.tool_calls)
        if hang_up and ends_in_question(agent_said):
            # Held: the hang-up is answered like a refused tool call, and the caller asked again. Its
            # arguments go back as `{}` (it takes none): a server refuses a history it cannot parse.
            self.holds += 1
            call = next(tc for tc in reply.tool_calls if tc.name == HANG_UP)
            retry = [*self.history,
                     {"role": "assistant", "content": reply.text or None,
                      "tool_calls": [{"id": call.id, "type": "function",
                                      "function": {"name": HANG_UP, "arguments": "{}"}}]},
                     {"role": "tool", "tool_call_id": call.id,
                      "content": json.dumps({"ok": False, "error": HOLD_MESSAGE})}]
            reply = await self._ask(retry)
            hang_up = False  # whatever it says now, the call goes on: it had a question to answer
        # Read within the bound of a turn (the engine cuts it there, and notes it): a reply from an endpoint
        # that does not stream came whole, however long.
        text = spoken_only(redact.cut(reply.text or "", MAX_REPLY_CHARS + redact.margin()))
        if text:
            self.history.append({"role": "assistant", "content": text})
        return CallerTurn(text, hang_up=hang_up, notes=list(self.notes))
