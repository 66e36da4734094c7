"""What one pytest process (an xdist worker, or the only process) needs to run calls.

One asyncio loop for the whole session, in a thread of its own (HTTP clients live in it, and calls
in flight make progress there while the caller's thread does other work), the tool server or a
client to a running one, and the factory that builds the model, caller and line for an attempt.
`play` plays one call and waits for it; `play_async` is the same call as a coroutine on that loop, so
`submit` can keep several in flight. It knows nothing of pytest, so a script or an RL environment can
drive attempts the same way.

The model is the oracle (`oracle`) or the streaming client of a model config. Any other model
plays against a caller: `caller_factory(task, pack, attempt)` may supply one per attempt (the plugin
wires it to the `pytest_callm_make_caller` hook); otherwise the simulated caller, on its own model
config, plays the task. The caller's words reach the model through the phone line (`line`).

A call that fails on the harness's side is rerun from the start once: the model's infrastructure
(retries used up, a refused request), the tool server (a 5xx, a connection lost three times) or any
exception raised by our own code while the call plays (the model's output never raises: whatever it
writes is refused to it and scored). What failed is kept in the trajectory (`rerun_because`) and
counted in the summary; if the rerun fails too, the attempt is an `InfrastructureError` and is never
scored. A `ModelAccessError` (bad key, unknown model) is not rerun: nothing else can succeed either;
nor is an answer key the oracle cannot play (`AnswerKeyError`: the same every time).
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import sysconfig
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pytest_callm.call.caller import Caller
from pytest_callm.scoring.cost import attempt_usage
from pytest_callm.call.engine import CallLimits, Watch, run_call
from pytest_callm.runs.loop_thread import LoopThread
from pytest_callm.model.latency import RequestSampler
from pytest_callm.phone.line import CleanLine, Line, make_line, warm_up
from pytest_callm.phone.rewriter import misheard_rewriter
from pytest_callm.call.script_caller import ScriptCaller
from pytest_callm.call.simulated_caller import SimulatedCaller
from pytest_callm.model.protocol import Model, ModelAccessError, ModelInfrastructureError
from pytest_callm.model.config import ORACLE, POLICY, ModelConfig
from pytest_callm.call.oracle import AnswerKeyError, OracleModel, ScriptedCaller
from pytest_callm.task.pack import Pack
from pytest_callm.task.task_file import Task
from pytest_callm.toolserver.client import ToolClient, ToolServerError, remember_token, require_packs
from pytest_callm.toolserver.process import ToolServer  # no FastAPI: that is the child's
from pytest_callm.toolserver.calldb import TOKEN_ENV, scrub
from pytest_callm.model import redact
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.scoring.verdict import score
from pytest_callm.scoring.verify import Verdict

if TYPE_CHECKING:  # the client imports the openai SDK, which an oracle run never needs
    from pytest_callm.model.client import OpenAIChatModel, RetryPolicy

CallerFactory = Callable[[Task, Pack, int], Caller]


class CallerUnavailable(Exception):
    pass


class InfrastructureError(Exception):
    """The attempt could not be played for reasons outside the model's control: never scored."""


_PACKAGE = Path(__file__).resolve().parent.parent  # pytest_callm/
_LIBRARIES = tuple({Path(sysconfig.get_paths()[k]).resolve() for k in ("stdlib", "platstdlib", "purelib", "platlib")})


def raised_by_us(error: BaseException) -> bool:
    """Whether the code that raised is ours: the innermost frame that is neither the standard library
    nor an installed package (pytest_callm excepted) lies in pytest_callm. A caller, line or hook
    of the user's own that raised is theirs."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        path = Path(frame.filename).resolve()
        if path.is_relative_to(_PACKAGE):
            return True
        if not any(path.is_relative_to(lib) for lib in _LIBRARIES) and not frame.filename.startswith("<"):
            return False  # the user's own file
    return False


def harness_fault(error: BaseException) -> str:
    """One line on an exception of the harness's own: its type, message and where it was raised."""
    if isinstance(error, ToolServerError):
        return f"ToolServerError: {error}"
    frames = traceback.extract_tb(error.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name})" if frames else ""
    return f"{type(error).__name__}: {redact.cut(str(error), 300)}{where}"  # redacted before the cut


