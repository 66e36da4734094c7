"""Loading and checking an industry pack: every break of the pack contract is one readable PackError."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from pytest_callm.task import tool_schemas
from pytest_callm.task.pack import PackError, PackRegistry, discover_packs, load_pack
from pytest_callm.task.task_file import read_task_json

EXAMPLE_PACK = Path(__file__).resolve().parent.parent / "examples" / "industries" / "vet_clinic"


# --- helpers -----------------------------------------------------------------------------------

@pytest.fixture
def pack_dir(tmp_path: Path) -> Path:
    """A private copy of the example pack, free to break."""
    dest = tmp_path / "packs" / "vet_clinic"
    shutil.copytree(EXAMPLE_PACK, dest)
    return dest


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")


def tool_entry(tools: list, name: str) -> dict:
    return next(t for t in tools if t["function"]["name"] == name)


def broken(pack_dir: Path) -> PackError:
    """Load the pack, expecting a PackError; return it after the checks every such error must pass."""
    with pytest.raises(PackError) as info:
        load_pack(pack_dir)
    err = info.value
    message = str(err)
    assert "Traceback" not in message
    assert str(pack_dir) in message
    assert err.problems, "a PackError must list at least one problem"
    for problem in err.problems:
        assert f"  - {problem}" in message
    return err


def declare_tool(tools: list, name: str, properties: dict | None = None) -> None:
    tools.append({"type": "function", "function": {
        "name": name, "description": "test tool",
        "parameters": {"type": "object", "properties": properties or {}, "additionalProperties": False}}})


# --- the example pack --------------------------------------------------------------------------

def test_example_pack_loads_with_its_agents_and_entry_agent(vet_pack):
    assert set(vet_pack.agents) == {"reception", "records", "appointments"}
    assert vet_pack.entry_agent == "reception"
    assert "transfer_to_records" in vet_pack.agents["reception"].tools
    assert vet_pack.agents["records"].prompt.strip()


def test_example_pack_classifies_tool_kinds(vet_pack):
    assert vet_pack.tools["check_clinic_hours"].kind == "industry"
    assert vet_pack.tools["check_clinic_hours"].handoff_target is None
    assert vet_pack.tools["transfer_to_records"].kind == "handoff"
    assert vet_pack.tools["transfer_to_records"].handoff_target == "records"
    assert vet_pack.tools["transfer_to_appointments"].handoff_target == "appointments"
    assert vet_pack.tools["end_call"].kind == "session"
    assert vet_pack.tools["end_call"].ends_call
    assert not vet_pack.tools["book_appointment"].ends_call


def test_example_pack_reads_scoring_metadata_clock_and_compared_tables(vet_pack):
    assert vet_pack.tools["transfer_to_records"].free_text == {"handoff_summary"}
    assert vet_pack.tools["check_clinic_hours"].kinds == {"day": "weekday"}
    assert vet_pack.tools["verify_owner"].kinds == {"full_name": "person", "phone": "phone"}
    assert vet_pack.values.canonical("weekday", "Sat.") == "saturday"
    assert vet_pack.required_or_forbidden == {"send_records"}
    assert vet_pack.now.isoformat() == "2026-05-12T09:00:00"
    assert set(vet_pack.compared_tables) == {"appointments", "record_requests", "slots", "owners", "verifications",
                                             "record_access"}
    # A generated row id (INTEGER PRIMARY KEY) is never compared: two writes in the other order are one state.
    assert vet_pack.compared_tables["appointments"].exclude_columns == {"created_at", "id"}
    assert vet_pack.compared_tables["verifications"].forgive_if_heard == {"failed"}
    assert vet_pack.people.tables == {"owners", "pets"} and vet_pack.people.identity_tools == ("verify_owner",)
    assert vet_pack.compared_tables["slots"].key == "id"


def test_unchanged_copy_of_example_pack_loads(pack_dir):
    pack = load_pack(pack_dir)
    assert pack.name == "vet_clinic"
    assert pack.root == pack_dir


# --- one break each ----------------------------------------------------------------------------

def test_a_pack_is_loaded_again_only_when_a_file_changed_and_a_broken_one_fails_every_time(pack_dir):
    """One process keeps a loaded pack while its files stay the same (the tests load the same packs
    thousands of times); a changed file, a prompt included, gives a fresh load, and a pack with
    problems is reported at every load, never kept."""
    first = load_pack(pack_dir)
    assert load_pack(pack_dir) is first
    prompt = next((pack_dir / "prompts").glob("*.md"))
    prompt.write_text(prompt.read_text(encoding="utf-8") + "\nOne more line.\n", encoding="utf-8")
    again = load_pack(pack_dir)
    assert again is not first and any("One more line." in a.prompt for a in again.agents.values())
    prompt.write_text("", encoding="utf-8")
    for _ in range(2):
        broken(pack_dir)


def test_the_tool_servers_load_leaves_out_only_what_scoring_reads(pack_dir):
    """`scoring=False` (the tool server's load) reads no rules.json or words.json: the same tools,
    schemas and seed, none of the words; a full load after it is whole, and a pack whose rules are
    broken still fails every full load (the run that scores reports it)."""
    full = load_pack(pack_dir)
    tools_only = load_pack(pack_dir, scoring=False)
    assert tools_only is full  # a whole pack loaded already serves tools as well
    assert full.words != type(full.words)() and full.refusals
    (pack_dir / "rules.json").write_text("{ not json", encoding="utf-8")
    served = load_pack(pack_dir, scoring=False)
    assert served is not full and served.words == type(full.words)() and not served.refusals
    assert served.tools == full.tools and set(served.validators) == set(full.validators)
    assert (served.schema_sql, served.seed_sql) == (full.schema_sql, full.seed_sql)
    assert "rules.json" in str(broken(pack_dir))
    assert load_pack(pack_dir, scoring=False) is served


def test_missing_prompt_file_is_reported(pack_dir):
    (pack_dir / "prompts" / "records.md").unlink()
    err = broken(pack_dir)
    assert "agent 'records': prompt prompts/records.md is missing or empty" in err.problems


def test_empty_prompt_file_is_reported(pack_dir):
    (pack_dir / "prompts" / "records.md").write_text("  \n", encoding="utf-8")
    err = broken(pack_dir)
    assert "agent 'records': prompt prompts/records.md is missing or empty" in err.problems


def test_handoff_to_something_that_is_not_an_agent_is_reported(pack_dir):
    edit_json(pack_dir / "tools.json", lambda tools: declare_tool(tools, "transfer_to_billing"))
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"]["reception"]["tools"].append("transfer_to_billing"))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    problem = err.problems[0]
    assert "'transfer_to_billing'" in problem
    assert "handoff target 'billing' is not an agent" in problem


def test_undeclared_handoff_tool_is_reported_as_a_non_agent_target(pack_dir):
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"]["reception"]["tools"].append("transfer_to_billing"))
    err = broken(pack_dir)
    assert err.problems == ["agent 'reception' owns 'transfer_to_billing', which tools.json does not declare "
                            "(handoff target is not an agent)"]


def test_agent_unreachable_from_entry_agent_is_reported(pack_dir):
    (pack_dir / "prompts" / "billing.md").write_text("You handle billing questions.\n", encoding="utf-8")
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"].update(billing={"prompt": "prompts/billing.md", "tools": ["end_call"]}))
    err = broken(pack_dir)
    assert err.problems == ["agent 'billing' cannot be reached from the entry agent 'reception' by handoffs"]


def test_agent_reachable_only_through_another_agent_is_fine(pack_dir):
    # records is reached only via appointments once reception loses its direct handoff
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"]["reception"]["tools"].remove("transfer_to_records"))
    pack = load_pack(pack_dir)
    assert "transfer_to_records" not in pack.agents["reception"].tools


def test_agent_owning_an_undeclared_tool_is_reported(pack_dir):
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"]["records"]["tools"].append("refund_payment"))
    err = broken(pack_dir)
    assert err.problems == ["agent 'records' owns 'refund_payment', which tools.json does not declare"]


def test_declared_tool_without_implementation_is_reported(pack_dir):
    edit_json(pack_dir / "tools.json", lambda tools: declare_tool(tools, "weigh_pet"))
    err = broken(pack_dir)
    assert err.problems == ["tool 'weigh_pet' is declared in tools.json but it is not implemented in tools.py"]


def test_implemented_tool_that_is_not_declared_is_reported(pack_dir):
    with (pack_dir / "tools.py").open("a", encoding="utf-8") as f:
        f.write("\n\n@tools.tool\ndef weigh_pet(ctx, pet_name: str) -> dict:\n    return {}\n")
    err = broken(pack_dir)
    assert err.problems == ["tools.py implements 'weigh_pet', which tools.json does not declare"]


def test_parameters_that_are_not_valid_json_schema_are_reported(pack_dir):
    edit_json(pack_dir / "tools.json", lambda tools: tool_entry(tools, "check_clinic_hours")
              ["function"]["parameters"]["properties"]["day"].update(type="strng"))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("tools.json: parameters of 'check_clinic_hours' are not valid JSON Schema:")
    assert "strng" in err.problems[0]


def test_a_schema_found_valid_once_is_not_checked_again_and_an_invalid_one_always_is(pack_dir, tmp_path, monkeypatch):
    """The meta-schema check (slow in jsonschema) runs once per schema on a machine: the digests of the
    schemas found valid are kept in the user's cache. One never found valid is checked, and reported,
    at every load."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    checked = []
    real_check = jsonschema.Draft202012Validator.check_schema
    monkeypatch.setattr(jsonschema.Draft202012Validator, "check_schema",
                        classmethod(lambda cls, schema, **kw: (checked.append(schema), real_check(schema, **kw))))
    tools = len(json.loads((pack_dir / "tools.json").read_text(encoding="utf-8")))
    load_pack(pack_dir)
    assert len(checked) == tools and list((tmp_path / "cache" / "pytest-callm").glob("tool-schemas-*.marshal"))
    checked.clear()
    edit_json(pack_dir / "tools.json", lambda t: tool_entry(t, "check_clinic_hours")
              ["function"]["parameters"]["properties"]["day"].update(type="strng"))
    for _ in range(2):  # a fresh load each time (the pack failed): only the changed schema is checked
        assert "strng" in broken(pack_dir).problems[0]
        assert len(checked) == 1 and checked.pop()["properties"]["day"]["type"] == "strng"
    tool_schemas.PASSED._known.clear()  # another process: it reads the kept digests from the cache file
    edit_json(pack_dir / "tools.json", lambda t: tool_entry(t, "check_clinic_hours")
              ["function"]["parameters"]["properties"]["day"].update(type="string"))
    load_pack(pack_dir)
    assert checked == []


def test_a_pass_is_kept_only_for_the_checker_that_gave_it(monkeypatch):
    """The formats `check_schema` checks depend on packages installed beside jsonschema (`uri-reference`
    only with rfc3987 or rfc3986-validator): two environments sharing a cache folder keep two files."""
    before = tool_schemas._checker()
    checkers = {**jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers, "uri-reference": (lambda v: True, ())}
    monkeypatch.setattr(jsonschema.Draft202012Validator.FORMAT_CHECKER, "checkers", checkers)
    assert tool_schemas._checker() != before


def test_without_a_home_folder_packs_and_tasks_load_and_nothing_is_kept(pack_dir, monkeypatch):
    """A uid with no passwd entry and no HOME (some containers): no cache folder can be named, so every
    check runs in every process, and loading works as before."""
    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    (pack_dir / "tools.json").write_text((pack_dir / "tools.json").read_text() + "\n")  # a fresh load
    assert load_pack(pack_dir).name == "vet_clinic"
    task = pack_dir.parent.parent / "task.json"
    task.write_text((EXAMPLE_PACK.parent.parent / "tasks" / "vet_clinic" / "C2-E1" / "task.json").read_text() + " ")
    assert read_task_json(task)["task_name"].startswith("C2-E1")


def test_scoring_naming_a_missing_parameter_is_reported(pack_dir):
    edit_json(pack_dir / "tools.json",
              lambda tools: tool_entry(tools, "end_call").update(scoring={"free_text": ["reason", "notes"]}))
    err = broken(pack_dir)
    assert err.problems == ["tools.json: scoring of 'end_call' names parameter 'notes', which the tool does not have"]


def test_scoring_kind_naming_a_missing_parameter_is_reported(pack_dir):
    edit_json(pack_dir / "tools.json",
              lambda tools: tool_entry(tools, "check_clinic_hours").update(scoring={"kinds": {"weekday": "weekday"}}))
    err = broken(pack_dir)
    assert err.problems == ["tools.json: scoring of 'check_clinic_hours' names parameter 'weekday', "
                            "which the tool does not have"]


def test_scoring_kind_that_is_neither_a_kind_nor_an_alias_table_is_reported(pack_dir):
    edit_json(pack_dir / "tools.json",
              lambda tools: tool_entry(tools, "check_clinic_hours").update(scoring={"kinds": {"day": "month"}}))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("tools.json: check_clinic_hours.day has kind 'month', neither a kind of value "
                                      "(organization, person, party, identifier, phone, date, money, email, contact, place)")


def test_a_parameter_whose_schema_asks_a_date_is_compared_as_a_date(vet_pack):
    # The tool server reads a date-time there as its day; the verifier must too, kind declared or not.
    assert vet_pack.tools["find_open_slots"].kinds == {"on_or_after": "date"}
    assert vet_pack.values.same("date", "2026-05-14", "2026-05-14T16:00")


def test_prepared_arguments_cut_a_date_time_to_its_day_only_where_a_date_is_asked(vet_pack):
    assert vet_pack.prepared_arguments("find_open_slots", {"service": "dental", "on_or_after": "2026-05-14T16:00"}) == \
        {"service": "dental", "on_or_after": "2026-05-14"}
    assert vet_pack.prepared_arguments("find_open_slots", {"on_or_after": "next tuesday"}) == {"on_or_after": "next tuesday"}
    assert vet_pack.prepared_arguments("verify_owner", {"full_name": "2026-05-14T16:00"}) == {"full_name": "2026-05-14T16:00"}


def test_alias_ignore_of_a_table_that_does_not_exist_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.update(alias_ignore={"medication": {"words": ["cream"]}}))
    assert broken(pack_dir).problems == ["pack.json: alias_ignore names 'medication', which is not an alias table"]


