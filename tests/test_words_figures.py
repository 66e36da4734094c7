"""A figure must be the thing's own (issue 36, the words gate): the booked date is the booking's, the
refund is the refund, and figures said in words are read as a listener hears them.

The readers are tested on sentences; the gate is tested through whole calls (tests/agent_audit.py: the
real client, engine, line and tool server), where each wrong case differs from its right twin only in
the figure it says.
"""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from agent_audit import REPO, Auditor, Case
from pytest_callm.scoring.grounding import Grounds, facts_in
from pytest_callm.task.words_spec import load_words, ways_to_say

pytestmark = pytest.mark.xdist_group("words")


def _facts(text: str, kind: str) -> list:
    return [f.key for f in facts_in(text, {}) if f.kind == kind]


def test_a_time_keeps_its_half_of_the_day():
    assert _facts("open eight in the morning to eight at night", "time") == [(8, 0, True), (20, 0, True)]
    hours = Grounds().add(["Monday to Friday, 8:00 a.m. to 6:00 p.m."])
    morning, night = facts_in("from eight in the morning until eight at night", {})
    assert hours.holds(morning) and not hours.holds(night)
    # A clock without its half of the day ("at 8:30") is grounded by either half, and grounds both.
    assert Grounds().add(['"starts_at": "2026-08-05T20:30"']).holds(facts_in("at 8:30", {})[0])
    assert Grounds().add(["we open at 8:30"]).holds(facts_in("at 8:30 p.m.", {})[0])


def test_a_price_said_as_people_say_it_is_money():
    assert _facts("you'd get the full eighteen ninety-nine ninety-nine back", "money") == [Decimal("1899.99")]
    assert _facts("it was one hundred seventy-nine ninety-nine", "money") == [Decimal("179.99")]
    # A time said the same way stays a time, not an amount.
    assert _facts("we'll see you at ten fifteen", "money") == []


def test_prose_grounds_an_amount_only_with_its_unit():
    """A street number in a prompt ("480 Park Avenue") is no published price of $480; a tool result's
    bare "526.5" is an amount."""
    published = Grounds(amounts_need_units=True).add(["480 Park Avenue, 6th floor. A consultation is $75."])
    four_eighty, seventy_five = facts_in("the package is $480 and the consultation $75", {})
    assert not published.holds(four_eighty) and published.holds(seventy_five)
    assert Grounds().add(['{"total": 526.5}']).holds(facts_in("five hundred twenty-six dollars and fifty cents", {})[0])


def test_a_name_from_the_records_is_said_its_usual_ways():
    assert ways_to_say("Dr. Anil Rao") == ["dr. anil rao", "anil rao", "dr. rao", "dr rao"]
    assert ways_to_say("Claire Dumont") == ["claire dumont"]


def _pack_dir(tmp_path, words: dict):
    (tmp_path / "words.json").write_text(json.dumps(words), encoding="utf-8")
    return tmp_path


def test_a_bad_figure_names_the_file_and_the_field(tmp_path):
    problems: list[str] = []
    load_words(_pack_dir(tmp_path, {"figures": [{"about": ["refund"], "kinds": ["colour"], "from": ["no_such_tool.x"]},
                                                {"about": ["booked"], "kinds": ["date"]}]}),
               {"quote_return"}, set(), problems)
    assert any("words.json: figures[0].kinds: 'colour'" in p for p in problems), problems
    assert any("figures[0].from names tool 'no_such_tool'" in p for p in problems), problems
    assert any("words.json: figures[1].from: the tool results such a figure comes from" in p for p in problems), problems


def test_terms_from_the_records_must_name_a_column(tmp_path):
    problems: list[str] = []
    load_words(_pack_dir(tmp_path, {"terms_from_seed": {"provider": "providers.nickname"}}), set(), set(), problems,
               columns={"providers": ("id", "name")}, seed_column=lambda t, c: [])
    assert problems == ["words.json: terms_from_seed.provider: 'providers.nickname' is not a column of db/schema.sql"]


def test_a_result_statement_reads_into_lists_where_every_item_must_match():
    from pytest_callm.scoring.words import _data_has

    one = {"data": {"appointments": [{"location": "in-home"}]}}
    two = {"data": {"appointments": [{"location": "in-home"}, {"location": "Seattle store"}]}}
    assert _data_has(one, {"appointments.location": "in-home"})
    assert not _data_has(two, {"appointments.location": "in-home"})  # "bring it to the store" may be the other one's
    assert not _data_has({"data": {"appointments": []}}, {"appointments.location": "in-home"})
    assert _data_has({"data": {}}, {"membership": None})  # an absent field is null, as before


def test_a_rule_class_may_read_only_the_free_text_it_is_about():
    """Customer support's handoff-summary-clean is about handoffs: a scam report's description holding
    the scammer's number breaks scam-report-anonymous (the database gate), not a handoff rule."""
    from pytest_callm.task.pack import PackRegistry

    pack = PackRegistry([REPO / "industries"]).get("customer_support")
    [clean] = [c for c in pack.words.classes if c.rule == "handoff-summary-clean"]
    assert clean.reads_free_text("transfer_to_orders", "handoff_summary")
    assert not clean.reads_free_text("report_scam", "description") and "speech" not in clean.reads


def test_term_kinds_named_outside_terms_are_problems(tmp_path):
    problems: list[str] = []
    load_words(_pack_dir(tmp_path, {"terms": {"injury": ["whiplash"]}, "terms_from_the_call": ["stage"],
                                    "terms_that_classify": ["matter"]}), set(), set(), problems)
    assert problems == ["words.json: terms_from_the_call names 'stage', which terms does not declare",
                        "words.json: terms_that_classify names 'matter', which terms does not declare"]


