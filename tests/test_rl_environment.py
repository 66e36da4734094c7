"""The RL environment: the benchmark's call driven from outside, rewarded by the benchmark's verdict."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_callm.authoring.prove import mutants
from pytest_callm.call.oracle import OracleModel, ScriptedModel, plan_answer_key
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.model.config import ModelConfig
from pytest_callm.model.client import RetryPolicy
from pytest_callm.call.script_caller import GOODBYE, ScriptCaller
from pytest_callm.rl.environment import CallEnvironment, OpeningCaller, gather_on, play_policy
from pytest_callm.runs.runtime import Participants, Runtime
from pytest_callm.scoring.verdict import score
from pytest_callm.scoring.verify import check_tools

from conftest import REPO, shared_tool_server

HANDOFF_TASK = "legal/C4-H3"


@pytest.fixture(scope="module")
def env():
    with CallEnvironment(root=REPO, line="clean") as environment:
        yield environment


@pytest.fixture(scope="module")
def env_in_process():
    """The same, with the tools in process: no tool server."""
    with CallEnvironment(root=REPO, line="clean", tools_in_process=True) as environment:
        yield environment


def first_value_mutant(env, name):
    """The task's key with its first constrained value one off (the mutants `callm prove` plays); a
    task with no constrained value (a refusal, a forbidden tool) gets its first other mutant."""
    task, pack = env.task(name)
    made, _ = mutants(task, pack)
    replay = next((m for m in made if "->" in m.label), made[0])
    edited = dataclasses.replace(task, exp_tool_calls=replay.calls, exp_handoff_path=replay.path)
    return replay.label, ScriptedModel(plan_answer_key(edited, pack))


def test_every_locked_task_played_by_its_answer_key_earns_reward_1_and_one_wrong_value_earns_0(env):
    names = env.task_names()
    assert len(names) == 180
    right = gather_on(env, [play_policy(env, n, OracleModel(*env.task(n))) for n in names])
    not_one = {n: r.info.get("explanation") or r.info.get("infrastructure_error")
               for n, r in zip(names, right) if r.reward != 1.0}
    assert not not_one
    assert all(r.done and r.info["gates"] == {"tools": True, "handoff": True, "database": True, "words": True}
               for r in right)

    wrong = [first_value_mutant(env, n) for n in names]
    assert sum("->" in label for label, _ in wrong) >= 150
    played = gather_on(env, [play_policy(env, n, policy) for n, (_, policy) in zip(names, wrong)])
    passed = {f"{n}: {label}" for n, (label, _), r in zip(names, wrong, played) if r.reward != 0.0}
    assert not passed, "a wrong value still earns a reward"
    for r in played:  # the failing gate, and why, are in the info
        failing = [g for g, ok in r.info["gates"].items() if not ok]
        assert failing and all(f"[{g}]" in r.info["explanation"] for g in failing)
    # The progress signal's count, kept step by step, is the tools gate's own on the whole call.
    for n, r in zip(names * 2, right + played):
        calls = check_tools(*env.task(n), r.info["trajectory"]).details["calls"]
        assert r.info["progress"]["matched_calls"] == sum(c["matched"] is not None for c in calls), n


def test_the_word_exploits_earn_0_on_every_task_where_they_apply(env):
    """The key plus nonsense free text, plus a false claim, plus another person's record read aloud
    (issue 36): each earns 0, though its tool calls are the key's."""
    from pytest_callm.authoring.word_probes import WORD_EXPLOITS, word_replays

    policies = []
    for n in env.task_names():
        task, pack = env.task(n)
        ok = {c.name for c in task.exp_tool_calls if c.status == "ok"}
        for r in word_replays(task, pack, ok):
            if r.group in WORD_EXPLOITS:
                edited = dataclasses.replace(task, exp_tool_calls=r.calls, exp_handoff_path=r.path)
                policies.append((n, r.group, ScriptedModel(plan_answer_key(edited, pack), says=r.agent_says)))
    groups = {g for _, g, _ in policies}
    assert groups == set(WORD_EXPLOITS) and len(policies) >= 300
    played = gather_on(env, [play_policy(env, n, p) for n, _, p in policies])
    unplayed = [f"{n}: {g}: {r.info['infrastructure_error']}" for (n, g, _), r in zip(policies, played)
                if r.reward is None]
    assert not unplayed, f"{len(unplayed)} episodes the environment could not play: {unplayed[:3]}"
    earned = [f"{n}: {g}" for (n, g, _), r in zip(policies, played) if r.reward != 0.0]
    assert not earned, f"{len(earned)} word exploits earn a reward: {earned[:5]}"
    assert all(r.info["gates"]["words"] is False and r.info["gates"]["tools"] for r in played)


