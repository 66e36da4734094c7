"""The optional judge (issue 36): a model reads the words against the speech rules, through our client.

No model on this machine is a real judge: the judge here is a scripted stand-in on the local
OpenAI-compatible server that flags sentences by cue phrases. What is tested is the plumbing a real
judge goes through (the request, the JSON it answers, the findings beside the verdict, the gate
switch, the calibration figures), never a judge's quality.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent_audit import Auditor, Case
from openai_server import ScriptedServer
from pytest_callm.model.client import OpenAIChatModel
from pytest_callm.model.config import ModelConfig
from pytest_callm.scoring.judge import Judge, apply

pytestmark = pytest.mark.xdist_group("words")

REPO = Path(__file__).resolve().parent.parent
CUES = {"do well in court": "no-legal-advice", "strong case": "no-legal-advice", "plenty of time": "deadline-as-returned"}


class CueJudge:
    """A stand-in judge: flags every numbered item, or the one sentence asked about, that holds a cue."""

    def step(self, body: dict) -> dict:
        system, said = body["messages"][0]["content"], body["messages"][-1]["content"]
        if '{"breaks": true}' in system:  # calibration: one sentence, one rule
            rule = re.search(r"The house rule: ([a-z0-9-]+):", system).group(1)
            hit = any(c in said.lower() and r == rule for c, r in CUES.items())
            return {"text": json.dumps({"breaks": hit})}
        findings = []
        for line in said.splitlines():
            m = re.match(r"\[(\d+)\] [^:]+: (.*)", line)
            for cue, rule in CUES.items():
                if m and cue in m.group(2).lower():
                    findings.append({"rule": rule, "item": int(m.group(1)), "said": m.group(2)})
        return {"text": json.dumps({"findings": findings})}


@pytest.fixture(scope="module")
def judge_server():
    with ScriptedServer(agent=CueJudge()) as server:
        yield server


def _read(server, pack, trajectory):
    import asyncio

    config = ModelConfig(name="cue-judge", model="scripted", base_url=server.base_url, api_key_env=None)

    async def go():
        model = OpenAIChatModel(config, None)
        try:
            return await Judge(model).read(pack, trajectory)
        finally:
            await model.aclose()
    return asyncio.run(go())


def test_the_judges_findings_stand_beside_the_verdict_and_fail_it_only_when_asked(judge_server):
    auditor = Auditor()
    try:
        case = Case("legal/C4-H3", "tells the caller she'd do well in court", "fail", "advice no class reads",
                    agent_says=((6, "Honestly, I think you'd do well in court."),))
        verdict = auditor.verdict(case)
        traj = auditor.last_trajectory
    finally:
        auditor.close()
    assert verdict.passed, "the deterministic words gate does not read this sentence (the judge is for the rest)"
    from pytest_callm.task.pack import PackRegistry

    pack = PackRegistry([REPO / "industries"]).get("legal")
    findings = _read(judge_server, pack, traj)
    assert [(f.rule, f.where.split(",")[0]) for f in findings] == [("no-legal-advice", "speech")]
    apply(verdict, findings, gate=False)
    assert verdict.passed and verdict.words.details["judge"][0]["rule"] == "no-legal-advice"
    apply(verdict, findings, gate=True)
    assert not verdict.passed and any(p.startswith("judge:") for p in verdict.words.problems)


def test_judge_check_prints_agreement_per_class(judge_server, tmp_path):
    (tmp_path / "cue-judge.toml").write_text(f'model = "scripted"\nbase_url = "{judge_server.base_url}"\n'
                                             'api_key_env = ""\n')
    done = subprocess.run([sys.executable, "-m", "pytest_callm.cli", "judge-check", "cue-judge", "--model-configs",
                           str(tmp_path), "--industry", "legal"], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = {line.split()[1]: line for line in done.stdout.splitlines() if line.startswith("  legal")}
    assert "precision" in rows["no-legal-advice"] and "kappa" in rows["no-legal-advice"]
    # The cue judge finds the breaking sentences that hold its cue, and none of the keeping ones.
    from pytest_callm.task.pack import PackRegistry

    advice = next(c for c in PackRegistry([REPO / "industries"]).get("legal").words.classes if c.rule == "no-legal-advice")
    found = sum("strong case" in s.lower() for s in advice.breaks)
    assert 0 < found < len(advice.breaks) and not any("strong case" in s.lower() for s in advice.keeps)
    assert f"recall {found / len(advice.breaks):.2f}" in rows["no-legal-advice"], done.stdout
    assert "precision 1.00" in rows["no-legal-advice"]
    assert "precision n/a" in rows["never-decline"]  # it never says a sentence breaks that rule
