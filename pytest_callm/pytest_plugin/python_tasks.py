"""Tasks written as Python tests: the same engine, fixtures and gates as task.json, with all of pytest.

    REFUSAL = {"task_name": "PY-R1: ...", "intent": ..., "exp_tool_calls": [...], ...}  # a task file's fields

    @pytest.mark.callm_task(REFUSAL)
    def test_refuses_records_to_a_stranger(callm_play):
        call = callm_play()
        assert call.passed, call.explain()
        assert "send_records" not in [c.name for c in call.tool_calls]

The marker (one task or several) parametrizes the test over the run's attempts (`[PY-R1-attempt-1]` ...), so it counts in
the summary and pass^k like a task file, and the run's manifest holds a hash of each task's data (a resume
after the data changed is refused). Other parametrization of the same test (`@pytest.mark.parametrize`,
parametrized fixtures) would play one attempt several times into one saved trajectory: it is refused.
A task that leaves out `exp_db_state` gets it by replaying its answer key on a fresh seed, as `callm lock`
would write it. The industry comes from
`metadata.industry`, else from the nearest folder named like a pack.
"""

from __future__ import annotations

import hashlib
import json
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
        task_id = task_id_of(data)
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


@pytest.hookimpl(wrapper=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object):
    # After every parametrization (marks, fixtures' params, generate_tests hooks): one item per attempt.
    items = yield
    variants: dict[tuple[str, int], list[str]] = {}
    where = None
    for item in items if isinstance(items, list) else ():
        spec = python_task_of(item)
        if spec is not None:
            where = spec.where
            variants.setdefault((task_id_of(spec.data), spec.attempt), []).append(item.name)
    for (task_id, attempt), names in variants.items():
        if len(names) > 1:
            # CollectError: pytest shows its message alone, no traceback through the hooks.
            problem = (f"{name} plays task {task_id} attempt {attempt} in {len(names)} variants "
                       f"({', '.join(names)}): an attempt is one call, saved once. Give each variant its own "
                       "task (its own task_name in @pytest.mark.callm_task), not @pytest.mark.parametrize "
                       "or a parametrized fixture")
            raise collector.CollectError(str(TaskError(where, [problem])))
    return items


def task_id_of(data: dict[str, Any]) -> str:
    return data["task_name"].split(":", 1)[0].strip()


def python_task_of(item: pytest.Item) -> PythonTask | None:
    """The task an item written in Python plays, None for any other item."""
    spec = getattr(getattr(item, "callspec", None), "params", {}).get("callm_task")
    return spec if isinstance(spec, PythonTask) else None


def python_task_records(items: list[pytest.Item]) -> dict[str, dict[str, str]]:
    """{node id: {"task", "industry", "sha256"}} of the items that play a task written in Python (the
    test and task id, its pack, the hash of its data): what the run's manifest hashes, so a resume after
    a task's data (its answer key) changed is refused."""
    out = {}
    for item in items:
        spec = python_task_of(item)
        if spec is not None:
            industry = spec.data["metadata"]["industry"]
            data = json.dumps(spec.data, sort_keys=True, ensure_ascii=False, default=repr).encode()
            task = f"{item.parent.nodeid}::{item.originalname}::{industry}/{task_id_of(spec.data)}"
            out[item.nodeid] = {"task": task, "industry": industry, "sha256": hashlib.sha256(data).hexdigest()}
    return out


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
