"""NeMo Gym's own code against CALLM's resources server: its config validation on the config we ship,
its simple agent and vLLM model server collecting rollouts through its rollout collection, and its
`/aggregate_metrics` call (tests/nemo_gym/drive.py, in the Python 3.12 venv that
tests/nemo_gym/make_venv.sh builds, since nemo-gym needs 3.12). The policies are the scripted
OpenAI-compatible server (tests/openai_server.py) following legal/C4-H3's answer key, and the same
with one value changed: offline, no model.

Found by an RL engineer on NeMo Gym 0.4: 0 of 4 rollouts were scored (the agent keeps only the last
answer's cookies; /verify refused the row's own `task`), /aggregate_metrics answered 400, and the
config docs/rl.md suggested failed NeMo Gym's validation.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from openai_server import AnswerKeyAgent, ScriptedServer

from conftest import REPO

VENV = Path(os.environ.get("CALLM_NEMO_GYM_VENV", REPO / ".nemo-gym-venv"))
PYTHON = VENV / "bin" / "python"
# Slow (NeMo Gym's processes take minutes to start on 2 cores): CI runs it in a step of its own.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not PYTHON.exists(), reason=f"no NeMo Gym venv at {VENV} (Python 3.12 and "
                                                             "nemo-gym 0.4): bash tests/nemo_gym/make_venv.sh")]

TASK = "legal/C4-H3"  # reception -> screening -> intake: two handoffs
TASK_PATH = REPO / "tasks" / TASK / "task.json"
INDUSTRIES = REPO / "industries"
SERVER_DIR = REPO / "examples" / "nemo_gym" / "resources_servers" / "callm"
CONFIG = SERVER_DIR / "configs" / "callm.yaml"
PACKET_BY_TEXT = {"calls": [{"set": 9, "parameters": {"channel": "text"}}]}  # the task's trap: one value changed
SEEDS, REPEATS = (1, 2), 2


def follower(**edit) -> ScriptedServer:
    # NeMo Gym's agent loop ends at a reply without a function call, so the policy never yields the
    # turn by speaking: it calls the key's tools one per request (the server hands the turn to the
    # caller after eight, as the benchmark does) and speaks once, at the end.
    return ScriptedServer(agent=AnswerKeyAgent(TASK_PATH, INDUSTRIES, max_requests_per_turn=10**6, **edit))


def test_nemo_gyms_config_validation_accepts_the_config_we_ship(tmp_path):
    # in a scratch folder: hydra writes an outputs/ folder where it runs
    done = subprocess.run([str(VENV / "bin" / "gym"), "env", "validate", "--config", str(CONFIG)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Config is valid" in done.stdout, done.stdout + done.stderr


def collect(out: Path) -> dict:
    """One rollout collection by NeMo Gym: every row of both policies, `REPEATS` times each."""
    with follower() as right, follower(edit=PACKET_BY_TEXT) as wrong:
        command = [str(PYTHON), str(REPO / "tests" / "nemo_gym" / "drive.py"), "--config", str(CONFIG),
                   "--policy", f"right={right.base_url}", "--policy", f"wrong={wrong.base_url}",
                   "--task", TASK, "--seeds", *map(str, SEEDS), "--repeats", str(REPEATS), "--out", str(out)]
        done = subprocess.run(command, cwd=out, capture_output=True, text=True, timeout=540,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    line = next((l for l in done.stdout.splitlines() if l.startswith("CALLM_NEMO_GYM_RESULT ")), None)
    assert done.returncode == 0 and line, f"exit {done.returncode}\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return json.loads(line.split(" ", 1)[1])


def test_nemo_gyms_rollout_collection_scores_every_rollout_and_aggregates_them(tmp_path):
    """One test, not several over a shared fixture: under xdist each worker would collect again."""
    collected = collect(tmp_path)
    rollouts = collected["rollouts"]
    # Every rollout is scored (the agent's later requests kept the session; /verify took the row).
    assert len(rollouts) == collected["rows"] * REPEATS == 2 * len(SEEDS) * REPEATS
    for rollout in rollouts:
        assert rollout["reward"] in (0.0, 1.0) and rollout["task"] == TASK, rollout
        assert rollout["end_reason"] == "agent_end_call", rollout  # the policy's end_call reached the call
    assert len({r["session_id"] for r in rollouts}) == len(rollouts)

    # The answer key scores 1.0; one value changed scores 0.0, with the gates that fail.
    right = [r for r in rollouts if r["agent_ref"]["name"] == "callm_agent_right"]
    wrong = [r for r in rollouts if r["agent_ref"]["name"] == "callm_agent_wrong"]
    assert [r["reward"] for r in right] == [1.0] * len(SEEDS) * REPEATS, [r["explanation"] for r in right]
    assert sorted(r["seed"] for r in right) == sorted(list(SEEDS) * REPEATS)
    assert [r["reward"] for r in wrong] == [0.0] * len(SEEDS) * REPEATS
    for r in wrong:
        assert r["reward_components"] == {"tools": 0.0, "handoff": 1.0, "database": 0.0, "words": 1.0}
        assert "send_intake_packet" in r["explanation"]

    # /aggregate_metrics answered NeMo Gym's own call (through each agent) as its contract says.
    metrics = {m["agent_ref"]["name"]: m for m in collected["aggregate_metrics"]}
    assert set(metrics) == {"callm_agent_right", "callm_agent_wrong"}
    for name, reward in (("callm_agent_right", 1.0), ("callm_agent_wrong", 0.0)):
        entry = metrics[name]
        assert entry["key_metrics"] == {"mean/reward": reward, "pass^k": reward}
        assert entry["agent_metrics"]["rollouts"] == len(SEEDS) * REPEATS
        assert [g["rollouts"] for g in entry["group_level_metrics"]] == [REPEATS] * len(SEEDS)
