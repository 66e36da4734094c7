"""The plugin as a user meets it: collection, selection, the oracle run, summary, JUnit, errors."""

from __future__ import annotations

import json
import re
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS

ORACLE = "--callm-model=oracle"


@pytest.fixture
def project(pytester, example_tools):
    """A fresh project: the example pack under industries/, its tasks under tasks/."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\n" + example_tools)
    return pytester


def edit_task(project, task_id, edit):
    path = project.path / "tasks" / "vet_clinic" / task_id / "task.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    return path


def summary_table(result) -> str:
    text = "\n".join(result.outlines)
    start = text.index("CALLM results")
    return text[start:text.index("attempts not scored", start)]


def test_each_task_file_becomes_one_item_per_attempt_in_a_stable_order(project):
    result = project.runpytest("--collect-only", "-q", "--callm-attempts=2")
    ids = [line for line in result.outlines if "::" in line]
    assert ids[:4] == ["tasks/vet_clinic/C1-H1/task.json::C1-H1[attempt-1]",
                       "tasks/vet_clinic/C1-H1/task.json::C1-H1[attempt-2]",
                       "tasks/vet_clinic/C1-M1/task.json::C1-M1[attempt-1]",
                       "tasks/vet_clinic/C1-M1/task.json::C1-M1[attempt-2]"]
    assert len(ids) == 16 and len(set(ids)) == 16
    again = project.runpytest("--collect-only", "-q", "--callm-attempts=2")
    assert [line for line in again.outlines if "::" in line] == ids


def test_star_task_json_files_are_collected_too(project):
    data = json.loads((project.path / "tasks/vet_clinic/C2-E1/task.json").read_text())
    data["task_name"] = data["task_name"].replace("C2-E1", "C2-E9", 1)  # a task id of its own
    (project.path / "tasks/vet_clinic/extra.task.json").write_text(json.dumps(data))
    result = project.runpytest("--collect-only", "-q", "--callm-attempts=1")
    assert "tasks/vet_clinic/extra.task.json::C2-E9[attempt-1]" in result.outlines


@pytest.mark.parametrize("option, value, expected", [
    ("-k", "vet_clinic", 40), ("-k", "C1", 10), ("-k", "C2-E1 and attempt-2", 1), ("-k", "R-H1 or R-M1", 10),
    ("-m", "hard", 15), ("-m", "easy", 10), ("-m", "not hard", 25),
])
def test_k_and_m_select_what_a_user_expects(project, option, value, expected):
    result = project.runpytest("--collect-only", "-q", option, value)
    assert len([line for line in result.outlines if "::" in line]) == expected


def test_markers_with_arguments_select_by_industry_category_and_difficulty(project):
    result = project.runpytest("--collect-only", "-q", "-m", "category(slug='R') and difficulty(level='hard')")
    ids = [line for line in result.outlines if "::" in line]
    assert len(ids) == 5 and all("R-H1" in i for i in ids)
    result = project.runpytest("--collect-only", "-q", "-m", "industry(name='vet_clinic')")
    assert len([line for line in result.outlines if "::" in line]) == 40


def test_markers_are_registered(project):
    result = project.runpytest("--collect-only", "-q", "--strict-markers")
    result.assert_outcomes()
    assert result.ret == 0


def test_the_oracle_scores_every_example_task_five_of_five(project):
    result = project.runpytest(ORACLE)
    result.assert_outcomes(passed=40)
    table = summary_table(result)
    assert re.search(r"vet_clinic\s+│\s+8 │\s+40 │\s+40 │ 100\.0% │ 100\.0%", table), table
    assert "pass^5" in table


def test_the_summary_is_identical_with_two_xdist_workers(project):
    # 7 attempts: 56 items, enough for progress lines, and tenths (6, 12, ...) that fall within a file's row
    serial = project.runpytest_subprocess(ORACLE, "-n", "0", "--callm-attempts=7")
    parallel = project.runpytest_subprocess(ORACLE, "-n", "2", "--callm-attempts=7")
    serial.assert_outcomes(passed=56)
    parallel.assert_outcomes(passed=56)
    assert summary_table(parallel) == summary_table(serial)
    for result in (serial, parallel):  # each progress line on its own, never after pytest's dots
        said = [line for line in result.outlines if "attempts (" in line]
        assert len(said) == 10 and all(re.fullmatch(r"callm: \d+/56 attempts \(\d+%\), .* left", line)
                                       for line in said), said


def test_junit_xml_carries_task_attempt_gates_and_pass_per_attempt(project):
    project.runpytest(ORACLE, "--junitxml=out.xml", "-k", "C2-E1")
    cases = ET.parse(project.path / "out.xml").getroot().iter("testcase")
    props = [{p.get("name"): p.get("value") for p in case.iter("property")} for case in cases]
    assert len(props) == 5
    assert {p["callm_attempt"] for p in props} == {"1", "2", "3", "4", "5"}
    for p in props:
        assert p["callm_task"] == "C2-E1" and p["callm_industry"] == "vet_clinic"
        assert p["callm_passed"] == "True"
        assert p["callm_gate_tools"] == p["callm_gate_handoff"] == p["callm_gate_database"] == "True"


def test_junit_properties_travel_from_xdist_workers(project):
    project.runpytest_subprocess(ORACLE, "-n", "2", "--junitxml=out.xml", "-k", "C2")
    cases = list(ET.parse(project.path / "out.xml").getroot().iter("testcase"))
    assert len(cases) == 20
    assert all(any(p.get("name") == "callm_passed" for p in c.iter("property")) for c in cases)


def test_a_failing_call_explains_each_gate_in_plain_pytest_output(project):
    def expect_another_slot(d):
        booked = next(r for r in d["exp_db_state"]["appointments"] if r["slot_id"] == "S-101")
        booked["slot_id"] = "S-102"

    edit_task(project, "C2-E2", expect_another_slot)
    result = project.runpytest(ORACLE, "-k", "C2-E2 and attempt-1")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "gates: tools pass, handoff pass, database FAIL" in out
    assert "appointments: row pet_id='p1' differs: slot_id: expected 'S-102', got 'S-101'" in out
    assert "Traceback" not in out


def test_an_unplayable_answer_key_is_reported_by_call_and_not_scored(project):
    edit_task(project, "C2-E2", lambda d: d["exp_tool_calls"][1]["parameters"].update(phone="503-555-0143"))
    result = project.runpytest(ORACLE, "-k", "C2-E2 or C2-E1")
    result.assert_outcomes(failed=5, passed=5)
    out = result.stdout.str()
    assert "AnswerKeyError" in out
    assert "verify_owner (exp_tool_calls[1]) returned 'identity_not_verified', the answer key expects 'ok'" in out
    assert "attempts not scored (in no denominator): 5 (answer_key 5)" in out
    assert re.search(r"vet_clinic\s+│\s+2 │\s+5 │\s+5 │ 100\.0%", summary_table(result))


def test_a_partial_run_says_so_instead_of_printing_pass_k(project):
    result = project.runpytest(ORACLE, "-k", "attempt-1")
    table = summary_table(result)
    assert "n/a*" in table
    assert "partial run: 8 of 8 tasks have fewer than 5 scored attempts" in result.stdout.str()


def test_callm_k_sets_k_of_pass_k(project):
    result = project.runpytest(ORACLE, "--callm-attempts=2", "--callm-k=1")
    result.assert_outcomes(passed=16)
    assert "pass^1" in summary_table(result)


def test_running_tasks_without_a_model_is_a_usage_error(project):
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*no model under test: pass --callm-model=NAME*"])


def test_running_tasks_without_a_model_under_xdist_is_a_usage_error(project):
    result = project.runpytest_subprocess("-n", "2")
    assert result.ret != 0
    assert "no model under test: pass --callm-model=NAME" in result.stdout.str() + result.stderr.str()


def test_a_model_name_without_a_config_is_an_openai_model_id_that_needs_its_key(project, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = project.runpytest("--callm-model=no-such-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-model=no-such-model reads its API key from $OPENAI_API_KEY, "
                                 "which is not set*"])


def test_the_model_can_come_from_the_ini_file(project):
    project.makeini("[pytest]\ncallm_model = oracle\ncallm_attempts = 1\n")
    project.runpytest("-k", "C2-E1").assert_outcomes(passed=1)


def test_a_broken_task_file_fails_only_its_own_collection_naming_file_and_path(project):
    edit_task(project, "C2-E1", lambda d: d["exp_tool_calls"][0].update(name="check_opening_hours"))
    result = project.runpytest("--collect-only", "-q")
    out = result.stdout.str()
    assert "tasks/vet_clinic/C2-E1/task.json: $.exp_tool_calls[0].name: unknown tool 'check_opening_hours'" in out
    assert "Traceback" not in out
    assert len([line for line in result.outlines if "::" in line]) == 35  # the other 7 tasks
    assert "1 error" in out


def test_invalid_json_names_the_file_and_the_position(project):
    (project.path / "tasks/vet_clinic/C2-E1/task.json").write_text('{"task_name": "C2-E1: x",')
    out = project.runpytest("--collect-only", "-q").stdout.str()
    assert "tasks/vet_clinic/C2-E1/task.json: invalid JSON at line 1 column 26" in out


def test_a_missing_field_and_a_wrong_type_are_named_by_json_path(project):
    def damage(d):
        del d["intent"]
        d["metadata"]["difficulty"] = "extreme"

    edit_task(project, "C2-E1", damage)
    out = project.runpytest("--collect-only", "-q").stdout.str()
    assert "$: 'intent' is a required property" in out
    assert "$.metadata.difficulty: 'extreme' is not one of ['easy', 'medium', 'hard']" in out


def test_an_agent_unknown_to_the_pack_is_named(project):
    edit_task(project, "C2-E2", lambda d: d.update(exp_handoff_path=["billing"]))
    out = project.runpytest("--collect-only", "-q").stdout.str()
    assert "$.exp_handoff_path[0]: 'billing' is neither an agent nor a handoff tool" in out


def test_a_broken_pack_is_one_clear_error(project):
    (project.path / "industries/vet_clinic/prompts/records.md").unlink()
    result = project.runpytest("--collect-only", "-q")
    out = result.stdout.str()
    assert "industries/vet_clinic is broken" in out
    assert "agent 'records': prompt prompts/records.md is missing or empty" in out
    assert "Traceback" not in out and "pack.py" not in out


def test_packs_can_live_in_extra_folders(project):
    shutil.move(project.path / "industries", project.path / "packs")
    result = project.runpytest("--collect-only", "-q", "--callm-industries", "packs")
    assert len([line for line in result.outlines if "::" in line]) == 40


def test_a_running_tool_server_can_be_shared_and_is_refused_if_its_pack_differs(project, tmp_path):
    from pytest_callm.task.pack import load_pack
    from pytest_callm.toolserver.server import ToolServer

    # The run really plays on the named server: the call databases it keeps are in its data folder.
    pack = load_pack(project.path / "industries" / "vet_clinic")
    with ToolServer({pack.name: pack}, data_dir=tmp_path / "kept") as server:
        project.runpytest(ORACLE, f"--callm-tool-server={server.url}", "-k", "C2-E1 or C2-E2").assert_outcomes(passed=10)
    assert len(list((tmp_path / "kept" / "vet_clinic").glob("C2-E*.sqlite"))) == 10

    # A server whose copy of the pack differs in one seed row (slot S-101 taken) would fail C2-E2 for
    # a reason that is not the model's: the run is refused in one line, and nothing is played.
    served = tmp_path / "served" / "vet_clinic"
    shutil.copytree(project.path / "industries" / "vet_clinic", served)
    seed = served / "db" / "seed.sql"
    seed.write_text(seed.read_text().replace("'Dr. Patel',  1),\n    ('S-102'", "'Dr. Patel',  0),\n    ('S-102'"))
    with ToolServer({"vet_clinic": load_pack(served)}) as server:
        refused = project.runpytest(ORACLE, f"--callm-tool-server={server.url}", "-k", "C2-E1 or C2-E2")
    assert refused.ret == pytest.ExitCode.INTERRUPTED
    assert not refused.parseoutcomes().get("passed") and not refused.parseoutcomes().get("failed")
    assert f"--callm-tool-server: the tool server at {server.url} serves a 'vet_clinic' pack whose files differ " \
           "from this run's" in refused.stdout.str()


def test_a_shared_tool_server_with_a_token_serves_the_runs_that_hold_it(project, monkeypatch):
    from pytest_callm.task.pack import load_pack
    from pytest_callm.toolserver.calldb import TOKEN_ENV
    from pytest_callm.toolserver.server import ToolServer

    pack = load_pack(project.path / "industries" / "vet_clinic")
    with ToolServer({pack.name: pack}, token="shared-secret-token") as server:
        import httpx

        refused = httpx.get(f"{server.url}/packs/vet_clinic/state", headers={"X-Call-Id": "anyone"})
        assert refused.status_code == 403 and refused.json()["error_code"] == "forbidden"
        without = project.runpytest(ORACLE, f"--callm-tool-server={server.url}", "-k", "C2-E1",
                                    "--callm-attempts=1")
        without.assert_outcomes(failed=1)  # not scored: the server refused the run's calls (403)
        assert "HTTP 403" in without.stdout.str()
        monkeypatch.setenv(TOKEN_ENV, "shared-secret-token")
        project.runpytest(ORACLE, f"--callm-tool-server={server.url}", "-k", "C2-E1",
                          "--callm-attempts=1").assert_outcomes(passed=1)


def test_an_unreachable_tool_server_is_one_usage_error(project):
    result = project.runpytest(ORACLE, "--callm-tool-server=http://127.0.0.1:9", "-k", "C2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-tool-server: the tool server at http://127.0.0.1:9 is not reachable*"])


def test_keeping_call_databases_on_a_running_tool_server_is_one_usage_error(project):
    """The databases are the running server's files: before, the run kept none and said nothing."""
    result = project.runpytest(ORACLE, "--callm-tool-server=http://127.0.0.1:9", "--callm-keep-calls", "-k", "C2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-keep-calls keeps the call databases of the tool server a run starts; "
                                 "with --callm-tool-server they are that server's (`callm serve --data-dir DIR` keeps them)*"])


