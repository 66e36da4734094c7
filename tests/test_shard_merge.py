"""Runs split across machines: `--callm-shard=I/N` plays a share of whole tasks, `callm merge` joins the
shard runs into one run whose report.json is byte for byte that of the same run played unsplit.

The example tasks (8 tasks, 40 oracle attempts) are played unsplit and as 3 shards (one with `-n 2`);
the merge is compared with the unsplit run, resumed and rescored, and shards that do not fit together
(a gap, an overlap, other settings, an unfinished shard, a run that is not a shard) are refused.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_TASKS, REPO
from pytest_callm.cli import main as callm
from pytest_callm.saved.merge import deal, parse_shard

pytestmark = pytest.mark.xdist_group("shard_merge")  # its module fixture plays runs once, on one worker

ORACLE = "--callm-model=oracle"


def pytest_run(*args: str, ok=(0,)) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode in ok, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc


def tasks_in(run: Path) -> set[str]:
    return {a["task_id"] for a in json.loads((run / "report.json").read_text())["attempts"]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tool_server) -> Path:
    base = tmp_path_factory.mktemp("shards")
    tools = f"--callm-tool-server={tool_server.url}"  # the session's, for the example pack (conftest.example_tools)
    pytest_run(ORACLE, f"--callm-out={base / 'unsplit'}", tools)
    for i in (1, 2, 3):
        extra = ["-n", "2"] if i == 2 else []
        proc = pytest_run(ORACLE, f"--callm-shard={i}/3", f"--callm-out={base / f's{i}'}", tools, *extra)
        assert i == 2 or re.search(r"\d+ passed, \d+ deselected", proc.stdout)  # xdist's controller shows no count
    return base


def test_three_shards_merge_into_the_unsplit_run(runs, capsys):
    shards = [tasks_in(runs / f"s{i}") for i in (1, 2, 3)]
    assert all(shards) and not (shards[0] & shards[1] or shards[0] & shards[2] or shards[1] & shards[2])
    assert set().union(*shards) == tasks_in(runs / "unsplit") and len(tasks_in(runs / "unsplit")) == 8
    for i in (1, 2, 3):  # whole tasks: every attempt of a shard's task is in that shard
        attempts = json.loads((runs / f"s{i}/report.json").read_text())["attempts"]
        assert len(attempts) == 5 * len(shards[i - 1])

    out = runs / "merged"
    assert callm(["merge", *(str(runs / f"s{i}") for i in (3, 1, 2)), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "40 attempts" in said  # the figures in percent, as the run's table shows them, and where the report is
    assert re.search(r"^  scope +pass@1 +95% CI +pass\^5 +95% CI$", said, re.M), said
    assert re.search(r"^  \w+ +100\.0% +\[100\.0, 100\.0\] +100\.0% +\[100\.0, 100\.0\]$", said, re.M), said
    assert f"callm merge: report {out / 'report.json'}\n" in said and f"report page {out / 'report.html'}" in said
    assert (out / "report.json").read_bytes() == (runs / "unsplit/report.json").read_bytes()
    merged, unsplit = (json.loads((r / "manifest.json").read_text()) for r in (out, runs / "unsplit"))
    assert merged["comparable"] == unsplit["comparable"] and merged["task_files"] == unsplit["task_files"]
    assert len(list((out / "trajectories").rglob("attempt-*.json"))) == 40
    assert (out / "report.html").is_file() and not (out / ".lock").exists()

    # The merged run is a run like any other: resumed, nothing is played again; rescored, the same report.
    proc = pytest_run(ORACLE, f"--callm-resume={out}")
    assert "40 passed" in proc.stdout
    assert (out / "report.json").read_bytes() == (runs / "unsplit/report.json").read_bytes()
    pytest_run(f"--callm-rescore={out}", f"--callm-out={runs / 'rescored'}")
    assert json.loads((runs / "rescored/report.json").read_text())["summary"] == \
        json.loads((runs / "unsplit/report.json").read_text())["summary"]


def refusal(dirs: list[Path], out: Path, capsys) -> str:
    assert callm(["merge", *map(str, dirs), "--out", str(out), "--no-html"]) == 2
    assert not (out / "report.json").exists()
    return capsys.readouterr().err


def test_a_gap_an_overlap_or_another_setup_is_refused(runs, tmp_path, capsys):
    s1, s2, s3 = (runs / f"s{i}" for i in (1, 2, 3))
    assert "shard(s) 3/3 missing" in refusal([s1, s2], tmp_path / "a", capsys)
    assert "shard 1/3 given twice" in refusal([s1, s2, s3, s1], tmp_path / "b", capsys)
    assert "not a shard run" in refusal([s1, s2, runs / "unsplit"], tmp_path / "c", capsys)

    unfinished = tmp_path / "unfinished"  # shard 3 killed before its last attempt was saved in the report
    shutil.copytree(s3, unfinished)
    report = json.loads((unfinished / "report.json").read_text())
    report["attempts"] = report["attempts"][:-1]
    (unfinished / "report.json").write_text(json.dumps(report))
    assert re.search(r"has 4 of its 5 attempts .* leave a gap", refusal([s1, s2, unfinished], tmp_path / "d", capsys))

    claimed = tmp_path / "claimed"  # shard 3 also claiming an attempt of shard 1
    shutil.copytree(s3, claimed)
    report = json.loads((claimed / "report.json").read_text())
    report["attempts"].append(json.loads((s1 / "report.json").read_text())["attempts"][0])
    (claimed / "report.json").write_text(json.dumps(report))
    assert "overlap" in refusal([s1, s2, claimed], tmp_path / "e", capsys)

    other = tmp_path / "clean-line"  # shard 3 played on another phone line
    pytest_run(ORACLE, "--callm-shard=3/3", "--callm-line=clean", f"--callm-out={other}")
    assert "other settings or inputs (line.profile_sha256, line.seed, line.spec)" in \
        refusal([s1, s2, other], tmp_path / "f", capsys)

    two = tmp_path / "two"  # another split of the same tasks
    pytest_run(ORACLE, "--callm-shard=2/2", f"--callm-out={two}")
    assert "another number of shards" in refusal([s1, two], tmp_path / "g", capsys)

    nonempty = tmp_path / "nonempty"
    nonempty.mkdir()
    (nonempty / "keep.txt").write_text("mine")
    assert "not empty" in refusal([s1, s2, s3], nonempty, capsys)


def test_the_deal_is_deterministic_and_balanced_by_expected_cost():
    costs = {f"legal/C{i}": c for i, c in enumerate([9, 7, 6, 5, 5, 4, 3, 3, 2, 1])}
    shards = deal(costs, 3)
    assert shards == deal(dict(reversed(costs.items())), 3)  # the order tasks are collected in does not matter
    loads = [sum(c for k, c in costs.items() if shards[k] == s) for s in (1, 2, 3)]
    assert sorted(loads) == [15, 15, 15]
    assert set(deal(costs, 1).values()) == {1}
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "3", "a/b", "1/0"):
        with pytest.raises(ValueError):
            parse_shard(bad)


def test_a_bad_shard_is_a_usage_error(tmp_path):
    proc = pytest_run(ORACLE, "--callm-shard=4/3", f"--callm-out={tmp_path / 'run'}", ok=(4,))
    assert "--callm-shard: expected I/N with 1 <= I <= N, got '4/3'" in proc.stderr


def test_the_example_ci_workflow_plays_every_shard_and_merges_them_all():
    text = (REPO / "examples/ci/github-matrix.yml").read_text()
    shards = [int(s) for s in re.search(r"shard: \[([\d, ]+)\]", text).group(1).split(",")]
    n = len(shards)
    assert shards == list(range(1, n + 1)) and n > 1
    assert f"--callm-shard=${{{{ matrix.shard }}}}/{n}" in text
    assert "--callm-out=run-shard-${{ matrix.shard }}" in text
    merge = re.search(r"callm merge (.*) --out run\n", text).group(1).split()
    assert merge == [f"run-shard-{i}" for i in shards]
    assert "fail-fast: false" in text and "|| test $? -eq 1" in text
