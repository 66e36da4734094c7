"""CALLM's calls as a `verifiers` multi-turn environment (the `verifiers` extra; tested with 0.3.1).

Only for users who installed the extra: this module imports `verifiers`, so nothing else in the
package imports it. Load it the way verifiers loads any environment, by module name:

    import verifiers as vf
    env = vf.load_environment("pytest_callm.rl.verifiers_env", industry="legal", seeds=[1, 2, 3])

A dataset row is one task at one seed: its `prompt` is the entry agent's system prompt followed by
the first observation (the greeting and the caller's first turn as heard through the line), its
`info` (a JSON string) holds `callm_row`, `callm export`'s row for that seed (`rl/dataset.py`:
`task`, `tools`, `info`, `answer_key_hash`, and `seed`; its prompt is the row's own, which goes on
with the caller's first words), and `tool_defs`, the same tools in verifiers' per-row form. (The row
is not `info` itself: verifiers takes `info["task"]` for a task payload of its own.) A rollout plays a live
`CallEnvironment` episode: `setup_state` starts the call, `env_response` hands the policy's last
assistant message to the call and returns what came back (tool results, the caller's next turn).
The rubric is the benchmark's verdict: reward 1.0 when all three gates pass, else 0.0, and each gate
as a metric of weight 0 (`gate_tools`, `gate_handoff`, `gate_database`).

A handoff swaps the agent's system prompt and tools. The tools of the next request follow the
active agent (`state["tool_defs"]`, which verifiers reads on every model request). The prompt, by
`handoff=`: "append" (default) adds the new agent's prompt as a system message after the handoff's
tool result, so each turn's prompt extends the last; "replace" swaps the first system message, as
the benchmark shows it to the model (`pytest --callm-model`), at the cost of that prefix property.

An episode the environment could not play (the tool server or the caller's model failed) is not a
verdict: `setup_state` or `env_response` raises `vf.InfraError`, which verifiers' rollout loop
stores in `state["error"]` and stops on; the rollout's output carries `error` (verifiers counts it in
`avg_error` and retries it when `max_retries > 0`), and no `callm` verdict. verifiers still puts a
number in `reward` (its rubric always does): a trainer must drop rollouts that carry `error`. A
reply verifiers itself refuses (an empty one: `vf.EmptyModelResponseError`) ends the same way,
unscored. A rollout verifiers stops before the call ends (`max_turns`, an overlong prompt, its
`timeout_seconds`) ends the call as the policy's failure and is scored, as the benchmark scores a
context overflow.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import verifiers as vf
from verifiers.types import Messages, State, SystemMessage
from verifiers.utils.message_utils import normalize_messages

from pytest_callm.call.episode import CallLimits, spoken_text
from pytest_callm.model.config import ModelConfig
from pytest_callm.model.config import resolve as resolve_config
from pytest_callm.rl.environment import CallEnvironment, StepResult, gather_on
from pytest_callm.rl.dataset import dataset_row
from pytest_callm.task.benchmark import benchmark_root

HANDOFF_MODES = ("append", "replace")
ROW_KEY = "callm_row"  # the shared row in `info`


def tool_defs(schemas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI function tools as verifiers' provider-neutral tool definitions."""
    defs = []
    for schema in schemas:
        fn = schema["function"]
        tool = {"name": fn["name"], "description": fn.get("description", ""),
                "parameters": fn.get("parameters") or {"type": "object", "properties": {}}}
        if "strict" in fn:
            tool["strict"] = fn["strict"]
        defs.append(tool)
    return defs


def assistant_message(message: Any) -> dict[str, Any]:
    """verifiers' assistant message as the OpenAI dict `CallEnvironment.astep` takes."""
    content = spoken_text(message.content)
    calls = [{"id": tc.id, "type": "function", "function": {"name": tc.name, "arguments": tc.arguments}}
             for tc in message.tool_calls or []]
    return {"role": "assistant", "content": content, "tool_calls": calls,
            "reasoning_content": getattr(message, "reasoning_content", None)}  # kept in the trajectory


def verdict_of(result: StepResult) -> dict[str, Any]:
    """The scored end of an episode, JSON-ready (ask for it with `state_columns=["callm"]`)."""
    info = result.info
    return {"reward": result.reward, "passed": info["passed"], "gates": info["gates"], "route": info["route"],
            "explanation": info["explanation"], "end_reason": info["end_reason"], "task": info["task"],
            "seed": info["seed"], "verdict": info["verdict"], "progress": info["progress"]}


