"""Runs with a model under test other than the oracle, through the real client, engine, tool server
and verifier, against the scripted local server playing an agent that follows a task's answer key.

Most runs here plug in a test caller through the `pytest_callm_make_caller` hook that says one
fixed line per turn and never hangs up (the agent ends the call with end_call); the simulated caller
and the phone line have their own end-to-end test in test_full_call.py.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, openai_server, openai_server_session  # noqa: F401  (fixtures)
from pytest_callm.call.caller import CallerTurn
from pytest_callm.model.config import ModelConfig, Prices
from pytest_callm.runs.runtime import Runtime

TASK = "C2-E2"
TASK_FILE = EXAMPLE_TASKS / TASK / "task.json"
SERVER_SCRIPT = Path(__file__).resolve().parent / "openai_server.py"
CALLER_LINE = "I'd like to book a check-up for my dog Biscuit, please."
CALLER_CONFTEST = f'''
from pytest_callm.call.caller import CallerTurn


class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn({CALLER_LINE!r})


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FixedLineCaller()
'''
KEY = "CALLM_TEST_MODEL_KEY"


class FixedLineCaller:
    async def respond(self, agent_said: str) -> CallerTurn:
        return CallerTurn(CALLER_LINE)


@pytest.fixture
def agent_server(openai_server):
    """The scripted server playing an agent that follows the answer key of C2-E2."""
    return openai_server.reset(agent=AnswerKeyAgent(TASK_FILE, EXAMPLE_PACK.parent), delay_ms=20)


@pytest.fixture
def model_project(pytester, agent_server, monkeypatch, example_tools):
    """A project with the example pack and tasks, a test caller, and a model config `local` with prices."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    # One call at a time: the scripted steps (errors, refusals) are taken by the requests in the order
    # they come, so the attempt that meets them is known. test_concurrency.py plays calls together.
    pytester.makeini("[pytest]\ncallm_model_configs = models\ncallm_retry_backoff = 0.001\ncallm_concurrency = 1\n"
                      + example_tools)
    pytester.makeconftest(CALLER_CONFTEST)
    write_config(pytester, "local", f'''
model = "scripted"
base_url = "{agent_server.base_url}"
api_key_env = "{KEY}"

[prices]
input = 2.0
cached_input = 0.5
output = 8.0
''')
    write_config(pytester, "local-caller", f'''
model = "scripted-caller"
base_url = "{agent_server.base_url}"
api_key_env = "CALLM_TEST_CALLER_KEY"
''')
    monkeypatch.setenv(KEY, "sk-test")
    monkeypatch.delenv("CALLM_TEST_CALLER_KEY", raising=False)
    return pytester


def write_config(pytester, name: str, text: str) -> None:
    (pytester.path / "models").mkdir(exist_ok=True)
    (pytester.path / "models" / f"{name}.toml").write_text(text)


def junit_properties(pytester) -> list[dict[str, str]]:
    cases = ET.parse(pytester.path / "out.xml").getroot().iter("testcase")
    return [{p.get("name"): p.get("value") for p in case.iter("property")} for case in cases]


def output(result) -> str:
    return result.stdout.str() + result.stderr.str()


# --- end to end -----------------------------------------------------------------------------------

def test_an_example_task_passes_end_to_end_through_the_real_client(agent_server, vet_pack, tool_server, load_task):
    config = ModelConfig(name="local", model="scripted", base_url=agent_server.base_url, api_key_env=None,
                         prices=Prices(input=2.0, output=8.0, cached_input=0.5))
    runtime = Runtime("local", {vet_pack.name: vet_pack}, tool_server.url, model_config=config,
                      caller_factory=lambda task, pack, attempt: FixedLineCaller())
    try:
        trajectory, verdict = runtime.run_attempt(load_task(TASK), vet_pack, 1)
        usage = runtime.usage(trajectory)
    finally:
        runtime.close()
    assert verdict.passed, verdict.explain()
    assert trajectory.end_reason == "agent_end_call" and trajectory.model == "local"
    assert [c.name for c in trajectory.tool_calls] == ["transfer_to_appointments", "verify_owner", "find_open_slots",
                                                      "book_appointment", "end_call"]
    assert len(trajectory.requests) == 5 == len(agent_server.requests)
    for r in trajectory.requests:
        assert r.ttft_ms is not None and r.ttft_ms >= 20
        assert r.usage is not None and r.usage["input_tokens"] > 0 and r.usage["cached_input_tokens"] > 0
    assert usage["requests_without_usage"] == 0 and usage["cost_usd"] > 0


