"""pytest entry point (`pytest11: callm`): options, collection, the summary and the run's life.

Only hooks and wiring live here: items in `collect`, the fixtures a call is made of in `fixtures`,
tasks written in Python in `python_tasks`; the work is below, in `runs`, `call`, `scoring`, `model`.
"""

from __future__ import annotations

import asyncio
import atexit
import gc
import json
import os
import re
import shlex
import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from pytest_callm.pytest_plugin.collect import (STATE_PLUGIN, TaskFile, TaskItem, is_task_file, task_file_path,
                                                 result_payload)
from pytest_callm.scoring.cost import usage_by_industry
from pytest_callm.pytest_plugin.junit_suite import JUnitSuiteProperties
from pytest_callm.model.latency import LatencyReport, pool_samples, replay
from pytest_callm.phone.line import is_clean, make_line
from pytest_callm.phone.error_profile import ProfileError, format_rates, load_profile, realized_rates
from pytest_callm.report.links import report_page_line
from pytest_callm.scoring.metrics import summarize
from pytest_callm.model.config import (ORACLE, SELF, ModelConfig, ModelConfigError, RetryPolicy, api_key_for,
                                       resolve)
from pytest_callm.task.pack import PackError, PackRegistry
from pytest_callm.task.task_file import TaskError, load_task
from pytest_callm.saved.release import ReleaseCheck, check_release
from pytest_callm.saved.rundir import (RunDir, RunDirError, RunDirWriteError, default_run_dir, line_identity,
                                       make_manifest, verifier_hash, write_json)
from pytest_callm.pytest_plugin.run_pruning import KeepLastRuns
from pytest_callm.pytest_plugin.stopping import StopOnTerm, leave_pid
from pytest_callm.pytest_plugin.play_ahead import DeepQueueScheduler, PlayAhead
from pytest_callm.runs.attempts import AttemptRunner
from pytest_callm.runs.runtime import Runtime
from pytest_callm.report.task_pages import TaskPages
from pytest_callm.pytest_plugin.settings import DEFAULT_CALLER_MODEL, Settings, default_concurrency
from pytest_callm.pytest_plugin.settings import pytest_addoption  # noqa: F401  (pytest finds the hook here)
from pytest_callm.pytest_plugin import fixtures
from pytest_callm.pytest_plugin.fixtures import (  # noqa: F401  (pytest finds the fixtures here)
    callm_call_db, callm_caller, callm_line, callm_model, callm_play, callm_runtime, callm_task, callm_tool_server)
from pytest_callm.pytest_plugin.python_tasks import (  # noqa: F401  (pytest finds the hooks here)
    MARKER as PYTHON_TASK_MARKER, pytest_generate_tests, pytest_pycollect_makeitem, python_task_records)
from pytest_callm.model import redact
from pytest_callm.model.serve import ModelServer, ServeError
from pytest_callm.toolserver.client import ToolServerError, check_tool_server
from pytest_callm.report.summary import render, render_usage

SERVED_URL = "callm_served_base_url"  # workerinput key: the URL of the --callm-serve server
SERVED_CALLER_URL = "callm_served_caller_base_url"  # and of the caller's, when the model plays it (`self`)
PROGRESS_MIN_ATTEMPTS = 50  # shorter runs need no progress lines
RUN_DIR = "callm_run_dir"  # workerinput key: where this run saves its attempts
RESCORE_FROM = "callm_rescore_from"  # workerinput key: the run directory being rescored
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


