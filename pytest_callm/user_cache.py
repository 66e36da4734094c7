"""The user's cache folder: data built once from an installed package and read back by later processes
(`$XDG_CACHE_HOME/pytest-callm`, else `~/.cache/pytest-callm`).

Each file is a marshal of one value, named by a prefix and a digest of everything it was built from,
so a new package release or a change to how it is built never reads an old one. Best effort both
ways: a file that cannot be read is built again, a folder that cannot be written only means the next
process builds again.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-callm"


def cache_file(prefix: str, built_from: bytes) -> Path:
    return cache_dir() / f"{prefix}-{hashlib.sha256(built_from).hexdigest()[:16]}.marshal"


def read(path: Path) -> Any:
    """The value kept in `path`, or None when there is none that can be read."""
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write(path: Path, value: Any) -> None:
    """Keep `value` in `path` (whole or absent, whichever process wrote it), and remove the files of
    the same prefix built from something else."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        scratch.write_bytes(marshal.dumps(value))
        os.replace(scratch, path)
        prefix = path.name.rsplit("-", 1)[0]
        for old in path.parent.glob(f"{prefix}-*.marshal"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        pass
