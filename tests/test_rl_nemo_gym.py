"""The NeMo Gym resources-server routes, over HTTP: the tool server with them mounted, on loopback.

The policy is the local OpenAI-compatible server following a task's answer key (through the
project's streaming client); the loop between it and the routes plays NeMo Gym's agent: each
function call is posted to `/{name}`, words for the caller go through `say`, and the rollout's
Responses API output is posted to `/verify`.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from openai_server import AnswerKeyAgent, ScriptCaller, openai_server, openai_server_session  # noqa: F401
from pytest_callm.model.client import OpenAIChatModel
from pytest_callm.model.config import ModelConfig
from pytest_callm.model.protocol import ModelRequest
from pytest_callm.rl.nemo_gym import SESSION_HEADER
from pytest_callm.rl.nemo_gym_server import dataset_rows, nemo_gym_server
from pytest_callm.task.pack import PackRegistry
from pytest_callm.toolserver.calldb import TOKEN_HEADER

from conftest import REPO

TASK = "legal/C4-H3"  # reception -> screening -> intake: two handoffs
TASK_PATH = REPO / "tasks" / TASK / "task.json"
INDUSTRIES = REPO / "industries"
ROW = {"task": TASK, "seed": 1, "responses_create_params": {"input": []}}  # a dataset row's fields


@pytest.fixture(scope="module")
def server():
    packs = PackRegistry([INDUSTRIES])
    packs.get("legal")
    with nemo_gym_server(packs.loaded(), [TASK_PATH.parent], line="clean") as srv:
        yield srv


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


def owner(server) -> dict[str, str]:
    """What only the server's owner holds: the token of its call routes."""
    return {TOKEN_HEADER: server.token}


def chat_tool(tool: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function", "function": {k: tool[k] for k in ("name", "description", "parameters")}}


async def rollout(url: str, policy_url: str) -> tuple[dict, list[dict], dict]:
    """One rollout as NeMo Gym's agent would play it: (seed response, tool responses, verify response)."""
    model = OpenAIChatModel(ModelConfig(name="follower", model="scripted", base_url=policy_url, api_key_env=None),
                            None)
    outputs: list[dict] = []  # the rollout's Responses API output items
    answers: list[dict] = []
    async with httpx.AsyncClient(base_url=url, timeout=30) as nemo:
        seed = (await nemo.post("/seed_session", json=ROW)).json()
        params = seed["responses_create_params"]
        system, history = params["input"][0]["content"], params["input"][1:]
        # The answer-key policy reads a Chat Completions history: the items, as chat messages.
        messages = [{"role": m["role"], "content": m["content"]} for m in history]
        tools = [chat_tool(t) for t in params["tools"]]
        over = False
        while not over:
            reply = await model.respond(ModelRequest(agent="", system_prompt=system, messages=messages, tools=tools))
            if not reply.tool_calls:  # words for the caller: the `say` function
                calls = [("say", json.dumps({"text": reply.text}), f"say_{len(outputs)}")]
                messages.append({"role": "assistant", "content": reply.text})
            else:
                calls = [(tc.name, tc.raw_arguments, tc.id) for tc in reply.tool_calls]
                messages.append({"role": "assistant", "content": reply.text or None, "tool_calls": [
                    {"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.raw_arguments}}
                    for tc in reply.tool_calls]})
            for name, arguments, call_id in calls:
                response = await nemo.post(f"/{name}", content=arguments)
                assert response.status_code == 200, response.text
                answer = response.json()
                answers.append(answer)
                outputs += [{"type": "function_call", "call_id": call_id, "name": name, "arguments": arguments},
                            {"type": "function_call_output", "call_id": call_id, "output": response.text}]
                if name != "say":
                    messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(answer["result"])})
                messages += [{"role": "user", "content": heard} for heard in answer["heard"]]
                if answer["handoff"]:
                    system = answer["handoff"]["instructions"]
                if answer["call_over"]:
                    over = True
                    break
        verify = await nemo.post("/verify", json={"responses_create_params": params,
                                                  "response": {"output": outputs}})
        assert verify.status_code == 200, verify.text
    await model.aclose()
    return seed, answers, verify.json()


