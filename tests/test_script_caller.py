"""The offline caller: it answers what the agent asks from the task's script, with no model."""

from __future__ import annotations

import asyncio
import json
import sys
from types import SimpleNamespace

import pytest

from pytest_callm.call.script import EVENT, OFFER, QUESTION, READBACK, read_script
from pytest_callm.call.script_caller import (CUES_FILE, GOODBYE, NOT_SURE, NOTHING_MORE, OpeningCaller,
                                             ScriptCaller, pack_cues)
from pytest_callm.rl.environment import CallEnvironment
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

from conftest import REPO, shared_tool_server

sys.path.insert(0, str(REPO / "benchmarks"))
from asking_policy import play_all  # noqa: E402

PACKS = PackRegistry([REPO / "industries" / p for p in ("legal", "healthcare", "customer_support")])


def task_and_pack(name: str):
    _, task, pack = load_task(REPO / "tasks" / name / "task.json", PACKS)
    return task, pack


def conversation(caller, *agent_turns: str) -> list[tuple[str, bool]]:
    """The caller's turns (text, hung up) to the greeting and then each agent turn."""
    async def play():
        return [await caller.respond(said) for said in ("Hello, how can I help?", *agent_turns)]
    return [(t.text, t.hang_up) for t in asyncio.run(play())]


def test_the_script_is_read_as_lines_with_their_kind_and_when_they_are_said():
    task, _ = task_and_pack("legal/C4-H2")
    script = read_script(task.raw)
    assert script.opening.startswith("My husband was killed last fall")
    by_say = {line.say: line for line in script.lines}
    assert by_say["Ruth Adeyemi."].kind == QUESTION and by_say["Ruth Adeyemi."].when == "When asked for your name"
    assert by_say["Text it to me, please."].kind == OFFER and by_say["Text it to me, please."].once
    assert by_say["No, November seventh. The fourteenth was his funeral."].kind == READBACK
    closing = by_say["Thank you. That's all for today."]
    assert closing.kind == EVENT and closing.ends_call and not by_say["Ruth Adeyemi."].ends_call
    # "Never say "Thank you. That's all for today." while ..." is no line to say
    assert sum(line.say == "Thank you. That's all for today." for line in script.lines) == 1


def test_the_caller_answers_each_question_with_its_scripted_line_and_corrects_a_wrong_read_back():
    task, pack = task_and_pack("legal/C4-H2")
    turns = conversation(
        ScriptCaller(task, pack, seed=1),
        "May I have your name?",
        "And a phone number where we can reach you?",
        "Let me read that back: 425-555-0187. Is that right?",
        "Who is the opposing party?",                    # the pack's cue: "who this would be against"
        "What was the date of the incident?",            # the script's slip: the funeral's date
        "Could you tell me briefly what happened?",      # where the script corrects it
        "So that was November 7, 2025, is that right?",
        "Would you like a free case evaluation?")
    said = [text for text, _ in turns]
    assert said[0] == task.raw["intent"].split('Open with exactly: "')[1].split('"')[0]
    assert said[1:3] == ["Ruth Adeyemi.", "425-555-0178."]
    assert said[3] == "No, that's not right. 425-555-0178."
    assert said[4] == "Summit Ridge Hauling. It was their truck."
    assert said[5] == "November fourteenth, twenty twenty-five."
    assert said[6].startswith("Wait, I gave you the wrong date before. It was Friday, November seventh.")
    assert said[7] == "Yes, November seventh."
    assert said[8] == "Not yet. I need to talk to my children first."  # an offer declined as the script says
    assert not any(hung for _, hung in turns)


def test_a_line_said_once_is_not_said_again_and_the_caller_hangs_up_only_on_a_closing_line_or_a_goodbye():
    task, pack = task_and_pack("customer_support/C1-E1")
    turns = conversation(
        ScriptCaller(task, pack, seed=1),
        "I'm sorry, the Portland store is closed on Sunday.",
        "I'm sorry, the Portland store is closed on Sunday.",
        "The Portland store's Saturday hours are 10 to 6. Can I help with anything else?",
        "The Portland store's Saturday hours are 10 to 6.")
    said = [text for text, _ in turns]
    assert said[1] == "Oh. What are its hours on Saturday, then?"
    assert said[2] != said[1]  # the first time only
    # The turn ends in a question: the caller answers it and stays on the line.
    assert turns[3] == ("No thanks, that's it.", False)
    assert turns[4] == ("Great, thanks. Bye.", True)
    assert conversation(ScriptCaller(task, pack, seed=1), "Thanks for calling, goodbye.")[1] == (GOODBYE, True)


def test_a_condition_fits_only_where_its_numbers_and_quantifiers_are_said_too():
    task, pack = task_and_pack("customer_support/C2-M3")
    # "If the agent says neither item can be matched ... end the call": one item refused is not neither
    turns = conversation(ScriptCaller(task, pack), "Items sold by marketplace sellers aren't eligible for a price match.")
    assert turns[1][0] != "Okay, thanks anyway. Bye." and not turns[1][1]
    task, pack = task_and_pack("healthcare/C2-H2")
    caller = ScriptCaller(task, pack)
    turns = conversation(caller, "May I have your name and date of birth?",
                         "Let me read that back: December 15, 1983. Is that right?")
    assert turns[1][0] == "Nadia Farouk, December fifteenth, nineteen eighty-three."  # the script's slip
    assert turns[2][0].startswith("No, sorry, I misspoke. It's December fifth")  # not the line for the fifth


