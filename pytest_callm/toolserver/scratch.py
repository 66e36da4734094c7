"""The tool server's scratch folders: one per server under the system temp folder, holding its calls'
databases, removed as it stops; those of a server that was killed (SIGKILL) are swept by the next one."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

DATA_DIR_PREFIX = "callm-calls-"  # the server's scratch folders under the system temp folder
OWNER_FILE = "owner.pid"  # in each: the pid of the server that owns it (leftovers of a killed one are swept)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def sweep_leftovers(temp_root: Path | None = None) -> list[Path]:
    """Remove the scratch folders of tool servers that died without cleaning up (SIGKILL)."""
    swept = []
    for folder in Path(temp_root or tempfile.gettempdir()).glob(DATA_DIR_PREFIX + "*"):
        try:
            owner = int((folder / OWNER_FILE).read_text())
        except (OSError, ValueError):
            continue  # not ours to judge: no owner recorded, or being created right now
        if not _alive(owner):
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(folder)
    return swept


class ScratchDir:
    """The server's call folder: a fresh one in the temp folder (owned, removed at the end), or a kept one."""

    def __init__(self, kept: Path | None):
        self.kept = kept

    def __enter__(self) -> Path:
        if self.kept is not None:
            self.kept.mkdir(parents=True, exist_ok=True)
            return self.kept
        sweep_leftovers()
        self.path = Path(tempfile.mkdtemp(prefix=DATA_DIR_PREFIX))
        (self.path / OWNER_FILE).write_text(str(os.getpid()))
        return self.path

    def __exit__(self, *exc) -> None:
        if self.kept is None:
            shutil.rmtree(self.path, ignore_errors=True)
