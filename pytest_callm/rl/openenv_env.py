"""CALLM's calls behind OpenEnv's server/client contract (openenv-core 0.3; the `openenv` extra).

`make_app(env)` is an OpenEnv FastAPI app over a `CallEnvironment`; `serve(...)` runs one with uvicorn
and `OpenEnvServer` runs one in a thread. `CallEnvClient` is its typed client (OpenEnv's `EnvClient`:
one WebSocket, one server-side session).

Sessions. OpenEnv 0.3 builds one `Environment` per WebSocket session (its factory is called per
connection) and a throwaway one for each plain HTTP `/reset` or `/step`, closed when the request
ends. Here every session's `CallOpenEnv` shares the server's one `CallEnvironment` (one tool server,
one asyncio loop, many calls in flight) and holds one episode of it at a time. The shared
environment touches its episodes only on its own loop, so concurrent sessions need no lock. An
episode therefore lives on the WebSocket (`CallEnvClient`); the HTTP `/step` has no episode to step,
and says so.

reset(task=None, seed=None): `task` is `industry/task_id`; without it the server deals its task list
in turn (`task_names`, default every task). `seed` is the attempt number (default 1): the phone line's draws
depend on task and seed. OpenEnv's own `episode_id` names the episode in `state` when given.

step(CallAction): the policy's reply, an OpenAI assistant message (`content`, `tool_calls`).

The observation is what the policy is asked next: the active agent's `system_prompt` and `tools`
(OpenAI function schemas), `messages` (the whole conversation after the system prompt, OpenAI
shape), `new_messages` (what came since the policy's last reply), `agent`, `handoff_from` (set on
the first observation after a handoff: the prompt and tools are then the new agent's) and `done`.
At the end, `reward` is 1.0 when the three gates pass, else 0.0, and `passed`, `gates`, `route`,
`explanation` and `end_reason` say why. OpenEnv 0.3 drops `Observation.metadata` on the wire, so
these are observation fields; `metadata` (in-process users only) holds the same and the trajectory.

An episode the environment could not play (its caller's model or its tool server failed) ends with
`done=True`, `reward=None`, `passed=None` and `infrastructure_error` naming the failure: never a 0.
A trainer should drop such an episode, not learn from it.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import socket
import sys
import threading
import time
from collections.abc import Coroutine, Iterable
from typing import Any, Literal

from openenv.core.client_types import StepResult as OpenEnvStepResult
from openenv.core.env_client import EnvClient
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import BaseModel, ConfigDict, Field
from starlette.responses import JSONResponse
from starlette.websockets import WebSocketDisconnect

from pytest_callm.call.episode import spoken_text
from pytest_callm.rl.environment import CallEnvironment, StepResult, exposure_warning
from pytest_callm.toolserver.calldb import SERVER_KEEPALIVE_S

DEFAULT_SEED = 1  # the first attempt, as the benchmark numbers them


# --- the wire types -------------------------------------------------------------------------------

class FunctionCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    arguments: str | dict[str, Any] = Field(default="{}", description="JSON text, or an object")


class ToolCallMessage(BaseModel):
    """One entry of an assistant message's `tool_calls`, OpenAI shape."""

    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCall


class CallAction(Action):
    """The policy's reply: what the agent says (`content`) and the tools it calls."""

    content: str | None = None
    tool_calls: list[ToolCallMessage] = Field(default_factory=list)

    @classmethod
    def from_message(cls, message: Any) -> CallAction:
        """From an OpenAI assistant message: a dict or the SDK's message object. Other keys (role,
        refusal, audio, a streamed `index`) are not part of the reply and are left out."""
        if hasattr(message, "model_dump"):
            message = message.model_dump()
        if not isinstance(message, dict):
            raise TypeError(f"an assistant message is a dict or an SDK message, not {type(message).__name__}")
        calls = []
        for i, call in enumerate(message.get("tool_calls") or []):
            function = call.get("function") if isinstance(call, dict) else None
            if not isinstance(function, dict) or not function.get("name"):
                raise ValueError(f"tool_calls[{i}] has no function name: {call!r}")
            calls.append({"id": call.get("id"), "function": {"name": function["name"],
                                                             "arguments": function.get("arguments") or "{}"}})
        return cls(content=spoken_text(message.get("content")), tool_calls=calls)

    def to_message(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.content}
        if self.tool_calls:
            message["tool_calls"] = [c.model_dump() for c in self.tool_calls]
        return message


class CallObservation(Observation):
    """What the policy is asked next; at the end, the verdict (see the module's docstring)."""

    task: str = ""
    seed: int = DEFAULT_SEED
    agent: str = ""
    system_prompt: str = ""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    messages: list[dict[str, Any]] = Field(default_factory=list)
    new_messages: list[dict[str, Any]] = Field(default_factory=list)
    handoff_from: str | None = None
    exchange: int = 0
    # the environment's per-step signals (`environment.progress`), never the reward; None after a failure
    progress: dict[str, Any] | None = None
    # set when done:
    passed: bool | None = None
    gates: dict[str, bool] = Field(default_factory=dict)
    route: str | None = None
    explanation: str = ""
    end_reason: str | None = None
    infrastructure_error: str | None = None

    def chat(self) -> list[dict[str, Any]]:
        """The request's messages for a chat API: the active agent's system prompt, then the history."""
        return [{"role": "system", "content": self.system_prompt}, *self.messages]


