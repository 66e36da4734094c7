"""The simulated caller: its prompt, what it is shown, how it speaks and how it hangs up."""

from __future__ import annotations

import asyncio
import json

import pytest

from pytest_callm.model.protocol import ModelReply, ToolCall
from pytest_callm.call.oracle import ScriptedModel, plan_answer_key
from pytest_callm.call.simulated_caller import HANG_UP, SimulatedCaller, caller_prompt, spoken_only
from pytest_callm.scoring.verify import verify


class CallerModel:
    """Stands in for the caller's model: replies from a list, records every request it gets."""

    name = "caller-double"

    def __init__(self, *replies):
        self.replies = list(replies)
        self.requests = []

    async def respond(self, request):
        self.requests.append(request)
        reply = self.replies.pop(0) if self.replies else ("Okay.", False)
        text, hang_up = reply
        calls = [ToolCall(f"h{len(self.requests)}", HANG_UP, "{}")] if hang_up else []
        return ModelReply(text=text, tool_calls=calls)


def test_the_prompt_holds_the_brief_traits_and_scripted_responses(load_task, vet_pack):
    task = load_task("C2-H1")
    prompt = caller_prompt(task, vet_pack.company)
    assert task.raw["intent"] in prompt
    assert "- full name: Lena Fischer" in prompt and "- phone: 971-555-0110" in prompt
    assert 'say exactly: "Actually, make it a dental cleaning instead, his teeth are the real problem."' in prompt
    assert "Cedar Ridge Veterinary Clinic" in prompt
    assert "hang_up" in prompt and "Never hang up while the agent is asking you a question" in prompt


def test_the_caller_hears_only_speech_never_tool_calls(load_task, vet_pack, play):
    task = load_task("C2-E2")
    caller_model = CallerModel(("Hi, I'd like to book a check-up for my dog Biscuit.", False),
                               ("It's Dana Whitfield, five oh three, five five five, oh one four two.", False),
                               ("Perfect, thank you.", True))
    agent = ScriptedModel(plan_answer_key(task, vet_pack), max_requests_per_turn=3)
    trajectory = play(agent, SimulatedCaller(task, vet_pack.company, caller_model))
    seen = json.dumps([r.messages for r in caller_model.requests])
    for call in trajectory.tool_calls:
        assert call.name not in seen  # not the tool names
        assert json.dumps(call.result)[:40] not in seen  # nor their results
    assert all(m["role"] in ("user", "assistant") for r in caller_model.requests for m in r.messages)
    assert [t["function"]["name"] for t in caller_model.requests[0].tools] == [HANG_UP]
    assert trajectory.end_reason in ("caller_hangup", "agent_end_call")


def test_a_hang_up_while_the_agent_asks_a_question_is_held_until_answered(load_task, vet_pack):
    task = load_task("C2-E2")
    model = CallerModel(("Bye then.", True), ("Sorry, yes: it's Dana Whitfield.", True))
    caller = SimulatedCaller(task, vet_pack.company, model)
    turn = asyncio.run(caller.respond("I can book that. May I have your full name?"))
    assert turn == type(turn)("Sorry, yes: it's Dana Whitfield.", hang_up=False)
    assert caller.holds == 1
    second = model.requests[1].messages
    assert second[-2]["tool_calls"][0]["function"]["name"] == HANG_UP
    assert "the agent's last words were a question" in json.loads(second[-1]["content"])["error"]


def test_a_hang_up_after_a_statement_ends_the_call(load_task, vet_pack):
    caller = SimulatedCaller(load_task("C2-E2"), vet_pack.company, CallerModel(("Perfect, thank you.", True)))
    turn = asyncio.run(caller.respond("You're booked for Wednesday at ten with Dr. Patel."))
    assert (turn.text, turn.hang_up, caller.holds) == ("Perfect, thank you.", True, 0)


def test_the_caller_keeps_its_own_side_of_the_conversation(load_task, vet_pack):
    model = CallerModel(("Hi.", False), ("Dana.", False))
    caller = SimulatedCaller(load_task("C2-E2"), vet_pack.company, model)
    asyncio.run(caller.respond("Hello, how can I help?"))
    asyncio.run(caller.respond("What's your name?"))
    assert model.requests[1].messages == [{"role": "user", "content": "Hello, how can I help?"},
                                          {"role": "assistant", "content": "Hi."},
                                          {"role": "user", "content": "What's your name?"}]


def test_stage_directions_and_labels_are_never_spoken():
    assert spoken_only("*sighs* Caller: I was [pauses] fired (pause) last week.") == "I was fired last week."
    assert spoken_only('"Email is fine."') == "Email is fine."
    assert spoken_only("Two oh six, five five five.") == "Two oh six, five five five."


def test_a_call_with_the_caller_scores_like_any_other(load_task, vet_pack, play):
    task = load_task("C2-E1")
    caller_model = CallerModel(("Hi, are you open on Saturday, and until what time?", False),
                               ("Great, thanks, that's all.", True))
    agent = ScriptedModel(plan_answer_key(task, vet_pack))
    trajectory = play(agent, SimulatedCaller(task, vet_pack.company, caller_model))
    assert trajectory.transcript[1].said == "Hi, are you open on Saturday, and until what time?"
    assert verify(task, vet_pack, trajectory).passed


# --- the line's rewrite model (--callm-line-model) ------------------------------------------------

class RewriteModel:
    name = "rewrite-double"

    def __init__(self, text):
        self.text = text
        self.requests = []

    async def respond(self, request):
        self.requests.append(request)
        return ModelReply(text=self.text)


def test_the_rewrite_model_words_a_misheard_span_and_sees_the_turn():
    from pytest_callm.phone.rewriter import misheard_rewriter

    model = RewriteModel('"Whitmore."')
    context = {"type": "misheard_name", "turn": "It's Clara Whitman.", "suggestion": "Wittman"}
    assert asyncio.run(misheard_rewriter(model)("Whitman", context)) == "Whitmore"
    sent = model.requests[0].messages[0]["content"]
    assert "It's Clara Whitman." in sent and "Span: Whitman" in sent and "misheard name" in sent


def test_a_chatty_or_unchanged_rewrite_falls_back_to_the_dictionary():
    from pytest_callm.phone.rewriter import misheard_rewriter

    context = {"type": "misheard_word", "turn": "I was fired.", "suggestion": "hired"}
    for reply in ("", "fired", "Sure! Here is a plausible misheard version of the word you gave me"):
        assert asyncio.run(misheard_rewriter(RewriteModel(reply))("fired", context)) == "hired"


def test_a_line_with_a_rewrite_model_uses_its_wording(load_task):
    from pytest_callm.phone.line import make_line
    from pytest_callm.phone.rewriter import misheard_rewriter

    model = RewriteModel("Whitmore")
    said = "Hi, this is Dana Whitfield calling about my dog Biscuit and my cat Pepper."
    for attempt in range(1, 400):  # the seeded draws decide which attempt mishears a span
        line = make_line("default", "C2-E2", attempt, "Dana Whitfield", rewriter=misheard_rewriter(model))
        heard = asyncio.run(line.atransmit(said, 0))
        rewritten = [e for e in heard.errors if e.get("type", "").startswith("misheard") and e.get("after") == "Whitmore"]
        if rewritten:
            assert "Whitmore" in " ".join(heard.pieces)
            return
    pytest.fail("no attempt drew a misheard span")