def test_a_variant_two_values_claim_once_ignored_words_go_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.update(alias_ignore={"weekday": {"words": ["day"]}}))
    edit_json(pack_dir / "pack.json", lambda meta: meta["aliases"]["weekday"]["saturday"].append("sun day"))
    problems = broken(pack_dir).problems
    assert problems == ["pack.json: weekday: 'sun day' (saturday) and 'sun' (sunday) are both read as 'sun'"]


def test_the_healthcare_pack_ignores_forms_and_strengths_in_medication_names_only():
    pack = load_pack(Path(__file__).resolve().parent.parent / "industries" / "healthcare")
    assert pack.values.canonical("medication", "Retin-A cream 0.05%") == "tretinoin"
    assert pack.values.canonical("carrier", "Cigna cream") is None


def test_column_kind_of_an_unknown_column_or_kind_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta["compared_tables"]["appointments"].update(
        kinds={"owner_phone": "phone", "status": "colour"}))
    err = broken(pack_dir)
    assert "pack.json: appointments.owner_phone is not a column of appointments" in err.problems
    assert any(p.startswith("pack.json: appointments.status has kind 'colour'") for p in err.problems)


def test_required_or_forbidden_naming_an_undeclared_tool_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.update(required_or_forbidden=["send_text_message"]))
    err = broken(pack_dir)
    assert err.problems == ["pack.json: required_or_forbidden names 'send_text_message', which tools.json does not declare"]


