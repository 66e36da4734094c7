"""Tasks written as Python tests: the same engine, fixtures and gates as task.json, with all of pytest.

    REFUSAL = {"task_name": "PY-R1: ...", "intent": ..., "exp_tool_calls": [...], ...}  # a task file's fields

    @pytest.mark.callm_task(REFUSAL)
    def test_refuses_records_to_a_stranger(callm_play):
        call = callm_play()
        assert call.passed, call.explain()
        assert "send_records" not in [c.name for c in call.tool_calls]

The marker (one task or several) parametrizes the test over the run's attempts (`[PY-R1-attempt-1]` ...), so it counts in
the summary and pass^k like a task file. A task that leaves out `exp_db_state` gets it by replaying
its answer key on a fresh seed, as `callm lock` would write it. The industry comes from
`metadata.industry`, else from the nearest folder named like a pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_callm.pytest_plugin.collect import TaskAttempt, callm_state, task_marks
from pytest_callm.task.task_file import TaskError, build_task, industry_of, validate_task_data

MARKER = "callm_task(*tasks): tasks written in Python (a task file's fields), each played once per attempt"


@dataclass(frozen=True)
class PythonTask:
    """One attempt of a task written in Python: the indirect parameter of `callm_task`."""

    data: dict[str, Any]
    where: Path  # the test file: errors name it
    attempt: int

    def __repr__(self) -> str:  # pytest shows parameters in failures: keep it short
        return f"PythonTask({self.data.get('task_name', '?')!r}, attempt {self.attempt})"


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("callm_task")
    if marker is None:
        return
    if "callm_task" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.callm_task needs the test to use "
                                "callm_play (or callm_task)")
    state = callm_state(metafunc.config)
    where = Path(metafunc.definition.path)
    params = []
    for given in marker.args:  # several tasks: the test is parametrized over each one's attempts
        data = validate_task_data(where, given)
        industry = industry_of(where, data, state.packs.names())
        if industry is None:
            raise TaskError(where, ["$.metadata.industry: set it for a task written in Python outside a pack's "
                                    f"folder (packs: {', '.join(state.packs.names())})"])
        data = {**data, "metadata": {**data["metadata"], "industry": industry}}
        task_id = data["task_name"].split(":", 1)[0].strip()
        # One task id, one definition: a second would add its attempts to the first's in every figure.
        here = f"{where.resolve()}::{metafunc.definition.name}"
        first = state.task_files.setdefault((industry, task_id), here)
        if str(first) != here:
            raise TaskError(where, [f"$.task_name: task id {task_id} of industry {industry} is already used by "
                                    f"{first}; give each task its own id"])
        marks = task_marks(industry, data["metadata"].get("category_slug") or task_id.split("-")[0],
                           data["metadata"]["category"], data["metadata"]["difficulty"])
        params += [pytest.param(PythonTask(data, where, n), id=f"{task_id}-attempt-{n}", marks=marks)
                   for n in range(1, state.settings.attempts + 1)]
    metafunc.parametrize("callm_task", params, indirect=True)


def python_task_attempt(request: pytest.FixtureRequest, runner) -> TaskAttempt:
    """Build the task of a `PythonTask` parameter against its pack; fill exp_db_state by replay."""
    spec: PythonTask = request.param
    state = callm_state(request.config)
    if not state.settings.model:
        pytest.fail("a task written in Python is played by a model: pass --callm-model=NAME "
                    "(--callm-model=oracle replays its answer key offline)", pytrace=False)
    pack = state.packs.get(spec.data["metadata"]["industry"])
    data = spec.data
    if data.get("exp_db_state") is None:
        key = (pack.name, repr(data))  # one replay per task and process, for all its attempts
        cache = state.replayed_states
        if key not in cache:
            from pytest_callm.authoring.lock import expected_state

            unlocked = build_task(spec.where, data, pack)
            cache[key] = expected_state(runner.started().replay_answer_key(unlocked, pack), pack)
        data = {**data, "exp_db_state": cache[key]}
    return TaskAttempt(build_task(spec.where, data, pack), pack, spec.attempt)
