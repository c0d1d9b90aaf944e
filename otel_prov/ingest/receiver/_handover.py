"""One batch of mapped traces on its way to the destination, through the storing thread.

The ingest path exports a batch's records as it seals them.  An exporter that only
queues them durably and stores them from a thread of its own
(:attr:`~otel_prov.exporters._base.ProvExporter.delivers_in_background`: the SPARQL
exporter's spool) gets them in parts of about ``part_triples`` as they come, so that the
store starts on the first traces of a batch while the rest is still being mapped; one
that stores them in the call itself (the embedded store's bulk load, several times faster
for one large call than for many small ones) gets them all at the end.  The batch counts
as stored once every part was taken and the exporter's ``force_flush`` says the store
holds them.

Parts run on the storing thread, one at a time and in order, after everything handed to
it before: so a batch is exported only once the one before it was stored.  A part whose
batch before it was not stored, or whose own earlier part was not taken, is not
exported: its records may be sealed on top of records the store does not hold, and the
receiver maps those traces again.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from concurrent.futures import Executor, Future

from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.prov._record import ProvRecord

__all__ = ["Handover"]


class Handover(ProvExporter):
    """Hands what the ingest path exports to ``storing`` (a single thread), for
    ``exporter``, each record into ``graph`` (the receiver's: a tenant's, with tenants);
    ``after`` is the batch handed over before this one, if still unsettled."""

    def __init__(
        self,
        storing: Executor,
        exporter: ProvExporter,
        *,
        after: Future[bool] | None,
        part_triples: int | None,
        graph: str | None = None,
    ) -> None:
        self._graph = graph
        self._storing = storing
        self._exporter = exporter
        self._after = after
        self._part_triples = part_triples
        self._records: list[ProvRecord] = []
        self._triples = 0
        self._parts: list[Future[bool]] = []
        self._stopped = threading.Event()

    # --- the worker, while it maps -----------------------------------------------------------
    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        if self._graph is not None:
            records = [dataclasses.replace(record, graph=self._graph) for record in records]
        self._records.extend(records)
        self._triples += sum(len(record.triples) for record in records)
        if self._part_triples is not None and self._triples >= self._part_triples:
            self._hand_over()
        return ExportResult.SUCCESS

    def finish(self, flush_timeout: float) -> Future[bool]:
        """Hand over the rest; the future is ``True`` once the destination holds it all."""
        self._hand_over()
        return self._storing.submit(self._flush, flush_timeout)

    def abandon(self) -> None:
        """Mapping failed, or was sealed on top of a batch not stored: parts not yet
        exported are not (those already are stay with the exporter, as a batch whose
        flush failed does)."""
        self._stopped.set()

    def _hand_over(self) -> None:
        if self._records:
            self._parts.append(self._storing.submit(self._export, self._records))
            self._records, self._triples = [], 0

    # --- the storing thread ------------------------------------------------------------------
    def _may_go_on(self) -> bool:
        if self._stopped.is_set():
            return False
        after = self._after
        if after is None or (after.done() and after.exception() is None and after.result()):
            return True
        self._stopped.set()
        return False

    def _export(self, records: list[ProvRecord]) -> bool:
        if not self._may_go_on():
            return False
        if self._exporter.export(records) is not ExportResult.SUCCESS:
            self._stopped.set()
            return False
        return True

    def _flush(self, flush_timeout: float) -> bool:
        if not (self._may_go_on() and all(part.result() for part in self._parts)):
            return False
        return self._exporter.force_flush(int(flush_timeout * 1000))