def test_a_task_passes_through_the_plugin_with_a_configured_model(model_project, agent_server):
    result = model_project.runpytest("--callm-model=local", "-k", TASK)
    result.assert_outcomes(passed=5)
    assert len(agent_server.requests) == 25


def test_any_openai_compatible_endpoint_works_without_a_config(model_project, agent_server):
    result = model_project.runpytest("--callm-model=scripted", f"--callm-base-url={agent_server.base_url}",
                                     "--callm-api-key-env=none", "-k", f"{TASK} and attempt-1")
    result.assert_outcomes(passed=1)
    assert agent_server.requests[0]["model"] == "scripted"


def table_row(result, label: str) -> list[str]:
    line = next(line for line in result.outlines if line[2:].startswith(f"{label} ") and line[0] in "│┃")
    return [c.strip() for c in line.strip(line[0]).split(line[0])]


def test_the_summary_shows_median_ttft_tokens_and_cost_per_industry(model_project):
    result = model_project.runpytest("--callm-model=local", "-k", TASK)
    assert "CALLM latency, tokens and cost: model local" in result.stdout.str()
    assert table_row(result, "per industry") == ["per industry", "vet_clinic"]
    assert table_row(result, "calls")[1:] == ["5"] and table_row(result, "requests")[1:] == ["25"]
    ttft = table_row(result, "median TTFT")[1]
    assert re.fullmatch(r"\d+ ms", ttft) and int(ttft.split()[0]) >= 20
    for label in ("input tokens", "cached input tokens", "output tokens"):
        assert re.fullmatch(r"[1-9][\d,]*", table_row(result, label)[1]), label
    for label in ("cost", "cost per call", "cost per hour"):
        assert re.fullmatch(r"\$\d[\d,.]*", table_row(result, label)[1]) and table_row(result, label)[1] != "$0.0000"
    assert "estimated at 0.605 s per word" in result.stdout.str()


def test_junit_properties_carry_ttft_tokens_and_cost_per_attempt(model_project):
    model_project.runpytest("--callm-model=local", "-k", TASK, "--junitxml=out.xml")
    props = junit_properties(model_project)
    assert len(props) == 5
    for p in props:
        assert p["callm_passed"] == "True" and p["callm_requests"] == "5" and p["callm_reruns"] == "0"
        assert float(p["callm_ttft_median_ms"]) >= 20
        tokens = [int(p[f"callm_{k}"]) for k in ("input_tokens", "cached_input_tokens", "output_tokens")]
        assert all(t > 0 for t in tokens)
        assert float(p["callm_cost_usd"]) == pytest.approx((tokens[0] * 2.0 + tokens[1] * 0.5 + tokens[2] * 8.0) / 1e6)
        assert float(p["callm_est_duration_s"]) == pytest.approx(int(p["callm_spoken_words"]) * 0.605)


def test_a_model_without_prices_shows_no_cost(model_project):
    write_config(model_project, "local", (model_project.path / "models" / "local.toml").read_text().split("[prices]")[0])
    result = model_project.runpytest("--callm-model=local", "-k", f"{TASK} and attempt-1", "--junitxml=out.xml")
    assert table_row(result, "cost")[1] == "n/a"
    assert "Cost: none: the model config has no prices" in result.stdout.str()
    assert "callm_cost_usd" not in junit_properties(model_project)[0]


# --- infrastructure errors ------------------------------------------------------------------------

