"""A run's spans streamed through the write pipeline as a process would record them, and
what a store would hold after: for the tests that a streamed run ends up exactly as the
same run sealed at its end (issue 39)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field

from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.processing._blobs import BlobStore
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.processing._pipeline import OpenRun, WritePipeline
from otel_prov.processing._preparer import RecordPreparer
from otel_prov.prov._rdf import Triple
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._span_tree import SpanTree
from otel_prov.prov._vocab import O

__all__ = ["MemoryStore", "pipeline_for", "sealed_at_end", "streamed", "without_bundles"]


@dataclass
class MemoryStore(ProvExporter):
    """A store as a set of triples, retractions applied as a store applies them."""

    triples: set[Triple] = field(default_factory=set)
    retracted: list[Triple] = field(default_factory=list)
    can_retract = True

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        for record in records:
            self.triples.difference_update(record.retracted)
            self.retracted.extend(record.retracted)
            self.triples.update(record.triples)
        return ExportResult.SUCCESS


def pipeline_for(store: MemoryStore, tmp: str) -> WritePipeline:
    """A streaming pipeline into ``store``, its blobs under ``tmp``."""
    return WritePipeline(
        store,
        chain=ChainWriter(signer=None),
        prepare=RecordPreparer(BlobStore(tmp), 1 << 30),
        stream=True,
    )


def _open(span: SpanRecord) -> SpanRecord:
    """``span`` as a snapshot taken while it ran."""
    return dataclasses.replace(span, end_ns=None, status="unset")


def streamed(
    spans: Sequence[SpanRecord],
    tmp: str,
    cycles: Sequence[int] | None = None,
    *,
    end: bool = True,
) -> MemoryStore:
    """What a store holds of ``spans`` (one trace, one outermost session) recorded in
    process with streaming on, then sealed at the run's end (unless not ``end``: its
    writer died): a cycle after each span ends, or after each group of ``cycles`` spans
    (in the order they ended), the spans still open then as snapshots."""
    store = MemoryStore()
    pipeline = pipeline_for(store, tmp)
    session = SpanTree(spans).root
    assert session is not None and session.role is Role.SESSION, session
    order = sorted(
        (s for s in spans if s is not session), key=lambda s: (s.end_ns or 0, s.start_ns)
    )
    ended: dict[int, SpanRecord] = {}
    taken = 0
    for size in cycles or [1] * len(order):
        new = order[taken : taken + size]
        taken += size
        if not new:
            break
        ended.update((s.span_id, s) for s in new)
        at = max(s.end_ns or 0 for s in new)
        running = {
            s.span_id: _open(s) for s in spans if s.span_id not in ended and s.start_ns <= at
        }
        run = OpenRun(session.span_id, [s.span_id for s in new], {**ended, **running})
        for record in pipeline.stream([run], at):
            store.export([record])
    if end:
        for record in pipeline.seal([list(spans)], session.end_ns or 0):
            store.export([record])
    return store


def sealed_at_end(spans: Sequence[SpanRecord], tmp: str) -> MemoryStore:
    store = MemoryStore()
    pipeline = pipeline_for(store, tmp)
    end = max(s.end_ns or 0 for s in spans)
    for record in pipeline.seal([list(spans)], end):
        store.export([record])
    return store


def without_bundles(triples: set[Triple]) -> set[Triple]:
    """``triples`` less every bundle's description (its entry in the chain included)."""
    bundles = {s for s, p, _ in triples if p == O.bundleOf}
    return {t for t in triples if t[0] not in bundles}
