"""`callm split-check` keeps training tasks out of the locked suite; `callm export` writes tasks as dataset rows."""

from __future__ import annotations

import itertools
import json
import shutil

import pytest

from conftest import REPO
from pytest_callm.cli import main
from pytest_callm.rl.environment import CallEnvironment
from pytest_callm.rl.splits import NEAR_IDENTICAL, SAME_SCENARIO, closest_keys, load_tasks
from pytest_callm.task.pack import PackRegistry, default_industries

LOCKED = REPO / "tasks"
SAMPLE = LOCKED / "legal" / "C4-H3" / "task.json"  # Clara Whitman's employment intake


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """A lab's training folder beside the project (run from the project, whose tasks/ are the evaluation set)."""
    monkeypatch.chdir(REPO)
    return tmp_path / "train"


def split_check(capsys, *args) -> tuple[int, list[str]]:
    code = main(["split-check", *map(str, args)])
    return code, capsys.readouterr().out.splitlines()


def copy_as(lab, source, task_id: str, change=lambda data: None):
    data = json.loads(source.read_text())
    data["task_name"] = f"{task_id}: {data['task_name'].split(': ', 1)[1]}"
    change(data)
    path = lab / data["metadata"]["industry"] / task_id / "task.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_a_locked_task_copied_under_a_new_id_is_refused_naming_both_files(lab, capsys):
    copy = copy_as(lab, SAMPLE, "C4-H21")
    code, lines = split_check(capsys, lab)
    assert code == 2
    assert lines == [
        f"nearest: {copy}: tasks/legal/C4-H3/task.json (legal/C4-H3), masked distance 0.00",
        f"clash: {copy}: answer key is near-identical (similarity 1.00 >= {NEAR_IDENTICAL}) to that of "
        "tasks/legal/C4-H3/task.json (legal/C4-H3)",
        f"clash: {copy}: scenario with identities masked is too close (masked similarity 1.00 >= {SAME_SCENARIO}, "
        "distance 0.00) to tasks/legal/C4-H3/task.json (legal/C4-H3)",
        "1 training task(s) against 180 evaluation task(s): 2 clash(es), 0 file(s) that do not load; refused; "
        "masked distance to the nearest evaluation task: least 0.00, median 0.00"]


def respell_phone(data):
    data["exp_tool_calls"][0]["parameters"]["phone"] = "+1 (206) 555-0220"  # lookup_caller's phone


def test_a_renamed_copy_with_a_value_respelled_is_still_a_copy(lab, capsys):
    copy = copy_as(lab, SAMPLE, "T7-H1", respell_phone)
    code, lines = split_check(capsys, lab)
    assert code == 2
    assert lines[1] == (f"clash: {copy}: answer key is near-identical (similarity 1.00 >= {NEAR_IDENTICAL}) to that "
                        "of tasks/legal/C4-H3/task.json (legal/C4-H3)")


def test_a_copy_with_one_value_changed_is_still_near_identical(lab, capsys):
    def packet_by_text(data):
        data["exp_tool_calls"][9]["parameters"]["channel"] = "text"

    copy_as(lab, SAMPLE, "T7-H1", packet_by_text)
    code, lines = split_check(capsys, lab)
    assert code == 2 and "(similarity 0.92 >= 0.8)" in lines[1]  # 23 of 25 items shared


def renamed(data):
    """What `callm generate` made before issue 38: the caller, her phone, the other side and the
    incident date redrawn everywhere they appear; the scenario kept."""
    text = json.dumps(data)
    for old, new in [("Clara Whitman", "Maren Holloway"), ("Clara", "Maren"), ("Whitman", "Holloway"),
                     ("206-555-0220", "206-555-0187"), ("2065550220", "2065550187"), ("Harborline", "Tamarack"),
                     ("2026-04-05", "2026-04-13"), ("April fifth", "April thirteenth"), ("April 5", "April 13")]:
        text = text.replace(old, new)
    data.clear()
    data.update(json.loads(text))


def test_a_renamed_copy_escapes_the_key_comparison_but_not_the_masked_one(lab, capsys):
    copy = copy_as(lab, SAMPLE, "T7-H1", renamed)
    code, lines = split_check(capsys, lab)
    assert code == 2
    assert not any("answer key is near-identical" in line for line in lines)  # five of the key's values differ
    assert lines[:2] == [
        f"nearest: {copy}: tasks/legal/C4-H3/task.json (legal/C4-H3), masked distance 0.00",
        f"clash: {copy}: scenario with identities masked is too close (masked similarity 1.00 >= {SAME_SCENARIO}, "
        "distance 0.00) to tasks/legal/C4-H3/task.json (legal/C4-H3)"]