def test_a_call_whose_model_fails_through_every_retry_is_rerun_from_the_start(model_project, agent_server):
    agent_server.script(*[{"status": 503}] * 5)  # every try of the first request of the first run
    result = model_project.runpytest("--callm-model=local", "-k", f"{TASK} and attempt-1", "--junitxml=out.xml")
    result.assert_outcomes(passed=1)
    assert junit_properties(model_project)[0]["callm_reruns"] == "1"


def test_an_attempt_that_fails_its_rerun_too_is_counted_but_never_scored(model_project, agent_server):
    agent_server.script(*[{"status": 500}] * 10)  # attempt 1: five tries, then five more in the rerun
    result = model_project.runpytest("--callm-model=local", "-k", TASK)
    result.assert_outcomes(passed=4, failed=1)
    text = result.stdout.str()
    assert "C2-E2 attempt 1: InfrastructureError" in text
    assert "the call failed 2 times on the harness's or the model server's side, and is not scored" in text
    assert "attempts not scored (in no denominator): 1 (infrastructure 1)" in text
    assert re.search(r"vet_clinic\s+│\s+1 │\s+4 │\s+4 │ 100\.0%", text)  # 4 scored attempts, all passed


# --- keys and callers -----------------------------------------------------------------------------

def test_a_missing_key_is_a_usage_error_before_any_item_runs(model_project, agent_server, monkeypatch):
    monkeypatch.delenv(KEY)
    result = model_project.runpytest("--callm-model=local")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--callm-model=local reads its API key from ${KEY}, which is not set*"])
    assert agent_server.log == []


def test_a_rejected_key_stops_every_worker_at_once_with_one_message(model_project, agent_server, monkeypatch):
    agent_server.reset(api_key="sk-the-right-one")
    result = model_project.runpytest_subprocess("--callm-model=local", "-n", "2")
    text = output(result)
    message = f"rejected the API key in ${KEY} (HTTP 401: Incorrect API key provided.)"
    assert text.count(message) == 1, text
    assert "callm stopped the run: the model server at" in text
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "failed" not in result.outlines[-1] and "error" not in result.outlines[-1]
    assert len(agent_server.log) <= 4  # the first attempt on each worker, not one per item


def test_a_rejected_key_stops_a_serial_run_after_the_first_attempt(model_project, agent_server):
    agent_server.reset(api_key="sk-the-right-one")
    result = model_project.runpytest("--callm-model=local")
    assert output(result).count(f"rejected the API key in ${KEY}") == 1
    assert result.ret == pytest.ExitCode.INTERRUPTED and len(agent_server.log) == 1


def test_the_simulated_callers_missing_key_is_one_usage_error(model_project, agent_server):
    (model_project.path / "conftest.py").unlink()  # no plugged-in caller: the simulated caller plays
    result = model_project.runpytest("--callm-model=local", "--callm-caller-model=local-caller")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-caller-model=local-caller reads its API key from $CALLM_TEST_CALLER_KEY, "
                                 "which is not set*"])
    assert agent_server.log == []


FIXTURE_CALLER_CONFTEST = f'''
import pytest
from pytest_callm.call.caller import CallerTurn

class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn({CALLER_LINE!r})

@pytest.fixture
def callm_caller():
    return FixedLineCaller()
'''


def test_a_callm_caller_fixture_plays_with_a_real_model_and_needs_no_caller_key(model_project, agent_server):
    model_project.makeconftest(FIXTURE_CALLER_CONFTEST)
    result = model_project.runpytest("--callm-model=local", "--callm-caller-model=local-caller", "-k", TASK)
    result.assert_outcomes(passed=5)
    assert {r["model"] for r in agent_server.requests} == {"scripted"}  # the caller model never spoke