def make_call_id(task_id: str, attempt: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", task_id)[:40]
    return f"{safe}-a{attempt}-{uuid.uuid4().hex[:12]}"


@dataclass
class Participants:
    model: Model
    caller: Caller
    line: Line


class Runtime:
    def __init__(self, model_name: str, packs: dict[str, Pack], tool_server_url: str | None = None,
                 limits: CallLimits = CallLimits(), *, model_config: ModelConfig | None = None,
                 api_key: str | None = None, retry: RetryPolicy | None = None,
                 caller_factory: CallerFactory | None = None, caller_config: ModelConfig | None = None,
                 caller_api_key: str | None = None, line: str = "default", line_config: ModelConfig | None = None,
                 line_api_key: str | None = None, latency_sample: int = 0, reruns: int = 1,
                 keep_calls: Path | None = None, concurrency: int = 1, tools_in_process: bool = False,
                 tool_server_token: str | None = None):
        self.model_name = model_name
        self.line_spec = line
        self.limits = limits
        self.reruns = reruns
        self.keep_calls = keep_calls  # a folder: call databases stay there, for debugging
        # The server this runtime starts serves its calls to this runtime only; a running one named by
        # URL gets the token its owner set in $CALLM_TOOL_SERVER_TOKEN, if any.
        self.tool_server_token = tool_server_token or (os.environ.get(TOKEN_ENV) if tool_server_url else None) \
            or (None if tool_server_url else secrets.token_urlsafe(32))
        self.caller_factory = caller_factory
        self.watch: Watch | None = None  # told each call's trajectory as it grows (engine.run_call)
        self.model_config = model_config
        self.client: OpenAIChatModel | None = None
        self.caller_client: OpenAIChatModel | None = None
        self.line_client: OpenAIChatModel | None = None
        self.concurrency = concurrency
        if model_name not in (ORACLE, POLICY) and model_config is None:
            raise ValueError(f"model {model_name!r} needs a model config")
        self._loop = LoopThread()
        self._server = None
        self.tools: ToolClient | None = None
        try:
            # The tool server starts in its own process while this one imports the model client and
            # loads the line's dictionary: the first call is seconds sooner.
            with ThreadPoolExecutor(max_workers=1) as starter:
                # `tools_in_process` (callm prove): the server's tool runner called here, no HTTP.
                starting = None if tool_server_url or tools_in_process else \
                    starter.submit(self._start_tool_server, packs, keep_calls, self.tool_server_token)
                try:
                    # An RL policy's caller model talks through the plain httpx client, and with the
                    # offline caller and line the environment needs no model client at all: NeMo Gym's
                    # venv holds an openai the SDK client refuses (tests/nemo_gym/make_venv.sh).
                    if model_name == POLICY and caller_config is not None:
                        from pytest_callm.model.config import RetryPolicy
                        from pytest_callm.model.plain_client import PlainChatModel

                        self.caller_client = PlainChatModel(caller_config, caller_api_key, retry or RetryPolicy(),
                                                            connections=concurrency)
                    if model_name != ORACLE and (model_name != POLICY or line_config is not None):
                        from pytest_callm.model.client import OpenAIChatModel, RetryPolicy

                        sampler = RequestSampler(latency_sample) if latency_sample else None
                        retry = retry or RetryPolicy()
                        # A call has at most one request of each kind open at a time: pools of
                        # `concurrency` connections (and headroom) never make a call wait for another's.
                        pool = dict(connections=concurrency)
                        if model_name != POLICY:
                            self.client = OpenAIChatModel(model_config, api_key, retry, sampler, **pool)
                        # The caller and the line's rewriter talk through the same client, at their own configs.
                        if caller_config is not None and self.caller_client is None:
                            self.caller_client = OpenAIChatModel(caller_config, caller_api_key, retry, **pool)
                        if line_config is not None:
                            self.line_client = OpenAIChatModel(line_config, line_api_key, retry, **pool)
                    if model_name != ORACLE:
                        warm_up(line)
                finally:
                    if starting is not None:
                        self._server = starting.result()
            if tools_in_process:
                from pytest_callm.toolserver.in_process import InProcessTools

                self.tool_server_url = None
                self.tools = InProcessTools(packs)
            else:
                self.tool_server_url = tool_server_url or self._server.url
                self.tools = self.run(self._connect(None if self._server else packs))
        except BaseException:
            self.close()  # a runtime that could not start leaves no thread, server or connection behind
            raise

    @staticmethod
    def _start_tool_server(packs: dict[str, Pack], keep_calls: Path | None, token: str | None):
        # ToolServer is imported at the top: this runs in a thread, and no thread imports.
        return ToolServer(packs, data_dir=keep_calls, token=token).start()

    async def _connect(self, check: dict[str, Pack] | None) -> ToolClient:
        """A client of the tool server; one started by someone else (`check`: this run's packs) must
        serve each of these packs from the same files, or the run would be scored against others."""
        remember_token(self.tool_server_url, self.tool_server_token)  # for clients of this process's own making
        client = ToolClient(self.tool_server_url, connections=max(self.concurrency, 2), token=self.tool_server_token)
        try:
            health = await client.health()
            if check is not None:
                require_packs(health, check, self.tool_server_url)
        except BaseException:
            await client.aclose()
            raise
        return client

    def model_for(self, task: Task, pack: Pack) -> Model:
        """The model under test for one call: the oracle replays this task's key, else the shared client."""
        if self.model_name == ORACLE:
            return OracleModel(task, pack, self.limits.max_requests_per_turn)
        if self.client is None:
            raise ValueError(f"{self.model_name!r}: the policy is driven from outside (pytest_callm.rl), not asked here")
        return self.client

    def caller_for(self, task: Task, pack: Pack, attempt: int, model: Model) -> Caller:
        """A fresh caller for one call (callers keep the conversation, so never reuse one)."""
        if self.model_name == ORACLE:
            # The oracle's caller is the offline one, the caller training and the RL adapters use:
            # the key's questions get the script's answers, so a saved oracle call reads as a call.
            return ScriptCaller(task, pack, attempt)
        caller = self.caller_factory(task, pack, attempt) if self.caller_factory else None
        if caller is None:
            if self.caller_client is None:
                raise CallerUnavailable(f"--callm-model={self.model_name}: no caller model configured")
            caller = SimulatedCaller(task, pack.company, self.caller_client)
        return caller

    def line_for(self, task: Task, attempt: int) -> Line:
        """The phone line of one attempt; its draws depend only on task, attempt and turn."""
        if self.model_name == ORACLE:
            return CleanLine()  # the oracle replays a key: nothing to mishear
        rewriter = misheard_rewriter(self.line_client) if self.line_client is not None else None
        return make_line(self.line_spec, task.task_id, attempt, task.customer_name, rewriter=rewriter)

    def participants(self, task: Task, pack: Pack, attempt: int) -> Participants:
        model = self.model_for(task, pack)
        return Participants(model, self.caller_for(task, pack, attempt, model), self.line_for(task, attempt))

    def replay_answer_key(self, task: Task, pack: Pack) -> Trajectory:
        """The task's answer key played by the oracle on a fresh seed, whatever model this runtime
        tests: the expected state of a task that does not write one down."""
        model = OracleModel(task, pack, self.limits.max_requests_per_turn)
        return self.play(task, pack, 1, Participants(model, ScriptedCaller(model), CleanLine()), rerun=False)

    def run(self, coro):
        """Run a coroutine in this process's event loop (where the HTTP clients live) and wait for it."""
        return self._loop.run(coro)

    def submit(self, coro):
        """Start a coroutine in this process's event loop; its result arrives in the returned
        `concurrent.futures.Future`."""
        return self._loop.submit(coro)

    def cancel_all(self) -> None:
        """Cancel every call in flight and wait until each has removed its database."""
        self._loop.cancel_all()

    def start_call(self, pack: Pack, call_id: str, records: dict | None = None) -> None:
        """Create the call's database: the seed, plus the task's own `records` when it has some."""
        self.run(self.tools.start_call(pack.name, call_id, records) if records
                 else self.tools.start_call(pack.name, call_id))

    def run_attempt(self, task: Task, pack: Pack, attempt: int) -> tuple[Trajectory, Verdict]:
        trajectory = self.play(task, pack, attempt)
        return trajectory, score(task, pack, trajectory)

    def play(self, task: Task, pack: Pack, attempt: int, who: Participants | None = None,
             call_id: str | None = None, *, rerun: bool = True) -> Trajectory:
        """Play one call and wait for it (`play_async` says how)."""
        return self.run(self.play_async(task, pack, attempt, who, call_id, rerun=rerun))

    async def play_async(self, task: Task, pack: Pack, attempt: int, who: Participants | None = None,
                         call_id: str | None = None, *, rerun: bool = True) -> Trajectory:
        """Play one call, on this runtime's loop. `who` and `call_id` (the pytest fixtures' values) play the first run, and the
        owner of `call_id` removes its database. A rerun after an infrastructure failure needs a fresh
        model and caller: it builds the default ones (keeping `who.line`, which holds no state), and
        with `rerun=False` (a model or caller of the user's own) the call is not rerun."""
        failures: list[str] = []
        for run in range(self.reruns + 1 if rerun else 1):
            first = run == 0
            if not first or who is None:
                fresh = self.participants(task, pack, attempt)
                who = fresh if who is None else Participants(fresh.model, fresh.caller, who.line)
            owned = not (first and call_id)
            this_call = make_call_id(task.task_id, attempt) if owned else call_id
            try:
                trajectory = await run_call(
                    pack=pack, model=who.model, caller=who.caller, line=who.line, tools=self.tools,
                    call_id=this_call, task_id=task.task_id, attempt=attempt, limits=self.limits,
                    watch=self.watch, records=task.records)
            except (ModelAccessError, AnswerKeyError):
                raise
            except ModelInfrastructureError as e:
                failures.append(str(e))
                continue
            except Exception as e:  # the tool server, or a bug of ours: the harness's fault, never the model's
                if not isinstance(e, ToolServerError) and (not rerun or not raised_by_us(e)):
                    raise  # code of the user's own raised (a caller, a line, a hook's): that attempt's own error
                failures.append(harness_fault(e))
                continue
            finally:
                if owned:
                    await self.forget_async(pack, this_call)
            trajectory.reruns = run
            trajectory.rerun_because = failures
            after = getattr(who.model, "after_call", None)
            if after is not None:
                after(trajectory.tool_calls)
            return trajectory
        raise InfrastructureError(f"the call failed {len(failures)} times on the harness's or the model server's "
                                  "side, and is not scored:\n"
                                  + "\n".join(f"  run {i + 1}: {f}" for i, f in enumerate(failures)))

    def forget_call(self, pack: Pack, call_id: str) -> None:
        """Remove the call's database once its final state is in the trajectory (unless kept)."""
        self.run(self.forget_async(pack, call_id))

    async def forget_async(self, pack: Pack, call_id: str) -> None:
        try:
            # A server keeping the calls (--callm-keep-calls) closes the call and leaves its file.
            await self.tools.remove_call(pack.name, call_id)
        except ToolServerError:
            pass  # never started (the call failed before its first request), or the server is gone
        if self.keep_calls is not None:
            # Kept for debugging, with no key in it: what a model wrote into an argument a tool stored.
            kept = self.keep_calls / pack.name / f"{call_id}.sqlite"
            if redact.active() and kept.is_file():
                await asyncio.to_thread(scrub, kept, redact.text)

    def usage(self, trajectory: Trajectory) -> dict[str, Any] | None:
        """Timing, tokens, cost and estimated duration of a call (None for the oracle: nothing to count)."""
        if self.client is None:
            return None
        return attempt_usage(trajectory, self.model_config.prices)

    def latency_sample(self) -> dict[str, Any] | None:
        """The requests kept for `--callm-latency`, JSON-safe (None when not sampling)."""
        if self.client is None or self.client.sampler is None:
            return None
        return self.client.sampler.to_json()

    def close(self) -> None:
        if self._loop.loop.is_closed():  # closed already (an RL framework's exit hook closes again)
            return
        try:
            self.cancel_all()
            for client in (self.tools, self.client, self.caller_client, self.line_client):
                if client is not None:
                    self.run(client.aclose())
        finally:
            self._loop.close()
            if self._server is not None:
                self._server.stop()
