"""`pytest_callm.rl.openenv_app`: the OpenEnv app by import path, set by CALLM_* variables, for
OpenEnv's tooling (openenv.yaml, the Dockerfile). Served here through its ASGI lifespan, as uvicorn
serves it; tests/test_wheel.py serves the installed one with uvicorn and OpenEnv's own checks."""

from __future__ import annotations

import importlib
import os

import pytest

pytest.importorskip("openenv")

from starlette.testclient import TestClient  # noqa: E402

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS  # noqa: E402


def app_module():
    """pytest_callm.rl.openenv_app, imported by the first test that needs it, not when pytest collects this
    module: it pulls in openenv's server (gradio), 3 CPU seconds that every xdist worker paid at collection."""
    from pytest_callm.rl import openenv_app

    return openenv_app


def settings(**extra: str) -> dict[str, str]:
    return {"CALLM_TASKS": str(EXAMPLE_TASKS / "C2-E1"), "CALLM_INDUSTRIES": str(EXAMPLE_PACK.parent),
            "CALLM_LINE": "clean", **extra}


def test_importing_the_module_builds_nothing():
    module = importlib.reload(app_module())
    assert module._built is None


def test_the_app_serves_the_tasks_its_variables_name():
    app = app_module().build_app(settings())
    with TestClient(app) as client:
        assert client.get("/health").json() == {"status": "healthy"}
        reset = client.post("/reset", json={"task": "vet_clinic/C2-E1", "seed": 1})
        assert reset.status_code == 200, reset.text
        assert reset.json()["observation"]["agent"] == "reception"  # the pack's entry agent
        assert reset.json()["observation"]["task"] == "vet_clinic/C2-E1"


@pytest.mark.parametrize("variable, value, says", [
    ("CALLM_MAX_SESSIONS", "many", "a whole number"),
    ("CALLM_CALLER", "gpt-5", "is not set"),
    ("CALLM_OFFLINE_CALLER", "nobody", "one of script, opening"),
])
def test_a_bad_setting_is_one_clear_error_before_anything_starts(variable, value, says):
    environ = {**settings(), variable: value}
    environ.pop("OPENAI_API_KEY", None)
    with pytest.raises(RuntimeError, match=says):
        app_module().build_app(environ)


def test_without_variables_it_serves_the_benchmark():
    assert not any(k.startswith("CALLM_") for k in os.environ)
    app = app_module().build_app({})
    with TestClient(app) as client:
        reset = client.post("/reset", json={"task": "legal/C4-H3", "seed": 1})
        assert reset.status_code == 200, reset.text
