"""The RL adapters' packages are optional extras (`pytest-callm[verifiers]`, `[openenv]`): only the
adapter modules in pytest_callm/rl/ import them, and nothing in the core reaches those modules, so
an install without the extras imports every other module."""

from __future__ import annotations

import subprocess
import sys

from test_package_layers import PACKAGE, import_graph

OPTIONAL = {"verifiers", "openenv", "datasets"}  # the extras' packages (datasets comes with verifiers)


def users_of_optional_packages() -> set[str]:
    """Modules that import an optional package, directly or through other package modules."""
    inside, outside = import_graph()
    users = {m for m, names in outside.items() if names & OPTIONAL}
    grew = True
    while grew:
        more = {m for m, targets in inside.items() if targets & users} - users
        users |= more
        grew = bool(more)
    return users


def test_only_adapter_modules_under_rl_reach_an_optional_package():
    users = users_of_optional_packages()
    assert "pytest_callm.rl.verifiers_env" in users  # the walk sees the adapter's import
    wrong = sorted(m for m in users if not m.startswith("pytest_callm.rl.") or m == "pytest_callm.rl")
    assert not wrong, f"core modules that would need an extra installed: {wrong}"


def test_importing_the_rl_package_and_its_environment_loads_no_optional_package():
    code = ("import sys, pytest_callm.rl, pytest_callm.rl.environment; "
            f"print(sorted(m for m in {sorted(OPTIONAL)!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=PACKAGE.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