def test_callm_serve_keeps_each_calls_database_in_its_data_dir(project, tmp_path):
    import subprocess
    import sys

    kept = tmp_path / "kept"
    server = subprocess.Popen([sys.executable, "-m", "pytest_callm.cli", "serve", "--port", "0", "--data-dir", str(kept)],
                              cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              stdin=subprocess.DEVNULL)
    try:
        line = server.stdout.readline()
        url = re.search(r"at (http://127\.0\.0\.1:\d+)", line)
        assert url, line
        project.runpytest(ORACLE, f"--callm-tool-server={url[1]}", "-k", "C2-E1 and attempt-1").assert_outcomes(passed=1)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert [p.suffix for p in kept.rglob("*") if p.is_file() and not p.name.startswith(".")] == [".sqlite"]


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_two_task_files_with_one_id_are_a_collection_error_naming_both(project, workers):
    copy = project.path / "tasks" / "vet_clinic" / "C2-E2-copy"
    shutil.copytree(project.path / "tasks" / "vet_clinic" / "C2-E2", copy)  # task_name left unchanged
    result = project.runpytest_subprocess(ORACLE, "-k", "C2-E2", *workers)
    text = result.stdout.str() + result.stderr.str()
    assert re.search(r"C2-E2-copy/task\.json: \$\.task_name: task id C2-E2 of industry vet_clinic is already used "
                     r"by \S*tasks/vet_clinic/C2-E2/task\.json", text), text
    assert result.ret != 0


