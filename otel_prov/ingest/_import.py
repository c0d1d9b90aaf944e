"""``otel-prov import``: spans read from files into provenance, as if recorded live.

The spans (from :mod:`otel_prov.prov._otlp_json`) are prepared as the span processor prepares
them (:class:`~otel_prov.processing._processor.RecordPreparer`: redaction, then big values to the
blob store), grouped by trace, and each trace is mapped once with ``map_spans``: every
outermost session in it gets its bundle, sub-sessions nest as they do live.  A span
without an end time is mapped ``incomplete``.  A trace without an agent session, or a
tool call whose parent is remote (OTLP ``flags``: an MCP server's trace file), is not
provenance and is left out, as the processor leaves it out, unless the destination
already holds a session of that trace: then its spans join that session, as spans that
end after their session do live.  Sessions are sealed in the order their traces
started, continuing each agent's bundle chain from the newest bundle stored.

Importing is idempotent.  The IRIs are deterministic, so the same spans give the same
triples; and a session the destination already holds sealed is not sealed again, which
would give its bundle a second link in its agent's chain (a fork).  Its newest bundle
and stored content prime the :class:`~otel_prov.prov._sealer.Sealer` instead: spans imported
again add nothing, spans new to it (the rest of its trace, from a later file) give it a
revised bundle, as late spans do live.  Import a trace's spans in one run where you can:
a file with only part of an already imported session restates the session's own facts
(its count of failed calls, say) from the part it holds, and the revision records both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.prov._bundle import bundles_in
from otel_prov.prov._iris import trace_hex
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._prices import PriceTable
from otel_prov.prov._rdf import iri
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._span_record import Role, SpanRecord, is_remote_root
from otel_prov.prov._vocab import P
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sealed import sealed_sessions
from otel_prov.read._verify import stored_content

__all__ = ["ImportSummary", "import_spans"]

_EXPORT_BATCH = 64
"""Records per ``export`` call, as the processor sends them."""


@dataclass
class ImportSummary:
    """What an import did; ``spans``, ``traces`` and ``sessions`` count what was written."""

    spans: int = 0
    traces: int = 0
    sessions: int = 0
    """Outermost sessions among the spans imported."""
    already_stored: int = 0
    """Sessions of these traces the destination held sealed before."""
    revised: int = 0
    """Of those, the ones whose content the import changed (they got a revised bundle)."""
    left_out_spans: int = 0
    left_out_traces: int = 0
    """Traces without an agent session: not provenance."""
    not_stored: int = 0
    """Records the exporter reported as not stored."""
    warnings: list[str] = field(default_factory=list)
    """What the mapper could convert only partly (the rest of each span is stored)."""


def import_spans(
    spans: Iterable[SpanRecord],
    *,
    exporter: ProvExporter,
    backend: QueryBackend,
    graph: str,
    prepare: Callable[[SpanRecord], SpanRecord],
    now_ns: int,
    sealer: Sealer,
    export_batch: int = _EXPORT_BATCH,
    prices: PriceTable | None = None,
    stand_ins: Iterable[SpanRecord] = (),
) -> ImportSummary:
    """Map, seal and export ``spans``; ``backend`` reads the destination ``exporter`` writes.

    ``graph`` is the provenance graph (an IRI term), ``now_ns`` the time revised bundles
    are generated at.  Of two copies of one span, an ended one wins over one that never
    ended, else the later.  The caller flushes and shuts the exporter down.  ``sealer``
    is the writer's (``ChainWriter.sealer``): every bundle is the next entry of its chain,
    and the caller checkpoints it.  ``export_batch`` records go to each
    ``export`` call: the embedded store ingests one large batch several times faster than
    many small ones.  ``prices`` prices model calls that report no cost (see ``map_spans``).
    ``stand_ins`` stand for spans that never came (``prov._stream.cut_off_run``: a run the
    session timeout cut off): each is mapped with its trace unless its own span is among
    ``spans``.
    """
    traces: dict[int, dict[int, SpanRecord]] = {}
    for span in spans:
        copies = traces.setdefault(span.trace_id, {})
        known = copies.get(span.span_id)
        if known is None or known.end_ns is None or span.end_ns is not None:
            copies[span.span_id] = span
    for span in stand_ins:
        traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
    stored = sealed_sessions(backend, graph, [trace_hex(t) for t in traces])
    summary = ImportSummary()
    batch: list[ProvRecord] = []
    for trace_id, group in sorted(
        traces.items(), key=lambda item: (min(s.start_ns for s in item[1].values()), item[0])
    ):
        known_sessions = stored.get(trace_hex(trace_id), [])
        if not known_sessions and not any(
            s.role is Role.SESSION or is_remote_root(s) for s in group.values()
        ):
            summary.left_out_traces += 1
            summary.left_out_spans += len(group)
            continue
        record = map_spans([prepare(span) for span in group.values()], prices=prices)
        for session, bundle, revision in known_sessions:
            content = stored_content(backend, graph, session, bundle)
            sealer.continue_session(iri(session), iri(bundle), revision, content)
        sealed = sealer.seal(record, now_ns)
        summary.spans += record.span_count
        summary.traces += 1
        summary.sessions += len(bundles_in(record.triples))
        summary.already_stored += len(known_sessions)
        summary.revised += sum(1 for _, p, _ in sealed.triples if p == P.wasRevisionOf)
        summary.warnings.extend(f"trace {record.trace_id}: {p}" for p in record.problems)
        batch.append(sealed)
        if len(batch) == export_batch:
            summary.not_stored += _export(exporter, batch)
            batch = []
    if batch:
        summary.not_stored += _export(exporter, batch)
    return summary


def _export(exporter: ProvExporter, records: list[ProvRecord]) -> int:
    """How many of ``records`` were not stored."""
    return 0 if exporter.export(records) is ExportResult.SUCCESS else len(records)
