"""The plugin's options (one `callm` group, each with an ini twin) and the settings they resolve to."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_callm.session.run_models import DEFAULT_CALLER_MODEL
from pytest_callm.session.run_session import DEFAULT_IN_FLIGHT, default_concurrency  # noqa: F401  (help; tests)
from pytest_callm.task.benchmark import benchmark_industries


def workers(config: pytest.Config) -> int:
    """How many processes play the run's attempts (xdist workers, or this one)."""
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        return int(worker.get("workercount", 1))
    # xdist turns -n (capped by --maxprocesses) into one --tx entry per worker before we configure.
    if config.getoption("dist", "no") == "no":
        return 1
    return max(len(config.getoption("tx", None) or []), 1)


# name, type, default, help: each becomes --callm-<name> with an ini twin callm_<name>.
OPTIONS = [
    ("model", str, None, "model under test: `oracle` (replays every answer key, offline), the name of a model "
                         "config (bundled or --callm-model-configs), or else any OpenAI model id, e.g. gpt-4.1-mini"),
    ("attempts", int, 5, "attempts per task (default 5)"),
    ("concurrency", int, None,
     f"calls in flight in each process (each xdist worker); default: {DEFAULT_IN_FLIGHT} in the run, "
     f"shared among the workers"),
    ("k", int, None, "k of pass^k (default: the number of attempts)"),
    ("tool-server", str, None, "URL of a running tool server to use instead of starting one per worker"),
    ("base-url", str, None, "base URL of the model's OpenAI-compatible API (overrides the model config's)"),
    ("api-key-env", str, None, "environment variable holding the model's API key (overrides the config's; "
                               "`none` for a server without keys)"),
    ("caller-model", str, None,
     f"model that plays the caller (default: the `caller` the model's config names, else "
     f"{DEFAULT_CALLER_MODEL}); never the model under test"),
    ("caller-base-url", str, None, "base URL of the caller model's OpenAI-compatible API"),
    ("caller-api-key-env", str, None, "environment variable holding the caller model's API key"),
    ("line", str, "default", "phone line: `default` (the shipped error profile), `clean` (no recognizer "
                             "errors) or the path of a profile file (`callm fit-line-profile`); default: `default`"),
    ("line-model", str, None, "model that writes misheard names, words and phrases (default: the "
                              "pronouncing dictionary)"),
    ("judge", str, None, "model config that reads each attempt's words against the pack's speech rules; its "
                         "findings are reported beside the words gate, and fail it only with --callm-judge-gate"),
    ("out", str, None, "run directory for the manifest, trajectories and report (default: a new "
                       "timestamped folder under callm-runs/); an existing run there is resumed"),
    ("keep-runs", int, None, "keep only the last N runs in callm-runs/, removing older ones at the end of a run "
                             "(default: keep all)"),
    ("resume", str, None, "resume the run saved in this directory: its finished attempts are kept, the rest run"),
    ("rescore", str, None, "score the trajectories saved in this run directory with today's verifier: "
                           "no model, caller or tool server"),
    ("shard", str, None, "I/N: play only shard I of N, a deterministic share of whole tasks balanced by expected "
                         "cost (a CI matrix); join the shard runs with `callm merge`"),
    ("latency-sample", int, 30, "requests the latency replay sends, sampled from the run (default 30)"),
    ("retry-backoff", float, 1.0, "seconds before the first retry of a failed model request; doubles each try "
                                  "(default 1.0)"),
    ("request-timeout", float, 60.0, "seconds a model request may wait to connect or for its next streamed chunk "
                                     "(default 60)"),
    ("request-deadline", float, 600.0, "seconds a model request may take in all, first byte to last; past it the "
                                       "request is retried as an infrastructure error (default 600)"),
]
# name, help: each becomes the flag --callm-<name> with a boolean ini twin callm_<name>.
FLAGS = [
    ("suite", "collect the benchmark's locked tasks (installed with the plugin) beside the paths named, or alone "
              "when none is named, and search its industry packs"),
    ("serve", "start the serving command of the model config (e.g. vLLM) for this run and stop it afterwards"),
    ("latency", "after the run, replay a sample of its requests one at a time and report time to first token"),
    ("judge-gate", "let the --callm-judge model's findings fail the words gate (by default they are reported apart)"),
    ("keep-calls", "keep each call's SQLite database (in <run dir>/calls/) for debugging; by default a call's "
                   "database is removed once the attempt is scored"),
]


