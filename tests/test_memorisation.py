"""The memorisation check: a memorised locked key, identities put in, played on a training task."""

from __future__ import annotations

import json

import pytest

from conftest import REPO
from pytest_callm.rl.memorisation import KeyOnTask, substituted_key
from pytest_callm.rl.splits import load_tasks
from pytest_callm.task.pack import PackRegistry, default_industries

SAMPLE = REPO / "tasks" / "legal" / "C4-H3" / "task.json"  # Clara Whitman's employment intake


@pytest.fixture(scope="module")
def packs():
    return PackRegistry(default_industries(REPO))


def write(tmp_path, data, task_id):
    data["task_name"] = f"{task_id}: {data['task_name'].split(': ', 1)[1]}"
    path = tmp_path / "legal" / task_id / "task.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data))
    return path


def test_identities_are_put_in_by_kind_and_order(packs):
    pack = packs.get("legal")
    source = json.loads(SAMPLE.read_text())
    target = json.loads(SAMPLE.read_text().replace("Clara Whitman", "Maren Holloway")
                        .replace("206-555-0220", "206-555-0187").replace("Harborline Industries", "Tamarack Couriers"))
    key = substituted_key(source, target, pack)
    assert key[0]["parameters"] == {"full_name": "Maren Holloway", "phone": "206-555-0187"}
    assert key[2]["parameters"] == {"opposing_party": "Tamarack Couriers"}
    assert key[5]["parameters"]["incident_date"] == "2026-04-05"  # a date decides the answer: never put in
    assert all("status" not in call for call in key)  # a memorised key plays on, whatever comes back


def test_a_renamed_copy_is_passed_by_the_memorised_key_and_another_scenario_is_not(tmp_path, packs):
    text = SAMPLE.read_text()
    for old, new in [("Clara Whitman", "Maren Holloway"), ("Whitman", "Holloway"), ("Clara", "Maren"),
                     ("206-555-0220", "206-555-0187"), ("2065550220", "2065550187"), ("Harborline", "Tamarack")]:
        text = text.replace(old, new)
    renamed = write(tmp_path, json.loads(text), "T1-H1")
    other = json.loads(text)  # the same call, but the caller was hurt in Texas: another state, another key
    for call in other["exp_tool_calls"]:
        if (call.get("parameters") or {}).get("state") == "WA":
            call["parameters"]["state"] = "TX"
    other.pop("exp_db_state")
    other_path = write(tmp_path, other, "T1-H2")
    from pytest_callm.authoring.lock import lock  # its expected state is what its own key leaves

    lock([other_path], default_industries(REPO))
    (copy, moved), _ = load_tasks([renamed, other_path], packs)
    (locked,), _ = load_tasks([SAMPLE], packs)
    player = KeyOnTask(packs.loaded())
    try:
        assert player.passes(locked, copy)  # what the generator made before issue 38: the test, memorised
        assert not player.passes(locked, moved)
    finally:
        player.close()
