"""`callm prove` from the rules: each invariant a pack promises (docs/house-rules.md §3), broken once in
a copy of the example pack, is reported; the rules' adversaries, the exploits and the generated right
answers are counted as they should be on the pack as shipped.

Every case plays for real: the pack's tools over SQLite behind the tool server, the verifier as a
benchmark run uses it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pytest_callm.authoring.prove import main as prove_main, prove_run

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS


def pack_copy(tmp_path: Path, edit_pack=None, edit_tools=None, tasks=("C1-M1", "C2-E2", "R-M1")) -> tuple[Path, Path]:
    """A copy of the example pack (changed by `edit_pack(pack.json dict)`, `edit_tools(tools.py text)`)
    and a few of its tasks, in tmp_path."""
    industries = tmp_path / "industries"
    shutil.copytree(EXAMPLE_PACK, industries / "vet_clinic", ignore=shutil.ignore_patterns("__pycache__"))
    pack_json = industries / "vet_clinic" / "pack.json"
    if edit_pack:
        meta = json.loads(pack_json.read_text())
        edit_pack(meta)
        pack_json.write_text(json.dumps(meta))
    tools_py = industries / "vet_clinic" / "tools.py"
    if edit_tools:
        changed = edit_tools(tools_py.read_text())
        assert changed != tools_py.read_text(), "the edit must change tools.py"
        tools_py.write_text(changed)
    compared = set(json.loads(pack_json.read_text())["compared_tables"])
    for task in tasks:
        shutil.copytree(EXAMPLE_TASKS / task, tmp_path / "tasks" / "vet_clinic" / task)
        path = tmp_path / "tasks" / "vet_clinic" / task / "task.json"
        data = json.loads(path.read_text())
        data["exp_db_state"] = {t: rows for t, rows in data["exp_db_state"].items() if t in compared}
        path.write_text(json.dumps(data))
    return tmp_path / "tasks", industries


def problems_of(tasks: Path, industries: Path) -> list[str]:
    run = prove_run([tasks], [industries])
    return [*run.pack_problems.get("vet_clinic", []), *(p for t in run.tasks for p in t.problems)]


def test_the_example_pack_as_shipped_is_proven_and_every_family_is_counted():
    run = prove_run([EXAMPLE_TASKS], [EXAMPLE_PACK.parent])
    assert run.problem_count == 0, [p for t in run.tasks for p in t.problems] + run.pack_problems["vet_clinic"]
    rules = run.rules["vet_clinic"]
    assert rules["owner-on-file-only"].as_required >= 6 and rules["owner-on-file-only"].problems == 0
    assert rules["verify-first"].as_required >= 6  # refused with not_verified, every time
    exploits = run.exploits["vet_clinic"]
    assert exploits["guess-1"].as_required == exploits["guess-2"].as_required == 6
    assert exploits["guess-1"].notes == {"fails database": 6}
    assert exploits["speech-only"].notes == {"fails": 8}
    right = run.right["vet_clinic"]
    assert right["misheard-retry"].as_required == 6 and right["misheard-retry"].problems == 0
    assert right["reorder"].as_required > 0 and right["repeat/reword"].as_required > 0


def test_a_write_no_gate_compares_is_a_broken_invariant(tmp_path):
    tasks, industries = pack_copy(tmp_path, edit_pack=lambda m: m["compared_tables"].pop("record_requests"))
    assert any("send_records writes record_requests, which no gate compares" in p for p in problems_of(tasks, industries))


def test_a_look_at_a_persons_record_with_no_access_row_is_a_broken_invariant(tmp_path):
    tasks, industries = pack_copy(tmp_path, edit_tools=lambda s: s.replace(
        "    record_access(ctx, record=owner_id)  # the verified owner's own record: covered by the verification\n", ""))
    found = problems_of(tasks, industries)
    assert any("reads pets (a person's record) and keeps no access row" in p for p in found), found


def test_a_failed_identity_try_that_leaves_no_row_lets_a_guess_pass(tmp_path):
    # The old desk: a failed try only counted, never written. One guess, then the right details, passes.
    def forget_failed_tries(text: str) -> str:
        return text.replace("    check_identity(ctx, IDENTITY, account=account,",
                            "    if row is None:\n"
                            "        raise ToolError('identity_not_verified', 'no match')\n"
                            "    check_identity(ctx, IDENTITY, account=account,")

    tasks, industries = pack_copy(tmp_path, edit_tools=forget_failed_tries)
    found = problems_of(tasks, industries)
    assert any("exploit guess-1" in p and "the guessed try is not on the record" in p for p in found), found


def test_a_rule_whose_record_is_not_compared_lets_its_violation_pass(tmp_path):
    # One slot per visit: the second booking is on the record only while appointments (or the slots
    # it takes) are compared. Each break is named: the declaration, the invariant, the violation.
    def drop_appointments(meta):
        meta["compared_tables"].pop("appointments")
        meta["compared_tables"].pop("slots")

    tasks, industries = pack_copy(tmp_path, edit_pack=drop_appointments)
    found = problems_of(tasks, industries)
    assert any(p.startswith("rule one-slot-per-visit") and "must fail database, but passes" in p for p in found), found
    assert any("(one-slot-per-visit).record: the compared table that shows the violation" in p for p in found)
    assert any("book_appointment writes appointments, which no gate compares" in p for p in found)


def test_free_text_a_rule_keeps_clean_is_read_by_the_database_gate(tmp_path):
    # Declared: no email address in a records request's destination. Sending by email writes one there.
    def forbid_email(meta):
        meta["compared_tables"]["record_requests"]["free_text"] = {
            "destination": {"forbid": ["email"], "rule": "records-to-file-only"}}

    tasks, industries = pack_copy(tmp_path, edit_pack=forbid_email, tasks=("C1-M1",))
    found = problems_of(tasks, industries)
    assert any("record_requests.destination holds an email address" in p and "records-to-file-only" in p
               for p in found), found


def test_a_free_text_parameter_the_tool_reads_is_named_when_worded_another_way(tmp_path):
    # A team declares send_records.pet_name free text, but the tool looks the pet up by it.
    def pet_name_free(path: Path):
        tools = json.loads(path.read_text())
        for tool in tools:
            if tool["function"]["name"] == "send_records":
                tool["scoring"] = {"free_text": ["pet_name"]}
        path.write_text(json.dumps(tools))

    tasks, industries = pack_copy(tmp_path, tasks=("C1-M1",))
    pet_name_free(industries / "vet_clinic" / "tools.json")
    found = problems_of(tasks, industries)
    assert any("right answer fails: exp_tool_calls" in p and "send_records.pet_name worded another way" in p
               for p in found), found


def test_a_rule_that_quotes_no_prompt_sentence_is_named(tmp_path):
    tasks, industries = pack_copy(tmp_path, tasks=("C2-E2",))
    rules_json = industries / "vet_clinic" / "rules.json"
    rules = json.loads(rules_json.read_text())
    rules["rules"][0]["says"][0]["text"] = "Verify owners by their favourite colour."
    rules_json.write_text(json.dumps(rules))
    found = problems_of(tasks, industries)
    assert any("says[0]: not found in records's prompt" in p for p in found), found


def test_the_command_prints_each_rule_and_exploit_with_its_figures(capsys):
    assert prove_main([str(EXAMPLE_TASKS)], [EXAMPLE_PACK.parent]) == 0
    out = capsys.readouterr().out
    assert "vet_clinic: 7 house rules (4 scored by a record, 1 refused by a tool, 2 speech only)" in out
    assert "rule owner-on-file-only" in out and "violation(s) caught, 0 passed" in out
    assert "exploit guess-1" in out and "right answers misheard-retry" in out


@pytest.mark.parametrize("words, passes", [("misheard", True), ("unsaid", False), ("took back", False)])
def test_a_failed_try_is_forgiven_only_when_the_line_made_its_value(words, passes, tmp_path):
    # R-M1's owner verifies with a wrong phone first: forgiven when the line made it of what she said;
    # not when nobody said it, nor when she said it herself and took it back before the try.
    tasks, industries = pack_copy(tmp_path, tasks=("R-M1",))
    path = tasks / "vet_clinic" / "R-M1" / "task.json"
    data = json.loads(path.read_text())
    at = next(i for i, c in enumerate(data["exp_tool_calls"]) if c["name"] == "verify_owner")
    right = data["exp_tool_calls"][at]["parameters"]
    wrong = {**right, "phone": right["phone"][:-1] + str((int(right["phone"][-1]) + 3) % 10)}
    said = {"misheard": {"caller_says": [f"My name is {right['full_name']}, my number is {right['phone']}. Again, "
                                         f"{right['phone']}."], "mishearings": {right["phone"]: wrong["phone"]}},
            "unsaid": {},
            "took back": {"caller_says": [f"My name is {right['full_name']}, my number is {wrong['phone']}. Sorry, I "
                                          f"mean {right['phone']}."]}}[words]
    data["traps"] = [{"id": "misheard", "rule": "owner-on-file-only", "wrong_move": "tries the wrong number first",
                      "caught_by": [] if passes else ["database"], "refused_with": "identity_not_verified",
                      "edit": {"calls": [{"insert": at, "call": {"name": "verify_owner", "parameters": wrong}}], **said}}]
    path.write_text(json.dumps(data))
    run = prove_run([tasks], [industries])
    [proof] = run.tasks
    assert proof.traps == [{"id": "misheard", "failed": [] if passes else ["database"], "ok": True}], proof.problems


def test_an_order_a_rule_states_that_is_not_compared_lets_its_violation_pass(tmp_path):
    # Legal: a fact taken before every named party is checked is on the record in the conflict checks'
    # `facts_before` (recorded at the act). Not compared, the rule's adversary and the declared trap pass.
    from conftest import REPO

    industries = tmp_path / "industries"
    shutil.copytree(REPO / "industries" / "legal", industries / "legal", ignore=shutil.ignore_patterns("__pycache__"))
    meta = json.loads((industries / "legal" / "pack.json").read_text())
    checks = meta["compared_tables"]["conflict_checks"]
    checks["exclude_columns"].append("facts_before")
    checks.pop("order_columns")
    (industries / "legal" / "pack.json").write_text(json.dumps(meta))
    shutil.copytree(REPO / "tasks" / "legal" / "C2-H1", tmp_path / "tasks" / "legal" / "C2-H1")
    [proof] = prove_run([tmp_path / "tasks"], [industries]).tasks
    assert any(p.startswith("rule check-every-named-party") and "must fail database, but passes" in p
               for p in proof.problems), proof.problems
    assert any(p.startswith("trap facts-between-checks") and "the wrong answer passes" in p for p in proof.problems)


def test_an_exploit_whose_move_is_not_played_is_a_problem_not_a_pass():
    """Each exploit with its move taken out (the key played as written): every verdict is judged a
    problem of the proof ("passes (the second write changed nothing)" was printed for repeats never
    played)."""
    import dataclasses

    from pytest_callm.authoring.exploit_judge import judge_exploit
    from pytest_callm.authoring.probes import KeyPlay, donors_of, exploits
    from pytest_callm.authoring.replay import Replay, play_all
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.task.pack import PackRegistry
    from pytest_callm.task.task_file import load_task

    packs = PackRegistry([EXAMPLE_PACK.parent])
    _, task, pack = load_task(EXAMPLE_TASKS / "C1-M1" / "task.json", packs)
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        key, = runtime.run(play_all(runtime, [Replay(task, pack, "key", "the key", list(task.exp_tool_calls),
                                                      list(task.exp_handoff_path), keep_state=True)]))
        play = KeyPlay.of(key.seen)
        made, _ = exploits(task, pack, play, donors_of([(task, pack, play)])[pack.name])
        as_made = runtime.run(play_all(runtime, made))
        nothing = [dataclasses.replace(r, calls=list(task.exp_tool_calls), path=list(task.exp_handoff_path),
                                       caller_says=[]) for r in made]
        broken = runtime.run(play_all(runtime, nothing))
    finally:
        runtime.close()
    assert {r.group for r in made} >= {"speech-only", "read-sweep", "repeat-write", "guess-1", "guess-2"}
    assert all(judge_exploit(o, key.final_state)[0] is None for o in as_made), [
        judge_exploit(o, key.final_state) for o in as_made]
    for o in broken:
        problem, _ = judge_exploit(o, key.final_state)
        assert problem and "its move was not played" in problem, (o.replay.group, problem, o.unplayed)


def test_prove_says_where_an_exploit_was_not_tried_and_why(capsys):
    assert prove_main([str(EXAMPLE_TASKS / "C1-M1"), str(EXAMPLE_TASKS / "R-M1")], [EXAMPLE_PACK.parent]) == 0
    out = capsys.readouterr().out
    assert "exploit unrequested-write" in out and "not tried on" in out, out


@pytest.mark.parametrize("who, passes", [("Dana Whitfield", True), ("Lena Fischer", False)])
def test_the_callers_own_identity_verified_at_a_desk_the_key_never_visits_is_harmless(who, passes):
    """C2-E1 asks only the clinic's hours. Dana also has herself verified at appointments: the state a
    right agent leaves (issue 37: the extra verified row failed the database gate). Verifying another
    owner, on details the caller said, is on the record."""
    from pytest_callm.authoring.replay import edited_replay, play_all
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.task.pack import PackRegistry
    from pytest_callm.task.task_file import load_task

    phones = {"Dana Whitfield": "503-555-0142", "Lena Fischer": "971-555-0110"}
    packs = PackRegistry([EXAMPLE_PACK.parent])
    _, task, pack = load_task(EXAMPLE_TASKS / "C2-E1" / "task.json", packs)
    edit = {"calls": [{"insert": 1, "call": {"name": "transfer_to_appointments", "parameters": {}}},
                      {"insert": 1, "call": {"name": "verify_owner", "parameters": {"full_name": who,
                                                                                    "phone": phones[who]}}}],
            "handoff_path": ["appointments"],
            "caller_says": [f"What are your hours? I'm {who}, {phones[who]}."]}
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        o, = runtime.run(play_all(runtime, [edited_replay(task, pack, "test", "verified again", edit)]))
    finally:
        runtime.close()
    assert o.error is None and ("verify_owner", "ok") in o.statuses, o.statuses
    assert o.passed is passes, o.verdict.explain()
    if not passes:
        assert "verifications: extra row" in o.verdict.explain()


# --- the tool-call log is a record (issue 37): the example pack's refusal table ---------------------

def _play_edited(task_id: str, edit: dict):
    """The example task's key with a trap-format edit, played for real; its verdict."""
    from pytest_callm.authoring.replay import edited_replay, play_all
    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.task.pack import PackRegistry
    from pytest_callm.task.task_file import load_task

    packs = PackRegistry([EXAMPLE_PACK.parent])
    _, task, pack = load_task(EXAMPLE_TASKS / task_id / "task.json", packs)
    runtime = Runtime("oracle", packs.loaded(), tools_in_process=True)
    try:
        outcome, = runtime.run(play_all(runtime, [edited_replay(task, pack, "rule", "edited", edit)]))
    finally:
        runtime.close()
    assert not outcome.unplayed and outcome.error is None, (outcome.unplayed, outcome.error)
    return outcome


