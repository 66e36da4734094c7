"""CALLM's calls as a NeMo Gym resources server, mounted on the tool server (bodies: `nemo_gym.py`).

A session is one call (one `CallEnvironment` episode): `POST /seed_session {"task", "seed"}` starts
it and answers the first observation as Responses API parameters (the entry agent's prompt as a
system message, the greeting and the caller's first heard words; as tools, every tool some agent of
the pack owns, plus `say`). NeMo Gym keeps one tool list for a whole rollout, so a handoff cannot
swap it: the handoff's output names the new agent, its prompt and its tools, and a tool the active
agent does not own is refused exactly as in the benchmark (`tool_not_available`, HTTP 200: the model
is meant to read it). Each `POST /{tool_name}` is one model request of the benchmark's trajectory
with that one tool call; `POST /say {"text"}` is one request with that text and no tool call, so the
caller answers. NeMo Gym's agent loop ends when the model answers without a function call: speech
to the caller therefore goes through `say`, and `/verify` ends a call still open (end reason
`rollout_ended`) and scores it as it stands with the benchmark's verifier.

Run it: `python -m pytest_callm.rl.nemo_gym_server --pack industries/legal --task tasks/legal`
prints `CALLM_TOOL_SERVER_URL http://127.0.0.1:PORT` and serves until its stdin closes;
`nemo_gym_server(packs, tasks)` is the same as a `ToolServer` to start from Python, and
`dataset_rows(url, tasks, seeds)` writes the rows NeMo Gym's agents read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import secrets
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ValidationError

from pytest_callm.call.episode import CallLimits, Observation
from pytest_callm.model.config import ModelConfig
from pytest_callm.rl.dataset import dataset_row
from pytest_callm.rl.environment import CallEnvironment, StepResult
from pytest_callm.rl.nemo_gym import (ROLLOUT_ENDED, SAY, SAY_TOOL, SESSION_COOKIE, SESSION_HEADER, TASK_INDEX,
                                      RESERVED_NAMES, AggregateMetrics, AggregateMetricsRequest, CloseResponse,
                                      ErrorResponse, Handoff, ResponsesCreateParams, SayRequest,
                                      SeedSessionRequest, SeedSessionResponse, ToolResponse, VerifyRequest,
                                      VerifyResponse)
from pytest_callm.task.pack import Pack
from pytest_callm.toolserver.calldb import TOKEN_ENV
from pytest_callm.toolserver.server import ToolServer, announce_ready, serve, server_arguments
from pytest_callm.rl.caller_choice import caller_arguments, caller_config  # noqa: F401 (app.py's)

ENTRY = "pytest_callm.rl.nemo_gym_server"


def _json(status: int, body: BaseModel) -> JSONResponse:
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return _json(status, ErrorResponse(error_code=code, message=message))


def _keep(response: JSONResponse, sid: str) -> JSONResponse:
    """Set the session's cookie on an answer. NeMo Gym's simple agent replaces its cookies with each
    answer's own, so an answer without it would lose the session for every later request."""
    response.set_cookie(SESSION_COOKIE, sid, httponly=True, samesite="strict")
    return response


def responses_tool(schema: dict[str, Any]) -> dict[str, Any]:
    """A pack tool's Chat Completions schema as a Responses API function tool."""
    fn = schema["function"]
    return {"type": "function", "name": fn["name"], "description": fn.get("description", ""),
            "parameters": fn.get("parameters") or {"type": "object", "properties": {}}, "strict": False}


def pack_tools(pack: Pack) -> list[dict[str, Any]]:
    """Every tool some agent of the pack owns (in the pack's order), then `say`."""
    owned = {t for agent in pack.agents.values() for t in agent.tools}
    return [responses_tool(spec.schema) for name, spec in pack.tools.items() if name in owned] + [SAY_TOOL]


