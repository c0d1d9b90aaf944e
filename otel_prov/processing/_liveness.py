"""Which writers of a store are alive on this machine: one lock file per writer's chain.

A run streamed step by step is left open in the store when its writer dies (killed, out
of memory, a machine that lost power): its steps are stored, its end never comes.  The
next writer of the same store seals such runs ``incomplete``, as a dead process's
write-ahead log is recovered.  For that it must tell a run whose writer is gone from one
whose writer is still at work (another process, another worker of the same service): each
writer holds an exclusive ``flock`` on ``<directory>/<chain>.lock`` for as long as it
runs, which the kernel lets go of when the process ends, however it ends.  A lock file
that can be locked belongs to a writer that is gone.

Only writers on this machine, sharing ``directory`` (the embedded store's, beside it;
a SPARQL exporter's spool), are known so; a run left by a writer elsewhere is sealed once
it has been silent for the session timeout.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path
from typing import IO

__all__ = ["WriterLock", "forget_writer", "gone_writers"]

_logger = logging.getLogger(__name__)

_SUFFIX = ".lock"


class WriterLock:
    """This process's hold on ``<directory>/<chain>.lock`` while it writes as ``chain``."""

    def __init__(self, directory: Path, chain: str) -> None:
        self.path = directory / f"{chain}{_SUFFIX}"
        self._file: IO[str] | None = None
        try:
            directory.mkdir(parents=True, exist_ok=True)
            file = self.path.open("a+", encoding="utf-8")
            fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:  # no liveness here: runs left open wait for the timeout
            _logger.warning(
                "cannot hold %s (%s): a run this process leaves open is sealed by the next "
                "writer only after the session timeout",
                self.path,
                exc,
            )
            return
        file.truncate(0)
        file.write(f"{os.getpid()}\n")
        file.flush()
        self._file = file

    def close_in_child(self) -> None:
        """After ``fork()``: the child's copy of the descriptor goes (the parent keeps its
        lock, and its end must still free it)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.close()  # the parent's descriptor keeps the lock (flock(2))
            self._file = None

    def release(self) -> None:
        """At shutdown: the lock and its file go (nothing is left open)."""
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            self.path.unlink()
            self._file.close()
        self._file = None


def gone_writers(directory: Path) -> set[str]:
    """The chains whose lock file in ``directory`` no process holds: their writers ended
    without releasing it (killed)."""
    if not directory.is_dir():
        return set()
    gone = set()
    for path in directory.glob(f"*{_SUFFIX}"):
        try:
            with path.open("r", encoding="utf-8") as file:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: its writer is alive (or the file went meanwhile)
        gone.add(path.name[: -len(_SUFFIX)])
    return gone


def forget_writer(directory: Path, chain: str) -> None:
    """Remove a gone writer's lock file once its runs are sealed."""
    with contextlib.suppress(OSError):
        (directory / f"{chain}{_SUFFIX}").unlink()
