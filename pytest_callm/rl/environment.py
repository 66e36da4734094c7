"""CALLM's calls as a reinforcement-learning environment: the trainer owns the policy.

An episode is one call of one task at one seed (the attempt number: the phone line's draws depend on
task, seed and turn). The caller, the phone line and the tool server live here; the policy is the
model under test, sampled by whoever drives the episode. `reset` returns the first observation (the
active agent's system prompt and tools, the greeting and the caller's first heard turn); `step` takes
the policy's reply (an OpenAI assistant message, or a `ModelReply`) and returns the next observation.
At the end the reward is the benchmark's verdict on the trajectory: 1.0 when the tools, handoff and
database gates all pass, else 0.0, with each gate and the verdict's explanation in `info`. No
language model takes part in the reward. An episode that the environment itself could not play (the
caller's model or the tool server failed) ends with `reward=None` and the reason in
`info["infrastructure_error"]`: never a 0 for the policy.

Every step's `info["progress"]` holds signals a trainer may use between rewards (`progress`): the
answer key's expected calls matched so far, and at the end the gates the call failed and why it
ended. `shaped=True` adds `info["shaped"]` at the end, partial credit (`shaped_score`) that is never
the reward and never the benchmark's figure.

The benchmark plays the same `Episode` (`pytest_callm.call.episode`) with its model client, so a
trajectory played here and one played by `pytest --callm-model` are the same data.

The caller is the simulated caller on a model config (`caller=ModelConfig`, as the benchmark plays
it) or, offline (`offline_caller=`), `ScriptCaller` ("script", the default): it answers what the agent
asks from the task's script, with no model (`pytest_callm.call.script_caller`); or `OpeningCaller`
("opening", a smoke test): the task's opening line, then one fixed line each turn, never hanging up.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_callm.authoring.lock import find_task_files
# OpeningCaller and NOTHING_MORE were first defined here; they are kept importable from here.
from pytest_callm.call.script_caller import (NOTHING_MORE, OFFLINE_CALLERS, OpeningCaller,  # noqa: F401
                                             ScriptCaller, make_offline_caller)
from pytest_callm.call.episode import CallLimits, Episode, Observation
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.model.config import POLICY, ModelConfig
from pytest_callm.model.protocol import ModelInfrastructureError, ModelReply
from pytest_callm.runs.runtime import Runtime, make_call_id
from pytest_callm.scoring.verdict import score
from pytest_callm.scoring.verify import Verdict, _fits, check_tools
from pytest_callm.task.benchmark import benchmark_root
from pytest_callm.task.pack import Pack, PackRegistry, default_industries
from pytest_callm.task.task_file import Task, load_task
from pytest_callm.toolserver.client import ToolServerBusy, ToolServerError

if TYPE_CHECKING:  # the client imports the openai SDK, which an offline environment never needs
    from pytest_callm.model.client import RetryPolicy

def exposure_warning(host: str, port: int, what: str) -> str | None:
    """The line a server bound beyond loopback prints: none of CALLM's servers authenticates."""
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if loopback:
        return None
    return (f"WARNING: the {what} at {host}:{port} answers anyone who can reach that address: it has no "
            "authentication. Bind 127.0.0.1 (the default) and put a proxy that authenticates in front of it "
            "to serve other machines.")


def reward_info(verdict: Verdict) -> dict[str, Any]:
    """The reward's components: each gate, the route a passing call followed, and the explanation."""
    return {"passed": verdict.passed, "gates": verdict.gates, "route": verdict.route,
            "explanation": verdict.explain(), "verdict": verdict.to_json()}


def progress(task: Task, pack: Pack, trajectory: Trajectory, verdict: Verdict | None = None,
             matched: int | None = None) -> dict[str, Any]:
    """Signals for one step of an episode, from the trajectory so far: how many of the answer key's
    expected calls it has matched (`matched_calls` of `expected_calls`: the size of the tools gate's
    matching against the main key, so a call that follows one of the task's other routes may match
    fewer; `matched` when the caller already knows it, as `CallMatcher` does), and once `verdict` is
    given (the call ended) the gates it failed and its end reason. The reward is the verdict alone:
    nothing here changes it."""
    if matched is None:
        matched = sum(c["matched"] is not None for c in check_tools(task, pack, trajectory).details["calls"])
    out: dict[str, Any] = {"expected_calls": len(task.exp_tool_calls), "matched_calls": matched}
    if verdict is not None:
        out["failed_gates"] = [gate for gate, ok in verdict.gates.items() if not ok]
        out["end_reason"] = trajectory.end_reason
    return out


