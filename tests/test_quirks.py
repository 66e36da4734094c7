"""The four provider quirks: each switch on makes its provider work, and off leaves requests alone."""

from __future__ import annotations

import json

import pytest

from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model.client import ModelRequestError
from pytest_callm.model.config import Quirks
from pytest_callm.model.quirks import CONNECTED_LINE, first_message_from_user, lift_tool_calls, tools_in_system_prompt
from test_client import REQUEST, TOOLS, ask

KNOWN = {"verify_owner", "book_appointment", "end_call"}
PYTHONIC = 'Let me check. [verify_owner(full_name="Dana Whitfield", phone="503-555-0142")] I found you, Dana.'
REJECTED = {"status": 400, "code": "tool_use_failed", "failed_generation": '<function=verify_owner{"full_name": ',
            "message": "Failed to call a function. Please adjust your prompt."}
GOOD_CALL = {"tool_calls": [{"name": "verify_owner", "arguments": {"full_name": "Dana Whitfield", "phone": "1"}}]}


# --- the first message comes from the user ------------------------------------------------------

def test_the_connected_line_goes_before_the_greeting():
    messages = [{"role": "assistant", "content": "Thanks for calling."}, {"role": "user", "content": "Hi."}]
    assert first_message_from_user(messages) == [{"role": "user", "content": CONNECTED_LINE}, *messages]
    assert first_message_from_user(messages[1:]) == messages[1:]


def test_a_provider_that_needs_the_user_first_answers_only_with_the_quirk(openai_server):
    openai_server.reset(require_user_first=True)
    with pytest.raises(ModelRequestError, match="first message after the system prompt must come from the user"):
        ask(openai_server)
    reply = ask(openai_server, {"text": "Hello."}, quirks=Quirks(first_message_from_user=True))
    assert reply.text == "Hello."
    assert openai_server.requests[-1]["messages"][1] == {"role": "user", "content": CONNECTED_LINE}
    assert openai_server.requests[-1]["messages"][2:] == REQUEST.messages


# --- tools in the system prompt -------------------------------------------------------------------

def test_tools_in_the_system_prompt_replace_the_api_field(openai_server):
    ask(openai_server, {"text": "Hi."})
    assert "tools" in openai_server.requests[-1]
    ask(openai_server, {"text": "Hi."}, quirks=Quirks(tools_in_system_prompt=True))
    body = openai_server.requests[-1]
    assert "tools" not in body
    system = body["messages"][0]["content"]
    assert system.startswith(REQUEST.system_prompt)
    assert json.dumps([t["function"] for t in TOOLS], indent=1) in system
    assert "[function_name(first_argument=" in system


def test_a_model_reading_its_tools_in_the_prompt_has_its_written_calls_lifted(openai_server):
    reply = ask(openai_server, {"text": '[end_call(reason="done")]'}, quirks=Quirks(tools_in_system_prompt=True))
    assert reply.text == "" and [(c.name, c.arguments) for c in reply.tool_calls] == [("end_call", {"reason": "done"})]


def test_no_tools_leave_the_system_prompt_unchanged():
    assert tools_in_system_prompt("Prompt.", []) == "Prompt."


# --- tool calls written in spoken text ------------------------------------------------------------

def test_calls_in_text_are_lifted_only_with_the_quirk(openai_server):
    reply = ask(openai_server, {"text": PYTHONIC})
    assert reply.text == PYTHONIC and reply.tool_calls == []
    reply = ask(openai_server, {"text": PYTHONIC}, quirks=Quirks(tool_calls_in_text=True))
    assert reply.text == "Let me check."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [
        ("verify_owner", {"full_name": "Dana Whitfield", "phone": "503-555-0142"})]
    assert "lifted 1 tool call(s)" in reply.notes[0]


def test_text_before_the_first_call_is_spoken_and_the_rest_dropped():
    text = 'One moment. [verify_owner(full_name="A", phone="1")] Between. [end_call()] After.'
    spoken, calls = lift_tool_calls(text, KNOWN)
    assert spoken == "One moment."
    assert [c.name for c in calls] == ["verify_owner", "end_call"]


def test_several_calls_in_one_list_are_lifted_in_order_with_distinct_ids():
    spoken, calls = lift_tool_calls('[verify_owner(full_name="A", phone="1"), book_appointment(slot_id="S-1", '
                                    'pet_name="Rex", urgent=true, minutes=-5, tags=["a", "b"])]', KNOWN)
    assert spoken == ""
    assert [c.name for c in calls] == ["verify_owner", "book_appointment"]
    assert calls[1].arguments == {"slot_id": "S-1", "pet_name": "Rex", "urgent": True, "minutes": -5, "tags": ["a", "b"]}
    assert len({c.id for c in calls}) == 2


def test_calls_to_unknown_tools_stay_spoken_text():
    for text in ('Try [delete_everything(now=True)] later.', '[verify_owner(full_name="A"), unknown_tool(x=1)]'):
        assert lift_tool_calls(text, KNOWN) == (text, [])


def test_brackets_inside_string_arguments_do_not_end_the_call():
    spoken, calls = lift_tool_calls('Sure. [verify_owner(full_name="O\'Brien [Jr.]", phone="(503) 555")]', KNOWN)
    assert spoken == "Sure."
    assert calls[0].arguments == {"full_name": "O'Brien [Jr.]", "phone": "(503) 555"}


def test_calls_that_are_not_plain_literals_stay_text():
    for text in ('[verify_owner("A", "1")]', '[verify_owner(full_name=name)]', '[verify_owner(**kw)]',
                 '[verify_owner(full_name="A"]', "[end_call()"):
        assert lift_tool_calls(text, KNOWN) == (text, []), text


# --- a rejected tool call is sent again -----------------------------------------------------------

def test_a_rejected_tool_call_is_sent_again_for_every_model(openai_server):
    reply = ask(openai_server, REJECTED, REJECTED, GOOD_CALL)  # no quirk asked for: the paper's rule
    assert [c.name for c in reply.tool_calls] == ["verify_owner"]
    openai_server.reset()
    reply = ask(openai_server, REJECTED, GOOD_CALL, quirks=Quirks(resend_rejected_tool_calls=0))
    assert (reply.text, reply.tool_calls) == ("", [])  # a config that lowers it: the model's empty reply, scored
    assert "tool call rejected 1 times; no reply" in reply.notes[-1]
    openai_server.reset()
    reply = ask(openai_server, REJECTED, REJECTED, GOOD_CALL, quirks=Quirks(resend_rejected_tool_calls=3))
    assert [c.name for c in reply.tool_calls] == ["verify_owner"]
    assert [r["status"] for r in openai_server.log] == [400, 400, 200]
    assert sum("resent after a rejected tool call" in n for n in reply.notes) == 2


def test_after_three_resends_the_model_has_no_reply(openai_server):
    reply = ask(openai_server, *[REJECTED] * 5, {"text": "never sent"}, quirks=Quirks(resend_rejected_tool_calls=3))
    assert reply.text == "" and reply.tool_calls == [] and reply.usage is None
    assert len(openai_server.log) == 4  # the first request and three resends
    assert "tool call rejected 4 times; no reply" in reply.notes[-1]


def test_a_rejection_sent_inside_the_stream_is_recognised(openai_server):
    in_stream = {"stream_error": {"message": "Failed to call a function.", "code": "tool_use_failed"}}
    reply = ask(openai_server, in_stream, GOOD_CALL, quirks=Quirks(resend_rejected_tool_calls=1))
    assert [c.name for c in reply.tool_calls] == ["verify_owner"]
