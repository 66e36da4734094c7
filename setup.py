"""The one build step pyproject.toml cannot say: the benchmark's packs, locked tasks and training tasks into
the wheel.

`industries/` and `tasks/` stay at the top of the checkout, where pytest, the README and CI name them;
the wheel carries a copy as package data under `pytest_callm/benchmark/`, where
`pytest_callm/task/benchmark.py` finds it, so an installed plugin runs the benchmark anywhere. An
editable install copies nothing: it reads the checkout's folders.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

FOLDERS = ("industries", "tasks", "training")  # training/: the shipped training split (callm generate)
TARGET = Path("pytest_callm", "benchmark")


def benchmark_files() -> list[Path]:
    """Every file of the two folders, relative to the project root (the build's working directory)."""
    return [path for folder in FOLDERS for path in sorted(Path(folder).rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"]


class BuildPyWithBenchmark(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        for path in benchmark_files():
            target = Path(self.build_lib, TARGET, path)
            self.mkpath(str(target.parent))
            self.copy_file(str(path), str(target), preserve_mode=False)

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        copied = [] if getattr(self, "editable_mode", False) else [
            str(Path(self.build_lib, TARGET, path)) for path in benchmark_files()]
        return [*super().get_outputs(include_bytecode), *copied]

    def get_source_files(self) -> list[str]:  # what the sdist carries, so a wheel built from it has them too
        return [*super().get_source_files(), *map(str, benchmark_files())]


setup(cmdclass={"build_py": BuildPyWithBenchmark})
