"""The receiver's core, whatever the protocol: accept a request, journal it, map whole traces.

:meth:`Receiver.accept` runs on the transports' threads (gRPC's pool, the HTTP server's
thread pool): decode, check the bounds, journal, buffer, wait for the journal to be
durable, answer.  One worker thread maps the traces that are due
(:mod:`~otel_prov.ingest.receiver._traces`) through the ingest path
(:func:`~otel_prov.ingest._import.import_spans`), in batches; a storing thread hands
each batch to the exporter and waits for it to hold them (``force_flush``), while the
worker maps the next; only then is the journal told they are done.  A destination that
stores in the background (a SPARQL store, through its spool) is handed a batch's records
in parts as they are mapped (:mod:`~otel_prov.ingest.receiver._handover`).

Failure is never silent:

* a request that cannot be decoded raises :class:`InvalidRequestError` (HTTP 400);
* spans that break the OTLP rules are left out and counted (``partial_success``);
* past ``max_pending_spans`` buffered, or ``max_journal_bytes`` journaled, or before
  the journal is replayed, or while draining, or while the disk refuses the journal
  (full, say: logged once until a request goes in again), a request raises
  :class:`RequestRefusedError` with a retry delay (HTTP 429/503 with ``Retry-After``,
  gRPC UNAVAILABLE with ``RetryInfo``), and the sender keeps it;
* a cycle whose traces the destination did not take (store down, SPARQL exporter still
  holding batches) puts them back; they are retried after a pause with a fresh read of
  the bundle chains, and their journal records stay.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading
import time
from collections import ChainMap
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from otel_prov.environment_variables import OTEL_PROV_SESSION_TIMEOUT
from otel_prov.exporters._base import ExportResult
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters._stored import StoreReads
from otel_prov.ingest._import import ImportSummary, import_spans
from otel_prov.ingest.receiver._handover import Handover
from otel_prov.ingest.receiver._journal import JSON, PROTOBUF, Journal, JournalRecord
from otel_prov.ingest.receiver._metrics import Histogram, Sample, render
from otel_prov.ingest.receiver._settings import ReceiverSettings
from otel_prov.ingest.receiver._traces import Due, Reason, TraceBuffer
from otel_prov.processing._pipeline import OpenRun, WritePipeline
from otel_prov.prov._otlp_json import InvalidRequestError, ParsedSpans, parse_otlp_json_body
from otel_prov.prov._otlp_proto import parse_otlp_proto
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._stream import StandIn

__all__ = ["Accepted", "InvalidRequestError", "Receiver", "RequestRefusedError"]

_logger = logging.getLogger(__name__)

_RETRY_AFTER_S = 2.0
_FAILURE_PAUSE_S = (1.0, 30.0)
_PROBLEMS_IN_MESSAGE = 5
_BATCH_SPANS = 8192
"""Due traces are stored together once they hold this many spans, or ..."""
_FLUSH_TIMEOUT_S = 120.0
"""How long a batch may take to be stored before it counts as not taken (and is retried)."""
_BATCH_DELAY_S = 1.0
"""... once the first of them has waited this long (at most ``trace_idle``): a store
ingests one large batch several times faster than many small ones."""
_LIMIT_LOG_INTERVAL_S = 10.0
_PART_TRIPLES = 19_000
"""Triples handed at a time to a destination that stores in the background: it starts on
a batch's first traces while the rest is mapped.  A little under two of the SPARQL
exporter's Graph Store batches (10,000), which it cuts into two requests."""

Encoding = Literal["protobuf", "json"]


class RequestRefusedError(Exception):
    """Not accepted now; the sender should retry after ``retry_after`` seconds."""

    def __init__(
        self, reason: str, *, overloaded: bool, retry_after: float = _RETRY_AFTER_S
    ) -> None:
        super().__init__(reason)
        self.overloaded = overloaded
        """Too much waits to be stored (HTTP 429), rather than not taking any (503)."""
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class Accepted:
    """The answer to a request that is now durable: OTLP's ``partial_success``."""

    spans: int
    rejected: int
    """Spans of the request left out (``rejected_spans``); 0 when all were taken."""
    message: str
    """Why they were, or warnings about parts left out; empty when there was nothing."""