def play(server, openai_server, **follow) -> tuple[dict, list[dict], dict]:
    openai_server.reset(agent=AnswerKeyAgent(TASK_PATH, INDUSTRIES, **follow))
    return asyncio.run(rollout(server.url, openai_server.base_url))


def test_the_answer_key_played_through_the_routes_earns_reward_1(server, openai_server):
    seed, answers, verdict = play(server, openai_server)
    assert seed["agent"] == "reception" and "transfer_to_screening" in seed["agent_tools"]
    assert "check_conflict" not in seed["agent_tools"]  # screening's tool, offered in the list all the same
    assert {t["name"] for t in seed["responses_create_params"]["tools"]} >= {"check_conflict", "say"}
    handoffs = [a["handoff"] for a in answers if a["handoff"]]
    assert [(h["previous_agent"], h["agent"]) for h in handoffs] == [("reception", "screening"),
                                                                       ("screening", "intake")]
    assert "check_conflict" in handoffs[0]["agent_tools"] and "screening" in handoffs[0]["instructions"]
    assert answers[-1]["call_over"] and answers[-1]["end_reason"] == "agent_end_call"
    assert verdict["reward"] == 1.0 and verdict["passed"], verdict["explanation"]
    assert verdict["reward_components"] == {"tools": 1.0, "handoff": 1.0, "database": 1.0, "words": 1.0}
    assert verdict["session_id"] == seed["session_id"] and verdict["task"] == TASK
    assert verdict["response"]["output"][0]["type"] == "function_call"  # the request, echoed as NeMo Gym does


def test_one_changed_value_earns_0_with_the_failing_gates(server, openai_server):
    # The task's trap: the intake packet sent by text rather than by email.
    _, _, verdict = play(server, openai_server, edit={"calls": [{"set": 9, "parameters": {"channel": "text"}}]})
    assert verdict["reward"] == 0.0 and not verdict["passed"]
    assert verdict["reward_components"] == {"tools": 0.0, "handoff": 1.0, "database": 0.0, "words": 1.0}
    assert "send_intake_packet" in verdict["explanation"]


def seeded(http) -> dict:
    response = http.post("/seed_session", json=ROW)
    assert response.status_code == 200, response.text
    return response.json()


def test_requests_without_a_known_session_or_tool_are_refused_clearly(http):
    bare = httpx.Client(base_url=str(http.base_url))  # no cookie
    assert bare.post("/lookup_caller", json={}).json()["error_code"] == "no_session"
    missing = bare.post("/lookup_caller", json={}, headers={SESSION_HEADER: "ep9-nope"})
    assert missing.status_code == 404 and missing.json()["error_code"] == "unknown_session"
    assert "ep9-nope" in missing.json()["message"]
    unknown = http.post("/seed_session", json={**ROW, "task": "legal/NOPE"})
    assert unknown.status_code == 404 and "legal/NOPE" in unknown.json()["message"]
    assert http.post("/seed_session", json={"seed": 1}).status_code == 422  # no task named
    seeded(http)
    wrong = http.post("/no_such_tool", json={})
    assert wrong.status_code == 404 and wrong.json()["error_code"] == "unknown_tool"
    assert "no_such_tool" in wrong.json()["message"] and "lookup_caller" in wrong.json()["message"]
    assert http.post("/say", json={"words": "hi"}).status_code == 422
    assert http.post("/mcp", json={}).json()["error_code"] == "not_served"
    http.post("/close")


def test_a_tool_of_another_desk_is_refused_as_in_the_benchmark(http):
    seeded(http)
    refused = http.post("/check_conflict", json={"opposing_party": "Harborline Industries"})
    assert refused.status_code == 200  # the model's mistake, for the model to read
    assert refused.json()["result"]["error_code"] == "tool_not_available"
    assert "check_conflict" not in refused.json()["result"]["data"]["available_tools"]
    broken = http.post("/lookup_caller", content=b"{not json")
    assert broken.status_code == 200 and broken.json()["result"]["error_code"] == "invalid_arguments"
    http.post("/close")


