"""Runs split across machines: shards of whole tasks, and the merge that joins them into one run.

    pytest --callm-model=M --callm-shard=2/3 --callm-out=shard-2     on each machine (a CI matrix)
    callm merge shard-1 shard-2 shard-3 --out run                     one run, as if played on one machine

A shard is a deterministic share of whole tasks: every attempt of a task is in the same shard. The
tasks are dealt by expected cost (the number of calls of the answer key, plus one for the
conversation), largest first, each to the shard with the least cost so far (ties: the lower shard, then
the task's name), so every machine gets about the same work and every machine that collects the same
task set computes the same deal.

Each shard run writes `shard.json` beside its manifest: its index and count, and the whole deal (every
task of the task set with its file, the file's sha256 and its shard). The merge refuses shards that do
not fit together: manifests that differ in anything but the task files each shard played (model,
caller, line, attempts, verifier, pack), deals that differ (another task set), a shard given twice or
two shards claiming one attempt (overlap), a shard missing or a shard whose run did not finish every
attempt of its tasks (gap). It then writes one run directory: the trajectories of all shards, a
manifest whose task-set hash is that of the whole set, and a report.json computed from the attempts as
the run itself computes it, so it equals the report of the same run played on one machine.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

from pytest_callm.saved import files
from pytest_callm.saved.reader import SHARD, RunReadError, read_run, require_shard
from pytest_callm.saved.rundir import RunDir, task_file_name, write_json
from pytest_callm.task.digest import digest_of_files

SHARD_FILE = SHARD
SHARD_FORMAT = "callm-shard/1"


class MergeError(Exception):
    """Shards that cannot be joined into one run."""


def parse_shard(spec: str) -> tuple[int, int]:
    """`I/N` (1 <= I <= N) as (I, N); ValueError with a sentence for anything else."""
    try:
        i, n = (int(p) for p in str(spec).split("/"))
    except ValueError:
        raise ValueError(f"expected I/N, e.g. 2/3, got {spec!r}") from None
    if n < 1 or not 1 <= i <= n:
        raise ValueError(f"expected I/N with 1 <= I <= N, got {spec!r}")
    return i, n


def deal(costs: dict[str, int], count: int) -> dict[str, int]:
    """Each task's shard (1..count): largest expected cost first, to the least loaded shard."""
    loads = [0] * count
    out = {}
    for key in sorted(costs, key=lambda k: (-costs[k], k)):
        shard = min(range(count), key=lambda s: (loads[s], s))
        loads[shard] += costs[key]
        out[key] = shard + 1
    return out


def task_key(industry: str, task_id: str) -> str:
    return f"{industry}/{task_id}"


