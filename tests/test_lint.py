"""The task linter passes on the shipped tasks and names a value nobody says."""

from __future__ import annotations

import json
import shutil

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS, REPO

from pytest_callm.cli import default_industries, main
from pytest_callm.authoring.lint import lint


def test_every_shipped_task_passes_the_linter():
    problems, count = lint([REPO / "tasks", EXAMPLE_TASKS], default_industries(REPO))
    assert count >= 9
    assert [str(p) for p in problems] == []


def test_the_shipped_training_tasks_pass_the_linter_as_generated():
    """Generated ids (gen-1-00017-C2) are their own form, and what the composed caller says is read as
    the verifier hears a caller: a model number spelled out, a card's digits ending a sentence, a day
    named without its year (417 problems before: none of them real)."""
    problems, count = lint([REPO / "training"], default_industries(REPO), suite=False)
    assert count == 180
    assert [str(p) for p in problems] == []


def copy_project(tmp_path, task_ids):
    shutil.copytree(EXAMPLE_PACK, tmp_path / "industries" / "vet_clinic")
    for task_id in task_ids:
        shutil.copytree(EXAMPLE_TASKS / task_id, tmp_path / "tasks" / "vet_clinic" / task_id)
    return tmp_path


def edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def test_a_value_nobody_says_is_named_with_its_json_path(tmp_path, monkeypatch):
    root = copy_project(tmp_path, ["C2-E2"])
    monkeypatch.chdir(root)
    # The key books S-103, a vaccine slot: no earlier call returned it and the caller never says it.
    edit(root / "tasks/vet_clinic/C2-E2/task.json",
         lambda d: d["exp_tool_calls"][3]["parameters"].update(slot_id="S-103"))
    main(["lock", str(root / "tasks")])
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert [str(p) for p in problems] == [
        f"{root}/tasks/vet_clinic/C2-E2/task.json: $.exp_tool_calls[3].parameters.slot_id: 'S-103' is not said by "
        "the caller, returned by an earlier expected call, fixed by the appointments prompt, or an enum value"]


def test_a_value_returned_by_an_earlier_call_is_obtainable(tmp_path, monkeypatch):
    root = copy_project(tmp_path, ["C2-E2"])
    monkeypatch.chdir(root)
    # S-101 is obtainable only because find_open_slots returned it; without that call it is not.
    edit(root / "tasks/vet_clinic/C2-E2/task.json", lambda d: (d["exp_tool_calls"].pop(2), d.pop("traps")))
    main(["lock", str(root / "tasks")])
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert len(problems) == 1 and "'S-101' is not said by the caller" in str(problems[0])


def test_a_call_nobody_on_the_path_owns_is_reported(tmp_path):
    root = copy_project(tmp_path, ["C2-E1"])
    edit(root / "tasks/vet_clinic/C2-E1/task.json", lambda d: d["exp_tool_calls"].append(
        {"name": "list_appointments", "status": "ok"}))
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert any("list_appointments is not owned by an agent on the expected path" in str(p) for p in problems)


def test_an_id_that_contradicts_its_metadata_is_reported(tmp_path):
    root = copy_project(tmp_path, ["C2-E1"])
    edit(root / "tasks/vet_clinic/C2-E1/task.json", lambda d: d["metadata"].update(difficulty="hard"))
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert [p.message for p in problems] == ["'hard' does not match the id 'C2-E1'"]


def test_suite_composition_and_unique_ids_are_checked_when_the_pack_declares_a_suite(tmp_path):
    root = copy_project(tmp_path, ["C2-E1", "C2-E2"])
    edit(root / "industries/vet_clinic/pack.json", lambda d: d.update(
        suite={"categories": {"C2": "Appointments"}, "per_category": {"easy": 2, "medium": 1}}))
    shutil.copytree(root / "tasks/vet_clinic/C2-E1", root / "tasks/vet_clinic/copy-of-C2-E1")
    problems, _ = lint([root / "tasks"], [root / "industries"])
    messages = sorted(p.message for p in problems)
    assert messages == ["0 medium task(s) in category C2, expected 1", "3 easy task(s) in category C2, expected 2",
                        "task id C2-E1 is used by 2 files"]
    problems, _ = lint([root / "tasks"], [root / "industries"], suite=False)
    assert problems == []


def test_the_lint_command_exits_non_zero_on_problems(tmp_path, capsys, monkeypatch):
    root = copy_project(tmp_path, ["C2-E1"])
    monkeypatch.chdir(root)
    assert main(["lint", "tasks"]) == 0
    edit(root / "tasks/vet_clinic/C2-E1/task.json", lambda d: d["metadata"].update(difficulty="hard"))
    assert main(["lint", "tasks"]) == 1
    assert "1 task file(s), 1 problem(s)" in capsys.readouterr().out


def test_the_callm_command_fits_a_line_profile(tmp_path, capsys):
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text("\n".join(json.dumps(p) for p in [
        {"scripted": "My number is 206-555-0220.", "transcript": "my number is 206-555-0220"},
        {"scripted": "I was fired last week.", "transcript": "I was fired last week."},
    ] * 20) + "\n")
    assert main(["fit-line-profile", str(pairs), "-o", str(tmp_path / "profile.json")]) == 0
    assert "fitted 40 turns" in capsys.readouterr().out
    assert json.loads((tmp_path / "profile.json").read_text())["format"] == "callm-line-profile/1"


