"""The packs' README house-rule tables, written from `rules.json` and the traps that name each rule.

`callm prove --write-tables` writes a pack's table once its proof has no problem, between two
marker lines of its README.md; the test suite checks that each table matches the declarations
(so the page cannot drift from the rules the proof applies).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_callm.authoring.house_rules import HouseRules, Rule
from pytest_callm.authoring.trap_tables import marked
from pytest_callm.task.task_file import Task

BEGIN = "<!-- callm prove --write-tables: rules begin -->"
END = "<!-- callm prove --write-tables: rules end -->"


def scored(rule: Rule) -> str:
    if rule.scored_by == "record":
        where = f"`{rule.record}`, " if rule.record else ""
        return f"record ({where}fails {', '.join(rule.gate)})"
    if rule.scored_by == "tool":
        return f"tool refuses (`{rule.refused_with}`)"
    if rule.words:
        return "words gate (a class of sentences, fails words)"
    return f"speech only: {rule.reason}"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render(rules: HouseRules, tasks: Iterable[Task], tallies: dict[str, Any] | None = None) -> str:
    """The marked section. `tallies` (rule id -> prove's Tally) fills the figures; without them (a
    check of the declarations) the figure cells are empty."""
    traps: dict[str, list[str]] = {}
    for task in sorted(tasks, key=lambda t: t.task_id):
        for trap in task.traps:
            traps.setdefault(trap.get("rule", ""), []).append(task.task_id)
    by = {k: sum(1 for r in rules.rules.values() if r.scored_by == k) for k in ("record", "tool", "speech")}
    lines = [BEGIN,
             f"{len(rules.rules)} house rules: {by['record']} scored by a record a real business keeps, {by['tool']} "
             f"refused by a tool, {by['speech']} only spoken. \"tasks\" and \"caught\" are `callm prove`'s "
             "figures: the tasks each rule's adversaries (`adversaries.py`) apply to, and the violations they "
             "made that failed the rule's gates or were refused with its code; \"passed\" counts those that did "
             "not (each a problem). \"traps\" are the tasks whose declared traps break the rule.",
             "",
             "| rule | what the business says | agents | scored by | tasks | caught | passed | traps |",
             "|---|---|---|---|---:|---:|---:|---|"]
    for rule in rules.rules.values():
        lines.append(row(rule, traps.get(rule.id, []), (tallies or {}).get(rule.id), tallies is not None))
    lines.append(END)
    return "\n".join(lines)


def row(rule: Rule, trap_tasks: list[str], tally: Any, with_figures: bool) -> str:
    if not with_figures:
        figures = ["", "", ""]
    elif tally is None:
        figures = ["0", "0", "0"] if rule.scored_by != "speech" else ["", "", ""]
    else:
        figures = [str(len(tally.tasks)), str(tally.as_required), str(tally.problems)]
    return (f"| `{rule.id}` | {_cell(rule.rule)} | {', '.join(rule.agents)} | {_cell(scored(rule))} | "
            f"{' | '.join(figures)} | {', '.join(sorted(set(trap_tasks))) or '-'} |")


def declared_part(line: str) -> str:
    """A table row less its figures: what the declarations alone decide (for the suite's check)."""
    cells = line.split(" | ")
    return " | ".join(cells[:4] + cells[7:]) if len(cells) >= 8 else line


def current(readme: Path) -> str | None:
    return marked(readme, BEGIN, END)


def write(readme: Path, rules: HouseRules, tasks: Iterable[Task], tallies: dict[str, Any] | None = None) -> bool:
    """Put the table in `readme` (the marked section, or a new "House rules as data" section)."""
    text = readme.read_text(encoding="utf-8")
    table = render(rules, tasks, tallies)
    old = current(readme)
    new = text.replace(old, table) if old is not None else \
        text.rstrip("\n") + "\n\n## House rules as data\n\n" + table + "\n"
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text
