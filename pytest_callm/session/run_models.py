"""The models a run talks to: the model under test, the caller's and the line's; their configs, keys
and, with --callm-serve, the servers started for them.

Resolved from the run's settings once per process, with no pytest: the pytest layer turns a
`RunUsageError` into its usage error (one line, no traceback), a script may show it as it likes.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from pytest_callm.model.config import (ORACLE, SELF, ModelConfig, ModelConfigError, RetryPolicy, api_key_for,
                                       resolve)
from pytest_callm.model.serve import ModelServer, ServeError
from pytest_callm.saved.rundir import OFFLINE_CALLER
from pytest_callm.toolserver.client import ToolServerError, check_tool_server

# The paper's caller is a fixed, stronger and slower model that is never ranked. GPT-5 at its default
# (medium) reasoning effort is strong, and takes seconds to its first token: outside the conversational
# category, so never a model under test. One fixed caller keeps rows comparable; docs/caller-and-line.md says why.
DEFAULT_CALLER_MODEL = "gpt-5"


class RunUsageError(Exception):
    """The run cannot start as asked (an option, a key, a folder); the message says which and why."""


class RunModels:
    """`settings`: the run's settings (pytest_plugin.settings.Settings); `rescoring`: nothing will call
    a model; `served`/`served_caller`: base URLs of the servers the controller started (--callm-serve);
    `custom_caller()`: who plugs in a caller of their own, if anyone (then no caller model runs)."""

    def __init__(self, settings: Any, *, rescoring: bool, custom_caller: Callable[[], str | None],
                 served: str | None = None, served_caller: str | None = None):
        self.settings = settings
        self.custom_caller = custom_caller
        self.model_config: ModelConfig | None = None  # None for the oracle, and when rescoring
        if settings.model and settings.model != ORACLE and not rescoring:
            try:
                self.model_config = resolve(settings.model, list(settings.model_configs)).with_overrides(
                    settings.base_url, settings.api_key_env)
            except ModelConfigError as e:
                raise RunUsageError(f"--callm-model={settings.model}: {e}") from None
            if served:
                self.model_config = self.model_config.with_overrides(base_url=served)
        self.caller_config: ModelConfig | None = None
        self.line_config: ModelConfig | None = None
        self.same_model_warning: str | None = None
        self.caller_is_self = False  # the model's config names itself as the caller (`caller = "self"`)
        if self.model_config is not None:
            self.caller_config = self._caller_config()
            if served_caller and self.caller_is_self:
                self.caller_config = self.caller_config.with_overrides(base_url=served_caller)
            simulated = custom_caller() is None
            if simulated and (self.caller_is_self or (self.caller_config.model, self.caller_config.base_url) == (
                    self.model_config.model, self.model_config.base_url)):
                self.same_model_warning = (
                    f"THE CALLER IS THE MODEL UNDER TEST ({self.model_config.model}): a model playing both sides "
                    "of the call is not a CALLM result; pick another --callm-caller-model")
            if settings.line_model:
                self.line_config = self._resolve("line-model", settings.line_model)
        self.judge_config = self._resolve("judge", settings.judge) if settings.judge else None
        if settings.judge_gate and self.judge_config is None:
            raise RunUsageError("--callm-judge-gate needs --callm-judge=MODEL: the judge whose findings would fail the gate")
        self.server: ModelServer | None = None
        self.caller_server: ModelServer | None = None  # --callm-serve with a model that plays its own caller
        self._access_checked = False

    def _caller_config(self) -> ModelConfig:
        """The caller model: --callm-caller-model, else the one the model's config names (`self`: the
        model under test; with --callm-serve, on a server of its own), else the paper's fixed caller."""
        name = self.settings.caller_model or self.model_config.caller or DEFAULT_CALLER_MODEL
        self.caller_is_self = name == SELF
        if name == SELF:
            return self.model_config.with_overrides(self.settings.caller_base_url, self.settings.caller_api_key_env)
        return self._resolve("caller-model", name).with_overrides(self.settings.caller_base_url,
                                                                  self.settings.caller_api_key_env)

    def _resolve(self, option: str, name: str) -> ModelConfig:
        try:
            return resolve(name, list(self.settings.model_configs))
        except ModelConfigError as e:
            raise RunUsageError(f"--callm-{option}={name}: {e}") from None

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
                raise RunUsageError(f"--callm-tool-server: {e}") from None
        if self.model_config is not None:
            self.api_key()
            if self.custom_caller() is None:  # the simulated caller runs
                self.key_of(self.caller_config, "caller-model", "caller-api-key-env")
            if self.line_config is not None:
                self.key_of(self.line_config, "line-model", None)
        if self.judge_config is not None:
            self.key_of(self.judge_config, "judge", None)
        self._access_checked = True

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(backoff_s=self.settings.retry_backoff_s, timeout_s=self.settings.request_timeout_s,
                           deadline_s=self.settings.request_deadline_s)

    def api_key(self) -> str | None:
        return self.key_of(self.model_config, "model", "api-key-env")

    def key_of(self, config: ModelConfig, option: str, key_option: str | None) -> str | None:
        try:
            return api_key_for(config, os.environ)
        except KeyError as e:
            how = f", or name another variable with --callm-{key_option}" if key_option else ""
            raise RunUsageError(
                f"--callm-{option}={config.name} reads its API key from ${e.args[0]}, which is not set. "
                f"Set it{how} (`none` for a server without keys).") from None

    def serve(self) -> None:
        """--callm-serve, on the controller before any worker starts: one served model for the whole run."""
        if self.model_config is None or self.model_config.serve is None:
            where = self.model_config.source if self.model_config else "the oracle"
            raise RunUsageError(f"--callm-serve: model {self.settings.model} ({where}) names no [serve] command")
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
            raise RunUsageError(str(e)) from None

    def stop_servers(self) -> None:
        for server in (self.server, self.caller_server):
            if server is not None:
                server.stop()
        self.server = self.caller_server = None

    def runtime_options(self) -> dict[str, Any]:
        """The model, caller and line arguments of a `Runtime` that plays this run's calls."""
        real = self.model_config is not None
        caller_key = (self.key_of(self.caller_config, "caller-model", "caller-api-key-env")
                      if real and self.custom_caller() is None else None)
        return dict(model_config=self.model_config, api_key=self.api_key() if real else None,
                    retry=self.retry_policy() if real else None,
                    caller_config=self.caller_config if real else None, caller_api_key=caller_key,
                    line_config=self.line_config,
                    line_api_key=self.key_of(self.line_config, "line-model", None) if self.line_config else None)

    def judge(self):
        """The --callm-judge reader of an attempt's words (a function of pack and trajectory), or None."""
        if self.judge_config is None:
            return None
        from pytest_callm.scoring.judge import judge_reader

        return judge_reader(self.judge_config, self.key_of(self.judge_config, "judge", None), self.retry_policy())

    def caller_name(self) -> str:
        """Who played the caller: the offline caller (the oracle), none (a rescore), a plugin's caller,
        or the caller model."""
        if self.settings.model == ORACLE:
            return OFFLINE_CALLER
        if self.model_config is None:
            return "none"
        custom = self.custom_caller()
        if custom is not None:
            return custom
        return self.caller_config.name