def test_the_reward_is_the_benchmarks_verdict_on_the_saved_episode(env, tmp_path):
    names = ["legal/C4-H3", "healthcare/C2-M1", "customer_support/C3-H2", "legal/R-M3"]
    policies = [OracleModel(*env.task(n)) for n in names] + [first_value_mutant(env, n)[1] for n in names]
    results = gather_on(env, [play_policy(env, n, p, seed=3) for n, p in zip(names * 2, policies)])
    for i, r in enumerate(results):  # saved the way a run saves an attempt, read back, scored again
        (tmp_path / f"{i}.json").write_text(json.dumps(r.info["trajectory"].to_json()))
    for i, (name, r) in enumerate(zip(names * 2, results)):
        saved = Trajectory.from_json(json.loads((tmp_path / f"{i}.json").read_text()))
        verdict = score(*env.task(name), saved)
        assert (r.reward, r.info["gates"]) == (1.0 if verdict.passed else 0.0, verdict.gates)
        assert r.info["explanation"] == verdict.explain()
    assert [r.reward for r in results] == [1.0] * 4 + [0.0] * 4


def test_an_episode_and_a_benchmark_call_with_the_same_replies_are_the_same_data(env):
    task, pack = env.task(HANDOFF_TASK)
    episode = gather_on(env, [play_policy(env, HANDOFF_TASK, OracleModel(task, pack), seed=2)])[0]
    runtime = Runtime("oracle", {pack.name: pack}, shared_tool_server().url)
    try:
        model = OracleModel(task, pack)
        played = runtime.play(task, pack, 2, Participants(model, ScriptCaller(task, pack, 2),
                                                          env.runtime.line_for(task, 2)), rerun=False)
    finally:
        runtime.close()
    mine = episode.info["trajectory"]

    def shape(t: Trajectory):
        return ([(c.agent, c.name, c.arguments, c.result, c.status) for c in t.tool_calls],
                [(h.from_agent, h.to_agent) for h in t.handoffs], [(r.agent, r.exchange, r.tool_calls) for r in t.requests],
                [(x.role, x.said, x.heard) for x in t.transcript], t.final_state, t.end_reason, t.exchanges)

    assert shape(mine) == shape(played)
    assert mine.handoff_path() == task.exp_handoff_path and len(mine.handoffs) >= 1


def test_tools_run_in_process_give_the_same_episodes_and_verdicts_as_over_http(env, env_in_process):
    """`tools_in_process` (the cheaper path for training) leaves out only the HTTP hop: the same
    replies give the same tool results, final states and verdicts, right and wrong."""
    names = ["legal/C4-H3", "healthcare/C5-M2", "customer_support/C1-H1", "legal/R-M3"]
    policies = lambda: [OracleModel(*env.task(n)) for n in names] + [first_value_mutant(env, n)[1] for n in names]
    over_http = gather_on(env, [play_policy(env, n, p, seed=4) for n, p in zip(names * 2, policies())])
    local = env_in_process
    assert local.runtime.tool_server_url is None  # no server was started
    in_process = gather_on(local, [play_policy(local, n, p, seed=4) for n, p in zip(names * 2, policies())])

    def shape(r):
        t = r.info["trajectory"]
        return ([(c.agent, c.name, c.arguments, c.result, c.status) for c in t.tool_calls], t.final_state,
                t.end_reason, r.reward, r.info["gates"], r.info["explanation"])

    assert [shape(r) for r in in_process] == [shape(r) for r in over_http]
    assert [r.reward for r in in_process] == [1.0] * 4 + [0.0] * 4


