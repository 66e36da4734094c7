"""One benchmark run's life in one process, from its folder opened to its report written.

`RunSession` holds what the pytest layer used to keep in its hooks: the run directory (new, resumed
or a rescore's), the models and their keys (`run_models.py`), the runtime that plays attempts, the
results gathered on the process that reports (the xdist controller, or the only process), the
progress lines, the summary, report.json and report.html, and what an interrupted or stopped run
says. It imports no pytest: the plugin's hooks call it, and a script or a test can drive it alike.

Under xdist one runs in every process: the controller's opens the run and gathers the results, a
worker's (`worker`: the input its controller sent, `worker_input()`) plays into the same folder.
"""

from __future__ import annotations

import asyncio
import re
import shlex
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pytest_callm.model import redact
from pytest_callm.model.config import ORACLE
from pytest_callm.model.latency import LatencyReport, pool_samples, replay
from pytest_callm.phone.error_profile import ProfileError, load_profile, realized_rates
from pytest_callm.phone.line import is_clean, make_line
from pytest_callm.report.task_pages import TaskPages
from pytest_callm.runs.attempts import AttemptRunner
from pytest_callm.session.run_models import RunModels, RunUsageError
from pytest_callm.runs.runtime import Runtime
from pytest_callm.saved.release import ReleaseCheck, check_release
from pytest_callm.saved.rundir import (RunDir, RunDirError, RunDirWriteError, default_run_dir, line_identity,
                                       make_manifest, verifier_hash)
from pytest_callm.scoring.cost import usage_by_industry
from pytest_callm.scoring.metrics import summarize
from pytest_callm.task.pack import Pack, PackError, PackRegistry
from pytest_callm.task.task_file import TaskError, is_task_file, load_task

# Calls in flight in a run, unless --callm-concurrency says otherwise: shared among the processes
# (32 // workers each, at least one), so `-n` only spreads the CPU work and `-n 32` keeps the 32 in
# flight it always meant. A call waits on the network almost all the time: one process keeps many busy.
DEFAULT_IN_FLIGHT = 32
PROGRESS_MIN_ATTEMPTS = 50  # shorter runs print their calls as they play instead (pytest_plugin/live_calls.py)
# What a controller sends each worker (xdist's workerinput): where the run saves its attempts, the run
# being rescored, and the URLs of the --callm-serve servers (the caller's, when the model plays it).
RUN_DIR = "callm_run_dir"
RESCORE_FROM = "callm_rescore_from"
SERVED_URL = "callm_served_base_url"
SERVED_CALLER_URL = "callm_served_caller_base_url"


