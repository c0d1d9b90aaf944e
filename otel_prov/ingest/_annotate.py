"""``otel-prov annotate``: an evaluation added to a stored run, after the fact.

The evaluation is an annotation record of its own
(:func:`~otel_prov.prov._annotation.annotation_record`), sealed in a bundle of its own
through the write pipeline, an entry of the writer's chain (checkpointed), so the run's
own seal is untouched and ``verify`` checks both.  Which run it judges is the caller's to
find (``otel-prov annotate`` reads it as ``show`` does): this only writes.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._annotation import annotation_record

__all__ = ["Annotated", "annotate_run"]


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
    session: str,
    *,
    answer: str | None,
    name: str,
    score: float | None,
    label: str | None,
    explanation: str | None,
    evaluator: str,
    pipeline: WritePipeline,
    now_ns: int,
) -> Annotated:
    """Annotate the run ``session`` (a plain IRI), judging its ``answer`` (a plain IRI)
    when it has one, through ``pipeline``; the caller shuts its exporter down."""
    record = annotation_record(
        f"<{session}>",
        name=name,
        score=score,
        label=label,
        explanation=explanation,
        evaluator=evaluator,
        answer=f"<{answer}>" if answer is not None else None,
        now_ns=now_ns,
    )
    stored = pipeline.store(pipeline.seal_made([record], now_ns), now_ns)
    return Annotated(session=session, annotation=record.root[1:-1], stored=stored)