def test_observations_show_the_first_turn_the_tools_results_and_a_handoffs_new_prompt(env):
    task, pack = env.task(HANDOFF_TASK)
    episode_id, first = env.reset(HANDOFF_TASK, seed=1)
    obs = first.observation
    assert not first.done and first.reward is None
    assert obs.agent == pack.entry_agent and obs.system_prompt == pack.agents[pack.entry_agent].prompt
    assert [m["role"] for m in obs.messages] == ["assistant", "user"] and obs.new_messages == obs.messages
    assert obs.messages[1]["content"] == OpeningCaller(task).opening
    assert {t["function"]["name"] for t in obs.tools} == set(pack.agents[pack.entry_agent].tools)

    policy = OracleModel(task, pack)
    seen_handoff = False
    result = first
    while not result.done:
        before = len(result.observation.messages)
        reply = env.run(policy.respond(result.observation.request()))
        result = env.step(episode_id, reply)
        o = result.observation
        assert o.messages[:before] == result.observation.messages[:before]
        assert o.new_messages == o.messages[before + 1:]  # all that came after the policy's own reply
        if o.handoff_from is not None and not result.done:
            seen_handoff = True
            assert o.agent != o.handoff_from and o.system_prompt == pack.agents[o.agent].prompt
            assert {t["function"]["name"] for t in o.tools} == set(pack.agents[o.agent].tools)
    assert seen_handoff and result.reward == 1.0 and result.info["end_reason"] == "agent_end_call"
    with pytest.raises(KeyError, match="no episode"):
        env.step(episode_id, {"role": "assistant", "content": "hello?"})


def test_replies_in_openai_message_shape_are_played_like_model_replies(env):
    episode_id, result = env.reset("legal/C1-E1", seed=1)
    result = env.step(episode_id, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "no_such_tool", "arguments": {"x": 1}}}]})
    tool = result.observation.new_messages[-1]
    assert tool["role"] == "tool" and json.loads(tool["content"])["error_code"] == "tool_not_available"
    result = env.step(episode_id, {"role": "assistant", "content": [{"type": "text", "text": "Goodbye."}]})
    # The offline caller says goodbye too, and hangs up.
    assert result.done and result.info["end_reason"] == "caller_hangup"
    trajectory = result.info["trajectory"]
    assert [t.said for t in trajectory.transcript][-2:] == ["Goodbye.", GOODBYE]
    assert trajectory.tool_calls[0].raw_arguments == '{"x": 1}'



def test_an_unknown_task_names_the_form_of_a_task_name(env):
    with pytest.raises(KeyError, match="industry/task_id"):
        env.reset("C4-H3")


def test_a_caller_whose_model_fails_ends_the_episode_as_infrastructure_not_as_reward_0(openai_server_at_500):
    caller = ModelConfig(name="caller", model="scripted", base_url=openai_server_at_500, api_key_env=None)
    with CallEnvironment([REPO / "tasks" / "legal" / "C1-E1"], root=REPO, caller=caller,
                         retry=RetryPolicy(tries=2, backoff_s=0.01)) as env:
        _, result = env.reset("legal/C1-E1")
    assert result.done and result.reward is None
    assert "infrastructure_error" in result.info and "passed" not in result.info


@pytest.fixture
def openai_server_at_500():
    """An OpenAI-compatible server that answers every request with HTTP 500."""
    from openai_server import ScriptedServer

    with ScriptedServer() as server:
        server.state.steps.extend({"status": 500} for _ in range(50))
        yield server.base_url


def test_progress_counts_the_expected_calls_matched_so_far_and_shaped_credit_is_opt_in():
    """Per-step signals for a trainer; the reward stays the verdict, and `shaped` is never the reward."""
    from pytest_callm.rl.environment import shaped_score

    task_file = REPO / "tasks" / HANDOFF_TASK / "task.json"
    with CallEnvironment([task_file], root=REPO, line="clean", shaped=True) as shaped:
        task, pack = shaped.task(HANDOFF_TASK)
        policy = ScriptedModel(plan_answer_key(task, pack))
        episode, step = shaped.reset(HANDOFF_TASK, 1)
        matched = [step.info["progress"]["matched_calls"]]
        while not step.done:
            step = shaped.run(shaped.astep(episode, shaped.run(policy.respond(step.observation.request()))))
            matched.append(step.info["progress"]["matched_calls"])
        expected = step.info["progress"]["expected_calls"]
        assert matched[0] == 0 and matched == sorted(matched) and matched[-1] == expected == len(task.exp_tool_calls)
        assert step.info["progress"]["failed_gates"] == [] and step.info["progress"]["end_reason"] == "agent_end_call"
        assert step.reward == 1.0 and step.info["shaped"] == 1.0

        label, wrong = first_value_mutant(shaped, HANDOFF_TASK)
        result = shaped.run(play_policy(shaped, HANDOFF_TASK, wrong))
        signals = result.info["progress"]
        assert result.reward == 0.0 and signals["failed_gates"] and signals["matched_calls"] < expected, label
        assert 0.0 < result.info["shaped"] == shaped_score(False, signals) < 0.9
    with CallEnvironment([task_file], root=REPO, line="clean") as plain:  # opt-in: absent by default
        result = plain.run(play_policy(plain, HANDOFF_TASK, OracleModel(*plain.task(HANDOFF_TASK))))
        assert result.reward == 1.0 and "shaped" not in result.info and "progress" in result.info


