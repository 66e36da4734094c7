"""Tasks as dataset rows, for frameworks that load datasets: `callm export PATHS... --out FILE.jsonl`.

One format for every framework: `callm export` writes it, and NeMo Gym's rows
(`nemo_gym_server.dataset_rows`) are the same row for one seed, with `seed` and the episode's first
request as `responses_create_params` added (NeMo Gym's agent sends a row's own first request).

One JSON line per task, ordered by task name:

- `prompt`: what the policy sees before the caller speaks, as OpenAI messages: the entry agent's
  system prompt and the greeting (an assistant message). The caller's first words are not here:
  they come from the environment at reset (`CallEnvironment.areset`), through the phone line, at the
  seed the episode is played with.
- `task`: `industry/task_id`, the name `CallEnvironment` knows the task by.
- `tools`: the entry agent's tools as OpenAI function schemas, exactly as the model is sent them (a
  handoff changes the agent and its tools during the episode).
- `info`: industry, task id, category (name and slug), difficulty, `seeds` (the seeds the benchmark
  plays: attempts 1..N), `handoff_path_length` (agents the answer key hands off to), `entry_agent`.
- `answer_key_hash`: `sha256:` of the task's name and its answer key (expected calls, handoff path,
  forbidden tools, expected database state, routes) as canonical JSON. It changes when the key
  changes and differs between tasks, and it is not the key: an export of the evaluation set does
  not hand out its answers. (It is a hash, not a secret: it cannot hide a key someone can guess.)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from pytest_callm.rl.splits import load_tasks, repeated_names
from pytest_callm.task.pack import Pack, PackError, PackRegistry, default_industries
from pytest_callm.task.task_file import Task

ANSWER_KEY_FIELDS = ("exp_tool_calls", "exp_handoff_path", "forbidden_tools", "exp_db_state", "routes")
DEFAULT_SEEDS = 5  # the benchmark's attempts per task


def answer_key_hash(task: Task) -> str:
    """A stable hash of the task's name and answer key; the key's field order in the file does not matter."""
    key = {name: task.raw[name] for name in ANSWER_KEY_FIELDS if name in task.raw}
    text = json.dumps({"task": task.name, "answer_key": key}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def dataset_row(task: Task, pack: Pack, seeds: int | list[int] = DEFAULT_SEEDS) -> dict[str, Any]:
    """The row of `task`; `seeds`: N for 1..N, or the seeds themselves."""
    entry = pack.agents[pack.entry_agent]
    return {
        "prompt": [{"role": "system", "content": entry.prompt}, {"role": "assistant", "content": pack.greeting}],
        "task": task.name,
        "tools": pack.tool_schemas(entry.name),
        "info": {"industry": task.industry, "task_id": task.task_id, "category": task.category,
                 "category_slug": task.category_slug, "difficulty": task.difficulty,
                 "seeds": list(range(1, seeds + 1)) if isinstance(seeds, int) else list(seeds),
                 "handoff_path_length": len(task.exp_handoff_path), "entry_agent": entry.name},
        "answer_key_hash": answer_key_hash(task),
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="callm export", description="write one dataset row per task (JSON lines)")
    parser.add_argument("paths", nargs="+", type=Path, help="task files or folders")
    parser.add_argument("--out", required=True, type=Path, help="the JSON-lines file to write")
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS,
                        help=f"seeds to suggest per task: 1..N (default {DEFAULT_SEEDS}, the benchmark's attempts)")
    parser.add_argument("--industries", action="append", default=[], type=Path,
                        help="extra folder holding industry packs (repeatable)")
    args = parser.parse_args(argv)
    if args.seeds < 1:
        parser.error(f"--seeds {args.seeds}: must be at least 1")
    try:
        tasks, problems = load_tasks(args.paths, PackRegistry(default_industries(Path.cwd()) + args.industries))
    except PackError as e:
        print(e, file=sys.stderr)
        return 2
    problems += repeated_names(tasks)
    if not tasks and not problems:
        problems.append(f"no task files in {', '.join(map(str, args.paths))}")
    if problems:
        for line in problems:
            print(f"callm export: {line}", file=sys.stderr)
        print(f"callm export: nothing written to {args.out}", file=sys.stderr)
        return 2
    rows = sorted((dataset_row(t.task, t.pack, args.seeds) for t in tasks), key=lambda row: row["task"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} row(s) written to {args.out}")
    return 0