def default_concurrency(workers: int, server_limit: int | None = None) -> int:
    """Calls in flight in each process: the run's default, or the model server's own limit (a model
    config's `calls_in_flight`), shared among the workers."""
    in_run = DEFAULT_IN_FLIGHT if server_limit is None else min(server_limit, DEFAULT_IN_FLIGHT)
    return max(1, in_run // max(workers, 1))


def _sorted(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(results, key=lambda r: (r["industry"], r["task_id"], r["attempt"]))


class RunSession:
    """`settings`: the run's settings (pytest_plugin.settings.Settings); `root`: the folder task ids are
    relative to; `worker`: the controller's input on an xdist worker, None elsewhere; `workers`: the
    processes that play; `args`: the command line (for the resume line); `custom_caller()`: who plugs
    in a caller of their own, if anyone; `make_caller(task, pack, attempt)`: such a caller, or None;
    `release_pins()`: the pins of the release the run is compared with, or None; `task_file(name)`: the
    task file of the file part of a node id (default: below `root`; pytest's layer also looks under the
    paths it collected, such as an installed suite's `tasks/`)."""

    def __init__(self, settings: Any, *, root: Path, worker: dict[str, Any] | None = None, workers: int = 1,
                 args: Sequence[str] = (), lists_only: bool = False,
                 custom_caller: Callable[[], str | None] = lambda: None,
                 make_caller: Callable[..., Any] | None = None,
                 release_pins: Callable[[], dict[str, Any] | None] = lambda: None,
                 task_file: Callable[[str], Path] | None = None):
        self.settings, self.root, self.worker, self.args = settings, Path(root), worker, list(args)
        self.task_file = task_file or (lambda name: self.root / name)
        self.lists_only = lists_only  # --collect-only and the like: nothing is played, no model needed
        self.make_caller, self.release_pins = make_caller, release_pins
        self.rescore_from: RunDir | None = None
        if worker is not None and worker.get(RESCORE_FROM):
            self.rescore_from = RunDir(worker[RESCORE_FROM])
        elif worker is None and settings.rescore:
            self.rescore_from = RunDir(settings.rescore)
            if self._manifest_of(self.rescore_from, "rescore") is None:
                raise RunUsageError(f"--callm-rescore={settings.rescore}: no run there (no manifest.json)")
        if self.rescore_from is not None:  # the model of the saved run; nothing will call it
            saved = (self._manifest_of(self.rescore_from, "rescore") or {}).get("comparable", {})
            settings.model = settings.model or saved.get("model")
        if worker is not None:
            self.run_dir = RunDir(worker[RUN_DIR]) if worker.get(RUN_DIR) else None
        elif self.rescore_from is not None:
            self.run_dir = RunDir(settings.out or self.rescore_from.path / "rescored")
        else:
            self.run_dir = RunDir(settings.resume or settings.out or default_run_dir(self.root, settings.model))
        if worker is None and self.run_dir.path.exists() and not self.run_dir.path.is_dir():
            option = "resume" if settings.resume else "out"
            raise RunUsageError(f"--callm-{option}={self.run_dir.path}: a file, not a run directory")
        if worker is None and settings.resume and self._manifest_of(self.run_dir, "resume") is None:
            # Whatever is selected: a resume that found nothing to resume is a mistyped path.
            raise RunUsageError(f"--callm-resume={settings.resume}: no run to resume there (no manifest.json)")
        sent = worker or {}
        self.models = RunModels(settings, rescoring=self.rescore_from is not None, custom_caller=custom_caller,
                                served=sent.get(SERVED_URL), served_caller=sent.get(SERVED_CALLER_URL))
        try:
            make_line(settings.line, "check", 0)
        except ProfileError as e:
            raise RunUsageError(f"--callm-line={settings.line}: {e}") from None
        try:
            self.packs = PackRegistry(settings.industries)
        except PackError as e:
            raise RunUsageError(str(e)) from None
        limit = self.models.model_config.calls_in_flight if self.models.model_config is not None else None
        self.concurrency = settings.concurrency or default_concurrency(workers, limit)
        self.started = False  # the run was opened (`open`): it has a folder, and ends with a report
        self.resuming = False
        # This process took the folder for a new run (locked it, wrote its manifest): only then may it
        # remove the folder as unused. A refused run (another run holds the folder, or its settings
        # differ) owns nothing in it, so it removes nothing, least of all the other run's manifest.
        self.owns_new_folder = False
        self.total, self.started_at = 0, time.monotonic()
        self.results: list[dict[str, Any]] = []
        self._summary: tuple[int, Any] | None = None  # (results counted, their summary): see summary()
        self.selected: list[tuple[str, str, int]] = []  # (industry, task id, attempt) of the selected task items
        self.release_check: ReleaseCheck | None = None  # set when the run opens, if a release is pinned
        self.task_pages: TaskPages | None = None  # writes each task's page once all its attempts are in
        self.played_packs: dict[str, Pack] | None = None  # the packs of the selected tasks, once open
        self.runner: AttemptRunner | None = None  # plays, resumes or rescores this process's attempts
        self.latency_parts: list[dict[str, Any]] = []
        self.latency_report: LatencyReport | None = None
        self.interrupted = False  # set as the session finishes: the report says so
        self.write_failure: RunDirWriteError | None = None  # the run folder took no more (full, read-only)
        self.page_failure: str | None = None  # report.html could not be written from report.json

    @staticmethod
    def _manifest_of(run_dir: RunDir, option: str) -> dict[str, Any] | None:
        try:
            return run_dir.manifest()
        except RunDirError as e:
            raise RunUsageError(f"--callm-{option}: {e}") from None

    # --- opening the run ------------------------------------------------------------------------

    def require_model(self, task_ids: list[str]) -> None:
        """Selected task items need a model under test, its keys and the tool server."""
        if not task_ids or self.lists_only:
            return
        if not self.settings.model:
            raise RunUsageError(
                f"{len(task_ids)} task item(s) selected but no model under test: pass --callm-model=NAME "
                "(for example --callm-model=oracle to replay the answer keys offline), or set callm_model "
                "in your ini file")
        self.models.check_access()

    def worker_input(self) -> dict[str, str]:
        """What each xdist worker needs of the controller's run (see RUN_DIR and the keys beside it)."""
        sent = {RUN_DIR: str(self.run_dir.path)}
        if self.models.server is not None:
            sent[SERVED_URL] = self.models.server.base_url
        if self.models.caller_server is not None:
            sent[SERVED_CALLER_URL] = self.models.caller_server.base_url
        if self.rescore_from is not None:
            sent[RESCORE_FROM] = str(self.rescore_from.path)
        return sent

    def _check_release(self) -> ReleaseCheck | None:
        """This run against the release a conftest pins (`pytest_callm_release`), if any."""
        pins = self.release_pins()
        if pins is None:
            return None
        used = {"caller": self.models.caller_name(),
                "line_profile_sha256": line_identity(self.settings.line).get("profile_sha256"),
                "verifier_sha256": verifier_hash(), "attempts": self.settings.attempts}
        try:
            return check_release(pins, used)
        except ValueError as e:
            raise RunUsageError(f"pytest_callm_release: {e}") from None

    def open(self, ids: list[str], python: dict[str, dict[str, str]]) -> None:
        """Write the run's manifest (or check the one of the run being resumed) before any attempt runs.
        `ids`: the selected task files' items; `python`: the selected Python tasks' (python_task_records)."""
        self.started = True
        self.total, self.started_at = len(ids) + len(python), time.monotonic()
        if not (ids or python) or self.lists_only:
            return
        named = {self.task_file(i.split("::", 1)[0]): i.split("::", 1)[0] for i in ids}
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
        self.played_packs = packs  # loaded once: the pages use them as they are
        self.task_pages = TaskPages.for_items(self.run_dir.path, self.settings.industries, self.settings.model,
                                              self.settings.k, ids, tasks, packs)
        manifest = make_manifest(model=self.settings.model, model_config=self.models.model_config,
                                 caller_config=self.models.caller_config, line=self.settings.line,
                                 attempts=self.settings.attempts, k=self.settings.k, task_files=files,
                                 packs=packs, root=self.root,
                                 python_tasks={r["task"]: r["sha256"] for r in python.values()},
                                 custom_caller=self.models.custom_caller())
        self.release_check = self._check_release()
        if self.release_check is not None:
            manifest["release"] = self.release_check.to_json()
        option = "resume" if self.settings.resume else "out"
        try:
            self.resuming = self.run_dir.open_run(manifest, self.rescore_from)
            self.owns_new_folder = not self.resuming and self.rescore_from is None
        except RunDirError as e:
            raise RunUsageError(f"--callm-{option}: {e}") from None
        except OSError as e:  # a read-only or full folder: nothing was played, nothing is lost
            self.run_dir.unlock()
            raise RunUsageError(f"--callm-{option}: cannot write to {self.run_dir.path} "
                                f"({e.strerror or e}); nothing was played") from None

    # --- playing --------------------------------------------------------------------------------

    def attempt_runner(self) -> AttemptRunner:
        """This process's attempt runner (made on first need; it starts a runtime only to play)."""
        if self.runner is None:
            self.runner = AttemptRunner(self.make_runtime, self.run_dir, self.rescore_from, self.concurrency,
                                        judge=self.models.judge(), judge_gate=self.settings.judge_gate)
        return self.runner

    def make_runtime(self) -> Runtime:
        # A rescore plays nothing: its runtime only replays answer keys (Python tasks' expected states),
        # with the oracle, whatever model played the saved run.
        return Runtime(ORACLE if self.rescore_from is not None else self.settings.model, self.packs.loaded(),
                       self.settings.tool_server, caller_factory=self.make_caller, line=self.settings.line,
                       latency_sample=self.settings.latency_sample if self.settings.latency else 0,
                       keep_calls=self.run_dir.path / "calls" if self.settings.keep_calls else None,
                       concurrency=self.concurrency, **self.models.runtime_options())

    # --- results --------------------------------------------------------------------------------

    def record(self, result: dict[str, Any]) -> str | None:
        """One attempt's result, gathered; returns the progress line it completes, if any."""
        self.results.append(result)
        if self.task_pages is not None:
            self.task_pages.add(result)
        return self.progress_line()

    def progress_line(self) -> str | None:
        """A line at every tenth of a long run: done/total, passes so far, elapsed, time left."""
        done, total = len(self.results), self.total
        if total < PROGRESS_MIN_ATTEMPTS or done * 10 // total == (done - 1) * 10 // total:
            return None
        elapsed = time.monotonic() - self.started_at
        passed = sum(1 for r in self.results if r.get("passed"))
        left = elapsed / done * (total - done)

        def clock(seconds: float) -> str:
            return f"{int(seconds) // 60}:{int(seconds) % 60:02d}"

        return (f"callm: {done}/{total} attempts ({100 * done // total}%), {passed} passed, "
                f"{clock(elapsed)} elapsed, about {clock(left)} left")

    def crashed(self, nodeid: str) -> dict[str, Any] | None:
        """The record of an attempt whose worker died: counted, never scored, never silently lost."""
        match = re.fullmatch(r"(.+?)::(.+)\[attempt-(\d+)\]", nodeid)
        if match is None or not is_task_file(Path(match[1]).name):
            return None
        where = {"industry": "?", "category": "?", "difficulty": "?"}
        try:
            _, task, _ = load_task(self.task_file(match[1]), self.packs)
            where = {"industry": task.industry, "category": task.category_slug, "difficulty": task.difficulty}
        except (TaskError, PackError):
            pass
        return {"task_id": match[2], **where, "attempt": int(match[3]), "passed": None, "gates": {},
                "error_kind": "worker crashed", "error": f"the worker process died while running {nodeid}"}

    def summary(self):
        """The run's summary, for the report and the terminal alike: its bootstrap intervals are computed
        once per session (the order of the results changes none of its figures)."""
        if self._summary is None or self._summary[0] != len(self.results):
            self._summary = (len(self.results), summarize(_sorted(self.results), self.settings.k))
        return self._summary[1]

    def line_rates(self, results: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The phone line's realized error rates over the results' caller turns (None: no turn heard)."""
        turns = [t for r in results for t in r.get("line_turns", [])]
        if not turns:
            return None
        return realized_rates(turns, None if is_clean(self.settings.line) else load_profile(self.settings.line))

    def writes_report(self) -> bool:
        """Whether this process writes the run's report at session finish (the controller, after a run)."""
        return self.worker is None and bool(self.results) and self.started

    def write_report(self) -> None:
        """The report JSON of the run: every figure of the summary, from the attempts' results.

        No timestamps and a fixed order: the same trajectories and verifier give the same bytes.
        """
        results = _sorted(self.results)
        interrupted = self.interrupted_line() if self.interrupted else None
        groups, total = usage_by_industry(results)
        self.run_dir.write_report({
            "model": self.settings.model, "k": self.settings.k,
            "summary": self.summary().to_json(),
            "usage": {"industries": {k: g.to_json() for k, g in groups.items()}, "total": total.to_json()}
                     if groups else None,
            "line_rates": self.line_rates(results),
            **({"interrupted": interrupted} if interrupted else {}),
            "attempts": results,
        })
        from pytest_callm.report.report_html import write_html_report  # Jinja2 is only needed here

        try:
            write_html_report(self.run_dir.path, self.settings.industries,
                              written=self.task_pages.written if self.task_pages is not None else (),
                              known_packs=self.played_packs)
        except Exception as e:  # noqa: BLE001  the page never stays behind report.json: none rather than a stale one
            (self.run_dir.path / "report.html").unlink(missing_ok=True)
            self.page_failure = (f"report.html not written ({type(e).__name__}: {str(e)[:200]}); report.json is "
                                 f"complete: `callm report {self.run_dir.path}` writes the page from it")

    def finish(self, *, interrupted: bool, stopped: bool) -> None:
        """The session's end: the report (on the controller), then the latency replay if asked for and
        the run was neither `interrupted` (Ctrl-C, SIGTERM) nor `stopped` (-x, a refused key)."""
        self.interrupted = interrupted
        if self.writes_report() and self.write_failure is None:
            try:
                self.write_report()
            except RunDirWriteError as e:
                self.write_failure = e
            except KeyboardInterrupt:  # Ctrl-C or SIGTERM while the report was written: every attempt
                # is saved, report.json is whole or absent (written atomically), and the page never stays
                # behind it; the run ends as any interrupted run, with what is saved and how to resume.
                (self.run_dir.path / "report.html").unlink(missing_ok=True)
                self.interrupted = interrupted = True
        # After every worker is done (xdist) or the last item ran: one request at a time, from here.
        if self.worker is not None or not self.latency_parts or stopped or interrupted:
            return
        from pytest_callm.model.client import OpenAIChatModel

        requests = pool_samples(self.latency_parts, self.settings.latency_sample)
        model = OpenAIChatModel(self.models.model_config, self.models.api_key(), self.models.retry_policy())

        async def measure() -> LatencyReport:
            try:
                return await replay(model, requests, sum(p["seen"] for p in self.latency_parts))
            finally:
                await model.aclose()

        self.latency_report = asyncio.run(measure())

    def close(self) -> None:
        """The process's end: the runtime stopped, the folder let go (removed if this run left it
        empty), the model servers stopped."""
        if self.runner is not None:  # closed by the pytest layer's runtime fixture, unless no item set it up
            self.runner.close()
        if self.run_dir is not None:
            if self.unused_run_dir():  # still locked: no other run can open the folder meanwhile
                self.run_dir.remove_if_unused()
            self.run_dir.unlock()
        self.models.stop_servers()

    # --- what a stopped run says ----------------------------------------------------------------

    def saved_line(self) -> str:
        what = "rescored into" if self.rescore_from else "resumed in" if self.resuming else "saved in"
        return f"callm: run {what} {self.run_dir.path}"

    def write_failure_line(self) -> str:
        """`cannot write to DIR (No space left on device): 7 of 20 attempts saved there, intact, no
        report.json; make room (or make the folder writable), then resume with pytest ... --callm-resume=DIR`."""
        e = self.write_failure
        saved = sum(self.run_dir.trajectory_path(*s).exists() for s in self.selected)
        return (f"{e}: {saved} of {len(self.selected)} attempts saved there, intact (no report.json of this run); "
                f"make room (or make the folder writable), then resume with {self.resume_command()}")

    def unused_run_dir(self) -> bool:
        """Whether this process made the run folder (a new run, on the controller) and played nothing into it."""
        return self.owns_new_folder and not self.results and self.worker is None

    def interrupted_line(self) -> str | None:
        """`interrupted: 7 of 20 attempts saved; resume with pytest ... --callm-resume=DIR`."""
        if not self.started or not self.selected or self.rescore_from is not None:
            return None
        saved = sum(self.run_dir.trajectory_path(*s).exists() for s in self.selected)
        if not saved and self.unused_run_dir():
            return "stopped before any attempt was saved: nothing to resume, no run folder left behind"
        return f"interrupted: {saved} of {len(self.selected)} attempts saved; resume with {self.resume_command()}"

    def resume_command(self) -> str:
        """The command line of this run, pointed at its folder with --callm-resume (no secrets)."""
        kept, skip = [], False
        for a in (a for a in self.args if isinstance(a, str)):  # the same command, pointed at this run's folder
            if skip:
                skip = False
            elif a in ("--callm-out", "--callm-resume"):
                skip = True
            elif not a.startswith(("--callm-out=", "--callm-resume=")):
                option, eq, url = a.partition("=")  # a password in a base URL is never shown
                kept.append(option + eq + redact.public_url(url) if eq and "://" in url else a)
        return redact.text(shlex.join(["pytest", *kept, f"--callm-resume={self.run_dir.path}"]))
