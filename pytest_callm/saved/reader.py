"""Reading a finished run directory: the one reader `callm compare`, `callm merge` and `callm leaderboard`
use, with one error class and one wording for every way a folder is not a run they can read (the HTML
report reads a run's JSON files with its `read_object` too).

    read_run(DIR)                      its manifest.json and report.json (and shard.json when present)
    read_run(DIR, shard=True)          the same, and a shard.json is required (a shard of a split run)

Every message starts with the folder or the file it is about, then says what is wrong and, where
there is one, what to do:

    <dir>: no such directory
    <dir>: not a directory (a run directory holds manifest.json and report.json)
    <dir>: no manifest.json (not a run directory)
    <dir>/manifest.json: not JSON (<why>)
    <dir>/manifest.json: not a JSON object
    <dir>/manifest.json: format 'x', not 'callm-run/1'
    <dir>: the run did not finish (no report.json; resume it with --callm-resume=<dir>, or rescore it)
    <dir>/report.json: not JSON (<why>)
    <dir>/report.json: format 'x', not 'callm-report/1'
    <dir>/report.json: no summary
    <dir>: not a shard run (no shard.json; run each shard with --callm-shard=I/N)

The run directory's writer (rundir.py) keeps its own messages: they are about resuming into a folder,
not about reading a finished run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_callm.saved import files, shapes
from pytest_callm.saved.rundir import FORMAT, REPORT_FORMAT

MANIFEST = "manifest.json"
REPORT = "report.json"
SHARD = "shard.json"  # the same name as merge.SHARD_FILE (merge imports this module, not the other way)
SHAPES = {MANIFEST: shapes.MANIFEST, REPORT: shapes.REPORT, SHARD: shapes.SHARD}  # what each file's fields hold


class RunReadError(Exception):
    """A folder that is not a run directory that can be read; the message names it and says why."""


@dataclass
class SavedRun:
    """A finished run as saved: its folder, manifest and report, and its shard record if it is a shard."""

    path: Path
    manifest: dict[str, Any]
    report: dict[str, Any]
    shard: dict[str, Any] | None = None

    @property
    def comparable(self) -> dict[str, Any]:
        return self.manifest.get("comparable") or {}

    @property
    def hashes(self) -> dict[str, Any]:
        return self.comparable.get("hashes") or {}

    @property
    def model(self) -> str:
        return self.comparable.get("model") or self.report.get("model") or "?"

    @property
    def summary(self) -> dict[str, Any]:
        return self.report["summary"]

    @property
    def k(self) -> int | None:
        return self.summary.get("k", self.report.get("k"))


def read_object(path: Path, missing: str | None = None, shape: Any = None) -> dict[str, Any] | None:
    """A JSON object from `path`; `missing` is the whole message when the file is not there (None:
    a missing file is None); `shape`: the types its fields must have (shapes.py). The one reader of a
    run's JSON files: the report's pages use it too."""
    try:
        data = json.loads(files.read_text(path))
    except FileNotFoundError:
        if missing is None:
            return None
        raise RunReadError(missing) from None
    except (OSError, UnicodeDecodeError) as e:
        raise RunReadError(f"{path}: cannot be read ({e})") from None
    except ValueError as e:
        raise RunReadError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict):
        raise RunReadError(f"{path}: not a JSON object")
    wrong = shapes.problem(data, shape) if shape is not None else None
    if wrong:
        raise RunReadError(f"{path}: {wrong}")
    return data


def _format(path: Path, data: dict[str, Any], expected: str) -> None:
    if data.get("format") != expected:
        raise RunReadError(f"{path}: format {data.get('format')!r}, not {expected!r}")


def read_run(path: Path | str, *, shard: bool = False) -> SavedRun:
    """The finished run in `path`; RunReadError (naming the folder or file) when it is not one.
    `shard=True`: the run must be a shard (have a shard.json)."""
    path = Path(path)
    if not path.exists():
        raise RunReadError(f"{path}: no such directory")
    if not path.is_dir():
        raise RunReadError(f"{path}: not a directory (a run directory holds {MANIFEST} and {REPORT})")
    manifest = read_object(path / MANIFEST, f"{path}: no {MANIFEST} (not a run directory)", SHAPES[MANIFEST])
    _format(path / MANIFEST, manifest, FORMAT)
    report = read_object(path / REPORT, f"{path}: the run did not finish (no {REPORT}; resume it with "
                                         f"--callm-resume={path}, or rescore it)", SHAPES[REPORT])
    _format(path / REPORT, report, REPORT_FORMAT)
    if not isinstance(report.get("summary"), dict):
        raise RunReadError(f"{path / REPORT}: no summary")
    record = None
    if shard or (path / SHARD).exists():
        record = read_object(path / SHARD, _not_a_shard(path), SHAPES[SHARD])
    return SavedRun(path, manifest, report, record)


def _not_a_shard(path: Path) -> str:
    return f"{path}: not a shard run (no {SHARD}; run each shard with --callm-shard=I/N)"


def require_shard(run: SavedRun) -> dict[str, Any]:
    """The shard record of a run read without `shard=True`; RunReadError when it has none."""
    if run.shard is None:
        raise RunReadError(_not_a_shard(run.path))
    return run.shard
