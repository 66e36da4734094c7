"""A task's own records (`records` in task.json): rows its calls start with, on top of the pack's seed.

The tool server inserts them into the call's fresh copy of the seed when the call starts, before
anything else can open it; a call started without them is the plain seed; a malformed body is a 400
and a row the schema refuses is named, never a 500.
"""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from pytest_callm.toolserver.server import CALL_ID_HEADER

PACK = "vet_clinic"
NOVA = {"id": "o9", "full_name": "Nova Quillfeather", "phone": "5035550166", "email": None}


@pytest.fixture(scope="module")
def http(tool_server):
    with httpx.Client(base_url=tool_server.url, timeout=10.0) as client:
        yield client


def start(http: httpx.Client, call_id: str, body: object | None = None) -> httpx.Response:
    return http.post(f"/packs/{PACK}/call", headers={CALL_ID_HEADER: call_id, "Content-Type": "application/json"},
                     content=b"" if body is None else json.dumps(body).encode())


def verify(http: httpx.Client, call_id: str, who: dict) -> dict:
    r = http.post(f"/packs/{PACK}/tools/verify_owner", headers={CALL_ID_HEADER: call_id},
                  content=json.dumps({"full_name": who["full_name"], "phone": who["phone"]}).encode())
    assert r.status_code == 200, r.text
    return r.json()


def test_a_call_started_with_records_finds_the_tasks_own_person(http):
    call_id = f"rec-{uuid.uuid4().hex}"
    assert start(http, call_id, {"records": {"owners": [NOVA]}}).status_code == 200
    assert verify(http, call_id, NOVA)["ok"] is True


def test_records_belong_to_their_call_only(http):
    with_records, without = f"rec-{uuid.uuid4().hex}", f"rec-{uuid.uuid4().hex}"
    assert start(http, with_records, {"records": {"owners": [NOVA]}}).status_code == 200
    assert start(http, without).status_code == 200
    assert verify(http, without, NOVA)["ok"] is False


@pytest.mark.parametrize("body", [{"records": []}, {"records": {"owners": {"id": "o9"}}},
                                  {"records": {"owners; DROP TABLE owners": [{"id": "x"}]}},
                                  {"records": {"owners": [{"id": {"nested": 1}}]}}])
def test_malformed_records_are_a_bad_request(http, body):
    r = start(http, f"rec-{uuid.uuid4().hex}", body)
    assert r.status_code == 400 and r.json()["error_code"] == "bad_request"


def test_a_row_the_schema_refuses_is_named_and_no_call_is_made(http):
    call_id = f"rec-{uuid.uuid4().hex}"
    r = start(http, call_id, {"records": {"owners": [{"id": "o1", "full_name": "Dup", "phone": "1"}]}})
    assert r.status_code == 400 and r.json()["error_code"] == "bad_records"
    assert "UNIQUE" in r.json()["caller_safe_message"]
    state = http.get(f"/packs/{PACK}/state", headers={CALL_ID_HEADER: call_id})
    assert state.status_code == 404  # the half-made file was never linked into place


# --- records that do not fit the pack: refused as the task loads, in every command ---------------

MISFITS = {
    "unknown-table": ({"kennels": [{"id": "k1"}]}, "$.records.kennels: the pack has no table 'kennels'"),
    "unknown-column": ({"owners": [{**NOVA, "shoe_size": 9}]}, "$.records.owners[0]: table 'owners' has no column 'shoe_size'"),
    "duplicate-key": ({"owners": [NOVA, NOVA]}, "$.records.owners[1]: the pack's schema refuses this row (UNIQUE constraint failed"),
    "not-null": ({"owners": [{**NOVA, "full_name": None}]}, "$.records.owners[0]: the pack's schema refuses this row (NOT NULL"),
}


MISFIT_TASKS = dict(zip(MISFITS, ["C2-E1", "C2-M1", "C1-M1", "R-M1"]))  # the task each misfit is given to


@pytest.fixture
def misfit_project(pytester, example_tools):
    import shutil

    from conftest import EXAMPLE_PACK, EXAMPLE_TASKS

    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    for task in [*MISFIT_TASKS.values(), "C2-E2"]:
        shutil.copytree(EXAMPLE_TASKS / task, pytester.path / "tasks" / "vet_clinic" / task)
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def give_records(project, records: dict, task: str = "C2-E1") -> str:
    path = project.path / "tasks" / "vet_clinic" / task / "task.json"
    data = json.loads(path.read_text())
    data["records"] = records
    path.write_text(json.dumps(data))
    return str(path.relative_to(project.path))


def test_records_that_do_not_fit_the_pack_are_refused_as_the_task_loads(misfit_project):
    named = {case: give_records(misfit_project, records, MISFIT_TASKS[case]) for case, (records, _) in MISFITS.items()}
    result = misfit_project.runpytest("--callm-model=oracle", "--callm-attempts=1", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, errors=4)  # the task with no records plays; the four are never played
    text = result.stdout.str().replace(str(misfit_project.path) + "/", "")
    for case, (_, line) in MISFITS.items():
        assert f"{named[case]}: {line}" in text, (case, text)
    assert "attempts not scored (in no denominator): 0" in text, text


@pytest.mark.parametrize("command", ["lint", "lock"])
def test_lint_and_lock_name_records_that_do_not_fit_in_one_line(misfit_project, command, capsys, monkeypatch):
    from pytest_callm.cli import main

    records, line = MISFITS["unknown-column"]
    name = give_records(misfit_project, records)
    monkeypatch.chdir(misfit_project.path)
    code = main([command, "tasks/vet_clinic/C2-E1"])
    out = capsys.readouterr()
    assert code != 0 and "Traceback" not in out.out + out.err
    assert f"{name}: {line}" in (out.out + out.err).replace(str(misfit_project.path) + "/", ""), out
