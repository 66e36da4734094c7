"""The OpenEnv adapter, for real: OpenEnv's server on loopback (uvicorn in a thread), driven by
OpenEnv's WebSocket client, the policy's replies sampled over HTTP with the OpenAI SDK from the
scripted OpenAI-compatible server playing a task's answer key (tests/openai_server.py), the real tool
server behind the environment."""

from __future__ import annotations

import asyncio
import time

import httpx
import openai
import pytest

pytest.importorskip("openenv")

from openai_server import AnswerKeyAgent, ScriptedServer  # noqa: E402
from pytest_callm.rl.environment import CallEnvironment  # noqa: E402
from pytest_callm.call.trajectory import Trajectory  # noqa: E402
from conftest import REPO  # noqa: E402

from pytest_callm.scoring.verdict import score  # noqa: E402
from pytest_callm.task.pack import load_pack  # noqa: E402
from pytest_callm.toolserver.server import ToolServer  # noqa: E402


def oe():
    """The adapter, imported by the first test that needs it, not when pytest collects this module: it
    pulls in openenv's server (gradio), 3 CPU seconds that every xdist worker paid at collection."""
    from pytest_callm.rl import openenv_env

    return openenv_env


INDUSTRIES = REPO / "industries"
TASK = "legal/C4-H3"  # reception -> screening -> intake
OTHER = "legal/C4-M1"
# The task's declared trap "packet-by-text": one value changed (the packet sent by text, not email).
PACKET_BY_TEXT = {"calls": [{"set": 9, "parameters": {"channel": "text"}}]}


def task_path(name: str):
    return REPO / "tasks" / name / "task.json"


@pytest.fixture(scope="module")
def env():
    with CallEnvironment([task_path(TASK), task_path(OTHER)], root=REPO, industries=[INDUSTRIES]) as env:
        yield env


@pytest.fixture(scope="module")
def server(env):
    with oe().OpenEnvServer(env, task_names=[OTHER, TASK]) as server:
        yield server


@pytest.fixture(scope="module")
def follower():
    with ScriptedServer(agent=AnswerKeyAgent(task_path(TASK), INDUSTRIES)) as policy:
        yield policy


@pytest.fixture(scope="module")
def wrong_follower():
    with ScriptedServer(agent=AnswerKeyAgent(task_path(TASK), INDUSTRIES, edit=PACKET_BY_TEXT)) as policy:
        yield policy


async def play(server_url: str, policy_url: str, task: str = TASK, seed: int = 1):
    """One episode through OpenEnv's client: (last step, every observation, the session's state)."""
    policy = openai.AsyncOpenAI(base_url=policy_url, api_key="unused")
    try:
        async with oe().CallEnvClient(base_url=server_url) as client:
            result = await client.reset(task=task, seed=seed)
            seen = [result.observation]
            while not result.done:
                obs = result.observation
                async with policy.chat.completions.stream(model="scripted", messages=obs.chat(),
                                                          tools=obs.tools) as stream:
                    completion = await stream.get_final_completion()
                result = await client.step(oe().CallAction.from_message(completion.choices[0].message))
                seen.append(result.observation)
            return result, seen, await client.state()
    finally:
        await policy.close()


def test_a_policy_following_the_answer_key_earns_1_through_its_handoffs(env, server, follower):
    result, seen, state = asyncio.run(play(server.url, follower.base_url))
    last = result.observation
    assert (result.done, result.reward, last.passed) == (True, 1.0, True), last.explanation
    assert last.gates == {"tools": True, "handoff": True, "database": True, "words": True}
    assert last.end_reason == "agent_end_call"
    assert (state.task, state.seed, state.done, state.step_count) == (TASK, 1, True, len(seen) - 1)
    matched = [o.progress["matched_calls"] for o in seen]  # the per-step signals come over the wire
    assert matched == sorted(matched) and matched[-1] == last.progress["expected_calls"] > matched[0] == 0
    assert last.progress["failed_gates"] == []
    # A handoff is the new agent's prompt and tools in the next observation, the history kept.
    assert [(o.handoff_from, o.agent) for o in seen if o.handoff_from] == [("reception", "screening"),
                                                                          ("screening", "intake")]
    _, pack = env.task(TASK)
    for before, obs in zip(seen, seen[1:]):
        assert obs.system_prompt == pack.agents[obs.agent].prompt
        assert [t["function"]["name"] for t in obs.tools] == list(pack.agents[obs.agent].tools)
        assert obs.messages[:len(before.messages)] == before.messages  # nothing of the history lost
        assert obs.new_messages and obs.messages[-len(obs.new_messages):] == obs.new_messages
    assert seen[0].new_messages == seen[0].messages  # the greeting and the caller's first heard words
    assert [m["role"] for m in seen[0].messages] == ["assistant", "user"]
    assert all(o.reward is None for o in seen[:-1]) and not any(o.done for o in seen[:-1])


def test_one_changed_value_earns_0_with_the_gates_that_fail(server, wrong_follower):
    result, _, _ = asyncio.run(play(server.url, wrong_follower.base_url))
    last = result.observation
    assert result.done and result.reward == 0.0 and last.passed is False
    assert last.gates == {"tools": False, "handoff": True, "database": False, "words": True}  # as the trap declares
    assert "tools FAIL" in last.explanation and last.infrastructure_error is None


