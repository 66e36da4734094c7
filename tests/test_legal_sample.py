"""The published sample task C4-H3, and the sample page's failing call scored by our verifier.

The page marks `phone=2065550220` against `206-555-0220` as a mismatch; the paper says phone
numbers are compared as digits. The paper wins: here the only differences the verifier reports
are the misheard incident date (tools and database) and nothing for the phone or the free-text note.
"""

from __future__ import annotations

import asyncio

import pytest

from conftest import REPO
from pytest_callm.call.engine import run_call
from pytest_callm.phone.line import CleanLine
from pytest_callm.call.oracle import OracleModel, ScriptedCaller, ScriptedModel, plan_answer_key
from pytest_callm.task.pack import PackRegistry
from pytest_callm.runs.runtime import make_call_id
from pytest_callm.task.task_file import load_task
from pytest_callm.toolserver.client import ToolClient
from pytest_callm.toolserver.server import ToolServer
from pytest_callm.scoring.verify import verify

SAMPLE = REPO / "tasks" / "legal" / "C4-H3" / "task.json"


@pytest.fixture(scope="module")
def legal():
    packs = PackRegistry([REPO / "industries"])
    _, task, pack = load_task(SAMPLE, packs)
    with ToolServer({pack.name: pack}) as server:
        yield task, pack, server.url


def play(model, pack, url):
    async def go():
        tools = ToolClient(url)
        try:
            return await run_call(pack=pack, model=model, caller=ScriptedCaller(model), line=CleanLine(),
                                  tools=tools, call_id=make_call_id("C4-H3", 1), task_id="C4-H3", attempt=1)
        finally:
            await tools.aclose()

    return asyncio.run(go())


def test_the_sample_task_is_reproduced_as_published(legal):
    task, pack, _ = legal
    assert task.title == "Employment intake in Washington with packet and note"
    assert task.raw["intent"].startswith('Open with exactly: "I was fired after I reported safety violations."')
    assert {t["trait_name"]: t["value"] for t in task.raw["traits"]} == {
        "full_name": "Clara Whitman", "practice_area": "employment", "state": "WA", "incident_date": "2026-04-05",
        "opposing_party": "Harborline Industries", "phone": "206-555-0220"}
    assert task.exp_handoff_path == ["screening", "intake"]
    assert [c.name for c in task.exp_tool_calls] == [
        "lookup_caller", "transfer_to_screening", "check_conflict", "check_practice_area", "check_jurisdiction",
        "calculate_filing_deadline", "transfer_to_intake", "record_intake", "add_intake_note", "send_intake_packet"]


def test_the_oracle_passes_the_sample(legal):
    task, pack, url = legal
    model = OracleModel(task, pack)
    trajectory = play(model, pack, url)
    model.after_call(trajectory.tool_calls)
    assert verify(task, pack, trajectory).passed


def test_the_sample_pages_failing_call_fails_only_on_the_misheard_date(legal):
    task, pack, url = legal
    plan = plan_answer_key(task, pack)
    for call in plan:  # what the model on the sample page did
        if call.name == "lookup_caller":
            call.arguments["phone"] = "2065550220"
        if "incident_date" in call.arguments:
            call.arguments["incident_date"] = "2026-05-05"
        if call.name == "record_intake":
            call.arguments["summary"] = ("Clara Whitman reported unsafe machine guards and blocked exits to HR at "
                                         "Harborline Industries in Washington and was fired the next day.")
        if call.name == "add_intake_note":
            call.arguments["note"] = "Client still has the original email sent to HR reporting the safety violations."
    verdict = verify(task, pack, play(ScriptedModel(plan), pack, url))
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    tools = "\n".join(verdict.tools.problems)
    assert "mismatched call: calculate_filing_deadline" in tools and "mismatched call: record_intake" in tools
    assert "incident_date: expected '2026-04-05', got '2026-05-05'" in tools
    assert "lookup_caller" not in tools  # phone numbers compare as digits (the paper's rule)
    assert "add_intake_note" not in tools  # the note is free text
    assert verdict.database.problems == [  # the deadline run on the misheard date is on the screening record too
        "screening_checks: row caller_id='c_new' differs: incident_date: expected '2026-04-05', got '2026-05-05'",
        "intakes: row caller_id='c_new' differs: incident_date: expected '2026-04-05', got '2026-05-05'"]


