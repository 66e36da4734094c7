"""Task files as pytest collectors: one file, one item per attempt.

Ids look like `tasks/legal/C4-H3/task.json::C4-H3[attempt-2]`. Items carry the markers `industry`,
`category`, `difficulty` (with keyword arguments: `-m "category(slug='C4')"`) and the bare
difficulty (`easy`, `medium`, `hard`), and match `-k` on the
industry, the task id, the category slug and the difficulty.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_callm.model import redact
from pytest_callm.call.oracle import AnswerKeyError
from pytest_callm.task.benchmark import benchmark_tasks
from pytest_callm.task.pack import Pack, PackError
from pytest_callm.runs.attempts import MissingTrajectory
from pytest_callm.runs.runtime import CallerUnavailable, InfrastructureError
from pytest_callm.task.task_file import Task, TaskError, is_task_file, load_task  # noqa: F401 (is_task_file: the plugin's)
from pytest_callm.toolserver.client import ToolServerError


STATE_PLUGIN = "callm-state"  # the name the session state registers under, in pytest_configure


def callm_state(config: pytest.Config):
    """The per-process session state (`plugin.CallmState`)."""
    return config.pluginmanager.get_plugin(STATE_PLUGIN)


@dataclass(frozen=True)
class TaskAttempt:
    """What the `callm_task` fixture gives: one attempt of one task of one pack."""

    task: Task
    pack: Pack
    attempt: int


class CallFailed(Exception):
    """The verifier failed the call; the message is the verdict, gate by gate."""


class TaskFile(pytest.File):
    def collect(self):
        state = callm_state(self.config)
        # One file reached by two paths (a symlinked folder) would play its attempts twice.
        seen = state.task_paths.setdefault(self.path.resolve(), self.path)
        if seen != self.path:
            raise TaskError(self.path, [f"the same file as {seen} (through a symbolic link): collected once, there"])
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
            yield TaskItem.from_parent(self, name=f"{task.task_id}[attempt-{attempt}]", callobj=play_task_attempt,
                                       task=task, pack=pack, attempt=attempt)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, (TaskError, PackError)):
            return str(excinfo.value)
        # Anything else a file can do to the loader (a bug of ours, never the file's to explain): one
        # line naming the file, and its items are left out like any bad file's.
        return f"{self.path}: could not be loaded: {type(excinfo.value).__name__}: {str(excinfo.value)[:300]}"


def _what_it_is(path: Path) -> str | None:
    """Why a task file's name holds no file to read (None: a regular file, or a link to one)."""
    import stat

    try:
        mode = path.stat().st_mode  # follows links: a link to a file is that file
    except (OSError, RuntimeError):
        return "a symbolic link that cannot be resolved (it points nowhere, or round in a loop)" \
            if path.is_symlink() else "a file that cannot be read"
    if stat.S_ISREG(mode):
        return None
    kind = "a folder" if stat.S_ISDIR(mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(mode) else \
        "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file"
    return f"{kind}{' (through a symbolic link)' if path.is_symlink() else ''}, not a file"


def unreadable_task_files(folder: Path) -> list[Path]:
    """The entries of `folder` named like a task file that are not one: pytest passes over what is
    neither a file nor a folder (a FIFO, a link to /dev/zero, a dangling link) without a word, and
    a folder called task.json it enters: such a task would vanish from the run."""
    try:
        return sorted(p for p in folder.iterdir() if is_task_file(p.name) and _what_it_is(p) is not None)
    except OSError:
        return []


class TaskFolder(pytest.Dir):
    """A folder holding a task file that is not a file: each is named as a task file that failed
    to load (its items left out, the run exits non-zero), and the rest is collected as pytest does."""

    def collect(self):
        bad = unreadable_task_files(self.path)
        for collector in super().collect():
            if collector.path not in bad:
                yield collector
        for path in bad:
            yield NotATaskFile.from_parent(self, path=path)


class NotATaskFile(pytest.File):
    def collect(self):
        raise TaskError(self.path, [f"$: {_what_it_is(self.path) or 'not a file'}"])

    def repr_failure(self, excinfo, style=None):
        return str(excinfo.value)


def task_file_path(config: pytest.Config, nodeid_file: str) -> Path:
    """A task file from the file part of its node id, as pytest made it: relative to the rootdir when
    below it, else to the collected path it was found under (the suite's `tasks/` of an installed
    plugin, a folder named outside the project). The xdist controller never collects: ids are all it has."""
    bases = [config.rootpath, *(Path(config.invocation_params.dir, a.split("::")[0]) for a in config.args)]
    for base in bases:
        if (base / nodeid_file).is_file():
            return base / nodeid_file
    return config.rootpath / nodeid_file


class SuiteCollection:
    """--callm-suite: the benchmark's locked tasks, wherever the plugin is installed, join what pytest
    collects. Beside paths named on the command line or by `testpaths`; alone when pytest would
    otherwise fall back to the working directory, so `pytest --callm-suite` in any folder runs the
    benchmark and only it. In a checkout the suite is its own `tasks/`: a path named twice is collected
    once. Each xdist worker parses the same arguments and extends its own collection alike."""

    NAME = "callm-suite"

    @pytest.hookimpl(tryfirst=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        if not (config.getoption("callm_suite") or config.getini("callm_suite")):
            return
        suite = str(benchmark_tasks())
        if config.args_source == pytest.Config.ArgsSource.INVOCATION_DIR:
            config.args[:] = [suite]
        elif suite not in config.args:
            config.args.append(suite)


class ShardSelection:
    """--callm-shard=I/N: keep the items of the tasks dealt to shard I, deselect the rest.

    The deal is made over every collected task file (before -k/-m), so every machine that collects the
    same task set deals it alike; it is saved as `shard.json` in the run directory for `callm merge`.
    Items that are not task files (Python tasks, ordinary tests) run in shard 1 only.
    """

    NAME = "callm-shard"

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_modifyitems(self, session: pytest.Session, config: pytest.Config, items) -> None:
        state = callm_state(config)
        if state is None or state.settings.shard is None:
            return
        from pytest_callm.saved.merge import shard_record, task_key, write_shard_record

        index, count = state.settings.shard
        tasks = {}
        for item in items:
            if isinstance(item, TaskItem):
                tasks[task_key(item.task.industry, item.task.task_id)] = {
                    "file": item.path, "root": config.rootpath, "cost": 1 + len(item.task.exp_tool_calls)}
        record = shard_record(index, count, tasks)
        keep, drop = [], []
        for item in items:
            if isinstance(item, TaskItem):
                mine = record["tasks"][task_key(item.task.industry, item.task.task_id)]["shard"] == index
            else:
                mine = index == 1
            (keep if mine else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
        if state.run_dir is not None and not state.lists_only():
            write_shard_record(state.run_dir.path, record)


def task_marks(industry: str, slug: str, category: str, difficulty: str) -> list[pytest.MarkDecorator]:
    # Keyword arguments, so `-m "industry(name='legal') and category(slug='C4')"` selects.
    return [pytest.mark.industry(name=industry), pytest.mark.category(slug=slug, name=category),
            pytest.mark.difficulty(level=difficulty), getattr(pytest.mark, difficulty)]


class TaskItem(pytest.Function):
    def __init__(self, *, task: Task, pack: Pack, attempt: int, **kwargs):
        super().__init__(**kwargs)
        self.task, self.pack, self.attempt = task, pack, attempt
        self.callm_attempt = TaskAttempt(task, pack, attempt)  # what the `callm_task` fixture gives
        self.verdict = None
        self.trajectory = None
        self.usage = None  # timing, tokens and cost of the call (models other than the oracle)
        for marker in task_marks(task.industry, task.category_slug, task.category, task.difficulty):
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


def result_payload(item: pytest.Item, when: str, excinfo, outcome: str) -> dict[str, Any] | None:
    """The JSON-safe record of a task-shaped item's attempt that travels to the xdist controller:
    a task file's item, or a Python test that played its `callm_task` (None for any other test)."""
    attempt: TaskAttempt | None = getattr(item, "callm_attempt", None)
    if attempt is None:
        return None
    task = attempt.task
    base = {"task_id": task.task_id, "industry": task.industry, "category": task.category_slug,
            "difficulty": task.difficulty, "attempt": attempt.attempt}
    trajectory, verdict, usage = (getattr(item, name, None) for name in ("trajectory", "verdict", "usage"))
    if trajectory is not None and trajectory.rerun_because:  # the harness failed first: the run says so
        base["rerun_because"] = list(trajectory.rerun_because)
    if trajectory is not None and trajectory.cuts:  # the model asked past a bound: refused, and said
        base["cuts"] = list(trajectory.cuts)
    if usage is not None:
        base["usage"] = {**usage, "reruns": trajectory.reruns}
        # What the phone line did to each caller turn, for the realized error rates.
        base["line_turns"] = [[{"type": e.get("type"), **({"style": True} if e.get("style") else {})}
                               for e in t.line_errors]
                              for t in trajectory.transcript if t.role == "caller"]
    if when == "call" and verdict is not None:
        # A Python test's own assertions count too: the attempt passes when the gates and the test do.
        return {**base, "passed": verdict.passed and outcome == "passed", "gates": verdict.gates,
                "paper_passed": verdict.paper_passed and outcome == "passed"}
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


def play_task_attempt(callm_play) -> None:
    """The body of every task item: play the call (fixtures: `callm_play` and what it is made of),
    then assert the three gates."""
    call = callm_play()
    if not call.passed:
        raise CallFailed(call.explain())
