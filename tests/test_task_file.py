"""Task files: schema validation, checks against the pack, and the typed record they build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_callm.task import task_file
from pytest_callm.task.task_file import TaskError, build_task, industry_of, read_task_json

EXAMPLE_TASKS = Path(__file__).resolve().parent.parent / "examples" / "tasks" / "vet_clinic"
EXAMPLE_IDS = sorted(p.parent.name for p in EXAMPLE_TASKS.glob("*/task.json"))


def example(task_id: str) -> dict:
    return json.loads((EXAMPLE_TASKS / task_id / "task.json").read_text(encoding="utf-8"))


def write(tmp_path: Path, data, name: str = "task.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2), encoding="utf-8")
    return path


def assert_names_file_and_json_path(err: TaskError, path: Path) -> None:
    """Every problem is one line `<file>: <JSON path or JSON position>: <what is wrong>`."""
    assert err.problems
    lines = str(err).splitlines()
    assert lines == [f"{path}: {p}" for p in err.problems]
    for problem in err.problems:
        assert problem.startswith(("$", "invalid JSON at line ")), problem


def schema_error(tmp_path: Path, data) -> TaskError:
    path = write(tmp_path, data)
    with pytest.raises(TaskError) as info:
        read_task_json(path)
    err = info.value
    assert err.path == path
    assert_names_file_and_json_path(err, path)
    return err


def pack_error(tmp_path: Path, data: dict, pack) -> TaskError:
    path = write(tmp_path, data)
    data = read_task_json(path)  # the schema is satisfied; only the pack check fails
    with pytest.raises(TaskError) as info:
        build_task(path, data, pack)
    err = info.value
    assert_names_file_and_json_path(err, path)
    return err


# --- the examples ------------------------------------------------------------------------------

def test_there_are_example_tasks():
    assert len(EXAMPLE_IDS) >= 8


@pytest.mark.parametrize("task_id", EXAMPLE_IDS)
def test_example_task_loads_and_builds(task_id, vet_pack):
    path = EXAMPLE_TASKS / task_id / "task.json"
    task = build_task(path, read_task_json(path), vet_pack)
    assert task.task_id == task_id
    assert task.industry == "vet_clinic"
    assert task.title
    assert task.exp_tool_calls
    assert all(a in vet_pack.agents for a in task.exp_handoff_path)
    assert set(task.exp_db_state) == set(vet_pack.compared_tables)


def test_built_task_carries_metadata_and_expected_calls(load_task):
    task = load_task("C2-M1")
    assert task.title == "Cancel Biscuit's dental cleaning"
    assert task.category == "Appointments and clinic info"
    assert task.category_slug == "C2"
    assert task.difficulty == "medium"
    assert task.customer_name == "Dana Whitfield"
    assert task.forbidden_tools == ["send_records"]
    assert task.exp_handoff_path == ["appointments"]
    assert [c.name for c in task.exp_tool_calls] == [
        "transfer_to_appointments", "verify_owner", "list_appointments", "cancel_appointment"]
    assert task.exp_tool_calls[3].parameters == {"appointment_id": 2}
    assert task.exp_tool_calls[3].status == "ok"
    assert task.exp_tool_calls[0].status is None


def test_category_slug_defaults_to_the_task_id_prefix(load_task):
    task = load_task("C2-M1", lambda d: d["metadata"].pop("category_slug"))
    assert task.category_slug == "C2"


# --- schema errors -----------------------------------------------------------------------------

def test_invalid_json_names_line_and_column(tmp_path):
    text = json.dumps(example("C2-E1"), indent=2).splitlines()
    text[2] = text[2].rstrip(",")  # drop the comma after customer_name, on line 3
    err = schema_error(tmp_path, "\n".join(text))
    assert len(err.problems) == 1
    assert err.problems[0].startswith("invalid JSON at line 4 column 3:")


def test_missing_required_field_names_its_json_path(tmp_path):
    data = example("C2-E1")
    del data["intent"]
    err = schema_error(tmp_path, data)
    assert err.problems == ["$: 'intent' is a required property"]


def test_a_file_read_again_after_it_changed_is_checked_again_and_a_bad_one_every_time(tmp_path, monkeypatch):
    """A text found valid is not checked twice on a machine (a run reads each task file several times,
    each xdist worker collects the suite): not by this process, nor by a later one, which finds it in
    the user's cache. The same path with another text is checked, and a failure at every read."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    checked = []
    monkeypatch.setattr(task_file, "validate_task_data", lambda where, data: checked.append(where) or data)
    data = example("C2-E1")
    path = write(tmp_path, data)
    first = read_task_json(path)
    first["intent"] = "changed by its reader"
    assert read_task_json(path) == data  # a fresh copy each read, never one a reader changed
    assert len(checked) == 1
    task_file.VALID_TEXTS._known.clear()  # a later process: it reads what was kept
    read_task_json(path)
    assert len(checked) == 1
    monkeypatch.undo()
    del data["intent"]
    write(tmp_path, data)
    for _ in range(2):
        with pytest.raises(TaskError, match="'intent' is a required property"):
            read_task_json(path)


