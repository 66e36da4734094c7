"""Training tasks that are not the test: `callm generate PACK --n N --seed S [--out DIR]`.

No locked task is a skeleton. Each pack declares, in `industries/<pack>/compose.py`, the sub-goals
its calls are made of (its intents, policy branches and complications) and composes a scenario from
them: it draws the caller and the facts that decide the answer from its own tables and pools, on both
sides of each rule, writes what the caller says from its own phrasings, and plays every call of the
answer key through the pack's tools as it composes it (`pytest_callm.authoring.compose`). Fresh
names come from the pack's `generate.json` pools, never a word any locked task or the seed holds.
Every draw comes from `random.Random` seeded with the pack, `--seed`, the task's index and the try,
so a seed always writes the same bytes.

A composed task is kept only when

- the tools gave each step what the draw meant (a conflict drawn is a conflict found), and every
  value the key needs is said by the caller or returned by an earlier tool (`compose.Scenario`);
- locked (`exp_db_state` is what replaying its key leaves), the oracle passes it, and `callm prove`
  finds no problem in it;
- `callm split-check` finds it apart from every locked task (masked: another scenario, not a
  renamed one);

otherwise it is drawn again (another try).
"""

from __future__ import annotations

import json
import random
import re
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_callm.authoring.compose import Bench, Redraw, Scenario, load_composer
from pytest_callm.authoring.lock import expected_state, find_task_files
from pytest_callm.task.pack import Pack, PackRegistry
from pytest_callm.task.task_file import GENERATED_PREFIX, TaskError, load_task, read_task_json

PREFIX = GENERATED_PREFIX
TRIES = 6  # draws per task before its slot is given up


class GenerateError(Exception):
    pass


@dataclass
class Pools:
    """A pack's `generate.json` name pools, less every word a locked task or the pack's seed holds."""

    first: list[str]
    last: list[str]
    organizations: list[str]

    @classmethod
    def load(cls, pack: Pack, locked: list[dict[str, Any]]) -> Pools:
        path = pack.root / "generate.json"
        if not path.exists():
            raise GenerateError(f"pack {pack.name!r} has no generate.json: the pools fresh names are drawn from "
                                "(see docs/generate.md)")
        raw = json.loads(path.read_text(encoding="utf-8"))
        for field_name in ("first_names", "last_names"):
            if not isinstance(raw.get(field_name), list) or not raw[field_name]:
                raise GenerateError(f"{path}: {field_name}: a list of names is needed")
        db = sqlite3.connect(":memory:")
        db.executescript(pack.schema_sql)
        db.executescript(pack.seed_sql)
        seed_text = []
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"):
            for row in db.execute(f'SELECT * FROM "{table}"'):
                seed_text.extend(str(v) for v in row if v is not None)
        db.close()
        text = "\n".join([*seed_text, *(json.dumps(d, ensure_ascii=False) for d in locked)])
        taken = {w.lower() for w in re.findall(r"[A-Za-zÀ-ÿ'-]+", text)}

        def free(words: list[str]) -> list[str]:
            return [w for w in words if not any(part.lower() in taken for part in w.split("-"))]

        return cls(free(raw["first_names"]), free(raw["last_names"]), free(raw.get("organizations", [])))

    def drawer(self, rng: random.Random) -> Callable[[str], str]:
        """A task's name drawer: a fresh word each time (no two people of one task share a name)."""
        used: set[str] = set()

        def draw(kind: str) -> str:
            pool = {"first": self.first, "last": self.last, "organization": self.organizations}[kind]
            choices = [w for w in pool if w not in used] or pool
            if not choices:
                raise GenerateError(f"generate.json has no {kind} names left that no locked task uses")
            word = choices[rng.randrange(len(choices))]
            used.add(word)
            return word

        return draw


def compose_task(pack: Pack, compose: Callable[[Scenario], None], pools: Pools, seed: int, index: int,
                 attempt: int, bench: Bench | None = None) -> tuple[dict[str, Any] | None, str]:
    """One try at task `index`: its data, or None and why the draw was not a task."""
    rng = random.Random(f"callm-generate/{pack.name}/{seed}/{index}/{attempt}")
    scenario = Scenario(pack, rng, pools.drawer(rng), bench)
    try:
        compose(scenario)
    except Redraw as e:
        return None, f"not what the draw meant: {e}"
    finally:
        scenario.close()
    problems = scenario.unsolvable()
    if problems:
        return None, f"unsolvable: {problems[0]}"
    task_id = f"{PREFIX}-{seed}-{index:05d}-{scenario.category_slug}"
    return scenario.task(task_id, {"pack": pack.name, "seed": seed}), ""


@dataclass
class Generated:
    written: list[Path]
    redrawn: int  # draws that were rejected and drawn again
    seconds: float
    rejected: dict[str, int] = field(default_factory=dict)  # why -> how many draws
    phases: dict[str, float] = field(default_factory=dict)  # compose, lock and oracle, prove, split-check: seconds


