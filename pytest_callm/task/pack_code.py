"""A pack's own code and files, kept to their place.

A pack's Python (`tools.py`, `adversaries.py`) runs inside the process that loads it: a run, a tool
server, `callm prove`. Its exceptions are the pack's failure, SystemExit included (sys.exit() in a
tools.py ended a whole run with INTERNALERROR). And a pack reads only files inside its own folder
(a prompt path of `../../etc/passwd` became a system prompt).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from pathlib import Path
from typing import Any


class PackCodeExited(RuntimeError):
    """A pack's own code called sys.exit() (raised SystemExit), or raised KeyboardInterrupt where no
    Ctrl-C can arrive (a tool, in the thread that runs tools): the pack's failure, like any exception
    of its code, never the end of the process that ran it (a run, a tool server, `callm prove`)."""

    @classmethod
    def of(cls, what: str, exit: SystemExit | KeyboardInterrupt) -> "PackCodeExited":
        if isinstance(exit, KeyboardInterrupt):
            return cls(f"{what} raised KeyboardInterrupt" + (f": {exit}" if str(exit) else ""))
        return cls(f"{what} called sys.exit({exit.code!r})")


def import_pack_file(pack_dir: Path, name: str, filename: str) -> Any:
    """Import a pack's Python file (`tools.py`, `adversaries.py`) under a name of its own folder, so
    two copies of a pack never share a module. Raises what the file raises (SystemExit as PackCodeExited)."""
    stem = Path(filename).stem
    module_name = f"callm_pack_{name}_{stem}_{hashlib.sha1(str(pack_dir.resolve()).encode()).hexdigest()[:12]}"
    spec = importlib.util.spec_from_file_location(module_name, pack_dir / filename)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        sys.modules.pop(module_name, None)
        raise PackCodeExited.of(f"{name}/{filename}", e) from None
    return module


def inside_pack(pack_dir: Path, relative: str) -> Path | None:
    """The pack's file at `relative`, or None when that path leads outside the pack's folder (`..`, an
    absolute path, a link out): a pack reads only its own files."""
    root = pack_dir.resolve()
    path = (pack_dir / relative).resolve()
    return path if path == root or root in path.parents else None