class AsyncioLoopScope:
    """pytest-asyncio (a dependency, for async tests beside a team's Python tasks) warns in every project
    whose ini leaves `asyncio_default_fixture_loop_scope` unset. Its default becomes "function", the
    scope pytest-asyncio says it will default to; a project's own setting still wins, being read first.
    Done once every plugin is loaded (pytest-asyncio's option registered), before any configure hook."""

    NAME = "callm-asyncio-loop-scope"
    OPTION = "asyncio_default_fixture_loop_scope"

    def pytest_load_initial_conftests(self, early_config: pytest.Config, parser: pytest.Parser, args) -> None:
        if early_config.pluginmanager.has_plugin("asyncio"):
            parser.addini(self.OPTION, "default scope of the asyncio event loop used to execute async fixtures "
                                       "(pytest-callm sets function when unset)", default="function")


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    from pytest_callm.pytest_plugin.collect import ShardSelection, SuiteCollection

    if not pluginmanager.has_plugin(ShardSelection.NAME):
        pluginmanager.register(ShardSelection(), ShardSelection.NAME)  # --callm-shard's deselection
    if not pluginmanager.has_plugin(AsyncioLoopScope.NAME):
        pluginmanager.register(AsyncioLoopScope(), AsyncioLoopScope.NAME)
    if not pluginmanager.has_plugin(SuiteCollection.NAME):
        pluginmanager.register(SuiteCollection(), SuiteCollection.NAME)  # --callm-suite's paths
    group = parser.getgroup("callm", "pytest-callm: benchmark the LLM of a phone agent")
    for name, _, default, help_ in OPTIONS:
        dest = "callm_" + name.replace("-", "_")
        group.addoption(f"--callm-{name}", dest=dest, default=None, help=help_)
        parser.addini(dest, help_ + " (ini twin of --callm-" + name + ")", default=None)
    for name, help_ in FLAGS:
        dest = "callm_" + name.replace("-", "_")
        group.addoption(f"--callm-{name}", dest=dest, action="store_true", default=None, help=help_)
        parser.addini(dest, help_ + " (ini twin of --callm-" + name + ")", type="bool", default=False)
    group.addoption("--callm-model-configs", dest="callm_model_configs", action="append", default=[],
                    help="folder holding model configs NAME.toml (repeatable); searched before the bundled ones")
    parser.addini("callm_model_configs", "folders holding model configs", type="paths", default=[])
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
    base_url: str | None = None
    api_key_env: str | None = None
    model_configs: tuple[Path, ...] = ()
    serve: bool = False
    latency: bool = False
    latency_sample: int = 30
    retry_backoff_s: float = 1.0
    request_timeout_s: float = 60.0
    request_deadline_s: float = 600.0
    caller_model: str | None = None  # None: the model config's `caller`, else DEFAULT_CALLER_MODEL
    caller_base_url: str | None = None
    caller_api_key_env: str | None = None
    line: str = "default"
    line_model: str | None = None
    out: Path | None = None
    resume: Path | None = None
    rescore: Path | None = None
    keep_calls: bool = False
    shard: tuple[int, int] | None = None  # (I, N) of --callm-shard=I/N
    keep_runs: int | None = None  # --callm-keep-runs=N: older folders of callm-runs/ pruned at the end
    concurrency: int | None = None  # calls in flight per process; None: default_concurrency(workers)
    suite: bool = False  # --callm-suite: the benchmark's tasks collected (collect.SuiteCollection), its packs searched
    judge: str | None = None  # --callm-judge: a model config that reads the words (scoring/judge.py)
    judge_gate: bool = False  # --callm-judge-gate: its findings fail the words gate

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

        def number(name: str, default: float, positive: bool = False) -> float:
            raw = value(name)
            try:
                number = default if raw in (None, "") else float(raw)
            except ValueError:
                raise pytest.UsageError(f"--callm-{name} must be a number, got {raw!r}") from None
            if not math.isfinite(number) or number < 0 or (positive and number == 0):
                raise pytest.UsageError(f"--callm-{name} must be {'more than 0' if positive else 'at least 0'}, "
                                        f"got {raw}")
            return number

        def shard(raw: Any) -> tuple[int, int] | None:
            if raw in (None, ""):
                return None
            from pytest_callm.saved.merge import parse_shard

            try:
                return parse_shard(raw)
            except ValueError as e:
                raise pytest.UsageError(f"--callm-shard: {e}") from None

        attempts = integer("attempts", 5)
        k = integer("k", attempts)
        if k > attempts:
            raise pytest.UsageError(f"--callm-k={k} is larger than --callm-attempts={attempts}")
        if value("keep-calls") and value("tool-server"):  # the databases are that server's files, not ours
            raise pytest.UsageError("--callm-keep-calls keeps the call databases of the tool server a run starts; "
                                    "with --callm-tool-server they are that server's (`callm serve --data-dir DIR` "
                                    "keeps them)")
        named = [*map(Path, config.getini("callm_industries")),
                 *(Path(p).resolve() for p in config.getoption("callm_industries"))]
        for d in named:  # a folder named on purpose must exist; only the default `industries/` may be absent
            if not d.is_dir():
                raise pytest.UsageError(f"--callm-industries={d}: no such folder")
        dirs = [config.rootpath / "industries", *named]
        suite = bool(value("suite"))
        if suite:  # in a checkout this is the rootdir's `industries/` again: discover_packs takes it once
            dirs.append(benchmark_industries())
        model_configs = (*map(Path, config.getini("callm_model_configs")),
                         *(Path(p).resolve() for p in config.getoption("callm_model_configs")))
        return cls(value("model") or None, attempts, k, value("tool-server") or None,
                   [d for d in dirs if d.is_dir()], value("base-url") or None, value("api-key-env"),
                   model_configs, bool(value("serve")), bool(value("latency")), integer("latency-sample", 30),
                   number("retry-backoff", 1.0), number("request-timeout", 60.0, positive=True),
                   number("request-deadline", 600.0, positive=True),
                   value("caller-model") or None, value("caller-base-url") or None,
                   value("caller-api-key-env") or None, value("line") or "default", value("line-model") or None,
                   *(Path(value(n)).resolve() if value(n) else None for n in ("out", "resume", "rescore")),
                   keep_calls=bool(value("keep-calls")), shard=shard(value("shard")),
                   keep_runs=integer("keep-runs", None), concurrency=integer("concurrency", None), suite=suite,
                   judge=value("judge") or None, judge_gate=bool(value("judge-gate")))