def test_in_process_the_metadata_holds_the_trajectory_whose_verdict_is_the_reward(env, follower):
    # OpenEnv 0.3 leaves `metadata` off the wire: in process it has the verdict and the whole trajectory.
    policy = openai.OpenAI(base_url=follower.base_url, api_key="unused")
    session = oe().CallOpenEnv(env)
    obs = session.reset(task=TASK)
    while not obs.done:
        with policy.chat.completions.stream(model="scripted", messages=obs.chat(), tools=obs.tools) as stream:
            obs = session.step(oe().CallAction.from_message(stream.get_final_completion().choices[0].message))
    policy.close()
    session.close()
    task, pack = env.task(TASK)
    verdict = score(task, pack, Trajectory.from_json(obs.metadata["trajectory"]))
    assert obs.reward == 1.0 and verdict.passed and obs.metadata["gates"] == verdict.gates == obs.gates
    assert obs.metadata["explanation"] == obs.explanation == verdict.explain()


def test_concurrent_sessions_each_play_their_own_episode(server, follower, wrong_follower):
    async def together():
        return await asyncio.gather(play(server.url, follower.base_url), play(server.url, wrong_follower.base_url),
                                    play(server.url, follower.base_url, seed=2))

    played = asyncio.run(together())
    assert [result.reward for result, _, _ in played] == [1.0, 0.0, 1.0]
    assert [state.seed for _, _, state in played] == [1, 1, 2]
    assert len({state.episode_id for _, _, state in played}) == 3


def test_a_reset_naming_no_task_deals_the_servers_list_in_turn(env, server):
    with oe().CallEnvClient(base_url=server.url).sync() as client:
        first = client.reset()
        second = client.reset(seed=3, episode_id="mine")  # abandons the first episode
        state = client.state()
    assert (first.observation.task, second.observation.task) == (OTHER, TASK)
    assert (state.episode_id, state.seed, state.step_count) == ("mine", 3, 0)
    # The session ended mid-episode: the server closes its call (OpenEnv closes the session's environment).
    deadline = time.monotonic() + 10
    while env._running and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not env._running, list(env._running)


def test_bad_input_is_refused_by_name_and_the_session_goes_on(env, server):
    with oe().CallEnvClient(base_url=server.url).sync() as client:
        with pytest.raises(RuntimeError, match="reset first"):
            client.step(oe().CallAction(content="Hello?"))
        with pytest.raises(RuntimeError, match="legal/C9-X9"):
            client.reset(task="legal/C9-X9")
        with pytest.raises(RuntimeError, match="tsk"):
            client.reset(tsk=TASK)
        assert not client.reset(task=TASK).done
    # OpenEnv's plain HTTP /step builds a session-less environment: no episode, and it says so.
    refused = httpx.post(f"{server.url}/step", json={"action": {"content": "Hello?"}}, timeout=30)
    assert refused.status_code == 409 and "reset first" in refused.json()["detail"]
    with pytest.raises(ValueError, match="tool_calls\\[0\\] has no function name"):
        oe().CallAction.from_message({"role": "assistant", "tool_calls": [{"id": "c1", "function": {}}]})
    with pytest.raises(ValueError, match="legal/C9-X9"):
        oe().make_app(env, task_names=[TASK, "legal/C9-X9"])


def test_a_plain_http_reset_of_an_unknown_task_is_a_404_with_the_reason(server):
    """It was a bare 500 (Internal Server Error) with no word of what was wrong."""
    unknown = httpx.post(f"{server.url}/reset", json={"task": "legal/C9-X9"}, timeout=30)
    assert unknown.status_code == 404 and "legal/C9-X9" in unknown.json()["detail"]
    assert httpx.post(f"{server.url}/reset", json={"task": TASK}, timeout=30).status_code == 200


def test_the_server_keeps_idle_connections_longer_than_clients_do(server):
    """uvicorn's 5 s default closed connections that clients (NeMo Gym's aiohttp: 15 s) still reused:
    ServerDisconnectedError under load."""
    from pytest_callm.toolserver.calldb import CLIENT_KEEPALIVE_S, SERVER_KEEPALIVE_S

    assert server._server.config.timeout_keep_alive == SERVER_KEEPALIVE_S > max(CLIENT_KEEPALIVE_S, 15.0)


def test_an_episode_the_environment_could_not_play_ends_unscored_not_at_0():
    tools = ToolServer({"legal": load_pack(INDUSTRIES / "legal")}).start()
    try:
        with CallEnvironment([task_path(TASK)], root=REPO, industries=[INDUSTRIES],
                             tool_server_url=tools.url) as env, oe().OpenEnvServer(env) as server:
            with oe().CallEnvClient(base_url=server.url).sync() as client:
                assert not client.reset(task=TASK).done
                tools.stop()  # the tool server goes away mid-call
                lookup = {"name": "lookup_caller", "arguments": {"full_name": "Clara Whitman", "phone": "206-555-0220"}}
                result = client.step({"role": "assistant", "content": None,
                                      "tool_calls": [{"id": "c1", "type": "function", "function": lookup}]})
    finally:
        tools.stop()
    last = result.observation
    assert result.done and result.reward is None and last.reward is None and last.passed is None
    assert last.infrastructure_error and "ToolServerError" in last.infrastructure_error
    assert last.gates == {}
