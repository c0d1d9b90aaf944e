"""``SparqlUpdateExporter``: provenance delivered to a SPARQL 1.1 store, nothing lost.

Usage::

    from otel_prov import ProvSpanProcessor
    from otel_prov.exporters import SparqlUpdateExporter

    exporter = SparqlUpdateExporter("http://localhost:7878/update")
    provider.add_span_processor(ProvSpanProcessor(exporter))

or set ``OTEL_PROV_SPARQL_UPDATE_ENDPOINT`` and call :func:`otel_prov.configure`.

How it behaves:

* ``export`` writes the triples to the durable spool (``spool_dir``,
  ``OTEL_PROV_SPOOL_DIR``, default ``.otel-prov/spool``) in batches of at most
  ``max_batch_triples`` (default 1,000; 10,000 through a Graph Store) and returns:
  success means the records survive the process being killed (and a machine crash
  with ``OTEL_PROV_WAL_FSYNC=always``), so the processor may settle its write-ahead
  log even while the store is slow.  One sender thread posts the batches, oldest
  first, as ``INSERT DATA { GRAPH <g> { ... } }`` on a persistent HTTP connection, and
  removes each once the store acknowledges it.
* With a Graph Store Protocol endpoint (``graph_store_endpoint``,
  ``OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT``, e.g. ``http://host:7878/store?graph={graph}``),
  the sender POSTs each batch as N-Triples to it instead (same spool, retries, dead
  letters and idempotence: a graph is a set, so a replayed batch adds nothing); the
  update endpoint is still where the exporter's identity and default query endpoint
  come from.
* A batch the store rejects as too large (HTTP 413, Virtuoso's SP031) is split in two
  and the batch size halves for the rest of the run.
* A batch the store did not acknowledge (network error, timeout, 5xx, 408, 429, refused
  credentials) stays in the spool and is retried with exponential backoff and jitter,
  honouring ``Retry-After``.  The spool is replayed at the next start, and capped at
  ``max_spool_bytes`` (default 1 GiB): past it ``export`` fails with a warning.
* A batch refused for good (other 4xx) goes to ``<spool_dir>/dead-letter`` with the
  server's reason, and is not retried; so does a spooled file that cannot be read as a
  batch, so that one bad file never holds up those behind it.
* Replays never duplicate anything: the mapper's IRIs are deterministic, so inserting a
  batch twice leaves the store as inserting it once.
* What a record retracts (the end of a streamed run takes back what its steps wrote and
  it does not say, ``ProvRecord.retracted``) is a spooled batch of its own, ahead of the
  record's triples, sent as ``DELETE DATA`` to the update endpoint (a Graph Store takes
  no deletion of single triples).

Headers (``OTEL_PROV_SPARQL_HEADERS``, ``key=value,...`` as in
``OTEL_EXPORTER_OTLP_HEADERS``), ``auth`` and ``digest_auth`` are never logged, nor a URL's
user info or the values of its secret-looking query parameters (``?access_token=``,
``api_key``: shown as ``REDACTED``).  Counters
go to the OpenTelemetry metrics API (``otel_prov.exporter.batches`` by outcome) and to
``<spool_dir>/status-<pid>.json``, which ``otel-prov status`` reads.
"""

from __future__ import annotations

import functools
import logging
import os
import random
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from opentelemetry import metrics
from opentelemetry.context import _SUPPRESS_INSTRUMENTATION_KEY, attach, set_value
from opentelemetry.metrics import CallbackOptions, Observation
from requests.auth import AuthBase, HTTPDigestAuth

from otel_prov._forks import reset_in_child
from otel_prov._settings import env_str, fsync_always
from otel_prov._version import __version__
from otel_prov.environment_variables import (
    OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT,
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
)
from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term
from otel_prov.exporters._reports import live_reports, write_report
from otel_prov.exporters._text import REMOVE_BATCH, RETRACTED, remove_text
from otel_prov.exporters.sparql._client import (
    Answer,
    Outcome,
    SparqlUpdateClient,
    by_graph,
    delete_text,
    to_nquad_lines,
)
from otel_prov.exporters.sparql._settings import (
    query_endpoint_from_settings,
    redact_url,
    sparql_headers,
    spool_dir_from_settings,
)
from otel_prov.exporters.sparql._spool import (
    Spool,
    SpooledBatch,
    SpoolFullError,
    UnreadableBatchError,
)
from otel_prov.prov._record import ProvRecord

