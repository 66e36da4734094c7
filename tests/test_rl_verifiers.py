"""The `verifiers` adapter (pytest_callm/rl/verifiers_env.py), run by verifiers itself.

verifiers' own `evaluate` plays each rollout against a real OpenAI-compatible server on loopback
(tests/openai_server.py) whose agent follows a task's answer key, through the real tool server of
the shipped legal pack. legal/C4-H3 hands off twice (front desk -> screening -> intake), so the
requests show how a handoff reaches the policy.
"""

from __future__ import annotations

import asyncio
import json

import pytest

vf = pytest.importorskip("verifiers",
                         reason="the verifiers extra is not installed: pip install 'pytest-callm[verifiers]'")

from openai import AsyncOpenAI  # noqa: E402

from conftest import REPO, shared_tool_server  # noqa: E402
from openai_server import (AnswerKeyAgent, ScriptCaller, openai_server,  # noqa: E402,F401  (fixtures)
                           openai_server_session)
from pytest_callm.model.config import ModelConfig  # noqa: E402
from pytest_callm.rl.dataset import dataset_row  # noqa: E402
from pytest_callm.scoring.verdict import score  # noqa: E402
from pytest_callm.task.pack import PackRegistry  # noqa: E402
from pytest_callm.toolserver.server import ToolServer  # noqa: E402


def adapter():
    """pytest_callm.rl.verifiers_env, imported by the first test that needs it, not when pytest collects
    this module: verifiers brings anthropic's client, 3 CPU seconds every xdist worker paid at collection."""
    from pytest_callm.rl import verifiers_env

    return verifiers_env


TASK = "legal/C4-H3"
TASK_FILE = REPO / "tasks" / TASK / "task.json"
INDUSTRIES = REPO / "industries"


def load(**arguments):
    # The way a lab loads any verifiers environment: by module name. Its tools on this process's tool
    # server (conftest.shared_tool_server), unless in process; the test of the default splits below
    # loads one that starts its own.
    if not arguments.get("tools_in_process"):
        arguments.setdefault("tool_server_url", shared_tool_server().url)
    return vf.load_environment("pytest_callm.rl.verifiers_env", tasks=[TASK], root=REPO, **arguments)


@pytest.fixture(scope="module")
def env():
    environment = load()
    yield environment
    environment.close()


@pytest.fixture(scope="module")
def replacing_env():
    environment = load(handoff="replace")
    yield environment
    environment.close()


def evaluate(env, server, **follow):
    """One rollout per dataset row through verifiers' `evaluate`, the agent following the key as `follow` says."""
    server.reset(agent=AnswerKeyAgent(TASK_FILE, INDUSTRIES, **follow))
    return rollout(env, server)


def rollout(env, server):
    async def go():
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=server.base_url, api_key="test"))
        return await env.evaluate(client, "scripted", state_columns=["callm"], on_progress=lambda *a: None)

    outputs = asyncio.run(go())["outputs"]
    assert len(outputs) == 1
    return outputs[0]


def agent_prompts():
    pack = PackRegistry([INDUSTRIES]).get("legal")
    return pack, {name: agent.prompt for name, agent in pack.agents.items()}


def test_a_policy_following_the_answer_key_scores_1_with_every_gate(env, openai_server):
    output = evaluate(env, openai_server)
    assert output.get("error") is None, output.get("error_chain")
    assert output["reward"] == 1.0
    assert {k: output["metrics"][k] for k in ("gate_tools", "gate_handoff", "gate_database")} == \
        {"gate_tools": 1.0, "gate_handoff": 1.0, "gate_database": 1.0}
    assert output["callm"]["passed"] and output["callm"]["end_reason"] == "agent_end_call"
    assert output["callm"]["progress"]["matched_calls"] == output["callm"]["progress"]["expected_calls"] > 0
    # The dataset row's prompt is the rollout's first request, word for word.
    row = env.get_eval_dataset()[0]
    first = openai_server.requests[0]
    assert [(m["role"], m["content"]) for m in first["messages"]] == [(m["role"], m["content"]) for m in row["prompt"]]
    assert sorted(t["function"]["name"] for t in first["tools"]) == \
        sorted(t["name"] for t in json.loads(row["info"])["tool_defs"])
    # One format: `callm export`'s row of the task for that seed, carried in `info`, plus verifiers' own keys.
    info = json.loads(row["info"])
    shared = info["callm_row"]
    exported = json.loads(json.dumps(dataset_row(*env.calls.task(shared["task"]), [shared["seed"]])))
    assert shared == {**{k: v for k, v in exported.items() if k != "prompt"}, "seed": shared["seed"]}
    # The export's prompt, then the caller's first words as heard.
    assert [(m["role"], m["content"]) for m in row["prompt"][:2]] == [(m["role"], m["content"]) for m in exported["prompt"]]
    assert [t["name"] for t in info["tool_defs"]] == [t["function"]["name"] for t in shared["tools"]]


