"""What the pages are built from besides the run's own files: the industry packs (for the handoff
graphs) and the task files the run names.

The packs come from `packs_dirs` when given, else from the `industries/` folders (and a pyproject's
`callm_industries`) above the task files and the run directory. Without its pack a task's paths are
listed as plain text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_callm.saved.reader import SHAPES, RunReadError, read_object
from pytest_callm.task.pack import Pack, PackError, default_industries, discover_packs, load_pack

class ReportError(Exception):
    """A folder that holds no run to report on."""


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object of the run (its manifest, its report), None when the file is not there."""
    try:
        return read_object(path, shape=SHAPES.get(path.name))
    except RunReadError as e:
        raise ReportError(str(e)) from None


class Packs:
    """The packs of the run's industries, found once, each loaded once; None where none is found."""

    def __init__(self, dirs: list[Path], known: dict[str, Pack] | None = None):
        """`known`: packs loaded already (the run's own, as it played them), used as found."""
        self.paths: dict[str, Path] = {name: pack.root for name, pack in (known or {}).items()}
        self.searched: set[Path] = set()
        self._loaded: dict[str, Pack | None] = dict(known or {})
        self.problems: dict[str, str] = {}
        self.add(dirs)

    def add(self, dirs: list[Path]) -> None:
        """Search more folders, after those already searched (the first folder to name a pack wins)."""
        for d in dirs:
            if d in self.searched:
                continue
            self.searched.add(d)
            try:
                found = discover_packs([d]) if d.is_dir() else {}
            except PackError:
                continue
            for name, path in found.items():
                if name not in self.paths:
                    self.paths[name] = path
                    if self._loaded.get(name, True) is None:  # looked for earlier, in vain: look again
                        del self._loaded[name]
                        self.problems.pop(name, None)

    def get(self, name: str) -> Pack | None:
        if name not in self._loaded:
            pack = None
            if name not in self.paths:
                self.problems[name] = "the industry pack was not found"
            else:
                try:
                    pack = load_pack(self.paths[name])
                except PackError as e:
                    self.problems[name] = f"the industry pack at {self.paths[name]} does not load: {e.problems[0]}"
            self._loaded[name] = pack
        return self._loaded[name]


def pack_folders(run_dir: Path, task_paths: list[Path]) -> list[Path]:
    """Where a run's packs may be: `industries/` (and a pyproject's `callm_industries`) in any folder
    above its task files or the run directory, nearest first."""

    dirs: list[Path] = []
    seen: set[Path] = set()
    for start in [*task_paths, run_dir.resolve()]:
        for folder in Path(start).parents:
            if folder in seen:
                continue
            seen.add(folder)
            dirs.extend([folder / "industries", *default_industries(folder)])
    from pytest_callm.task.benchmark import suite_pack_folder

    suite = suite_pack_folder()  # last: the installed benchmark's packs, wherever the run's tasks were
    unique: list[Path] = []
    for d in [*dirs, *([suite] if suite is not None else [])]:
        if d not in unique and d.is_dir():
            unique.append(d)
    return unique


def load_task_file(path: Path | None, pack: Pack | None) -> tuple[dict[str, Any] | None, Any, str | None]:
    """(raw task JSON, built Task or None, problem or None) for the task file an attempt names."""
    if path is None:
        return None, None, "the run does not name the task file"
    from pytest_callm.task.task_file import TaskError, build_task, is_task_file, read_task_json

    if not is_task_file(Path(path).name):
        return None, None, f"a task written in Python, in {path}"
    try:
        raw = read_task_json(path)
    except TaskError as e:
        try:  # what can still be shown of a file that is not a task (its title, its caller)
            raw = read_object(path)
        except RunReadError:
            raw = None
        return raw, None, str(e).splitlines()[0]
    if pack is None:
        return raw, None, None
    try:
        return raw, build_task(path, raw, pack), None
    except TaskError as e:
        return raw, None, str(e).splitlines()[0]