def _task_dir(out: Path, data: dict[str, Any]) -> Path:
    return out / data["task_name"].split(":", 1)[0]


def _write(path: Path, data: dict[str, Any]) -> None:
    path.mkdir(parents=True, exist_ok=True)
    (path / "task.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _lock_and_play(files: list[Path], packs: PackRegistry) -> dict[Path, str | None]:
    """Lock each task (its expected state, and each route's, is what replaying that key leaves), and
    score that replay as the oracle's call: None when it passes, else why not."""
    from pytest_callm.call.oracle import AnswerKeyError
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.scoring.verify import verify

    out: dict[Path, str | None] = {}
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        for f in files:
            try:
                data, task, pack = load_task(f, packs, unlocked=True)
                played = runtime.play(task, pack, attempt=1)
            except (AnswerKeyError, TaskError) as e:
                out[f] = f"the oracle cannot play the key: {e}"
                continue
            data["exp_db_state"] = expected_state(played, pack)
            for raw, key in zip(data.get("routes", []), task.keys()[1:]):
                raw["exp_db_state"] = expected_state(runtime.play(key, pack, attempt=1), pack)
            f.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
            verdict = verify(load_task(f, packs)[1], pack, played)
            out[f] = None if verdict.passed else "the oracle fails: " + verdict.explain().splitlines()[0]
    finally:
        runtime.close()
    return out


# A check of staged task files against the evaluation set: file -> why it leaks (`callm split-check`,
# which lives downstream of authoring: the command line passes it in).
Leaks = Callable[[list[Path]], dict[Path, str]]


def generate(pack_name: str, n: int, seed: int, out: Path, industries: list[Path], *, leaks: Leaks,
             locked: Path = Path("tasks"), workers: int | None = None, log=print) -> Generated:
    """Write `n` composed tasks of `pack_name` under `out/<pack>/seed-<seed>/` (replacing what an
    earlier run of the same pack and seed left there): see the module's doc."""
    from pytest_callm.authoring.prove import prove_run

    started = time.perf_counter()
    packs = PackRegistry(industries)
    pack = packs.get(pack_name)
    try:
        compose = load_composer(pack)
    except (FileNotFoundError, AttributeError) as e:
        raise GenerateError(str(e)) from None
    every_locked = [read_task_json(f) for f in find_task_files([locked])]
    pools = Pools.load(pack, every_locked)
    bench = Bench(pack)

    root = out / pack_name / f"seed-{seed}"
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    rejected: dict[str, int] = {}
    redrawn = 0
    kept: dict[int, Path] = {}
    pending = {i: 0 for i in range(n)}  # index -> its try
    phases = {"compose": 0.0, "lock and oracle": 0.0, "prove": 0.0, "split-check": 0.0}
    clock = time.perf_counter()

    def lap(phase: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        phases[phase] += now - clock
        clock = now

    def reject(index: int, why: str) -> None:
        nonlocal redrawn
        rejected[why.split(":")[0]] = rejected.get(why.split(":")[0], 0) + 1
        pending[index] += 1
        redrawn += 1

    while pending:
        staging = Path(tempfile.mkdtemp(prefix="callm-generate-"))
        try:
            # Composing and the cheap judges try again at once; locking, the oracle and prove judge
            # the round's draws together.
            drawn: dict[int, Path] = {}
            for index in sorted(pending):
                while pending[index] < TRIES and index not in drawn:
                    data, why = compose_task(pack, compose, pools, seed, index, pending[index], bench)
                    lap("compose")
                    if data is None:
                        reject(index, why)
                        continue
                    target = _task_dir(staging, data)
                    _write(target, data)
                    drawn[index] = target / "task.json"
            staged = sorted(drawn.values())
            bad = {f: why for f, why in (_lock_and_play(staged, packs) if staged else {}).items() if why}
            fine = [f for f in staged if f not in bad]
            lap("lock and oracle")
            if fine:
                bad.update({f: f"split-check: {why}" for f, why in leaks(fine).items()})
                lap("split-check")
                fine = [f for f in fine if f not in bad]
            if fine:
                proof = prove_run(fine, industries, workers=workers)
                for p in proof.tasks:
                    if p.problems:
                        bad[Path(p.task.path)] = "prove: " + p.problems[0].splitlines()[0]
                for pack_problem in proof.pack_problems.get(pack_name, []):
                    log(f"pack problem seen while proving: {pack_problem}")
                lap("prove")
            for index, f in sorted(drawn.items()):
                if f in bad:
                    reject(index, bad[f])
                    continue
                final = _task_dir(root, read_task_json(f))
                final.mkdir(parents=True)
                shutil.copyfile(f, final / "task.json")
                kept[index] = final / "task.json"
                del pending[index]
            for index in [i for i, tries in pending.items() if tries >= TRIES]:
                log(f"task {index}: no keepable draw in {TRIES} tries")
                del pending[index]
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    bench.close()
    return Generated([kept[i] for i in sorted(kept)], redrawn, time.perf_counter() - started, rejected,
                     {k: round(v, 1) for k, v in phases.items()})
