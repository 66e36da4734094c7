"""Task files as pytest collectors: one file, one item per attempt.

Ids look like `tasks/legal/C4-H3/task.json::C4-H3[attempt-2]`. Items carry the markers `industry`,
`category`, `difficulty` (with keyword arguments: `-m "category(slug='C4')"`) and the bare
difficulty (`easy`, `medium`, `hard`), and match `-k` on the
industry, the task id, the category slug and the difficulty.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_callm.model import redact
from pytest_callm.model.protocol import ModelAccessError
from pytest_callm.call.oracle import AnswerKeyError
from pytest_callm.task.pack import Pack, PackError
from pytest_callm.runs.attempts import MissingTrajectory
from pytest_callm.runs.runtime import CallerUnavailable, InfrastructureError
from pytest_callm.task.task_file import Task, TaskError, is_task_file, load_task  # noqa: F401 (is_task_file: the plugin's)
from pytest_callm.toolserver.client import ToolServerError


STATE_PLUGIN = "callm-state"  # the name the session state registers under, in pytest_configure


def callm_state(config: pytest.Config):
    """The per-process session state (`plugin.CallmState`)."""
    return config.pluginmanager.get_plugin(STATE_PLUGIN)


class CallFailed(Exception):
    """The verifier failed the call; the message is the verdict, gate by gate."""


class TaskFile(pytest.File):
    def collect(self):
        state = callm_state(self.config)
        _, task, pack = load_task(self.path, state.packs)
        if task.exp_db_state is None:
            raise TaskError(self.path, ["$.exp_db_state: missing; fill it by replaying the answer key with "
                                        f"`callm lock {self.path}`"])
        # Attempts are saved and resumed by industry and task id: two files with one id would merge
        # into one task (the second "resumed" from the first's trajectories). A copied task folder
        # whose task_name was not changed is the usual cause.
        first = state.task_files.setdefault((task.industry, task.task_id), self.path.resolve())
        if first != self.path.resolve():
            raise TaskError(self.path, [f"$.task_name: task id {task.task_id} of industry {task.industry} is "
                                        f"already used by {first}; give each task its own id"])
        for attempt in range(1, state.settings.attempts + 1):
            yield TaskItem.from_parent(self, name=f"{task.task_id}[attempt-{attempt}]", callobj=run_attempt,
                                       task=task, pack=pack, attempt=attempt)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (TaskError, PackError)):
            return str(excinfo.value)
        return super().repr_failure(excinfo)


class TaskItem(pytest.Function):
    def __init__(self, *, task: Task, pack: Pack, attempt: int, **kwargs):
        super().__init__(**kwargs)
        self.task, self.pack, self.attempt = task, pack, attempt
        self.verdict = None
        self.trajectory = None
        self.usage = None  # timing, tokens and cost of the call (models other than the oracle)
        # Keyword arguments, so `-m "industry(name='legal') and category(slug='C4')"` selects.
        for marker in (pytest.mark.industry(name=task.industry),
                       pytest.mark.category(slug=task.category_slug, name=task.category),
                       pytest.mark.difficulty(level=task.difficulty), getattr(pytest.mark, task.difficulty)):
            self.add_marker(marker)
        self.extra_keyword_matches.update({task.industry, task.task_id, task.category_slug, task.difficulty})

    def reportinfo(self):
        return self.path, 0, f"{self.task.industry}/{self.task.task_id} attempt {self.attempt}"

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (CallFailed, AnswerKeyError, ToolServerError, InfrastructureError,
                                      CallerUnavailable, MissingTrajectory)):
            kind = type(excinfo.value).__name__
            return redact.text(f"{self.task.task_id} attempt {self.attempt}: {kind}\n{excinfo.value}")
        # Anything else is a bug somewhere (a plugged-in caller, a pack, the harness): it fails this
        # attempt with pytest's own traceback. pytest 9's Function.repr_failure takes no `style`.
        shown = super().repr_failure(excinfo)
        safe = redact.text(str(shown))
        return shown if safe == str(shown) else safe  # plain text only when a secret had to go

    def result_payload(self, when: str, excinfo) -> dict[str, Any] | None:
        """The JSON-safe record of this attempt that travels to the xdist controller."""
        base = {"task_id": self.task.task_id, "industry": self.task.industry, "category": self.task.category_slug,
                "difficulty": self.task.difficulty, "attempt": self.attempt}
        if self.usage is not None:
            base["usage"] = {**self.usage, "reruns": self.trajectory.reruns}
            # What the phone line did to each caller turn, for the realized error rates.
            base["line_turns"] = [[{"type": e.get("type"), **({"style": True} if e.get("style") else {})}
                                   for e in t.line_errors]
                                  for t in self.trajectory.transcript if t.role == "caller"]
        if when == "call" and self.verdict is not None:
            return {**base, "passed": self.verdict.passed, "gates": self.verdict.gates}
        if excinfo is None or when == "teardown" or excinfo.errisinstance(pytest.skip.Exception):
            return None
        error = excinfo.value
        kind = error_kind(error)
        return {**base, "passed": None, "gates": {}, "error_kind": kind,
                "error": redact.text(f"{type(error).__name__}: {str(error)[:500]}")}


def error_kind(error: BaseException) -> str:
    """Why an attempt could not be scored, as the summary counts it."""
    if isinstance(error, AnswerKeyError):
        return "answer_key"
    if isinstance(error, (ToolServerError, InfrastructureError, CallerUnavailable, MissingTrajectory)):
        return "infrastructure"
    return "unexpected error"  # a bug in a plugged-in caller, a pack or the harness: never the model's


def run_attempt(callm_runtime, request) -> None:
    """The body of every task item: play (or resume, or rescore) the call, verify it, fail with the verdict."""
    item: TaskItem = request.node
    try:
        played = callm_runtime.play(item.task, item.pack, item.attempt)
    except ModelAccessError as e:
        # Every other attempt would fail the same way: stop the whole run (all xdist workers) with
        # this one message, and leave this attempt unplayed rather than failed.
        request.session.shouldstop = redact.text(f"callm stopped the run: {e}")
        pytest.skip("not played: the model server refused the run (see the message at the end)")
    item.trajectory, item.verdict, item.usage = played.trajectory, played.verdict, played.usage
    if not item.verdict.passed:
        raise CallFailed(item.verdict.explain())
