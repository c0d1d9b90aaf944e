"""Opening the embedded store, and the one rule RocksDB imposes on forked processes.

The first open in a process starts RocksDB's shared pool of flush and compaction threads.
``fork()`` copies the pool's bookkeeping but not its threads, so in a child the pool
believes it runs and never does: the child's first flush waits forever.  A process forked
after its parent (or an earlier ancestor) opened a store may therefore read one, but never
write one; its batches are parked for a process that can (see ``_parked``).

A process that writes a store reads it through the writer's handle: a read-only open is a
snapshot, and fails while the writer compacts.  So the writer is registered here by path,
for readers in the same process to find.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Callable
from pathlib import Path

import pyoxigraph

__all__ = ["open_read_only", "open_writable", "register_writer", "writable_here", "writer_here"]

Writer = Callable[[], pyoxigraph.Store | None]
"""The handle this process writes a store through, ``None`` while it holds none."""

_writers: dict[Path, list[weakref.WeakMethod[Writer]]] = {}
"""Every exporter's writer of each store in this process (at most one holds it)."""

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


def register_writer(path: str | os.PathLike[str], writer: Writer) -> None:
    """``writer`` (a bound method, held weakly) gives this process's handle on ``path``."""
    methods = _writers.setdefault(Path(path).resolve(), [])
    methods[:] = [method for method in methods if method() is not None]
    methods.append(weakref.WeakMethod(writer))


def writer_here(path: str | os.PathLike[str]) -> Writer | None:
    """The writers of ``path`` registered in this process, as one: the handle of whichever
    holds the store (``None`` if none does); ``None`` when no exporter of it is alive."""
    methods = _writers.get(Path(path).resolve(), [])
    if not any(method() is not None for method in methods):
        return None

    def held() -> pyoxigraph.Store | None:
        for method in methods:
            writer = method()
            store = writer() if writer is not None else None
            if store is not None:
                return store
        return None

    return held
