"""pytest entry point (`pytest11: callm`): options, collection and the hooks of a run.

Only hooks and wiring live here: the run's life (its folder, models and keys, runtime, results,
summary, report, what a stopped run says) in `session/run_session.py`, items in `collect`, the fixtures a
call is made of in `fixtures`, tasks written in Python in `python_tasks`, the terminal summary in
`terminal_summary`; the work is below, in `runs`, `call`, `scoring`, `model`.
"""

from __future__ import annotations

import atexit
import gc
import json
import shutil
import tempfile
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from pytest_callm.pytest_plugin.collect import (STATE_PLUGIN, TaskFile, TaskFolder, TaskItem, is_task_file, result_payload,
                                                 task_file_path, unreadable_task_files)
from pytest_callm.pytest_plugin.junit_suite import JUnitSuiteProperties, attempt_properties
from pytest_callm.pytest_plugin.run_pruning import KeepLastRuns
from pytest_callm.pytest_plugin.stopping import StopOnTerm, leave_pid
from pytest_callm.pytest_plugin.play_ahead import DeepQueueScheduler, PlayAhead
from pytest_callm.pytest_plugin.settings import Settings, workers
from pytest_callm.pytest_plugin.settings import pytest_addoption  # noqa: F401  (pytest finds the hook here)
from pytest_callm.pytest_plugin.terminal_summary import write_summary
from pytest_callm import gc_pace
from pytest_callm.pytest_plugin import fixtures
from pytest_callm.pytest_plugin.fixtures import (  # noqa: F401  (pytest finds the fixtures here)
    callm_call_db, callm_caller, callm_line, callm_model, callm_play, callm_runtime, callm_task, callm_tool_server)
from pytest_callm.pytest_plugin.python_tasks import (  # noqa: F401  (pytest finds the hooks here)
    MARKER as PYTHON_TASK_MARKER, pytest_generate_tests, pytest_pycollect_makeitem, python_task_records)
from pytest_callm.session.run_models import RunUsageError
from pytest_callm.session.run_session import RunSession
from pytest_callm.saved.rundir import write_json

LATENCY_SAMPLE = "callm_latency_sample"  # workeroutput key: the requests a worker kept for the replay
# workerinput key: a folder where each worker leaves the Python tasks it collected (the controller, which
# collects nothing, learns only node ids from xdist, and its manifest hashes the tasks' data)
PYTHON_TASKS_DIR = "callm_python_tasks_dir"

# At exit the interpreter's last collections walk every object still alive (the pronouncing dictionary
# alone is 250,000): frozen, they are skipped, and the process ends about a second sooner. atexit runs
# only as the interpreter ends, never in a pytest run inside another (pytester).
atexit.register(gc.freeze)


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_callm.pytest_plugin import hookspec

    pluginmanager.add_hookspecs(hookspec)


@contextmanager
def usage_errors():
    """The run's own usage errors as pytest's: one line, no traceback."""
    try:
        yield
    except RunUsageError as e:
        raise pytest.UsageError(str(e)) from None