def test_a_bad_task_file_under_xdist_is_named_in_the_summary_and_fails_the_run(project):
    (project.path / "tasks" / "vet_clinic" / "C2-E2" / "task.json").write_text('{"task_name": "broken')
    result = project.runpytest_subprocess(ORACLE, "-n", "2", "-k", "C2")
    assert "callm: 1 task file(s) could not be collected and are in no figure: tasks/vet_clinic/C2-E2/task.json" \
        in result.stdout.str()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=15, errors=1)


@pytest.mark.parametrize("option", ["--callm-request-timeout=0", "--callm-request-timeout=-5",
                                    "--callm-request-deadline=0", "--callm-request-deadline=nan"])
def test_a_request_timeout_or_deadline_that_is_not_positive_is_a_usage_error(project, option):
    result = project.runpytest(ORACLE, option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    name = option.split("=")[0]
    assert f"{name} must be more than 0" in result.stderr.str()


ASYNC_TESTS = '''
import pytest
import pytest_asyncio


@pytest_asyncio.fixture
async def answer():
    return 42


@pytest.mark.asyncio
async def test_async_fixture(answer):
    assert answer == 42
'''


def test_pytest_asyncio_does_not_warn_in_a_project_without_its_loop_scope_setting(pytester):
    """Issue 30: pytest-asyncio's deprecation warning printed in any project whose ini leaves
    asyncio_default_fixture_loop_scope unset; the plugin sets it to "function", a project's own wins."""
    pytester.makepyfile(test_async=ASYNC_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    out = result.stdout.str() + result.stderr.str()
    assert "is unset" not in out and "PytestDeprecationWarning" not in out
    assert "asyncio_default_fixture_loop_scope=function" in out  # pytest-asyncio's header line
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = module\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-v")
    result.assert_outcomes(passed=1)
    assert "asyncio_default_fixture_loop_scope=module" in result.stdout.str()
