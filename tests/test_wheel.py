"""The wheel, installed in a fresh virtual environment outside any checkout, runs the benchmark.

The packs and locked tasks travel in the wheel as package data (setup.py), `pytest --callm-suite`
collects them beside a team's own tasks, and the RL adapters start on them: verifiers'
`load_environment`, the OpenEnv app and the NeMo Gym server. Slow (a build and an install of the
`rl` extra from the package index, minutes): CI runs it in a step of its own (`--run-slow`).
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from conftest import REPO

pytestmark = pytest.mark.slow

SUITE_INDUSTRIES = ("customer_support", "healthcare", "legal")
START_S = 180  # a server's start on a loaded 2-core machine: imports, 180 tasks loaded, a tool server


@dataclass
class Installed:
    bin: Path  # the virtual environment's scripts
    team: Path  # a team's project: its own tasks and pack, and no file of the benchmark

    def run(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
        return subprocess.run([str(self.bin / args[0]), *args[1:]], cwd=self.team, env=self.environ(),
                              capture_output=True, text=True, timeout=timeout)

    def start(self, *args: str, **kwargs) -> subprocess.Popen:
        return subprocess.Popen([str(self.bin / args[0]), *args[1:]], cwd=self.team, env=self.environ(), text=True,
                                **kwargs)

    def environ(self) -> dict[str, str]:
        environ = outside()
        return {**environ, "PATH": f"{self.bin}{os.pathsep}{environ.get('PATH', '')}"}


def outside() -> dict[str, str]:
    """This process's environment less what points into the checkout: with PYTHONPATH on it, pip takes
    the checkout's metadata for pytest-callm installed and skips the wheel."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def source_copy(to: Path) -> Path:
    """The project's files as git sees them (tracked and new, never ignored build output): a stale
    build/ of the checkout cannot slip a removed file into the wheel."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, to / name)
    return to


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = source_copy(work / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"), str(source)],
                   check=True, capture_output=True, timeout=900, env=outside())
    (built,) = (work / "dist").glob("pytest_callm-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Installed:
    work = tmp_path_factory.mktemp("installed")
    assert REPO not in work.parents
    subprocess.run([sys.executable, "-m", "venv", str(work / "venv")], check=True, timeout=300, env=outside())
    bin_ = work / "venv" / "bin"
    installing = subprocess.run([str(bin_ / "python"), "-m", "pip", "install", "-q", "--no-compile", f"{wheel}[rl]"],
                                capture_output=True, text=True, timeout=1800, env=outside())
    assert installing.returncode == 0, installing.stderr[-3000:]
    where = subprocess.run([str(bin_ / "python"), "-c", "import pytest_callm; print(pytest_callm.__file__)"],
                           capture_output=True, text=True, env=outside(), cwd=work, check=True).stdout
    assert Path(where).is_relative_to(work / "venv"), where
    team = work / "team"
    shutil.copytree(REPO / "examples" / "tasks", team / "our_tasks")
    shutil.copytree(REPO / "examples" / "industries", team / "our_industries")
    (team / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    return Installed(bin_, team)


class Lines:
    """A child's output read line by line in a thread, so a test waits on the line it expects."""

    def __init__(self, stream):
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        for line in stream:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, pattern: str, timeout: float) -> re.Match:
        while True:
            line = self.lines.get(timeout=timeout)  # queue.Empty: the server never said it
            if line is None:
                raise AssertionError("the server ended before it was ready:\n" + "".join(self.seen[-40:]))
            self.seen.append(line)
            found = re.search(pattern, line)
            if found:
                return found


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_the_wheel_carries_every_locked_task_and_pack(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    tasks = [n for n in names if n.startswith("pytest_callm/benchmark/tasks/") and n.endswith("/task.json")]
    assert len(tasks) == len(list((REPO / "tasks").rglob("task.json"))) == 180
    for industry in SUITE_INDUSTRIES:
        assert f"pytest_callm/benchmark/industries/{industry}/agent_blueprint.json" in names
        assert f"pytest_callm/benchmark/industries/{industry}/tools.py" in names
    assert not [n for n in names if "__pycache__" in n]


def test_callm_suite_alone_collects_the_benchmark_and_nothing_of_the_project(installed):
    listed = installed.run("pytest", "--callm-suite", "--callm-model=oracle", "--collect-only", "-q",
                           "-p", "no:cacheprovider")
    assert listed.returncode == 0, listed.stdout[-3000:] + listed.stderr[-3000:]
    assert "900 tests collected" in listed.stdout
    assert "our_tasks" not in listed.stdout


def test_the_oracle_passes_the_suite_beside_a_teams_own_tasks(installed, tmp_path):
    # A share of the 900 attempts (every easy task numbered 1: 18 of the suite) keeps this in minutes;
    # the report of the whole run, by hand, is in the README.
    played = installed.run("pytest", "--callm-suite", "our_tasks", "--callm-industries=our_industries",
                           "--callm-model=oracle", "--callm-attempts=2", "-n", "2", "-k", "E1 or vet_clinic",
                           f"--callm-out={tmp_path / 'run'}", "-q", "-p", "no:cacheprovider")
    assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "report.json").read_text())["summary"]
    assert sorted(summary["industries"]) == [*SUITE_INDUSTRIES, "vet_clinic"]
    assert summary["industries"]["legal"]["tasks"] == 6
    overall = summary["overall"]
    assert overall["passes"] == overall["attempts"] > 36