def test_compared_table_missing_from_schema_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta["compared_tables"].update(invoices={}))
    err = broken(pack_dir)
    assert err.problems == ["pack.json: compared table 'invoices' does not exist in db/schema.sql"]


def test_excluded_column_missing_from_its_table_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json",
              lambda meta: meta["compared_tables"]["appointments"]["exclude_columns"].append("updated_at"))
    err = broken(pack_dir)
    assert err.problems == ["pack.json: appointments.updated_at is not a column of appointments"]


def test_pack_without_compared_tables_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.pop("compared_tables"))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert "'compared_tables'" in err.problems[0]


def test_missing_clock_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.pop("clock"))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert err.problems[0] == "pack.json: $: 'clock' is a required property"


def test_clock_that_is_not_an_iso_datetime_is_reported(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.update(clock="next tuesday"))
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert "clock 'next tuesday' is not an ISO date-time" in err.problems[0]


def test_invalid_json_in_tools_json_is_reported(pack_dir):
    (pack_dir / "tools.json").write_text('[{"type": "function",', encoding="utf-8")
    err = broken(pack_dir)
    assert any(p.startswith("tools.json is not valid JSON:") for p in err.problems)


def test_missing_blueprint_is_reported(pack_dir):
    (pack_dir / "agent_blueprint.json").unlink()
    err = broken(pack_dir)
    assert "agent_blueprint.json is missing" in err.problems


