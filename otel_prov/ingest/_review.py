"""``otel-prov review``: a reviewer's revision of a goal, hypothesis or decision of a
stored run, after the fact.

The revision is a record of its own (:func:`~otel_prov.prov._review.review_record`),
sealed as an annotation is, through the write pipeline: the run and the original are
untouched, and ``verify`` checks both.  Which run and node it revises is the caller's to
find (``otel-prov review`` reads them as ``show`` does): this only writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._review import Reviewed, review_record

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
    session: str,
    reviewed: Reviewed,
    *,
    reviewer: str,
    reviewer_name: str | None,
    text: str,
    confidence: float | None,
    reason: str | None,
    pipeline: WritePipeline,
    now_ns: int,
) -> Revised:
    """Revise ``reviewed`` (a node of the run ``session``, as the reader found it) through
    ``pipeline``; the caller shuts its exporter down.  Raises ``ValueError`` when
    ``confidence`` is no number from 0 to 1."""
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError(f"a confidence is a number from 0 to 1, not {confidence:g}")
    record = review_record(
        reviewed,
        reviewer=reviewer,
        reviewer_name=reviewer_name,
        text=text,
        confidence=confidence,
        reason=reason,
        now_ns=now_ns,
    )
    stored = pipeline.store(pipeline.seal_made([record], now_ns), now_ns)
    revision = next(t[0] for t in record.triples if t[1].endswith("wasRevisionOf>"))
    return Revised(session, reviewed.node[1:-1], revision[1:-1], stored)