def test_with_the_tools_in_process_a_rollout_scores_the_same_and_no_tool_server_starts(openai_server):
    env = load(tools_in_process=True)
    try:
        assert env.calls.runtime.tool_server_url is None and env.calls.runtime._server is None
        right = evaluate(env, openai_server)
        assert right.get("error") is None, right.get("error_chain")
        assert right["reward"] == 1.0
        trap = next(t for t in json.loads(TASK_FILE.read_text())["traps"] if t["id"] == "packet-by-text")
        wrong = evaluate(env, openai_server, edit=trap["edit"])
        assert wrong["reward"] == 0.0 and wrong["callm"]["gates"] == {"tools": False, "handoff": True, "database": False, "words": True}
    finally:
        env.close()


@pytest.mark.parametrize("handoff", ["append", "replace"])
def test_a_handoff_gives_the_next_request_the_new_agents_prompt_and_tools(request, openai_server, handoff):
    env = request.getfixturevalue({"append": "env", "replace": "replacing_env"}[handoff])
    assert env.handoff == handoff
    evaluate(env, openai_server)
    pack, prompts = agent_prompts()
    requests = openai_server.requests
    # The request right after the screening handoff's tool result.
    after = next(r for r in requests if any(m["role"] == "tool" and "screening" in m["content"] for m in r["messages"]))
    assert sorted(t["function"]["name"] for t in after["tools"]) == sorted(pack.agents["screening"].tools)
    systems = [m["content"] for m in after["messages"] if m["role"] == "system"]
    if env.handoff == "append":  # the history grows: the old prompt stays, the new one follows the tool result
        assert systems == [prompts[pack.entry_agent], prompts["screening"]]
        assert after["messages"][-1] == {"role": "system", "content": prompts["screening"]}
    else:  # one system prompt, the active agent's, as the benchmark shows it
        assert systems == [prompts["screening"]] and after["messages"][0]["role"] == "system"
    last = requests[-1]
    assert sorted(t["function"]["name"] for t in last["tools"]) == sorted(pack.agents["intake"].tools)


def test_changing_one_constrained_value_scores_0_with_the_failing_gates_visible(env, openai_server):
    trap = next(t for t in json.loads(TASK_FILE.read_text())["traps"] if t["id"] == "packet-by-text")
    output = evaluate(env, openai_server, edit=trap["edit"])  # the packet sent by text, not email
    assert output.get("error") is None and output["reward"] == 0.0
    failing = sorted(g for g in ("tools", "handoff", "database") if output["metrics"][f"gate_{g}"] == 0.0)
    assert failing == sorted(trap["caught_by"]) == ["database", "tools"]
    assert output["callm"]["gates"] == {"tools": False, "handoff": True, "database": False, "words": True}
    assert output["callm"]["progress"]["failed_gates"] == ["tools", "database"]
    assert "channel" in json.dumps(output["callm"]["verdict"]["tools"])


@pytest.mark.parametrize("follow", [{}, {"edit": {"calls": [{"set": 7, "parameters": {"state": "OR"}}]}}],
                         ids=["key", "wrong-state"])
def test_the_reward_is_the_benchmark_verdict_on_the_rollouts_own_trajectory(env, openai_server, follow):
    openai_server.reset(agent=AnswerKeyAgent(TASK_FILE, INDUSTRIES, **follow))

    async def go():  # verifiers' per-rollout API, then its rubric, as a trainer's loop calls them
        client = vf.OpenAIChatCompletionsClient(AsyncOpenAI(base_url=openai_server.base_url, api_key="test"))
        state = await env.rollout(env.get_eval_dataset()[0], client, "scripted", {})
        await env.rubric.score_rollout(state)
        return state

    state = asyncio.run(go())
    task, pack = env.calls.task(TASK)
    verdict = score(task, pack, state["callm_trajectory"])
    assert state["reward"] == (1.0 if verdict.passed else 0.0) == (0.0 if follow else 1.0)
    assert state["callm"]["gates"] == verdict.gates


def test_a_rollout_verifiers_stops_before_the_call_ends_is_the_policys_failure(env, openai_server):
    env.set_kwargs(max_turns=3)  # verifiers' setter for trainers
    try:
        output = evaluate(env, openai_server)
    finally:
        env.set_kwargs(max_turns=-1)
    assert output["stop_condition"] == "max_turns_reached" and output.get("error") is None
    assert output["reward"] == 0.0 and output["callm"]["passed"] is False
    assert output["callm"]["end_reason"] == "context_overflow"  # the engine's end for a policy that cannot go on
    assert not env.calls._running, "the call was ended, its database gone"


