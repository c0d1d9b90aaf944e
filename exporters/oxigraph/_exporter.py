"""The embedded store: provenance in a pyoxigraph database on local disk, no server needed.

The caller's thread stores each batch (the processor's worker, as the SDK's batch
processor exports), so a batch exported is in the store: this process reads its own
writes, other processes see them at once.

One process at a time can write a store (RocksDB's lock).  Several agents, workers or
``otel-prov demo`` sharing one directory still lose nothing: a process that cannot get
the store parks its batches durably beside it (see ``_parked``) and reports them
exported.  The process holding the store loads them every ``ingest_interval`` seconds,
at an export or a :meth:`~OxigraphStoreExporter.tick` of the processor's worker, and in
``force_flush`` and ``shutdown``; a process that parks tries as often to get the store
(its holder may have exited).  After ``os.fork()`` the child never touches the parent's
database handle and parks its batches for the parent to load (a forked process cannot
write RocksDB, see ``_rocksdb``).

A write the disk refuses (full, say) fails that export, logged a few times and counted
(see ``otel_prov._repeated``); the handle is dropped and opened again at the next export,
so the store takes batches again once there is room.
"""

from __future__ import annotations

import ctypes
import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph

from otel_prov._forks import reset_in_child
from otel_prov._repeated import RepeatedFailure
from otel_prov._settings import fsync_always
from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term
from otel_prov.exporters._text import REMOVE_BATCH, records_text, remove_text, text_parts
from otel_prov.exporters.oxigraph._parked import ParkedBatches
from otel_prov.exporters.oxigraph._rocksdb import open_writable, register_writer, writable_here
from otel_prov.exporters.oxigraph._settings import default_store_path
from otel_prov.prov._record import ProvRecord

__all__ = ["OxigraphStoreExporter"]

_logger = logging.getLogger(__name__)

_TRANSACTIONAL_MAX = 1024 * 1024
"""Batches up to this many bytes go in one transaction (``Store.load``), larger ones by
``bulk_load``: ``bench_frameworks``, 15-session batches (450 KiB) beside the agent, 0.30x
instead of 0.38x of OpenInference's time added per run and 1.2x instead of 1.4x its CPU.

``bulk_load`` pays about 25 ms of CPU per call whatever the size (it writes files, which
RocksDB then compacts beside the agent): one 2-step session (34 KiB) in a transaction
takes 5 ms instead of 25."""


UNFLUSHED_MAX = 8 * 1024 * 1024
"""N-Quads bytes stored in transactions before the store writes its memtables out.

RocksDB keeps every transaction in memory and in a log beside the store until then, and
pyoxigraph sets no bound that an agent would reach: with many short quads (four times
their N-Quads size in the log), an agent's process holding the store grew by about
150 KB a session, to 1.6 GB after 10,000, and a receiver's as well.  Written out every
8 MiB (about 280 two-step LangChain sessions), 3,000 such sessions left the process
62-67 MB larger instead of 486 MB, and the loads took 4-5% more CPU."""


def _write(store: pyoxigraph.Store, data: bytes) -> bool:
    """Store one batch's text (``records_text``), what it retracts taken out in its
    place; whether it all went into transactions (see ``_load``)."""
    transactional = True
    for retracted, nquads in text_parts(data):
        if retracted:
            for quad in pyoxigraph.parse(nquads, pyoxigraph.RdfFormat.N_QUADS):
                store.remove(quad)
        else:
            transactional &= _load(store, nquads)
    return transactional


def _load(store: pyoxigraph.Store, nquads: bytes) -> bool:
    """Store one batch: in a transaction up to ``_TRANSACTIONAL_MAX``, else bulk-loaded.  Returns
    whether it went into a transaction, so into the memtables (a bulk load writes files).

    A transaction loads leniently: the text is ours, valid by construction (escaping and
    IRIs are property-tested against the strict parser), and skipping the re-check takes
    0.71x of the strict load's time for one session a batch (``bench_nquads_parsing``).  A
    bulk load gains nothing from it (0.98x), so it parses strictly."""
    if len(nquads) <= _TRANSACTIONAL_MAX:
        store.load(nquads, pyoxigraph.RdfFormat.N_QUADS, lenient=True)
        return True
    store.bulk_load(nquads, pyoxigraph.RdfFormat.N_QUADS)
    return False


def _held_by_another(error: OSError) -> bool:
    """RocksDB's answer when another process (or handle) holds the store's ``LOCK``, or
    when another process opening it at the same moment deleted the old info log this one
    was rotating out (``LOG.old.*``): either way, try again at the next look."""
    return "LOCK" in str(error) or "LOG.old" in str(error)