class CallmEnv(vf.MultiTurnEnv):
    """The calls of `calls` (a `CallEnvironment`), one dataset row per task and seed: `names` the
    training split, `eval_names` the evaluation split (default: the same tasks)."""

    def __init__(self, calls: CallEnvironment, names: list[str], seeds: list[int], handoff: str = "append",
                 eval_names: list[str] | None = None, **kwargs):
        if handoff not in HANDOFF_MODES:
            raise ValueError(f"handoff={handoff!r}: one of {', '.join(HANDOFF_MODES)}")
        self.calls = calls
        self.handoff = handoff
        self._rows: dict[str, Any] = {}
        self._closed = False
        splits = {"train": names, "eval": names if eval_names is None else eval_names}

        def rows(split: str):  # each built once, when verifiers first asks for it
            def build():
                if split not in self._rows:
                    from datasets import Dataset

                    self._rows[split] = Dataset.from_list(dataset_rows(calls, splits[split], seeds))
                return self._rows[split]
            return build

        super().__init__(dataset=rows("train"), eval_dataset=rows("eval"), rubric=GatesRubric(), **kwargs)

    async def _on_calls(self, coro):
        # The calls live on their own loop thread; the rollout runs on verifiers' loop.
        return await asyncio.wrap_future(self.calls.submit(coro))

    async def setup_state(self, state: State) -> State:
        row = state["info"][ROW_KEY]
        episode_id, result = await self._on_calls(self.calls.areset(row["task"], row["seed"]))
        state["callm_episode"] = episode_id
        state["callm"] = None
        raise_infrastructure(result)
        observation = result.observation
        # The live episode's first observation: the row's prompt, unless a model caller said otherwise.
        state["prompt"] = [SystemMessage(content=observation.system_prompt),
                           *normalize_messages(observation.messages, field_name="callm first observation")]
        self._follow_agent(state, observation)
        if result.done:  # the caller hung up at once
            self._finish(state, result)
            state["final_env_response"] = []
        return state

    async def env_response(self, messages: Messages, state: State, **kwargs) -> Messages:
        result = await self._on_calls(self.calls.astep(state["callm_episode"], assistant_message(messages[-1])))
        raise_infrastructure(result)
        observation = result.observation
        state["callm_progress"] = result.info.get("progress")  # per-step signals, never the reward
        new = normalize_messages(observation.new_messages, field_name="callm observation")
        if result.done:
            self._finish(state, result)
            state["final_env_response"] = new
            return new
        if observation.handoff_from is not None:
            self._follow_agent(state, observation)
            if self.handoff == "append":
                new.append(SystemMessage(content=observation.system_prompt))
        return new

    async def get_prompt_messages(self, state: State) -> Messages:
        messages = await super().get_prompt_messages(state)
        if self.handoff == "replace" and messages and messages[0].role == "system":
            messages = [SystemMessage(content=state["callm_system_prompt"]), *messages[1:]]
        return messages

    def _follow_agent(self, state: State, observation) -> None:
        state["callm_agent"] = observation.agent
        state["callm_system_prompt"] = observation.system_prompt
        state["tool_defs"] = self._normalize_tool_defs(tool_defs(observation.tools)) or []

    @staticmethod
    def _finish(state: State, result: StepResult) -> None:
        state["callm"] = verdict_of(result)
        state["callm_trajectory"] = result.info["trajectory"]  # the benchmark's data, for rescoring

    @vf.cleanup
    async def end_unfinished_call(self, state: State) -> None:
        """A rollout that verifiers stopped before the call ended (max_turns, an overlong prompt, its
        timeout) ends the call as the policy's failure, as the benchmark scores a context overflow;
        one stopped by an error is abandoned unscored."""
        episode_id = state.get("callm_episode")
        if episode_id is None or state.get("callm") is not None:
            return
        if state.get("error") is not None:
            await self._on_calls(self.calls.aclose_episode(episode_id))
            return
        reason = f"stopped by verifiers: {state.get('stop_condition') or 'unknown'}"
        try:
            result = await self._on_calls(self.calls.abreak(episode_id, reason))
            raise_infrastructure(result)
        except Exception as e:  # the call could not be ended and scored: not the policy's verdict
            await self._on_calls(self.calls.aclose_episode(episode_id))
            state["error"] = e if isinstance(e, vf.Error) else vf.InfraError(f"{type(e).__name__}: {e}")
            return
        self._finish(state, result)

    @vf.teardown
    async def close_calls(self) -> None:
        self.close()

    def close(self) -> None:
        """Stop the calls' tool server and loop (verifiers' teardown and exit do it too)."""
        if not self._closed:
            self._closed = True
            self.calls.close()


