"""``ProvSpanProcessor``: turns finished agent sessions into provenance, off the agent's thread.

Add it to any ``TracerProvider`` beside your own OTLP processor::

    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    provider.add_span_processor(ProvSpanProcessor(OxigraphStoreExporter()))

``on_start`` is one dict entry and ``on_end`` one deque append, made by the deque itself
with no Python frame of ours: as cheap as any span processor can be (``bench_processor``,
median ``end()``: 1.09-1.10x of a provider with no processor, 2.04-2.06 us beside 2.01-2.04
us for a bare deque append).  Assembling trees,
mapping to PROV-O and exporting happen on one daemon worker thread, every
``schedule_delay`` seconds, with instrumentation suppressed so the exporter's own I/O
is not traced.  A session goes out at the first cycle after its session span and
everything under it have ended.

Memory is bounded by ``max_pending_spans``, both in the hand-off queue and in what the
worker holds.  Past it spans are dropped, every drop counted
(:meth:`ProvSpanProcessor.statistics`) and logged at most once per interval.  The queue
drops its oldest span first, and the worker never refuses a session span, so a session
(which ends after its children) is not lost to the bound.  Fed by ``on_start`` and
``on_end``, the queue drops silently (its ``maxlen``) and the worker finds each span it
pushed out: ended, never collected, still among the open spans in two sweeps running
(one sweep could catch an ``on_end`` under way).  Fed ended spans alone (the ``prov``
span exporter, where no open span is known), ``on_end`` bounds the queue itself and
counts each span it pushes out.
"""

from __future__ import annotations

import collections
import functools
import logging
import os
import sys
import threading
import time
from collections import ChainMap
from dataclasses import dataclass
from pathlib import Path

from opentelemetry.context import (
    _SUPPRESS_INSTRUMENTATION_KEY,
    Context,
    attach,
    detach,
    set_value,
)
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from otel_prov._extras import MissingExtraError
from otel_prov._forks import reset_in_child
from otel_prov._repeated import RepeatedFailure
from otel_prov._settings import env_float, env_int, env_str, fsync_always
from otel_prov._signing import SigningKeyError
from otel_prov.capture._sinks import register_provenance_sink
from otel_prov.environment_variables import (
    OTEL_PROV_MAX_PENDING_SPANS,
    OTEL_PROV_SESSION_TIMEOUT,
    OTEL_PROV_WAL_DIR,
)
from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._stored import StoredRuns
from otel_prov.processing._assembler import SessionAssembler
from otel_prov.processing._chain_writer import ChainWriter, signer_from_settings
from otel_prov.processing._pipeline import OpenRun, WritePipeline
from otel_prov.processing._recovery import Recovery
from otel_prov.processing._wal import IntentLog, recover_intents
from otel_prov.prov._conventions import starts_as_tool_call
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import Role, SpanRecord, classify, record_from_span
from otel_prov.semconv import SERVICE_NAME

__all__ = ["ProcessorStatistics", "ProvSpanProcessor"]

_logger = logging.getLogger(__name__)

_DEFAULT_SESSION_TIMEOUT_S = 600.0
_DEFAULT_MAX_PENDING = 100_000
_DROP_LOG_INTERVAL_S = 10.0
_TIMEOUT_CHECK_INTERVAL_NS = 1_000_000_000
"""How often the worker asks the assembler about open sessions when no ended span waits:
``bench_worker_cycle``, 50 runs open and waiting on their models, 39 us a wake-up instead
of 876 us (3.3 ms CPU a second less)."""


@dataclass(frozen=True)
class ProcessorStatistics:
    """Counters since the processor started."""

    spans_received: int
    spans_dropped: int
    """Lost to the ``max_pending_spans`` bound."""
    spans_discarded: int
    """Belonged to traces without any agent session (not provenance)."""
    records_exported: int
    records_failed: int
    """Records the exporter reported as not stored."""
    problems: int
    """Attributes or spans the mapper could only convert partly."""
    pending_spans: int
    intents_failed: int = 0
    """Tool calls the write-ahead log could not record (a full disk, say)."""
    steps_exported: int = 0
    """Streamed entries stored: steps of runs still open (``stream``)."""
    runs_cut_off: int = 0
    """Runs stored ``incomplete`` without their own span, which never came (fed ended
    spans alone, within the session timeout)."""