@dataclass(frozen=True, slots=True)
class _InFlight:
    """A batch the storing thread has: its result, its traces, what the ingest path said."""

    future: Future[bool]
    due: list[Due]
    summary: ImportSummary
    started: float


class Receiver:
    """See the module documentation.  ``pipeline`` maps, seals and exports (the write
    engine every writer shares, ``processing._pipeline``), into its graph (a tenant's, for
    a tenant's receiver); ``reader`` gives a reader of what its exporter has stored *now*
    (the embedded store's read-only view is a snapshot: open a new one);
    ``spool_bytes`` tells how much the exporter holds on disk, for the metrics."""

    def __init__(
        self,
        settings: ReceiverSettings,
        *,
        pipeline: WritePipeline,
        reader: Callable[[], QueryBackend],
        spool_bytes: Callable[[], int] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if pipeline.graph is None:
            raise ValueError("a receiver's pipeline names its graph")
        self.settings = settings
        self._pipeline = pipeline
        self._chain = pipeline.chain
        self._exporter = pipeline.exporter
        self._reader = reader
        self._graph = pipeline.graph
        self._prepare = pipeline.prepare
        self._spool_bytes = spool_bytes
        self._clock = clock
        self._journal = Journal(settings.data_dir / "journal", fsync=settings.fsync)
        self._buffer = TraceBuffer(settings)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = False
        self._closing = False
        self._journal_failing = False
        self._batch: list[Due] = []
        self._batch_since = 0.0
        self._storing = ThreadPoolExecutor(1, thread_name_prefix="OtelProvReceiverStore")
        self._streaming = self._exporter.delivers_in_background
        self._in_flight: _InFlight | None = None
        self._paused_until = 0.0
        self._failures = 0
        self._limit_logged: dict[Reason, float] = {}
        self._awaited_logged = self._cut_off_logged = -_LIMIT_LOG_INTERVAL_S
        self._counts = dict.fromkeys(_COUNTERS, 0)
        self._export_seconds = Histogram(
            "otel_prov_receiver_export_seconds",
            "Time to map, seal and store one batch of due traces (store acknowledged).",
        )
        self._worker: threading.Thread | None = None
        self._stand_ins: dict[int, StandIn] = {}
        """Traces streamed while their run's span has not come: who stands for the run."""
        self._continued: set[int] = set()
        """Traces streamed since they were last mapped, gone on from what the store held."""

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._ready and not self._closing

    def start(self) -> None:
        """Replay what the journal holds from before (mapped as it comes due), then take
        requests.  Returns once ready."""
        done, records = self._journal.replay()
        replayed = 0
        now = self._clock()
        for record in records:
            spans = [
                s for s in self._decode_record(record) if done.get(s.trace_id, 0) < record.sequence
            ]
            if spans:
                traces = {span.trace_id for span in spans}
                self._journal.hold(record.sequence, traces)
                self._buffer.add([self._prepare(s) for s in spans], record.sequence, now)
                replayed += len(spans)
        if replayed:
            _logger.info(
                "journal %s: %d span(s) of %d trace(s) acknowledged before the last stop "
                "and not yet stored: mapping them",
                self._journal.directory,
                replayed,
                self._buffer.open_traces,
            )
        self._worker = threading.Thread(name="OtelProvReceiver", target=self._run, daemon=True)
        self._worker.start()
        self._ready = True

    def _decode_record(self, record: JournalRecord) -> tuple[SpanRecord, ...]:
        try:
            return self._decode(
                record.payload, "json" if record.kind == JSON else "protobuf", "journal"
            ).spans
        except InvalidRequestError:  # journaled only after it decoded: the disk changed it
            _logger.exception("journal record %d cannot be read; left out", record.sequence)
            return ()

    def drain(self, timeout: float = 30.0) -> bool:
        """Stop taking requests, map every buffered trace now and wait for the destination
        to hold it.  ``True`` when it all went; what did not stays journaled for the next
        start on the same data directory."""
        self._closing = True
        deadline = self._clock() + timeout
        self._stop.set()
        if self._worker is not None:
            self._worker.join(max(0.0, deadline - self._clock()))
            if self._worker.is_alive():  # still mapping a batch: it keeps the journal
                return False
        stored = False
        while (left := deadline - self._clock()) > 0:
            if not (self._cycle(drain=True, flush_timeout=left) and self._settle(wait=True)):
                time.sleep(min(1.0, max(0.0, deadline - self._clock())))
            elif not (self._buffer.pending_spans - self._buffer.awaited()[1] or self._batch):
                stored = True
                break
        self._log_awaited_at_drain()
        if self._in_flight is None or self._in_flight.future.done():
            self._chain.checkpoint(
                self._exporter, time.time_ns(), graph=self._graph
            )  # the head at the end
            self._storing.shutdown()
            self._journal.close()
        return stored

    # --- requests (transport threads) ------------------------------------------------------
    def accept(self, body: bytes, encoding: Encoding, source: str) -> Accepted:
        """Take one export request; on return it is durable.  Raises
        :class:`InvalidRequestError` or :class:`RequestRefusedError`."""
        parsed = self._decode(body, encoding, source)
        spans = parsed.spans
        with self._lock:
            self._counts["requests"] += 1
            refusal = self._refusal()
            if refusal is not None:
                self._counts["spans_refused"] += len(spans)
                raise refusal
        prepared = [self._prepare(span) for span in spans]
        with self._lock:
            try:
                sequence = self._journal.append(
                    JSON if encoding == "json" else PROTOBUF,
                    body,
                    {span.trace_id for span in prepared},
                )
            except OSError as exc:
                self._counts["spans_refused"] += len(spans)
                raise self._journal_failed("cannot be written", exc) from exc
            self._buffer.add(prepared, sequence, self._clock())
            self._counts["spans_received"] += len(spans)
            self._counts["spans_rejected"] += parsed.skipped
        try:
            self._journal.sync(sequence)
        except OSError as exc:
            with self._lock:
                raise self._journal_failed("is not durable", exc) from exc
        if self._journal_failing:  # read without the lock: the usual case costs nothing
            with self._lock:
                if self._journal_failing:
                    self._journal_failing = False
                    _logger.info("journal %s: written again", self._journal.directory)
        return Accepted(
            len(spans), parsed.skipped, "; ".join(parsed.problems[:_PROBLEMS_IN_MESSAGE])
        )

    def _log_awaited_at_drain(self) -> None:
        traces, spans = self._buffer.awaited()
        if traces:
            _logger.info(
                "%d span(s) of %d run(s) whose own span has not come stay in the journal %s: "
                "the next start on it waits for them again",
                spans,
                traces,
                self._journal.directory,
            )

    def _decode(self, body: bytes, encoding: Encoding, source: str) -> ParsedSpans:
        if encoding == "protobuf":
            return parse_otlp_proto(body, source)
        return parse_otlp_json_body(body, source)

    def _journal_failed(self, what: str, exc: OSError) -> RequestRefusedError:
        """A request refused for a disk that refuses the journal (full, say), to be sent
        again (HTTP 503, gRPC UNAVAILABLE); logged once until a request goes in again, not
        once per request (under the lock)."""
        problem = f"the journal in {self._journal.directory} {what}: {exc.strerror or exc}"
        if not self._journal_failing:
            self._journal_failing = True
            _logger.error(
                "%s; refusing requests until it can be written again (the senders retry them)",
                problem,
            )
        return RequestRefusedError(problem, overloaded=False)

    def _refusal(self) -> RequestRefusedError | None:
        """Why a request cannot be taken now (under the lock); ``None`` when it can."""
        if not self._ready:
            return RequestRefusedError("starting: replaying the journal", overloaded=False)
        if self._closing:
            return RequestRefusedError("shutting down", overloaded=False)
        if self._buffer.pending_spans >= self.settings.max_pending_spans:
            return RequestRefusedError(
                f"{self._buffer.pending_spans} spans wait to be stored (max_pending_spans "
                f"{self.settings.max_pending_spans}): is the store keeping up?",
                overloaded=True,
            )
        if self._journal.size_bytes >= self.settings.max_journal_bytes:
            return RequestRefusedError(
                f"the journal in {self._journal.directory} is full", overloaded=True
            )
        return None

    # --- the worker ------------------------------------------------------------------------
    def _run(self) -> None:
        tick = min(0.25, self.settings.trace_idle / 4)
        while not self._stop.wait(tick):
            if self._clock() >= self._paused_until:
                self._cycle()
                if self.settings.stream:
                    self._stream_steps()

    def _stream_steps(self) -> None:
        """Seal the steps of the traces still open that got spans since the last tick: a
        window of each run around them, the next entry of the chain
        (``WritePipeline.stream``), stored in turn with the batches (the one storing
        thread).  The run is its :class:`~otel_prov.prov._stream.StandIn` until its own
        span comes.  Their spans stay buffered and journaled: the trace is mapped whole,
        its final entry, when it comes due."""
        with self._lock:
            changed = self._buffer.changed()
        runs = []
        for trace_id, new, spans in changed:
            stand_in = self._stand_ins.get(trace_id)
            if stand_in is None:
                stand_in = self._stand_ins[trace_id] = StandIn()
            stand_in.add(spans[span_id] for span_id in new)
            run = stand_in.run()
            if run is None or run.span_id in spans:
                continue  # no run to stream yet, or its own span came: it ends soon
            if trace_id not in self._continued:
                self._continued.add(trace_id)  # a receiver before this one may have streamed it
                self._pipeline.continue_stored(
                    self._stored().sessions([f"{trace_id:032x}"]).get(f"{trace_id:032x}", []),
                    self._stored(),
                )
            runs.append(OpenRun(run.span_id, new, ChainMap({run.span_id: run}, spans)))
        records = self._pipeline.stream(runs, time.time_ns())
        if records:
            try:
                self._storing.submit(self._exporter.export, records).result(_FLUSH_TIMEOUT_S)
            except Exception:  # a step not stored now is in the run's final entry
                _logger.exception("storing %d streamed step(s) failed", len(records))

    def _stored(self) -> StoreReads:
        """What the store holds now, for the pipeline to go on from."""
        return StoreReads(self._reader(), self._graph)

    def _cycle(self, *, drain: bool = False, flush_timeout: float = _FLUSH_TIMEOUT_S) -> bool:
        """Map what is due, in batches, and hand each to the storing thread; ``False`` when
        the destination did not take a batch (its traces are back in the buffer).

        One batch is in the store while the next one is mapped: the embedded store's bulk
        load runs without the GIL, so mapping and storing overlap on two cores.
        """
        now = self._clock()
        with self._lock:
            came_due = self._buffer.due(now, drain=drain)
            self._buffer.expire(now)
        self._log_limits(came_due, now)
        if not self._settle(wait=False):
            self._batch += came_due
            return False
        if came_due and not self._batch:
            self._batch_since = now
        self._batch += came_due
        waited = now - self._batch_since >= min(_BATCH_DELAY_S, self.settings.trace_idle)
        counts = list(itertools.accumulate(len(trace.spans) for trace in self._batch))
        if not counts or not (drain or waited or counts[-1] >= _BATCH_SPANS):
            return True
        # At most a batch at a time (at least one trace): the rest goes next, at once.
        taken = max(1, bisect.bisect_left(counts, _BATCH_SPANS) + 1)
        due, self._batch = self._batch[:taken], self._batch[taken:]
        started = time.perf_counter()
        handover = Handover(
            self._storing,
            self._exporter,
            after=None if self._in_flight is None else self._in_flight.future,
            part_triples=_PART_TRIPLES if self._streaming else None,
            graph=self._graph,
        )
        try:
            summary = self._map(due, handover)
        except Exception:
            _logger.exception("mapping %d trace(s) failed", len(due))
            handover.abandon()
            self._failed(due)
            return False
        if not self._settle(wait=True):  # sealed on top of a batch the store did not take
            handover.abandon()
            self._restore(due)
            return False
        self._in_flight = _InFlight(handover.finish(flush_timeout), due, summary, started)
        return True

    def _map(self, due: list[Due], handover: Handover) -> ImportSummary:
        """Seal ``due``, handing the records over as they come; what the ingest path says."""
        for trace in due:
            self._stand_ins.pop(trace.trace_id, None)
            self._continued.discard(trace.trace_id)
        summary = import_spans(
            (span for trace in due for span in trace.spans),
            stand_ins=(span for trace in due for span in trace.stand_ins),
            pipeline=self._pipeline,
            stored=self._stored(),
            export=lambda records: handover.export(records) is ExportResult.SUCCESS,
            now_ns=time.time_ns(),
            export_batch=1,  # the handover gathers records into parts
            prepared=True,
        )
        self._chain.sealed(handover, time.time_ns())  # a checkpoint goes with the batch
        return summary

    def _settle(self, *, wait: bool) -> bool:
        """Finish the batch in the store, if any (waiting for it with ``wait``): tell the
        journal its traces are done, or put them back.  ``False`` when it failed."""
        flight = self._in_flight
        if flight is None or not (wait or flight.future.done()):
            return True
        self._in_flight = None
        try:
            stored = flight.future.result()
        except Exception:
            _logger.exception("storing %d trace(s) failed", len(flight.due))
            stored = False
        if not stored:
            self._failed(flight.due)
            return False
        self._export_seconds.observe(time.perf_counter() - flight.started)
        self._journal.done((d.trace_id, d.sequence) for d in flight.due)
        self._failures = 0
        summary = flight.summary
        with self._lock:
            self._counts["traces_mapped"] += summary.traces
            self._counts["sessions_sealed"] += summary.sessions - summary.already_stored
            self._counts["sessions_revised"] += summary.revised
            self._counts["traces_without_session"] += summary.left_out_traces
        for warning in summary.warnings[:_PROBLEMS_IN_MESSAGE]:
            _logger.warning("%s", warning)
        return True

    def _failed(self, due: list[Due]) -> None:
        """What was sealed may not be stored: the next try reads the chains and the stored
        sessions afresh, after a pause."""
        self._sealer = None
        self._failures += 1
        pause = min(_FAILURE_PAUSE_S[1], _FAILURE_PAUSE_S[0] * 2 ** (self._failures - 1))
        self._paused_until = self._clock() + pause
        with self._lock:
            self._counts["export_failures"] += 1
        self._restore(due)
        _logger.warning(
            "the destination did not take %d trace(s); kept in the journal, retrying in %.0f s",
            len(due),
            pause,
        )

    def _restore(self, due: list[Due]) -> None:
        now = self._clock()
        with self._lock:
            for trace in due:
                self._buffer.restore(trace, now)

    def _log_limits(self, due: list[Due], now: float) -> None:
        self._log_awaited(due, now)
        for reason in (Reason.SPANS, Reason.OPEN_TRACES):
            hit = [d for d in due if d.reason is reason]
            if not hit:
                continue
            with self._lock:
                self._counts["limit_hits"] += len(hit)
            if now - self._limit_logged.get(reason, -_LIMIT_LOG_INTERVAL_S) < _LIMIT_LOG_INTERVAL_S:
                continue
            self._limit_logged[reason] = now
            limit = (
                f"max_spans_per_trace ({self.settings.max_spans_per_trace})"
                if reason is Reason.SPANS
                else f"max_open_traces ({self.settings.max_open_traces})"
            )
            _logger.warning(
                "limit %s hit: %d trace(s) mapped before they went idle (e.g. trace %032x); "
                "spans of them that come later revise their bundles",
                limit,
                len(hit),
                hit[0].trace_id,
            )

    def _log_awaited(self, due: list[Due], now: float) -> None:
        """Say what waits for its run's span and what was cut off waiting (every so often:
        runs with long tool calls are common)."""
        cut_off = [d for d in due if d.stand_ins]
        with self._lock:
            awaited = self._buffer.traces_awaited
            new, self._counts["traces_awaited"] = awaited - self._counts["traces_awaited"], awaited
            self._counts["runs_cut_off"] += len(cut_off)
        if new and now - self._awaited_logged >= _LIMIT_LOG_INTERVAL_S:
            self._awaited_logged = now
            _logger.info(
                "%d trace(s) went idle before the span of their run came (a long tool call, "
                "a wait for approval): kept, and journaled, until it comes or the session "
                "timeout (%.0f s, %s) passes",
                new,
                self.settings.session_timeout,
                OTEL_PROV_SESSION_TIMEOUT,
            )
        if cut_off and now - self._cut_off_logged >= _LIMIT_LOG_INTERVAL_S:
            self._cut_off_logged = now
            _logger.warning(
                "%d run(s) whose own span never came (e.g. trace %032x, %d span(s)) stored as "
                "far as they go, marked incomplete: the session timeout (%.0f s, %s) passed or "
                "a limit was hit; should their span come, it revises their bundle",
                len(cut_off),
                cut_off[0].trace_id,
                len(cut_off[0].spans),
                self.settings.session_timeout,
                OTEL_PROV_SESSION_TIMEOUT,
            )

    # --- metrics ---------------------------------------------------------------------------
    def metrics(self) -> str:
        """``GET /metrics``: Prometheus text."""
        samples, histogram = self.metric_samples()
        return render(samples, [histogram])

    def metric_samples(self) -> tuple[list[Sample], Histogram]:
        """What :meth:`metrics` writes, to be written beside other receivers' (tenants)."""
        with self._lock:
            counts = dict(self._counts)
            open_traces, pending = self._buffer.open_traces, self._buffer.pending_spans
            awaited = self._buffer.awaited()[0]
            histogram = self._export_seconds.labelled("")
        spool = self._spool_bytes() if self._spool_bytes is not None else 0
        return list(self._samples(counts, open_traces, pending, awaited, spool)), histogram

    def _samples(
        self, counts: dict[str, int], open_traces: int, pending: int, awaited: int, spool: int
    ) -> Iterator[Sample]:
        prefix = "otel_prov_receiver_"
        for name, text in _COUNTERS.items():
            yield Sample(f"{prefix}{name}_total", "counter", text, counts[name])
        for name, text, value in (
            ("open_traces", "Traces with spans not mapped yet.", open_traces),
            ("pending_spans", "Spans not mapped yet.", pending),
            (
                "awaited_traces",
                "Open traces kept for the span of their run (idle, not mapped yet).",
                awaited,
            ),
            ("journal_bytes", "Bytes in the journal's segments.", self._journal.size_bytes),
            ("spool_bytes", "Bytes in the exporter's spool.", spool),
            ("ready", "1 once requests are taken, 0 while starting or draining.", self.ready),
        ):
            yield Sample(f"{prefix}{name}", "gauge", text, value)


_COUNTERS = {
    "requests": "Export requests received, whatever the answer.",
    "spans_received": "Spans accepted (journaled and acknowledged).",
    "spans_rejected": "Spans left out for breaking the OTLP rules (partial_success).",
    "spans_refused": "Spans refused for backpressure (the sender retries them).",
    "traces_mapped": "Traces mapped into provenance (each time one was mapped).",
    "sessions_sealed": "Agent sessions sealed for the first time.",
    "sessions_revised": "Sealed sessions revised by spans that came later.",
    "traces_without_session": "Traces mapped without any agent session (not provenance).",
    "export_failures": "Export batches the destination did not take (retried).",
    "limit_hits": "Traces mapped early by the open-traces or spans-per-trace limit.",
    "traces_awaited": "Traces that went idle before the span of their run came, kept for it.",
    "runs_cut_off": "Runs stored incomplete without their own span (session timeout, limit).",
}
"""The receiver's counters (``otel_prov_receiver_<name>_total``) and what they count."""