def input_items(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Chat messages as Responses API input items (messages, function calls and their outputs)."""
    items: list[dict[str, Any]] = []
    for m in messages:
        if m["role"] == "tool":
            items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
            continue
        if m.get("content"):
            items.append({"type": "message", "role": m["role"], "content": m["content"]})
        for tc in m.get("tool_calls") or []:
            items.append({"type": "function_call", "call_id": tc["id"], "name": tc["function"]["name"],
                          "arguments": tc["function"]["arguments"]})
    return items


def tool_names(observation: Observation) -> list[str]:
    return [t["function"]["name"] for t in observation.tools]


@dataclass
class Session:
    episode_id: str  # the environment's
    task: str
    seed: int
    last: StepResult
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)  # one model request at a time, as in a call
    sid: str = ""  # the client's (set when stored)
    touched: float = field(default_factory=time.monotonic)  # its last request


# A session untouched this long gives its call to a new one when the server holds all it may: an agent
# that crashed, or lost its session ids, would otherwise leave the server answering 429 until restarted.
IDLE_S = 900.0


class NemoGymRoutes:
    """The mount (`ToolServer`'s hook): the routes, and the environment behind them.

    The environment talks to this same server over loopback, as the benchmark's engine does, so it
    is built once the server answers: `prepare(url)` starts that in a thread as soon as the server
    is up, and the first request waits for it (or builds it, when nothing prepared it). It runs
    its episodes on its own loop; the routes wait on them from the server's."""

    def __init__(self, tasks: Iterable[Path | str] | None, industries: Iterable[Path | str], *,
                 line: str = "default", caller: ModelConfig | None = None, caller_api_key: str | None = None,
                 offline_caller: str = "script",
                 limits: CallLimits = CallLimits(), concurrency: int = 256, tool_server_token: str | None = None,
                 shaped: bool = False, idle_s: float = IDLE_S):
        self.idle_s = idle_s
        self.settings = dict(tasks=list(tasks) if tasks is not None else None, industries=list(industries),
                             line=line, caller=caller, caller_api_key=caller_api_key, offline_caller=offline_caller,
                             limits=limits, concurrency=concurrency, tool_server_token=tool_server_token, shaped=shaped)
        # Session id (unguessable, the client's only key to its call) -> the session. The call's id is
        # no key: the call routes of this server need its token, which only its own environment holds.
        self.sessions: dict[str, Session] = {}
        self._env: CallEnvironment | None = None
        self._building: concurrent.futures.Future | None = None
        self._starting = asyncio.Lock()

    def __call__(self, app: FastAPI) -> None:
        app.add_route("/seed_session", self.seed_session, methods=["POST"])
        app.add_route("/verify", self.verify, methods=["POST"])
        app.add_route("/close", self.close, methods=["POST"])
        app.add_route("/aggregate_metrics", self.aggregate_metrics, methods=["POST"])
        app.add_route("/", self.liveness, methods=["GET"])  # NeMo Gym's servers answer it; its tools poll it
        app.add_route("/{tool_name}", self.tool, methods=["POST"])

    # --- plumbing ------------------------------------------------------------------------------

    def prepare(self, url: str) -> None:
        """Start building the environment against the server at `url` (which answers already)."""
        if self._building is None:
            builder = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="callm-nemo-env")
            self._building = builder.submit(self._build, url)
            builder.shutdown(wait=False)  # its one thread ends with the build

    def _build(self, url: str) -> CallEnvironment:
        env = CallEnvironment(tool_server_url=url, **self.settings)
        clashes = sorted({f"{pack.name}.{t}" for _, pack in env.tasks.values() for t in pack.tools
                          if t in RESERVED_NAMES})
        if clashes:
            env.close()
            raise ValueError(f"tools named like the NeMo Gym routes cannot be served: {clashes}")
        return env

    async def env(self, request: Request) -> CallEnvironment:
        async with self._starting:
            if self._env is None:
                self.prepare(str(request.base_url).rstrip("/"))
                self._env = await asyncio.wrap_future(self._building)
        return self._env

    def shutdown(self) -> None:
        """End the calls in flight (their databases go) and the environment's loop and connections."""
        if self._building is not None and self._building.done() and self._building.exception() is None:
            self._building.result().close()

    async def _on_env(self, env: CallEnvironment, coro):
        return await asyncio.wrap_future(env.submit(coro))

    def _session(self, request: Request) -> Session | JSONResponse:
        sid = request.headers.get(SESSION_HEADER) or request.cookies.get(SESSION_COOKIE)  # a header is deliberate
        if not sid:
            return _error(400, "no_session", f"no session: POST /seed_session first, then send its "
                                             f"{SESSION_COOKIE} cookie (or the {SESSION_HEADER} header)")
        session = self.sessions.get(sid)
        if session is None:
            return _error(404, "unknown_session", f"no session {sid[:80]!r} here (never seeded, verified, or "
                                                  f"closed; or left idle {self.idle_s:g} s while the server was full)")
        session.touched = time.monotonic()
        return session

    def _ended(self, session: Session) -> JSONResponse | None:
        """For a request that waited on the session's lock: a 404 when a /verify or /close it waited
        behind ended the session meanwhile (a client retrying, or racing its own calls)."""
        if self.sessions.get(session.sid) is session:
            return None
        return _error(404, "unknown_session", f"session {session.sid[:80]!r} ended (verified or closed) while "
                                              "this request waited for it")

    @staticmethod
    async def _body(request: Request, model: type[BaseModel]) -> BaseModel | JSONResponse:
        raw = await request.body()
        try:
            data = json.loads(raw or b"{}")
        except ValueError:
            return _error(400, "bad_request", f"{request.url.path}: the body is not JSON")
        try:
            return model.model_validate(data)
        except ValidationError as e:
            problems = "; ".join(f"{'.'.join(map(str, p['loc'])) or 'body'}: {p['msg']}" for p in e.errors())
            return _error(422, "invalid_body", f"{request.url.path}: {problems}")

    @staticmethod
    def _infrastructure(result: StepResult) -> JSONResponse:
        """The call could not be played (the environment already removed its database)."""
        return _error(502, "infrastructure_error", f"the environment could not play the call (not the "
                                                   f"policy's failure): {result.info['infrastructure_error']}")

    # --- routes --------------------------------------------------------------------------------

    async def seed_session(self, request: Request) -> JSONResponse:
        body = await self._body(request, SeedSessionRequest)
        if isinstance(body, JSONResponse):
            return body
        env = await self.env(request)
        try:
            env.task(body.task)
        except KeyError as e:
            return _error(404, "unknown_task", e.args[0])
        episode_id, result = await self._on_env(env, env.areset(body.task, body.seed))
        if result.info.get("busy") and await self._close_idle(env):
            episode_id, result = await self._on_env(env, env.areset(body.task, body.seed))
        if result.info.get("busy"):
            return _error(429, "too_many_sessions", f"this server holds as many live calls as it may "
                                                    f"({result.info['infrastructure_error']}); verify or close "
                                                    "sessions before seeding more")
        if "infrastructure_error" in result.info:
            return self._infrastructure(result)
        sid = secrets.token_urlsafe(32)
        self.sessions[sid] = Session(episode_id, body.task, body.seed, result, sid=sid)
        obs = result.observation
        task, pack = env.task(body.task)
        params = ResponsesCreateParams(input=[{"type": "message", "role": "system", "content": obs.system_prompt},
                                              *input_items(obs.messages)], tools=pack_tools(pack))
        call_id = (result.info["trajectory"] if result.done else env.trajectory(episode_id)).call_id
        response = _json(200, SeedSessionResponse(
            session_id=sid, call_id=call_id, task=body.task, seed=body.seed, agent=obs.agent,
            agent_tools=tool_names(obs), responses_create_params=params, call_over=result.done,
            row={**dataset_row(task, pack, [body.seed]), "seed": body.seed,
                 "responses_create_params": params.model_dump(mode="json")}))
        return _keep(response, sid)

    async def tool(self, request: Request) -> JSONResponse:
        session = self._session(request)
        if isinstance(session, JSONResponse):
            return session
        return _keep(await self._tool(request, session), session.sid)

    async def _tool(self, request: Request, session: Session) -> JSONResponse:
        name = request.path_params["tool_name"]
        if name in RESERVED_NAMES and name != SAY:
            return _error(404, "not_served", f"POST /{name} is part of NeMo Gym's contract that this server "
                                             "does not serve")
        env = await self.env(request)
        _, pack = env.task(session.task)
        offered = [t["name"] for t in pack_tools(pack)]
        if name not in offered:  # never offered to the model: not a call of the benchmark's either
            return _error(404, "unknown_tool", f"no tool {name!r} in {pack.name}: the tools are {offered}")
        if name == SAY:
            said = await self._body(request, SayRequest)
            if isinstance(said, JSONResponse):
                return said
            reply: dict[str, Any] = {"role": "assistant", "content": said.text}
        else:  # the raw body, as a model's arguments string: the episode parses it as the engine does
            raw = (await request.body()).decode("utf-8", errors="surrogateescape")
            reply = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{uuid.uuid4().hex[:16]}", "type": "function",
                 "function": {"name": name, "arguments": raw or "{}"}}]}
        async with session.lock:
            if (ended := self._ended(session)) is not None:
                return ended
            if "infrastructure_error" in session.last.info:
                return self._infrastructure(session.last)
            if session.last.done:
                return _error(409, "call_over", "the call is over: POST /verify for its reward")
            result = await self._on_env(env, env.astep(session.episode_id, reply))
            session.last = result  # a failure stays the session's answer, for /verify too
        if "infrastructure_error" in result.info:
            return self._infrastructure(result)
        obs = result.observation
        tool_out = next((m for m in obs.new_messages if m["role"] == "tool"), None) if name != SAY else None
        handoff = None
        if obs.handoff_from is not None:
            handoff = Handoff(previous_agent=obs.handoff_from, agent=obs.agent, instructions=obs.system_prompt,
                              agent_tools=tool_names(obs))
        return _json(200, ToolResponse(
            result=json.loads(tool_out["content"]) if tool_out else None,
            heard=[m["content"] for m in obs.new_messages if m["role"] == "user"], handoff=handoff,
            call_over=result.done, end_reason=result.info.get("end_reason") if result.done else None,
            progress=result.info.get("progress")))

    async def verify(self, request: Request) -> JSONResponse:
        body = await self._body(request, VerifyRequest)
        if isinstance(body, JSONResponse):
            return body
        session = self._session(request)
        if isinstance(session, JSONResponse):
            return session
        env = await self.env(request)
        async with session.lock:
            if (ended := self._ended(session)) is not None:
                return ended
            result = session.last
            if not result.done:  # the rollout stopped with the call open: it ends as it stands
                result = await self._on_env(env, env.aend(session.episode_id, ROLLOUT_ENDED))
            self._forget(session)
        if "infrastructure_error" in result.info:
            return self._infrastructure(result)
        info = result.info
        ours = dict(reward=result.reward,
                    reward_components={gate: 1.0 if ok else 0.0 for gate, ok in info["gates"].items()},
                    passed=info["passed"], route=info["route"], explanation=info["explanation"],
                    end_reason=info["end_reason"], session_id=session.sid, task=session.task, seed=session.seed,
                    shaped=info.get("shaped"))
        # The row's own fields come back too (NeMo Gym's agent posts the whole row); ours win.
        return _keep(_json(200, VerifyResponse(**(body.model_dump() | ours))), session.sid)

    async def close(self, request: Request) -> JSONResponse:
        session = self._session(request)
        if isinstance(session, JSONResponse):
            return session
        env = await self.env(request)
        async with session.lock:
            if (ended := self._ended(session)) is not None:
                return ended
            self._forget(session)
            await self._on_env(env, env.aclose_episode(session.episode_id))
        return _json(200, CloseResponse(success=True, message=f"session {session.sid} closed"))

    async def liveness(self, request: Request) -> JSONResponse:
        return JSONResponse({"status": "ok"})

    async def aggregate_metrics(self, request: Request) -> JSONResponse:
        body = await self._body(request, AggregateMetricsRequest)
        if isinstance(body, JSONResponse):
            return body
        for i, v in enumerate(body.verify_responses):
            components = v.get("reward_components")
            if components is not None and not (isinstance(components, dict) and all(
                    isinstance(x, (int, float)) and not isinstance(x, bool) for x in components.values())):
                return _error(422, "invalid_request", f"verify_responses[{i}].reward_components: an object of "
                                                      f"gate -> number, not {json.dumps(components)[:80]}")
            index = v.get(TASK_INDEX)
            if index is not None and not isinstance(index, (str, int, float)):
                return _error(422, "invalid_request", f"verify_responses[{i}].{TASK_INDEX}: a number or a string, "
                                                      f"not {json.dumps(index)[:80]}")
        return _json(200, aggregate_metrics(body.verify_responses))

    def _forget(self, session: Session) -> None:
        self.sessions.pop(session.sid, None)

    async def _close_idle(self, env: CallEnvironment) -> int:
        """Close the sessions idle `idle_s` or more (none mid-request): how many."""
        now = time.monotonic()
        idle = [s for s in list(self.sessions.values()) if now - s.touched >= self.idle_s and not s.lock.locked()]
        for session in idle:
            self._forget(session)
            await self._on_env(env, env.aclose_episode(session.episode_id))
        return len(idle)


