"""``otel-prov annotate``: an evaluation added to a stored run, after the fact.

The run is found as ``show`` finds it (session IRI, trace id or conversation id) and must
be one run.  The evaluation is an annotation record of its own
(:func:`~otel_prov.prov._annotation.annotation_record`), sealed in a bundle of its own,
an entry of the writer's chain (checkpointed), so the run's own seal is untouched and
``verify`` checks both.  As :func:`~otel_prov.ingest._import.import_spans` does for spans,
this maps, seals and exports; the caller shuts the exporter down.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.prov._annotation import annotation_record
from otel_prov.prov._record import ProvRecord
from otel_prov.read._backend import QueryBackend
from otel_prov.read._reader import ProvenanceReader

__all__ = ["Annotated", "annotate_run", "store_entry"]


@dataclass(frozen=True)
class Annotated:
    """What :func:`annotate_run` wrote."""

    session: str
    """The IRI of the run judged."""
    annotation: str
    """The IRI of the annotation activity."""
    stored: bool
    """Whether the exporter stored it (flushed): ``False`` leaves it to the spool or the log."""


def annotate_run(
    ident: str,
    *,
    name: str,
    score: float | None,
    label: str | None,
    explanation: str | None,
    evaluator: str,
    exporter: ProvExporter,
    backend: QueryBackend,
    graph: str,
    now_ns: int,
    chain: ChainWriter,
) -> Annotated:
    """Annotate the run ``ident`` names, read through ``backend`` (what ``exporter``
    writes), in ``graph`` (an IRI term); the evaluation is judged of the run's answer when
    it has one.

    Raises ``LookupError`` when no run has that id and ``ValueError`` (naming them) when
    several do.
    """
    reader = ProvenanceReader(backend, graph=graph[1:-1])
    matches = reader.find(ident)
    if not matches:
        raise LookupError(ident)
    if len(matches) > 1:
        raise ValueError(
            f"{ident!r} names {len(matches)} runs; give one session IRI: " + ", ".join(matches)
        )
    view = reader.session(matches[0])
    answered = view.answered_by or view.id
    record = annotation_record(
        f"<{view.id}>",
        name=name,
        score=score,
        label=label,
        explanation=explanation,
        evaluator=evaluator,
        answer=f"<{answered}:answer>" if view.answer is not None else None,
        now_ns=now_ns,
    )
    stored = store_entry(record, exporter, chain, now_ns)
    return Annotated(session=view.id, annotation=record.root[1:-1], stored=stored)


def store_entry(
    record: ProvRecord, exporter: ProvExporter, chain: ChainWriter, now_ns: int
) -> bool:
    """Seal ``record`` as the next entry of ``chain``, export it, checkpoint the chain and
    flush: whether the exporter stored it all (``False`` leaves it to the spool or the log)."""
    sealed = chain.sealer.seal(record, now_ns)
    return (
        exporter.export([sealed]) is ExportResult.SUCCESS
        and chain.checkpoint(exporter, now_ns)
        and exporter.force_flush()
    )