def raise_infrastructure(result: StepResult) -> None:
    if result.reward is None and "infrastructure_error" in result.info:
        raise vf.InfraError(f"{result.info['task']} (seed {result.info['seed']}): "
                            f"{result.info['infrastructure_error']}")


def scored(state: State) -> dict[str, Any] | None:
    return state.get("callm")


async def callm_reward(state: State) -> float:
    """1.0 when the tools, handoff and database gates all pass, else 0.0 (also, by verifiers' shape,
    for a rollout it stopped with an error: that rollout carries `error`)."""
    verdict = scored(state)
    return float(verdict["reward"]) if verdict else 0.0


def gate_metric(gate: str):
    async def metric(state: State) -> float:
        verdict = scored(state)
        return 1.0 if verdict and verdict["gates"][gate] else 0.0
    metric.__name__ = f"gate_{gate}"
    return metric


class GatesRubric(vf.Rubric):
    """The benchmark's verdict as the reward; each gate as a metric of weight 0."""

    def __init__(self, **kwargs):
        super().__init__(funcs=[callm_reward], weights=[1.0], **kwargs)
        for gate in ("tools", "handoff", "database"):
            self.add_metric(gate_metric(gate))


def dataset_rows(calls: CallEnvironment, names: list[str], seeds: list[int]) -> list[dict[str, Any]]:
    """One row per task and seed, from a real start of each episode (then abandoned): the row's
    prompt is what the rollout's first request will be, for the offline caller exactly."""
    async def row(name: str, seed: int) -> dict[str, Any]:
        episode_id, result = await calls.areset(name, seed)
        await calls.aclose_episode(episode_id)
        if result.reward is None and "infrastructure_error" in result.info:
            raise RuntimeError(f"could not start {name} at seed {seed} for its dataset row: "
                               f"{result.info['infrastructure_error']}")
        observation = result.observation
        # The shared row (`callm export`'s, for this seed) but its prompt, which the row's own prompt extends.
        shared = {key: value for key, value in dataset_row(*calls.task(name), [seed]).items() if key != "prompt"}
        info = {ROW_KEY: {**shared, "seed": seed}, "tool_defs": tool_defs(observation.tools)}
        prompt = [{"role": "system", "content": observation.system_prompt},
                  *({"role": m["role"], "content": m["content"]} for m in observation.messages)]
        # info as JSON text: tool schemas differ in shape, which a dataset column cannot hold as a struct
        return {"prompt": prompt, "info": json.dumps(info, ensure_ascii=False)}

    return gather_on(calls, [row(name, seed) for name in names for seed in seeds])


def task_paths(tasks: Iterable[str | Path] | str | Path, root: Path) -> list[Path]:
    """Task files or folders; a name `industry/task_id` is its folder under `root/tasks`."""
    if isinstance(tasks, (str, Path)):
        tasks = [tasks]
    paths = []
    for item in tasks:
        path = Path(item)
        if not path.exists():
            path = root / "tasks" / str(item)
        if not path.exists():
            raise ValueError(f"task {str(item)!r}: no such file or folder, nor {path}")
        paths.append(path)
    return paths