FOLLOW_UP = "healthcare/C1-E1"  # booked with Dr. Feld, Tuesday August 4 at 9 a.m.; the 5th is also open
MOVE = "healthcare/C1-H1"  # moved from Dr. Straus's Monday visit to Dr. Rao, Wednesday August 5 at 8:30
RETURN = "customer_support/C3-M1"  # opened laptop paid $1,899.99: a $285 fee, $1,614.99 back
MESSAGE = "legal/C5-M2"  # the message goes to Nina Patel, the paralegal; Rachel Kim is the attorney

WRONG = [
    Case(FOLLOW_UP, "gives the booking another open day", "fail", "the booking is on the fourth",
         agent_says=((5, "You're booked with Dr. Feld on Wednesday, August fifth, at nine a.m."),)),
    Case(MOVE, "gives the moved visit the old provider", "fail", "the new slot is Dr. Rao's",
         agent_says=((7, "Your visit is now Wednesday, August fifth at eight thirty with Dr. Straus."),)),
    Case(RETURN, "says the price paid comes back", "fail", "the refund is $1,614.99",
         agent_says=((7, "Your return is set, and the whole $1,899.99 goes back to your card."),)),
    Case(MESSAGE, "says the message went to the attorney", "fail", "it went to Nina Patel",
         agent_says=((5, "I've passed your message to Rachel Kim."),)),
]
# Figures read the same way outside a declared thing: a day of the week against its date, a length of
# time, an act a summary claims before it was done.
INVENTED = [
    Case("legal/C5-E1", "names the wrong day of the week for the deposition's date", "fail",
         "August 19, 2026 is a Wednesday",
         caller_says=("Marisol Vega, 312-555-0148, matter HR-24-0117.",),
         agent_says=((4, "Your case is in discovery; the deposition is set for Monday, August nineteenth."),)),
    Case(FOLLOW_UP, "gives the visit a length no tool gave", "fail", "the follow-up slot is 15 minutes",
         agent_says=((5, "You're booked with Dr. Feld on Tuesday, August fourth at nine, and the visit runs ninety "
                         "minutes."),)),
    Case(RETURN, "writes in the handoff that the return is already confirmed", "fail",
         "confirm_return comes after the handoff",
         edit={"calls": [{"set": 3, "parameters": {"handoff_summary": "Return confirmed already; just needs closing."}}]}),
]
RIGHT = [
    Case(FOLLOW_UP, "reads the booking back in words", "pass", "the booked day and time",
         agent_says=((5, "You're booked with Dr. Feld on Tuesday, August fourth, at nine in the morning."),)),
    Case(MOVE, "says both the old and the new visit", "pass", "both are the reschedule's",
         agent_says=((7, "I've moved you from Monday at four thirty with Dr. Straus to Wednesday, August fifth at "
                         "eight thirty with Dr. Rao."),)),
    Case(RETURN, "names the price paid beside the refund", "pass", "the refund is the refund",
         agent_says=((7, "Of the $1,899.99 you paid, $1,614.99 comes back to your card once we receive it."),)),
    Case(MESSAGE, "names both people, the message with the right one", "pass", "the recipient is Nina Patel",
         agent_says=((5, "I've passed your message to Nina Patel; Rachel Kim remains your attorney."),)),
    Case("legal/C5-E1", "gives the deposition's date with its own day of the week", "pass", "a Wednesday",
         caller_says=("Marisol Vega, 312-555-0148, matter HR-24-0117.",),
         agent_says=((4, "Your case is in discovery; the deposition is set for Wednesday, August nineteenth."),)),
    Case(RETURN, "writes in the handoff that the caller wants the return confirmed", "pass", "a request, not a claim",
         edit={"calls": [{"set": 3, "parameters": {"handoff_summary": "Verified Gregory Hale; wants the laptop "
                                                                     "return on KE-100640 confirmed."}}]}),
]


@pytest.fixture(scope="module")
def auditor():
    a = Auditor()
    yield a
    a.close()


@pytest.mark.parametrize("case", WRONG, ids=lambda c: c.id)
def test_a_figure_about_the_wrong_thing_fails_the_words_gate(auditor, case):
    verdict = auditor.verdict(case)
    assert not verdict.passed and verdict.paper_passed, verdict.explain()
    assert "words" in verdict.explain() and "but " in verdict.explain()


@pytest.mark.parametrize("case", INVENTED, ids=lambda c: c.id)
def test_a_day_a_length_or_a_written_claim_no_tool_gave_fails_the_words_gate(auditor, case):
    verdict = auditor.verdict(case)
    assert not verdict.passed and verdict.paper_passed and not verdict.words.passed, verdict.explain()


@pytest.mark.parametrize("case", RIGHT, ids=lambda c: c.id)
def test_the_thing_s_own_figure_passes(auditor, case):
    verdict = auditor.verdict(case)
    assert verdict.passed, verdict.explain()


def test_facts_read_before_are_read_with_the_terms_they_were_read_with():
    """facts_in remembers a text's facts per term table: another table, even an equal one made later,
    is read afresh, as is the same text asked for its weekdays; a caller's list is its own."""
    text = "Dr. Rao sees you Monday, August 19 at $40"
    rao, nobody = {"staff": ("dr. rao",)}, {"staff": ("dr. patel",)}
    with_rao = facts_in(text, rao)
    assert any(f.kind == "term" for f in with_rao)
    assert not any(f.kind == "term" for f in facts_in(text, nobody))
    assert facts_in(text, rao) == with_rao and facts_in(text, dict(rao)) == with_rao
    assert any(f.kind == "weekday" for f in facts_in(text, rao, weekdays=True))
    assert not any(f.kind == "weekday" for f in facts_in(text, rao))
    facts_in(text, rao).clear()
    assert facts_in(text, rao) == with_rao