def test_the_same_seed_gives_the_same_caller_and_an_unknown_question_gets_no_invented_answer():
    task, pack = task_and_pack("healthcare/C2-M3")
    agent = ["One moment.", "What's your name and date of birth?", "What is the square root of nine?",
             "Okay, one moment.", "How much would you like to pay today?"]
    first = conversation(ScriptCaller(task, pack, seed=3), *agent)
    again = conversation(ScriptCaller(task, pack, seed=3), *agent)
    assert first == again
    assert first[2][0].startswith("Ellen Kowalski") and first[3][0] == NOT_SURE
    assert first[5][0] == "Five hundred dollars today."


def test_facts_of_the_script_answer_questions_no_line_fits_and_pack_cues_join_other_words(tmp_path):
    pack_root = tmp_path / "pack"
    pack_root.mkdir()
    (pack_root / CUES_FILE).write_text(json.dumps({"cues": {"vehicle": ["car", "vehicle", "what you drive"]}}))
    raw = {"intent": 'You are calling about a dent. Your car is a blue 2019 Corolla. Open with exactly: "Hi." '
                     'When asked what you drive, say exactly: "A Corolla."'}
    task = SimpleNamespace(task_id="T-1", raw=raw)
    pack = SimpleNamespace(root=pack_root)
    turns = conversation(ScriptCaller(task, pack), "Which vehicle is it?", "Is your Corolla the blue one?")
    assert [t for t, _ in turns] == ["Hi.", "A Corolla.", "My car is a blue 2019 Corolla."]
    (pack_root / CUES_FILE).write_text(json.dumps({"cues": {"vehicle": "car"}}))
    pack_cues.cache_clear()
    with pytest.raises(ValueError, match=r"caller\.json: field 'cues'"):
        ScriptCaller(task, SimpleNamespace(root=pack_root))
    pack_cues.cache_clear()


def test_the_opening_caller_stays_as_a_smoke_test():
    task, pack = task_and_pack("legal/C1-E1")
    turns = conversation(OpeningCaller(task), "What is your name?", "Goodbye.")
    assert turns[0][0] == read_script(task.raw).opening and turns[1:] == [(NOTHING_MORE, False)] * 2
    with CallEnvironment([REPO / "tasks" / "legal" / "C1-E1"], root=REPO, line="clean", offline_caller="opening",
                         tools_in_process=True) as env:
        episode_id, first = env.reset("legal/C1-E1")
        step = env.step(episode_id, {"role": "assistant", "content": "What is your name?"})
        assert step.observation.new_messages == [{"role": "user", "content": NOTHING_MORE}]
    with pytest.raises(ValueError, match="offline_caller='nobody'"):
        CallEnvironment([REPO / "tasks" / "legal" / "C1-E1"], root=REPO, offline_caller="nobody")


def share(played) -> float:
    return sum(result.reward == 1.0 for _, result in played) / len(played)


def test_a_policy_that_asks_for_every_value_passes_with_the_offline_caller_and_fails_with_the_opening_one(capsys):
    """The must-hold, on one industry (the whole suite: the slow test below; benchmarks/asking_policy.py)."""
    asked = play_all([REPO / "tasks" / "legal"], seed=1, line="default", caller="script", root=REPO)
    smoke = play_all([REPO / "tasks" / "legal" / "C4-H2", REPO / "tasks" / "legal" / "C2-H3"], seed=1,
                     line="default", caller="opening", root=REPO)
    with capsys.disabled():
        print(f"\nquestion-asking key, legal: {share(asked):.1%} of {len(asked)} with the script caller")
    assert share(asked) >= 0.95, [n for n, r in asked if r.reward != 1.0]
    assert share(smoke) == 0.0  # asking the opening-line caller gets nothing


@pytest.mark.slow
def test_the_question_asking_key_passes_at_least_95_percent_of_the_locked_suite(capsys):
    played = play_all([REPO / "tasks"], seed=1, line="default", caller="script", root=REPO)
    with capsys.disabled():
        print(f"\nquestion-asking key: {share(played):.1%} of {len(played)} locked tasks with the script caller")
    assert len(played) == 180 and share(played) >= 0.95, [n for n, r in played if r.reward != 1.0]


def test_the_oracle_plays_its_key_against_the_offline_caller():
    """The oracle's caller is the offline one (as in training and every RL adapter): the saved call
    holds the script's opening line as the caller's words, and the key still passes."""
    from pytest_callm.runs.runtime import Runtime

    task, pack = task_and_pack("legal/C4-H2")
    runtime = Runtime("oracle", {pack.name: pack}, shared_tool_server().url)
    try:
        trajectory, verdict = runtime.run_attempt(task, pack, 2)
    finally:
        runtime.close()
    caller_said = [t.said for t in trajectory.transcript if t.role == "caller"]
    assert caller_said[0] == read_script(task.raw).opening
    assert verdict.passed, verdict.explain()
