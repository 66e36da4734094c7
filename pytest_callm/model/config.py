"""Model configs: what `--callm-model=NAME` means.

A name resolves to a TOML file `NAME.toml`, looked up first in the project's own folders (ini
`callm_model_configs`, option `--callm-model-configs`), then among the configs bundled in
`pytest_callm/model/configs/`. A name with no config is taken as an OpenAI model id with default settings.
`oracle` is built in and has no config.

A config says where the model is served and how to call it:

    model = "gpt-4.1"                        # the id sent as `model` (default: the config's name)
    base_url = "https://api.openai.com/v1"   # default: the OpenAI API
    api_key_env = "OPENAI_API_KEY"           # "" when the server needs no key
    calls_in_flight = 1                      # the most calls its server carries at once: the run's
                                             # default (--callm-concurrency still overrides it)
    caller = "self"                          # the caller when --callm-caller-model is not given: a
                                             # config name, or "self" (this model plays its own caller:
                                             # a demo without keys, never a CALLM result)

    [sampling]                               # the provider's recommended phone settings
    temperature = 0.0                        # each key optional: unset means the provider default
    reasoning_effort = "minimal"
    max_tokens = 1024
    extra_body = { chat_template_kwargs = { enable_thinking = false } }

    [prices]                                 # USD per million tokens, list prices
    input = 2.00                             # uncached input
    cached_input = 0.50                      # default: the input price (no cache discount)
    output = 8.00                            # reasoning included
    source = "where the prices come from"

    [quirks]                                 # see quirks.py
    first_message_from_user = false
    tools_in_system_prompt = false
    tool_calls_in_text = false
    resend_rejected_tool_calls = 3           # 0..3 (the paper's 3 unless lowered)
    system_prompt_suffix = ""                # e.g. "/no_think": a model's switch in its system prompt

    [mode]                                   # how replies come back (client.py has the details)
    stream = true                            # false: an endpoint that does not stream; the time to
                                             # first token is then the whole round trip
    microthinking = false                    # true: the model writes one short sentence of reasoning,
                                             # marked <think>...</think>, before every reply; it is
                                             # kept as reasoning, never spoken, and the time to first
                                             # token runs to the first spoken token after it

    [serve]                                  # for --callm-serve
    command = ["vllm", "serve", "{model}", "--port", "{port}"]
    ready_timeout_s = 900

Unknown keys are errors, so a typo cannot silently fall back to a default.
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from pytest_callm.model import redact

ORACLE = "oracle"
SELF = "self"  # as a config's `caller`: the model under test plays the caller too
POLICY = "policy"  # the model is driven from outside (an RL trainer): the harness asks nothing of it
OPENAI_BASE_URL = "https://api.openai.com/v1"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
MAX_TOOL_CALL_RESENDS = 3
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")


class ModelConfigError(Exception):
    """A config file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class Prices:
    """List prices in USD per million tokens."""

    input: float
    output: float
    cached_input: float | None = None  # None: cached tokens cost the input price
    source: str = ""

    def cost(self, input_tokens: int, cached_input_tokens: int, output_tokens: int) -> float:
        cached = self.input if self.cached_input is None else self.cached_input
        return (input_tokens * self.input + cached_input_tokens * cached + output_tokens * self.output) / 1e6


@dataclass(frozen=True)
class Sampling:
    temperature: float | None = None
    reasoning_effort: str | None = None
    max_tokens: int | None = None
    extra_body: dict[str, Any] = field(default_factory=dict)

    def request_fields(self) -> dict[str, Any]:
        """The Chat Completions fields these settings send; one left unset is not sent."""
        fields = {"temperature": self.temperature, "reasoning_effort": self.reasoning_effort,
                  "max_completion_tokens": self.max_tokens}
        return {k: v for k, v in fields.items() if v is not None}


@dataclass(frozen=True)
class Quirks:
    """Per-provider workarounds, each off by default (quirks.py has the details)."""

    first_message_from_user: bool = False
    tools_in_system_prompt: bool = False
    tool_calls_in_text: bool = False
    resend_rejected_tool_calls: int = 3  # the paper's rule for every model (MAX_TOOL_CALL_RESENDS)
    system_prompt_suffix: str = ""

    @property
    def lifts_calls_from_text(self) -> bool:
        # A model that reads its tools in the prompt can only answer with calls in its text.
        return self.tool_calls_in_text or self.tools_in_system_prompt