def test_a_copy_of_another_route_of_a_locked_task_is_refused_naming_the_route(lab, capsys):
    def take_the_route(data):  # the other route's key, written as the whole answer key of a new task
        route, = data.pop("routes")
        data.update(exp_tool_calls=route["exp_tool_calls"], exp_db_state=route["exp_db_state"], traps=[])

    copy = copy_as(lab, LOCKED / "customer_support" / "C5-H4" / "task.json", "T7-H1", take_the_route)
    code, lines = split_check(capsys, lab)
    assert code == 2
    assert lines[1] == (f"clash: {copy}: answer key is near-identical (similarity 1.00 >= {NEAR_IDENTICAL}) to route "
                        "cancel-and-rejoin of tasks/customer_support/C5-H4/task.json (customer_support/C5-H4)")


def test_the_locked_suite_against_itself_is_refused_task_by_task(lab, capsys):
    code, lines = split_check(capsys, "tasks", "--eval", "tasks")
    assert code == 2
    ids = [line for line in lines if "is also the evaluation task" in line]
    keys = [line for line in lines if "is near-identical" in line]
    assert len(ids) == 180 and len(keys) == 180 + 8  # each task itself, and the four pairs that share a key
    assert "clash: tasks/legal/C4-H3/task.json: task id C4-H3 is also the evaluation task " \
           "tasks/legal/C4-H3/task.json (legal/C4-H3)" in ids
    scenarios = [line for line in lines if "scenario with identities masked" in line]
    assert len(scenarios) == 180 and all("masked similarity 1.00" in line for line in scenarios)  # each its own nearest
    assert lines[-1] == "180 training task(s) against 180 evaluation task(s): 548 clash(es), 0 file(s) that do not " \
                        "load; refused; masked distance to the nearest evaluation task: least 0.00, median 0.00"


def test_a_new_task_written_with_the_authoring_tools_passes(lab, capsys):
    assert main(["new-task", str(lab / "legal" / "C4-H")]) == 0  # numbered in its own folder: C4-H1
    capsys.readouterr()
    code, lines = split_check(capsys, lab)
    assert code == 2 and lines[1].startswith(f"clash: {lab}/legal/C4-H1/task.json: task id C4-H1 is also the "
                                             "evaluation task tasks/legal/C4-H1/task.json")
    shutil.rmtree(lab / "legal" / "C4-H1")

    assert main(["new-task", str(lab / "legal" / "C4-H11")]) == 0  # numbered past the locked suite's
    path = lab / "legal" / "C4-H11" / "task.json"
    write_premises_intake(path)
    assert main(["lock", str(path)]) == 0
    assert main(["lint", str(path)]) == 0
    capsys.readouterr()
    code, lines = split_check(capsys, lab)
    assert code == 0 and lines[-1].startswith(
        "1 training task(s) against 180 evaluation task(s): 0 clash(es), 0 file(s) that do not load; no leak found; "
        "masked distance to the nearest evaluation task: least ")
    assert lines[0].startswith(f"nearest: {path}: tasks/legal/")  # another premises intake, but not this one


def write_premises_intake(path):
    """What an author writes into the template: a caller and an answer key of their own."""
    data = json.loads(path.read_text())
    intake = {"state": "GA", "practice_area": "premises_liability"}
    data.update({
        "task_name": "C4-H11: Premises intake in Georgia with the packet by text",
        "customer_name": "Nadia Brooks",
        "intent": "Open with exactly: \"I slipped on a wet floor at a grocery store and broke my wrist.\" Your name "
                  "is Nadia Brooks, your phone number 404-555-0163. It happened in Georgia on May twentieth, twenty "
                  "twenty six, at Peachtree Grocers. If offered the packet, say exactly: \"By text, please.\"",
        "traits": [{"trait_name": "full_name", "value": "Nadia Brooks"},
                   {"trait_name": "phone", "value": "404-555-0163"}, {"trait_name": "state", "value": "GA"},
                   {"trait_name": "incident_date", "value": "2026-05-20"},
                   {"trait_name": "opposing_party", "value": "Peachtree Grocers"}],
        "exp_handoff_path": ["transfer_to_screening", "transfer_to_intake"],
        "exp_tool_calls": [
            {"name": "lookup_caller", "parameters": {"full_name": "Nadia Brooks", "phone": "404-555-0163"},
             "status": "ok"},
            {"name": "transfer_to_screening"},
            {"name": "check_conflict", "parameters": {"opposing_party": "Peachtree Grocers"}, "status": "ok"},
            {"name": "check_practice_area", "parameters": {"practice_area": "premises_liability"}, "status": "ok"},
            {"name": "check_jurisdiction", "parameters": intake, "status": "ok"},
            {"name": "calculate_filing_deadline", "parameters": {**intake, "incident_date": "2026-05-20"},
             "status": "ok"},
            {"name": "transfer_to_intake"},
            {"name": "record_intake", "parameters": {**intake, "incident_date": "2026-05-20",
                                                     "summary": "Slipped on a wet floor, broken wrist."},
             "status": "ok"},
            {"name": "send_intake_packet", "parameters": {"channel": "text"}, "status": "ok"}],
        "scripted_responses": [{"match_type": "offer", "match_phrase": "packet", "response_type": "say",
                                "response_value": "By text, please."}],
    })
    path.write_text(json.dumps(data, indent=2))