class CallState(State):
    task: str | None = None
    seed: int | None = None
    agent: str | None = None
    done: bool = False


# --- the server side ------------------------------------------------------------------------------

class TaskDealer:
    """Deals a server's task list in turn to resets that name no task (shared by its sessions)."""

    def __init__(self, env: CallEnvironment, task_names: Iterable[str] | None = None):
        self.names = list(task_names) if task_names is not None else env.task_names()
        unknown = [n for n in self.names if n not in env.tasks]
        if unknown:
            raise ValueError(f"unknown tasks {unknown}: names are industry/task_id, e.g. {env.task_names()[0]}")
        if not self.names:
            raise ValueError("an empty task list: give at least one industry/task_id")
        self._turn = itertools.count()
        self._lock = threading.Lock()

    def next(self) -> str:
        with self._lock:
            return self.names[next(self._turn) % len(self.names)]


class NoEpisodeError(RuntimeError):
    """A step with no episode in flight in the session."""


class UnknownTaskError(ValueError):
    """A reset naming a task the server does not serve (a 404 with the reason, not a bare 500)."""


class CallOpenEnv(Environment[CallAction, CallObservation, CallState]):
    """One OpenEnv session: one episode at a time of the shared `CallEnvironment`."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # sessions share only the environment, which serialises on its loop

    def __init__(self, env: CallEnvironment, dealer: TaskDealer | None = None):
        super().__init__()
        self.env = env
        self.dealer = dealer or TaskDealer(env)
        self._episode: str | None = None  # the CallEnvironment's id of the episode in flight
        self._state = CallState()

    # OpenEnv's server awaits the async forms on its own loop; the calls run on the environment's.
    async def _on_env(self, coro: Coroutine[Any, Any, Any]) -> Any:
        return await asyncio.wrap_future(self.env.submit(coro))

    async def reset_async(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
                          **unknown: Any) -> CallObservation:
        if unknown:
            raise TypeError(f"reset takes task, seed and episode_id, not {sorted(unknown)}")
        name = task if task is not None else self.dealer.next()
        try:
            self.env.task(name)  # before anything changes
        except KeyError as e:
            raise UnknownTaskError(e.args[0]) from None
        if self._episode is not None:  # a new episode abandons the one in flight
            episode, self._episode = self._episode, None
            await self._on_env(self.env.aclose_episode(episode))
        seed = DEFAULT_SEED if seed is None else seed
        episode, result = await self._on_env(self.env.areset(name, seed))
        self._episode = None if result.done else episode
        self._state = CallState(episode_id=episode_id or episode, step_count=0, task=name, seed=seed,
                                agent=result.observation.agent, done=result.done)
        return observation_of(result, name, seed)

    async def step_async(self, action: CallAction, timeout_s: float | None = None, **kwargs: Any) -> CallObservation:
        if self._episode is None:
            what = "is over" if self._state.done else "has not started"
            raise NoEpisodeError(f"the episode {what}: reset first, on the same WebSocket session "
                                 "(OpenEnv's plain HTTP /step has no session, hence no episode)")
        if not isinstance(action, CallAction):
            raise TypeError(f"step takes a CallAction, not {type(action).__name__}")
        result = await self._on_env(self.env.astep(self._episode, action.to_message()))
        if result.done:
            self._episode = None
        self._state.step_count += 1
        self._state.agent = result.observation.agent
        self._state.done = result.done
        return observation_of(result, self._state.task, self._state.seed)

    # The blocking forms (in-process use) run the async ones on the environment's loop.
    def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
              **unknown: Any) -> CallObservation:
        return self.env.run(self.reset_async(seed, episode_id, task, **unknown))

    def step(self, action: CallAction, timeout_s: float | None = None, **kwargs: Any) -> CallObservation:
        return self.env.run(self.step_async(action, timeout_s, **kwargs))

    @property
    def state(self) -> CallState:
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        return EnvironmentMetadata(
            name="callm", version="1",
            description="CALLM phone calls: the policy is the front desk's agents; the reward is the "
                        "benchmark's verdict (tools, handoff and database gates)")

    def close(self) -> None:
        """The session ended: its unfinished call is abandoned (its database goes). OpenEnv calls this
        from a worker thread, never from the environment's loop."""
        episode, self._episode = self._episode, None
        if episode is not None:
            try:
                self.env.submit(self.env.aclose_episode(episode)).result(timeout=30)
            except Exception:
                pass  # the environment is shutting down: its tool server removes what is left