class CallmState:
    """Per-process session state: settings, packs, and (on the controller) the attempt results."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings = Settings.from_config(config)
        worker = getattr(config, "workerinput", None)
        self.rescore_from: RunDir | None = None
        if worker is not None and worker.get(RESCORE_FROM):
            self.rescore_from = RunDir(worker[RESCORE_FROM])
        elif worker is None and self.settings.rescore:
            self.rescore_from = RunDir(self.settings.rescore)
            if self._manifest_of(self.rescore_from, "rescore") is None:
                raise pytest.UsageError(f"--callm-rescore={self.settings.rescore}: no run there (no manifest.json)")
        if self.rescore_from is not None:  # the model of the saved run; nothing will call it
            saved = (self._manifest_of(self.rescore_from, "rescore") or {}).get("comparable", {})
            self.settings.model = self.settings.model or saved.get("model")
        if worker is not None:
            self.run_dir = RunDir(worker[RUN_DIR]) if worker.get(RUN_DIR) else None
        elif self.rescore_from is not None:
            self.run_dir = RunDir(self.settings.out or self.rescore_from.path / "rescored")
        else:
            self.run_dir = RunDir(self.settings.resume or self.settings.out
                                  or default_run_dir(config.rootpath, self.settings.model))
        if worker is None and self.run_dir.path.exists() and not self.run_dir.path.is_dir():
            option = "resume" if self.settings.resume else "out"
            raise pytest.UsageError(f"--callm-{option}={self.run_dir.path}: a file, not a run directory")
        if worker is None and self.settings.resume and self._manifest_of(self.run_dir, "resume") is None:
            # Whatever is selected: a resume that found nothing to resume is a mistyped path.
            raise pytest.UsageError(f"--callm-resume={self.settings.resume}: no run to resume there "
                                    "(no manifest.json)")
        self.model_config: ModelConfig | None = None  # None for the oracle, and when rescoring
        if self.settings.model and self.settings.model != ORACLE and self.rescore_from is None:
            try:
                self.model_config = resolve(self.settings.model, list(self.settings.model_configs)).with_overrides(
                    self.settings.base_url, self.settings.api_key_env)
            except ModelConfigError as e:
                raise pytest.UsageError(f"--callm-model={self.settings.model}: {e}") from None
            served = getattr(config, "workerinput", {}).get(SERVED_URL)
            if served:
                self.model_config = self.model_config.with_overrides(base_url=served)
        self.caller_config: ModelConfig | None = None
        self.line_config: ModelConfig | None = None
        self.same_model_warning: str | None = None
        self.caller_is_self = False  # the model's config names itself as the caller (`caller = "self"`)
        if self.model_config is not None:
            self.caller_config = self._caller_config()
            served_caller = getattr(config, "workerinput", {}).get(SERVED_CALLER_URL)
            if served_caller and self.caller_is_self:
                self.caller_config = self.caller_config.with_overrides(base_url=served_caller)
            simulated = self.custom_caller() is None
            if simulated and (self.caller_is_self or (self.caller_config.model, self.caller_config.base_url) == (
                    self.model_config.model, self.model_config.base_url)):
                self.same_model_warning = (
                    f"THE CALLER IS THE MODEL UNDER TEST ({self.model_config.model}): a model playing both sides "
                    "of the call is not a CALLM result; pick another --callm-caller-model")
            if self.settings.line_model:
                self.line_config = self._resolve("line-model", self.settings.line_model)
        try:
            make_line(self.settings.line, "check", 0)
        except ProfileError as e:
            raise pytest.UsageError(f"--callm-line={self.settings.line}: {e}") from None
        self.server: ModelServer | None = None
        self.caller_server: ModelServer | None = None  # --callm-serve with a model that plays its own caller
        self._started = False
        self._access_checked = False
        self.resuming = False
        self.total, self.started_at = 0, time.monotonic()
        self.latency_parts: list[dict[str, Any]] = []
        self.latency_report: LatencyReport | None = None
        try:
            self.packs = PackRegistry(self.settings.industries)
        except PackError as e:
            raise pytest.UsageError(str(e)) from None
        self.results: list[dict[str, Any]] = []
        self._summary: tuple[int, Any] | None = None  # (results counted, their summary): see summary()
        self.task_files: dict[tuple[str, str], Path] = {}  # (industry, task id) -> the file that has it
        self.task_paths: dict[Path, Path] = {}  # a task file's real path -> the path it was collected by
        self.loops: list[str] = []  # symbolic links not followed: each leads back into a folder holding it
        self.session_interrupted = False  # set at session finish: the report says so
        self.write_failure: RunDirWriteError | None = None  # the run folder took no more (full, read-only)
        self.page_failure: str | None = None  # report.html could not be written from report.json
        self.selected: list[tuple[str, str, int]] = []  # (industry, task id, attempt) of the selected task items
        self.not_collected: list[str] = []  # task files that failed collection (under xdist too)
        self.release_check: ReleaseCheck | None = None  # set when the run starts, if a release is pinned
        self.replayed_states: dict[tuple[str, str], Any] = {}  # expected states of Python tasks, by replay
        self.task_pages: TaskPages | None = None  # writes each task's page once all its attempts are in
        self.runner: AttemptRunner | None = None  # plays, resumes or rescores this process's attempts
        limit = self.model_config.calls_in_flight if self.model_config is not None else None
        self.concurrency = self.settings.concurrency or default_concurrency(self.workers(), limit)
        self.python_tasks_dir: Path | None = None  # the controller's PYTHON_TASKS_DIR, under xdist
        if worker is None and self.workers() > 1:  # made by the workers that write to it, removed at the end
            self.python_tasks_dir = Path(tempfile.gettempdir()) / f"callm-python-tasks-{uuid.uuid4().hex}"
        self.stopper = StopOnTerm(self.python_tasks_dir)

    def workers(self) -> int:
        """How many processes play the run's attempts (xdist workers, or this one)."""
        worker = getattr(self.config, "workerinput", None)
        if worker is not None:
            return int(worker.get("workercount", 1))
        # xdist turns -n (capped by --maxprocesses) into one --tx entry per worker before we configure.
        if self.config.getoption("dist", "no") == "no":
            return 1
        return max(len(self.config.getoption("tx", None) or []), 1)

    def attempt_runner(self) -> AttemptRunner:
        """This process's attempt runner (made on first need; it starts a runtime only to play)."""
        if self.runner is None:
            self.runner = AttemptRunner(self.make_runtime, self.run_dir, self.rescore_from, self.concurrency)
        return self.runner

    def _caller_config(self) -> ModelConfig:
        """The caller model: --callm-caller-model, else the one the model's config names (`self`: the
        model under test; with --callm-serve, on a server of its own), else the paper's fixed caller."""
        name = self.settings.caller_model or self.model_config.caller or DEFAULT_CALLER_MODEL
        self.caller_is_self = name == SELF
        if name == SELF:
            return self.model_config.with_overrides(self.settings.caller_base_url, self.settings.caller_api_key_env)
        return self._resolve("caller-model", name).with_overrides(self.settings.caller_base_url,
                                                                  self.settings.caller_api_key_env)

    @staticmethod
    def _manifest_of(run_dir: RunDir, option: str) -> dict[str, Any] | None:
        try:
            return run_dir.manifest()
        except RunDirError as e:
            raise pytest.UsageError(f"--callm-{option}: {e}") from None

    def _resolve(self, option: str, name: str) -> ModelConfig:
        try:
            return resolve(name, list(self.settings.model_configs))
        except ModelConfigError as e:
            raise pytest.UsageError(f"--callm-{option}={name}: {e}") from None

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

    def pytest_collect_file(self, file_path: Path, parent):
        if is_task_file(file_path.name):
            return TaskFile.from_parent(parent, path=file_path)
        return None

    def _require_model(self, task_ids: list[str]) -> None:
        if not task_ids or self.lists_only():
            return
        if not self.settings.model:
            raise pytest.UsageError(
                f"{len(task_ids)} task item(s) selected but no model under test: pass --callm-model=NAME "
                "(for example --callm-model=oracle to replay the answer keys offline), or set callm_model "
                "in your ini file")
        self.check_access()

    def custom_caller(self) -> str | None:
        """Who plugs in a caller of their own, if anyone: a `callm_caller` fixture in a conftest or
        plugin (found once conftests are loaded, before any worker starts), or the hook (its alias).
        Such a run needs no caller model and no caller key."""
        manager = self.config.pluginmanager
        for plugin in manager.get_plugins():
            if plugin is not fixtures and callable(getattr(plugin, "callm_caller", None)) \
                    and getattr(plugin, "__name__", "") != __name__:
                return "callm_caller fixture"
        if self.config.hook.pytest_callm_make_caller.get_hookimpls():
            return "pytest_callm_make_caller"
        return None

    def lists_only(self) -> bool:
        """--collect-only, --fixtures and --fixtures-per-test run nothing: no model needed."""
        option = self.config.option
        return bool(option.collectonly or getattr(option, "showfixtures", False)
                    or getattr(option, "show_fixtures_per_test", False))

    def check_access(self) -> None:
        """The tool server answers and every model the run calls has its key; once per run.

        The controller runs this at session start, before xdist starts a worker, so a missing key
        is one message within seconds however many workers were asked for.
        """
        if self._access_checked:
            return
        if self.settings.tool_server:
            try:
                check_tool_server(self.settings.tool_server)
            except ToolServerError as e:
                raise pytest.UsageError(f"--callm-tool-server: {e}") from None
        if self.model_config is not None:
            self._api_key()
            if self.custom_caller() is None:  # the simulated caller runs
                self._key_of(self.caller_config, "caller-model", "caller-api-key-env")
            if self.line_config is not None:
                self._key_of(self.line_config, "line-model", None)
        self._access_checked = True

    def retry_policy(self):
        return RetryPolicy(backoff_s=self.settings.retry_backoff_s, timeout_s=self.settings.request_timeout_s,
                           deadline_s=self.settings.request_deadline_s)

    def _api_key(self) -> str | None:
        return self._key_of(self.model_config, "model", "api-key-env")

    def _key_of(self, config: ModelConfig, option: str, key_option: str | None) -> str | None:
        try:
            return api_key_for(config, os.environ)
        except KeyError as e:
            how = f", or name another variable with --callm-{key_option}" if key_option else ""
            raise pytest.UsageError(
                f"--callm-{option}={config.name} reads its API key from ${e.args[0]}, which is not set. "
                f"Set it{how} (`none` for a server without keys).") from None

    # --- the model's process and the runtime ---------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        worker = getattr(self.config, "workerinput", None)
        if worker is not None and worker.get(PYTHON_TASKS_DIR):  # so the controller can pass a SIGTERM on
            leave_pid(Path(worker[PYTHON_TASKS_DIR]), worker["workerid"])
        # On the controller, before xdist starts its workers: one served model for the whole run.
        if hasattr(self.config, "workerinput") or self.lists_only():
            return
        if self.settings.model:  # keys and tool server first: a usage error here costs no worker
            self.check_access()
        if not self.settings.serve:
            return
        if self.model_config is None or self.model_config.serve is None:
            where = self.model_config.source if self.model_config else "the oracle"
            raise pytest.UsageError(f"--callm-serve: model {self.settings.model} ({where}) names no [serve] command")
        try:
            self.server = ModelServer(self.model_config)
            served = self.model_config
            self.model_config = self.model_config.with_overrides(base_url=self.server.start())
            self.caller_config = self._caller_config()
            if self.caller_is_self and not self.settings.caller_base_url and self.custom_caller() is None:
                # The caller's side on a server of its own, started by the same command: a server that
                # keeps one conversation's prompt warm (llama.cpp) would otherwise read each side's
                # long prompt from the start at every turn.
                self.caller_server = ModelServer(served)
                self.caller_config = self.caller_config.with_overrides(base_url=self.caller_server.start())
        except (ServeError, ModelConfigError) as e:
            raise pytest.UsageError(str(e)) from None

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node) -> None:
        if self.server is not None:
            node.workerinput[SERVED_URL] = self.server.base_url
        if self.caller_server is not None:
            node.workerinput[SERVED_CALLER_URL] = self.caller_server.base_url
        node.workerinput[RUN_DIR] = str(self.run_dir.path)
        if self.python_tasks_dir is None:  # made by a worker that has Python tasks, removed at the end
            self.python_tasks_dir = Path(tempfile.gettempdir()) / f"callm-python-tasks-{uuid.uuid4().hex}"
        node.workerinput[PYTHON_TASKS_DIR] = str(self.python_tasks_dir)
        if self.rescore_from is not None:
            node.workerinput[RESCORE_FROM] = str(self.rescore_from.path)

    @pytest.hookimpl(tryfirst=True)
    def pytest_keyboard_interrupt(self, excinfo) -> None:
        if not self.config.option.fulltrace:
            self.stopper.shorten(excinfo)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        self.stopper.uninstall()
        if self.runner is not None:  # closed by the callm_runtime fixture, unless no item set it up
            self.runner.close()
        self.run_dir.unlock()
        if self.unused_run_dir():
            self.run_dir.remove_if_unused()
        if self.python_tasks_dir is not None:
            shutil.rmtree(self.python_tasks_dir, ignore_errors=True)
        for server in (self.server, self.caller_server):
            if server is not None:
                server.stop()
        self.server = self.caller_server = None

    def make_runtime(self) -> Runtime:
        hook = self.config.hook

        def caller_factory(task, pack, attempt):
            # A plugin's or conftest's caller first; None leaves the attempt to the simulated caller.
            return hook.pytest_callm_make_caller(config=self.config, task=task, pack=pack, attempt=attempt,
                                                 model_name=self.settings.model)

        real = self.model_config is not None
        custom_caller = self.custom_caller() is not None
        caller_key = (self._key_of(self.caller_config, "caller-model", "caller-api-key-env")
                      if real and not custom_caller else None)
        # A rescore plays nothing: its runtime only replays answer keys (Python tasks' expected states),
        # with the oracle, whatever model played the saved run.
        return Runtime(ORACLE if self.rescore_from is not None else self.settings.model, self.packs.loaded(),
                       self.settings.tool_server,
                       model_config=self.model_config, api_key=self._api_key() if real else None,
                       retry=self.retry_policy() if real else None,
                       caller_factory=caller_factory,
                       caller_config=self.caller_config if real else None, caller_api_key=caller_key,
                       line=self.settings.line,
                       line_config=self.line_config,
                       line_api_key=self._key_of(self.line_config, "line-model", None) if self.line_config else None,
                       latency_sample=self.settings.latency_sample if self.settings.latency else 0,
                       keep_calls=self.run_dir.path / "calls" if self.settings.keep_calls else None,
                       concurrency=self.concurrency)

    def keep_latency_sample(self, sample: dict[str, Any] | None) -> None:
        if sample is None:
            return
        if hasattr(self.config, "workerinput"):
            self.config.workeroutput[LATENCY_SAMPLE] = sample
        else:
            self.latency_parts.append(sample)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        sample = getattr(node, "workeroutput", {}).get(LATENCY_SAMPLE)
        if sample:
            self.latency_parts.append(sample)

    def summary(self):
        """The run's summary, for the report and the terminal alike: its bootstrap intervals are computed
        once per session (the order of the results changes none of its figures)."""
        if self._summary is None or self._summary[0] != len(self.results):
            results = sorted(self.results, key=lambda r: (r["industry"], r["task_id"], r["attempt"]))
            self._summary = (len(self.results), summarize(results, self.settings.k))
        return self._summary[1]

    def write_report(self) -> None:
        """The report JSON of the run: every figure of the summary, from the attempts' results.

        No timestamps and a fixed order: the same trajectories and verifier give the same bytes.
        """
        results = sorted(self.results, key=lambda r: (r["industry"], r["task_id"], r["attempt"]))
        interrupted = self.interrupted_line() if self.session_interrupted else None
        groups, total = usage_by_industry(results)
        turns = [t for r in results for t in r.get("line_turns", [])]
        profile = None if is_clean(self.settings.line) else load_profile(self.settings.line)
        self.run_dir.write_report({
            "model": self.settings.model, "k": self.settings.k,
            "summary": self.summary().to_json(),
            "usage": {"industries": {k: g.to_json() for k, g in groups.items()}, "total": total.to_json()}
                     if groups else None,
            "line_rates": realized_rates(turns, profile) if turns else None,
            **({"interrupted": interrupted} if interrupted else {}),
            "attempts": results,
        })
        from pytest_callm.report.report_html import write_html_report  # Jinja2 is only needed here

        try:
            write_html_report(self.run_dir.path, self.settings.industries,
                              written=self.task_pages.written if self.task_pages is not None else ())
        except Exception as e:  # noqa: BLE001  the page never stays behind report.json: none rather than a stale one
            (self.run_dir.path / "report.html").unlink(missing_ok=True)
            self.page_failure = (f"report.html not written ({type(e).__name__}: {str(e)[:200]}); report.json is "
                                 f"complete: `callm report {self.run_dir.path}` writes the page from it")

    def writes_report(self) -> bool:
        """Whether this process writes the run's report at session finish (the controller, after a run)."""
        return not hasattr(self.config, "workerinput") and bool(self.results) and self._started

    def caller_name(self) -> str:
        """Who played the caller: none (the oracle, a rescore), a plugin's caller, or the caller model."""
        if self.model_config is None:
            return "none"
        custom = self.custom_caller()
        if custom is not None:
            return custom
        return self.caller_config.name

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus) -> None:
        self.session_interrupted = exitstatus == pytest.ExitCode.INTERRUPTED
        if not hasattr(self.config, "workerinput") and self.results and self._started \
                and self.write_failure is None:
            try:
                self.write_report()
            except RunDirWriteError as e:
                self.write_failure = e
        # After every worker is done (xdist) or the last item ran: one request at a time, from here.
        if (hasattr(self.config, "workerinput") or not self.latency_parts or session.shouldstop
                or exitstatus == pytest.ExitCode.INTERRUPTED):
            return
        from pytest_callm.model.client import OpenAIChatModel

        requests = pool_samples(self.latency_parts, self.settings.latency_sample)
        model = OpenAIChatModel(self.model_config, self._api_key(), self.retry_policy())

        async def measure() -> LatencyReport:
            try:
                return await replay(model, requests, sum(p["seen"] for p in self.latency_parts))
            finally:
                await model.aclose()

        self.latency_report = asyncio.run(measure())

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if self.not_collected and session.testsfailed == len(self.not_collected):
            # Every collection error is a task file's: each is named, its items are left out, and the
            # other tasks run (the run still exits non-zero). Any other error stops the run, as pytest does.
            self.config.option.continue_on_collection_errors = True
        python = python_task_records(session.items)
        worker = getattr(self.config, "workerinput", None)
        if worker is not None:  # the xdist controller checks, once, from what the worker leaves here
            if python and worker.get(PYTHON_TASKS_DIR):  # before xdist's hook tells the controller we are done
                write_json(Path(worker[PYTHON_TASKS_DIR]) / f"{worker['workerid']}.json", python, indent=None)
            return
        ids = [i.nodeid for i in session.items if isinstance(i, TaskItem)]
        self._require_model(ids + list(python))
        self._start_run(ids, python)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        # Under xdist the controller never collects; it learns the ids from the first worker.
        if self._started:
            return
        task_ids = [i for i in ids if ".json::" in i]
        left = Path(node.workerinput.get(PYTHON_TASKS_DIR, ".")) / f"{node.workerinput['workerid']}.json"
        python = json.loads(left.read_text(encoding="utf-8")) if left.is_file() else {}
        python = {i: python[i] for i in ids if i in python}  # the selected ones
        self._require_model(task_ids + list(python))
        self._start_run(task_ids, python)

    def _check_release(self) -> ReleaseCheck | None:
        """This run against the release a conftest pins (`pytest_callm_release`), if any."""
        pins = self.config.hook.pytest_callm_release(config=self.config)
        if pins is None:
            return None
        used = {"caller": self.caller_name(), "line_profile_sha256": line_identity(self.settings.line).get("profile_sha256"),
                "verifier_sha256": verifier_hash(), "attempts": self.settings.attempts}
        try:
            return check_release(pins, used)
        except ValueError as e:
            raise pytest.UsageError(f"pytest_callm_release: {e}") from None

    def _start_run(self, ids: list[str], python: dict[str, dict[str, str]]) -> None:
        """Write the run's manifest (or check the one of the run being resumed) before any attempt runs.
        `ids`: the selected task files' items; `python`: the selected Python tasks' (python_task_records)."""
        self._started = True
        self.total, self.started_at = len(ids) + len(python), time.monotonic()
        if not (ids or python) or self.lists_only():
            return
        named = {task_file_path(self.config, i.split("::", 1)[0]): i.split("::", 1)[0] for i in ids}
        files = sorted(named)
        packs, tasks = {}, {}
        for f in files:
            try:
                _, task, pack = load_task(f, self.packs)
            except (TaskError, PackError):
                continue  # reported as that file's collection error
            packs[pack.name] = pack
            tasks[named[f]] = (task.industry, task.task_id)
        for record in python.values():
            try:
                packs[record["industry"]] = self.packs.get(record["industry"])
            except (KeyError, PackError):
                continue  # its attempts fail naming the pack
        for i in ids:  # what an interrupted run counts as saved, of what was selected
            file, _, name = i.partition("::")
            attempt = re.search(r"\[attempt-(\d+)\]$", name)
            if file in tasks and attempt:
                self.selected.append((*tasks[file], int(attempt[1])))
        for node, record in python.items():
            attempt = re.search(r"attempt-(\d+)", node.rpartition("[")[2])
            if attempt:
                self.selected.append((record["industry"], record["task"].rpartition("/")[2], int(attempt[1])))
        self.task_pages = TaskPages.for_items(self.run_dir.path, self.settings.industries, self.settings.model,
                                              self.settings.k, ids, tasks)
        manifest = make_manifest(model=self.settings.model, model_config=self.model_config,
                                 caller_config=self.caller_config, line=self.settings.line,
                                 attempts=self.settings.attempts, k=self.settings.k, task_files=files,
                                 packs=packs, root=self.config.rootpath,
                                 python_tasks={r["task"]: r["sha256"] for r in python.values()})
        self.release_check = self._check_release()
        if self.release_check is not None:
            manifest["release"] = self.release_check.to_json()
        option = "resume" if self.settings.resume else "out"
        try:
            self.resuming = self.run_dir.open_run(manifest, self.rescore_from)
        except RunDirError as e:
            raise pytest.UsageError(f"--callm-{option}: {e}") from None
        except OSError as e:  # a read-only or full folder: nothing was played, nothing is lost
            self.run_dir.unlock()
            raise pytest.UsageError(f"--callm-{option}: cannot write to {self.run_dir.path} "
                                    f"({e.strerror or e}); nothing was played") from None

    # --- results ------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        payload = result_payload(item, call.when, call.excinfo, report.outcome)
        if payload is not None:
            report.callm = payload
            # JUnit XML reads the properties off the teardown report, which copies the item's.
            item.user_properties.extend(
                [("callm_industry", payload["industry"]), ("callm_task", payload["task_id"]),
                 ("callm_category", payload["category"]), ("callm_difficulty", payload["difficulty"]),
                 ("callm_attempt", payload["attempt"]), ("callm_passed", payload["passed"])]
                + [(f"callm_gate_{g}", ok) for g, ok in payload["gates"].items()]
                + ([("callm_error", payload["error"])] if "error" in payload else [])
                + usage_properties(payload.get("usage")))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, "callm", None)
        if payload is None and report.failed and report.when not in ("setup", "call", "teardown"):
            payload = self._crashed(report.nodeid)  # xdist's report of a worker that died mid-attempt
        if payload is not None and not hasattr(self.config, "workerinput"):
            self.results.append(payload)
            if self.task_pages is not None:
                self.task_pages.add(payload)
            self._progress()

    def _crashed(self, nodeid: str) -> dict[str, Any] | None:
        """The record of an attempt whose worker died: counted, never scored, never silently lost."""
        match = re.fullmatch(r"(.+?)::(.+)\[attempt-(\d+)\]", nodeid)
        if match is None or not is_task_file(Path(match[1]).name):
            return None
        where = {"industry": "?", "category": "?", "difficulty": "?"}
        try:
            _, task, _ = load_task(task_file_path(self.config, match[1]), self.packs)
            where = {"industry": task.industry, "category": task.category_slug, "difficulty": task.difficulty}
        except (TaskError, PackError):
            pass
        return {"task_id": match[2], **where, "attempt": int(match[3]), "passed": None, "gates": {},
                "error_kind": "worker crashed", "error": f"the worker process died while running {nodeid}"}

    def _progress(self) -> None:
        """A line at every tenth of a long run: done/total, passes so far, elapsed, time left."""
        done, total = len(self.results), self.total
        if total < PROGRESS_MIN_ATTEMPTS or done * 10 // total == (done - 1) * 10 // total:
            return
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is None:
            return
        elapsed = time.monotonic() - self.started_at
        passed = sum(1 for r in self.results if r.get("passed"))
        left = elapsed / done * (total - done)

        def clock(seconds: float) -> str:
            return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"

        writer = getattr(reporter, "_tw", None)  # start on a fresh line, after pytest's own dots
        if writer is not None and writer.width_of_current_line:
            reporter.write("\n")
        reporter.write_line(f"callm: {done}/{total} attempts ({100 * done // total}%), {passed} passed, "
                            f"{clock(elapsed)} elapsed, about {clock(left)} left")

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        # Under xdist the controller hears of a worker's collection error here, once per error.
        if report.failed and is_task_file(Path(report.nodeid.split("::")[0]).name) \
                and report.nodeid not in self.not_collected:
            self.not_collected.append(report.nodeid)

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if hasattr(config, "workerinput"):
            return
        for line in self.loops:
            terminalreporter.write_line(f"callm: {line}", yellow=True)
        if self.not_collected:  # their tasks are in no figure: say so where the figures are
            terminalreporter.write_line(f"callm: {len(self.not_collected)} task file(s) could not be collected and "
                                        "are in no figure: " + ", ".join(self.not_collected), red=True, bold=True)
        interrupted = self.interrupted_line() if exitstatus == pytest.ExitCode.INTERRUPTED else None
        if not self.results:
            if self.write_failure is not None:
                terminalreporter.write_line(f"callm: {self.write_failure_line()}", red=True, bold=True)
            elif interrupted:
                terminalreporter.write_line(f"callm: {interrupted}", red=True, bold=True)
            return
        summary = self.summary()
        terminalreporter.section("callm")
        width = shutil.get_terminal_size().columns
        partial = f"interrupted after {len(self.results)} of {self.total} items" if interrupted else None
        terminalreporter.write(render(summary, self.settings.model or "?", width=width,
                                      color=terminalreporter.hasmarkup, partial=partial))
        groups, total = usage_by_industry(self.results)
        if groups:
            terminalreporter.write(render_usage(groups, total, self.settings.model, width=width,
                                                color=terminalreporter.hasmarkup))
        turns = [t for r in self.results for t in r.get("line_turns", [])]
        if turns:
            profile = None if is_clean(self.settings.line) else load_profile(self.settings.line)
            terminalreporter.write(format_rates(realized_rates(turns, profile)) + "\n")
        if self.latency_report is not None:
            terminalreporter.write(self.latency_report.describe())
        if self.same_model_warning:
            terminalreporter.write_line(f"WARNING: {self.same_model_warning}", red=True, bold=True)
        if self.release_check is not None:
            terminalreporter.write_line(self.release_check.describe(), green=self.release_check.comparable,
                                        yellow=not self.release_check.comparable)
        if self._started:
            what = "rescored into" if self.rescore_from else "resumed in" if self.resuming else "saved in"
            terminalreporter.write_line(f"callm: run {what} {self.run_dir.path}")
            page = report_page_line(self.run_dir.path, terminalreporter.hasmarkup)
            if page:
                terminalreporter.write_line(page)
        if self.page_failure:
            terminalreporter.write_line(f"callm: {self.page_failure}", red=True)
        if self.write_failure is not None:  # one line: the folder, what is saved, how to go on
            terminalreporter.write_line(f"callm: {self.write_failure_line()}", red=True, bold=True)
        elif interrupted:  # last, right above pytest's KeyboardInterrupt banner
            terminalreporter.write_line(f"callm: {interrupted}", red=True, bold=True)

    def write_failure_line(self) -> str:
        """`cannot write to DIR (No space left on device): 7 of 20 attempts saved there, intact, no
        report.json; make room (or make the folder writable), then resume with pytest ... --callm-resume=DIR`."""
        e = self.write_failure
        saved = sum(self.run_dir.trajectory_path(*s).exists() for s in self.selected)
        return (f"{e}: {saved} of {len(self.selected)} attempts saved there, intact (no report.json of this run); "
                f"make room (or make the folder writable), then resume with {self.resume_command()}")

    def unused_run_dir(self) -> bool:
        """Whether this process made the run folder (a new run, on the controller) and played nothing into it."""
        return (self._started and not self.resuming and self.rescore_from is None and not self.results
                and not hasattr(self.config, "workerinput"))

    def interrupted_line(self) -> str | None:
        """`interrupted: 7 of 20 attempts saved; resume with pytest ... --callm-resume=DIR`."""
        if not self._started or not self.selected or self.rescore_from is not None:
            return None
        saved = sum(self.run_dir.trajectory_path(*s).exists() for s in self.selected)
        if not saved and self.unused_run_dir():
            return "stopped before any attempt was saved: nothing to resume, no run folder left behind"
        return f"interrupted: {saved} of {len(self.selected)} attempts saved; resume with {self.resume_command()}"

    def resume_command(self) -> str:
        """The command line of this run, pointed at its folder with --callm-resume (no secrets)."""
        args = [a for a in self.config.invocation_params.args if isinstance(a, str)]
        kept, skip = [], False
        for a in args:  # the same command, pointed at this run's folder
            if skip:
                skip = False
            elif a in ("--callm-out", "--callm-resume"):
                skip = True
            elif not a.startswith(("--callm-out=", "--callm-resume=")):
                option, eq, url = a.partition("=")  # a password in a base URL is never shown
                kept.append(option + eq + redact.public_url(url) if eq and "://" in url else a)
        return redact.text(shlex.join(["pytest", *kept, f"--callm-resume={self.run_dir.path}"]))