@dataclass(frozen=True)
class Mode:
    """How the model answers (both paper, "Models under test" and "Metrics")."""

    stream: bool = True  # False: one JSON body per request; TTFT is the full round trip
    microthinking: bool = False  # one marked sentence of reasoning before every reply, never spoken


@dataclass(frozen=True)
class ServeCommand:
    """A command that serves the model on a local port (`{model}`, `{port}`, `{python}` filled in)."""

    command: tuple[str, ...]
    ready_timeout_s: float = 900.0

    def argv(self, model: str, port: int, python: str) -> list[str]:
        values = {"model": model, "port": str(port), "python": python}
        try:
            return [part.format(**values) for part in self.command]
        except (KeyError, IndexError, ValueError) as e:
            raise ModelConfigError(f"[serve] command: unknown placeholder {e} (use {{model}}, {{port}}, "
                                   "{{python}})") from None


@dataclass(frozen=True)
class ModelConfig:
    name: str
    model: str  # the model id sent to the server
    base_url: str = OPENAI_BASE_URL
    api_key_env: str | None = OPENAI_KEY_ENV  # None: the server needs no key
    sampling: Sampling = Sampling()
    prices: Prices | None = None
    quirks: Quirks = Quirks()
    serve: ServeCommand | None = None
    mode: Mode = Mode()
    caller: str | None = None  # the caller model it suggests (SELF: itself), unless the run names one
    calls_in_flight: int | None = None  # a server that answers one request at a time (llama.cpp) says 1
    source: str = "default"  # the file it came from, or "default" for a bare model id

    def with_overrides(self, base_url: str | None = None, api_key_env: str | None = None) -> "ModelConfig":
        """`--callm-base-url` and `--callm-api-key-env` (where `none` or "" means no key)."""
        config = self
        if base_url:
            config = replace(config, base_url=base_url)
        if api_key_env is not None:
            config = replace(config, api_key_env=None if api_key_env.lower() in ("", "none") else api_key_env)
        return config


def bundled_dir() -> Path:
    return Path(str(resources.files("pytest_callm.model") / "configs"))


def _table(data: dict[str, Any], key: str, where: str, allowed: set[str]) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ModelConfigError(f"{where}: [{key}] must be a table")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ModelConfigError(f"{where}: unknown key(s) in [{key}]: {', '.join(unknown)} "
                               f"(known: {', '.join(sorted(allowed))})")
    return value


def _typed(value: Any, kinds: tuple[type, ...], where: str, key: str) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) and bool not in kinds:
        raise ModelConfigError(f"{where}: {key} must be {kinds[0].__name__}, got {value!r}")
    if not isinstance(value, kinds):
        raise ModelConfigError(f"{where}: {key} must be {kinds[0].__name__}, got {value!r}")
    return value


