"""No secret is ever saved or printed, even when the model server echoes it back.

The scripted server repeats the Authorization header in every error message; whatever the run
wrote (run directory, HTML page, JUnit XML, terminal) must not hold the key, nor a password
written into the base URL.
"""

from __future__ import annotations

import base64
import json

from conftest import own_tool_server
from openai_server import openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.model import redact
from test_model_runs import KEY, TASK, agent_server, model_project, output  # noqa: F401  (fixtures)

SECRET = "sk-planted-echo-5b2d9a4e68c1f0e7"
URL_PASSWORD = "pw-planted-in-the-url-91c3"


def everything_written(root) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in root.rglob("*") if p.is_file())


def test_an_echoed_key_is_redacted_from_everything_the_run_wrote(model_project, agent_server, monkeypatch, tmp_path):
    monkeypatch.setenv(KEY, SECRET)
    agent_server.reset(agent=agent_server.state.agent, delay_ms=1, echo_auth=True)
    agent_server.script(*[{"status": 500}] * 20)  # both workers: failures through retries and reruns, some infra errors
    out = tmp_path / "run"
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", TASK, "-n", "2", f"--callm-out={out}",
                                                "--junitxml=j.xml", "-rA")
    assert agent_server.log and all(r["status"] == 500 for r in agent_server.log[:20])
    report = json.loads((out / "report.json").read_text())
    errors = [a["error"] for a in report["attempts"] if a.get("error")]
    assert errors and all(f"${KEY}" in e for e in errors)  # the echo was there, and was replaced by the name
    written = everything_written(out) + (model_project.path / "j.xml").read_text() + output(result)
    assert (out / "report.html").exists()
    assert SECRET not in written


def test_credentials_in_the_base_url_are_never_saved_or_shown(model_project, agent_server, tmp_path):
    agent_server.reset(agent=agent_server.state.agent, delay_ms=1, echo_auth=True)
    agent_server.script(*[{"status": 500}] * 10)  # attempt 1 fails through its rerun, echoing the Basic header
    out = tmp_path / "run"
    host = agent_server.base_url.removeprefix("http://")
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", f"{TASK} and attempt-1",
                                                f"--callm-out={out}", "--junitxml=j.xml",
                                                f"--callm-base-url=http://callm:{URL_PASSWORD}@{host}")
    basic = base64.b64encode(f"callm:{URL_PASSWORD}".encode()).decode()
    assert len(agent_server.log) >= 10  # the server saw the requests
    text = output(result)
    assert "$base URL credentials" in text  # the echo was there, redacted
    written = everything_written(out) + (model_project.path / "j.xml").read_text() + text
    assert URL_PASSWORD not in written and basic not in written
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["comparable"]["model_config"]["base_url"] == f"http://{host}"


def test_a_rejected_key_echoed_in_the_stop_message_is_redacted(model_project, agent_server, monkeypatch, tmp_path):
    monkeypatch.setenv(KEY, SECRET)
    agent_server.reset(api_key="sk-the-right-one", echo_auth=True)
    result = model_project.runpytest_subprocess("--callm-model=local", f"--callm-out={tmp_path / 'run'}")
    text = output(result)
    assert "callm stopped the run" in text and f"Bearer ${KEY}" in text
    assert SECRET not in text + everything_written(tmp_path / "run")


def test_redaction_replaces_longer_secrets_first_and_reaches_keys():
    redact.remember("abcd-long-secret", "LONG_VAR")
    redact.remember("abcd", "SHORT_VAR")
    assert redact.value({"abcd-long-secret": ["x abcd y"]}) == {"$LONG_VAR": ["x $SHORT_VAR y"]}
    assert redact.public_url("https://u:p4ssw0rd@example.com:8443/v1?x=1") == "https://example.com:8443/v1?x=1"
    assert redact.text("p4ssw0rd") == "$base URL password"


def test_a_key_a_tool_stored_in_a_kept_call_database_is_redacted(model_project, agent_server, monkeypatch, tmp_path):
    """--callm-keep-calls kept each call's SQLite file as the tools left it: a key the model wrote into
    an argument (here the name it verifies, which the identity check records) was there in clear."""
    own_tool_server(model_project)  # the databases kept are those of the server the run starts
    monkeypatch.setenv(KEY, SECRET)
    agent_server.reset(delay_ms=1)
    agent_server.script({"tool_calls": [{"name": "transfer_to_appointments",
                                         "arguments": {"handoff_summary": "Dana wants a check-up."}}]},
                        {"tool_calls": [{"name": "verify_owner",
                                         "arguments": {"full_name": f"Dana {SECRET}", "phone": "503-555-0142"}}]},
                        {"text": "Thank you, goodbye."})
    out = tmp_path / "run"
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", f"{TASK} and attempt-1",
                                                f"--callm-out={out}", "--callm-keep-calls")
    assert "attempts not scored (in no denominator): 0" in output(result), output(result)
    kept = list((out / "calls").rglob("*.sqlite"))
    calls = [p for p in kept if not p.name.startswith(".")]
    assert calls, kept
    import sqlite3

    db = sqlite3.connect(calls[0])
    tried = [r[0] for r in db.execute("SELECT claimed_name FROM verifications")]
    db.close()
    assert any(f"${KEY}" in (t or "") for t in tried), tried  # the try is kept, the key replaced by its name
    for path in (out / "calls").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
