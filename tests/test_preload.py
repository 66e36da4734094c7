"""No `pytest_callm` module is first imported by a thread other than the main one during a run.

pytest rewrites the asserts of every module of a distribution that registers a pytest11 plugin, so
each `pytest_callm` module is compiled through `ast.parse` when imported (on every import with
`PYTHONDONTWRITEBYTECODE=1`). On CPython 3.11 and early 3.12 the `ast` module keeps its recursion
counter in state shared by threads: two threads converting ASTs at once can fail with
`SystemError: AST constructor recursion depth mismatch`. A run has threads (the event loop, the tool
server's starter, the line's rewriter), so whatever they run must be imported before they start.

A real run, in a child process with `PYTHONDONTWRITEBYTECODE=1` as on the machines where the crash
was seen: the scripted model server plays the example task's answer key through the real client,
engine, line and tool server, and an audit hook in the child notes every import of a project module
not yet loaded, with the thread that asked for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import EXAMPLE_PACK, EXAMPLE_TASKS
from openai_server import AnswerKeyAgent, openai_server, openai_server_session  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parent.parent
TASK = "C2-E2"

AUDIT_PLUGIN = '''
import atexit, os, sys, threading

late = []


def note(event, args):
    if event == "import" and args[0].startswith("pytest_callm") and args[0] not in sys.modules \\
            and threading.current_thread() is not threading.main_thread():
        late.append(f"{args[0]} in {threading.current_thread().name}")


sys.addaudithook(note)
atexit.register(lambda: open(os.environ["CALLM_TEST_IMPORTS_OUT"], "a").write("".join(f"{x}\\n" for x in late)))
'''

CALLER_CONFTEST = '''
from pytest_callm.call.caller import CallerTurn


class FixedLineCaller:
    async def respond(self, agent_said):
        return CallerTurn("I'd like to book a check-up for my dog Biscuit, please.")


def pytest_callm_make_caller(config, task, pack, attempt, model_name):
    return FixedLineCaller()
'''


def test_a_run_imports_every_project_module_before_its_threads_start(openai_server, tmp_path):
    server = openai_server.reset(agent=AnswerKeyAgent(EXAMPLE_TASKS / TASK / "task.json", EXAMPLE_PACK.parent))
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE_PACK, project / "industries" / "vet_clinic")
    shutil.copytree(EXAMPLE_TASKS / TASK, project / "tasks" / "vet_clinic" / TASK)
    (project / "models").mkdir()
    (project / "models" / "local.toml").write_text(f'model = "scripted"\nbase_url = "{server.base_url}"\n'
                                                   'api_key_env = "CALLM_TEST_MODEL_KEY"\n')
    (project / "pytest.ini").write_text("[pytest]\ncallm_model_configs = models\ncallm_industries = industries\n")
    (project / "conftest.py").write_text(CALLER_CONFTEST)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "audit_imports.py").write_text(AUDIT_PLUGIN)
    out = tmp_path / "late-imports.txt"
    out.write_text("")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "CALLM_TEST_MODEL_KEY": "sk-test",
           "CALLM_TEST_IMPORTS_OUT": str(out),
           "PYTHONPATH": os.pathsep.join([str(tmp_path / "plugins"), str(ROOT)])}
    # -p loads the audit hook before the plugin's configure; the line is the default one (it mishears).
    run = subprocess.run([sys.executable, "-m", "pytest", "-p", "audit_imports", "tasks", "--callm-model=local",
                          "--callm-line=default", "-n", "2", "--callm-concurrency=2", "-p", "no:cacheprovider", "-q"],
                         cwd=project, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert (project / "callm-runs").exists() or "run saved" in run.stdout + run.stderr
    late = out.read_text().splitlines()
    assert late == [], f"imported by a thread while others run, not before: {late}"

