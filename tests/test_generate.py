"""`callm generate`: training scenarios composed from each pack's sub-goals, proven, and never the test.

Each pack composes a few tasks through the command itself, and the set is then judged by the same
tools a user would run: `callm prove`, `callm split-check`, the memorisation check and the oracle
under pytest (the real tool server, which gets each task's own records when a call starts).
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_callm.authoring.compose import Redraw, Scenario
from pytest_callm.authoring.lock import find_task_files
from pytest_callm.authoring.prove import prove_run
from pytest_callm.cli import main as callm
from pytest_callm.normalize import phone as phone_digits
from pytest_callm.rl.memorisation import memorisation
from pytest_callm.rl.splits import clashes, load_tasks
from pytest_callm.task.pack import PackRegistry, default_industries

pytestmark = pytest.mark.xdist_group("generate")  # its module fixture plays runs once, on one worker

ROOT = Path(__file__).resolve().parents[1]
PACKS = ["legal", "healthcare", "customer_support"]
N = 2  # a pack's tasks, each composed, proven, split-checked and played: a few seconds of CPU a task


@pytest.fixture(scope="module")
def industries() -> list[Path]:
    return default_industries(ROOT)


def _generate(out: Path, pack: str, seed: int, n: int = N) -> Path:
    assert callm(["generate", pack, "--n", str(n), "--seed", str(seed), "--out", str(out), "--workers", "1",
                  "--eval", str(ROOT / "tasks")]) == 0
    return out / pack / f"seed-{seed}"


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("generated")
    return {pack: _generate(out, pack, seed=1) for pack in PACKS}


def _own_words(task: dict) -> str:
    """What a task says of its own people: everything but the expected state (the business's whole
    database, the seed's people included, as in every task of the pack)."""
    return json.dumps({k: v for k, v in task.items() if k != "exp_db_state"}, ensure_ascii=False)


@pytest.mark.parametrize("pack", PACKS)
def test_generated_tasks_are_marked_composed_scenarios_outside_the_locked_suite(generated, pack):
    files = find_task_files([generated[pack]])
    assert len(files) == N
    for f in files:
        t = json.loads(f.read_text())
        assert t["task_name"].startswith("gen-1-") and t["generated"]["pack"] == pack and t["generated"]["seed"] == 1
        assert "skeleton" not in t["generated"] and t["generated"]["scenario"]  # composed, never a locked task's
        assert t["traps"] and t["exp_db_state"]


@pytest.mark.parametrize("pack", PACKS)
def test_generated_tasks_are_proven_with_no_problem(generated, industries, pack):
    run = prove_run([generated[pack]], industries, workers=1)
    assert len(run.tasks) == N
    assert run.problem_count == 0, [p for t in run.tasks for p in t.problems]


@pytest.mark.parametrize("pack", PACKS)
def test_generated_tasks_clash_with_no_locked_task_and_no_memorised_locked_key_passes_them(generated, industries, pack):
    packs = PackRegistry(industries)
    training, problems = load_tasks([generated[pack]], packs)
    evaluation, _ = load_tasks([ROOT / "tasks" / pack], packs)
    assert not problems and len(training) == N
    assert clashes(training, evaluation) == []
    played = memorisation(training, evaluation, packs.loaded())
    assert len(played) == N and not [p.played_on.name for p in played if p.passed]


@pytest.mark.parametrize("pack", PACKS)
def test_no_locked_callers_name_or_phone_is_in_a_generated_task(generated, pack):
    names, phones = set(), set()
    for f in find_task_files([ROOT / "tasks" / pack]):
        data = json.loads(f.read_text())
        names.add(data["customer_name"])
        phones |= {phone_digits(str(t["value"]))[-10:] for t in data["traits"] if t["trait_name"] == "phone"}
    for f in find_task_files([generated[pack]]):
        text = _own_words(json.loads(f.read_text()))
        digits = set(re.findall(r"\d{10}", re.sub(r"[\s().-]", "", text)))
        assert not [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)], f
        assert not phones & digits, f


