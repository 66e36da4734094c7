"""`callm new-task DIR/<ID>`: a new task file from a template, for a team adding tasks to a pack.

The file loads (schema and pack checks pass) but is unfinished on purpose: every value only its
author can write is a placeholder starting with `TODO:`, the answer key is empty and nothing is
locked, and `callm lint` says each of these in plain words until the author has written the script
and the answer key and run `callm lock`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pytest_callm.authoring.lint import DIFFICULTY_LETTER, PLACEHOLDER
from pytest_callm.authoring.lock import find_task_files
from pytest_callm.task.pack import Pack, PackRegistry

LEVEL_OF_LETTER = {letter: level for level, letter in DIFFICULTY_LETTER.items()}
ID_PATTERN = re.compile(r"([A-Za-z0-9]+)-([EMH])(\d*)")  # C4-H5, or C4-H for the next free number


class ScaffoldError(Exception):
    """Why no task file was written; the message says what to do instead."""


def template(task_id: str, category: str, slug: str, difficulty: str, pack: Pack) -> dict[str, Any]:
    todo = PLACEHOLDER + " "
    data: dict[str, Any] = {
        "task_name": f"{task_id}: {todo}a short title saying what the caller wants",
        "customer_name": f"{todo}the caller's full name",
        "intent": (f"{todo}the caller's script, in the second person. How the call opens (Open with exactly: "
                   "\"...\"), what to say when asked each question (When asked for your phone number, say "
                   "exactly: \"...\"), which offers to accept or decline, and when to end the call."),
        "traits": [{"trait_name": "full_name", "value": f"{todo}the caller's full name"},
                   {"trait_name": "phone", "value": f"{todo}the caller's phone number"}],
        "exp_handoff_path": [],
        "exp_tool_calls": [],
        "scripted_responses": [],
        "metadata": {"category": category, "category_slug": slug, "difficulty": difficulty},
    }
    if pack.required_or_forbidden:  # every task must require or forbid these: forbidden until the key says
        data["forbidden_tools"] = sorted(pack.required_or_forbidden)
    return data


def pack_of(folder: Path, packs: PackRegistry, industry: str | None) -> Pack:
    """The pack named by --industry, else the nearest enclosing folder named after a pack."""
    known = packs.names()
    name = industry or next((p.name for p in [folder.resolve(), *folder.resolve().parents] if p.name in known), None)
    if name is None:
        raise ScaffoldError(f"{folder}: no enclosing folder is named after a pack (packs found: "
                            f"{', '.join(known) or 'none'}); put the task under tasks/<pack>/ or pass --industry")
    try:
        return packs.get(name)
    except KeyError as e:
        raise ScaffoldError(str(e.args[0])) from None


def existing_tasks(folder: Path) -> dict[str, dict[str, Any]]:
    """Task id -> task JSON of every readable task file under `folder`."""
    out = {}
    for path in find_task_files([folder]) if folder.is_dir() else []:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            out[data["task_name"].split(":", 1)[0].strip()] = data
        except (OSError, ValueError, KeyError, AttributeError):
            continue  # a broken file is the linter's business, not a reason to refuse a new one
    return out


def next_free_number(taken: set[str], slug: str, letter: str) -> int:
    n = 1
    while f"{slug}-{letter}{n}" in taken:
        n += 1
    return n


def category_name(slug: str, pack: Pack, siblings: dict[str, dict[str, Any]]) -> str:
    """The category's name from the pack's declared suite, else from a task of that category."""
    if pack.suite and slug in pack.suite.get("categories", {}):
        return pack.suite["categories"][slug]
    for data in siblings.values():
        meta = data.get("metadata") or {}
        if (meta.get("category_slug") or data["task_name"].split("-", 1)[0]) == slug and meta.get("category"):
            return meta["category"]
    return f"{PLACEHOLDER} the name of category {slug}"


def new_task(target: Path, packs: PackRegistry, industry: str | None = None) -> tuple[Path, dict[str, Any], str]:
    """Write `<folder>/<ID>/task.json` for `target` = `<folder>/<ID>`; returns (file, its JSON, what to do next).

    `<ID>` is `C4-H5` (taken: refused, naming the next free id) or `C4-H` (the next free number).
    """
    target = Path(target)
    m = ID_PATTERN.fullmatch(target.name)
    if not m:
        raise ScaffoldError(f"{target.name!r} is not a task id: write CATEGORY-<E|M|H>NUMBER, e.g. C4-H5, or "
                            "leave the number out (C4-H) for the next free one")
    slug, letter, number = m.groups()
    folder = target.parent
    pack = pack_of(folder, packs, industry)
    siblings = existing_tasks(folder)
    free = next_free_number(set(siblings) | {p.name for p in folder.glob("*") if p.is_dir()}, slug, letter)
    task_id = f"{slug}-{letter}{number or free}"
    path = folder / task_id / "task.json"
    if task_id in siblings or path.exists():
        raise ScaffoldError(f"{task_id} already exists in {folder}; the next free id is {slug}-{letter}{free}")
    data = template(task_id, category_name(slug, pack, siblings), slug, LEVEL_OF_LETTER[letter], pack)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    same_kind = sum(1 for t in siblings if re.fullmatch(rf"{re.escape(slug)}-{letter}\d+", t))
    return path, data, next_steps(path, data, pack, suite_note(pack, slug, data["metadata"]["difficulty"], same_kind))


def suite_note(pack: Pack, slug: str, difficulty: str, siblings: int) -> str | None:
    """A pack that declares its suite's composition counts tasks: say when this one goes beyond it."""
    if not pack.suite:
        return None
    wanted = pack.suite.get("per_category", {}).get(difficulty)
    if slug not in pack.suite.get("categories", {}):
        return f"pack {pack.name} declares no category {slug} in its suite (pack.json); `callm lint` will say so"
    if wanted is not None and siblings >= wanted:
        return (f"pack {pack.name} declares {wanted} {difficulty} task(s) per category in its suite (pack.json) and "
                f"{slug} has {siblings} already: update the suite, or lint the other tasks with --no-suite")
    return None


def next_steps(path: Path, data: dict[str, Any], pack: Pack, note: str | None) -> str:
    meta = data["metadata"]
    lines = [f"created {path} (pack {pack.name}, category {meta['category_slug']}, {meta['difficulty']})",
             "next:",
             "  1. write the title, the caller (customer_name, traits) and the caller's script (intent);",
             "     replace every value that starts with TODO:",
             "  2. write the answer key: exp_tool_calls (name, constrained parameters, status) and",
             "     exp_handoff_path (the agents the call must reach, in order)"]
    if data.get("forbidden_tools"):
        lines.append(f"     (forbidden_tools lists {', '.join(data['forbidden_tools'])}, which every task of this pack "
                     "must require or forbid: move a tool to exp_tool_calls if the task requires it)")
    lines += [f"  3. callm lock {path}    # fills exp_db_state by replaying the answer key",
              f"  4. callm lint {path}    # says in plain words what is still missing",
              "  5. declare the task's traps (traps: each wrong move as an edit of the answer key, and the",
              f"     gates that catch it), then: callm prove {path}    # replays them, mutants and spellings"]
    if note:
        lines.append(f"note: {note}")
    return "\n".join(lines)