__all__ = ["SparqlUpdateExporter"]

_logger = logging.getLogger(__name__)

RETRACTED_LINE = RETRACTED.decode()
"""The mark on each line of a spooled batch of retracted triples (``ProvRecord.retracted``)."""

_MAX_DOUBLINGS = 64
"""Past this many failures in a row the retry delay doubles no more (it is long at its
``retry_max_delay`` bound by then)."""

_OUTCOMES = ("exported", "retried", "spooled", "dead_lettered", "dropped")
_STATUS_INTERVAL_S = 1.0
_UPDATE_BATCH = 1000
_GRAPH_STORE_BATCH = 10_000
"""Triples per batch by default: a Graph Store POST goes to the store's bulk parser, and
``otel-prov receive`` into an Oxigraph server stored 1.66x the spans/s with batches of
10,000 than of 1,000 (``benchmarks/bench_receiver.py``); INSERT DATA stays at 1,000,
which Virtuoso takes (SP031 above about that).  A batch a store finds too large is split."""


class SparqlUpdateExporter(ProvExporter):
    """Sends provenance to a SPARQL 1.1 Update endpoint; see the module documentation."""

    delivers_in_background = True
    can_retract = True

    def __init__(
        self,
        update_endpoint: str | None = None,
        query_endpoint: str | None = None,
        *,
        graph: str | None = None,
        headers: Mapping[str, str] | None = None,
        auth: AuthBase | None = None,
        digest_auth: tuple[str, str] | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 30.0,
        verify: bool | str = True,
        max_batch_triples: int | None = None,
        spool_dir: str | os.PathLike[str] | None = None,
        max_spool_bytes: int = 1 << 30,
        fsync: bool | None = None,
        retry_initial_delay: float = 0.5,
        retry_max_delay: float = 30.0,
        graph_store_endpoint: str | None = None,
        meter_provider: metrics.MeterProvider | None = None,
    ) -> None:
        endpoint = update_endpoint or env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)
        if not endpoint:
            raise ValueError(
                "SparqlUpdateExporter needs an update endpoint: pass update_endpoint= or set "
                f"{OTEL_PROV_SPARQL_UPDATE_ENDPOINT}"
            )
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"update endpoint must be an http(s) URL, not {endpoint!r}")
        if auth is not None and digest_auth is not None:
            raise ValueError("pass auth= or digest_auth=, not both")
        if max_batch_triples is not None and max_batch_triples < 1:
            raise ValueError(f"max_batch_triples must be >= 1, not {max_batch_triples}")
        self.update_endpoint = endpoint
        self.query_endpoint = query_endpoint_from_settings(endpoint, query_endpoint) or endpoint
        self.graph_store_endpoint = (
            graph_store_endpoint
            if graph_store_endpoint is not None
            else env_str(OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT)
        ) or None
        """Graph Store Protocol URL (``{graph}`` is the graph IRI, URL-encoded) that batches
        are POSTed to as N-Triples instead of SPARQL Update; ``None``: SPARQL Update."""
        self.headers = dict(headers) if headers is not None else sparql_headers()
        self.auth = HTTPDigestAuth(*digest_auth) if digest_auth is not None else auth
        self.graph = graph_term(graph)
        """The graph records go to unless they name one (an IRI term)."""
        self._query_options: dict[str, Any] = {
            "timeout": (connect_timeout, read_timeout),
            "verify": verify,
            "auth": self.auth,
        }
        self._new_client = functools.partial(
            SparqlUpdateClient,
            endpoint,
            headers=self.headers,
            auth=self.auth,
            timeout=(connect_timeout, read_timeout),
            verify=verify,
            graph_store_endpoint=self.graph_store_endpoint,
        )
        self._client = self._new_client()
        spool_path = spool_dir_from_settings(spool_dir)
        self._fsync = fsync if fsync is not None else fsync_always()
        self.spool = self._open_spool(spool_path, max_spool_bytes)
        self.batch_size = max_batch_triples or (
            _GRAPH_STORE_BATCH if self.graph_store_endpoint else _UPDATE_BATCH
        )
        self._retry_initial = retry_initial_delay
        self._retry_max = retry_max_delay
        self._closed = False
        self._flush_until = 0.0
        self._failures = 0
        self._retry_at = 0.0
        self._auth_reported = False
        self._last_error = ""
        self._status_written = 0.0
        self.counts = dict.fromkeys(_OUTCOMES, 0)
        """Batches by outcome since start (also on the metrics API)."""
        self._triples = 0
        meter = metrics.get_meter("otel_prov", __version__, meter_provider=meter_provider)
        self._batches_metric = meter.create_counter(
            "otel_prov.exporter.batches", unit="{batch}", description="Batches by outcome."
        )
        self._triples_metric = meter.create_counter(
            "otel_prov.exporter.triples", unit="{triple}", description="Triples stored."
        )
        meter.create_observable_gauge(
            "otel_prov.exporter.spool.size",
            callbacks=[self._observe_spool],
            unit="By",
            description="Bytes waiting in the durable spool.",
        )
        self._start_sender()
        reset_in_child(self._after_fork_in_child)

    def _start_sender(self) -> None:
        self._lock = threading.Condition()
        self._wake = threading.Event()
        self._sender = threading.Thread(name="OtelProvSparqlSender", target=self._run, daemon=True)
        self._sender.start()

    def _after_fork_in_child(self) -> None:
        """The child has no sender and shares the parent's connection and spool lock: it
        gets a connection, a spool (a subdirectory: the parent still holds the lock) and
        counters of its own, and a sender that delivers only what the child exports."""
        self.spool.close()  # our copy of the lock's descriptor; the parent keeps its lock
        self.spool = self._open_spool(self.spool.root, self.spool.max_bytes)
        self._client = self._new_client()
        self.counts = dict.fromkeys(_OUTCOMES, 0)
        self._triples = 0
        self._failures, self._retry_at = 0, 0.0
        if not self._closed:
            self._start_sender()

    def _open_spool(self, directory: Path, max_bytes: int) -> Spool:
        return Spool(directory, max_bytes=max_bytes)

    def __repr__(self) -> str:
        return f"SparqlUpdateExporter({self._client.where!r})"

    # --- called by the processor's worker ----------------------------------------------
    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        """Keep the records in the spool (see the module documentation) and wake the sender.
        What a record retracts is spooled as a batch of its own before its triples, and
        sent as ``DELETE DATA`` in that order."""
        parts: list[tuple[bool, list[tuple[str, str]]]] = []
        for record in records:
            graph = record.graph or self.graph
            if record.retracted:
                parts.append((True, [(graph, f"{s} {p} {o} .") for s, p, o in record.retracted]))
            statements = [(graph, f"{s} {p} {o} .") for s, p, o in record.triples]
            if parts and not parts[-1][0]:
                parts[-1][1].extend(statements)
            else:
                parts.append((False, statements))
        if self._closed:
            left = sum(len(statements) for _, statements in parts)
            _logger.warning("export after shutdown: %d triples not sent", left)
            return ExportResult.FAILURE
        try:
            for retracted, statements in parts:
                self._spool(statements, retracted)
        except SpoolFullError as exc:
            self._count("dropped")
            _logger.warning("%s: records not spooled", exc)
            return ExportResult.FAILURE
        except OSError:
            self._count("dropped")
            _logger.exception("cannot spool %d record(s)", len(records))
            return ExportResult.FAILURE
        finally:
            self._wake.set()
        self._count("spooled")
        return ExportResult.SUCCESS

    def _spool(self, statements: Sequence[tuple[str, str]], retracted: bool) -> None:
        """Spool ``statements`` (graph, triple) in even batches of at most ``batch_size``: a
        remainder of a few triples would cost the store a request of its own."""
        parts = max(1, -(-len(statements) // self.batch_size))
        size = -(-len(statements) // parts) or 1
        for start in range(0, len(statements), size):
            grouped: dict[str, list[str]] = {}
            for graph, statement in statements[start : start + size]:
                grouped.setdefault(graph, []).append(statement)
            lines = to_nquad_lines(grouped)
            if retracted:
                lines = [RETRACTED_LINE + line for line in lines]
            self.spool.write(lines, fsync=self._fsync)

    # --- the sender thread ---------------------------------------------------------------
    def _run(self) -> None:
        attach(set_value(_SUPPRESS_INSTRUMENTATION_KEY, True))  # do not trace our own HTTP
        while True:
            self._wake.clear()
            try:
                worked = self._step()
            except Exception:
                _logger.exception("SPARQL sender step failed")
                worked = False
            self._write_status()
            with self._lock:
                self._lock.notify_all()
                if self._closed and self._done_closing():
                    return
            if not worked:
                self._wake.wait(self._wait_time())

    def _done_closing(self) -> bool:
        """Shutting down: stop once all is delivered, or the store is down (kept on disk)."""
        now = time.monotonic()
        return self.spool.empty() or self._retry_at > now or now >= self._flush_until

    def _wait_time(self) -> float:
        until_retry = self._retry_at - time.monotonic()
        return min(1.0, until_retry) if until_retry > 0 else 1.0

    def _step(self) -> bool:
        """Send the oldest spooled batch; False when there was nothing to do yet."""
        if time.monotonic() < self._retry_at:
            return False  # the store is down: wait for the retry
        try:
            spooled = self.spool.oldest()
        except UnreadableBatchError as exc:
            self._set_aside(exc.path, str(exc))
            return True
        if spooled is None:
            return False
        self._deliver_spooled(spooled)
        return True

    def _deliver_spooled(self, batch: SpooledBatch) -> None:
        lines = batch.lines
        retracted = bool(lines) and lines[0].startswith(RETRACTED_LINE)
        try:
            if retracted:
                lines = [line.removeprefix(RETRACTED_LINE) for line in lines]
            statements = by_graph(lines)
        except ValueError as exc:
            self._set_aside(batch.path, f"unreadable spooled batch {batch.path.name}: {exc}")
            return
        if retracted:
            answer = self._client.update(delete_text(statements))
        else:
            answer = self._client.send(statements)
        if answer.outcome is Outcome.DELIVERED:
            with self._lock:  # a flush sees the batch gone only once it is counted
                self.spool.remove(batch, fsync=self._fsync)
                self._delivered(len(batch.lines))
        elif answer.outcome is Outcome.TOO_LARGE and len(batch.lines) > 1:
            self._shrink(len(batch.lines), answer)
            self.spool.split(batch, fsync=self._fsync)
        elif answer.outcome is Outcome.RETRY:
            self._count("retried")
            self._failed(answer)
        else:
            self._set_aside(batch.path, answer.reason)

    def _shrink(self, size: int, answer: Answer) -> None:
        self.batch_size = max(1, min(self.batch_size, size // 2))
        _logger.info("%s; batch size now %d triples", answer.reason[:200], self.batch_size)

    def _delivered(self, triples: int) -> None:
        self._failures = 0
        self._retry_at = 0.0
        self._auth_reported = False
        self._triples += triples
        self._triples_metric.add(triples)
        self._count("exported")

    def _failed(self, answer: Answer) -> None:
        self._failures += 1
        # The exponent stops growing once the delay is at its bound: a store down for days
        # takes thousands of tries, and 2 ** 1100 overflows a float.
        doublings = min(self._failures - 1, _MAX_DOUBLINGS)
        delay = min(self._retry_max, self._retry_initial * 2**doublings)
        delay *= random.uniform(0.5, 1.5)
        if answer.retry_after is not None:
            delay = max(delay, answer.retry_after)
        self._retry_at = time.monotonic() + delay
        self._last_error = answer.reason
        if answer.auth_failed:
            if not self._auth_reported:
                _logger.error("%s", answer.reason)
                self._auth_reported = True
        elif self._failures == 1 or self._failures % 10 == 0:
            _logger.warning(
                "SPARQL store not accepting (attempt %d): %s; retrying in %.1f s from %s",
                self._failures,
                answer.reason[:300],
                delay,
                self.spool.directory,
            )

    def _set_aside(self, path: Path, reason: str) -> None:
        """A spooled file that will never go through: kept as a dead letter, delivery goes on."""
        with self._lock:  # a flush sees the file gone only once it is counted
            try:
                letter = self.spool.set_aside(path, reason)
            except OSError:
                _logger.exception("cannot move %s to the dead letters", path)
                return
            self._dead_lettered(letter.path, reason)

    def _dead_lettered(self, path: Path, reason: str) -> None:
        self._last_error = reason
        self._count("dead_lettered")
        _logger.error("not stored for good (%s); kept in %s", reason[:300], path)

    def _count(self, outcome: str) -> None:
        self.counts[outcome] += 1
        self._batches_metric.add(1, {"outcome": outcome})

    def _observe_spool(self, options: CallbackOptions) -> list[Observation]:
        return [Observation(self.spool.size_bytes)]

    def status(self) -> dict[str, Any]:
        """What ``otel-prov status`` shows: counters, spool and last error (no secrets)."""
        return {
            "pid": os.getpid(),
            "endpoint": self._client.where,
            "updated": time.time(),
            "batches": dict(self.counts),
            "triples_exported": self._triples,
            "spool_files": len(self.spool),
            "spool_bytes": self.spool.size_bytes,
            "batch_size": self.batch_size,
            "last_error": self._last_error,
        }

    def _write_status(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._status_written < _STATUS_INTERVAL_S:
            return
        first, self._status_written = self._status_written == 0.0, now
        try:
            if first:
                live_reports(self.spool.root)  # removes those of processes gone
            write_report(self.spool.root, self.status())
        except OSError:
            _logger.debug("cannot write the report in %s", self.spool.root, exc_info=True)

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def writers_directory(self) -> Path:
        return self.spool.root / "writers"

    def describe(self) -> str:
        return f"the SPARQL store at {redact_url(self.update_endpoint)}"

    def waiting(self) -> int:
        return len(self.spool)

    def cannot_remove(self) -> str | None:
        return None

    def remove(self, graph: str, subjects: Sequence[str]) -> bool:
        """Sent at once on a connection of its own (the sender's is its thread's), never
        spooled: a removal is asked for by a person who waits for its answer."""
        client = self._new_client()
        try:
            for start in range(0, len(subjects), REMOVE_BATCH):
                answer = client.update(remove_text(graph, subjects[start : start + REMOVE_BATCH]))
                if answer.outcome is not Outcome.DELIVERED:
                    _logger.error("cannot remove from %s: %s", client.where, answer.reason[:500])
                    return False
        finally:
            client.close()
        return True

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Send everything queued and spooled now; True when nothing is left waiting."""
        deadline = time.monotonic() + timeout_millis / 1000
        with self._lock:
            self._flush_until = deadline
            self._retry_at = 0.0
            self._wake.set()
            while not self.spool.empty() and time.monotonic() < deadline:
                if not self._sender.is_alive():
                    break
                self._lock.wait(min(0.05, max(0.0, deadline - time.monotonic())))
            return self.spool.empty()

    def shutdown(self, timeout_millis: int = 10_000) -> None:
        """Deliver what it can within the timeout; whatever is left stays in the spool."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._flush_until = time.monotonic() + timeout_millis / 1000
            self._retry_at = min(self._retry_at, time.monotonic())
        self._wake.set()
        self._sender.join(timeout_millis / 1000 + 1)
        self._write_status(force=True)
        self._client.close()
        self.spool.close()