USAGE_PROPERTIES = ("requests", "ttft_median_ms", "input_tokens", "cached_input_tokens", "output_tokens",
                    "reasoning_tokens", "cost_usd", "spoken_words", "est_duration_s", "reruns")


def usage_properties(usage: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """JUnit properties of one attempt's timing, tokens and cost (none for the oracle)."""
    if not usage:
        return []
    return [(f"callm_{key}", usage[key]) for key in USAGE_PROPERTIES if usage.get(key) is not None]


def pytest_configure(config: pytest.Config) -> None:
    for line in ("industry(name=...): the industry pack of a CALLM task",
                 "category(slug=..., name=...): the task category, e.g. slug='C4' or slug='R'",
                 "difficulty(level=...): easy, medium or hard",
                 "easy: an easy CALLM task", "medium: a medium CALLM task", "hard: a hard CALLM task",
                 PYTHON_TASK_MARKER):
        config.addinivalue_line("markers", line)
    state = CallmState(config)
    config.pluginmanager.register(state, STATE_PLUGIN)
    state.stopper.install()  # SIGTERM stops the run as Ctrl-C does (stopping.py)
    config.pluginmanager.register(JUnitSuiteProperties(state), "callm-junit-suite")
    config.pluginmanager.register(KeepLastRuns(state), "callm-keep-runs")
    if state.settings.model and state.concurrency > 1:
        config.pluginmanager.register(PlayAhead(state.concurrency), PlayAhead.NAME)
        config.pluginmanager.register(DeepQueueScheduler(2 * state.concurrency), DeepQueueScheduler.NAME)
