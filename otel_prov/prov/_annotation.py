"""An evaluation added to a run after it was sealed (``otel-prov annotate``).

The run's bundle hashes the run as it was recorded; an evaluation made later must not
change that content, or ``verify`` would call the run altered.  So an annotation is an
activity of its own (``oprov:Annotation``) that generated the ``oprov:Evaluation``, was
associated with the evaluator, and is described by a ``prov:Bundle`` of its own, an
entry of the writer's chain (the Sealer adds it), so a removed annotation leaves a gap
that ``verify`` reports.  Pure: the caller gives the time and the evaluated answer.
"""

from __future__ import annotations

import hashlib
import json

from otel_prov.prov._bundle import bundle_triples, session_content
from otel_prov.prov._iris import entity_iri, evaluator_iri
from otel_prov.prov._mapper import evaluation_triples
from otel_prov.prov._rdf import RDF_TYPE, datetime_from_ns, literal
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._vocab import RDFS_LABEL, O, P

__all__ = ["annotation_record"]


def annotation_record(
    session: str,
    *,
    name: str,
    score: float | None,
    label: str | None,
    explanation: str | None,
    evaluator: str,
    answer: str | None,
    now_ns: int,
) -> ProvRecord:
    """The sealed (not yet chained) record of one evaluation of ``session`` (an IRI term
    of a stored run), derived from ``answer`` (the IRI term of the entity judged)."""
    trace, span = session[1:-1].split(":")[2:4]
    key = json.dumps([session, name, score, label, explanation, evaluator, now_ns])
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    annotation = f"<urn:otel-prov:{trace}:annotation-{digest}>"
    evaluation = entity_iri(annotation, "evaluation")
    agent = evaluator_iri(evaluator)
    at = datetime_from_ns(now_ns)
    triples = [
        (annotation, RDF_TYPE, O.Annotation),
        (annotation, RDF_TYPE, P.Activity),
        (annotation, RDFS_LABEL, literal(f"annotate {name}")),
        (annotation, P.startedAtTime, at),
        (annotation, P.endedAtTime, at),
        (annotation, P.wasAssociatedWith, agent),
        # Joined to the span of the run it judges, as every activity is to its span.
        (annotation, O.traceId, literal(trace)),
        (annotation, O.spanId, literal(span)),
        (annotation, O.status, literal("ok")),
        *evaluation_triples(
            evaluation,
            session,
            name=name,
            score=score,
            label=label,
            explanation=explanation,
            evaluator=evaluator,
            derived_from=answer,
            at_ns=now_ns,
        ),
        (evaluation, P.wasGeneratedBy, annotation),
    ]
    content = session_content(triples, annotation)
    triples += bundle_triples(annotation, now_ns, content)
    return ProvRecord(trace_id=trace, root=annotation, triples=tuple(triples))
