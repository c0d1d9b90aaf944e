"""Parked batches: records for the embedded store, on disk until its writer loads them.

RocksDB lets one process write a store.  Every other process that exports to the same
directory parks its batches instead, and so does a process forked after RocksDB started
(see ``_rocksdb``): one N-Quads file each in ``<store>.parked/``, written atomically
(temporary file, rename, fsync), so a file is there whole or not at all.  The process
holding the store loads them and removes each one once it is in the store; so does the
next process that gets the store, or ``otel-prov flush``.
Loading a file twice adds nothing (the mapper's IRIs are deterministic), so a crash
between loading and removing loses nothing and duplicates nothing.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from pathlib import Path

from otel_prov.exporters._durable import write_atomically

__all__ = ["ParkedBatches", "parked_directory"]

_logger = logging.getLogger(__name__)

_SUFFIX = ".nq"


def parked_directory(store: Path) -> Path:
    """Where batches for ``store`` wait: beside it, never inside RocksDB's own directory."""
    return store.parent / f"{store.name}.parked"


class ParkedBatches:
    """The parked batches of one store; any number of processes may park and load at once."""

    def __init__(self, store: Path) -> None:
        self.directory = parked_directory(store)
        self._sequence = 0

    def park(self, nquads: bytes) -> Path:
        """Keep a batch durably until the store's holder loads it (raises ``OSError``)."""
        self._sequence += 1
        name = f"{time.time_ns():020d}-{os.getpid()}-{self._sequence:06d}{_SUFFIX}"
        return write_atomically(self.directory, name, nquads)

    def files(self) -> list[Path]:
        """The batches waiting, oldest first."""
        if not self.directory.is_dir():
            return []
        return sorted(self.directory.glob(f"*{_SUFFIX}"))

    def __len__(self) -> int:
        return len(self.files())

    def load_into(self, load: Callable[[bytes], None]) -> int:
        """Give each batch to ``load`` (which stores it or raises), then remove it; returns
        how many were stored.  A batch another process loaded meanwhile is skipped."""
        stored = 0
        for path in self.files():
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue  # another holder (a previous one, or otel-prov flush) took it
            try:
                load(data)
            except (SyntaxError, ValueError):
                _logger.exception("parked batch %s is not N-Quads; set aside", path)
                path.rename(path.with_suffix(".unreadable"))
                continue
            path.unlink(missing_ok=True)
            stored += 1
        if stored:
            _logger.info("loaded %d parked batch(es) from %s", stored, self.directory)
        return stored