def test_a_rollout_that_stops_early_is_scored_as_it_stands_and_forgotten(server, http):
    seed = seeded(http)
    assert http.post("/say", json={"text": "Let me check."}).json()["heard"]
    verdict = http.post("/verify", json={"responses_create_params": {"input": []}, "response": {"output": []}})
    assert verdict.json()["reward"] == 0.0 and verdict.json()["end_reason"] == "rollout_ended"
    assert http.post("/verify", json={"responses_create_params": {}, "response": {}}).status_code == 404
    state = http.get("/packs/legal/state", headers={"X-Call-Id": seed["call_id"], **owner(server)})
    assert state.status_code == 404  # the call's database is gone


def test_close_abandons_the_call_and_removes_its_database(server, http):
    seed = seeded(http)
    assert http.get("/packs/legal/state", headers={"X-Call-Id": seed["call_id"], **owner(server)}).status_code == 200
    closed = http.post("/close")
    assert closed.status_code == 200 and closed.json()["success"]
    assert http.get("/packs/legal/state", headers={"X-Call-Id": seed["call_id"], **owner(server)}).status_code == 404
    assert http.post("/lookup_caller", json={}).json()["error_code"] == "unknown_session"


def test_a_call_the_environment_cannot_finish_is_an_infrastructure_error_never_a_zero(server, http):
    seed = seeded(http)
    # The call's database vanishes under the session: the environment cannot read its final state.
    gone = http.request("DELETE", "/packs/legal/call", headers={"X-Call-Id": seed["call_id"], **owner(server)})
    assert gone.status_code == 200
    verdict = http.post("/verify", json={"responses_create_params": {"input": []}, "response": {"output": []}})
    assert verdict.status_code == 502 and verdict.json()["error_code"] == "infrastructure_error"
    assert "reward" not in verdict.json() and "not the policy's failure" in verdict.json()["message"]


def test_dataset_rows_hold_the_first_observation_of_their_task_and_seed(server, http):
    rows = dataset_rows(server.url, [TASK], seeds=[1, 1])
    assert [(r["task"], r["seed"]) for r in rows] == [(TASK, 1), (TASK, 1)]
    assert rows[0] == rows[1]  # the offline caller: the same first observation at every seeding
    assert rows[0]["responses_create_params"] == seeded(http)["responses_create_params"]
    http.post("/close")
    # One format: `callm export`'s row of the task for that seed, plus the seed and the first request.
    from pytest_callm.rl.dataset import dataset_row
    from pytest_callm.task.task_file import load_task

    _, task, pack = load_task(TASK_PATH, PackRegistry([INDUSTRIES]))
    exported = json.loads(json.dumps(dataset_row(task, pack, [1])))
    assert {k: v for k, v in rows[0].items() if k not in ("seed", "responses_create_params")} == exported
    assert rows[0]["tools"][0]["type"] == "function" and "parameters" in rows[0]["tools"][0]["function"]
    with pytest.raises(ValueError, match="legal/NOPE"):
        dataset_rows(server.url, ["legal/NOPE"])


def test_after_the_call_ends_nothing_more_runs_until_it_is_verified(http):
    seeded(http)
    ended = http.post("/end_call", json={"reason": "caller is done"}).json()
    assert ended["call_over"] and ended["end_reason"] == "agent_end_call"
    late = http.post("/say", json={"text": "One more thing."})
    assert late.status_code == 409 and late.json()["error_code"] == "call_over"
    assert http.post("/verify", content=b"{not json").status_code == 400
    assert http.post("/verify", json={"responses_create_params": {}, "response": {}}).json()["reward"] == 0.0


# --- isolation: a session reaches only its own call ------------------------------------------------

def test_a_call_id_is_no_key_to_its_database_without_the_servers_token(http):
    """Any local client holding a session's call id could read, write and remove its database."""
    seed = seeded(http)
    other = httpx.Client(base_url=str(http.base_url))  # another local client, no cookie, no token
    headers = {"X-Call-Id": seed["call_id"]}
    for method, path in (("GET", "/packs/legal/state"), ("POST", "/packs/legal/tools/lookup_caller"),
                         ("DELETE", "/packs/legal/call"), ("POST", "/packs/legal/call")):
        answer = other.request(method, path, headers=headers, json={} if method == "POST" else None)
        assert answer.status_code == 403 and answer.json()["error_code"] == "forbidden", (method, path, answer.text)
    wrong = other.get("/packs/legal/state", headers={**headers, TOKEN_HEADER: "guess"})
    assert wrong.status_code == 403
    assert http.post("/say", json={"text": "Still here?"}).status_code == 200  # the session's call is intact
    http.post("/close")