def test_a_model_caller_opens_the_rows_and_plays_the_call(openai_server):
    # The simulated caller on a model config: here the same local server, which answers the
    # requests offering `hang_up` with these lines (ScriptCaller) and the agent's with the key.
    lines = ["Hi, I was fired after I reported safety violations at work."] + ["Yes, that's right."] * 10 + ["Bye."]
    openai_server.reset(agent=AnswerKeyAgent(TASK_FILE, INDUSTRIES), caller=ScriptCaller(lines))
    caller = ModelConfig(name="caller", model="scripted", base_url=openai_server.base_url, api_key_env=None)
    env = load(caller=caller)
    try:
        row = env.get_eval_dataset()[0]
        assert [m["role"] for m in row["prompt"]][-1] == "user"  # the caller's opening, as heard
        built = len(openai_server.requests)
        output = rollout(env, openai_server)
    finally:
        env.close()
    assert output.get("error") is None and output["reward"] == 1.0, output.get("callm")
    requests = openai_server.requests
    assert ScriptCaller.is_caller_request(requests[0])  # the row was the caller's opening through the line
    # The rollout's call started afresh, and the caller's same opening made the same first request.
    first = next(r for r in requests[built:] if not ScriptCaller.is_caller_request(r))
    assert [(m["role"], m["content"]) for m in first["messages"]] == [(m["role"], m["content"]) for m in row["prompt"]]
    assert sum(ScriptCaller.is_caller_request(r) for r in requests[built:]) >= 2  # its opening, then its turns


class StopsToolServer:
    """The answer-key agent, which stops the tool server when the `at`-th policy request arrives."""

    def __init__(self, agent: AnswerKeyAgent, server: ToolServer, at: int):
        self.agent, self.server, self.at, self.seen = agent, server, at, 0

    def step(self, body):
        self.seen += 1
        if self.seen == self.at:
            self.server.stop()
        return self.agent.step(body)


@pytest.mark.parametrize("stop_at", [0, 3], ids=["before-the-call", "mid-call"])
def test_a_tool_server_that_fails_is_an_error_not_a_verdict(openai_server, stop_at):
    packs = PackRegistry([INDUSTRIES])
    packs.get("legal")
    server = ToolServer(packs.loaded()).start()
    env = adapter().load_environment(tasks=[TASK], root=REPO, tool_server_url=server.url)
    try:
        env.get_eval_dataset()  # the rows are built while the server is up
        if stop_at == 0:
            server.stop()
        openai_server.reset(agent=StopsToolServer(AnswerKeyAgent(TASK_FILE, INDUSTRIES), server, stop_at))
        output = rollout(env, openai_server)
    finally:
        server.stop()
        env.close()
    assert output["error"] is not None and "InfraError" in output["error_chain"], output.get("error_chain")
    assert "ToolServerError" in output["error_chain"]
    assert output["stop_condition"] == "has_error"
    assert output["callm"] is None  # no verdict: verifiers' reward number there is not a score
    assert len(openai_server.requests) == stop_at  # the rollout stopped at the failure


@pytest.mark.parametrize("arguments, named", [
    ({"industry": "plumbing"}, "plumbing"),
    ({"tasks": ["legal/NOPE-1"]}, "legal/NOPE-1"),
    ({"handoff": "merge"}, "merge"),
    ({"seeds": []}, "seeds"),
    ({"caller": "gpt-4.1-mini"}, r"caller='gpt-4.1-mini' reads its API key from \$OPENAI_API_KEY"),
])
def test_bad_arguments_are_named_before_anything_starts(arguments, named, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the bundled config's key, unset
    with pytest.raises(ValueError, match=named):
        adapter().load_environment(root=REPO, **arguments)


def test_by_default_the_training_split_is_the_shipped_training_tasks_and_the_evaluation_split_the_locked_suite():
    """Trained on `training/` (callm generate: fresh people and facts), evaluated on the locked suite;
    tasks named explicitly are both splits unless `train_tasks` says otherwise."""
    env = vf.load_environment("pytest_callm.rl.verifiers_env", industry="legal", root=REPO)
    try:
        train = [json.loads(r["info"])["callm_row"]["task"] for r in env.get_dataset()]
        evaluation = [json.loads(r["info"])["callm_row"]["task"] for r in env.get_eval_dataset()]
    finally:
        env.calls.close()
    locked = {f"legal/{p.parent.name}" for p in (REPO / "tasks" / "legal").glob("*/task.json")}
    assert set(evaluation) == locked and len(evaluation) == 60
    assert len(train) == 60 and not set(train) & locked and all(n.startswith("legal/gen-") for n in train)
    named = load(train_tasks=[REPO / "training" / "healthcare"])
    try:
        assert [json.loads(r["info"])["callm_row"]["task"] for r in named.get_eval_dataset()] == [TASK]
        assert {json.loads(r["info"])["callm_row"]["task"].split("/")[0] for r in named.get_dataset()} == {"healthcare"}
    finally:
        named.calls.close()