def shard_record(index: int, count: int, tasks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """`tasks`: key -> {"file": path, "root": rootdir, "cost": n}; returns what shard.json holds."""
    assigned = deal({k: t["cost"] for k, t in tasks.items()}, count)
    table = {}
    for key in sorted(tasks):
        path = Path(tasks[key]["file"])
        table[key] = {"file": task_file_name(path, Path(tasks[key]["root"])),
                      "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                      "cost": tasks[key]["cost"], "shard": assigned[key]}
    return {"format": SHARD_FORMAT, "index": index, "count": count, "tasks": table}


def write_shard_record(run_dir: Path, record: dict[str, Any]) -> None:
    write_json(Path(run_dir) / SHARD_FILE, record)


# --- merge -----------------------------------------------------------------------------------------

def _without_task_files(comparable: dict[str, Any]) -> dict[str, Any]:
    """What every shard of one run shares: the comparable part less the hashes of the tasks it played
    (tasks written in Python run in shard 1 only)."""
    hashes = {k: v for k, v in (comparable.get("hashes") or {}).items()
              if k not in ("tasks", "packs", "python_tasks")}
    return {**comparable, "hashes": hashes}


def build_report(attempts: list[dict[str, Any]], model: str | None, k: int, line_spec: str) -> dict[str, Any]:
    """The report.json of a run from its attempts' results, as the plugin computes it at the end of a run."""
    from pytest_callm.phone.error_profile import load_profile, realized_rates
    from pytest_callm.phone.line import is_clean
    from pytest_callm.scoring.cost import usage_by_industry
    from pytest_callm.scoring.metrics import summarize

    results = sorted(attempts, key=lambda r: (r["industry"], r["task_id"], r["attempt"]))
    groups, total = usage_by_industry(results)
    turns = [t for r in results for t in r.get("line_turns", [])]
    profile = None if is_clean(line_spec) else load_profile(line_spec)
    return {
        "model": model, "k": k,
        "summary": summarize(results, k).to_json(),
        "usage": {"industries": {key: g.to_json() for key, g in groups.items()}, "total": total.to_json()}
                 if groups else None,
        "line_rates": realized_rates(turns, profile) if turns else None,
        "attempts": results,
    }


def merge_runs(dirs: list[Path], out: Path) -> dict[str, Any]:
    """Join shard run directories into the run directory `out`; returns the merged report."""
    from pytest_callm.saved.rundir import result_differences

    if not dirs:
        raise MergeError("no shard run directories given")
    shards = []
    for d in dirs:
        d = Path(d)
        try:
            run = read_run(d)
            if run.manifest.get("rescored_from"):
                raise MergeError(f"{d}: a rescored run; merge the shard runs that played the calls")
            record = require_shard(run)
        except RunReadError as e:
            raise MergeError(str(e)) from None
        shards.append((d, run.manifest, record, run.report))

    first_dir, first_manifest, first_record, _ = shards[0]
    count = first_record["count"]
    base = _without_task_files(first_manifest.get("comparable") or {})
    packs: dict[str, str] = {}
    seen: dict[int, Path] = {}
    for d, manifest, record, _ in shards:
        comparable = manifest.get("comparable") or {}
        changed = result_differences(base, _without_task_files(comparable))
        if manifest.get("k") != first_manifest.get("k"):
            changed.append("k")
        if changed:
            raise MergeError(f"{d} and {first_dir} were run with other settings or inputs ({', '.join(changed)}); "
                             "only shards of one run can be merged")
        if record.get("count") != count or record.get("tasks") != first_record.get("tasks"):
            raise MergeError(f"{d} and {first_dir} split another task set or into another number of shards "
                             f"({record.get('count')} and {count}); only shards of one run can be merged")
        index = record["index"]
        if index in seen:
            raise MergeError(f"shard {index}/{count} given twice ({seen[index]} and {d}): the shards overlap")
        seen[index] = d
        own = [(t["file"], t["sha256"]) for t in record["tasks"].values() if t["shard"] == index]
        if digest_of_files(own) != (comparable.get("hashes") or {}).get("tasks"):
            raise MergeError(f"{d}: its manifest's task-set hash is not that of the tasks of shard {index}/{count} "
                             "(tasks changed, or the run was filtered with -k/-m?); it cannot be merged")
        for name, digest in ((comparable.get("hashes") or {}).get("packs") or {}).items():
            if packs.setdefault(name, digest) != digest:
                raise MergeError(f"{d}: pack {name} differs from that of another shard")
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise MergeError(f"shard(s) {', '.join(f'{i}/{count}' for i in missing)} missing: the shards leave a gap")

    table = first_record["tasks"]
    attempts_per_task = base.get("attempts")
    attempts: list[dict[str, Any]] = []
    owner: dict[tuple[str, str, int], Path] = {}
    for d, _, record, report in shards:
        played: dict[str, set[int]] = {}
        for a in report.get("attempts") or []:
            key = task_key(a["industry"], a["task_id"])
            where = (a["industry"], a["task_id"], a["attempt"])
            if where in owner:
                raise MergeError(f"{key} attempt {a['attempt']} is in {owner[where]} and in {d}: the shards overlap")
            if key in table and table[key]["shard"] != record["index"]:
                raise MergeError(f"{d}: {key} belongs to shard {table[key]['shard']}/{count}, not "
                                 f"{record['index']}/{count}: the shards overlap")
            if key not in table and record["index"] != 1:
                raise MergeError(f"{d}: {key} is not in the task set of the shards")
            owner[where] = d
            played.setdefault(key, set()).add(a["attempt"])
            attempts.append(a)
        for key, t in table.items():
            if t["shard"] != record["index"]:
                continue
            got = played.get(key, set())
            if got != set(range(1, attempts_per_task + 1)):
                raise MergeError(f"{d}: {key} has {len(got)} of its {attempts_per_task} attempts (the shard's run "
                                 "did not finish: resume it with --callm-resume): the shards leave a gap")

    out = Path(out)
    target = RunDir(out)
    if out.exists() and any(out.iterdir()):
        raise MergeError(f"{out} is not empty; merge into a new folder")
    target.lock()
    try:
        for d, *_ in shards:
            for part in ("seeds", "trajectories"):  # seeds first: the trajectories' final states name them
                if (d / part).is_dir():
                    shutil.copytree(d / part, out / part, dirs_exist_ok=True, ignore=files.only_files_and_folders)
        # Tasks written in Python run in shard 1 only: their hash and count are its.
        one = next(manifest for _, manifest, record, _ in shards if record["index"] == 1)
        hashes = {k: v for k, v in first_manifest["comparable"]["hashes"].items() if k != "python_tasks"}
        python = {"python_tasks": one["python_tasks"]} if "python_tasks" in one else {}
        if "python_tasks" in one["comparable"]["hashes"]:
            hashes["python_tasks"] = one["comparable"]["hashes"]["python_tasks"]
        merged_manifest = {
            **{k: v for k, v in first_manifest.items() if k != "python_tasks"}, **python,
            "task_files": len({t["file"] for t in table.values()}),
            "comparable": {**first_manifest["comparable"], "hashes": {
                **hashes,
                "tasks": digest_of_files([(t["file"], t["sha256"]) for t in table.values()]),
                "packs": dict(sorted(packs.items()))}},
            "merged_from": [str(Path(d).resolve()) for d, *_ in sorted(shards, key=lambda s: s[2]["index"])],
        }
        write_json(target.manifest_path, merged_manifest)
        report = build_report(attempts, base.get("model"), first_manifest.get("k"), (base.get("line") or {})
                              .get("spec", "clean"))
        target.write_report(report)
    finally:
        target.unlock()
        (out / ".lock").unlink(missing_ok=True)
    return report