# --- how a value is written never matters; a different value always does ------------------------

def _written_differently(plan):
    for call in plan:
        if call.name == "lookup_caller":
            call.arguments["phone"] = "(206) 555-0220"
            call.arguments["full_name"] = "Ms. Clara Whitman"
        if call.name == "check_conflict":
            call.arguments["opposing_party"] = "Harborline Industries, Inc."
        if "state" in call.arguments:
            call.arguments["state"] = "Washington"
    return plan


def test_the_sample_passes_however_its_values_are_written(legal):
    task, pack, url = legal
    trajectory = play(ScriptedModel(_written_differently(plan_answer_key(task, pack))), pack, url)
    intake = trajectory.final_state["intakes"][-1]
    # The conflict check keeps the party as the agent wrote it; the intake records every party
    # checked, each read as the `party` kind, so the order of the checks does not matter.
    assert trajectory.final_state["conflict_checks"][-1]["party"] == "Harborline Industries, Inc."
    assert intake["opposing_party"] == "harborline industries"
    assert intake["caller_phone"] == "2065550220" and intake["state"] == "WA"
    verdict = verify(task, pack, trajectory)
    assert verdict.passed, verdict.explain()


def test_a_misheard_party_fails_the_tool_and_database_gates(legal):
    task, pack, url = legal
    plan = _written_differently(plan_answer_key(task, pack))
    next(c for c in plan if c.name == "check_conflict").arguments["opposing_party"] = "Harbor Lane Industries"
    verdict = verify(task, pack, play(ScriptedModel(plan), pack, url))
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    assert "opposing_party: expected 'Harborline Industries', got 'Harbor Lane Industries'" in verdict.explain()
    # The party is on the conflict check's row; the intake's list of parties is not compared again.
    assert verdict.database.problems == [
        "conflict_checks: row caller_id='c_new' differs: party: expected 'Harborline Industries', "
        "got 'Harbor Lane Industries'"]


def test_a_wrong_incident_date_fails_however_the_rest_is_written(legal):
    task, pack, url = legal
    plan = _written_differently(plan_answer_key(task, pack))
    for call in plan:
        if "incident_date" in call.arguments:
            call.arguments["incident_date"] = "2026-04-06"
    verdict = verify(task, pack, play(ScriptedModel(plan), pack, url))
    assert verdict.gates == {"tools": False, "handoff": True, "database": False, "words": True}
    assert "incident_date: expected '2026-04-05', got '2026-04-06'" in verdict.explain()


@pytest.fixture(scope="module")
def status_task():
    packs = PackRegistry([REPO / "industries"])
    _, task, pack = load_task(REPO / "tasks" / "legal" / "C5-E1" / "task.json", packs)
    return task, pack


@pytest.mark.parametrize("spoken", ["hr 24 0117", "HR240117", "H R 24-0117"])
def test_a_matter_number_passes_however_it_is_written(legal, status_task, spoken):
    task, pack = status_task
    plan = plan_answer_key(task, pack)
    for call in plan:
        if "matter_number" in call.arguments:
            call.arguments["matter_number"] = spoken
    trajectory = play(ScriptedModel(plan), pack, legal[2])
    verdict = verify(task, pack, trajectory)
    assert verdict.passed, verdict.explain()


def test_a_wrong_matter_number_fails_the_tool_gate(legal, status_task):
    task, pack = status_task
    plan = plan_answer_key(task, pack)
    for call in plan:
        if "matter_number" in call.arguments:
            call.arguments["matter_number"] = "HR-24-0171"
            call.expected_status = None
    trajectory = play(ScriptedModel(plan), pack, legal[2])
    verdict = verify(task, pack, trajectory)
    assert not verdict.tools.passed
    assert "matter_number: expected 'HR-24-0117', got 'HR-24-0171'" in verdict.explain()