class CallMatcher:
    """The matched count of `progress`, kept up to date as calls come: each executed call is checked
    against each expected call once (the gate's own test, `_fits`), then a maximum matching is found
    on those pairs. Its size is the tools gate's (the gate's matching is a maximum one too); checking
    every pair again at every step cost 1.4 ms a step late in a call, as much as the rest of a step."""

    def __init__(self, task: Task, pack: Pack):
        self.task, self.pack = task, pack
        self.fits: list[list[int]] = [[] for _ in task.exp_tool_calls]  # expected -> executed calls it fits
        self.checked = 0

    def matched(self, trajectory: Trajectory) -> int:
        executed = [c for c in trajectory.tool_calls if not c.refused]
        for j in range(self.checked, len(executed)):
            for i, expected in enumerate(self.task.exp_tool_calls):
                if _fits(expected, executed[j], self.pack):
                    self.fits[i].append(j)
        self.checked = len(executed)
        owner: dict[int, int] = {}  # executed call -> expected call (augmenting paths)

        def place(i: int, seen: set[int]) -> bool:
            for j in self.fits[i]:
                if j not in seen:
                    seen.add(j)
                    if j not in owner or place(owner[j], seen):
                        owner[j] = i
                        return True
            return False

        return sum(place(i, set()) for i in range(len(self.fits)))


def shaped_score(passed: bool, signals: dict[str, Any]) -> float:
    """Opt-in partial credit (`CallEnvironment(shaped=True)`), for trainers that want a denser signal
    than 0/1: 1.0 for a passing call; a failing one gets 0.9 times the mean of three parts, the share
    of expected calls matched and whether each of the handoff and database gates passed, so it always
    stays below a pass. It is not the benchmark's verdict: report the reward, never this."""
    if passed:
        return 1.0
    failed = set(signals["failed_gates"])
    calls = signals["matched_calls"] / signals["expected_calls"] if signals["expected_calls"] else 1.0
    return 0.9 * (calls + ("handoff" not in failed) + ("database" not in failed)) / 3


@dataclass
class StepResult:
    observation: Observation
    done: bool
    reward: float | None = None  # set when done; None when the episode could not be scored
    info: dict[str, Any] = field(default_factory=dict)


@dataclass
class Running:
    """One episode in flight."""

    task: Task
    pack: Pack
    episode: Episode
    seed: int
    matcher: CallMatcher = field(init=False)
    closed: bool = False  # closed while a step was in flight: that step's end is not scored
    stepping: bool = False  # a step is in flight: a second one at once would interleave two replies

    def __post_init__(self) -> None:
        self.matcher = CallMatcher(self.task, self.pack)


