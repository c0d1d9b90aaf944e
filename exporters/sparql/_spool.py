"""A durable spool: batches the store has not acknowledged, kept on disk until it does.

Each batch is one N-Quads file, written atomically (temporary file, rename), so a crash
leaves either the whole batch or nothing; the file and the directory are fsynced when the
caller says so (``OTEL_PROV_WAL_FSYNC=always``), on writing and on removing alike.  Files
are replayed oldest first by whichever exporter holds the spool's lock; a second process
pointed at the same directory spools into its own subdirectory (``pid-<n>/``), which the
next lock holder takes in once that process is gone: its batches, then the directory;
what it cannot take is logged and left, for that runs in ``configure()``, which must not
fail.  Batches the store refuses for good, and files that cannot be read as a batch, go to
``dead-letter/`` beside a ``.reason`` file that says why.

A batch is split into lines at ``"\n"`` only: N-Quads escapes line feeds in literals but
keeps U+2028, U+0085 and the other characters ``str.splitlines`` also breaks at.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from otel_prov.exporters._durable import fsync_directory, write_atomically

__all__ = [
    "DeadLetter",
    "Spool",
    "SpoolFullError",
    "SpooledBatch",
    "UnreadableBatchError",
    "split_lines",
]

_logger = logging.getLogger(__name__)

_SUFFIX = ".nq"
_LOCK = ".lock"


class SpoolFullError(Exception):
    """The spool reached its size cap; the batch was not written."""


class UnreadableBatchError(ValueError):
    """A spooled file that is not a batch (not UTF-8); ``path`` says which, to set it aside."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"unreadable spooled batch {path.name}: {reason}")
        self.path = path


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``"\n"`` (and nowhere else), each line keeping its end."""
    lines = text.split("\n")
    last = lines.pop()
    return [f"{line}\n" for line in lines] + ([last] if last else [])


@dataclass(frozen=True)
class SpooledBatch:
    path: Path
    lines: list[str]


@dataclass(frozen=True)
class DeadLetter:
    path: Path
    reason: str


def _try_lock(path: Path) -> IO[str] | None:
    handle = path.open("a")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        return None
    return handle


class Spool:
    """Batches waiting for the store, one file each, under ``directory``."""

    def __init__(self, directory: Path, *, max_bytes: int) -> None:
        self.root = directory
        self.max_bytes = max_bytes
        directory.mkdir(parents=True, exist_ok=True)
        self._lock = _try_lock(directory / _LOCK)
        if self._lock is None:
            # Another live exporter owns the spool: keep ours apart, it adopts it later.
            self.directory = directory / f"pid-{os.getpid()}"
            self.directory.mkdir(exist_ok=True)
            self._lock = _try_lock(self.directory / _LOCK)
        else:
            self.directory = directory
            self._adopt_orphans()
        self.dead_letters = directory / "dead-letter"
        self._counters = threading.Lock()  # the exporter writes, its sender reads and removes
        self._sequence = 0
        files = self._files()
        self._bytes = sum(path.stat().st_size for path in files)
        self._count = len(files)
        """Files waiting, kept by hand: a flush asks after every batch sent, and listing
        the directory each time cost the receiver more CPU than sending."""

    def _adopt_orphans(self) -> None:
        """Take in the subdirectories of processes that are gone (their lock is free)."""
        for sub in sorted(self.root.glob("pid-*")):
            try:
                lock = _try_lock(sub / _LOCK) if sub.is_dir() else None
            except OSError:
                _logger.exception("cannot look into %s, left in place", sub)
                continue
            if lock is None:
                continue  # its process is alive
            try:
                self._take_in(sub)
            except OSError:
                _logger.exception("cannot take in %s, left in place", sub)
            finally:
                lock.close()

    def _take_in(self, sub: Path) -> None:
        """Move ``sub``'s batches to the root; the temporary files of writes its process
        never finished (never acknowledged, so nothing a caller counts on) go.  ``sub``
        itself goes once nothing else is left."""
        left = []
        for path in sorted(sub.iterdir()):
            name = path.name
            if name == _LOCK:
                continue
            if name.startswith(".") and name.endswith(".tmp") and path.is_file():
                path.unlink()
            elif name.endswith(_SUFFIX) and path.is_file():
                path.rename(self.root / name)
            else:
                left.append(name)
        if left:
            _logger.warning(
                "%s was a spool of a process that shared %s; left in place with what is "
                "no spool file or could not be taken in: %s",
                sub,
                self.root,
                ", ".join(left),
            )
            return
        (sub / _LOCK).unlink(missing_ok=True)
        sub.rmdir()

    def _files(self) -> list[Path]:
        return sorted(self.directory.glob(f"*{_SUFFIX}"))

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return self._count

    def _name(self) -> str:
        with self._counters:
            self._sequence += 1
            return f"{time.time_ns():020d}-{os.getpid()}-{self._sequence:06d}"

    def _account(self, size: int, files: int) -> None:
        with self._counters:
            self._bytes = max(0, self._bytes + size)
            self._count = max(0, self._count + files)

    def write(self, lines: Sequence[str], *, fsync: bool = True) -> Path:
        """Keep a batch durably; raises :class:`SpoolFullError` past ``max_bytes``.

        Thread-safe against the reader: a batch appears under its name only once whole.
        """
        data = "".join(lines).encode()
        if self._bytes + len(data) > self.max_bytes:
            raise SpoolFullError(
                f"spool {self.directory} is full ({self._bytes} of {self.max_bytes} bytes)"
            )
        path = write_atomically(self.directory, self._name() + _SUFFIX, data, fsync=fsync)
        self._account(len(data), 1)
        return path

    def oldest(self) -> SpooledBatch | None:
        """The batch to deliver next; raises :class:`UnreadableBatchError` for a file that is
        not one, which the caller sets aside (:meth:`set_aside`) so that delivery goes on."""
        files = self._files()
        if not files:
            self._recount()
        for path in files:
            try:
                data = path.read_bytes()
            except OSError:
                _logger.exception("cannot read spooled batch %s; skipped", path)
                continue
            try:
                return SpooledBatch(path, split_lines(data.decode("utf-8")))
            except UnicodeDecodeError as exc:
                raise UnreadableBatchError(path, f"not UTF-8 at byte {exc.start}") from exc
        return None

    def _recount(self) -> int:
        """Count the files again (one put or deleted by hand, say), listing under the
        counters' lock: a batch being written is then counted twice for a while, never
        missed."""
        with self._counters:
            self._count = len(self._files())
            return self._count

    def empty(self) -> bool:
        """No batch waits: the kept count says so, and a listing confirms it."""
        return self._count == 0 and self._recount() == 0

    def remove(self, batch: SpooledBatch, *, fsync: bool = True) -> None:
        """Delete a delivered batch; with ``fsync`` the deletion survives a machine crash
        too (without, the batch may come back after one and is sent again, which adds
        nothing: a graph is a set)."""
        try:
            size = batch.path.stat().st_size
            batch.path.unlink()
        except FileNotFoundError:
            return
        self._account(-size, -1)
        if fsync:
            fsync_directory(self.directory)

    def split(self, batch: SpooledBatch, *, fsync: bool = True) -> None:
        """Replace a batch by its two halves (the store found it too large)."""
        middle = len(batch.lines) // 2
        stem = batch.path.name.removesuffix(_SUFFIX)
        for index, half in enumerate((batch.lines[:middle], batch.lines[middle:])):
            name = f"{stem}.{index}{_SUFFIX}"
            write_atomically(self.directory, name, "".join(half).encode(), fsync=fsync)
            self._account(0, 1)
        batch.path.unlink()
        self._account(0, -1)
        if fsync:
            fsync_directory(self.directory)

    def set_aside(self, path: Path, reason: str) -> DeadLetter:
        """Move a spooled file, byte for byte, to the dead letters with ``reason``."""
        size = path.stat().st_size
        name = self._name()
        write_atomically(self.dead_letters, name + ".reason", reason.encode())
        target = self.dead_letters / (name + _SUFFIX)
        path.rename(target)
        fsync_directory(self.dead_letters)
        fsync_directory(self.directory)
        self._account(-size, -1)
        return DeadLetter(target, reason)

    def close(self) -> None:
        if self._lock is not None:
            self._lock.close()
            self._lock = None
