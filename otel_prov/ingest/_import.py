"""``otel-prov import``: spans read from files into provenance, as if recorded live.

The spans (from :mod:`otel_prov.prov._otlp_json`) are prepared as the span processor prepares
them (:class:`~otel_prov.processing._preparer.RecordPreparer`: redaction, then big values to the
blob store), grouped by trace, and each trace is mapped once, through the write pipeline
every writer shares (:class:`~otel_prov.processing._pipeline.WritePipeline`): every
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
and stored content prime the sealer instead (``WritePipeline.continue_stored``): spans
imported again add nothing, spans new to it (the rest of its trace, from a later file)
give it a revised bundle, as late spans do live; a run the store holds streamed and still
open (its writer stopped) gets its final entry.  Import a trace's spans in one run where you can:
a file with only part of an already imported session restates the session's own facts
(its count of failed calls, say) from the part it holds, and the revision records both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from otel_prov.exporters._stored import StoredRuns
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._iris import trace_hex
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import Role, SpanRecord, is_remote_root
from otel_prov.prov._vocab import P

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
    """Sessions of these traces the destination held sealed before (a run it held streamed
    and still open is sealed now, and counts as sealed here)."""
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
    pipeline: WritePipeline,
    stored: StoredRuns,
    now_ns: int,
    export: Callable[[list[ProvRecord]], bool] | None = None,
    export_batch: int = _EXPORT_BATCH,
    prepared: bool = False,
    stand_ins: Iterable[SpanRecord] = (),
) -> ImportSummary:
    """Map, seal and export ``spans`` through ``pipeline``; ``stored`` reads what its
    exporter's store holds (``exporters._stored``), to go on from there.

    ``now_ns`` is the time revised bundles are generated at.  Of two copies of one span,
    an ended one wins over one that never ended, else the later.  The caller checkpoints
    the pipeline's chain, flushes and shuts the exporter down.  ``export`` stores a batch
    of records (default: the pipeline's exporter), ``export_batch`` records at a time:
    the embedded store ingests one large batch several times faster than many small
    ones.  ``prepared``: the spans were made what the mapper may see already (the
    receiver prepares them as they come).  ``stand_ins`` stand for spans that never came
    (``prov._stream.cut_off_run``: a run the session timeout cut off): each is mapped
    with its trace unless its own span is among ``spans``.
    """
    send = export if export is not None else pipeline.export_batch
    traces: dict[int, dict[int, SpanRecord]] = {}
    for span in spans:
        copies = traces.setdefault(span.trace_id, {})
        known = copies.get(span.span_id)
        if known is None or known.end_ns is None or span.end_ns is not None:
            copies[span.span_id] = span
    for span in stand_ins:
        traces.setdefault(span.trace_id, {}).setdefault(span.span_id, span)
    held = stored.sessions([trace_hex(t) for t in traces])
    summary = ImportSummary()
    batch: list[ProvRecord] = []
    for trace_id, group in sorted(
        traces.items(), key=lambda item: (min(s.start_ns for s in item[1].values()), item[0])
    ):
        known_sessions = held.get(trace_hex(trace_id), [])
        if not known_sessions and not any(
            s.role is Role.SESSION or is_remote_root(s) for s in group.values()
        ):
            summary.left_out_traces += 1
            summary.left_out_spans += len(group)
            continue
        pipeline.continue_stored(known_sessions, stored)
        records = pipeline.seal(
            [list(group.values()) if prepared else [pipeline.prepare(s) for s in group.values()]],
            now_ns,
        )
        summary.traces += 1
        summary.sessions += _outermost_sessions(group)
        # A run stored streamed and open is sealed whole now: its final entry, no revision.
        streamed = sum(1 for session in known_sessions if session.streamed)
        summary.already_stored += len(known_sessions) - streamed
        revisions = 0
        for sealed in records:
            summary.spans += sealed.span_count
            revisions += sum(1 for _, p, _ in sealed.triples if p == P.wasRevisionOf)
            summary.warnings.extend(f"trace {sealed.trace_id}: {p}" for p in sealed.problems)
            batch.append(sealed)
        summary.revised += max(0, revisions - streamed)
        if len(batch) >= export_batch:
            summary.not_stored += 0 if send(batch) else len(batch)
            batch = []
    if batch:
        summary.not_stored += 0 if send(batch) else len(batch)
    return summary


def _outermost_sessions(spans: dict[int, SpanRecord]) -> int:
    """The sessions among ``spans`` (by id) with no session above them there."""
    count = 0
    for span in spans.values():
        if span.role is not Role.SESSION:
            continue
        seen = {span.span_id}
        parent = spans.get(span.parent_id) if span.parent_id is not None else None
        while parent is not None and parent.role is not Role.SESSION and parent.span_id not in seen:
            seen.add(parent.span_id)
            parent = spans.get(parent.parent_id) if parent.parent_id is not None else None
        count += parent is None or parent.role is not Role.SESSION
    return count
