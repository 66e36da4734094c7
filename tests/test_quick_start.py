"""The README's quick start is two commands a newcomer can paste, and CI runs exactly those."""

from __future__ import annotations

import re
import subprocess

from conftest import REPO


def quick_start_as_ci_reads_it() -> list[str]:
    """The commands `.ci/run` takes from the README, by its own awk line."""
    ci = (REPO / ".ci" / "run").read_text()
    line = next(l for l in ci.splitlines() if l.startswith("quickstart=$(awk "))
    program = re.fullmatch(r"quickstart=\$\(awk '(.*)' README\.md\)", line)[1]
    out = subprocess.run(["awk", program, "README.md"], cwd=REPO, capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_the_quick_start_is_install_then_the_oracle_run_and_ci_runs_it():
    assert quick_start_as_ci_reads_it() == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]'",
        "pytest --callm-model=oracle",
    ]
    assert 'eval "$quickstart"' in (REPO / ".ci" / "run").read_text()