def test_seed_sql_that_does_not_apply_is_reported(pack_dir):
    with (pack_dir / "db" / "seed.sql").open("a", encoding="utf-8") as f:
        f.write("\nINSERT INTO invoices VALUES (1, 'o1', 40);\n")
    err = broken(pack_dir)
    assert len(err.problems) == 1
    assert err.problems[0].startswith("db/seed.sql does not apply on top of the schema:")
    assert "invoices" in err.problems[0]


def test_schema_sql_that_does_not_apply_is_reported(pack_dir):
    (pack_dir / "db" / "schema.sql").write_text("CREATE TABLE owners (id TEXT PRIMARY KEY,;\n", encoding="utf-8")
    err = broken(pack_dir)
    assert any(p.startswith("db/schema.sql does not apply:") for p in err.problems)


def test_tools_py_that_raises_on_import_is_reported(pack_dir):
    source = (pack_dir / "tools.py").read_text(encoding="utf-8")
    (pack_dir / "tools.py").write_text(source + "\nraise RuntimeError('tool module exploded')\n", encoding="utf-8")
    err = broken(pack_dir)
    assert "tools.py failed to import: RuntimeError: tool module exploded" in err.problems


def test_tools_py_without_a_registry_is_reported(pack_dir):
    (pack_dir / "tools.py").write_text("registry = None\n", encoding="utf-8")
    err = broken(pack_dir)
    assert any("tools.py must define `tools = ToolRegistry()`" in p for p in err.problems)


