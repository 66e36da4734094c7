"""The package's folders are its architecture: imports run one way along the data's path, with no
circle between modules or folders, and only the pytest layer imports pytest. The engine runs from a
plain script with no pytest at all (it also serves as a reinforcement-learning environment)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pytest_callm"
# Along the data's way: task -> call -> trajectory -> verdict -> report, the pytest layer and the
# `callm` command on top. A folder may import only from folders before it (and from itself).
LAYERS = ["gc_pace", "user_cache", "normalize", "toolkit", "front_desk", "task", "model", "phone", "toolserver", "call", "scoring", "saved", "runs", "report",
          "session", "authoring", "rl", "standin",
          "cli", "pytest_plugin"]
PYTEST_LAYER = "pytest_plugin"
PYTEST_MODULES = ("pytest", "_pytest", "pytest_asyncio", "xdist", "pluggy")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(tree: ast.AST, type_checking: bool = False):
    """Every import statement that can run, in functions too: those under `if TYPE_CHECKING:` never
    do, and count only with `type_checking` (a circle through one is still two modules that need
    each other)."""
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
                node.body = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node


def import_graph(type_checking: bool = False) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(module -> package modules it imports, module -> outside top-level names it imports)."""
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    inside: dict[str, set[str]] = {}
    outside: dict[str, set[str]] = {}
    for name, path in files.items():
        inside[name], outside[name] = set(), set()
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in runtime_imports(ast.parse(path.read_text()), type_checking):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[:len(package.split(".")) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                if target.split(".")[0] == "pytest_callm":
                    while target not in files:  # `from pytest_callm.x import name`: the module x
                        target = target.rpartition(".")[0]
                    if target != name:
                        inside[name].add(target)
                else:
                    outside[name].add(target.split(".")[0])
    return inside, outside


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_no_module_imports_itself_through_a_circle():
    inside, _ = import_graph(type_checking=True)  # imports in functions and for type checkers count too
    assert find_cycle(inside) is None, " -> ".join(find_cycle(inside))


def test_the_import_walk_sees_imports_in_functions_and_for_type_checkers():
    inside, _ = import_graph(type_checking=True)
    assert "pytest_callm.model.client" in inside["pytest_callm.runs.runtime"]  # under TYPE_CHECKING and in __init__
    assert "pytest_callm.toolserver.server" in inside["pytest_callm.cli"]  # inside a function


def test_the_cycle_finder_sees_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_every_folder_imports_only_from_folders_before_it_on_the_datas_way():
    inside, _ = import_graph()
    wrong = []
    for module, targets in inside.items():
        here = layer_of(module)
        if here is None:
            continue  # pytest_callm/__init__.py
        assert here in LAYERS, f"{module}: add its folder to LAYERS, at its place on the data's way"
        for target in targets:
            there = layer_of(target)
            if there is not None and LAYERS.index(there) > LAYERS.index(here):
                wrong.append(f"{module} -> {target}")
    assert not wrong, "imports that reach back upstream:\n" + "\n".join(sorted(wrong))


def test_only_the_pytest_layer_imports_pytest():
    _, outside = import_graph()
    offenders = sorted(f"{m} imports {sorted(set(names) & set(PYTEST_MODULES))}" for m, names in outside.items()
                       if set(names) & set(PYTEST_MODULES) and layer_of(m) != PYTEST_LAYER)
    assert not offenders, "\n".join(offenders)
    assert "pytest" in outside["pytest_callm.pytest_plugin.plugin"]  # the walk does see pytest imports


SCRIPT = """
import sys
from pathlib import Path
from pytest_callm.runs.runtime import Runtime
from pytest_callm.task.pack import PackRegistry
from pytest_callm.task.task_file import load_task

packs = PackRegistry([Path(sys.argv[1])])
_, task, pack = load_task(Path(sys.argv[2]), packs)
runtime = Runtime("oracle", packs.loaded())
try:
    trajectory, verdict = runtime.run_attempt(task, pack, 1)
finally:
    runtime.close()
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {PYTEST_MODULES!r})
print(verdict.passed, len(trajectory.tool_calls), loaded)
"""


def test_a_plain_script_plays_and_scores_an_oracle_call_without_importing_pytest(tmp_path):
    repo = PACKAGE.parent
    script = tmp_path / "play.py"
    script.write_text(SCRIPT.replace("{PYTEST_MODULES!r}", repr(set(PYTEST_MODULES))))
    done = subprocess.run([sys.executable, str(script), str(repo / "examples" / "industries"),
                           str(repo / "examples" / "tasks" / "vet_clinic" / "C2-E2" / "task.json")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    passed, calls, loaded = done.stdout.split(" ", 2)
    assert (passed, loaded.strip()) == ("True", "[]")
    assert int(calls) > 0


SPY = """
import sys

def pytest_collection_finish(session):
    print("HTTP CLIENTS LOADED:", sorted(m for m in ("aiohttp", "openai", "httpx2", "fastapi") if m in sys.modules))
"""


@pytest.mark.parametrize("model", ["oracle", "gpt-4.1"])
def test_collecting_tasks_imports_no_http_client(tmp_path, model):
    # aiohttp builds SSL contexts at import (~0.3 s a process): only a process that plays a call pays it.
    # A real model's key check (before collection) must not import the openai SDK either: the
    # runtime imports it later, while its tool server starts.
    repo = PACKAGE.parent
    (tmp_path / "callm_spy.py").write_text(SPY)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    how = (["--collect-only"] if model == "oracle" else  # -k: collected, checked, none played
           ["-k", "no_such_item", "--callm-api-key-env=CALLM_SPY_KEY", "--callm-caller-api-key-env=CALLM_SPY_KEY"])
    shutil.copytree(repo / "examples" / "tasks" / "vet_clinic", tmp_path / "tasks" / "vet_clinic")  # under the rootdir
    done = subprocess.run([sys.executable, "-m", "pytest", "tasks",
                           f"--callm-model={model}", f"--callm-industries={repo / 'examples' / 'industries'}",
                           *how, "-q", "-p", "no:cacheprovider", "-p", "callm_spy", "-s",
                           "-c", str(tmp_path / "pytest.ini")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(repo)]),  # this checkout
                               "CALLM_SPY_KEY": "sk-spy"})
    assert done.returncode == (0 if model == "oracle" else 5), done.stdout[-2000:] + done.stderr[-2000:]
    assert "HTTP CLIENTS LOADED: []" in done.stdout, done.stdout[-2000:]