def test_missing_metadata_field_names_its_json_path(tmp_path):
    data = example("C2-E1")
    del data["metadata"]["difficulty"]
    err = schema_error(tmp_path, data)
    assert err.problems == ["$.metadata: 'difficulty' is a required property"]


def test_traits_that_are_not_a_list_are_rejected(tmp_path):
    data = example("C2-E1")
    data["traits"] = {"full_name": "Dana Whitfield"}
    err = schema_error(tmp_path, data)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.traits: ")
    assert "is not of type 'array'" in err.problems[0]


def test_unknown_difficulty_is_rejected(tmp_path):
    data = example("C2-E1")
    data["metadata"]["difficulty"] = "impossible"
    err = schema_error(tmp_path, data)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.metadata.difficulty: 'impossible' is not one of")


def test_unknown_key_in_an_expected_call_is_rejected(tmp_path):
    data = example("C2-E1")
    data["exp_tool_calls"][0]["argumentz"] = {"day": "saturday"}
    err = schema_error(tmp_path, data)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_tool_calls[0]: Additional properties are not allowed")
    assert "'argumentz'" in err.problems[0]


def test_task_name_without_id_and_title_is_rejected(tmp_path):
    data = example("C2-E1")
    data["task_name"] = "Saturday opening hours"
    err = schema_error(tmp_path, data)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.task_name: 'Saturday opening hours' does not match")


def test_every_schema_problem_is_listed(tmp_path):
    data = example("C2-E1")
    del data["intent"]
    data["metadata"]["difficulty"] = "impossible"
    data["traits"] = "none"
    err = schema_error(tmp_path, data)
    paths = sorted(p.split(":", 1)[0] for p in err.problems)
    assert paths == ["$", "$.metadata.difficulty", "$.traits"]


# --- checks against the pack -------------------------------------------------------------------

def test_unknown_tool_in_expected_calls_is_rejected(tmp_path, vet_pack):
    data = example("C2-E1")
    data["exp_tool_calls"].append({"name": "weigh_pet", "parameters": {"pet_name": "Biscuit"}})
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.exp_tool_calls[1].name: unknown tool 'weigh_pet' of pack 'vet_clinic'"]


def test_unknown_agent_in_handoff_path_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_handoff_path"] = ["appointments", "billing"]
    err = pack_error(tmp_path, data, vet_pack)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_handoff_path[1]: 'billing' is neither an agent nor a handoff tool")


def test_industry_tool_in_handoff_path_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_handoff_path"] = ["cancel_appointment"]
    err = pack_error(tmp_path, data, vet_pack)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_handoff_path[0]: 'cancel_appointment' is neither")


def test_parameter_the_tool_does_not_have_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_tool_calls"][3]["parameters"]["reason"] = "moving away"
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.exp_tool_calls[3].parameters.reason: cancel_appointment has no parameter 'reason' "
                            "(it has: appointment_id)"]


def test_parameter_value_of_the_wrong_type_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_tool_calls"][3]["parameters"]["appointment_id"] = "two"
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.exp_tool_calls[3].parameters.appointment_id: 'two' is not of type 'integer'"]


def test_parameter_value_outside_its_enum_is_rejected(tmp_path, vet_pack):
    data = example("C1-M1")
    data["exp_tool_calls"][3]["parameters"]["channel"] = "fax"
    err = pack_error(tmp_path, data, vet_pack)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_tool_calls[3].parameters.channel: 'fax' is not one of")


def test_alternative_for_a_parameter_the_tool_does_not_have_is_rejected(tmp_path, vet_pack):
    data = example("C2-E1")
    data["exp_tool_calls"][0]["alternatives"] = {"weekday": ["sat"]}
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.exp_tool_calls[0].alternatives.weekday: check_clinic_hours has no parameter 'weekday'"]


def test_unknown_forbidden_tool_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["forbidden_tools"] = ["send_records", "delete_owner"]
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.forbidden_tools[1]: unknown tool 'delete_owner' of pack 'vet_clinic'"]


def test_only_a_required_or_forbidden_tool_may_be_forbidden(tmp_path, vet_pack):
    # Extra calls are allowed (the paper's rule): a task cannot forbid an ordinary tool.
    data = example("C2-M1")
    data["forbidden_tools"] = ["send_records", "book_appointment"]
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == [
        "$.forbidden_tools[1]: 'book_appointment' may not be forbidden: extra calls are allowed, except of the "
        "tools pack 'vet_clinic' declares required_or_forbidden (send_records)"]


def test_a_required_or_forbidden_tool_left_optional_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data.pop("forbidden_tools")
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.forbidden_tools: pack 'vet_clinic' declares 'send_records' required_or_forbidden: "
                            "require it in exp_tool_calls or list it here"]


def test_a_required_tool_cannot_also_be_forbidden(tmp_path, vet_pack):
    data = example("C1-M1")  # requires send_records
    data["forbidden_tools"] = ["send_records"]
    err = pack_error(tmp_path, data, vet_pack)
    assert err.problems == ["$.forbidden_tools: 'send_records' is both required by exp_tool_calls and forbidden"]