def test_several_problems_are_all_listed(pack_dir):
    (pack_dir / "prompts" / "records.md").unlink()
    edit_json(pack_dir / "pack.json",
              lambda meta: (meta.update(clock="next tuesday"), meta["compared_tables"].update(invoices={})))
    edit_json(pack_dir / "agent_blueprint.json",
              lambda bp: bp["agents"]["records"]["tools"].append("refund_payment"))
    err = broken(pack_dir)
    assert len(err.problems) == 4
    joined = "\n".join(err.problems)
    assert "prompts/records.md is missing" in joined
    assert "clock 'next tuesday' is not an ISO date-time" in joined
    assert "compared table 'invoices'" in joined
    assert "owns 'refund_payment'" in joined


# --- discovery and the registry ----------------------------------------------------------------

def test_discover_packs_finds_every_pack_in_a_folder(tmp_path):
    root = tmp_path / "industries"
    shutil.copytree(EXAMPLE_PACK, root / "vet_clinic")
    shutil.copytree(EXAMPLE_PACK, root / "dental_office")
    (root / "notes").mkdir()  # a folder without a blueprint is not a pack
    found = discover_packs([root])
    assert found == {"vet_clinic": root / "vet_clinic", "dental_office": root / "dental_office"}


def test_discover_packs_accepts_a_pack_folder_itself(tmp_path):
    found = discover_packs([EXAMPLE_PACK])
    assert found == {"vet_clinic": EXAMPLE_PACK}