def test_an_alternative_the_kind_of_value_already_accepts_is_flagged(tmp_path):
    root = copy_project(tmp_path, ["C2-E2"])
    # verify_owner's phone is a `phone` value: "(503) 555-0142"-style spellings need no listing,
    # while another slot (a real alternative) is fine.
    def spell(d):
        d["exp_tool_calls"][1]["alternatives"] = {"phone": ["(" + d["exp_tool_calls"][1]["parameters"]["phone"][:3]
                                                            + ") " + d["exp_tool_calls"][1]["parameters"]["phone"][3:]]}
        d["exp_tool_calls"][3]["alternatives"] = {"slot_id": ["S-102"]}
    edit(root / "tasks/vet_clinic/C2-E2/task.json", spell)
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert len(problems) == 1, [str(p) for p in problems]
    assert problems[0].where == "$.exp_tool_calls[1].alternatives.phone[0]"
    assert "as a phone value; drop it (alternatives are for other values)" in problems[0].message


def test_a_required_or_forbidden_tool_left_optional_fails_the_linter(tmp_path):
    root = copy_project(tmp_path, ["C2-E1"])
    edit(root / "tasks/vet_clinic/C2-E1/task.json", lambda d: d.pop("forbidden_tools"))
    problems, _ = lint([root / "tasks"], [root / "industries"])
    assert [(p.where, p.message) for p in problems] == [
        ("$.forbidden_tools", "pack 'vet_clinic' declares 'send_records' required_or_forbidden: require it in "
                              "exp_tool_calls or list it here")]


def test_each_item_of_a_list_of_a_declared_kind_must_be_obtainable(tmp_path):
    # The healthcare waitlist takes a set of offices (kind: the office alias table). Here nobody
    # names Park Avenue any more (neither the caller nor the scheduling prompt), while White Plains
    # is still known (said, and returned by verify_patient): only that one item is reported.
    industries = tmp_path / "industries"
    shutil.copytree(REPO / "industries" / "healthcare", industries / "healthcare")
    task = tmp_path / "tasks" / "healthcare" / "C1-M4" / "task.json"
    shutil.copytree(REPO / "tasks" / "healthcare" / "C1-M4", task.parent)
    assert lint([task.parent], [industries], suite=False)[0] == []
    park = ("Park Ave", "Midtown")
    prompt = industries / "healthcare" / "prompts" / "scheduling.md"
    prompt.write_text("".join(line for line in prompt.read_text().splitlines(keepends=True)
                              if not any(p in line for p in park)))
    task.write_text(task.read_text().replace("Park Avenue", "the other office"))
    edit(task, lambda d: d["exp_tool_calls"][3]["parameters"].update(offices=["White Plains", "Park Avenue"]))
    problems, _ = lint([task.parent], [industries], suite=False)
    assert [p.where for p in problems] == ["$.exp_tool_calls[3].parameters.offices[1]"]


def test_the_linter_counts_the_tasks_with_no_expected_handoff_per_pack(tmp_path):
    root = copy_project(tmp_path, ["C2-E1", "C2-E2"])  # opening hours at reception; a booking
    notes: list[str] = []
    lint([root / "tasks"], [root / "industries"], suite=False, notes=notes)
    assert notes == ["tasks with no expected handoff: 1 (vet_clinic 1)"]


def test_a_route_that_cannot_be_played_is_reported_at_its_json_path(tmp_path):
    root = copy_project(tmp_path, ["C2-E2"])
    path = root / "tasks" / "vet_clinic" / "C2-E2" / "task.json"
    edit(path, lambda d: d.update(routes=[{"id": "other", "exp_tool_calls": [{"name": "send_records"}],
                                          "exp_handoff_path": ["appointments"],
                                          "exp_db_state": d["exp_db_state"]}]))
    problems, _ = lint([root / "tasks"], [root / "industries"], suite=False)
    assert [p.where for p in problems] == ["$.routes[0].exp_tool_calls"]
    assert "send_records" in problems[0].message


def test_a_script_says_a_value_only_as_a_caller_would_be_heard_saying_it():
    """What the training set's lint now accepts, and what it still refuses: digits inside a longer
    number, and a yearless date pieced together from unrelated numbers, are not said."""
    import datetime as dt

    from pytest_callm.authoring.lint import _heard_in_script, _in_text, _spoken
    from pytest_callm.normalize import ValueKinds
    from pytest_callm.scoring.heard import Heard

    today, kinds = dt.date(2026, 10, 20), ValueKinds({}, {})

    def said(text: str, value: str, kind: str | None) -> bool:
        return _in_text(value, _spoken(text), kinds, kind) or _heard_in_script(value, kind, Heard([text]), today)

    assert said("The ZIP is 33173 and the card ends in 8564.", "8564", None)
    assert not said("The ZIP is 33173 and the card ends in 8564.", "3317", None)
    assert said("It's K E dash 1 0 4 5 4 9.", "KE-104549", "identifier")
    assert not said("It's K E dash 1 0 4 5 4 9.", "KE-104548", "identifier")
    assert said("Could you move it to Tuesday, October twenty-seventh?", "2026-10-27", "date")
    assert not said("I have 10 questions and 27 boxes.", "2026-10-27", "date")
    assert not said("Could you move it to Tuesday, October twenty-seventh?", "2028-10-27", "date")
