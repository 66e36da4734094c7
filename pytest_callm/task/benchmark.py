"""Where the benchmark's own packs (`industries/`) and locked tasks (`tasks/`) are.

In a checkout they are the folders at the top of the repository, beside this package. A wheel
carries them as package data under `pytest_callm/benchmark/` (setup.py copies them there at build
time), so an installed plugin runs the benchmark from any folder (`pytest --callm-suite`).
"""

from __future__ import annotations

from pathlib import Path

PACKAGED = Path(__file__).resolve().parent.parent / "benchmark"  # the wheel's copy; setup.py names it too
CHECKOUT = Path(__file__).resolve().parent.parent.parent  # the repository, when running from one


def benchmark_root() -> Path:
    """The folder holding the benchmark's `tasks/` and `industries/`: the installed copy, else the
    checkout this package was imported from."""
    for root in (PACKAGED, CHECKOUT):
        if (root / "tasks").is_dir() and (root / "industries").is_dir():
            return root
    raise FileNotFoundError(f"the benchmark's tasks/ and industries/ are neither in {PACKAGED} (an installed "
                            f"wheel) nor in {CHECKOUT} (a checkout): reinstall pytest-callm")


def benchmark_tasks() -> Path:
    """The locked tasks: one folder per industry."""
    return benchmark_root() / "tasks"


def benchmark_industries() -> Path:
    """The benchmark's industry packs."""
    return benchmark_root() / "industries"


def suite_pack_folder() -> Path | None:
    """The benchmark's industry packs, or None where no benchmark is installed (a bare package)."""
    try:
        return benchmark_industries()
    except FileNotFoundError:
        return None


def locked_tasks() -> Path:
    """The locked suite a command compares with by default: `tasks/` where it runs, when there is one
    (a checkout, a project that keeps its own), else the installed benchmark's."""
    here = Path("tasks")
    if here.is_dir():
        return here
    try:
        return benchmark_tasks()
    except FileNotFoundError:
        return here  # named as missing by the command that reads it


if __name__ == "__main__":  # `python -m pytest_callm.task.benchmark tasks|industries`: a folder, for a shell
    import sys

    wanted = sys.argv[1:] or ["tasks", "industries"]
    if not set(wanted) <= {"tasks", "industries"}:
        sys.exit("usage: python -m pytest_callm.task.benchmark [tasks] [industries]")
    print("\n".join(str(benchmark_root() / name) for name in wanted))