def test_load_environment_finds_the_installed_tasks(installed):
    script = ("import json, verifiers as vf\n"
              "env = vf.load_environment('pytest_callm.rl.verifiers_env', industry='legal')\n"
              "try:\n"
              "    rows = env.get_dataset()\n"
              "    print(len(rows), sorted({json.loads(i)['callm_row']['task'].split('/')[0] for i in rows['info']}))\n"
              "finally:\n"
              "    env.close()\n")
    loaded = installed.run("python", "-c", script)
    assert loaded.returncode == 0, loaded.stderr[-3000:]
    assert loaded.stdout.strip().splitlines()[-1] == "60 ['legal']"


def test_the_openenv_app_serves_and_passes_openenvs_own_checks(installed):
    server = installed.start("python", "-m", "uvicorn", "pytest_callm.rl.openenv_app:app", "--host", "127.0.0.1",
                             "--port", "0", stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    try:
        url = Lines(server.stderr).wait_for(r"Uvicorn running on (http://\S+)", START_S)[1]
        checked = installed.run("openenv", "validate", "--url", url, timeout=120)
        assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-3000:]
        assert json.loads(checked.stdout)["passed"] is True
        reset = httpx.post(f"{url}/reset", json={"task": "healthcare/C1-E1", "seed": 1}, timeout=60)
        assert reset.status_code == 200, reset.text
        assert reset.json()["observation"]["task"] == "healthcare/C1-E1"
    finally:
        stop(server)


def test_the_nemo_gym_server_serves_the_installed_tasks(installed):
    folders = installed.run("python", "-m", "pytest_callm.task.benchmark", "industries", "tasks")
    assert folders.returncode == 0, folders.stderr
    industries, tasks = map(Path, folders.stdout.split())
    assert REPO not in industries.parents and industries.parent == tasks.parent
    server = installed.start("python", "-m", "pytest_callm.rl.nemo_gym_server", "--pack", str(industries / "legal"),
                             "--task", str(tasks / "legal"), stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        url = Lines(server.stdout).wait_for(r"CALLM_TOOL_SERVER_URL (\S+)", START_S)[1]
        seeded = httpx.post(f"{url}/seed_session", json={"task": "legal/C4-H3", "seed": 1}, timeout=60)
        assert seeded.status_code == 200, seeded.text
        assert seeded.json()["session_id"]
        server.stdin.close()  # the server's end, as its owner signals it
        assert server.wait(timeout=60) == 0
    finally:
        stop(server)