class CallEnvironment:
    """Episodes of CALLM tasks, many in flight at once (one asyncio loop, one tool server).

    `tasks`: task files or folders (default `tasks/` under `root`); `industries`: pack folders
    (default those of `root`, as pytest finds them); `root`: default the benchmark installed with the
    plugin (`pytest_callm.task.benchmark`: its 180 locked tasks and three packs; a checkout's own).
    The async methods run on the environment's loop (`run`/`submit` put a coroutine there);
    `reset`/`step` are their blocking forms.
    `tools_in_process`: the tool server's own tool runner called on the environment's loop instead of
    over HTTP (the same tools, databases and results: the verdict is byte-identical, and a policy
    request costs the tool hop no CPU); the HTTP server stays the default, as the benchmark plays it.
    `offline_caller`: the caller when no `caller` model is given: "script" (answers from the task's
    script) or "opening" (its opening line, then nothing: a smoke test).
    """

    def __init__(self, tasks: Iterable[Path | str] | None = None, *, root: Path | str | None = None,
                 industries: Iterable[Path | str] | None = None, caller: ModelConfig | None = None,
                 caller_api_key: str | None = None, line: str = "default", limits: CallLimits = CallLimits(),
                 tool_server_url: str | None = None, concurrency: int = 256, retry: RetryPolicy | None = None,
                 tool_server_token: str | None = None, shaped: bool = False, tools_in_process: bool = False,
                 offline_caller: str = "script"):
        root = Path(root) if root is not None else benchmark_root()
        self.shaped = shaped
        self.packs = PackRegistry(list(map(Path, industries)) if industries is not None else default_industries(root))
        self.tasks: dict[str, tuple[Task, Pack]] = {}
        self.paths: dict[str, Path] = {}  # each task's file, resolved
        for path in find_task_files(list(map(Path, tasks)) if tasks is not None else [root / "tasks"]):
            _, task, pack = load_task(path, self.packs)
            self.tasks[task.name] = (task, pack)
            self.paths[task.name] = Path(path).resolve()
        if not self.tasks:
            raise ValueError(f"no task files in {list(tasks) if tasks is not None else root / 'tasks'}")
        self.limits = limits
        if offline_caller not in OFFLINE_CALLERS:  # a bad name fails here, not at the first reset
            raise ValueError(f"offline_caller={offline_caller!r}: one of {', '.join(OFFLINE_CALLERS)}")
        caller_factory = None if caller is not None else (
            lambda task, pack, attempt: make_offline_caller(offline_caller, task, pack, attempt))
        self.runtime = Runtime(POLICY, self.packs.loaded(), tool_server_url, limits, caller_factory=caller_factory,
                               caller_config=caller, caller_api_key=caller_api_key, line=line,
                               concurrency=concurrency, retry=retry, tool_server_token=tool_server_token,
                               tools_in_process=tools_in_process)
        self._running: dict[str, Running] = {}
        self._ids = itertools.count(1)

    # --- the episode API -----------------------------------------------------------------------

    def task_names(self) -> list[str]:
        return sorted(self.tasks)

    def task(self, name: str) -> tuple[Task, Pack]:
        try:
            return self.tasks[name]
        except KeyError:
            raise KeyError(f"no task {name!r}: names are industry/task_id, e.g. {self.task_names()[0]}") from None

    async def areset(self, task_name: str, seed: int = 1) -> tuple[str, StepResult]:
        """Start an episode of `task_name` (`industry/task_id`) at `seed`: (episode id, first step).
        A caller that hangs up at once gives a first step that is already done."""
        task, pack = self.task(task_name)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"seed={seed!r}: a whole number (the attempt: the phone line's draws depend on it)")
        runtime = self.runtime
        episode = Episode(pack=pack, caller=runtime.caller_for(task, pack, seed, None), line=runtime.line_for(task, seed),
                          tools=runtime.tools, call_id=make_call_id(task.task_id, seed), task_id=task.task_id,
                          attempt=seed, model_name=POLICY, limits=self.limits, records=task.records)
        episode_id = f"ep{next(self._ids)}-{episode.trajectory.call_id}"
        running = self._running[episode_id] = Running(task, pack, episode, seed)
        return episode_id, await self._advance(episode_id, running, episode.reset())

    async def astep(self, episode_id: str, reply: ModelReply | dict[str, Any]) -> StepResult:
        """The policy's reply to the episode's last observation; the next step."""
        running = self._in_flight(episode_id)
        return await self._advance(episode_id, running, running.episode.step(reply))

    async def abreak(self, episode_id: str, reason: str) -> StepResult:
        """The policy could not answer (its context overflowed): the call ends as its failure."""
        running = self._in_flight(episode_id)
        return await self._advance(episode_id, running, running.episode.break_call(reason))

    async def aend(self, episode_id: str, reason: str) -> StepResult:
        """The policy stopped before the call ended (its rollout is over): the call ends as it stands
        and is scored."""
        running = self._in_flight(episode_id)
        return await self._advance(episode_id, running, running.episode.end(reason))

    async def aclose_episode(self, episode_id: str) -> None:
        """Abandon an episode (its database goes); a finished episode is already closed."""
        running = self._running.pop(episode_id, None)
        if running is not None:
            running.closed = True
            await self._forget(running)

    def reset(self, task_name: str, seed: int = 1) -> tuple[str, StepResult]:
        return self.run(self.areset(task_name, seed))

    def step(self, episode_id: str, reply: ModelReply | dict[str, Any]) -> StepResult:
        return self.run(self.astep(episode_id, reply))

    def trajectory(self, episode_id: str) -> Trajectory:
        """An episode in flight's trajectory so far (a finished one's is in its last step's `info`)."""
        running = self._running.get(episode_id)
        if running is None:
            raise KeyError(f"no episode {episode_id!r} in flight (finished, closed, or never started): a finished "
                           "episode's trajectory is in its last step's info['trajectory']")
        return running.episode.trajectory

    # --- plumbing ------------------------------------------------------------------------------

    def _in_flight(self, episode_id: str) -> Running:
        running = self._running.get(episode_id)
        if running is None:
            raise KeyError(f"no episode {episode_id!r} in flight (finished, closed, or never started)")
        if running.stepping:
            raise RuntimeError(f"episode {episode_id!r} is already taking a step: send the next reply once its "
                               "observation is back (one request at a time, as in a call)")
        return running

    async def _advance(self, episode_id: str, running: Running, move) -> StepResult:
        running.stepping = True
        try:
            return await self._advanced(episode_id, running, move)
        finally:
            running.stepping = False

    async def _advanced(self, episode_id: str, running: Running, move) -> StepResult:
        try:
            observation = await move
        except (ModelInfrastructureError, ToolServerError, OSError) as e:
            if running.closed:
                return await self._abandoned(running)
            # The caller's model or the tool server failed: the environment's fault, not the policy's.
            self._running.pop(episode_id, None)
            await self._forget(running)
            trajectory = running.episode.trajectory
            return StepResult(Observation(running.episode.agent, "", [], [], [], done=True), True, None,
                              {"infrastructure_error": f"{type(e).__name__}: {e}", "task": running.task.name,
                               "seed": running.seed, "trajectory": trajectory,
                               "busy": isinstance(e, ToolServerBusy)})
        if running.closed:
            return await self._abandoned(running)
        trajectory = running.episode.trajectory
        if not observation.done:
            matched = running.matcher.matched(trajectory)
            return StepResult(observation, False,
                              info={"progress": progress(running.task, running.pack, trajectory, matched=matched)})
        self._running.pop(episode_id, None)
        await self._forget(running)
        verdict = score(running.task, running.pack, trajectory)
        signals = progress(running.task, running.pack, trajectory, verdict, running.matcher.matched(trajectory))
        info = {**reward_info(verdict), "task": running.task.name, "seed": running.seed,
                "end_reason": trajectory.end_reason, "trajectory": trajectory, "progress": signals}
        if self.shaped:
            info["shaped"] = shaped_score(verdict.passed, signals)
        return StepResult(observation, True, 1.0 if verdict.passed else 0.0, info)

    async def _abandoned(self, running: Running) -> StepResult:
        """A step that was in flight when its episode was closed: its tools may have run on a database
        made afresh from the seed after the close removed the call's, so its end is nobody's verdict:
        reward None, as for an infrastructure failure, and that database goes too."""
        await self._forget(running)
        return StepResult(Observation(running.episode.agent, "", [], [], [], done=True), True, None,
                          {"closed": "the episode was closed while this step was in flight: not scored",
                           "task": running.task.name, "seed": running.seed, "trajectory": running.episode.trajectory})

    async def _forget(self, running: Running) -> None:
        await self.runtime.forget_async(running.pack, running.episode.trajectory.call_id)

    def run(self, coro):
        """Run a coroutine on the environment's loop and wait for it."""
        return self.runtime.run(coro)

    def submit(self, coro):
        """Start a coroutine on the environment's loop; a `concurrent.futures.Future` of its result."""
        return self.runtime.submit(coro)

    def close(self) -> None:
        for episode_id in list(self._running):
            try:
                self.run(self.aclose_episode(episode_id))
            except Exception:
                pass
        self.runtime.close()

    def __enter__(self) -> CallEnvironment:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


async def play_policy(env: CallEnvironment, task_name: str, policy, seed: int = 1) -> StepResult:
    """One whole episode with `policy.respond(ModelRequest) -> ModelReply` (any engine `Model`)."""
    episode_id, result = await env.areset(task_name, seed)
    while not result.done:
        reply = await policy.respond(result.observation.request())
        result = await env.astep(episode_id, reply)
    return result


def gather_on(env: CallEnvironment, coros) -> list[Any]:
    """Run coroutines concurrently on the environment's loop, at most as many at once as it has tool
    server connections; their results in order. Started all at once, hundreds of episodes queued for
    a connection inside the tool client, where the wait counted against each request's 30 s bound:
    on a slow machine, episodes at the back ended unplayed (a timeout creating their call)."""
    async def together():
        turn = asyncio.Semaphore(max(1, env.runtime.concurrency))

        async def in_turn(coro):
            async with turn:
                return await coro
        return await asyncio.gather(*(in_turn(c) for c in coros))
    return env.run(together())
