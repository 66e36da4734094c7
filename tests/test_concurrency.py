"""--callm-concurrency: calls played together in one process give the run a serial run gives.

The scripted server plays an agent that follows the answer key of C2-E2 on every call, so the ten
attempts of C2-E2 pass and the ten of C2-E1 (another task, same agent) fail: twenty attempts whose
verdicts differ, played eight at a time against the real client, tool server and verifier.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, openai_server, openai_server_session  # noqa: F401  (fixtures)

FIRST, SECOND = "C2-E1", "C2-E2"  # collected in this order; the agent plays SECOND's key
CALLER = '''
from pytest_callm.call.caller import CallerTurn


class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn("I'd like to book a check-up for my dog Biscuit, please.")


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FixedLineCaller()
'''
RUN = ["--callm-model=scripted", "--callm-api-key-env=none", "--callm-attempts=10", "-p", "no:randomly"]


@pytest.fixture
def project(pytester, openai_server, example_tools):
    openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / SECOND / "task.json", EXAMPLE_PACK.parent), delay_ms=15)
    shutil.copytree(EXAMPLE_PACK, pytester.path / "industries" / "vet_clinic")
    for task in (FIRST, SECOND):
        shutil.copytree(EXAMPLE_TASKS / task, pytester.path / "tasks" / "vet_clinic" / task)
    pytester.makeconftest(CALLER)
    pytester.makeini("[pytest]\ncallm_retry_backoff = 0.001\n" + example_tools)
    RUN.append(f"--callm-base-url={openai_server.base_url}")
    yield pytester
    RUN.pop()


def verdicts(run: Path) -> list[tuple]:
    report = json.loads((run / "report.json").read_text())
    return [(a["task_id"], a["attempt"], a["passed"], tuple(sorted(a["gates"].items()))) for a in report["attempts"]]


def saved(run: Path) -> list[str]:
    return sorted(p.name for p in (run / "trajectories").rglob("*.json"))


def most_at_once(log: list[dict]) -> int:
    """The most chat requests the server was answering at the same moment."""
    edges = sorted([(r["start"], 1) for r in log] + [(r["end"], -1) for r in log])
    level = peak = 0
    for _, step in edges:
        level += step
        peak = max(peak, level)
    return peak


def test_twenty_attempts_eight_at_a_time_score_as_a_serial_run(project, openai_server):
    serial = project.runpytest(*RUN, "--callm-concurrency=1", "--callm-out=serial")
    serial.assert_outcomes(passed=10, failed=10)
    assert most_at_once(openai_server.log) == 1
    openai_server.log.clear()

    openai_server.state.delay_ms = 60  # replies slow enough that the calls overlap on a busy machine
    together = project.runpytest(*RUN, "--callm-concurrency=8", "--callm-out=together", "-v")
    together.assert_outcomes(passed=10, failed=10)
    assert 4 <= most_at_once(openai_server.log) <= 8  # calls in flight together, never more than 8

    openai_server.log.clear()

    # Two workers, eight calls each: the controller keeps each worker's queue deep enough for that
    # (xdist alone deals two items at a time here). Slower replies, so the workers' calls overlap.
    openai_server.state.delay_ms = 100
    workers = project.runpytest_subprocess(*RUN, "--callm-concurrency=8", "--callm-out=workers", "-n", "2")
    workers.assert_outcomes(passed=10, failed=10)
    assert most_at_once(openai_server.log) >= 9

    expected = verdicts(project.path / "serial")
    assert [v[:3] for v in expected] == [(t, a, t == SECOND) for t in (FIRST, SECOND) for a in range(1, 11)]
    assert verdicts(project.path / "together") == verdicts(project.path / "workers") == expected
    assert saved(project.path / "together") == saved(project.path / "workers") == saved(project.path / "serial")
    # Reported one by one, in order, each item with its own verdict.
    together.stdout.fnmatch_lines([f"*{task}[[]attempt-{a}] {'PASSED' if task == SECOND else 'FAILED'}*"
                                   for task in (FIRST, SECOND) for a in range(1, 11)])


def test_a_stop_cancels_the_calls_in_flight_and_a_resume_plays_them(project, openai_server):
    stopped = project.runpytest(*RUN, "--callm-concurrency=8", "--callm-out=run", "-x")
    stopped.assert_outcomes(failed=1)  # the first attempt fails; -x stops there
    kept = saved(project.path / "run")
    # Only calls that ended were saved (none more than 2 x 8 items ahead); the rest were cancelled.
    assert 1 <= len(kept) <= 16

    resumed = project.runpytest(*RUN, "--callm-concurrency=8", "--callm-resume=run")
    resumed.assert_outcomes(passed=10, failed=10)
    serial = project.runpytest(*RUN, "--callm-concurrency=1", "--callm-out=serial")
    assert verdicts(project.path / "run") == verdicts(project.path / "serial")
    assert len(saved(project.path / "run")) == 20


def test_by_default_32_calls_are_in_flight_in_the_run(project, openai_server):
    openai_server.state.delay_ms = 200  # replies slow enough that the calls overlap on a busy machine
    result = project.runpytest(*RUN, "--callm-out=default")
    result.assert_outcomes(passed=10, failed=10)
    assert most_at_once(openai_server.log) >= 12  # all twenty start together in one process


def test_the_default_shares_32_among_the_workers():
    from pytest_callm.pytest_plugin.settings import default_concurrency

    assert [default_concurrency(n) for n in (1, 2, 3, 32, 64)] == [32, 16, 10, 1, 1]


@pytest.mark.parametrize("value", ["0", "-3", "many"])
def test_a_concurrency_that_is_not_a_positive_whole_number_is_a_usage_error(project, value):
    result = project.runpytest(*RUN, f"--callm-concurrency={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--callm-concurrency must be*"])


def test_a_refused_key_stops_the_run_and_cancels_the_calls_in_flight(project, openai_server):
    openai_server.reset(api_key="sk-the-right-one")
    result = project.runpytest(*RUN, "--callm-concurrency=8")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    text = result.stdout.str() + result.stderr.str()
    assert text.count("callm stopped the run: the model server at") == 1
    assert len(openai_server.log) <= 8  # the first request of each call in flight, and no more


SIGINT_AFTER_THREE = """
import os, signal

