"""Hooks other plugins and conftest files implement to extend pytest-callm (registered in plugin.py)."""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_callm_make_caller(config: pytest.Config, task, pack, attempt: int, model_name: str):
    """Return the caller of one attempt of `task` with a model under test other than the oracle.

    Kept as an alias of overriding the `callm_caller` fixture (the pytest way, which wins over it):
    the plugin's own `callm_caller` asks this hook first.

    The result follows the `Caller` protocol of `pytest_callm.call.caller` (`async respond(agent_said)
    -> CallerTurn`); it lives for one call and runs in the pytest process's event loop. Return None to
    leave the attempt to the simulated caller.
    """


@pytest.hookspec(firstresult=True)
def pytest_callm_release(config: pytest.Config):
    """Return the pins of the benchmark release runs here are compared with, or None.

    A dict with a `name` and any of `caller` (the caller model config's name), `line_profile_sha256`
    (the recognizer's error profile), `verifier_sha256` and `attempts` (see `pytest_callm.saved.release`).
    The repository's root conftest.py implements it for the published release.
    """