def test_discover_packs_rejects_two_packs_with_the_same_name(tmp_path):
    shutil.copytree(EXAMPLE_PACK, tmp_path / "a" / "vet_clinic")
    shutil.copytree(EXAMPLE_PACK, tmp_path / "b" / "vet_clinic")
    with pytest.raises(PackError) as info:
        discover_packs([tmp_path / "a", tmp_path / "b"])
    message = str(info.value)
    assert "two packs are named 'vet_clinic'" in message
    assert str(tmp_path / "a" / "vet_clinic") in message
    assert str(tmp_path / "b" / "vet_clinic") in message


def test_discover_packs_allows_the_same_folder_twice(tmp_path):
    found = discover_packs([EXAMPLE_PACK.parent, EXAMPLE_PACK])
    assert list(found) == ["vet_clinic"]


def test_registry_get_of_unknown_pack_raises_key_error_listing_known_packs():
    registry = PackRegistry([EXAMPLE_PACK.parent])
    with pytest.raises(KeyError) as info:
        registry.get("dental_office")
    message = str(info.value)
    assert "'dental_office'" in message
    assert "known: " in message and "vet_clinic" in message.partition("known: ")[2]


def test_registry_get_loads_a_known_pack():
    registry = PackRegistry([EXAMPLE_PACK.parent])
    assert "vet_clinic" in registry.names() and "legal" in registry.names()  # the suite's packs answer too
    assert PackRegistry([EXAMPLE_PACK.parent], suite=False).names() == ["vet_clinic"]
    pack = registry.get("vet_clinic")
    assert pack.name == "vet_clinic"
    assert registry.get("vet_clinic") is pack
    assert registry.loaded() == {"vet_clinic": pack}


def test_registry_get_of_a_broken_pack_raises_its_pack_error(pack_dir):
    edit_json(pack_dir / "pack.json", lambda meta: meta.pop("clock"))
    registry = PackRegistry([pack_dir.parent])
    for _ in range(2):  # the failure is remembered, not hidden on the second look-up
        with pytest.raises(PackError, match="'clock' is a required property"):
            registry.get("vet_clinic")
    assert registry.loaded() == {}


# --- argument validation -----------------------------------------------------------------------

def test_validation_errors_accepts_valid_arguments(vet_pack):
    assert vet_pack.validation_errors("check_clinic_hours", {"day": "saturday"}) == []


def test_validation_errors_rejects_unexpected_arguments(vet_pack):
    errors = vet_pack.validation_errors("check_clinic_hours", {"day": "saturday", "hour": 10})
    assert "hour: unexpected argument" in errors


def test_validation_errors_rejects_non_object_arguments(vet_pack):
    assert vet_pack.validation_errors("check_clinic_hours", ["saturday"]) == [
        "(arguments): expected a JSON object, got list"]
    assert vet_pack.validation_errors("check_clinic_hours", "saturday") == [
        "(arguments): expected a JSON object, got str"]


def test_validation_errors_names_the_wrong_typed_argument(vet_pack):
    errors = vet_pack.validation_errors("cancel_appointment", {"appointment_id": "two"})
    assert errors == ["appointment_id: 'two' is not of type 'integer'"]


def test_validation_errors_reports_a_missing_required_argument(vet_pack):
    errors = vet_pack.validation_errors("verify_owner", {"full_name": "Dana Whitfield"})
    assert errors == ["(arguments): 'phone' is a required property"]


# --- wrongly shaped files: one readable problem, never an AttributeError -----------------------