def load_environment(industry: str | Iterable[str] | None = None, tasks: Iterable[str | Path] | None = None,
                     seeds: Iterable[int] = (1,), caller: ModelConfig | str | None = None, line: str = "default", *,
                     root: str | Path | None = None, industries: Iterable[str | Path] | None = None,
                     handoff: str = "append", caller_api_key: str | None = None, limits: CallLimits | None = None,
                     tool_server_url: str | None = None, concurrency: int = 256,
                     train_tasks: Iterable[str | Path] | None = None, tools_in_process: bool = False,
                     offline_caller: str = "script", **kwargs) -> CallmEnv:
    """A verifiers environment of CALLM tasks.

    `industry`: keep only this industry's tasks (a name or several); `tasks`: task files, folders or
    names `industry/task_id` (default: every task under `root/tasks`); `seeds`: one row per task and
    seed (the phone line's draws depend on both); `caller`: the simulated caller's model config, or
    its name as `--callm-caller-model` takes it (its key from its `api_key_env` unless
    `caller_api_key` is given; it talks through the plain httpx client, `model/plain_client.py`);
    `offline_caller`: the caller without a model, "script" (default: it answers what the policy asks
    from the task's script) or "opening" (its opening line, then nothing: a smoke test); `line`: the phone line;
    `root`: where `tasks/` and `industries/` are (default the benchmark installed with the plugin); `industries`:
    pack folders; `handoff`: "append" or "replace" (see the module's doc); `limits`: the call's caps
    (requests per turn, exchanges). `train_tasks`: the training split's task files or folders; by default,
    when `tasks` is not given, the training tasks shipped beside the locked suite (`root/training`, written by
    `callm generate`: fresh people and facts, never the test), while the evaluation split is the locked suite;
    when `tasks` is given, both splits are those tasks unless `train_tasks` says otherwise.
    `tools_in_process`: the tools run on the environment's loop, not behind a tool server (the same
    verdicts, about half the CPU a request: `CallEnvironment`, docs/rl.md). Other keywords
    go to verifiers' `MultiTurnEnv` (`max_turns`, `timeout_seconds`, `sampling_args`, ...).
    """
    if handoff not in HANDOFF_MODES:  # checked here too: before a tool server starts
        raise ValueError(f"handoff={handoff!r}: one of {', '.join(HANDOFF_MODES)}")
    if isinstance(caller, str):  # a name from a JSON of environment arguments (`vf-eval -a`)
        caller = resolve_config(caller)
    if caller is not None and caller_api_key is None:
        from pytest_callm.model.config import api_key_for

        try:
            caller_api_key = api_key_for(caller, os.environ)
        except KeyError as e:
            raise ValueError(f"caller={caller.name!r} reads its API key from ${e.args[0]}, which is not set "
                             "(set it, or pass caller_api_key=)") from None
    root = Path(root) if root is not None else benchmark_root()
    wanted = [industry] if isinstance(industry, str) else list(industry) if industry is not None else None
    seeds = list(seeds)
    if not seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in seeds):
        raise ValueError(f"seeds={seeds!r}: one or more integers")
    if tasks is not None:
        paths = task_paths(tasks, root)
    elif wanted is not None:  # an industry's tasks are the folder tasks/<industry>
        paths = [root / "tasks" / name for name in wanted]
        missing = [str(p) for p in paths if not p.is_dir()]
        if missing:
            raise ValueError(f"industry={industry!r}: no task folder {', '.join(missing)}")
    else:
        paths = [root / "tasks"]
    if train_tasks is not None:
        train_paths = task_paths(train_tasks, root)
    elif tasks is None and (root / "training").is_dir():  # the shipped training set beside the locked suite
        train_paths = [root / "training" / name for name in wanted if (root / "training" / name).is_dir()] \
            if wanted is not None else [root / "training"]
    else:
        train_paths = []
    calls = CallEnvironment(paths + train_paths, root=root, industries=industries, caller=caller,
                            caller_api_key=caller_api_key, line=line, limits=limits or CallLimits(),
                            tool_server_url=tool_server_url, concurrency=concurrency,
                            tools_in_process=tools_in_process, offline_caller=offline_caller)
    try:
        def split(folders: list[Path]) -> list[str]:
            return [n for n in calls.task_names() if (wanted is None or n.split("/")[0] in wanted)
                    and any(calls.paths[n].is_relative_to(f.resolve()) for f in folders)]

        names = split(paths)
        if not names:
            found = sorted({n.split("/")[0] for n in calls.task_names()})
            raise ValueError(f"industry={industry!r}: no task of it among the industries {found}")
        train = split(train_paths) if train_paths else None
        return CallmEnv(calls, train or names, seeds, handoff=handoff, eval_names=names if train else None,
                        **kwargs)
    except BaseException:
        calls.close()
        raise
