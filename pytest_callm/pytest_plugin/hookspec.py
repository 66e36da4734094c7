"""Hooks other plugins and conftest files implement to extend pytest-callm (registered in plugin.py)."""

from __future__ import annotations

import pytest


@pytest.hookspec(firstresult=True)
def pytest_callm_make_caller(config: pytest.Config, task, pack, attempt: int, model_name: str):
    """Return the caller of one attempt of `task` with a model under test other than the oracle.

    The result follows the `Caller` protocol of `pytest_callm.call.caller` (`async respond(agent_said)
    -> CallerTurn`); it lives for one call and runs in the pytest process's event loop. Return None to
    leave the attempt to another implementation. A run with such a model needs at least one
    implementation: until the simulated caller ships, the plugin says so before any item runs.
    """