@pytest.mark.parametrize("file, change, expected", [
    ("agent_blueprint.json", lambda d: d["agents"].update(reception=["check_clinic_hours"]),
     "agent_blueprint.json: $.agents.reception: ['check_clinic_hours'] is not of type 'object'"),
    ("tools.json", lambda d: d[0]["function"].update(parameters=True),
     "tools.json: $[0].function.parameters: True is not of type 'object'"),
    ("tools.json", lambda d: d[0].update(scoring=["day"]),
     "tools.json: $[0].scoring: ['day'] is not of type 'object'"),
    ("pack.json", lambda d: d["compared_tables"].update(slots=["id"]),
     "pack.json: $.compared_tables.slots: ['id'] is not of type 'object'"),
    ("pack.json", lambda d: d["aliases"]["weekday"].update(saturday="sat"),
     "pack.json: $.aliases.weekday.saturday: 'sat' is not of type 'array'"),
    ("pack.json", lambda d: d.update(compared_tables={}),
     "pack.json: $.compared_tables: {} should be non-empty"),
])
def test_a_wrongly_shaped_pack_file_is_named_by_file_and_json_path(pack_dir, file, change, expected):
    edit_json(pack_dir / file, change)
    assert broken(pack_dir).problems == [expected]


def test_prompt_placeholders_are_filled_from_the_pack_clock(pack_dir):
    (pack_dir / "prompts" / "records.md").write_text("Today is {{today}}, {{time}}. {{ calendar }}")
    prompt = load_pack(pack_dir).agents["records"].prompt
    assert prompt == ("Today is Tuesday, May 12, 2026, 9:00 AM. Mondays: April 13, April 20, April 27, May 4, "
                      "May 11 (this week), May 18, May 25.")


def test_an_unknown_prompt_placeholder_is_a_pack_problem(pack_dir):
    (pack_dir / "prompts" / "records.md").write_text("Hello {{caller_name}}")
    assert broken(pack_dir).problems == [
        "agent 'records': prompt uses unknown placeholder {{caller_name}} (known: today, time, calendar)"]


def test_arguments_checked_before_are_answered_as_the_first_time_each_by_its_own_text(vet_pack):
    """The pack remembers the arguments it checked: equal JSON texts only, so 1, 1.0, true and "1"
    each get their own answer, in whatever order they come, as does the same call with its keys in
    another order; and a remembered answer cannot be changed by its caller."""
    tool = "cancel_appointment"
    values = [1, True, "1", 1.0, "two", None, 2]
    fresh = {json.dumps(v): vet_pack._problems(tool, {"appointment_id": v}) for v in values}
    for order in (values, values[::-1], values * 2):
        for v in order:
            assert vet_pack.validation_errors(tool, {"appointment_id": v}) == fresh[json.dumps(v)]
    assert fresh["true"] != fresh["1"] and fresh["\"1\""] != fresh["1"]
    both = {"full_name": "Dana Whitfield", "phone": 5}
    assert vet_pack.validation_errors("verify_owner", both) == vet_pack._problems("verify_owner", both)
    swapped = {"phone": 5, "full_name": "Dana Whitfield"}
    assert vet_pack.validation_errors("verify_owner", swapped) == vet_pack._problems("verify_owner", swapped)
    vet_pack.validation_errors(tool, {"appointment_id": "two"}).append("changed by a caller")
    assert vet_pack.validation_errors(tool, {"appointment_id": "two"}) == fresh["\"two\""]
    # A tuple writes the same JSON as a list but is not a JSON array to the schema: never taken for it.
    as_list = vet_pack.validation_errors(tool, {"appointment_id": [1]})
    assert vet_pack.validation_errors(tool, {"appointment_id": (1,)}) == vet_pack._problems(tool, {"appointment_id": (1,)})
    assert vet_pack.validation_errors(tool, {"appointment_id": [1]}) == as_list
    # Nor a subclass of str for a str (the check's message quotes its repr), nor one pack's for another's.
    class Tag(str):
        def __repr__(self) -> str:
            return f"Tag({str(self)})"

    vet_pack.validation_errors(tool, {"appointment_id": "two"})
    assert vet_pack.validation_errors(tool, {"appointment_id": Tag("two")}) == ["appointment_id: Tag(two) is not of type 'integer'"]
    assert dataclasses.replace(vet_pack)._checked == {}
