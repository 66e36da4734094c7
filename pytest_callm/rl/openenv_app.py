"""The OpenEnv server as an ASGI app for OpenEnv's tooling: `uvicorn pytest_callm.rl.openenv_app:app`.

`openenv.yaml` (examples/openenv/) names `app` here, and the Dockerfile beside it serves it. The
environment is set by variables, since OpenEnv's runners start an app by its import path alone:

    CALLM_TASKS         task files or folders, separated by os.pathsep (default: the benchmark's 180)
    CALLM_INDUSTRIES    pack folders, separated by os.pathsep (default: the benchmark's packs)
    CALLM_CALLER        the caller's model config, as --callm-caller-model takes it; its key from its
                        `api_key_env` (default: the offline caller)
    CALLM_OFFLINE_CALLER  the caller without a model: script (default: answers from the task's
                        script) or opening (its opening line, then nothing: a smoke test)
    CALLM_LINE          the phone line: default, clean, or a profile file (default: default)
    CALLM_MAX_SESSIONS  WebSocket sessions (episodes) at once (default 64)

`app` is built on first access, not at import: an import starts no tool server. The environment
closes when the app's lifespan ends. `python -m pytest_callm.rl.openenv_app --port 8000` serves it.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

from pytest_callm.call.script_caller import OFFLINE_CALLERS
from pytest_callm.model.config import api_key_for, resolve
from pytest_callm.rl.environment import CallEnvironment
from pytest_callm.rl.openenv_env import make_app

VARIABLES = ("CALLM_TASKS", "CALLM_INDUSTRIES", "CALLM_CALLER", "CALLM_OFFLINE_CALLER", "CALLM_LINE",
             "CALLM_MAX_SESSIONS")


def _paths(value: str | None) -> list[Path] | None:
    return [Path(p) for p in value.split(os.pathsep) if p] if value else None


def build_app(environ: dict[str, str] | None = None):
    """The OpenEnv app over a `CallEnvironment` made from `environ` (default os.environ; see the module doc)."""
    environ = dict(os.environ if environ is None else environ)
    caller = resolve(environ["CALLM_CALLER"]) if environ.get("CALLM_CALLER") else None
    caller_api_key = None
    if caller is not None:
        try:
            caller_api_key = api_key_for(caller, environ)
        except KeyError as e:
            raise RuntimeError(f"CALLM_CALLER={caller.name}: its API key variable ${e.args[0]} is not set") from None
    offline_caller = environ.get("CALLM_OFFLINE_CALLER") or "script"
    if offline_caller not in OFFLINE_CALLERS:
        raise RuntimeError(f"CALLM_OFFLINE_CALLER={offline_caller!r}: one of {', '.join(OFFLINE_CALLERS)}")
    try:
        max_sessions = int(environ.get("CALLM_MAX_SESSIONS") or 64)
    except ValueError:
        raise RuntimeError(f"CALLM_MAX_SESSIONS={environ['CALLM_MAX_SESSIONS']!r}: a whole number") from None
    env = CallEnvironment(_paths(environ.get("CALLM_TASKS")), industries=_paths(environ.get("CALLM_INDUSTRIES")),
                          caller=caller, caller_api_key=caller_api_key, line=environ.get("CALLM_LINE") or "default",
                          offline_caller=offline_caller)
    try:
        built = make_app(env, max_sessions=max_sessions)
    except BaseException:
        env.close()
        raise
    served = built.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(application) -> Any:
        try:
            async with served(application) as state:
                yield state
        finally:
            env.close()

    built.router.lifespan_context = lifespan
    return built


_built = None


def __getattr__(name: str) -> Any:  # `app`, made on first access (PEP 562)
    global _built
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _built is None:
        _built = build_app()
    return _built


def main(argv: list[str] | None = None) -> None:
    import argparse

    import uvicorn

    from pytest_callm.rl.environment import exposure_warning

    parser = argparse.ArgumentParser(description="CALLM's OpenEnv server (settings: " + ", ".join(VARIABLES) + ")")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    warning = exposure_warning(args.host, args.port, "OpenEnv server")
    if warning:
        print(warning, flush=True)
    uvicorn.run(build_app(), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
