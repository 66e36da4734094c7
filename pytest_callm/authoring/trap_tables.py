"""The packs' README trap tables, written from the tasks' trap declarations (never by hand).

`callm prove --write-tables` writes them once every declaration of the pack is proven by its replay,
so each row's "caught by" is what the replay of that wrong answer failed. The table sits between
two marker lines in the pack's README.md; the test suite checks that it matches the declarations.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_callm.scoring.verify import GATES
from pytest_callm.task.task_file import Task

BEGIN = "<!-- callm prove --write-tables: begin -->"
END = "<!-- callm prove --write-tables: end -->"


def kind_of(trap: dict[str, Any]) -> str:
    """How a trap is caught, as the packs' trap tables say it."""
    if trap["caught_by"] == "speech-only":
        return "speech-only"
    if trap["caught_by"]:
        return ", ".join(sorted(trap["caught_by"], key=GATES.index))
    return f"tool refuses ({trap['refused_with']}); no gate"


def counts(tasks: Iterable[Task]) -> dict[str, dict[str, int]]:
    """Per pack: tasks with a scored trap, else tasks whose traps a tool refuses, else speech-only."""
    out: dict[str, dict[str, int]] = {}
    for task in tasks:
        c = out.setdefault(task.industry, {"tasks": 0, "scored": 0, "tool_refused": 0, "speech_only": 0})
        c["tasks"] += 1
        kinds = {("speech_only" if t["caught_by"] == "speech-only" else "scored" if t["caught_by"] else "tool_refused")
                 for t in task.traps}
        for k in ("scored", "tool_refused", "speech_only"):
            if k in kinds:
                c[k] += 1
                break
    return out


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(tasks: Iterable[Task]) -> str:
    """The marked section: the pack's counts, then one row per declared trap."""
    tasks = sorted(tasks, key=lambda t: (t.category_slug == "R", t.task_id))
    c = next(iter(counts(tasks).values()), {"tasks": 0, "scored": 0, "tool_refused": 0, "speech_only": 0})
    lines = [BEGIN,
             f"{c['tasks']} tasks: {c['scored']} with a scored trap, {c['tool_refused']} whose traps a tool refuses "
             f"but no gate sees (not scored), {c['speech_only']} whose traps are speech-only (not scored, as in the "
             "paper). Each row is a wrong answer that `callm prove` replays through the real tool server; "
             "\"caught by\" names exactly the gates it fails.",
             "",
             "| task | difficulty | wrong move | caught by |",
             "|---|---|---|---|"]
    for task in tasks:
        for trap in task.traps:
            lines.append(f"| {task.task_id} | {task.difficulty} | {_cell(trap['wrong_move'])} | {kind_of(trap)} |")
        if not task.traps:
            lines.append(f"| {task.task_id} | {task.difficulty} | (no trap declared) | |")
    lines.append(END)
    return "\n".join(lines)


def marked(readme: Path, begin: str, end: str) -> str | None:
    """The section of `readme` between two marker lines, markers included, or None when it has none."""
    text = readme.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        return None
    start = text.index(begin)
    return text[start:text.index(end, start) + len(end)]


def current(readme: Path) -> str | None:
    """The marked trap table of `readme` as it stands, or None when it has none."""
    return marked(readme, BEGIN, END)


def write(readme: Path, tasks: Iterable[Task]) -> bool:
    """Put the table in `readme` (replacing the marked section, or appended under a heading when
    there is none). True when the file changed."""
    text = readme.read_text(encoding="utf-8")
    table = render(tasks)
    old = current(readme)
    if old is not None:
        new = text.replace(old, table)
    else:
        new = text.rstrip("\n") + "\n\n## Traps\n\n" + table + "\n"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text
