"""The packs' README house-rule tables, written from `rules.json` and the traps that name each rule.

`callm prove --write-tables` writes a pack's table once its proof has no problem, between two
marker lines of its README.md; the test suite checks that each table matches the declarations
(so the page cannot drift from the rules the proof applies).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pytest_callm.authoring.house_rules import HouseRules, Rule
from pytest_callm.task.task_file import Task

BEGIN = "<!-- callm prove --write-tables: rules begin -->"
END = "<!-- callm prove --write-tables: rules end -->"


def scored(rule: Rule) -> str:
    if rule.scored_by == "record":
        where = f"`{rule.record}`, " if rule.record else ""
        return f"record ({where}fails {', '.join(rule.gate)})"
    if rule.scored_by == "tool":
        return f"tool refuses (`{rule.refused_with}`)"
    return f"speech only: {rule.reason}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(rules: HouseRules, tasks: Iterable[Task]) -> str:
    traps: dict[str, list[str]] = {}
    for task in sorted(tasks, key=lambda t: t.task_id):
        for trap in task.traps:
            traps.setdefault(trap.get("rule", ""), []).append(task.task_id)
    by = {k: sum(1 for r in rules.rules.values() if r.scored_by == k) for k in ("record", "tool", "speech")}
    lines = [BEGIN,
             f"{len(rules.rules)} house rules: {by['record']} scored by a record a real business keeps, {by['tool']} "
             f"refused by a tool, {by['speech']} only spoken. `callm prove` applies each rule's adversary "
             "(`adversaries.py`) to every task and prints, per rule, the tasks it applies to and the violations "
             "caught; the last column lists the tasks whose declared traps break it.",
             "",
             "| rule | what the business says | agents | scored by | traps |",
             "|---|---|---|---|---|"]
    for rule in rules.rules.values():
        named = traps.get(rule.id, [])
        lines.append(f"| `{rule.id}` | {_cell(rule.rule)} | {', '.join(rule.agents)} | {_cell(scored(rule))} | "
                     f"{', '.join(sorted(set(named))) or '-'} |")
    lines.append(END)
    return "\n".join(lines)


def current(readme: Path) -> str | None:
    text = readme.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        return None
    start = text.index(BEGIN)
    return text[start:text.index(END, start) + len(END)]


def write(readme: Path, rules: HouseRules, tasks: Iterable[Task]) -> bool:
    """Put the table in `readme` (the marked section, or a new "House rules as data" section)."""
    text = readme.read_text(encoding="utf-8")
    table = render(rules, tasks)
    old = current(readme)
    new = text.replace(old, table) if old is not None else \
        text.rstrip("\n") + "\n\n## House rules as data\n\n" + table + "\n"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text
