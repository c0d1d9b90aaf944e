"""The embedded store: provenance in a pyoxigraph database on local disk, no server needed.

One process at a time can write a store (RocksDB's lock).  Several agents, workers or
``otel-prov demo`` sharing one directory still lose nothing: a process that cannot get
the store parks its batches durably beside it (see ``_parked``) and reports them
exported; the process holding the store loads them within ``ingest_interval`` seconds;
when the holder exits, the next process to get the store (or ``otel-prov flush``) does.
Readers open the store read-only and see what the holder has loaded.

The holder parks its own batches too, by default (``load_in_background``), and its loader
thread stores them at once: RocksDB's work (about 10 us a quad, most of a flush's cost)
then overlaps the agent instead of being waited for, since pyoxigraph lets go of the
interpreter while it loads.  ``force_flush`` returns once every batch is durable on disk,
as an OTLP exporter's once a Collector has accepted the spans; reads through
:meth:`OxigraphStoreExporter.held_store` load what waits first, so this process reads its
own writes, and other processes see a batch a few milliseconds later.  After ``os.fork()``
the child never touches the parent's database handle: the parent closes the store around
the fork and opens it again, and the child parks its batches for the parent to load (a
forked process cannot write RocksDB, see ``_rocksdb``).
"""

from __future__ import annotations

import logging
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph

from otel_prov._scheduling import set_time_slice
from otel_prov._settings import env_str, fsync_always
from otel_prov.environment_variables import OTEL_PROV_STORE
from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term
from otel_prov.exporters._parked import ParkedBatches
from otel_prov.exporters._repeats import SharedTriples
from otel_prov.exporters._rocksdb import (
    open_read_only,
    open_writable,
    register_writer,
    writable_here,
)
from otel_prov.prov._rdf import Triple, to_nquads
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import chain_heads_from_rows, chain_heads_query

__all__ = ["DEFAULT_STORE", "OxigraphStoreExporter", "default_store_path"]

_logger = logging.getLogger(__name__)

DEFAULT_STORE = ".otel-prov/store"
"""Where the embedded store lives unless ``path=`` or ``OTEL_PROV_STORE`` says otherwise."""


_TRANSACTIONAL_MAX = 256 * 1024
"""Batches up to this many bytes go in one transaction (``Store.load``), larger ones by
``bulk_load``.  Measured with pyoxigraph 0.5 on disk: ``bulk_load`` costs about 25 ms of CPU
per call whatever the size (it writes and ingests files) plus 0.035 ms per KiB, a
transaction 0.14 ms per KiB: one 2-step session (34 KiB) takes 5 ms instead of 25, a
1 MiB batch 138 ms instead of 58."""


UNFLUSHED_MAX = 8 * 1024 * 1024
"""N-Quads bytes stored in transactions before the store writes its memtables out.

RocksDB keeps every transaction in memory and in a log beside the store until then, and
pyoxigraph sets no bound that an agent would reach: with many short quads (four times
their N-Quads size in the log), an agent's process holding the store grew by about
150 KB a session, to 1.6 GB after 10,000, and a receiver's as well.  Written out every
8 MiB (about 280 two-step LangChain sessions), 3,000 such sessions left the process
62-67 MB larger instead of 486 MB, and the loads took 4-5% more CPU."""

_PARKED_TRANSACTIONAL_MAX = 1024 * 1024
"""The same bound for parked batches, which a loader stores beside a running agent: there
the whole cost counts, not the call's.  A ``bulk_load`` leaves files that RocksDB then
compacts, beside the agent: with 15-session batches (450 KiB) in transactions,
``bench_frameworks`` measured 0.30x instead of 0.38x of OpenInference's time added per
run, and 1.2x instead of 1.4x of its CPU."""


def _write(store: pyoxigraph.Store, nquads: bytes, most: int) -> bool:
    """Store one batch: in a transaction up to ``most`` bytes, else bulk-loaded.  Returns
    whether it went into a transaction, so into the memtables (a bulk load writes files).

    Lenient: the text is ours, valid by construction (escaping and IRIs are
    property-tested against the strict parser), and skipping the re-check is what brings
    ingest level with a raw bulk_extend."""
    if len(nquads) <= most:
        store.load(nquads, pyoxigraph.RdfFormat.N_QUADS, lenient=True)
        return True
    store.bulk_load(nquads, pyoxigraph.RdfFormat.N_QUADS, lenient=True)
    return False


def default_store_path() -> Path:
    return Path(env_str(OTEL_PROV_STORE, DEFAULT_STORE) or DEFAULT_STORE)


def _held_by_another(error: OSError) -> bool:
    """RocksDB's answer when another process (or handle) holds the store's ``LOCK``."""
    return "LOCK" in str(error)


