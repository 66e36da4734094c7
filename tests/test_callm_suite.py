"""`--callm-suite`: the benchmark installed with the plugin runs from a project that holds none of it.

Here the plugin runs from the checkout, so the suite is the checkout's `tasks/`, outside the project's
rootdir as an installed wheel's is (tests/test_wheel.py runs the wheel itself).
"""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from pytest_callm.saved.rundir import task_file_name
from pytest_callm.task.benchmark import benchmark_industries, benchmark_root, benchmark_tasks

ORACLE = "--callm-model=oracle"


@pytest.fixture
def project(pytester):
    """A team's project: its own pack and tasks, none of the benchmark's."""
    shutil.copytree(EXAMPLE_PACK, pytester.path / "our_industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS, pytester.path / "our_tasks" / "vet_clinic")
    pytester.makeini("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    assert benchmark_root() not in pytester.path.parents
    return pytester


def ids(result) -> list[str]:
    return [line for line in result.outlines if "::" in line]


def test_alone_it_collects_the_benchmark_and_not_the_working_directory(project):
    result = project.runpytest("--callm-suite", ORACLE, "--collect-only", "-q")
    collected = ids(result)
    assert len(collected) == 900
    assert "legal/C4-H3/task.json::C4-H3[attempt-1]" in collected  # named from the suite's tasks/
    assert not [i for i in collected if "our_tasks" in i]


def test_beside_named_paths_the_project_tasks_run_on_their_own_pack(project, tmp_path, tool_server):
    # On the test process's tool server: it serves the suite's packs and the example pack, whose copy
    # the project holds (a server that served other files would refuse the run).
    result = project.runpytest_subprocess("--callm-suite", "our_tasks", "--callm-industries=our_industries", ORACLE,
                                          "--callm-attempts=1", "-n", "2", "-k", "C4-H3 or vet_clinic and C2-E1",
                                          f"--callm-out={tmp_path / 'run'}", "-p", "no:cacheprovider",
                                          f"--callm-tool-server={tool_server.url}")
    result.assert_outcomes(passed=4)  # C4-H3 of each industry, and the vet clinic's C2-E1
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert sorted(report["summary"]["industries"]) == ["customer_support", "healthcare", "legal", "vet_clinic"]


def test_its_packs_are_found_wherever_the_tasks_are(project):
    (project.path / "our_tasks" / "legal").mkdir()
    shutil.copy(benchmark_tasks() / "legal" / "C4-H3" / "task.json", project.path / "our_tasks" / "legal" / "task.json")
    without = project.runpytest("our_tasks/legal", ORACLE, "--callm-attempts=1")
    without.assert_outcomes(passed=1)  # the suite's legal pack, though the project holds none
    with_suite = project.runpytest("our_tasks/legal", "--callm-suite", ORACLE, "--callm-attempts=1", "-k", "legal")
    # The copy has the same task id as the suite's own C4-H3: refused by name, with the packs found.
    assert "already used by" in with_suite.stdout.str()
    assert "no industry pack" not in with_suite.stdout.str()


def test_a_projects_own_pack_of_a_suite_name_wins_over_the_suites(tmp_path):
    from pytest_callm.task.pack import PackRegistry

    own = tmp_path / "industries" / "legal"
    shutil.copytree(EXAMPLE_PACK, own)
    registry = PackRegistry([tmp_path / "industries"])
    assert registry.paths["legal"] == own and registry.paths["healthcare"].parent == benchmark_industries()


def test_generated_tasks_written_anywhere_play_and_check_with_the_suites_packs(pytester, capsys):
    """`callm generate` into a folder outside any project, then pytest and every `callm` command there:
    each found `no industry pack named 'legal'` in the working directory before. The folder is
    pytester's, the working directory of this test; the commands run in this process."""
    from pytest_callm.cli import main as callm

    def command(*args: str) -> None:
        code = callm(list(args))
        out, err = capsys.readouterr()
        assert code == 0 and "no industry pack" not in out + err and "Traceback" not in out + err, (out + err)[-3000:]

    # One task: what is tested is where the packs are found, not the generator (test_generate.py).
    command("generate", "legal", "--n", "1", "--seed", "5", "--out", "gen", "--workers", "1")
    assert (pytester.path / "gen" / "legal").is_dir() and not (pytester.path / "industries").exists()
    played = pytester.runpytest("gen", ORACLE, "--callm-attempts=1", "-q")
    assert played.ret == 0 and "1 passed" in played.stdout.str(), played.stdout.str()[-2000:]
    assert "no industry pack" not in played.stdout.str()
    command("split-check", "gen")
    command("lock", "--check", "gen")
    command("prove", "gen")
    command("lint", "--no-suite", "gen")  # the packs are found, and generated tasks are clean


def test_a_suite_file_is_named_in_the_task_set_hash_as_in_a_checkout(tmp_path):
    task = benchmark_tasks() / "legal" / "C4-H3" / "task.json"
    assert task_file_name(task, tmp_path) == "tasks/legal/C4-H3/task.json"
    assert (benchmark_industries() / "legal" / "agent_blueprint.json").is_file()