def test_session_ids_are_unguessable_and_say_nothing_of_the_call(http):
    first, second = seeded(http), None
    http.post("/close")
    second = seeded(http)
    http.post("/close")
    for seed in (first, second):
        assert len(seed["session_id"]) >= 40 and seed["call_id"] not in seed["session_id"]
    assert first["session_id"] != second["session_id"]
    stranger = httpx.Client(base_url=str(http.base_url))
    assert stranger.post("/say", json={"text": "hi"},
                         headers={SESSION_HEADER: first["call_id"]}).json()["error_code"] == "unknown_session"


def test_max_live_calls_is_honoured_as_a_busy_answer():
    """--max-live-calls was accepted and ignored: 8 of 8 sessions went through with a limit of 5."""
    packs = PackRegistry([INDUSTRIES])
    packs.get("legal")
    with nemo_gym_server(packs.loaded(), [TASK_PATH.parent], line="clean", max_live_calls=5) as srv, \
            httpx.Client(base_url=srv.url, timeout=30) as http:
        answers = [http.post("/seed_session", json=ROW) for _ in range(8)]
        assert [a.status_code for a in answers] == [200] * 5 + [429] * 3, [a.text for a in answers]
        assert answers[-1].json()["error_code"] == "too_many_sessions"
        http.post("/close", headers={SESSION_HEADER: answers[0].json()["session_id"]})
        assert http.post("/seed_session", json=ROW).status_code == 200  # a closed session frees its place


def test_when_the_server_is_full_an_idle_session_gives_its_place_to_a_new_one():
    """An agent that crashed (or lost its session ids) left its sessions live, and every later
    /seed_session answered 429 until the server was restarted."""
    packs = PackRegistry([INDUSTRIES])
    packs.get("legal")
    with nemo_gym_server(packs.loaded(), [TASK_PATH.parent], line="clean", max_live_calls=2,
                         session_idle_s=0) as srv, httpx.Client(base_url=srv.url, timeout=30) as http:
        lost = [http.post("/seed_session", json=ROW).json()["session_id"] for _ in range(2)]
        fresh = http.post("/seed_session", json=ROW)
        assert fresh.status_code == 200, fresh.text
        gone = http.post("/say", json={"text": "Hello?"}, headers={SESSION_HEADER: lost[0]})
        assert gone.status_code == 404 and "left idle" in gone.json()["message"]
        served = http.post("/say", json={"text": "Hello?"}, headers={SESSION_HEADER: fresh.json()["session_id"]})
        assert served.status_code == 200, served.text


@pytest.mark.parametrize("host, warned", [("127.0.0.1", False), ("localhost", False), ("::1", False),
                                          ("0.0.0.0", True), ("10.1.2.3", True), ("myhost.example", True)])
def test_a_server_bound_beyond_loopback_says_it_does_not_authenticate(host, warned):
    """OpenEnv's serve(host=...) bound anywhere, silently (the OpenEnv server prints this line)."""
    from pytest_callm.rl.environment import exposure_warning

    line = exposure_warning(host, 8000, "OpenEnv server")
    assert (line is not None) == warned
    if warned:
        assert "no authentication" in line and "proxy" in line and f"{host}:8000" in line


# --- what NeMo Gym's own agent does (tests/test_rl_nemo_gym_real.py runs it for real) ---------------

