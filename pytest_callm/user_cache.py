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
import threading
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path
from typing import Any


def cache_dir() -> Path | None:
    """None where the user has no home folder to name (a container run under a uid with no passwd
    entry, no HOME): nothing is kept, and every process builds and checks for itself. Never a shared
    temporary folder: another user could leave a pass there for a file that fails its check."""
    try:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pytest-callm"
    except RuntimeError:
        return None


def file_name(prefix: str, built_from: bytes) -> str:
    return f"{prefix}-{hashlib.sha256(built_from).hexdigest()[:16]}.marshal"


def cache_file(prefix: str, built_from: bytes) -> Path | None:
    folder = cache_dir()
    return None if folder is None else folder / file_name(prefix, built_from)


def releases(*distributions: str) -> str:
    """The installed releases of these distributions, as a cached value's name reads them."""
    out = []
    for name in distributions:
        try:
            out.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(f"{name} missing")
    return ", ".join(out)


def read(path: Path | None) -> Any:
    """The value kept in `path`, or None when there is none that can be read."""
    if path is None:
        return None
    try:
        return marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None


def write(path: Path | None, value: Any) -> None:
    """Keep `value` in `path` (whole or absent, whichever process wrote it), and remove the files of
    the same prefix built from something else."""
    if path is None:
        return
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


class Passed:
    """Digests of the inputs a deterministic check passed, kept for every later process of this user:
    a check that takes a noticeable time (a schema check) runs once per input on a machine.

    `identity` names the check: everything its answer depends on (the code and schema that check, the
    checker's release and its optional parts). Another identity is another file, so a changed check
    never trusts an old pass. A failure is never kept: it is checked, and reported, every time.
    """

    KEEP = 8192  # digests; past it, an arbitrary half is forgotten (and checked again when met)

    def __init__(self, prefix: str, identity: bytes):
        self._name = file_name(prefix, identity)  # once: an identity holds whole source files
        self._lock = threading.Lock()
        self._known: dict[Path | None, set[bytes]] = {}  # by file: XDG_CACHE_HOME may change (the tests do)

    def _file(self) -> Path | None:
        folder = cache_dir()
        return None if folder is None else folder / self._name

    def __contains__(self, digest: bytes) -> bool:
        path = self._file()
        with self._lock:
            if path not in self._known:
                kept = read(path)
                self._known[path] = {d for d in kept if isinstance(d, bytes)} if isinstance(kept, list) else set()
            return digest in self._known[path]

    def add(self, digests: Iterable[bytes]) -> None:
        """Remember these passes, here and in the cache file."""
        digests = set(digests)
        if not digests:
            return
        path = self._file()
        with self._lock:
            known = self._known.setdefault(path, set())
            if digests <= known:
                return
            known |= digests
            if len(known) > self.KEEP:
                for old in list(known)[: len(known) - self.KEEP // 2]:
                    known.discard(old)
            write(path, sorted(known))
