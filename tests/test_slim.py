"""A saved trajectory leaves out what its reader rebuilds (slim.py), and loads back as it was played."""

from __future__ import annotations

import json

from pytest_callm.call.trajectory import (HandoffRecord, RequestRecord, ToolCallRecord, Trajectory,
                                          TranscriptTurn)
from pytest_callm.saved.rundir import RunDir


def call(index: int, arguments, raw: str) -> ToolCallRecord:
    return ToolCallRecord(index=index, agent="reception", name="lookup", kind="industry", arguments=arguments,
                          raw_arguments=raw, result={"ok": True, "data": {"n": index}}, status="ok", refused=False,
                          request_index=index, started_ms=1.0 + index, duration_ms=0.5)


def played() -> Trajectory:
    return Trajectory(
        call_id="T-1-a1", task_id="T-1", industry="vet_clinic", attempt=1, model="m", end_reason="caller_hangup",
        exchanges=2, duration_ms=12.5,
        transcript=[TranscriptTurn(role="agent", said="Hello, Ünïcode clinic.", at_ms=0.0, agent="reception"),
                    TranscriptTurn(role="caller", said="Hi there", at_ms=1.0, heard=["hi there"],
                                   line_errors=[{"type": "case", "before": "Hi", "after": "hi"}]),
                    TranscriptTurn(role="caller", said="Thanks", at_ms=2.0)],
        tool_calls=[call(0, {"n": 1, "name": "Ada Ünal"}, json.dumps({"n": 1, "name": "Ada Ünal"})),
                    call(3, {"name": "Ada", "n": 1}, json.dumps({"name": "Ada", "n": 1})),  # keys unsorted: kept
                    call(1, {"name": "Bo"}, '{"name":"Bo"}'),  # the model's own spelling
                    call(2, None, '{"name": "B')],  # not JSON
        handoffs=[HandoffRecord(from_agent="reception", to_agent="billing", tool_index=0)],
        requests=[RequestRecord(index=0, agent="reception", exchange=1, started_ms=0.1, duration_ms=3.0, ttft_ms=1.0,
                                text="", tool_calls=["lookup"]),
                  RequestRecord(index=1, agent="reception", exchange=2, started_ms=4.0, duration_ms=2.0, ttft_ms=None,
                                text="Done.", tool_calls=[], reasoning="r", usage={"input_tokens": 5},
                                notes=["retried"])],
        final_state={"pets": [{"id": 1}]})


VERDICT = {"passed": False,
           "tools": {"gate": "tools", "passed": False, "problems": ["lookup: name differs"], "details": {
               "forbidden": [], "calls": [{"expected": "lookup", "matched": 0, "differences": [], "parameters": {}},
                                          {"expected": "lookup", "matched": None, "closest": 1,
                                           "differences": ["name: expected 'Al'"], "parameters": {"name": "Al"}}]}},
           "handoff": {"gate": "handoff", "passed": True, "problems": [], "details": {"expected": [], "actual": []}},
           "database": {"gate": "database", "passed": True, "problems": [], "details": {"tables": {}}}}


def test_a_saved_trajectory_leaves_out_what_is_rebuilt_and_loads_back_as_played(tmp_path):
    trajectory = played().to_json()
    run = RunDir(tmp_path / "run")
    run.save_attempt("vet_clinic", "T-1", 1, {"trajectory": trajectory, "verdict": VERDICT})
    path = run.trajectory_path("vet_clinic", "T-1", 1)
    text = path.read_text(encoding="utf-8")
    saved = json.loads(text)
    assert text.startswith('{"complete":true,"format":"callm-trajectory/3","trajectory":{"attempt":1,')  # compact
    assert text.count("\n") == 1
    calls = {c.get("index", n): c for n, c in enumerate(saved["trajectory"]["tool_calls"])}
    assert "raw_arguments" not in calls[0] and calls[1]["raw_arguments"] == '{"name":"Bo"}'
    assert calls[2]["raw_arguments"] == '{"name": "B'
    assert calls[3]["raw_arguments"] == json.dumps({"name": "Ada", "n": 1})
    first, second = saved["trajectory"]["requests"]
    assert not {"text", "reasoning", "usage", "notes"} & set(first) and second["notes"] == ["retried"]
    assert set(saved["trajectory"]["transcript"][2]) == {"role", "said", "at_ms"}
    assert "index" not in first and "index" not in calls[0] and calls[3]["index"] == 3  # kept: not its place
    assert "refused" not in calls[0]
    tools = saved["verdict"]["tools"]
    assert set(tools) == {"passed", "problems", "details"} and set(saved["verdict"]["handoff"]) == {"passed", "details"}
    assert "differences" not in tools["details"]["calls"][0] and tools["details"]["calls"][1]["differences"]
    loaded = RunDir(tmp_path / "run").load_attempt("vet_clinic", "T-1", 1)
    assert loaded["verdict"] == VERDICT
    assert loaded["trajectory"] == trajectory
    assert Trajectory.from_json(loaded["trajectory"]) == played()


def test_a_trajectory_saved_in_full_by_an_older_format_loads_unchanged(tmp_path):
    trajectory = played().to_json()
    path = tmp_path / "run" / "trajectories" / "vet_clinic" / "T-1" / "attempt-1.json"
    path.parent.mkdir(parents=True)
    for version in (1, 2):
        path.write_text(json.dumps({"format": f"callm-trajectory/{version}", "complete": True,
                                    "trajectory": trajectory}))
        assert RunDir(tmp_path / "run").load_attempt("vet_clinic", "T-1", 1)["trajectory"] == trajectory