def parse_config(name: str, data: dict[str, Any], where: str) -> ModelConfig:
    """Build a config from parsed TOML; `where` names the source in errors."""
    top = {"model", "base_url", "api_key_env", "description", "caller", "calls_in_flight", "sampling", "prices",
           "quirks", "mode", "serve"}
    unknown = sorted(set(data) - top)
    if unknown:
        raise ModelConfigError(f"{where}: unknown key(s): {', '.join(unknown)} (known: {', '.join(sorted(top))})")
    number = (float, int)
    s = _table(data, "sampling", where, {"temperature", "reasoning_effort", "max_tokens", "extra_body"})
    effort = _typed(s.get("reasoning_effort"), (str,), where, "sampling.reasoning_effort")
    if effort is not None and effort not in REASONING_EFFORTS:
        raise ModelConfigError(f"{where}: sampling.reasoning_effort must be one of {', '.join(REASONING_EFFORTS)}")
    sampling = Sampling(_typed(s.get("temperature"), number, where, "sampling.temperature"), effort,
                        _typed(s.get("max_tokens"), (int,), where, "sampling.max_tokens"),
                        _typed(s.get("extra_body", {}), (dict,), where, "sampling.extra_body"))

    p = _table(data, "prices", where, {"input", "cached_input", "output", "source"})
    prices = None
    if p:
        if "input" not in p or "output" not in p:
            raise ModelConfigError(f"{where}: [prices] needs both input and output (USD per million tokens)")
        prices = Prices(float(_typed(p["input"], number, where, "prices.input")),
                        float(_typed(p["output"], number, where, "prices.output")),
                        _typed(p.get("cached_input"), number, where, "prices.cached_input"),
                        _typed(p.get("source", ""), (str,), where, "prices.source"))

    q = _table(data, "quirks", where, {"first_message_from_user", "tools_in_system_prompt", "tool_calls_in_text",
                                       "resend_rejected_tool_calls", "system_prompt_suffix"})
    resends = _typed(q.get("resend_rejected_tool_calls", MAX_TOOL_CALL_RESENDS), (int,), where,
                     "quirks.resend_rejected_tool_calls")
    if not 0 <= resends <= MAX_TOOL_CALL_RESENDS:
        raise ModelConfigError(f"{where}: quirks.resend_rejected_tool_calls must be 0 to {MAX_TOOL_CALL_RESENDS}")
    suffix = _typed(q.get("system_prompt_suffix", ""), (str,), where, "quirks.system_prompt_suffix")
    quirks = Quirks(*(bool(_typed(q.get(k, False), (bool,), where, f"quirks.{k}"))
                      for k in ("first_message_from_user", "tools_in_system_prompt", "tool_calls_in_text")),
                    resends, suffix)

    m = _table(data, "mode", where, {"stream", "microthinking"})
    mode = Mode(stream=bool(_typed(m.get("stream", True), (bool,), where, "mode.stream")),
                microthinking=bool(_typed(m.get("microthinking", False), (bool,), where, "mode.microthinking")))

    v = _table(data, "serve", where, {"command", "ready_timeout_s"})
    serve = None
    if v:
        command = v.get("command")
        if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
            raise ModelConfigError(f"{where}: [serve] command must be a non-empty list of strings")
        serve = ServeCommand(tuple(command), float(_typed(v.get("ready_timeout_s", 900), number, where,
                                                          "serve.ready_timeout_s")))

    in_flight = _typed(data.get("calls_in_flight"), (int,), where, "calls_in_flight")
    if in_flight is not None and in_flight < 1:
        raise ModelConfigError(f"{where}: calls_in_flight must be at least 1")
    key_env = _typed(data.get("api_key_env", OPENAI_KEY_ENV), (str,), where, "api_key_env")
    return ModelConfig(name=name, model=_typed(data.get("model", name), (str,), where, "model"),
                       base_url=_typed(data.get("base_url", OPENAI_BASE_URL), (str,), where, "base_url"),
                       api_key_env=key_env or None, sampling=sampling, prices=prices, quirks=quirks,
                       serve=serve, mode=mode, caller=_typed(data.get("caller"), (str,), where, "caller") or None,
                       calls_in_flight=in_flight, source=where)


def load_config(path: Path) -> ModelConfig:
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ModelConfigError(f"{path}: invalid TOML: {e}") from None
    return parse_config(path.stem, data, str(path))


def config_path(name: str, folders: list[Path]) -> Path | None:
    if name.endswith(".toml") and Path(name).is_file():
        return Path(name)
    for folder in [*folders, bundled_dir()]:
        candidate = Path(folder) / f"{name}.toml"
        if candidate.is_file():
            return candidate
    return None


def resolve(name: str, folders: list[Path] = ()) -> ModelConfig:
    """The config of `name`; an unknown name is an OpenAI model id with defaults."""
    if name == ORACLE:
        raise ValueError("the oracle has no model config")
    path = config_path(name, list(folders))
    return load_config(path) if path else ModelConfig(name=name, model=name)


def bundled_names() -> list[str]:
    return sorted(p.stem for p in bundled_dir().glob("*.toml"))


def api_key_for(config: ModelConfig, environ: dict[str, str]) -> str | None:
    """The key a config names, or None when it needs none. Raises KeyError naming a missing variable."""
    if config.api_key_env is None:
        return None
    key = environ.get(config.api_key_env, "").strip()
    if not key:
        raise KeyError(config.api_key_env)
    redact.remember(key, config.api_key_env)  # from here on, no output of the run shows it
    return key


@dataclass(frozen=True)
class RetryPolicy:
    tries: int = 5  # per request, the first one included
    backoff_s: float = 1.0  # the wait before the second try; it doubles on each further try
    max_backoff_s: float = 30.0  # also caps a server's Retry-After
    timeout_s: float = 60.0  # to connect, and between two streamed chunks
    # The whole request, first byte to last: a stream kept alive with SSE comments, or one that never
    # stops sending tokens, passes every gap timeout and would hold the call forever.
    deadline_s: float = 600.0

    def wait_s(self, failed_tries: int, retry_after: float | None = None) -> float:
        if retry_after is not None:
            return min(retry_after, self.max_backoff_s)
        base = min(self.backoff_s * 2 ** (failed_tries - 1), self.max_backoff_s)
        return base * (0.75 + 0.25 * random.random())