def aggregate_metrics(verify_responses: list[dict[str, Any]]) -> AggregateMetrics:
    """NeMo Gym's `/aggregate_metrics` over CALLM's verify responses: per dataset row (its
    `_ng_task_index`) and over all, the mean reward (the benchmark's pass@1), each gate's pass rate,
    and pass^k (every rollout of a row passed, as the benchmark's pass^k with k the row's rollouts).
    Responses without a reward (NeMo Gym's failures) are not counted."""
    scored = [v for v in verify_responses if isinstance(v.get("reward"), (int, float))]
    rows: dict[Any, list[dict[str, Any]]] = {}
    for v in scored:
        rows.setdefault(v.get(TASK_INDEX, 0), []).append(v)

    def summary(group: list[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"rollouts": len(group), "mean/reward": sum(v["reward"] for v in group) / len(group)}
        for gate in ("tools", "handoff", "database"):
            values = [v["reward_components"][gate] for v in group if gate in (v.get("reward_components") or {})]
            if values:
                out[f"mean/gate_{gate}"] = sum(values) / len(values)
        return out

    groups = []
    for index in sorted(rows, key=lambda i: (0, i, "") if isinstance(i, (int, float)) else (1, 0, str(i))):
        group = rows[index]
        groups.append({TASK_INDEX: index, **({"task": group[0]["task"]} if "task" in group[0] else {}),
                       **summary(group), "pass^k": float(all(v["reward"] == 1.0 for v in group))})
    if not groups:
        return AggregateMetrics()
    overall = {**summary(scored), "pass^k": sum(g["pass^k"] for g in groups) / len(groups)}
    return AggregateMetrics(group_level_metrics=groups, agent_metrics=overall,
                            key_metrics={k: overall[k] for k in ("mean/reward", "pass^k")})


def nemo_gym_server(packs: dict[str, Pack], tasks: Iterable[Path | str], *, line: str = "default",
                    port: int = 0, data_dir: Path | None = None, max_live_calls: int | None = None,
                    token: str | None = None, shaped: bool = False, session_idle_s: float | None = None,
                    caller: str | None = None, caller_base_url: str | None = None,
                    caller_api_key_env: str | None = None, offline_caller: str = "script") -> ToolServer:
    """The tool server with the NeMo Gym routes, in a child process (not started: `.start()` or `with`).
    Its call routes need `.token` (made here unless given): only its own environment, and whoever
    this process hands it to, can reach a call's database by its id. `caller`: a caller model config's
    name or file (as `--callm-caller-model` takes it), `caller_base_url` and `caller_api_key_env`
    overriding its own; without one, the `offline_caller` ("script" or "opening")."""
    extra = [arg for t in tasks for arg in ("--task", str(Path(t).resolve()))] + ["--line", line]
    extra += caller_arguments(caller, caller_base_url, caller_api_key_env, offline_caller)
    if max_live_calls is not None:
        extra += ["--max-live-calls", str(max_live_calls)]
    if shaped:
        extra.append("--shaped")
    if session_idle_s is not None:
        extra += ["--session-idle-s", str(session_idle_s)]
    return ToolServer(packs, port, data_dir, entry=ENTRY, extra_args=extra, token=token or secrets.token_urlsafe(32))


def dataset_rows(url: str, tasks: Iterable[str], seeds: Iterable[int] = (1,)) -> list[dict[str, Any]]:
    """NeMo Gym dataset rows for the server at `url`, one per task and seed: `callm export`'s row
    (`dataset.py`) for that seed, with `seed` and `responses_create_params`, the first observation of a
    session seeded and closed. NeMo Gym's simple agent sends a row's own `responses_create_params`, not
    the seed response's; that is the same observation when the first caller turn is fixed by task and
    seed (the offline caller), not with a caller played by a model."""
    import httpx  # a client's need, not the server's

    rows = []
    with httpx.Client(base_url=url, timeout=60) as http:
        for task in tasks:
            for seed in seeds:
                seeded = http.post("/seed_session", json={"task": task, "seed": seed})
                if seeded.status_code != 200:
                    raise ValueError(f"{task} seed {seed}: {seeded.json().get('message', seeded.text)}")
                body = seeded.json()
                http.post("/close", headers={SESSION_HEADER: body["session_id"]})
                rows.append(body["row"])
    return rows


def main(argv: list[str] | None = None, *, watch_stdin: bool = True) -> None:
    """Serve until stdin closes (as a `ToolServer` child), or until stopped (`watch_stdin=False`, as
    NeMo Gym's `ng_run` starts a server: `examples/nemo_gym/resources_servers/callm/app.py`)."""
    parser = server_arguments("the pytest-callm tool server with NeMo Gym resources-server routes")
    parser.add_argument("--task", action="append", type=Path,
                        help="task file or folder to serve (repeatable; default: tasks/ here)")
    parser.add_argument("--line", default="default", help="the phone line: default, clean, or a profile file")
    parser.add_argument("--shaped", action="store_true",
                        help="add `shaped`, opt-in partial credit, to /verify's answer (never the reward)")
    parser.add_argument("--caller", default=None,
                        help="the caller's model config, a name or a file as --callm-caller-model takes it "
                             "(default: no model; the offline caller)")
    parser.add_argument("--caller-base-url", default=None, help="the caller model's server, over its config's")
    parser.add_argument("--caller-api-key-env", default=None,
                        help="the variable holding the caller model's key, over its config's ('none': no key)")
    parser.add_argument("--offline-caller", default="script", choices=["script", "opening"],
                        help="the caller without a model: script (answers from the task's script, the default) "
                             "or opening (its opening line, then nothing: a smoke test)")
    parser.add_argument("--session-idle-s", type=float, default=IDLE_S,
                        help=f"when the server holds all the calls it may, a session untouched this long is closed "
                             f"to make room (default {IDLE_S:g})")
    args = parser.parse_args(argv)
    industries = sorted({str(Path(p).resolve().parent) for p in args.pack})
    token = os.environ.pop(TOKEN_ENV, None) or secrets.token_urlsafe(32)  # never a server open to every local user
    caller, caller_api_key = caller_config(args.caller, args.caller_base_url, args.caller_api_key_env, dict(os.environ))
    routes = NemoGymRoutes(args.task, industries, line=args.line, tool_server_token=token, shaped=args.shaped,
                           idle_s=args.session_idle_s, caller=caller, caller_api_key=caller_api_key,
                           offline_caller=args.offline_caller)

    def ready(url: str) -> None:
        routes.prepare(url)
        announce_ready(url)

    try:
        serve(args.pack, args.port, announce=ready, data_dir=args.data_dir, mounts=[routes],
              max_live_calls=args.max_live_calls, token=token, watch_stdin=watch_stdin)
    finally:
        routes.shutdown()


if __name__ == "__main__":
    main()
