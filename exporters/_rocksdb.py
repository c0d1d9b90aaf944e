"""Opening the embedded store, and the one rule RocksDB imposes on forked processes.

The first open in a process starts RocksDB's shared pool of flush and compaction threads.
``fork()`` copies the pool's bookkeeping but not its threads, so in a child the pool
believes it runs and never does: the child's first flush waits forever.  A process forked
after its parent (or an earlier ancestor) opened a store may therefore read one, but never
write one; its batches are parked for a process that can (see ``_parked``).
"""

from __future__ import annotations

import os

import pyoxigraph

__all__ = ["open_read_only", "open_writable", "writable_here"]

_pool_started_in: int | None = None
"""The process whose first open started RocksDB's threads (inherited by its children)."""


def _starting() -> None:
    global _pool_started_in
    if _pool_started_in is None:
        _pool_started_in = os.getpid()


def writable_here() -> bool:
    """Whether this process may open a store for writing: no ancestor started RocksDB."""
    return _pool_started_in in (None, os.getpid())


def open_writable(path: str | os.PathLike[str]) -> pyoxigraph.Store:
    if not writable_here():
        raise RuntimeError("a process forked after RocksDB started cannot write a store")
    _starting()
    return pyoxigraph.Store(str(path))


def open_read_only(path: str | os.PathLike[str]) -> pyoxigraph.Store:
    _starting()
    return pyoxigraph.Store.read_only(str(path))
