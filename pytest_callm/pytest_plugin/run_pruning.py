"""`--callm-keep-runs=N`: keep the last N runs in `callm-runs/`, remove older ones at the end of a run.

Off by default: a saved run is the evidence of a result, so nothing is deleted unless asked. Only
folders that hold a run (a `manifest.json`) directly under `<rootdir>/callm-runs/` are candidates,
newest first by the time their manifest was written; this run's own folder is always kept.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

RUNS_FOLDER = "callm-runs"


def prune_runs(runs: Path, keep: int, current: Path | None = None) -> list[Path]:
    """Remove all but the `keep` newest runs under `runs` (never `current`); returns what was removed."""
    if not runs.is_dir():
        return []
    found = sorted((d for d in runs.iterdir() if d.is_dir() and not d.is_symlink() and (d / "manifest.json").is_file()),
                   key=lambda d: (d / "manifest.json").stat().st_mtime, reverse=True)
    current = current.resolve() if current is not None else None
    kept = 1 if current is not None and any(d.resolve() == current for d in found) else 0
    removed = []
    for d in found:
        if d.resolve() == current:
            continue
        if kept < keep:
            kept += 1
            continue
        shutil.rmtree(d)
        removed.append(d)
    return removed


class KeepLastRuns:
    """Controller-side plugin: prunes `callm-runs/` once the run has written its report."""

    def __init__(self, state):
        self.state = state  # the plugin's CallmState: settings, run directory
        self.keep = state.settings.keep_runs

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.keep is None or hasattr(self.state.config, "workerinput") or self.state.config.option.collectonly:
            return
        removed = prune_runs(self.state.config.rootpath / RUNS_FOLDER, self.keep, self.state.run_dir.path)
        reporter = self.state.config.pluginmanager.get_plugin("terminalreporter")
        if removed and reporter is not None:
            reporter.write_line(f"callm: removed {len(removed)} older run(s) from {RUNS_FOLDER}/ "
                                f"(--callm-keep-runs={self.keep})")