class CallmState:
    """The hooks of one process's run (`run`, a RunSession) and what collection keeps on the way."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.worker = getattr(config, "workerinput", None)
        option = config.option
        settings = Settings.from_config(config)
        with usage_errors():
            self.run = RunSession(
                settings, root=config.rootpath, worker=self.worker, workers=workers(config),
                args=list(config.invocation_params.args),
                lists_only=bool(option.collectonly or getattr(option, "showfixtures", False)
                                or getattr(option, "show_fixtures_per_test", False)),
                custom_caller=lambda: fixtures.custom_caller(config),
                task_file=lambda name: task_file_path(config, name),
                make_caller=lambda task, pack, attempt: config.hook.pytest_callm_make_caller(
                    config=config, task=task, pack=pack, attempt=attempt, model_name=self.run.settings.model),
                release_pins=lambda: config.hook.pytest_callm_release(config=config))
        # The run's own, as collect.py, python_tasks.py and run_pruning.py read them.
        self.settings, self.packs, self.run_dir = settings, self.run.packs, self.run.run_dir
        self.replayed_states: dict[tuple[str, str], Any] = {}  # expected states of Python tasks, by replay
        self.task_files: dict[tuple[str, str], Path] = {}  # (industry, task id) -> the file that has it
        self.task_paths: dict[Path, Path] = {}  # a task file's real path -> the path it was collected by
        self.loops: list[str] = []  # symbolic links not followed: each leads back into a folder holding it
        self.not_collected: list[str] = []  # task files that failed collection (under xdist too)
        self.python_tasks_dir: Path | None = None  # the controller's PYTHON_TASKS_DIR, under xdist
        if self.worker is None and workers(config) > 1:  # made by the workers that write to it, removed at the end
            self.python_tasks_dir = Path(tempfile.gettempdir()) / f"callm-python-tasks-{uuid.uuid4().hex}"
        self.stopper = StopOnTerm(self.python_tasks_dir)

    def lists_only(self) -> bool:
        return self.run.lists_only

    def keep_latency_sample(self, sample: dict[str, Any] | None) -> None:
        if sample is not None and self.worker is not None:
            self.config.workeroutput[LATENCY_SAMPLE] = sample
        elif sample is not None:
            self.run.latency_parts.append(sample)

    # --- collection ---------------------------------------------------------------------------

    def pytest_ignore_collect(self, collection_path: Path, config: pytest.Config) -> bool | None:
        """A symbolic link to a folder that holds it (a loop) is not followed: once named, not 40
        levels deep (the kernel's limit) with every task collected again at each."""
        if not collection_path.is_symlink():
            return None
        try:
            target = collection_path.resolve(strict=True)
        except (OSError, RuntimeError):  # a loop the kernel refuses to resolve, or a dangling link
            target = None
        if target is not None and not (target.is_dir() and collection_path.parent.resolve().is_relative_to(target)):
            return None
        line = (f"{collection_path}: a symbolic link to {target}, which holds it (a loop): not followed"
                if target is not None else f"{collection_path}: a symbolic link that cannot be resolved: not followed")
        if line not in self.loops:
            self.loops.append(line)
        return True

    def pytest_collect_directory(self, path: Path, parent):
        # Only a folder holding a task file that is not a file (rare): every other folder, a package
        # included, is pytest's own to collect.
        if unreadable_task_files(path) and not (path / "__init__.py").is_file():
            return TaskFolder.from_parent(parent, path=path)
        return None

    def pytest_collect_file(self, file_path: Path, parent):
        if is_task_file(file_path.name):
            return TaskFile.from_parent(parent, path=file_path)
        return None

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # Under xdist the controller hears of a worker's collection error here, once per error.
        if report.failed and is_task_file(Path(report.nodeid.split("::")[0]).name) \
                and report.nodeid not in self.not_collected:
            self.not_collected.append(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.not_collected and session.testsfailed == len(self.not_collected):
            # Every collection error is a task file's: each is named, its items are left out, and the
            # other tasks run (the run still exits non-zero). Any other error stops the run, as pytest does.
            self.config.option.continue_on_collection_errors = True
        python = python_task_records(session.items)
        if self.worker is not None:  # the xdist controller checks, once, from what the worker leaves here
            if python and self.worker.get(PYTHON_TASKS_DIR):  # before xdist's hook tells the controller we are done
                write_json(Path(self.worker[PYTHON_TASKS_DIR]) / f"{self.worker['workerid']}.json", python, indent=None)
            return
        self._open([i.nodeid for i in session.items if isinstance(i, TaskItem)], python)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        # Under xdist the controller never collects; it learns the ids from the first worker.
        if self.run.started:
            return
        left = Path(node.workerinput.get(PYTHON_TASKS_DIR, ".")) / f"{node.workerinput['workerid']}.json"
        python = json.loads(left.read_text(encoding="utf-8")) if left.is_file() else {}
        self._open([i for i in ids if ".json::" in i], {i: python[i] for i in ids if i in python})  # the selected

    def _open(self, ids: list[str], python: dict[str, dict[str, str]]) -> None:
        with usage_errors():
            self.run.require_model(ids + list(python))
            self.run.open(ids, python)

    # --- the session --------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        if self.worker is not None and self.worker.get(PYTHON_TASKS_DIR):  # so the controller can pass a SIGTERM on
            leave_pid(Path(self.worker[PYTHON_TASKS_DIR]), self.worker["workerid"])
        # On the controller, before xdist starts its workers: one served model for the whole run.
        if self.worker is not None or self.run.lists_only:
            return
        with usage_errors():
            if self.run.settings.model:  # keys and tool server first: a usage error here costs no worker
                self.run.models.check_access()
            if self.run.settings.serve:
                self.run.models.serve()

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        node.workerinput.update(self.run.worker_input())
        if self.python_tasks_dir is None:  # made by a worker that has Python tasks, removed at the end
            self.python_tasks_dir = Path(tempfile.gettempdir()) / f"callm-python-tasks-{uuid.uuid4().hex}"
        node.workerinput[PYTHON_TASKS_DIR] = str(self.python_tasks_dir)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        payload = result_payload(item, call.when, call.excinfo, report.outcome)
        if payload is not None:
            report.callm = payload
            # JUnit XML reads the properties off the teardown report, which copies the item's.
            item.user_properties.extend(attempt_properties(payload))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, "callm", None)
        if payload is None and report.failed and report.when not in ("setup", "call", "teardown"):
            payload = self.run.crashed(report.nodeid)  # xdist's report of a worker that died mid-attempt
        if payload is None or self.worker is not None:
            return
        line = self.run.record(payload)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if line is not None and reporter is not None:
            writer = getattr(reporter, "_tw", None)  # start on a fresh line, after pytest's own dots
            if writer is not None and writer.width_of_current_line:
                reporter.write("\n")
            reporter.write_line(line)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        sample = getattr(node, "workeroutput", {}).get(LATENCY_SAMPLE)
        if sample:
            self.run.latency_parts.append(sample)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        self.run.finish(interrupted=exitstatus == pytest.ExitCode.INTERRUPTED, stopped=bool(session.shouldstop))
        if self.run.interrupted:  # also when the stop came while the report was being written
            session.exitstatus = pytest.ExitCode.INTERRUPTED
        if self.run.write_failure is not None and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED  # no report.json: a CI job must not count it a success

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if self.worker is None:
            write_summary(self.run, terminalreporter,
                          interrupted=exitstatus == pytest.ExitCode.INTERRUPTED or self.run.interrupted,
                          loops=self.loops, not_collected=self.not_collected)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo) -> None:
        if not self.config.option.fulltrace:
            self.stopper.shorten(excinfo)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.stopper.uninstall()
        self.run.close()
        if self.python_tasks_dir is not None:
            shutil.rmtree(self.python_tasks_dir, ignore_errors=True)


def pytest_configure(config: pytest.Config) -> None:
    for line in ("industry(name=...): the industry pack of a CALLM task",
                 "category(slug=..., name=...): the task category, e.g. slug='C4' or slug='R'",
                 "difficulty(level=...): easy, medium or hard",
                 "easy: an easy CALLM task", "medium: a medium CALLM task", "hard: a hard CALLM task",
                 PYTHON_TASK_MARKER):
        config.addinivalue_line("markers", line)
    state = CallmState(config)
    config.pluginmanager.register(state, STATE_PLUGIN)
    if state.settings.model:
        gc_pace.pace()  # a benchmark run: the collector at the pace of a run (gc_pace.py)
    state.stopper.install()  # SIGTERM stops the run as Ctrl-C does (stopping.py)
    config.pluginmanager.register(JUnitSuiteProperties(state), "callm-junit-suite")
    config.pluginmanager.register(KeepLastRuns(state), "callm-keep-runs")
    if state.settings.model and state.run.concurrency > 1:
        config.pluginmanager.register(PlayAhead(state.run.concurrency), PlayAhead.NAME)
        config.pluginmanager.register(DeepQueueScheduler(2 * state.run.concurrency), DeepQueueScheduler.NAME)
