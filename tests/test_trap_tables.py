"""The packs' README trap tables are the tasks' declarations, written by `callm prove --write-tables`."""

from __future__ import annotations

import pytest

from pytest_callm.authoring.lock import find_task_files
from pytest_callm.authoring.trap_tables import BEGIN, END, current, render, write
from pytest_callm.cli import default_industries
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO


def tasks_of(folder, industries):
    packs = PackRegistry(industries)
    return [load_task(p, packs)[1] for p in find_task_files([folder])]


@pytest.mark.parametrize("pack", ["healthcare", "legal", "customer_support"])
def test_each_shipped_packs_trap_table_matches_its_declarations(pack):
    readme = REPO / "industries" / pack / "README.md"
    expected = render(tasks_of(REPO / "tasks" / pack, default_industries(REPO)))
    assert current(readme) == expected, f"run `callm prove tasks --write-tables` to rewrite {readme}'s table"


def test_a_table_lists_every_trap_with_its_gates_and_the_packs_counts(tmp_path):
    tasks = tasks_of(EXAMPLE_TASKS, [EXAMPLE_PACK.parent])
    table = render(tasks)
    assert table.startswith(BEGIN) and table.endswith(END)
    assert "8 tasks: 7 with a scored trap, 0 whose traps a tool refuses but no gate sees (not scored), 1 whose " \
           "traps are speech-only" in table
    assert "| C2-E2 | easy | says Biscuit is booked without booking | tools, database |" in table
    assert "| R-H1 | hard | tells the caller the same-day visit is cancelled after the tool refused | speech-only |" \
        in table
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line][1:]
    assert [r.split(" | ")[0] for r in rows] == ["| C1-H1", "| C1-H1", "| C1-M1", "| C2-E1", "| C2-E2", "| C2-H1",
                                                 "| C2-M1", "| R-H1", "| R-M1"]


def test_writing_replaces_only_the_marked_section(tmp_path):
    tasks = tasks_of(EXAMPLE_TASKS, [EXAMPLE_PACK.parent])
    readme = tmp_path / "README.md"
    readme.write_text("# Pack\n\nprose\n")
    assert write(readme, tasks)
    first = readme.read_text()
    assert first.startswith("# Pack\n\nprose\n\n## Traps\n\n" + BEGIN)
    readme.write_text(first.replace(current(readme), f"{BEGIN}\nstale\n{END}") + "\nafter\n")
    assert write(readme, tasks) and not write(readme, tasks)
    assert readme.read_text() == first + "\nafter\n"


# --- the house-rule tables ---------------------------------------------------------------------

@pytest.mark.parametrize("pack", ["healthcare", "legal", "customer_support"])
def test_each_shipped_packs_rule_table_matches_its_rules(pack):
    from pytest_callm.authoring import rule_tables
    from pytest_callm.authoring.house_rules import load_house_rules

    packs = PackRegistry(default_industries(REPO))
    rules = load_house_rules(packs.get(pack))
    readme = REPO / "industries" / pack / "README.md"
    expected = rule_tables.render(rules, tasks_of(REPO / "tasks" / pack, default_industries(REPO)))
    written = rule_tables.current(readme)
    # The figures are prove's (written with the table); the rest is the declarations, and must match.
    assert rules.declared and written is not None and \
        [rule_tables.declared_part(line) for line in written.splitlines()] == \
        [rule_tables.declared_part(line) for line in expected.splitlines()], \
        f"run `callm prove tasks --write-tables` to rewrite {readme}'s house-rule table"


def test_a_rule_table_names_each_rule_how_it_is_scored_and_the_traps_that_break_it(tmp_path):
    from pytest_callm.authoring import rule_tables
    from pytest_callm.authoring.house_rules import load_house_rules

    rules = load_house_rules(PackRegistry([EXAMPLE_PACK.parent]).get("vet_clinic"))
    table = rule_tables.render(rules, tasks_of(EXAMPLE_TASKS, [EXAMPLE_PACK.parent]))
    assert "7 house rules: 4 scored by a record a real business keeps, 1 refused by a tool, 2 only spoken" in table
    assert "| `owner-on-file-only` |" in table and "record (`verifications`, fails database) |  |  |  | R-M1 |" in table
    assert "| `verify-first` |" in table and "tool refuses (`not_verified`) |  |  |  | - |" in table
    readme = tmp_path / "README.md"
    readme.write_text("# Pack\n")
    assert rule_tables.write(readme, rules, []) and not rule_tables.write(readme, rules, [])