def test_a_call_with_a_caller_of_your_own_is_not_rerun_after_an_infrastructure_failure(model_project, agent_server):
    # Rerunning needs a fresh caller, and only the plugin's own can be rebuilt mid-item.
    model_project.makeconftest(FIXTURE_CALLER_CONFTEST)
    agent_server.script(*[{"status": 503}] * 5)
    result = model_project.runpytest("--callm-model=local", "-k", f"{TASK} and attempt-1")
    result.assert_outcomes(failed=1)
    assert "the call failed 1 times on the harness's or the model server's side, and is not scored" \
        in result.stdout.str()


# --- latency replay -------------------------------------------------------------------------------

def test_the_latency_replay_samples_the_run_and_replays_one_at_a_time_after_two_warm_ups(model_project, agent_server):
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", TASK, "-n", "2", "--callm-latency",
                                                "--callm-latency-sample=4")
    result.assert_outcomes(passed=5)
    text = result.stdout.str()
    assert ("latency replay, model local: 4 request(s) sampled from 25, streamed one at a time after 2 warm-up(s)"
            in text)
    match = re.search(r"time to first token: median (\d+) ms, p90 (\d+) ms; within the conversational category", text)
    assert match and 20 <= int(match[1]) <= int(match[2])
    replayed = agent_server.log[25:]
    assert len(replayed) == 6
    for before, after in zip(replayed, replayed[1:]):
        assert after["start"] >= before["end"]
    bodies = [r["body"]["messages"] for r in agent_server.log[:25]]
    assert all(r["body"]["messages"] in bodies for r in replayed)  # requests of the run, replayed as sent


def test_the_latency_replay_runs_in_a_serial_run_too(model_project, agent_server):
    result = model_project.runpytest("--callm-model=local", "-k", f"{TASK} and attempt-1", "--callm-latency",
                                     "--callm-latency-sample=2")
    assert "latency replay, model local: 2 request(s) sampled from 5" in result.stdout.str()
    assert len(agent_server.log) == 5 + 2 + 2


# --- --callm-serve --------------------------------------------------------------------------------

def serve_config(pytester, *extra: str, ready_timeout_s: float = 60) -> None:
    args = ", ".join(f'"{a}"' for a in ["{python}", str(SERVER_SCRIPT), "--port", "{port}", "--model", "{model}",
                                        "--task", str(TASK_FILE), "--industries", str(EXAMPLE_PACK.parent),
                                        "--delay-ms", "5", *extra])
    write_config(pytester, "served", f'''
model = "scripted-served"
api_key_env = ""

[serve]
command = [{args}]
ready_timeout_s = {ready_timeout_s}
''')


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_callm_serve_starts_the_configs_server_once_for_the_run_and_stops_it(model_project, tmp_path):
    pidfile = tmp_path / "pids"
    serve_config(model_project, "--pidfile", str(pidfile))
    result = model_project.runpytest_subprocess("--callm-model=served", "--callm-serve", "-n", "2", "-k", TASK)
    result.assert_outcomes(passed=5)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 1  # one server for both workers
    deadline = time.monotonic() + 5
    while not gone(pids[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(pids[0])


def test_a_callm_serve_run_resumes_and_its_shards_merge_though_each_served_on_its_own_port(model_project, tmp_path):
    from pytest_callm.cli import main as callm

    serve_config(model_project)
    served = ("--callm-model=served", "--callm-serve", "--callm-attempts=1", "-p", "no:cacheprovider")
    out = tmp_path / "run"
    model_project.runpytest(*served, "-k", TASK, f"--callm-out={out}").assert_outcomes(passed=1)
    base_url = json.loads((out / "manifest.json").read_text())["comparable"]["model_config"]["base_url"]
    again = model_project.runpytest(*served, "-k", TASK, f"--callm-resume={out}")
    assert again.ret == 0 and "resumed in" in again.stdout.str(), output(again)
    for i in (1, 2):
        model_project.runpytest(*served, f"--callm-shard={i}/2", f"--callm-out={tmp_path / f's{i}'}")
    shard_urls = {json.loads((tmp_path / f"s{i}" / "manifest.json").read_text())["comparable"]["model_config"]
                  ["base_url"] for i in (1, 2)}
    assert len(shard_urls | {base_url}) == 3  # three servers, three ports
    assert callm(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "merged")]) == 0


