"""pytest entry point (`pytest11: callm`): options, collection, the runtime fixture, the summary.

Only hooks and wiring live here; the work is in `collect`, `runtime`, `verify`, `metrics` and
`summary`.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .collect import TaskFile, TaskItem, is_task_file
from .metrics import summarize
from .pack import PackError, PackRegistry
from .runtime import ModelUnavailable, Runtime, check_model_name
from .tools_client import ToolServerError, check_tool_server
from .summary import render

# name, type, default, help: each becomes --callm-<name> with an ini twin callm_<name>.
OPTIONS = [
    ("model", str, None, "model under test: a configured model name, or `oracle` to replay every answer key"),
    ("attempts", int, 5, "attempts per task (default 5)"),
    ("k", int, None, "k of pass^k (default: the number of attempts)"),
    ("tool-server", str, None, "URL of a running tool server to use instead of starting one per worker"),
]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("callm", "pytest-callm: benchmark the LLM of a phone agent")
    for name, _, default, help_ in OPTIONS:
        dest = "callm_" + name.replace("-", "_")
        group.addoption(f"--callm-{name}", dest=dest, default=None, help=help_)
        parser.addini(dest, help_ + " (ini twin of --callm-" + name + ")", default=None)
    group.addoption("--callm-industries", dest="callm_industries", action="append", default=[],
                    help="extra folder holding industry packs (repeatable); `industries/` at the rootdir "
                         "is always searched")
    parser.addini("callm_industries", "extra folders holding industry packs", type="paths", default=[])


@dataclass
class Settings:
    model: str | None
    attempts: int
    k: int
    tool_server: str | None
    industries: list[Path]

    @classmethod
    def from_config(cls, config: pytest.Config) -> "Settings":
        def value(name: str) -> Any:
            dest = "callm_" + name.replace("-", "_")
            cli = config.getoption(dest)
            return cli if cli is not None else config.getini(dest)

        def integer(name: str, default: int | None) -> int | None:
            raw = value(name)
            if raw in (None, ""):
                return default
            try:
                number = int(raw)
            except ValueError:
                raise pytest.UsageError(f"--callm-{name} must be a whole number, got {raw!r}") from None
            if number < 1:
                raise pytest.UsageError(f"--callm-{name} must be at least 1, got {number}")
            return number

        attempts = integer("attempts", 5)
        k = integer("k", attempts)
        if k > attempts:
            raise pytest.UsageError(f"--callm-k={k} is larger than --callm-attempts={attempts}")
        dirs = [config.rootpath / "industries", *map(Path, config.getini("callm_industries")),
                *(Path(p).resolve() for p in config.getoption("callm_industries"))]
        return cls(value("model") or None, attempts, k, value("tool-server") or None,
                   [d for d in dirs if d.is_dir()])


class CallmState:
    """Per-process session state: settings, packs, and (on the controller) the attempt results."""

    def __init__(self, config: pytest.Config):
        self.config = config
        self.settings = Settings.from_config(config)
        if self.settings.model:
            try:
                check_model_name(self.settings.model)
            except ModelUnavailable as e:
                raise pytest.UsageError(str(e)) from None
        try:
            self.packs = PackRegistry(self.settings.industries)
        except PackError as e:
            raise pytest.UsageError(str(e)) from None
        self.results: list[dict[str, Any]] = []

    # --- collection ---------------------------------------------------------------------------

    def pytest_collect_file(self, file_path: Path, parent):
        if is_task_file(file_path.name):
            return TaskFile.from_parent(parent, path=file_path)
        return None

    def _require_model(self, task_ids: list[str]) -> None:
        if not task_ids or self.config.option.collectonly:
            return
        if not self.settings.model:
            raise pytest.UsageError(
                f"{len(task_ids)} task item(s) selected but no model under test: pass --callm-model=NAME "
                "(for example --callm-model=oracle to replay the answer keys offline), or set callm_model "
                "in your ini file")
        if self.settings.tool_server:
            try:
                check_tool_server(self.settings.tool_server)
            except ToolServerError as e:
                raise pytest.UsageError(f"--callm-tool-server: {e}") from None

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            return  # the xdist controller checks, once
        self._require_model([i.nodeid for i in session.items if isinstance(i, TaskItem)])

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node, ids) -> None:
        # Under xdist the controller never collects; it learns the ids from the first worker.
        self._require_model([i for i in ids if ".json::" in i])

    # --- results ------------------------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        if isinstance(item, TaskItem):
            payload = item.result_payload(call.when, call.excinfo)
            if payload is not None:
                report.callm = payload
                # JUnit XML reads the properties off the teardown report, which copies the item's.
                item.user_properties.extend(
                    [("callm_industry", payload["industry"]), ("callm_task", payload["task_id"]),
                     ("callm_attempt", payload["attempt"]), ("callm_passed", payload["passed"])]
                    + [(f"callm_gate_{g}", ok) for g, ok in payload["gates"].items()]
                    + ([("callm_error", payload["error"])] if "error" in payload else []))
        return report

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        payload = getattr(report, "callm", None)
        if payload is not None and not hasattr(self.config, "workerinput"):
            self.results.append(payload)

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        if hasattr(config, "workerinput") or not self.results:
            return
        summary = summarize(self.results, self.settings.k)
        terminalreporter.section("callm")
        terminalreporter.write(render(summary, self.settings.model or "?", width=shutil.get_terminal_size().columns,
                                      color=terminalreporter.hasmarkup))


def callm_state(config: pytest.Config) -> CallmState:
    return config.pluginmanager.get_plugin("callm-state")


def pytest_configure(config: pytest.Config) -> None:
    for line in ("industry(name=...): the industry pack of a CALLM task",
                 "category(slug=..., name=...): the task category, e.g. slug='C4' or slug='R'",
                 "difficulty(level=...): easy, medium or hard",
                 "easy: an easy CALLM task", "medium: a medium CALLM task", "hard: a hard CALLM task"):
        config.addinivalue_line("markers", line)
    config.pluginmanager.register(CallmState(config), "callm-state")


@pytest.fixture(scope="session")
def callm_runtime(request: pytest.FixtureRequest):
    """One runtime per process (per xdist worker): event loop, tool server, model factory."""
    state = callm_state(request.config)
    runtime = Runtime(state.settings.model, state.packs.loaded(), state.settings.tool_server)
    yield runtime
    runtime.close()