def test_the_oracle_passes_every_generated_task_under_pytest(generated, tmp_path):
    out = generated[PACKS[0]].parents[1]  # every pack's, in one run: <out>/<pack>/seed-1
    assert {generated[pack].parents[1] for pack in PACKS} == {out}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(out), "--rootdir", str(out), "-p", "no:cacheprovider", "-q",
         "--callm-model=oracle", "--callm-attempts=1", "--callm-industries", str(ROOT / "industries"),
         "--callm-out", str(tmp_path / "run")],
        capture_output=True, text=True, cwd=out, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{N * len(PACKS)} passed" in done.stdout


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_tasks(generated, tmp_path):
    # A task's draws are seeded with its index, not with how many tasks are asked for: the first task
    # of a seed is the same bytes whether one or N are written.
    again = _generate(tmp_path / "again", "legal", seed=1, n=1)
    other = _generate(tmp_path / "other", "legal", seed=2, n=N)
    first = {f.relative_to(generated["legal"]): f.read_bytes() for f in find_task_files([generated["legal"]])}
    written = {f.relative_to(again): f.read_bytes() for f in find_task_files([again])}
    assert len(written) == 1 and written == {name: first[name] for name in written}
    second = [json.loads(f.read_text()) for f in find_task_files([other])]
    assert len(second) == N
    assert {json.loads(b)["customer_name"] for b in first.values()}.isdisjoint(t["customer_name"] for t in second)


# --- the composing engine's own checks ---------------------------------------------------------

@pytest.fixture(scope="module")
def legal(industries):
    return PackRegistry(industries).get("legal")


def _scenario(pack) -> Scenario:
    return Scenario(pack, random.Random(1), lambda kind: {"first": "Orrin", "last": "Kilbride"}[kind])


def test_a_key_value_the_caller_never_says_is_unsolvable_and_named(legal):
    s = _scenario(legal)
    s.opening = "Hi, I'd like to talk to a lawyer."
    s.answer("question", "name or phone number", "Orrin Kilbride, 206-555-0142.")
    s.call("lookup_caller", full_name="Orrin Kilbride", phone="206-555-0142")
    s.call("transfer_to_screening")
    s.call("check_conflict", opposing_party="Tamarack Couriers")  # the caller never names the other side
    try:
        assert s.unsolvable() == ["check_conflict.opposing_party = 'Tamarack Couriers' (party): the caller never "
                                  "says it and no earlier tool returns it"]
        s.answer("question", "who the matter is against", "A company called Tamarack Couriers.")
        assert s.unsolvable() == []
    finally:
        s.close()


def test_a_tool_answer_other_than_the_draw_meant_is_redrawn(legal):
    s = _scenario(legal)
    s.call("lookup_caller", full_name="Orrin Kilbride", phone="206-555-0142")
    s.call("transfer_to_screening")
    try:
        with pytest.raises(Redraw, match="check_conflict returned status='clear', the draw meant 'conflict'"):
            s.call("check_conflict", opposing_party="Tamarack Couriers", expect={"status": "conflict"})
        s.call("check_conflict", opposing_party="Marlow Freight Lines", expect={"status": "conflict"})  # in the index
        with pytest.raises(Redraw, match="refused"):  # a refusal nobody drew
            s.call("record_intake", practice_area="employment", state="WA", incident_date="2026-05-02", summary="x")
    finally:
        s.close()


# --- the shipped training set ------------------------------------------------------------------

@pytest.mark.parametrize("pack", PACKS)
def test_the_shipped_training_tasks_are_composed_scenarios_many_of_them_distinct(pack):
    files = find_task_files([ROOT / "training" / pack])
    assert len(files) == 60
    scenarios = [json.loads(f.read_text())["generated"]["scenario"] for f in files]
    assert len(set(scenarios)) >= 40  # 60 draws: repeats are rare (docs/generate.md counts the space)


def test_the_shipped_training_set_clashes_with_no_locked_task(industries):
    packs = PackRegistry(industries)
    training, problems = load_tasks([ROOT / "training"], packs)
    evaluation, _ = load_tasks([ROOT / "tasks"], packs)
    assert not problems and len(training) == 180
    assert clashes(training, evaluation) == []
