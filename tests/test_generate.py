"""`callm generate`: training tasks with fresh people and facts, proven, and never a leak of the test.

Each pack generates one task per category (six), through the command itself, and the set is then
judged by the same tools a user would run: `callm prove`, `callm split-check` and the oracle under
pytest (the real tool server, which gets each task's own records when a call starts).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_callm.authoring.generate import Seed, Spec
from pytest_callm.authoring.lock import find_task_files
from pytest_callm.authoring.prove import prove_run
from pytest_callm.cli import main as callm
from pytest_callm.normalize import phone as phone_digits
from pytest_callm.rl.splits import clashes, load_tasks
from pytest_callm.task.pack import PackRegistry, default_industries

pytestmark = pytest.mark.xdist_group("generate")  # its module fixture plays runs once, on one worker

ROOT = Path(__file__).resolve().parents[1]
PACKS = ["legal", "healthcare", "customer_support"]
N = 6  # one per category


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


def _people(pack: str, packs: PackRegistry) -> tuple[set[str], set[str], set[str]]:
    """The locked suite's people: names, phone digits and dates of birth (tasks and seed records)."""
    names, phones, births = set(), set(), set()
    for f in find_task_files([ROOT / "tasks" / pack]):
        data = json.loads(f.read_text())
        names.add(data["customer_name"])
        for trait in data["traits"]:
            value = str(trait["value"])
            if trait["trait_name"] == "full_name":
                names.add(value)
            elif trait["trait_name"] == "phone":
                phones.add(phone_digits(value)[-10:])
            elif trait["trait_name"] == "date_of_birth":
                births.add(value)
    p = packs.get(pack)
    seed = Seed.load(p)
    for table, kinds in Spec.load(p).records.items():
        for row in seed.rows(table):
            for column, kind in kinds.items():
                value = row.get(column)
                if not value:
                    continue
                {"person": names, "date": births}.get(kind, set()).add(value)
                if kind == "phone":
                    phones.add(phone_digits(value)[-10:])
    return names, phones, births


def _own_words(task: dict) -> str:
    """What a task says of its own people: everything but the expected states (the business's whole
    database, the seed's people included, as in every task of the pack)."""
    task = {k: v for k, v in task.items() if k != "exp_db_state"}
    for route in task.get("routes", []):
        route.pop("exp_db_state", None)
    return json.dumps(task, ensure_ascii=False)


@pytest.mark.parametrize("pack", PACKS)
def test_generates_one_task_per_category_each_marked_and_outside_the_locked_suite(generated, pack):
    files = find_task_files([generated[pack]])
    assert len(files) == N
    tasks = [json.loads(f.read_text()) for f in files]
    assert sorted(t["metadata"]["category_slug"] for t in tasks) == sorted(["C1", "C2", "C3", "C4", "C5", "R"])
    for t in tasks:
        assert t["task_name"].startswith("gen-1-") and t["generated"]["pack"] == pack
        assert t["generated"]["seed"] == 1 and (ROOT / "tasks" / pack / t["generated"]["skeleton"]).is_dir()


@pytest.mark.parametrize("pack", PACKS)
def test_generated_tasks_are_proven_with_no_problem(generated, industries, pack):
    run = prove_run([generated[pack]], industries, workers=1)
    assert len(run.tasks) == N
    assert run.problem_count == 0, [p for t in run.tasks for p in t.problems]
    # The pack's own adversaries ran on them: every rule scored by a record met tasks here.
    assert sum(t.as_required for t in run.rules.get(pack, {}).values()) > 0


@pytest.mark.parametrize("pack", PACKS)
def test_generated_tasks_share_no_id_or_answer_key_with_the_locked_suite(generated, industries, pack):
    packs = PackRegistry(industries)
    training, problems = load_tasks([generated[pack]], packs)
    evaluation, _ = load_tasks([ROOT / "tasks" / pack], packs)
    assert not problems and len(training) == N
    assert clashes(training, evaluation) == []


