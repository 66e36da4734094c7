"""One attempt of a task, played, resumed or rescored, and saved to the run directory.

- Played: the runtime (started on first need: a run that only resumes or rescores never starts a
  tool server or a model client) runs the call; the trajectory, verdict and usage are saved at once.
- Resumed: the run directory already holds a complete trajectory of this attempt; it is scored again
  with today's verifier and not played.
- Rescored: `--callm-rescore=DIR` scores the trajectory saved in DIR; an attempt DIR lacks is an
  error, never a silent skip.
- Played ahead: `play_ahead` starts calls of attempts that come later (up to `concurrency` in flight,
  see `runs/in_flight.py`); each is saved as soon as it ends, and `play` hands it to its own attempt.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_callm.task.pack import Pack
from pytest_callm.runs.in_flight import CallsInFlight
from pytest_callm.saved.rundir import RunDir, RunDirError
from pytest_callm.saved.seed_state import seed_state
from pytest_callm.call.engine import Watch
from pytest_callm.runs.runtime import Participants, Runtime
from pytest_callm.task.task_file import Task
from pytest_callm.call.trajectory import Trajectory
from pytest_callm.scoring.verdict import score
from pytest_callm.scoring.verify import Verdict


class MissingTrajectory(Exception):
    """Rescoring needs a saved trajectory for every selected attempt."""


@dataclass
class Played:
    trajectory: Trajectory
    verdict: Verdict
    usage: dict[str, Any] | None
    source: str  # "played", "resumed" or "rescored"

    # What a test asserts on, straight from the trajectory.
    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def tool_calls(self):
        return self.trajectory.tool_calls

    @property
    def handoffs(self) -> list[str]:
        return self.trajectory.handoff_path()

    @property
    def final_state(self) -> dict[str, list[dict[str, Any]]]:
        return self.trajectory.final_state

    def explain(self) -> str:
        return self.verdict.explain()


class AttemptRunner:
    def __init__(self, make_runtime: Callable[[], Runtime], run_dir: RunDir | None, rescore_from: RunDir | None,
                 concurrency: int = 1, judge: Callable[[Pack, Trajectory], list] | None = None, judge_gate: bool = False):
        self._make_runtime = make_runtime
        self.judge = judge  # --callm-judge: reads the words of every scored attempt (scoring/judge.py)
        self.judge_gate = judge_gate
        self.runtime: Runtime | None = None
        self.run_dir = run_dir
        self.rescore_from = rescore_from
        self.in_flight = CallsInFlight(self, concurrency)
        self.watch: Watch | None = None  # given to the runtime: told each call's trajectory as it plays
        self._saved: dict[tuple[str, str, int], dict[str, Any]] = {}  # read by will_play, taken by play

    def started(self) -> Runtime:
        """The runtime, started on first need (event loop, tool server, model clients)."""
        if self.runtime is None:
            self.runtime = self._make_runtime()
            self.runtime.watch = self.watch
        return self.runtime

    def will_play(self, task: Task, attempt: int) -> bool:
        """Whether this attempt is played (not rescored, and not saved already in the run directory)."""
        if self.rescore_from is not None:
            return False
        if self.run_dir is None:
            return True
        key = (task.industry, task.task_id, attempt)
        saved = self.run_dir.load_attempt(*key)
        if saved is None:
            return True
        self._saved[key] = saved  # `play` resumes from it: a saved attempt is read once
        return False

    def play(self, task: Task, pack: Pack, attempt: int, who: Participants | None = None,
             call_id: str | None = None, *, rerun: bool = True) -> Played:
        """Play, resume or rescore one attempt, or wait for its call played ahead; `who`, `call_id`
        and `rerun` go to `Runtime.play`."""
        key = (task.industry, task.task_id, attempt)
        ahead = self.in_flight.take(key)
        if ahead is not None:
            return ahead.result()
        if self.rescore_from is not None:
            try:
                saved = self.rescore_from.load_attempt(*key)
            except RunDirError as e:  # its seed is missing or unreadable: named, like a missing attempt
                raise MissingTrajectory(str(e)) from None
            if saved is None:
                raise MissingTrajectory(f"{self.rescore_from.path} holds no complete trajectory of "
                                        f"{task.industry}/{task.task_id} attempt {attempt}")
            return self._score(task, pack, saved, "rescored")
        saved = self._saved.pop(key, None)
        if saved is None and self.run_dir is not None:
            saved = self.run_dir.load_attempt(*key)
        if saved is not None:
            return self._score(task, pack, saved, "resumed")
        runtime = self.started()
        return self._played(task, pack, attempt, runtime.play(task, pack, attempt, who, call_id, rerun=rerun))

    async def play_async(self, task: Task, pack: Pack, attempt: int, who: Participants) -> Played:
        """Play one attempt on the runtime's loop (started already), scored and saved when it ends:
        in a worker thread, so the streams of the calls still in flight are not held up meanwhile."""
        trajectory = await self.runtime.play_async(task, pack, attempt, who)
        return await asyncio.to_thread(self._played, task, pack, attempt, trajectory)

    def _played(self, task: Task, pack: Pack, attempt: int, trajectory: Trajectory) -> Played:
        key = (task.industry, task.task_id, attempt)
        runtime = self.runtime
        verdict = self._judged(pack, trajectory, score(task, pack, trajectory))
        usage = runtime.usage(trajectory)
        if self.run_dir is not None:
            self.run_dir.save_attempt(*key, {
                "task": {"path": str(task.path), "industry": task.industry, "task_id": task.task_id,
                         "category": task.category_slug, "difficulty": task.difficulty, "attempt": attempt},
                "trajectory": trajectory.to_json(), "verdict": verdict.to_json(), "usage": usage},
                seed=seed_state(pack), keys={t: c.key for t, c in pack.compared_tables.items()})
        return Played(trajectory, verdict, usage, "played")

    def _score(self, task: Task, pack: Pack, saved: dict[str, Any], source: str) -> Played:
        trajectory = Trajectory.from_json(saved["trajectory"])
        return Played(trajectory, self._judged(pack, trajectory, score(task, pack, trajectory)), saved.get("usage"),
                      source)

    def _judged(self, pack: Pack, trajectory: Trajectory, verdict: Verdict) -> Verdict:
        if self.judge is not None:
            from pytest_callm.scoring.judge import apply

            try:
                findings = self.judge(pack, trajectory)
            except Exception as e:  # the judge's own failure; with --callm-judge-gate the attempt cannot be scored
                if self.judge_gate or verdict.words is None:
                    raise
                verdict.words.details["judge_error"] = f"{type(e).__name__}: {e}"[:300]
                return verdict
            apply(verdict, findings, self.judge_gate)
        return verdict

    def latency_sample(self) -> dict[str, Any] | None:
        return self.runtime.latency_sample() if self.runtime is not None else None

    def close(self) -> None:
        if self.runtime is not None:
            self.in_flight.cancel()
            runtime, self.runtime = self.runtime, None
            runtime.close()