reported = []


def pytest_runtest_logreport(report):  # Ctrl-C once three items are in, with other calls in flight
    if report.when == "call":
        reported.append(report.nodeid)
        if len(reported) == 3:
            os.kill(os.getpid(), signal.SIGINT)
"""


def test_ctrl_c_cancels_the_calls_in_flight_says_so_and_a_resume_finishes_the_run(project, openai_server):
    openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / SECOND / "task.json", EXAMPLE_PACK.parent), delay_ms=60)
    (project.path / "sigint_after_three.py").write_text(SIGINT_AFTER_THREE)
    run = project.path / "run"
    cmd = [sys.executable, "-m", "pytest", "-q", *RUN, "--callm-concurrency=8", f"--callm-out={run}",
           "-p", "sigint_after_three"]
    # A suite started as a background job (`pytest tests &`) runs with SIGINT ignored, and a child
    # inherits that: Python then installs no KeyboardInterrupt handler, and the Ctrl-C below was lost.
    proc = subprocess.run(cmd, cwd=project.path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=120, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    out = proc.stdout
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "KeyboardInterrupt" in out
    # Those reported, and those the calls in flight finished ahead of their items' reports (on a busy
    # machine pytest reports late while the loop keeps playing ahead), but not the whole run.
    assert 2 <= len(saved(run)) < 20
    # The table says its figures are partial; the last line says what is saved and how to finish.
    assert "CALLM results (PARTIAL): model scripted, k = 10" in out, out[-3000:]
    assert "PARTIAL figures: interrupted after " in out and " of 20 items." in out
    line = f"callm: interrupted: {len(saved(run))} of 20 attempts saved; resume with pytest"
    assert line in out and out.index(line) < out.index("KeyboardInterrupt"), out[-3000:]
    resume = out.split(line, 1)[1].splitlines()[0]
    assert resume.endswith(f"--callm-resume={run}") and "--callm-out" not in resume
    assert json.loads((run / "report.json").read_text())["interrupted"] == line.removeprefix("callm: ") + resume
    assert "PARTIAL figures</b>: the run was interrupted: " in (run / "report.html").read_text()
    assert not (run / ".lock").exists()

    resumed = project.runpytest(*RUN, "--callm-concurrency=8", f"--callm-resume={run}")
    resumed.assert_outcomes(passed=10, failed=10)
    assert len(saved(run)) == 20
    assert "interrupted" not in resumed.stdout.str() and "PARTIAL" not in resumed.stdout.str()
    assert "interrupted" not in json.loads((run / "report.json").read_text())
    assert "PARTIAL" not in (run / "report.html").read_text()
    assert not (run / ".lock").exists()  # a run that ends cleanly leaves no lock behind


def test_a_runtime_that_cannot_start_fails_each_attempt_in_its_own_report(vet_pack, load_task):
    from pytest_callm.runs.attempts import AttemptRunner
    from pytest_callm.toolserver.client import ToolServerError

    def no_tool_server():
        raise ToolServerError("the tool server did not start within 30s")

    task = load_task(SECOND)
    runner = AttemptRunner(no_tool_server, None, None, concurrency=4)
    runner.in_flight.play_ahead(lambda: [(task, vet_pack, 1), None, (task, vet_pack, 2)])
    for attempt in (1, 2):  # the error reaches each attempt, not the hook that started the calls
        with pytest.raises(ToolServerError, match="did not start"):
            runner.play(task, vet_pack, attempt)


def test_a_caller_hook_that_skips_one_attempt_skips_that_attempt_only(project):
    project.makeconftest(CALLER.replace("def pytest_callm_make_caller(config, task, pack, attempt, model_name):",
                                        '''def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    import pytest

    if task.task_id == "C2-E2" and attempt == 5:
        pytest.skip("this caller cannot play attempt 5")'''))
    result = project.runpytest(*RUN, "--callm-concurrency=8", "-rs")
    result.assert_outcomes(passed=9, failed=10, skipped=1)
    result.stdout.fnmatch_lines(["*this caller cannot play attempt 5*"])
    assert "INTERNALERROR" not in result.stdout.str()


def test_items_with_a_skip_mark_are_never_played(project, openai_server):
    (project.path / "conftest.py").write_text(CALLER + f'''

import pytest


def pytest_collection_modifyitems(items):
    for item in items:
        if "{SECOND}" in item.nodeid:  # collected after FIRST: would be played ahead while FIRST runs
            item.add_marker(pytest.mark.skip(reason="not today"))
''')
    result = project.runpytest(*RUN, "--callm-concurrency=8", "--callm-out=run")
    result.assert_outcomes(failed=10, skipped=10)
    assert not (project.path / "run" / "trajectories" / "vet_clinic" / SECOND).exists()
    assert len(saved(project.path / "run")) == 10


def test_a_runtime_that_cannot_start_leaves_no_thread_behind():
    import threading

    from pytest_callm.runs.runtime import Runtime
    from pytest_callm.toolserver.client import ToolServerError

    before = sum(t.name == "callm-calls" for t in threading.enumerate())
    for _ in range(3):
        with pytest.raises(ToolServerError):
            Runtime("oracle", {}, "http://127.0.0.1:1")  # nothing listens there
    assert sum(t.name == "callm-calls" for t in threading.enumerate()) == before


def test_x_under_xdist_takes_the_queued_items_back_from_every_worker(project, openai_server):
    # 21 items, the third the only failing one, whose caller hangs up at once: it fails while every
    # other call is in flight. Each worker is dealt 8 (2 x 4); without taking them back, both would
    # play and report all they hold after the failure.
    (project.path / "conftest.py").write_text(CALLER.replace("    return FixedLineCaller()", f'''
    if task.task_id == "{FIRST}":
        return HangsUp()
    return FixedLineCaller()


class HangsUp:
    async def respond(self, agent_said):
        return CallerTurn("", hang_up=True)


def pytest_collection_modifyitems(config, items):
    failing = [i for i in items if "{FIRST}[attempt-1]" in i.nodeid]
    passing = [i for i in items if "{SECOND}" in i.nodeid]
    config.hook.pytest_deselected(items=[i for i in items if i not in failing + passing])
    items[:] = passing[:2] + failing + passing[2:]


CONTROLLER = []


def pytest_configure(config):
    CONTROLLER.append(not hasattr(config, "workerinput"))


def pytest_runtest_logreport(report):  # the controller heard of the failure: the test lets the others go
    if report.when == "call" and report.failed and CONTROLLER[0]:
        open("failed.flag", "w").close()'''))
    # Every model request waits until the controller has the failure (its call needs no model):
    # the passing calls are in flight when -x strikes, however fast or slow the machine is.
    openai_server.state.hold = threading.Event()
    flag = project.path / "failed.flag"

    def release() -> None:
        deadline = time.monotonic() + 300
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        openai_server.state.hold.set()

    releaser = threading.Thread(target=release, daemon=True)
    releaser.start()
    try:
        result = project.runpytest_subprocess(*RUN, "--callm-attempts=20", "--callm-concurrency=4",
                                              "--callm-out=run", "-n", "2", "-x")
    finally:
        openai_server.state.hold.set()
        releaser.join()
    assert flag.exists()
    outcomes = result.parseoutcomes()
    assert outcomes.get("failed") == 1
    # At most the items each worker keeps when the rest is taken back (see DeepQueues): 3 and 3.
    assert outcomes.get("passed", 0) <= 6, result.stdout.str()[-2000:]