INFO_LOGS_KEPT = 8
"""Old RocksDB info logs (``LOG.old.*``) kept beside a store.  Each try to open a store
another process holds rotates one out; RocksDB keeps 1,000 (pyoxigraph cannot set its
``keep_log_file_num``), and at that limit processes opening at once race to delete the
same file: a waiting writer keeps the newest few itself, which never lets RocksDB reach it."""


def _prune_info_logs(path: Path) -> None:
    old = sorted(path.glob("LOG.old.*"), key=lambda log: log.name)
    for log in old[: max(0, len(old) - INFO_LOGS_KEPT)]:
        log.unlink(missing_ok=True)  # another process may have taken it already


def _never_dropped(store: pyoxigraph.Store) -> None:
    """Keep a handle a forked child inherited alive until the child exits: dropping it
    would close RocksDB in a process where its threads do not run (a close that waits
    forever, or writes the parent's files).  The process's exit frees it without a close."""
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(store))


class OxigraphStoreExporter(ProvExporter):
    """Writes provenance into an on-disk pyoxigraph store; see the module documentation.

    The store is opened in the constructor, so an unreadable directory fails at set-up
    with the path in the message, not later in a background thread; a store another
    process holds is not an error (batches are parked).  Batches are loaded as N-Quads
    (small ones in a transaction, large ones bulk-loaded, see ``_TRANSACTIONAL_MAX``),
    idempotent because the mapper's IRIs are deterministic.  What a record retracts is
    removed before its triples go in, parked batches included (``records_text``).
    """

    can_retract = True

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        graph: str | None = None,
        ingest_interval: float = 1.0,
    ):
        self.path = Path(path) if path is not None else default_store_path()
        self.graph = graph_term(graph)
        """The graph records go to unless they name one (an IRI term)."""
        self.path.mkdir(parents=True, exist_ok=True)
        self.parked = ParkedBatches(self.path)
        self._interval = ingest_interval
        self._sync = fsync_always()
        self._lock = threading.Lock()
        """The store handle: opening, loading, closing."""
        self._closed = False
        self._store: pyoxigraph.Store | None = None
        self._looked_at = 0.0
        """When this exporter last tried to get the store or load what others parked."""
        self._unflushed = 0
        """Bytes stored in transactions since the memtables were last written out."""
        self._new_failure_logs()
        self._take_store()
        if self._store is None:
            _logger.info(
                "%s %s: batches wait in %s until a process that writes it loads them",
                "another process writes" if writable_here() else "a forked process cannot write",
                self.path,
                self.parked.directory,
            )
        register_writer(self.path, self.held_store)
        reset_in_child(self._after_fork_in_child)

    def _new_failure_logs(self) -> None:
        self._failures = RepeatedFailure(_logger, f"cannot write provenance to {self.path}")
        self._load_failures = RepeatedFailure(
            _logger, f"cannot load parked batches into {self.path}; they stay parked"
        )

    def held_store(self) -> pyoxigraph.Store | None:
        """The store this process writes, or ``None`` when another process holds it.

        Readers in this process read through it: it sees every batch stored, and a
        read-only open beside an active writer fails while the writer compacts."""
        return self._store

    @property
    def holds_store(self) -> bool:
        """Whether this process writes the store (else its batches are parked)."""
        return self._store is not None

    def _take_store(self) -> None:
        """Open the store for writing unless another process holds it; the caller holds
        ``_lock`` (or is the constructor).  Then load what others parked."""
        self._looked_at = time.monotonic()
        if self._store is None:
            if not writable_here():
                return
            try:
                self._store = open_writable(self.path)
                self._unflushed = 0
            except (OSError, RuntimeError) as exc:  # RuntimeError: RocksDB's "Corruption: ..."
                if isinstance(exc, OSError) and _held_by_another(exc):
                    _prune_info_logs(self.path)
                    return
                raise OSError(
                    f"cannot open the embedded provenance store at {self.path}: {exc}"
                ) from exc
        store = self._store

        def load(data: bytes) -> None:
            # The file goes once the store holds its batch on disk too.
            self._store_batch(store, data, written_out=self._sync)

        self.parked.load_into(load)

    def _store_batch(
        self, store: pyoxigraph.Store, data: bytes, *, written_out: bool = False
    ) -> None:
        """Store one batch (the caller holds ``_lock``), then write the memtables out if
        asked to or once ``UNFLUSHED_MAX`` bytes have gone into them since the last time."""
        if _write(store, data):
            self._unflushed += len(data)
        if written_out or self._unflushed >= UNFLUSHED_MAX:
            store.flush()
            self._unflushed = 0

    def _look(self) -> None:
        """``_take_store``, whatever goes wrong logged a few times: the batches stay parked
        and the next look tries again."""
        try:
            self._take_store()
        except (OSError, RuntimeError, SyntaxError) as exc:
            self._load_failures.failed(exc)
            self._drop_broken(exc)

    def _drop_broken(self, error: Exception) -> None:
        """After a write its disk refused (full, say), a RocksDB handle refuses every later
        one, even once there is room: dropped, the store is opened again at the next look."""
        if isinstance(error, (OSError, RuntimeError)):
            self._store = None

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        with self._lock:
            if self._closed:
                _logger.warning("export after shutdown: %d records not stored", len(records))
                return ExportResult.FAILURE
            if time.monotonic() - self._looked_at >= self._interval:
                self._look()  # the store may be free again, and others may have parked
            try:
                text = records_text(records, self.graph)
                if self._store is None:
                    self.parked.park(text)
                else:
                    self._store_batch(self._store, text)
            except (OSError, RuntimeError, SyntaxError, ValueError) as exc:
                self._failures.failed(exc)
                self._drop_broken(exc)
                return ExportResult.FAILURE
        return ExportResult.SUCCESS

    def tick(self) -> None:
        """Every ``ingest_interval``: load what others parked, or take the store if its
        holder has exited.  An idle holder (gunicorn's master after ``--preload``, say)
        so loads its workers' batches."""
        if time.monotonic() - self._looked_at < self._interval:
            return
        with self._lock:
            if not self._closed:
                self._look()

    def describe(self) -> str:
        return f"the embedded store at {self.path.resolve()}"

    @property
    def writers_directory(self) -> Path:
        """Beside the store, never inside RocksDB's own directory (as its parked batches)."""
        return self.path.parent / f"{self.path.name}.writers"

    def cannot_remove(self) -> str | None:
        if self._store is None:
            return (
                f"another process writes {self.describe()}: stop it to remove runs (what "
                "it parks or writes meanwhile cannot wait for a removal)"
            )
        return None

    def remove(self, graph: str, subjects: Sequence[str]) -> bool:
        with self._lock:
            if self._closed or self._store is None:
                _logger.error("cannot remove from %s: %s", self.path, self.cannot_remove())
                return False
            try:
                for start in range(0, len(subjects), REMOVE_BATCH):
                    self._store.update(remove_text(graph, subjects[start : start + REMOVE_BATCH]))
                self._store.flush()
            except (OSError, RuntimeError, SyntaxError, ValueError) as exc:
                self._failures.failed(exc)
                self._drop_broken(exc)
                return False
        return True

    def waiting(self) -> int:
        return len(self.parked)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Load what is parked if this process can get the store; ``True`` when nothing
        waits.

        A committed load is already in RocksDB's own log: a killed process keeps it and a
        read-only opening elsewhere replays it.  Writing the memtables out as well is done
        only when every write is to be fsync'd (``OTEL_PROV_WAL_FSYNC=always``):
        ``bench_frameworks``, it took 100-300 ms a call, 20 ms of each run of a 15-run batch."""
        with self._lock:
            if self._closed:
                return False
            self._look()
            if self._store is not None and self._sync:
                try:
                    self._store.flush()
                except (OSError, RuntimeError) as exc:
                    self._failures.failed(exc)
                    self._drop_broken(exc)
            return self._store is not None and not len(self.parked)

    def shutdown(self) -> None:
        """Load what is parked if this process can get the store, then release it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._look()
            if self._store is not None:
                try:
                    self._store.flush()
                except (OSError, RuntimeError) as exc:  # what it holds is in its own log
                    self._failures.failed(exc)
                # Dropping the last reference closes the database and releases its lock.
                self._store = None
            self._failures.report()
            self._load_failures.report()

    def _after_fork_in_child(self) -> None:
        """The parent's handle stays the parent's (never used, never closed here); the
        child parks its batches, or writes the store if no ancestor ever opened one."""
        if self._store is not None:
            _never_dropped(self._store)
            self._store = None
        self._lock = threading.Lock()
        self._new_failure_logs()
        self.parked = ParkedBatches(self.path)
        self._looked_at = 0.0  # the child looks at its first export
