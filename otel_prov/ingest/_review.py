"""``otel-prov review``: a reviewer's revision of a goal, hypothesis or decision of a
stored run, after the fact.

The run is found as ``show`` finds it and must be one run; the node by its id in the
run (``d1``) or its IRI.  The revision is a record of its own
(:func:`~otel_prov.prov._review.review_record`), sealed as an annotation is: the run and
the original are untouched, and ``verify`` checks both.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.exporters._base import ProvExporter
from otel_prov.ingest._annotate import store_entry
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.prov._review import review_record
from otel_prov.read._backend import QueryBackend
from otel_prov.read._decisions import find_reasoning
from otel_prov.read._reader import ProvenanceReader

__all__ = ["Revised", "review_node"]


@dataclass(frozen=True)
class Revised:
    """What :func:`review_node` wrote."""

    session: str
    original: str
    """The IRI of the node revised (as the run recorded it)."""
    revision: str
    """The IRI of the revision."""
    stored: bool


def review_node(
    ident: str,
    node: str,
    *,
    reviewer: str,
    reviewer_name: str | None,
    text: str,
    confidence: float | None,
    reason: str | None,
    exporter: ProvExporter,
    backend: QueryBackend,
    graph: str,
    now_ns: int,
    chain: ChainWriter,
) -> Revised:
    """Revise ``node`` of the run ``ident`` names, read through ``backend`` (what
    ``exporter`` writes), in ``graph`` (an IRI term).

    Raises ``LookupError`` when no run has that id, or the run no such node (the message
    says which), and ``ValueError`` when ``ident`` names several runs or ``confidence``
    is no number from 0 to 1."""
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError(f"a confidence is a number from 0 to 1, not {confidence:g}")
    reader = ProvenanceReader(backend, graph=graph[1:-1])
    matches = reader.find(ident)
    if not matches:
        raise LookupError(ident)
    if len(matches) > 1:
        raise ValueError(
            f"{ident!r} names {len(matches)} runs; give one session IRI: " + ", ".join(matches)
        )
    reviewed = find_reasoning(backend, graph, matches[0], node)
    if reviewed is None:
        raise LookupError(f"run {matches[0]} has no goal, hypothesis or decision {node!r}")
    record = review_record(
        reviewed,
        reviewer=reviewer,
        reviewer_name=reviewer_name,
        text=text,
        confidence=confidence,
        reason=reason,
        now_ns=now_ns,
    )
    stored = store_entry(record, exporter, chain, now_ns)
    revision = next(t[0] for t in record.triples if t[1].endswith("wasRevisionOf>"))
    return Revised(matches[0], reviewed.node[1:-1], revision[1:-1], stored)