@pytest.mark.parametrize("pack", PACKS)
def test_no_locked_persons_name_phone_or_date_of_birth_is_in_a_generated_task(generated, industries, pack):
    names, phones, births = _people(pack, PackRegistry(industries))
    for f in find_task_files([generated[pack]]):
        text = _own_words(json.loads(f.read_text()))
        digits = set(re.findall(r"\d{10}", re.sub(r"[\s().-]", "", text)))
        assert not [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)], f
        assert not phones & digits, f
        assert not [b for b in births if b in text], f


@pytest.mark.parametrize("pack", PACKS)
def test_the_oracle_passes_every_generated_task_under_pytest(generated, pack, tmp_path):
    out = generated[pack]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(out), "--rootdir", str(out), "-p", "no:cacheprovider", "-q",
         "--callm-model=oracle", "--callm-attempts=1", "--callm-industries", str(ROOT / "industries"),
         "--callm-out", str(tmp_path / "run")],
        capture_output=True, text=True, cwd=out, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{N} passed" in done.stdout


def test_the_same_seed_writes_the_same_bytes_and_another_seed_other_tasks(generated, tmp_path):
    again = _generate(tmp_path / "again", "legal", seed=1)
    other = _generate(tmp_path / "other", "legal", seed=2, n=2)  # two tasks show another draw as well as six
    first = {f.relative_to(generated["legal"]): f.read_bytes() for f in find_task_files([generated["legal"]])}
    assert first == {f.relative_to(again): f.read_bytes() for f in find_task_files([again])}
    second = [json.loads(f.read_text()) for f in find_task_files([other])]
    assert len(second) == 2
    first_names = {json.loads(b)["customer_name"] for b in first.values()}
    assert first_names.isdisjoint(t["customer_name"] for t in second)


def _locked_callers_facts(pack: str, packs: PackRegistry) -> dict[str, str]:
    """What each locked task says of its caller's people that the business does not hold (its seed
    database and its agents' prompts): surnames, spelled out too, phone numbers, addresses. -> task id."""
    from pytest_callm.authoring.generate import EMAIL_IN_TEXT, PHONE_IN_TEXT

    p = packs.get(pack)
    business = "\n".join([Seed.load(p).text, *(a.prompt for a in p.agents.values())])
    facts: dict[str, str] = {}
    for f in find_task_files([ROOT / "tasks" / pack]):
        data = json.loads(f.read_text())
        said = _own_words(data)
        surname = data["customer_name"].split()[-1]
        if surname.lower() not in business.lower():
            facts[surname] = facts[" ".join(surname.upper())] = f.parent.name
        for found in [*PHONE_IN_TEXT.findall(said), *EMAIL_IN_TEXT.findall(said)]:
            if found.lower() not in business.lower() and phone_digits(found)[-10:] not in re.sub(r"\D", "", business):
                facts[found] = f.parent.name
    return facts


@pytest.mark.parametrize("pack", PACKS)
def test_the_shipped_training_tasks_say_nothing_a_locked_task_says_of_its_caller(industries, pack):
    """A generated script once still spelled the locked caller's surname ("S O L B E R G") for a new
    caller, kept a locked caller's work line, or an address with the old surname in it."""
    facts = _locked_callers_facts(pack, PackRegistry(industries))
    assert len(facts) > 10
    files = find_task_files([ROOT / "training" / pack])
    assert len(files) == 60
    for f in files:
        said = _own_words(json.loads(f.read_text()))
        leaked = [(fact, where) for fact, where in facts.items()
                  if re.search(rf"(?<![\w@.-]){re.escape(fact)}(?![\w-])", said, re.IGNORECASE)]
        assert not leaked, f"{f.parent.name}: {leaked[:3]}"


def test_a_misread_id_is_the_same_slip_made_on_the_new_id():
    from pytest_callm.authoring.generate import _same_slip

    assert _same_slip("HR-25-0519", "HR-87-0187", "HR-25-0591") == "HR-87-0178"  # the last two swapped
    assert _same_slip("HR-25-0519", "HR-87-0187", "HR-25-0777") is None  # not a slip: drawn afresh
