"""Runs a writer that died left unfinished, ended by the next writer of the same store.

Two traces of such a run can be left:

* its write-ahead log (``_wal``, ``OTEL_PROV_WAL_DIR``): the tool call it was in when it
  died, with the run around it, logged at dispatch;
* its streamed entries (``_stream``): every step that ended before the kill is in the
  store, the run still open there, ``running``.

A writer that starts ends both: the runs of its directory's dead logs, and the runs the
store holds open whose writer is gone (its lock on this machine freed, ``_liveness``) or
silent for twice the session timeout (a writer elsewhere; the owner times a run out
itself at the session timeout, so it never loses one it still writes to another's
clock).  A run both left (streamed, then a tool call logged) ends once, as far as both
go.  Every run so ended is ``incomplete``, its final bundle an entry of the new writer's
chain (``Sealer.seal_abandoned``; a run only logged is sealed as any run is).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from otel_prov.exporters._stored import StoredRuns
from otel_prov.processing._liveness import WriterLock, forget_writer, gone_writers
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._iris import trace_hex
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import iri
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._stream import running_view

__all__ = ["Recovery"]

_logger = logging.getLogger(__name__)


class Recovery:
    """A writer's part in ending what dead writers left (see the module documentation).
    ``stored``: the store's answers (``None``: none here, and no streamed run of another
    writer is ended); ``directory``: where this machine's writers keep their locks
    (``ProvExporter.writers_directory``)."""

    def __init__(
        self,
        pipeline: WritePipeline,
        stored: StoredRuns | None,
        *,
        session_timeout_ns: int,
        directory: Path | None,
    ) -> None:
        self._pipeline = pipeline
        self._stored = stored
        self._silent_ns = 2 * session_timeout_ns
        self._every_ns = max(1_000_000_000, session_timeout_ns // 2)
        self._directory = directory
        self._looked_ns = 0
        self._lock: WriterLock | None = None
        self._failing = False
        """The last look could not read the store (said once until one can)."""

    @property
    def streams_safely(self) -> bool:
        """Whether runs this writer streams can be ended by the next one: it can read
        the store (a run only logged would be sealed again, beside its entries, else)."""
        return self._stored is not None

    def hold(self) -> None:
        """Hold this writer's lock (its chain now), so others know it alive."""
        if self._directory is not None and self._pipeline.streams:
            self._lock = WriterLock(self._directory, self._pipeline.chain.sealer.chain)

    def after_fork_in_child(self) -> None:
        """The parent's lock stays the parent's; the child (a new chain) holds its own."""
        if self._lock is not None:
            self._lock.close_in_child()
        self.hold()

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def abandoned(self, now_ns: int) -> list[ProvRecord]:
        """The final entries of the runs others left open, when it is time to look (at the
        first cycle, then every half session timeout); the locks of the writers found gone
        are forgotten."""
        if self._stored is None or now_ns - self._looked_ns < self._every_ns:
            return []
        self._looked_ns = now_ns
        gone = gone_writers(self._directory) if self._directory is not None else set()
        try:
            records = self._pipeline.end_abandoned(
                self._stored, now_ns, silent_ns=self._silent_ns, gone=gone
            )
        except Exception as exc:  # noqa: BLE001 - the store unreadable now: the next look tries again
            if not self._failing:
                first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                _logger.warning(
                    "cannot read the runs others left open in the store (%s); looking again "
                    "in %.0f s",
                    first,
                    self._every_ns / 1e9,
                )
            self._failing = True
            return []
        self._failing = False
        for chain in gone:
            assert self._directory is not None
            forget_writer(self._directory, chain)
        if records:
            _logger.warning("ended %d run(s) a writer that is gone left open", len(records))
        return records

    def from_log(self, spans: Sequence[SpanRecord], now_ns: int) -> list[ProvRecord]:
        """The final entries of the runs a dead process's log holds: each a run the store
        holds streamed ended as far as its entries and the log go; else sealed as logged."""
        by_trace: dict[int, list[SpanRecord]] = {}
        for span in spans:
            by_trace.setdefault(span.trace_id, []).append(span)
        held = (
            self._stored.sessions([trace_hex(t) for t in by_trace])
            if self._stored is not None
            else {}
        )
        records: list[ProvRecord] = []
        sealed_whole: list[list[SpanRecord]] = []
        for trace_id, group in by_trace.items():
            streamed = [s for s in held.get(trace_hex(trace_id), []) if s.streamed]
            if not streamed or self._stored is None:
                sealed_whole.append(group)
                continue
            found = streamed[0]
            logged = running_view(
                map_spans(group, prices=self._pipeline.prices, unbundled=_ids(group)).triples,
                iri(found.session),
            )
            records.append(
                self._pipeline.end_run(found, self._stored.content(found), now_ns, known=logged)
            )
        return records + self._pipeline.seal(sealed_whole, now_ns)


def _ids(spans: Iterable[SpanRecord]) -> set[int]:
    return {span.span_id for span in spans}