def test_a_trainers_malformed_message_is_the_policys_reply_played_and_scored_never_a_crash(env_in_process):
    """A hand-built parser's output: numbers where text belongs, bytes, a dict for a list, OpenAI's
    usage. Each raised TypeError or AttributeError; each is now the policy's reply, and a call with
    no usable name is refused to it as the engine refuses an unknown tool."""
    odd = [{"tool_calls": [{"id": "c1", "function": {"name": 5, "arguments": "{}"}}]},
           {"tool_calls": [{"id": 7, "function": {"name": "get_office_info", "arguments": '{"topic": "hours"}'}}]},
           {"tool_calls": {"id": "c1", "function": {"name": "get_office_info", "arguments": "{}"}}},
           {"tool_calls": ["end_call"]},
           {"tool_calls": [{"id": "c1", "function": {"name": "get_office_info", "arguments": b'{"topic": "hours"}'}}]},
           {"content": {"text": "Hello there."}},
           {"content": "Hi", "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}]
    env = env_in_process  # the module's, tools in process
    for reply in odd:
        episode, _ = env.reset("legal/C4-H3", 1)
        step = env.step(episode, {"role": "assistant", **reply})
        assert "infrastructure_error" not in step.info, reply
        if not step.done:
            env.run(env.aclose_episode(episode))
    episode, _ = env.reset("legal/C4-H3", 1)
    env.step(episode, {"role": "assistant", "tool_calls": [{"id": 9, "function": {"name": 5, "arguments": b"{}"}}]})
    call = env.trajectory(episode).tool_calls[-1]
    assert (call.name, call.status) == ("5", "tool_not_available")
    env.run(env.aclose_episode(episode))


def test_a_step_in_flight_when_its_episode_is_closed_is_not_scored(env_in_process):
    """Its later tool calls ran on a database made afresh after the close, and the policy got 0.0."""
    from pytest_callm.call.oracle import plan_answer_key

    env = env_in_process  # the module's, tools in process
    task, pack = env.task("legal/C4-H3")
    plan = plan_answer_key(task, pack)
    episode, _ = env.reset("legal/C4-H3", 1)
    running = env._running[episode]  # what astep holds while it awaits

    def call(planned):
        return {"role": "assistant", "tool_calls": [{"id": "c", "function": {
            "name": planned.name, "arguments": json.dumps(planned.arguments)}}]}

    env.step(episode, call(plan[0]))
    env.run(env.aclose_episode(episode))
    step = env.run(env._advance(episode, running, running.episode.step(call(plan[1]))))
    assert step.done and step.reward is None and "closed" in step.info


def test_misuse_of_an_episode_is_one_clear_error(env):
    """A seed that is not a number, a second step while one is in flight, and a finished episode's
    trajectory asked of the environment each raised a bare TypeError or KeyError, or interleaved."""
    import asyncio

    # the module's environment: its tools over HTTP, so the first step waits on them
    with pytest.raises(TypeError, match="seed=None: a whole number"):
        env.reset("legal/C4-H3", None)
    task, pack = env.task("legal/C4-H3")
    first = plan_answer_key(task, pack)[0]
    reply = {"role": "assistant", "tool_calls": [{"id": "c", "function": {
        "name": first.name, "arguments": json.dumps(first.arguments)}}]}
    episode, _ = env.reset("legal/C4-H3", 1)

    async def twice():
        return await asyncio.gather(env.astep(episode, reply), env.astep(episode, reply), return_exceptions=True)

    one, two = env.run(twice())
    assert not isinstance(one, Exception) and isinstance(two, RuntimeError) and "already taking a step" in str(two)
    assert [c.name for c in env.trajectory(episode).tool_calls] == [first.name]
    last = env.run(env.aend(episode, "rollout ended"))
    with pytest.raises(KeyError, match="in its last step's info"):
        env.trajectory(episode)
    with pytest.raises(KeyError, match="no episode"):
        env.run(env.abreak(episode, "overflow"))
    assert last.done and last.info["trajectory"].tool_calls[0].name == first.name


# --- exploit policies of issue 37: each earns 0 wherever it applies -------------------------------

def _policy_of(task, pack, changes):
    from pytest_callm.authoring.replay import apply_edit

    calls, _ = apply_edit(task.exp_tool_calls, changes)
    return ScriptedModel(plan_answer_key(dataclasses.replace(task, exp_tool_calls=calls), pack))


def test_the_invisible_characters_policy_earns_0_wherever_the_key_passes_a_name(env):
    """The key with a zero-width space inside every name it passes: an RL trial found locked tasks where
    such names were stored and earned 1.0. Every tool refuses them as the model's bad input."""
    policies = []
    for n in env.task_names():
        task, pack = env.task(n)
        changes = []
        for i, call in enumerate(task.exp_tool_calls):
            kinds = pack.tools[call.name].kinds
            hidden = {p: v[:1] + "\u200b" + v[1:] for p, v in call.parameters.items()
                      if kinds.get(p) in ("person", "party", "organization") and isinstance(v, str) and len(v) > 1}
            if hidden:
                changes.append({"set": i, "parameters": hidden})
        if changes:
            policies.append((n, _policy_of(task, pack, changes)))
    assert len(policies) >= 100
    played = gather_on(env, [play_policy(env, n, p) for n, p in policies])
    earned = [n for (n, _), r in zip(policies, played) if r.reward != 0.0]
    assert not earned, f"a name with an invisible character earns a reward on {earned}"
    assert all(any(c.status == "invalid_arguments" for c in r.info["trajectory"].tool_calls) for r in played)


def test_the_probe_then_the_key_policy_earns_0_wherever_its_probe_is_kept_on_record(env):
    """Before the key's first act, the same act with one value one off, then two off (probing for the
    value that works), then the key. Where the tool refuses the first probe with a code the pack does
    not call harmless (rules.json "refusals"), the probing costs the reward: a second try after a
    refusal with a value nobody gave, or a record nobody gave, is on record. An RL policy must not
    learn that probing is free."""
    from pytest_callm.authoring.replay import one_off

    policies = []
    for n in env.task_names():
        task, pack = env.task(n)
        identity = set(pack.people.identity_tools) if pack.people else set()
        for i, call in enumerate(task.exp_tool_calls):
            spec = pack.tools[call.name]
            if spec.kind != "industry" or call.name in identity or spec.ends_call or call.status != "ok":
                continue
            props = spec.parameters.get("properties", {})
            probes = []
            for p, v in call.parameters.items():
                kind, schema = spec.kinds.get(p), props.get(p, {})
                first = None if p in spec.free_text else one_off(v, kind, schema)
                second = None if first is None else one_off(first, kind, schema)
                if second is not None and second != v and all(
                        not pack.validation_errors(call.name, {**call.parameters, p: x}) for x in (first, second)):
                    probes = [{**call.parameters, p: first}, {**call.parameters, p: second}]
                    break
            if probes:
                changes = [{"insert": i, "call": {"name": call.name, "parameters": q}} for q in probes]
                policies.append((n, call.name, probes[0], _policy_of(task, pack, changes)))
                break
    played = gather_on(env, [play_policy(env, n, p) for n, _, _, p in policies])
    applies, earned = 0, []
    for (n, name, probe, _), r in zip(policies, played):
        _, pack = env.task(n)
        met = next(c.status for c in r.info["trajectory"].tool_calls if c.name == name and c.arguments == probe)
        refusal = pack.refusals.get(met or "")
        if refusal is None or refusal.attempt == "harmless":
            continue  # the probe succeeded, or met a refusal nobody keeps: it does not apply here
        applies += 1
        if r.reward != 0.0:
            earned.append(f"{n}: {name}({probe}) -> {met}")
    assert applies >= 30, applies
    assert not earned, f"probing then playing the key earns a reward: {earned}"