def observation_of(result: StepResult, task: str, seed: int) -> CallObservation:
    obs, info = result.observation, result.info
    fields: dict[str, Any] = dict(
        task=task, seed=seed, agent=obs.agent, system_prompt=obs.system_prompt, tools=obs.tools,
        messages=obs.messages, new_messages=obs.new_messages, handoff_from=obs.handoff_from,
        exchange=obs.exchange, done=result.done, reward=result.reward, progress=result.info.get("progress"))
    if result.done:
        fields.update(passed=info.get("passed"), gates=info.get("gates") or {}, route=info.get("route"),
                      explanation=info.get("explanation") or "", end_reason=info.get("end_reason"),
                      infrastructure_error=info.get("infrastructure_error"))
        trajectory = info.get("trajectory")
        fields["metadata"] = {**{k: v for k, v in info.items() if k != "trajectory"},
                              "trajectory": trajectory.to_json() if trajectory is not None else None}
    return CallObservation(**fields)


def make_app(env: CallEnvironment, task_names: Iterable[str] | None = None, max_sessions: int = 64):
    """OpenEnv's FastAPI app over `env`: up to `max_sessions` WebSocket sessions (episodes) at once;
    `task_names` (`industry/task_id`, default all of `env`'s) are dealt to resets that name no task.
    The caller of this owns `env` and closes it after the app stops."""
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, not {max_sessions}")
    factory = functools.partial(CallOpenEnv, env, TaskDealer(env, task_names))
    app = create_app(factory, CallAction, CallObservation, env_name="callm", max_concurrent_envs=max_sessions)
    app.add_middleware(QuietSessionEnd)

    async def no_episode(request, error: NoEpisodeError):  # the client's mistake, not a server error
        return JSONResponse({"detail": str(error)}, status_code=409)

    async def unknown_task(request, error: UnknownTaskError):  # plain HTTP /reset; the WebSocket says it too
        return JSONResponse({"detail": str(error)}, status_code=404)

    app.add_exception_handler(NoEpisodeError, no_episode)
    app.add_exception_handler(UnknownTaskError, unknown_task)
    return app


class QuietSessionEnd:
    """OpenEnv 0.3 closes a session's WebSocket after the client has already closed it (the client
    sends `close`, then hangs up), and Starlette raises there: every ended session would log a
    traceback. A disconnect while a WebSocket ends is no error."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        try:
            await self.app(scope, receive, send)
        except WebSocketDisconnect:
            if scope["type"] != "websocket":
                raise


def serve(env: CallEnvironment | None = None, *, host: str = "127.0.0.1", port: int = 8000,
          task_names: Iterable[str] | None = None, max_sessions: int = 64, **env_options: Any) -> None:
    """Run the OpenEnv server with uvicorn in this thread until interrupted (Ctrl-C). Without `env`,
    a `CallEnvironment` is built from `env_options` (`tasks=` files or folders, `root=`, `caller=`,
    ...) and closed at the end. `task_names` and `max_sessions` are `make_app`'s."""
    owned = env is None
    env = env if env is not None else CallEnvironment(**env_options)
    try:
        OpenEnvServer(env, host=host, port=port, task_names=task_names, max_sessions=max_sessions).run()
    finally:
        if owned:
            env.close()


class OpenEnvServer:
    """The OpenEnv server on `host` at `port` (0: any free port). `run()` serves in this thread;
    `with OpenEnvServer(env) as server:` serves in a thread of its own while the block runs
    (`CallEnvClient(base_url=server.url)`). `env` stays the caller's to close."""

    def __init__(self, env: CallEnvironment, *, host: str = "127.0.0.1", port: int = 0,
                 task_names: Iterable[str] | None = None, max_sessions: int = 64):
        import uvicorn

        app = make_app(env, task_names, max_sessions)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((host, port))
        self.url = f"http://{host}:{self._sock.getsockname()[1]}"
        warning = exposure_warning(host, self._sock.getsockname()[1], "OpenEnv server")
        if warning:
            print(warning, file=sys.stderr, flush=True)
        # Keep-alive longer than any client's (calldb's note): a request never meets a closing connection.
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False,
                                                     timeout_keep_alive=SERVER_KEEPALIVE_S))
        self._thread: threading.Thread | None = None

    def run(self) -> None:
        try:
            self._server.run(sockets=[self._sock])
        finally:
            self._sock.close()

    def start(self, timeout: float = 30.0) -> OpenEnvServer:
        self._thread = threading.Thread(target=self.run, name="callm-openenv", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the OpenEnv server at {self.url} did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

    def __enter__(self) -> OpenEnvServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# --- the client side ------------------------------------------------------------------------------

class CallEnvClient(EnvClient[CallAction, CallObservation, CallState]):
    """OpenEnv's typed client of the server: `async with CallEnvClient(base_url=url) as env:
    result = await env.reset(task="legal/C4-H3", seed=1)`, then `await env.step(action)` until
    `result.done`; `.sync()` gives the blocking form. `step` also takes an OpenAI assistant message."""

    def _step_payload(self, action: CallAction | dict[str, Any]) -> dict[str, Any]:
        if not isinstance(action, CallAction):
            action = CallAction.from_message(action)
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> OpenEnvStepResult[CallObservation]:
        observation = CallObservation(**payload.get("observation", {}), done=payload.get("done", False),
                                      reward=payload.get("reward"))
        return OpenEnvStepResult(observation=observation, reward=payload.get("reward"),
                                 done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> CallState:
        return CallState(**payload)