def test_a_training_task_that_does_not_load_is_named_with_its_field(lab, capsys):
    def unknown_tool(data):
        data["exp_tool_calls"][2]["name"] = "check_conflicts"

    copy = copy_as(lab, SAMPLE, "T7-H1", unknown_tool)
    code, lines = split_check(capsys, lab)
    assert code == 2
    assert lines[0] == (f"does not load: {copy}: $.exp_tool_calls[2].name: unknown tool 'check_conflicts' of "
                        "pack 'legal'")
    code, lines = split_check(capsys, lab / "missing")
    assert code == 2 and lines[0] == f"does not load: {lab / 'missing'}: no such file or folder"


def test_the_threshold_lies_above_every_pair_of_distinct_locked_tasks_but_those_that_share_their_facts(monkeypatch):
    """The figures splits.py gives for its threshold, measured again on the locked suite."""
    monkeypatch.chdir(REPO)
    tasks, problems = load_tasks([LOCKED], PackRegistry(default_industries(REPO)))
    assert not problems and len(tasks) == 180
    scores = {(a.name, b.name): closest_keys(a, b)[0]
              for a, b in itertools.combinations(tasks, 2) if a.task.industry == b.task.industry}
    assert len(scores) == 5310
    close = {pair for pair, score in scores.items() if score >= NEAR_IDENTICAL}
    assert close == {("customer_support/C2-E1", "customer_support/R-M1"),
                     ("customer_support/C2-E2", "customer_support/R-H2"),
                     ("healthcare/C5-M3", "healthcare/R-E2"), ("legal/C1-M4", "legal/R-H2")}
    assert max(score for pair, score in scores.items() if pair not in close) == pytest.approx(0.714, abs=1e-3)


# --- export ------------------------------------------------------------------------------------

def export(tmp_path, name, *paths) -> list[dict]:
    out = tmp_path / name
    assert main(["export", *map(str, paths), "--out", str(out)]) == 0
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def test_the_locked_suite_exports_one_row_per_task_with_stable_distinct_hashes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    rows = export(tmp_path, "a.jsonl", "tasks")
    assert (tmp_path / "a.jsonl").read_bytes() == (export(tmp_path, "b.jsonl", "tasks") and
                                                  (tmp_path / "b.jsonl").read_bytes())
    assert len(rows) == 180 and len({r["task"] for r in rows}) == 180
    assert len({r["answer_key_hash"] for r in rows}) == 180  # also the two tasks whose keys are the same
    row = next(r for r in rows if r["task"] == "legal/C4-H3")
    assert row["info"] == {"industry": "legal", "task_id": "C4-H3", "category": "Intake and documents",
                           "category_slug": "C4", "difficulty": "hard", "seeds": [1, 2, 3, 4, 5],
                           "handoff_path_length": 2, "entry_agent": "reception"}
    text = (tmp_path / "a.jsonl").read_text()
    for answer in ("Harborline", "206-555-0220", "exp_tool_calls", "Clara Whitman"):  # no key, no caller facts
        assert answer not in text


def test_the_hash_follows_the_answer_key_not_the_file_layout(lab, tmp_path, capsys):
    def reordered(data):
        data["exp_tool_calls"][0] = dict(reversed(list(data["exp_tool_calls"][0].items())))
        data["intent"] += " (the caller's script is not the answer key)"

    def packet_by_text(data):
        data["exp_tool_calls"][9]["parameters"]["channel"] = "text"

    same = copy_as(lab / "a", SAMPLE, "C4-H3", reordered)
    changed = copy_as(lab / "b", SAMPLE, "C4-H3", packet_by_text)
    locked, = [r["answer_key_hash"] for r in export(tmp_path, "l.jsonl", SAMPLE)]
    assert export(tmp_path, "s.jsonl", same)[0]["answer_key_hash"] == locked
    assert export(tmp_path, "c.jsonl", changed)[0]["answer_key_hash"] != locked


def test_the_prompt_is_what_the_environment_shows_before_the_caller_speaks(tmp_path, monkeypatch):
    monkeypatch.chdir(REPO)
    row, = export(tmp_path, "one.jsonl", SAMPLE)
    with CallEnvironment([SAMPLE], line="clean") as env:
        _, first = env.reset(row["task"], seed=row["info"]["seeds"][0])
    obs = first.observation
    assert row["prompt"] == [{"role": "system", "content": obs.system_prompt}, obs.messages[0]]
    assert obs.messages[1] == {"role": "user", "content": "I was fired after I reported safety violations."}
    assert row["tools"] == obs.tools  # the OpenAI schemas, as the model is sent them


def test_export_refuses_files_that_do_not_load_or_share_a_name(lab, tmp_path, capsys):
    copy_as(lab / "a", SAMPLE, "C4-H3")
    copy_as(lab / "b", SAMPLE, "C4-H3")
    assert main(["export", str(lab), "--out", str(tmp_path / "x.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "task legal/C4-H3 is also" in err and "nothing written" in err
    assert not (tmp_path / "x.jsonl").exists()