def _shutdown_at_multiprocessing_exit(processor: ProvSpanProcessor) -> None:
    from multiprocessing import util

    util.Finalize(processor, processor.shutdown, exitpriority=0)


class ProvSpanProcessor(SpanProcessor):
    """Collects ended spans per trace and exports each finished agent session as PROV-O.

    ``session_timeout`` (seconds, ``OTEL_PROV_SESSION_TIMEOUT``, default 600): a session
    span open longer is exported as ``incomplete``.  ``late_span_grace`` (seconds,
    default 5): how long a finished session waits for descendants still running before
    it goes out without them (they follow when they end).  ``schedule_delay`` (seconds,
    default 0.25): how often the worker collects ended spans; the delay from a session's
    end to its export.  ``max_pending_spans`` (``OTEL_PROV_MAX_PENDING_SPANS``, default
    100000): the memory bound.  ``knows_open_spans=False`` is for feeding ended spans
    without ``on_start`` (the ``prov`` span exporter): sessions then wait
    ``late_span_grace`` after their end for children arriving in later batches.
    ``wal_dir`` (``OTEL_PROV_WAL_DIR``): record each tool call at dispatch in a
    write-ahead log there, with the run around it (see ``_wal``); a run whose process
    died inside a tool is stored as ``incomplete`` by the next processor started on the
    same directory.  ``wal_fsync``
    (``OTEL_PROV_WAL_FSYNC``, ``always`` or ``never``, default never): fsync each intent,
    so that it survives a machine crash too, not only the process's.
    ``blob_dir`` (``OTEL_PROV_BLOB_DIR``, default ``.otel-prov/blobs``) and
    ``blob_threshold`` (bytes, ``OTEL_PROV_BLOB_THRESHOLD``, default 64 KiB): larger values
    are written there once, by hash, and the graph keeps a preview and a pointer.
    ``prices`` (``OTEL_PROV_PRICES``): a price file that prices model calls reporting
    tokens and no cost.  ``signing_key`` (``OTEL_PROV_SIGNING_KEY``): the Ed25519 key
    every chain entry and checkpoint is signed with (a key that cannot be read is logged
    as an error here, at start, and the records go unsigned: the agent runs on);
    ``checkpoint_file`` (``OTEL_PROV_CHECKPOINT_FILE``): where checkpoints are appended
    (see ``_chain_writer``).  ``stream`` (``OTEL_PROV_STREAM``, default on): record
    the steps of a run still open as they end, each worker cycle's as the next entry of
    the chain, the run shown ``running`` until it ends (see ``otel_prov.prov._stream``;
    an exporter that cannot take triples back gets runs when they end).  ``stored``:
    the store's answers (``exporters._stored``), with which the processor ends the runs a
    writer that is gone left open there, and goes on from what a dead process of its
    write-ahead log streamed (``_recovery``); ``configure()`` passes the reader of the
    store it writes.  Without it and with a write-ahead log, runs are not streamed.
    """

    def __init__(
        self,
        exporter: ProvExporter,
        *,
        session_timeout: float | None = None,
        late_span_grace: float = 5.0,
        max_pending_spans: int | None = None,
        schedule_delay: float = 0.25,
        export_batch_size: int = 64,
        knows_open_spans: bool = True,
        wal_dir: str | os.PathLike[str] | None = None,
        wal_fsync: bool | None = None,
        blob_dir: str | os.PathLike[str] | None = None,
        blob_threshold: int | None = None,
        prices: str | os.PathLike[str] | None = None,
        signing_key: str | os.PathLike[str] | None = None,
        checkpoint_file: str | os.PathLike[str] | None = None,
        stream: bool | None = None,
        stored: StoredRuns | None = None,
    ) -> None:
        if not isinstance(exporter, ProvExporter):
            raise TypeError(
                "exporter must be an otel_prov.exporters.ProvExporter, "
                f"not {type(exporter).__name__}"
            )
        self._exporter = exporter
        register_provenance_sink(self)
        timeout = session_timeout or env_float(
            OTEL_PROV_SESSION_TIMEOUT, _DEFAULT_SESSION_TIMEOUT_S
        )
        self._max_pending = max_pending_spans or env_int(
            OTEL_PROV_MAX_PENDING_SPANS, _DEFAULT_MAX_PENDING
        )
        self._schedule_delay = schedule_delay
        self._batch_size = export_batch_size
        self._new_assembler = functools.partial(
            SessionAssembler,
            session_timeout_ns=int(timeout * 1e9),
            late_span_grace_ns=int(late_span_grace * 1e9),
            # Fed only ended spans (the span-exporter path), a trace's spans may wait for
            # their session span as long as a session may last.
            idle_timeout_ns=0 if knows_open_spans else int(timeout * 1e9),
            knows_open_spans=knows_open_spans,
        )
        self._knows_open_spans = knows_open_spans
        try:
            signer = signer_from_settings(signing_key)
        except (SigningKeyError, MissingExtraError) as exc:
            _logger.error("%s; provenance is recorded UNSIGNED", exc)
            signer = None
        self._pipeline = WritePipeline.from_settings(
            exporter,
            chain=ChainWriter(signer=signer, checkpoint_file=checkpoint_file),
            stream=stream,
            prices=prices,
            blob_dir=blob_dir,
            blob_threshold=blob_threshold,
            batch_size=export_batch_size,
        )
        self._recovery = Recovery(
            self._pipeline,
            stored,
            session_timeout_ns=int(timeout * 1e9),
            directory=exporter.writers_directory,
        )
        wal_path = wal_dir or env_str(OTEL_PROV_WAL_DIR)
        if wal_path and self._pipeline.streams and not self._recovery.streams_safely:
            # A run both streamed and logged would be sealed again from the log, a first
            # bundle beside its entries, by a next writer that cannot read the store.
            _logger.info("a write-ahead log and no reader of the store: runs are not streamed")
            self._pipeline.streams = False
        self._stream = self._pipeline.streams
        self._prepare = self._pipeline.prepare
        self._fresh_state()
        self._recovery.hold()
        self._shutdown = False
        self._wal: IntentLog | None = None
        self._recovered_spans: list[SpanRecord] = []
        self._recovered_records: list[ProvRecord] = []
        self._recovered_logs: list[Path] = []
        if wal_path:
            # Dead processes' logs first, then ours (so ours is never taken for theirs).
            self._recovered_spans, self._recovered_logs = recover_intents(Path(wal_path))
            self._wal = IntentLog(
                Path(wal_path),
                fsync=wal_fsync if wal_fsync is not None else fsync_always(),
                content=self._prepare.content,
            )
        self._start_worker()
        reset_in_child(self._after_fork_in_child)

    def _fresh_state(self) -> None:
        """What belongs to one process: buffers, sessions being assembled, bundle chains,
        counters and the locks guarding them."""
        self._assembler = self._new_assembler()
        self._open: dict[int, Span] = {}
        """Spans started and not yet collected by the worker (ended ones leave on collection)."""
        self._evict_lock = threading.Lock()
        self._evicted = 0
        """Spans ``on_end`` pushed out of the queue (counted under ``_evict_lock``)."""
        self._suspects: set[int] = set()
        """Ended spans the last sweep found open and uncollected (see the module docs)."""
        if self._knows_open_spans:
            self._queue: collections.deque[ReadableSpan] = collections.deque(
                maxlen=self._max_pending
            )
            # The agent's hot path: the SDK calls the deque's own append (bench_processor).
            self.on_end = self._queue.append  # type: ignore[method-assign,assignment]
        else:
            self._queue = collections.deque()  # bounded by on_end, which counts its drops
        self._counts = collections.Counter[str]()
        self._failed_at_flush = 0
        """``records_failed`` when ``force_flush`` last looked."""
        self._dropped_reported = 0
        self._drop_logged_at = 0.0
        self._timeouts_checked_ns = 0
        self._pipeline.restart()
        self._export_lock = threading.Lock()
        self._wake = threading.Event()
        self._intent_failures = RepeatedFailure(
            _logger, "cannot record a tool call in the write-ahead log"
        )
        self._done_failures = RepeatedFailure(
            _logger, "cannot mark stored runs in the write-ahead log (retried with its next line)"
        )

    # --- agent thread: keep these cheap -------------------------------------------
    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self._open[span.context.span_id] = span
        if self._wal is not None and starts_as_tool_call(span.name, span.attributes or {}):
            try:
                service = span.resource.attributes.get(SERVICE_NAME)
                self._wal.intent(
                    span, service if isinstance(service, str) else None, self._open_above(span)
                )
            except (OSError, ValueError) as exc:  # a full disk must not stop the agent
                self._intent_failures.failed(exc)

    def _open_above(self, span: Span) -> list[Span]:
        """The open spans above ``span`` in this process, nearest first: the run the
        write-ahead log needs to rebuild around a tool call that crashes."""
        found = []
        parent = span.parent
        while parent is not None and (above := self._open.get(parent.span_id)) is not None:
            found.append(above)
            parent = above.parent
        return found

    def on_end(self, span: ReadableSpan) -> None:
        # Fed ended spans alone (with open spans known, the instance's on_end is the queue's
        # append): the bound is kept here, where each span pushed out is known.
        self._queue.append(span)
        if len(self._queue) > self._max_pending:
            self._evict()

    def _evict(self) -> None:
        """Push the oldest spans out of the full queue, counting each one."""
        with self._evict_lock:
            while len(self._queue) > self._max_pending:
                try:
                    span = self._queue.popleft()
                except IndexError:  # the worker emptied it meanwhile
                    return
                self._open.pop(span.context.span_id, None)
                self._evicted += 1

    # --- worker thread -------------------------------------------------------------
    def _start_worker(self) -> None:
        self._worker = threading.Thread(name="OtelProvProcessor", target=self._run, daemon=True)
        self._worker.start()

    # --- fork safety (otel_prov._forks): the child starts clean --------------------------
    def _after_fork_in_child(self) -> None:
        """The parent's spans, sessions, chain heads and log stay the parent's to export
        and settle; the child gets its own, and a worker (threads do not survive a fork).
        A ``multiprocessing`` child leaves through ``os._exit`` (no ``atexit``), so its
        sessions are exported by a multiprocessing finalizer instead."""
        self._fresh_state()
        self._recovery.after_fork_in_child()
        self._recovered_spans, self._recovered_records, self._recovered_logs = [], [], []
        if self._wal is not None:
            self._wal = self._wal.in_child()
        if self._shutdown:
            return
        self._start_worker()
        if "multiprocessing" in sys.modules:
            from multiprocessing import util

            # Run once multiprocessing has cleared the finalizers the child inherited.
            util.register_after_fork(self, _shutdown_at_multiprocessing_exit)

    def _run(self) -> None:
        while True:
            self._wake.wait(self._schedule_delay)
            if self._shutdown:
                break
            self._cycle(flush=False, final=False)
        self._cycle(flush=True, final=True)

    def _open_snapshots(self) -> list[SpanRecord]:
        """A cheap view of the open spans for deciding: ids and role, no attribute copies.
        ``bench_worker_cycle``, 50 runs open while spans end: 0.88 ms a wake-up instead of
        1.68 ms with every open span prepared as the mapper gets it (redacted, blobs moved)."""
        return [
            SpanRecord(
                trace_id=span.context.trace_id,
                span_id=span.context.span_id,
                parent_id=span.parent.span_id if span.parent is not None else None,
                name=span.name,
                start_ns=span.start_time or 0,
                end_ns=None,
                role=classify(span.attributes or {}, root=span.parent is None, name=span.name),
                remote_parent=span.parent is not None and span.parent.is_remote,
            )
            for span in list(self._open.values())
        ]

    def _cycle(self, *, flush: bool, final: bool) -> None:
        with self._export_lock:
            token = attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))
            try:
                self._collect_and_export(flush=flush, final=final)
            except Exception:
                _logger.exception("provenance worker cycle failed; spans stay buffered")
            # The head is stated every so often, and always at the end.
            if final:
                self._pipeline.chain.checkpoint(self._exporter, time.time_ns())
            else:
                self._pipeline.chain.sealed(self._exporter, time.time_ns())
            try:
                self._exporter.tick()  # this worker is the exporter's only thread
            except Exception:  # against its contract
                _logger.exception("provenance exporter's tick raised")
            finally:
                detach(token)
            self._report_drops(force=final)
            self._intent_failures.report(force=final)
            self._done_failures.report(force=final)

    def _collect(self, now: int, *, final: bool = False) -> None:
        """Move ended spans from the queue to the assembler, enforcing the memory bound."""
        queue, assembler = self._queue, self._assembler
        while queue:
            try:
                span = queue.popleft()
            except IndexError:  # on_end evicted the last one meanwhile
                break
            self._open.pop(span.context.span_id, None)
            record = self._snapshot(span)
            self._counts["received"] += 1
            if assembler.pending >= self._max_pending and record.role is not Role.SESSION:
                self._counts["dropped"] += 1
                continue
            assembler.add(record, now)
        if self._knows_open_spans:
            self._sweep(final=final)

    def _sweep(self, *, final: bool) -> None:
        """Count the spans the full queue pushed out: ended, never collected, and open in
        this sweep and the last (at the final one, no ``on_end`` is under way)."""
        ended = {sid for sid, span in list(self._open.items()) if span.end_time is not None}
        lost = ended if final else ended & self._suspects
        for span_id in lost:
            self._open.pop(span_id, None)
        self._counts["received"] += len(lost)
        self._counts["dropped"] += len(lost)
        self._suspects = ended - lost

    def _snapshot(self, span: ReadableSpan, *, ended: bool = True) -> SpanRecord:
        """The record the mapper gets (see :class:`RecordPreparer`)."""
        return self._prepare(record_from_span(span, ended=ended))

    def _export_recovered(self, now: int) -> None:
        """Runs a dead process left unfinished: sealed once, stored as incomplete."""
        if self._recovered_spans:
            # Sealed once: a failed export retries the same records (sealing again
            # would take them for revisions of themselves).
            self._recovered_records = self._recovery.from_log(
                [self._prepare(span) for span in self._recovered_spans], now
            )
            self._recovered_spans = []
        records, logs = self._recovered_records, self._recovered_logs
        if records and not self._pipeline.export_batch(records):
            return  # the logs stay; the next cycle, or the next start, tries again
        if records:
            _logger.warning(
                "recorded %d run(s) left unfinished by a process that died", len(records)
            )
        for log in logs:
            log.unlink(missing_ok=True)
        self._recovered_records, self._recovered_logs = [], []

    def _collect_and_export(self, *, flush: bool, final: bool) -> None:
        now = time.time_ns()
        if self._recovered_logs:
            self._export_recovered(now)
        if self._stream:
            ended = self._recovery.abandoned(now)
            if ended and not self._pipeline.export_batch(ended):
                _logger.warning("%d run(s) left open by others not ended now", len(ended))
        self._collect(now, final=final)
        check_timeouts = now - self._timeouts_checked_ns >= _TIMEOUT_CHECK_INTERVAL_NS
        if not (self._assembler.pending or check_timeouts or flush):
            return
        self._timeouts_checked_ns = now if check_timeouts else self._timeouts_checked_ns
        cut_off = self._assembler.cut_off
        groups = self._assembler.poll(now, self._open_snapshots(), flush=flush, final=final)
        discarded = self._assembler.take_discarded()
        if discarded:
            self._settle(discarded)  # no session: nothing to recover either
        if self._assembler.cut_off > cut_off:
            _logger.warning(
                "%d run(s) whose own span did not come within the session timeout (%s) "
                "recorded as far as they go, marked incomplete",
                self._assembler.cut_off - cut_off,
                OTEL_PROV_SESSION_TIMEOUT,
            )
        live = {span.context.span_id: span for span in list(self._open.values())}
        if groups:
            complete = [self._with_open(group, live) for group in groups]
            open_traces = {span.context.trace_id for span in live.values()}
            records = self._pipeline.seal(
                complete, now, open_traces=open_traces if self._knows_open_spans else None
            )
            stored_groups = iter(groups)
            for batch, stored in self._pipeline.export(records):
                self._counts["exported" if stored else "failed"] += len(batch)
                done = [next(stored_groups) for _ in batch]
                if stored:
                    # Every span of the stored runs: tool calls and the runs logged around them.
                    self._settle([span.span_id for group in done for span in group])
        if self._pipeline.streams and not final:
            self._export_steps(now, live)

    def _with_open(self, group: list[SpanRecord], live: dict[int, Span]) -> list[SpanRecord]:
        """``group`` with each open span's cheap snapshot replaced by the full one."""
        return [
            self._snapshot(live[s.span_id], ended=False)
            if s.end_ns is None and s.span_id in live
            else s
            for s in group
        ]

    def _export_steps(self, now: int, live: dict[int, Span]) -> None:
        """Stream the steps that ended in open runs (``stream``): a window of each run
        around them mapped, and what it adds sealed as the next entry of the chain
        (``WritePipeline.stream``).  The spans stay buffered, and in the write-ahead log,
        until the run ends."""
        found = self._assembler.poll_steps(self._open_snapshots())
        if not found:
            return
        open_by_trace: dict[int, dict[int, SpanRecord]] = {}
        for span in live.values():
            open_by_trace.setdefault(span.context.trace_id, {})[span.context.span_id] = (
                self._snapshot(span, ended=False)
            )
        runs = [
            OpenRun(step.session, step.new, ChainMap(open_by_trace.get(step.trace, {}), step.ended))
            for step in found
        ]
        records = self._pipeline.stream(runs, now)
        for batch, stored in self._pipeline.export(records):
            self._counts["steps" if stored else "failed"] += len(batch)

    def _settle(self, span_ids: list[int]) -> None:
        """Mark these spans' intents settled in the write-ahead log, if there is one."""
        if self._wal is None:
            return
        try:
            self._wal.done(span_ids)
        except OSError as exc:
            self._done_failures.failed(exc)

    def _report_drops(self, *, force: bool = False) -> None:
        dropped = self._counts["dropped"] + self._evicted
        now = time.monotonic()
        if dropped == self._dropped_reported:
            return
        if not force and now - self._drop_logged_at < _DROP_LOG_INTERVAL_S:
            return
        _logger.warning(
            "dropped %d span(s): more than %d pending (max_pending_spans / %s)",
            dropped - self._dropped_reported,
            self._max_pending,
            OTEL_PROV_MAX_PENDING_SPANS,
        )
        self._dropped_reported, self._drop_logged_at = dropped, now

    # --- lifecycle -----------------------------------------------------------------
    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Export every session whose span has ended, without waiting for stragglers.  True
        when the exporter holds them all and none was refused since the last flush."""
        if self._shutdown:
            return False
        self._cycle(flush=True, final=False)
        try:
            flushed = self._exporter.force_flush(timeout_millis)
        except Exception:  # against its contract: the host must not see it
            _logger.exception("the provenance exporter's force_flush raised")
            flushed = False
        # An export refused since the last flush (a full disk, say) is a session not
        # stored, even if the exporter holds nothing now.
        failed = self._counts["failed"]
        refused, self._failed_at_flush = failed > self._failed_at_flush, failed
        return flushed and not refused

    def shutdown(self) -> None:
        """Export everything, open sessions as ``incomplete``, then shut the exporter down."""
        if self._shutdown:
            return
        self._shutdown = True
        self._wake.set()
        self._worker.join(timeout=30)
        try:
            self._exporter.shutdown()
        except Exception:  # against its contract: the host must not see it
            _logger.exception("the provenance exporter's shutdown raised")
        if self._wal is not None:
            try:
                self._wal.close()
            except OSError:
                _logger.exception("cannot close the write-ahead log %s", self._wal.path)
        self._recovery.release()

    def statistics(self) -> ProcessorStatistics:
        return ProcessorStatistics(
            spans_received=self._counts["received"] + self._evicted,
            spans_dropped=self._counts["dropped"] + self._evicted,
            spans_discarded=self._assembler.discarded,
            records_exported=self._counts["exported"],
            records_failed=self._counts["failed"],
            problems=self._pipeline.counts["problems"],
            pending_spans=self._assembler.pending + len(self._queue),
            intents_failed=self._intent_failures.total,
            steps_exported=self._counts["steps"],
            runs_cut_off=self._assembler.cut_off,
        )

    def __repr__(self) -> str:
        return f"ProvSpanProcessor(exporter={self._exporter!r})"