def test_callm_serve_reports_a_command_that_exits_before_it_is_ready(model_project):
    serve_config(model_project, "--exit-at-once")
    result = model_project.runpytest("--callm-model=served", "--callm-serve")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-serve: the server for served (*) exited with code 3 before it was ready*",
                                 "*| scripted server: refusing to start*"])


def test_a_served_model_that_dies_stops_the_run_with_its_signal_not_a_connection_error(model_project):
    """A llama.cpp built for another CPU dies of SIGILL on its first request: the run says the server
    died and of what (here SIGKILL, which leaves no core file), from the xdist worker that sent the
    request, and stops, instead of retrying "Connection error" and leaving every attempt unscored."""
    serve_config(model_project, "--die-on-request", "SIGKILL")
    result = model_project.runpytest_subprocess("--callm-model=served", "--callm-serve", "-n", "2", "-k", TASK)
    text = output(result)
    assert re.search(r"callm stopped the run: --callm-serve: the server for served \(.*openai_server\.py.*\) died "
                     r"while the run went on: killed by signal SIGKILL \(Killed\); its output is in \S+callm-serve-",
                     text), text[-3000:]
    assert "Connection error" not in text and "not scored" not in text, text[-3000:]
    assert "failed" not in text.splitlines()[-1], text[-3000:]  # no attempt was scored or lost: none played


def test_callm_serve_gives_up_after_its_ready_timeout(model_project):
    serve_config(model_project, "--startup-s", "30", ready_timeout_s=1)
    result = model_project.runpytest("--callm-model=served", "--callm-serve")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # at the 1 s timeout, not when the server is ready (30 s)
    result.stderr.fnmatch_lines(["*--callm-serve: the server for served * did not answer /v1/models within 1 s*"])


def test_callm_serve_needs_a_config_with_a_serve_command(model_project):
    result = model_project.runpytest("--callm-model=local", "--callm-serve")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert re.search(r"--callm-serve: model local \(.*local\.toml\) names no \[serve\] command", result.stderr.str())


# --- run directories -------------------------------------------------------------------------------

def test_no_api_key_reaches_any_file_of_the_run_directory(model_project, agent_server, monkeypatch, tmp_path):
    secret = "sk-planted-7c1f0e5b2d9a4e68"
    monkeypatch.setenv(KEY, secret)
    out = tmp_path / "run"
    result = model_project.runpytest("--callm-model=local", "-k", TASK, f"--callm-out={out}", "--junitxml=j.xml")
    result.assert_outcomes(passed=5)
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 7  # manifest, report, five trajectories
    for path in files:
        assert secret not in path.read_text(encoding="utf-8"), path
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["comparable"]["model_config"]["api_key_env"] == KEY  # the variable's name, not its value
    assert secret not in (model_project.path / "j.xml").read_text()


# --- a bad attempt never takes the run down --------------------------------------------------------

RAISING_CALLER_CONFTEST = CALLER_CONFTEST + '''

class ExplodingCaller:
    async def respond(self, agent_said):
        raise RuntimeError("the plugged-in caller exploded")


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return ExplodingCaller() if attempt == 2 else FixedLineCaller()
'''