def test_db_state_naming_a_table_that_is_not_compared_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_db_state"]["pets"] = []
    err = pack_error(tmp_path, data, vet_pack)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_db_state.pets: not a compared table of pack 'vet_clinic'")


def test_db_state_missing_a_compared_table_is_rejected(tmp_path, vet_pack):
    data = example("C2-M1")
    del data["exp_db_state"]["slots"]
    err = pack_error(tmp_path, data, vet_pack)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("$.exp_db_state: missing compared table 'slots'")


def test_task_without_db_state_builds(tmp_path, vet_pack):
    data = example("C2-M1")
    del data["exp_db_state"]
    path = write(tmp_path, data)
    task = build_task(path, read_task_json(path), vet_pack)
    assert task.exp_db_state is None


def test_every_pack_problem_is_listed(tmp_path, vet_pack):
    data = example("C2-M1")
    data["exp_handoff_path"] = ["billing"]
    data["exp_tool_calls"][3]["parameters"]["appointment_id"] = "two"
    data["forbidden_tools"] = ["delete_owner"]
    err = pack_error(tmp_path, data, vet_pack)
    paths = [p.split(":", 1)[0] for p in err.problems]
    assert paths == ["$.exp_handoff_path[0]", "$.exp_tool_calls[3].parameters.appointment_id", "$.forbidden_tools[0]",
                     "$.forbidden_tools"]


# --- industry_of -------------------------------------------------------------------------------

def test_industry_of_reads_metadata_industry(tmp_path):
    data = example("C2-E1")
    data["metadata"]["industry"] = "dental_office"
    path = write(tmp_path, data)
    assert industry_of(path, data, ["vet_clinic", "dental_office"]) == "dental_office"


def test_industry_of_metadata_wins_over_the_folder(tmp_path):
    folder = tmp_path / "vet_clinic" / "C2-E1"
    folder.mkdir(parents=True)
    data = example("C2-E1")
    data["metadata"]["industry"] = "dental_office"
    assert industry_of(write(folder, data), data, ["vet_clinic", "dental_office"]) == "dental_office"


def test_industry_of_uses_an_enclosing_folder_named_like_a_pack(tmp_path):
    folder = tmp_path / "vet_clinic" / "appointments" / "C2-E1"
    folder.mkdir(parents=True)
    data = example("C2-E1")
    assert industry_of(write(folder, data), data, ["dental_office", "vet_clinic"]) == "vet_clinic"


def test_industry_of_is_none_without_metadata_or_pack_folder(tmp_path):
    folder = tmp_path / "misc" / "C2-E1"
    folder.mkdir(parents=True)
    data = example("C2-E1")
    assert industry_of(write(folder, data), data, ["vet_clinic"]) is None


# --- public CALLM task shapes ------------------------------------------------------------------

def callm_style(handoff_path: list[str]) -> dict:
    data = example("R-M1")
    data.pop("exp_db_state")
    data["exp_handoff_path"] = handoff_path
    return data


def test_handoff_path_of_tool_names_builds_like_one_of_agent_names(tmp_path, vet_pack):
    by_tool = callm_style(["transfer_to_records"])
    by_agent = callm_style(["records"])
    path_tool = write(tmp_path, by_tool, "by_tool.json")
    path_agent = write(tmp_path, by_agent, "by_agent.json")
    task_tool = build_task(path_tool, read_task_json(path_tool), vet_pack)
    task_agent = build_task(path_agent, read_task_json(path_agent), vet_pack)
    assert task_tool.exp_handoff_path == ["records"]
    assert task_agent.exp_handoff_path == ["records"]


def expected_call_with(tmp_path, vet_pack, **fields):
    data = callm_style(["records"])
    call = data["exp_tool_calls"][1]
    call.pop("status")
    call.update(fields)
    path = write(tmp_path, data)
    return build_task(path, read_task_json(path), vet_pack).exp_tool_calls[1]


def test_failed_output_yields_its_error_code_as_status(tmp_path, vet_pack):
    call = expected_call_with(tmp_path, vet_pack, output={"ok": False, "error_code": "x"})
    assert call.status == "x"


def test_successful_output_yields_status_ok(tmp_path, vet_pack):
    call = expected_call_with(tmp_path, vet_pack, output={"ok": True})
    assert call.status == "ok"


def test_explicit_status_wins_over_output(tmp_path, vet_pack):
    call = expected_call_with(tmp_path, vet_pack, output={"ok": True}, status="identity_not_verified")
    assert call.status == "identity_not_verified"


def test_call_without_output_or_status_has_no_expected_status(tmp_path, vet_pack):
    call = expected_call_with(tmp_path, vet_pack)
    assert call.status is None


def test_output_that_is_not_an_envelope_has_no_expected_status(tmp_path, vet_pack):
    call = expected_call_with(tmp_path, vet_pack, output="Verified: Sam Whitfield")
    assert call.status is None
