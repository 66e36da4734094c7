"""A run folder edited by hand, or holding what no run writes: every reader says one line, never hangs.

A FIFO where a run keeps a file made `callm report` and `--callm-rescore` wait for ever (a FIFO waits for
a writer); a field of the wrong type made report, leaderboard and compare die with a traceback. The
shapes the readers check are in pytest_callm/saved/shapes.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import EXAMPLE_TASKS, REPO

pytestmark = pytest.mark.xdist_group("hand_edited_runs")  # its module fixture plays a run once, on one worker

HANG_GUARD_S = 120  # far past any of these commands' time; reached only by a reader that waits on a FIFO


def command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), cwd=REPO, capture_output=True, text=True, timeout=HANG_GUARD_S)


def callm(*args: str) -> subprocess.CompletedProcess:
    return command(sys.executable, "-m", "pytest_callm.cli", *args)


@pytest.fixture(scope="module")
def played(tmp_path_factory, tool_server) -> Path:
    out = tmp_path_factory.mktemp("played") / "run"
    proc = command(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                   "--callm-model=oracle", f"--callm-out={out}", "-k", "C2-E1 or C2-E2",
                   f"--callm-tool-server={tool_server.url}")
    assert proc.returncode == 0, proc.stdout[-2000:]
    return out


@pytest.fixture
def run(played, tmp_path) -> Path:
    copy = tmp_path / "run"
    shutil.copytree(played, copy)
    return copy


def one_line(proc: subprocess.CompletedProcess, *needles: str) -> None:
    text = proc.stdout + proc.stderr
    assert "Traceback" not in text and "INTERNALERROR" not in text, text[-3000:]
    for needle in needles:
        assert needle in text, text[-3000:]


def fifo(path: Path) -> None:
    path.unlink(missing_ok=True)
    os.mkfifo(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_for_an_attempt_is_no_saved_attempt_to_the_page_and_the_rescore(run, tmp_path):
    fifo(run / "trajectories" / "vet_clinic" / "C2-E1" / "attempt-2.json")
    page = callm("report", str(run))
    assert page.returncode == 0 and (run / "report.html").is_file(), page.stderr
    rescored = command(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                       f"--callm-rescore={run}", f"--callm-out={tmp_path / 'rescored'}", "-k", "C2-E1")
    one_line(rescored, "holds no complete trajectory of vet_clinic/C2-E1 attempt 2")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("name", ["report.json", "manifest.json"])
def test_a_fifo_for_a_run_file_is_one_line_in_every_reader(run, tmp_path, name):
    fifo(run / name)
    for proc in (callm("report", str(run)), callm("leaderboard", str(run), "--out", str(tmp_path / "board")),
                 callm("compare", str(run), str(run))):
        assert proc.returncode == 2
        one_line(proc, f"{run / name}: cannot be read (not a regular file")
    if name == "manifest.json":
        rescored = command(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                           f"--callm-rescore={run}", f"--callm-out={tmp_path / 'rescored'}")
        assert rescored.returncode == pytest.ExitCode.USAGE_ERROR
        one_line(rescored, f"{run / name}: not a readable run manifest")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_a_shard_is_left_out_of_the_merge(tmp_path):
    shards = []
    for i in (1, 2):
        out = tmp_path / f"s{i}"
        proc = command(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                       "--callm-model=oracle", "--callm-attempts=1", f"--callm-shard={i}/2", f"--callm-out={out}")
        assert proc.returncode == 0, proc.stdout[-2000:]
        shards.append(str(out))
    os.mkfifo(tmp_path / "s1" / "trajectories" / "stray-fifo")
    merged = callm("merge", *shards, "--out", str(tmp_path / "merged"))
    assert merged.returncode == 0, merged.stderr
    assert not (tmp_path / "merged" / "trajectories" / "stray-fifo").exists()


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


WRONG_TYPES = {  # file, field as named, the edit
    "industries-a-string": ("report.json", 'summary.industries: expected an object, got "x"',
                            lambda d: d["summary"].__setitem__("industries", "x")),
    "pass-k-a-word": ("report.json", 'summary.overall.pass_k: expected a number or null, got "high"',
                      lambda d: d["summary"]["overall"].__setitem__("pass_k", "high")),
    "k-a-word": ("report.json", 'summary.k: expected an integer, got "five"',
                 lambda d: d["summary"].__setitem__("k", "five")),
    "tasks-a-list": ("report.json", "summary.tasks: expected an object, got [1]",
                     lambda d: d["summary"].__setitem__("tasks", [1])),
    "an-attempt-a-string": ("report.json", 'attempts[0]: expected an object, got "x"',
                            lambda d: d["attempts"].__setitem__(0, "x")),
    "gates-a-string": ("report.json", 'attempts[3].gates: expected an object, got "x"',
                       lambda d: d["attempts"][3].__setitem__("gates", "x")),
    "hashes-a-list": ("manifest.json", "comparable.hashes: expected an object, got []",
                      lambda d: d["comparable"].__setitem__("hashes", [])),
    "model-config-a-number": ("manifest.json", "comparable.model_config: expected an object or null, got 3",
                              lambda d: d["comparable"].__setitem__("model_config", 3)),
    "attempts-true": ("manifest.json", "comparable.attempts: expected an integer, got true",
                      lambda d: d["comparable"].__setitem__("attempts", True)),
}


@pytest.mark.parametrize("case", WRONG_TYPES, ids=list(WRONG_TYPES))
def test_a_field_of_the_wrong_type_is_one_line_naming_file_and_field(run, tmp_path, capsys, case):
    from pytest_callm.cli import main

    name, field, change = WRONG_TYPES[case]
    edit(run / name, change)
    for args in (["report", str(run)], ["leaderboard", str(run), "--out", str(tmp_path / "board")],
                 ["compare", str(run), str(run)]):
        assert main(args) == 2
        err = capsys.readouterr().err
        assert f"{run / name}: {field}" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_for_a_saved_seed_is_one_line_in_the_page_and_the_rescore(run, tmp_path):
    seed = next((run / "seeds" / "vet_clinic").glob("*.json"))
    fifo(seed)
    page = callm("report", str(run))
    assert page.returncode == 2
    one_line(page, f"callm report: {seed}: cannot be read (not a regular file")
    rescored = command(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(EXAMPLE_TASKS),
                       f"--callm-rescore={run}", f"--callm-out={tmp_path / 'rescored'}", "-k", "C2-E1")
    one_line(rescored, f"{seed}: cannot be read (not a regular file")