def test_a_caller_that_raises_fails_its_attempt_and_the_run_goes_on(model_project, tmp_path):
    model_project.makeconftest(RAISING_CALLER_CONFTEST)
    out = tmp_path / "run"
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", TASK, "-n", "2", f"--callm-out={out}")
    text = output(result)
    assert "INTERNALERROR" not in text
    result.assert_outcomes(passed=4, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "RuntimeError: the plugged-in caller exploded" in text
    assert "attempts not scored (in no denominator): 1 (unexpected error 1)" in text
    report = json.loads((out / "report.json").read_text())
    [failed] = [a for a in report["attempts"] if a["passed"] is None]
    assert failed["attempt"] == 2 and failed["error"] == "RuntimeError: the plugged-in caller exploded"


CRASHING_CALLER_CONFTEST = CALLER_CONFTEST + '''
import os, signal


class DyingCaller:
    async def respond(self, agent_said):
        os.kill(os.getpid(), signal.SIGKILL)  # the worker dies mid-attempt, as an OOM kill would do it


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return DyingCaller() if attempt == 3 else FixedLineCaller()
'''


def test_an_attempt_whose_worker_crashed_is_counted_as_not_scored(model_project, tmp_path):
    model_project.makeconftest(CRASHING_CALLER_CONFTEST)
    out = tmp_path / "run"
    result = model_project.runpytest_subprocess("--callm-model=local", "-k", TASK, "-n", "2", f"--callm-out={out}")
    text = output(result)
    assert "crashed while running" in text
    assert "attempts not scored (in no denominator): 1 (worker crashed 1)" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    report = json.loads((out / "report.json").read_text())
    assert len(report["attempts"]) == 5
    [crashed] = [a for a in report["attempts"] if a["passed"] is None]
    assert crashed == {**crashed, "attempt": 3, "industry": "vet_clinic", "error_kind": "worker crashed"}


def selfplay_config(pytester, pidfile, log, *server_args: str) -> None:
    """A config `selfplay` whose model plays its own caller (`caller = "self"`), served by --callm-serve
    from the scripted server with `server_args`; the servers leave their pids and requests in files."""
    args = ", ".join(f'"{a}"' for a in ["{python}", str(SERVER_SCRIPT), "--port", "{port}", "--model", "{model}",
                                        *server_args, "--pidfile", str(pidfile), "--request-log", str(log)])
    write_config(pytester, "selfplay", f'''
model = "scripted-served"
api_key_env = ""
caller = "self"

[serve]
command = [{args}]
ready_timeout_s = 60
''')


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "two workers"])
def test_callm_serve_gives_a_model_that_plays_its_own_caller_a_server_of_its_own(pytester, tmp_path, workers):
    """`caller = "self"` under --callm-serve: the same command serves the caller's side on a second
    server (a server that keeps one conversation warm would otherwise read each side's prompt from the
    start), the caller's requests go there and the agent's to the first, both stop at the end, and
    the run still says a model played both sides."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "tasks" / "vet_clinic")
    pytester.makeini("[pytest]\ncallm_model_configs = models\ncallm_line = clean\n")
    pidfile, log = tmp_path / "pids", tmp_path / "requests"
    selfplay_config(pytester, pidfile, log, "--task", str(TASK_FILE), "--industries", str(EXAMPLE_PACK.parent),
                    "--caller-line", "I'd like to book a check-up for my dog Biscuit.", "--caller-line", "Thank you.")
    result = pytester.runpytest_subprocess("--callm-model=selfplay", "--callm-serve", *workers,
                                           "-k", f"{TASK} and (attempt-1 or attempt-2)")
    assert result.ret in (0, 1), result.stdout.str()[-2000:]
    assert "THE CALLER IS THE MODEL UNDER TEST" in result.stdout.str()
    pids = [int(p) for p in pidfile.read_text().split()]
    assert len(pids) == 2  # the agent's server and the caller's
    seen = [line.split() for line in log.read_text().splitlines()]
    by_kind = {kind: {int(pid) for pid, k in seen if k == kind} for kind in ("agent", "caller")}
    assert len(by_kind["agent"]) == len(by_kind["caller"]) == 1 and by_kind["agent"] != by_kind["caller"]
    deadline = time.monotonic() + 5
    while not all(gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(gone(p) for p in pids)


def test_a_small_run_shows_each_call_as_it_plays(model_project, agent_server):
    """Issue 30: a small run of a real model printed nothing until its call ended (the local model: minutes).
    The server holds the model's first request; the call's opening is on the terminal meanwhile, and the
    rest (tool calls, how it ended) follows once the server answers."""
    import queue
    import subprocess
    import sys
    import threading

    agent_server.state.hold = threading.Event()  # clear: every request waits after its first chunk
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--callm-model=local",
                             "-k", f"{TASK} and attempt-1", "tasks"], cwd=model_project.path, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout] + [lines.put(None)], daemon=True).start()
    head = f"callm: vet_clinic/{TASK} attempt 1"
    seen: list[str] = []
    try:
        while not any(line.startswith(head) and "caller: " + CALLER_LINE in line for line in seen):
            line = lines.get(timeout=120)  # a guard against a hang, not a bound on speed
            assert line is not None, "".join(seen)
            seen.append(line)
        # The model's first request arrives and is held: the call is playing, its opening already shown.
        deadline = time.monotonic() + 120  # a guard against a hang, not a bound on speed
        while not any(r["end"] is None for r in agent_server.log):
            assert time.monotonic() < deadline and proc.poll() is None, "".join(seen)
            time.sleep(0.05)
        assert proc.poll() is None
        assert f"{head}: playing\n" in seen and not any("ended (" in line for line in seen)
    finally:
        agent_server.state.hold.set()
    while (line := lines.get(timeout=120)) is not None:  # the rest, to the end of the run
        seen.append(line)
    proc.wait(timeout=120)
    text = "".join(seen)
    assert re.search(rf"{re.escape(head)} +[\d.]+ s  agent \(reception\): ", text), text[-3000:]
    assert re.search(rf"{re.escape(head)} +[\d.]+ s  \w+ calls book_appointment\(.*\): ok", text), text[-3000:]
    assert re.search(rf"{re.escape(head)}: ended \(agent_end_call\) after \d+ exchanges", text), text[-3000:]
    assert proc.returncode == 0, text[-3000:]


def test_a_quiet_run_or_the_oracle_shows_no_call_as_it_plays(model_project):
    for args in (["--callm-model=local", "-q"], ["--callm-model=oracle"]):
        result = model_project.runpytest(*args, "-k", f"{TASK} and attempt-1")
        result.assert_outcomes(passed=1)
        assert f"callm: vet_clinic/{TASK} attempt 1" not in result.stdout.str()


def running(pid: int) -> bool:
    """Whether the process is alive (a zombie waiting for its reaper is not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_the_served_models_stop_with_the_run_however_it_is_stopped(pytester, tmp_path, how):
    """Issue 30: stopping pytest left both llama-cpp-python servers of `smollm2-local` running (2.8 GB).
    A real child process stands in for them: the scripted server, started by --callm-serve for the model
    and again for its caller (`caller = "self"`), every model request hanging. SIGTERM stops the run, and
    the run stops them; SIGKILL (or any death that runs no cleanup) leaves the kernel to stop them."""
    import signal
    import subprocess
    import sys

    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / TASK, pytester.path / "tasks" / "vet_clinic" / TASK)
    pytester.makeini("[pytest]\ncallm_model_configs = models\ncallm_line = clean\n")
    pidfile, log = tmp_path / "pids", tmp_path / "requests"
    selfplay_config(pytester, pidfile, log, "--delay-ms", "600000", "--caller-line", "Hello?")
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--callm-model=selfplay",
                             "--callm-serve", "--callm-attempts=1"], cwd=pytester.path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    deadline = time.monotonic() + 120  # guards against a hang, not bounds on speed
    try:
        # Both servers up, and a model request hanging on one of them: the run is mid-call.
        while not (pidfile.exists() and len(pidfile.read_text().split()) == 2 and log.exists()
                   and len(log.read_text().splitlines()) >= 1):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        pids = [int(p) for p in pidfile.read_text().split()]
        assert all(running(p) for p in pids)
        proc.send_signal(getattr(signal, how))
        proc.wait(timeout=120)
        while any(running(p) for p in pids):
            assert time.monotonic() < deadline, f"still running after {how} to pytest: {pids}"
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
        for p in [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []:
            if running(p):
                os.kill(p, signal.SIGKILL)
