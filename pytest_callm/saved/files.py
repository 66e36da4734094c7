"""Reading a file of a run folder: only a regular file is read.

A FIFO, a socket or a device where a run keeps a file would block a reader for ever (a FIFO waits
for a writer) or feed it without end. Each is opened without waiting and refused unless it is a
regular file: `NotAFile`, an OSError, so every reader that already says "cannot be read" for an
unreadable file says it for these too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotAFile(OSError):
    def __init__(self, path: Path):
        super().__init__(errno.EINVAL, "not a regular file (a FIFO, a socket or a device?)", str(path))

    def __str__(self) -> str:  # the readers name the file themselves
        return self.strerror


def read_bytes(path: Path) -> bytes:
    """The bytes of a regular file; FileNotFoundError when there is none, NotAFile for anything else."""
    # O_NONBLOCK: opening a FIFO with no writer returns at once instead of waiting for one.
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotAFile(Path(path))
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def only_files_and_folders(folder: str, names: list[str]) -> set[str]:
    """For shutil.copytree's `ignore`: what is neither a regular file nor a folder is no part of a run."""
    return {n for n in names if not (os.path.isfile(os.path.join(folder, n)) or os.path.isdir(os.path.join(folder, n)))}


def read_text(path: Path) -> str:
    """The text of a regular file, as UTF-8 (UnicodeDecodeError, a ValueError, when it is not)."""
    return read_bytes(path).decode("utf-8")