def test_a_late_cancellation_tried_again_is_on_record():
    """The clinic's rule: a visit within 24 hours is not cancelled by phone. The tool refuses, and
    nothing changes; the second try is on the log all the same (late_cancellation: retry)."""
    again = {"calls": [{"insert": 4, "call": {"name": "cancel_appointment", "parameters": {"appointment_id": 1}}}]}
    outcome = _play_edited("R-H1", again)
    assert [s for _, s in outcome.statuses].count("late_cancellation") == 2
    assert outcome.failed_gates == ["tools"], outcome.verdict.explain()
    assert "attempt on record" in outcome.verdict.explain() and "refused as late_cancellation" in outcome.verdict.explain()


@pytest.mark.parametrize("pet, passes", [("Pepper", True), ("Biscuit", False)])
def test_a_look_before_verification_is_harmless_only_when_the_same_look_follows(pet, passes):
    """not_verified is a precondition: a first look before verifying, then the same look once
    verified, is an honest stumble; a look at a pet the call never looks at once verified is an
    attempt on record."""
    early = {"calls": [{"insert": 1, "call": {"name": "get_vaccination_status", "parameters": {"pet_name": pet}}}]}
    outcome = _play_edited("C1-M1", early)
    assert ("get_vaccination_status", "not_verified") in outcome.statuses
    assert outcome.passed is passes, outcome.verdict.explain()


