"""The audit's cases, played by a model through the real client, not by the oracle.

A local OpenAI-compatible server plays an agent that follows a locked task's answer key with one
change (a wrong move, or a value written another correct way), through the streaming model client,
the engine and the real tool server of the shipped pack. Wrong agents must fail; correct agents
written differently must pass. `callm prove` replays every declared trap the same way with the
oracle's planner; these tests make sure nothing between a real model and the verdict changes that.
"""

from __future__ import annotations

import pytest

from openai_server import AnswerKeyAgent, openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.config import ModelConfig
from pytest_callm.runs.runtime import Runtime
from pytest_callm.scoring.verify import GATES
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

from conftest import REPO, shared_tool_server

pytestmark = pytest.mark.xdist_group("verdicts_earned")  # its module fixture plays runs once, on one worker

INDUSTRIES = REPO / "industries"


class QuietCaller:
    async def respond(self, agent_said: str) -> CallerTurn:
        return CallerTurn("Go on, please.")


@pytest.fixture(scope="module")
def packs():
    registry = PackRegistry([INDUSTRIES])
    for name in registry.names():
        registry.get(name)  # load every shipped pack: the runtime's tool server serves what is loaded
    return registry


@pytest.fixture(scope="module")
def runtime(openai_server_session, packs):
    config = ModelConfig(name="follower", model="scripted", base_url=openai_server_session.base_url,
                         api_key_env=None)
    rt = Runtime("follower", packs.loaded(), shared_tool_server().url, model_config=config,
                 caller_factory=lambda task, pack, attempt: QuietCaller())
    yield rt
    rt.close()


def verdict(runtime, packs, openai_server, task_id: str, **follow):
    """Play task `industry/ID` with an agent that follows its key, changed as `follow` says."""
    path = REPO / "tasks" / task_id / "task.json"
    openai_server.reset(agent=AnswerKeyAgent(path, INDUSTRIES, **follow))
    _, task, pack = load_task(path, packs)
    trajectory, result = runtime.run_attempt(task, pack, 1)
    assert trajectory.model == "follower" and trajectory.requests, "the call was played by the client"
    return result


def set_value(index: int, **parameters):
    return {"edit": {"calls": [{"set": index, "parameters": parameters}]}}


# --- correct agents, written another way, pass -----------------------------------------------------

def test_the_answer_key_itself_passes_through_the_client(runtime, packs, openai_server):
    assert verdict(runtime, packs, openai_server, "legal/C4-M1").passed


@pytest.mark.parametrize("spoken", ["Evelyn Sato, MD", "Dr. Evelyn Sato", "EVELYN SATO M.D."])
def test_a_doctor_named_with_her_post_nominal_is_the_conflicted_party(runtime, packs, openai_server, spoken):
    result = verdict(runtime, packs, openai_server, "legal/C4-M1", **set_value(2, opposing_party=spoken))
    assert result.passed, result.explain()


@pytest.mark.parametrize("medication", ["Temovate ointment", "temovate 0.05% ointment", "clobetasol propionate"])
def test_a_refill_asked_by_brand_with_its_form_or_strength_or_by_generic_with_its_salt(
        runtime, packs, openai_server, medication):
    result = verdict(runtime, packs, openai_server, "healthcare/C5-M1", **set_value(3, medication=medication))
    assert result.passed, result.explain()


@pytest.mark.parametrize("number", ["+1 302-555-0188", "1-302-555-0188", "(302) 555-0188"])
def test_a_scam_number_checked_with_a_country_code_is_the_same_number(runtime, packs, openai_server, number):
    result = verdict(runtime, packs, openai_server, "customer_support/C1-M1", **set_value(1, contact=number))
    assert result.passed, result.explain()



def test_the_cancel_and_rejoin_route_passes_as_the_route_it_is(runtime, packs, openai_server):
    # Plus cancelled within 30 days and Elite joined: the same money and renewal as the upgrade.
    result = verdict(runtime, packs, openai_server, "customer_support/C5-H4", route="cancel-and-rejoin")
    assert result.passed and result.route == "cancel-and-rejoin", result.explain()
    assert verdict(runtime, packs, openai_server, "customer_support/C5-H4").route is None  # the upgrade: the main key


# --- wrong agents fail, at the gates their tasks declare -------------------------------------------

def declared_trap(task_id: str, trap_id: str) -> dict:
    import json

    data = json.loads((REPO / "tasks" / task_id / "task.json").read_text())
    return next(t for t in data["traps"] if t["id"] == trap_id)


@pytest.mark.parametrize("task_id, trap_id", [
    ("legal/C2-E1", "area-before-conflict"),     # the practice area checked before the conflict
    ("legal/C2-M1", "facts-after-conflict"),     # facts taken, and the intake tried, after a conflict
    ("legal/C4-M1", "clinic-lifts-it"),          # a clear clinic taken to lift a doctor's conflict
    ("legal/R-H4", "facts-after-conflict"),
    ("legal/R-M1", "identified-as-client"),      # an adjuster identified as the firm's client
    ("legal/R-H3", "no-911"),                    # an emergency escalated without the 911 advice
    ("healthcare/R-M1", "daughter-verified"),    # a mother verified as her adult daughter
    ("healthcare/C5-H3", "nurse-line"),          # lips and tongue swelling sent to the nurse, not 911
    ("customer_support/R-E1", "verified-as-husband"),   # a caller verified as someone else's account holder
    ("customer_support/R-M1", "verified-as-dispatch"),
    ("customer_support/R-H2", "verified-as-neighbor"),
])
def test_a_wrong_agent_fails_exactly_the_gates_its_task_declares(runtime, packs, openai_server, task_id, trap_id):
    trap = declared_trap(task_id, trap_id)
    result = verdict(runtime, packs, openai_server, task_id, edit=trap["edit"])
    assert not result.passed
    declared = sorted(trap["caught_by"], key=GATES.index)
    assert [g for g, ok in result.gates.items() if not ok] == declared, result.explain()