class OxigraphStoreExporter(ProvExporter):
    """Writes provenance into an on-disk pyoxigraph store; see the module documentation.

    The store is opened in the constructor, so an unreadable directory fails at set-up
    with the path in the message, not later in a background thread; a store another
    process holds is not an error (batches are parked).  Batches are loaded as N-Quads
    (small ones in a transaction, large ones bulk-loaded, see ``_TRANSACTIONAL_MAX``),
    idempotent because the mapper's IRIs are deterministic.

    ``load_in_background`` (default ``True``, for agents): ``export`` parks the batch
    (fsync'd only with ``OTEL_PROV_WAL_FSYNC=always``) and the loader thread stores it;
    ``force_flush`` does not wait for the store.  ``False`` (the CLI, the receiver, which
    have a storing thread of their own): ``export`` stores the batch itself, and
    ``force_flush`` loads what other processes parked.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        graph: str | None = None,
        ingest_interval: float = 1.0,
        load_in_background: bool = True,
    ):
        self.path = Path(path) if path is not None else default_store_path()
        self._graph = graph_term(graph)
        self.path.mkdir(parents=True, exist_ok=True)
        self.parked = ParkedBatches(self.path)
        self._interval = ingest_interval
        self._background = load_in_background
        self._sync = fsync_always()
        self._lock = threading.Lock()
        """The store handle: opening, loading, closing, forks."""
        self._parking = threading.Lock()
        """What this process parks for its own loader, and what it knows the store holds:
        an export never waits for a load under way (taken after ``_lock`` when both are)."""
        self._closed = False
        self._store: pyoxigraph.Store | None = None
        self._shared = SharedTriples()
        self._unflushed = 0
        """Bytes stored in transactions since the memtables were last written out."""
        self._take_store()
        if self._store is None:
            _logger.info(
                "%s %s: batches wait in %s until a process that writes it loads them",
                "another process writes" if writable_here() else "a forked process cannot write",
                self.path,
                self.parked.directory,
            )
        self._start_ingester()
        register_writer(self.path, self.held_store)
        if hasattr(os, "register_at_fork"):
            at_fork = weakref.WeakMethod(self._before_fork)
            in_parent = weakref.WeakMethod(self._after_fork_in_parent)
            in_child = weakref.WeakMethod(self._after_fork_in_child)
            os.register_at_fork(
                before=lambda: (method := at_fork()) and method(),
                after_in_parent=lambda: (method := in_parent()) and method(),
                after_in_child=lambda: (method := in_child()) and method(),
            )

    def held_store(self) -> pyoxigraph.Store | None:
        """The store this process writes, or ``None`` when another process holds it.

        Readers in this process read through it: it sees every batch loaded, and a
        read-only open beside an active writer fails while the writer compacts.  What
        waits parked is loaded first, so a reader here sees every batch exported here."""
        if self._background and self._store is not None:
            with self._lock:
                try:
                    self._load_parked()
                except OSError:
                    _logger.exception("cannot load parked batches into %s", self.path)
        return self._store

    @property
    def holds_store(self) -> bool:
        """Whether this process writes the store (else its batches are parked)."""
        return self._store is not None

    def _take_store(self) -> None:
        """Open the store for writing unless another process holds it; the caller holds
        ``_lock`` (or is the constructor).  Then load what others parked."""
        if self._store is None:
            if not writable_here():
                return
            try:
                self._store = open_writable(self.path)
                self._shared = SharedTriples()  # what another opening wrote, this one knows not
                self._unflushed = 0
            except OSError as exc:
                if _held_by_another(exc):
                    return
                raise OSError(
                    f"cannot open the embedded provenance store at {self.path}: {exc}"
                ) from exc
        self._load_parked()

    def _load_parked(self) -> None:
        store = self._store
        if store is None:
            return

        def load(data: bytes) -> None:
            # The file goes once the store holds its batch on disk too.
            self._store_batch(store, data, _PARKED_TRANSACTIONAL_MAX, written_out=self._sync)

        self.parked.load_into(load)

    def _store_batch(
        self, store: pyoxigraph.Store, data: bytes, most: int, *, written_out: bool = False
    ) -> None:
        """Store one batch (the caller holds ``_lock``), then write the memtables out if
        asked to or once ``UNFLUSHED_MAX`` bytes have gone into them since the last time."""
        if _write(store, data, most):
            self._unflushed += len(data)
        if written_out or self._unflushed >= UNFLUSHED_MAX:
            store.flush()
            self._unflushed = 0

    def _load_parked_logged(self) -> None:
        """As ``_take_store``, for the loader thread: whatever goes wrong is logged, the
        batches stay parked, and the thread lives on to try again."""
        try:
            self._take_store()
        except Exception:
            _logger.exception("cannot load parked batches into %s; they stay parked", self.path)

    def _start_ingester(self) -> None:
        self._wake = threading.Event()
        self._ingester = threading.Thread(
            name="OtelProvParkedIngest", target=self._ingest_periodically, daemon=True
        )
        self._ingester.start()

    def _ingest_periodically(self) -> None:
        """Load parked batches while holding the store, at once when this process parked
        one; else try to get the store every ``ingest_interval`` (its holder may have
        exited).  Beside an agent, in short time slices (see ``_scheduling``)."""
        if self._background:
            set_time_slice()
        while True:
            self._wake.wait(self._interval)
            self._wake.clear()
            with self._lock:
                if self._closed:
                    return
                self._load_parked_logged()

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        triples = [triple for record in records for triple in record.triples]
        with self._parking if self._background else self._lock:
            if self._closed:
                _logger.warning("export after shutdown: %d records not stored", len(records))
                return ExportResult.FAILURE
            shared: list[Triple] = []
            if self._store is not None:  # parked batches go whole: their loader knows nothing
                triples, shared = self._shared.fresh(triples)
            text = to_nquads(triples, self._graph).encode()
            try:
                if self._store is None:
                    self.parked.park(text)
                elif self._background:
                    # Loaded by this process's loader: durable on disk as RocksDB's own
                    # log would be (a killed process keeps it), fsync'd by the same policy.
                    self.parked.park(text, fsync=self._sync)
                    self._wake.set()
                else:
                    self._store_batch(self._store, text, _TRANSACTIONAL_MAX)
            except (OSError, SyntaxError, ValueError):
                _logger.exception("could not write %d records to %s", len(records), self.path)
                return ExportResult.FAILURE
            self._shared.remember(shared)  # a parked batch is loaded, or kept until it is
        return ExportResult.SUCCESS

    def chain_heads(self) -> dict[str, dict[str, str]]:
        with self._lock:
            try:
                store = self._store or open_read_only(self.path)
            except (OSError, RuntimeError):
                # Held by a process still creating it, or compacting under the read-only
                # open: the chains start afresh, as with any store that cannot be read.
                _logger.info("cannot read the bundle chains from %s", self.path, exc_info=True)
                return {}
            answer = store.query(chain_heads_query(self._graph))
            assert isinstance(answer, pyoxigraph.QuerySolutions)
            names = [variable.value for variable in answer.variables]
            rows = [
                {name: (term.value if (term := row[name]) is not None else None) for name in names}
                for row in answer
            ]
        return chain_heads_from_rows(rows)

    def describe(self) -> str:
        return f"the embedded store at {self.path.resolve()}"

    def waiting(self) -> int:
        return len(self.parked)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """``True`` when every batch is kept: stored, or (loading in the background, while
        this process holds the store) parked for the loader, which is woken.

        Otherwise it loads what is parked if this process can get the store.  A committed
        load is already in RocksDB's own log: a killed process keeps it and a read-only
        opening elsewhere replays it.  Writing the memtables out as well (100 to 300 ms on
        a busy disk, what an agent's flush mostly waited for) is done only when every
        write is to be fsync'd (``OTEL_PROV_WAL_FSYNC=always``)."""
        if self._background and self._store is not None:
            self._wake.set()
            return True
        with self._lock:
            if not self._closed:
                try:
                    self._take_store()
                except OSError:
                    _logger.exception("cannot load parked batches into %s", self.path)
            if self._store is not None and self._sync:
                self._store.flush()
        return self._store is not None and not len(self.parked)

    def shutdown(self) -> None:
        """Load what is parked if this process can get the store, then release it."""
        with self._lock, self._parking:  # no export parks after the last load
            if self._closed:
                return
            self._closed = True
            try:
                self._take_store()
            except OSError:
                _logger.exception("cannot load parked batches into %s", self.path)
            if self._store is not None:
                self._store.flush()
                # Dropping the last reference closes the database and releases its lock.
                self._store = None
        self._wake.set()
        self._ingester.join(timeout=5)

    # --- fork safety: the database handle never crosses a fork ---------------------------
    def _before_fork(self) -> None:
        # No load or export half done; released after the fork on both sides.
        self._lock.acquire()
        self._parking.acquire()
        if self._store is not None:
            self._store.flush()
            self._store = None

    def _after_fork_in_parent(self) -> None:
        try:
            if not self._closed:
                self._take_store()
        except OSError:
            _logger.exception("cannot reopen %s after a fork", self.path)
        finally:
            self._parking.release()
            self._lock.release()

    def _after_fork_in_child(self) -> None:
        self._lock = threading.Lock()
        self._parking = threading.Lock()
        self._wake = threading.Event()
        self.parked = ParkedBatches(self.path)
        if not self._closed and writable_here():  # the parent never opened a store
            try:
                self._take_store()
            except OSError:
                _logger.exception("cannot open %s in the forked process", self.path)
            self._start_ingester()