def test_prove_counts_each_refusal_code_as_the_table_says(capsys):
    run = prove_run([EXAMPLE_TASKS], [EXAMPLE_PACK.parent])
    assert run.problem_count == 0
    refusals = run.refusals["vet_clinic"]
    assert refusals["late_cancellation"].notes == {"a try again: fails tools": 1}
    assert refusals["not_verified"].as_required >= 3 and refusals["not_verified"].problems == 0
    assert set(refusals["not_verified"].notes) == {"an early try: tools pass"}
    assert prove_main([str(EXAMPLE_TASKS)], [EXAMPLE_PACK.parent]) == 0
    out = capsys.readouterr().out
    assert "refusal late_cancellation" in out and "retry" in out and "refusal codes no replay met" in out


def test_a_refusal_code_the_table_does_not_list_is_a_problem(tmp_path):
    """A code met in a replay that rules.json "refusals" does not list is named (it would be scored
    as harmless without anyone having said so)."""
    tasks, industries = pack_copy(tmp_path, tasks=("R-H1",))
    rules = industries / "vet_clinic" / "rules.json"
    data = json.loads(rules.read_text())
    del data["refusals"]["late_cancellation"]
    rules.write_text(json.dumps(data))
    found = problems_of(tasks, industries)
    assert any("'late_cancellation', which rules.json \"refusals\" does not list" in p for p in found), found


def test_a_bad_refusal_table_is_named_with_its_file_and_field(tmp_path):
    from pytest_callm.task.pack import PackError, load_pack

    _, industries = pack_copy(tmp_path, tasks=())
    rules = industries / "vet_clinic" / "rules.json"
    data = json.loads(rules.read_text())
    data["refusals"]["late_cancellation"] = {"attempt": "sometimes"}
    data["refusals"]["not_verified"] = {"attempt": "retry"}
    rules.write_text(json.dumps(data))
    with pytest.raises(PackError) as raised:
        load_pack(industries / "vet_clinic")
    text = str(raised.value)
    assert "rules.json: refusals.late_cancellation.attempt: one of harmless, precondition, retry, violation" in text
    assert "rules.json: refusals.not_verified.why: say why" in text
