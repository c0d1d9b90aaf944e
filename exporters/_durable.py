"""Files a backend keeps on disk until its store takes them (the SPARQL spool, the
embedded store's parked batches): written whole or not at all, durably when asked."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_directory", "write_atomically"]


def fsync_directory(directory: Path) -> None:
    """Make what was created, renamed or removed in ``directory`` survive a machine crash."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(directory: Path, name: str, data: bytes, *, fsync: bool = True) -> Path:
    """``directory/name`` appears whole or not at all (temporary file, rename); with
    ``fsync`` it also survives a machine crash, without it only the process's death."""
    directory.mkdir(parents=True, exist_ok=True)
    temporary = directory / f".{name}.tmp"
    try:
        with temporary.open("wb") as file:
            file.write(data)
            file.flush()
            if fsync:
                os.fsync(file.fileno())
    except OSError:
        temporary.unlink(missing_ok=True)  # a full disk keeps no part of it
        raise
    target = directory / name
    temporary.rename(target)
    if fsync:
        fsync_directory(directory)
    return target
