"""Which caller an RL server plays: the offline caller, or a caller model with its base URL and key.

The NeMo Gym resources server and its `app.py` both choose the caller from the same few settings; the
caller model's client is the plain httpx one (`model/plain_client.py`), so this runs inside NeMo
Gym's own venv, where our model client's openai 3 is not installed.
"""

from __future__ import annotations

from pytest_callm.model.config import ModelConfig


def caller_arguments(caller: str | None, base_url: str | None = None, api_key_env: str | None = None,
                     offline_caller: str = "script") -> list[str]:
    """The command-line arguments of `main` that choose the caller."""
    out = ["--offline-caller", offline_caller]
    if caller:
        out += ["--caller", caller]
        if base_url:
            out += ["--caller-base-url", base_url]
        if api_key_env is not None:
            out += ["--caller-api-key-env", api_key_env or "none"]
    return out


def caller_config(name: str | None, base_url: str | None, api_key_env: str | None,
                  environ: dict[str, str]) -> tuple[ModelConfig | None, str | None]:
    """The caller model's config and key from `main`'s arguments (None, None: the offline caller).
    Its client is the plain httpx one (`model/plain_client.py`): NeMo Gym's own openai is enough."""
    if not name:
        return None, None
    from pytest_callm.model.config import api_key_for, resolve

    config = resolve(name).with_overrides(base_url, api_key_env)
    try:
        return config, api_key_for(config, environ)
    except KeyError as e:
        raise SystemExit(f"--caller {name}: its API key variable ${e.args[0]} is not set "
                         "(set it, or --caller-api-key-env none for a server that needs no key)") from None