def test_every_answer_of_a_session_sets_its_cookie_again(http):
    """NeMo Gym's simple agent keeps only the cookies of the last answer: with the cookie set by
    /seed_session alone, every request after the first tool call answered `no_session`."""
    sid = seeded(http)["session_id"]
    bare = httpx.Client(base_url=str(http.base_url))
    cookies = {"callm_session": sid}

    def cookie_header(jar) -> dict[str, str]:
        return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}

    for path, body in (("/lookup_caller", {"full_name": "Clara Whitman", "phone": "206-555-0220"}),
                       ("/no_such_tool", {}), ("/check_conflict", {"opposing_party": "Harborline"}),
                       ("/say", {"text": "One moment."}), ("/end_call", {"reason": "done"}),
                       ("/say", {"text": "Still there?"})):  # the last one: a 409, the call is over
        answer = bare.post(path, json=body, headers=cookie_header(cookies))
        assert answer.status_code in (200, 404, 409) and answer.cookies.get("callm_session") == sid, answer.text
        cookies = dict(answer.cookies)  # as the agent does: this answer's cookies replace the last ones
        bare.cookies.clear()
    verdict = bare.post("/verify", json={**ROW, "response": {"output": []}}, headers=cookie_header(cookies))
    assert verdict.status_code == 200 and verdict.cookies.get("callm_session") == sid


def test_verify_takes_the_whole_row_as_nemo_gyms_agent_sends_it(http):
    """The agent posts the row's own `task` and `seed` with the rollout: that was a 500 ("got multiple
    values for keyword argument 'task'")."""
    seeded(http)
    verdict = http.post("/verify", json={**ROW, "extra_field": [1], "response": {"id": "r", "output": []}})
    assert verdict.status_code == 200, verdict.text
    body = verdict.json()
    assert (body["task"], body["seed"], body["extra_field"]) == (TASK, 1, [1])
    assert body["reward"] == 0.0 and body["end_reason"] == "rollout_ended"


def test_tool_answers_carry_progress_and_never_change_the_reward(server, openai_server):
    _, answers, verdict = play(server, openai_server)
    matched = [a["progress"]["matched_calls"] for a in answers]
    assert matched == sorted(matched) and matched[-1] == answers[-1]["progress"]["expected_calls"] > 0
    assert answers[-1]["progress"]["failed_gates"] == [] and answers[-1]["progress"]["end_reason"] == "agent_end_call"
    assert "shaped" not in verdict or verdict["shaped"] is None  # opt-in only
    _, answers, verdict = play(server, openai_server, edit={"calls": [{"set": 9, "parameters": {"channel": "text"}}]})
    last = answers[-1]["progress"]
    assert last["failed_gates"] == ["tools", "database"] and last["matched_calls"] == last["expected_calls"] - 1
    assert verdict["reward"] == 0.0


def test_aggregate_metrics_answers_as_nemo_gyms_contract_says(http):
    """It answered 400 (as an unknown tool); NeMo Gym's rollout collection posts every verify response."""
    def answer(index, reward, tools=1.0):
        return {"_ng_task_index": index, "task": TASK, "reward": reward,
                "reward_components": {"tools": tools, "handoff": 1.0, "database": reward}}

    responses = [answer(0, 1.0), answer(0, 1.0), answer(1, 1.0), answer(1, 0.0, tools=0.0)]
    metrics = http.post("/aggregate_metrics", json={"verify_responses": responses})
    assert metrics.status_code == 200, metrics.text
    body = metrics.json()
    assert set(body) == {"group_level_metrics", "agent_metrics", "key_metrics"}
    assert [(g["_ng_task_index"], g["rollouts"], g["mean/reward"], g["pass^k"]) for g in body["group_level_metrics"]] \
        == [(0, 2, 1.0, 1.0), (1, 2, 0.5, 0.0)]
    assert body["agent_metrics"]["mean/reward"] == 0.75 and body["agent_metrics"]["mean/gate_tools"] == 0.75
    assert body["key_metrics"] == {"mean/reward": 0.75, "pass^k": 0.5}
    empty = http.post("/aggregate_metrics", json={"verify_responses": []}).json()
    assert empty == {"group_level_metrics": [], "agent_metrics": {}, "key_metrics": {}}
    assert http.post("/aggregate_metrics", json={}).status_code == 422
    # Rows of the wrong shape are named, never a 500 that drops the connection.
    for odd, field in [({"reward_components": ["tools"]}, "reward_components"),
                       ({"reward_components": {"tools": "yes"}}, "reward_components"),
                       ({"_ng_task_index": [1]}, "_ng_task_index")]:
        refused = http.post("/aggregate_metrics", json={"verify_responses": [answer(0, 1.0), {"reward": 1.0, **odd}]})
        assert refused.status_code == 422 and f"verify_responses[1].{field}" in refused.json()["message"]


def test_a_request_that_waited_behind_the_sessions_verify_or_close_is_a_404(server):
    """/verify sent beside a tool call, or twice (a client retrying), answered the loser 500."""
    async def race(first: str, second: str) -> tuple[int, int]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as client:
            sid = (await client.post("/seed_session", json=ROW)).json()["session_id"]
            head = {SESSION_HEADER: sid}
            send = {"verify": lambda: client.post("/verify", headers=head, json={"responses_create_params": {}, "response": {}}),
                    "close": lambda: client.post("/close", headers=head),
                    "tool": lambda: client.post("/lookup_caller", headers=head, json={"full_name": "A B", "phone": "1"})}
            one, two = await asyncio.gather(send[first](), send[second]())
            return one.status_code, two.status_code

    for first, second in [("verify", "tool"), ("verify", "verify"), ("close", "tool"), ("close", "verify")]:
        for _ in range(3):
            codes = asyncio.run(race(first, second))
            assert codes[0] == 200 and codes[1] in (200, 404, 409), (first, second, codes)


CALLER_LINES = ["Hi, I was hurt at work and I want to know my options.", "Sure, go ahead.", "Thanks, bye."]


def test_serving_calls_never_imports_openai_with_the_offline_caller_or_a_caller_model(openai_server):
    """NeMo Gym's venv holds openai 2.7.2 and our model client needs 3.x (tests/nemo_gym/make_venv.sh
    installs this package without it): the resources server must not reach the SDK client, with the
    offline caller or with a caller played by a model (its plain httpx client, model/plain_client.py)."""
    import subprocess
    import sys

    openai_server.reset(caller=ScriptCaller(CALLER_LINES))
    code = ("import sys; from pytest_callm.rl.environment import CallEnvironment\n"
            "from pytest_callm.model.config import ModelConfig\n"
            "import pytest_callm.rl.nemo_gym_server\n"
            f"caller = ModelConfig(name='caller', model='scripted', base_url={openai_server.base_url!r}, api_key_env=None)\n"
            "for options in ({}, {'caller': caller}):\n"
            f"    with CallEnvironment([{str(TASK_PATH)!r}], root={str(REPO)!r}, industries=[{str(INDUSTRIES)!r}],"
            " line='clean', **options) as env:\n"
            f"        episode, step = env.reset({TASK!r}, 1)\n"
            "        first = step.observation.messages[1]['content']\n"
            "        step = env.step(episode, {'role': 'assistant', 'content': 'Could you spell that?'})\n"
            "        assert step.observation.new_messages, step\n"
            "        print(first)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'openai'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    offline, played, modules = done.stdout.strip().splitlines()[-3:]
    assert played == CALLER_LINES[0] and offline != played  # the second call's caller was the model
    assert modules == "[]"
    assert any(body.get("stream") is False for body in openai_server.requests)  # one JSON body a request


def test_a_caller_model_plays_the_caller_behind_the_routes_and_the_reward_is_the_verdict(openai_server):
    packs = PackRegistry([INDUSTRIES])
    packs.get("legal")
    openai_server.reset(agent=AnswerKeyAgent(TASK_PATH, INDUSTRIES), caller=ScriptCaller(CALLER_LINES))
    with nemo_gym_server(packs.loaded(), [TASK_PATH.parent], line="clean", caller="scripted",
                         caller_base_url=openai_server.base_url, caller_api_key_env="none") as srv:
        seed, answers, verdict = asyncio.run(rollout(srv.url, openai_server.base_url))
    assert seed["responses_create_params"]["input"][2]["content"] == CALLER_LINES[0]
    heard = [h for a in answers for h in a["heard"]]
    assert heard and set(heard) <= set(CALLER_LINES)
    caller_requests = [b for b in openai_server.requests if ScriptCaller.is_caller_request(b)]
    assert len(caller_requests) >= 2
    assert verdict["reward"] == 1.0, verdict["explanation"]
