"""Plans, their steps and postconditions, and evaluations, as the mapper writes them: what an
agent meant to do and how what it did was judged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from otel_prov import semconv as sc
from otel_prov.prov._conventions import (
    ANSWER_KEYS,
    TOOL_NAME_KEYS,
    tool_name_from_span_name,
)
from otel_prov.prov._iris import (
    activity_iri,
    agent_iri,
    entity_iri,
    evaluator_iri,
    tool_iri,
)
from otel_prov.prov._rdf import (
    Triple,
    boolean,
    datetime_from_ns,
    double,
    integer,
    literal,
)
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._span_tree import (
    SpanTree,
    first_text,
    recorded,
    session_agent_key,
    succeeded,
)
from otel_prov.prov._span_triples import SpanTriples
from otel_prov.prov._vocab import PP, RDF_TYPE, RDFS_LABEL, O, P

__all__ = [
    "evaluation_triples",
    "map_evaluations",
    "map_plan",
    "map_plan_association",
    "map_postconditions",
    "plan_step_iri",
    "within",
]


def within(at_ns: int, span: SpanRecord) -> int:
    """``at_ns`` moved inside ``span``'s interval (PROV constraint 34)."""
    at_ns = max(at_ns, span.start_ns)
    return min(at_ns, span.end_ns) if span.end_ns is not None else at_ns


def map_plan(span: SpanRecord, activity: str, tree: SpanTree, out: SpanTriples) -> None:
    """A ``prov:Plan`` generated when it was made, with its ordered P-Plan steps and what
    became of each (``oprov:stepOutcome``; none: the step was neither run nor marked)."""
    add = out.add
    plan = entity_iri(activity, "plan")
    out.entity(plan, P.Plan, None)
    add((plan, RDFS_LABEL, literal(span.name)))
    out.generated(plan, activity, span.end_ns if span.end_ns is not None else span.start_ns)
    steps = span.attributes.get(sc.OTEL_PROV_PLAN_STEPS, ())
    if isinstance(steps, str):
        steps = (steps,)
    outcomes = tree.step_outcomes(span)
    previous = None
    for number, text in enumerate(steps, start=1):
        step = entity_iri(plan, f"step-{number}")
        add((step, RDF_TYPE, PP.Step))
        add((step, RDFS_LABEL, literal(str(text))))
        add((step, PP.isStepOfPlan, plan))
        add((step, O.stepNumber, integer(number)))
        if previous is not None:
            add((step, PP.isPrecededBy, previous))
        if number in outcomes:
            add((step, O.stepOutcome, literal(outcomes[number])))
        previous = step


def plan_step_iri(attributes: Mapping[str, Any], plan: str, out: SpanTriples) -> str | None:
    number = attributes.get(sc.OTEL_PROV_PLAN_STEP)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        out.report(f"{sc.OTEL_PROV_PLAN_STEP} is {number!r}, not a step number; left out")
        return None
    return entity_iri(plan, f"step-{number}")


def map_plan_association(span: SpanRecord, activity: str, tree: SpanTree, out: SpanTriples) -> None:
    """An activity run for a plan step: its association ``prov:hadPlan`` the plan and
    names the step.  The agent is the tool for a tool call, else the session's agent."""
    plan = tree.plan(span.attributes)
    if plan is None:
        out.report(f"{sc.OTEL_PROV_PLAN_ID} names no plan of this trace; left out")
        return
    step = plan_step_iri(span.attributes, plan, out)
    if step is None:
        return
    association = entity_iri(activity, "association")
    add = out.add
    add((activity, P.qualifiedAssociation, association))
    add((association, RDF_TYPE, P.Association))
    add((association, P.hadPlan, plan))
    add((association, O.planStep, step))
    session = span if span.role is Role.SESSION else tree.enclosing(span, Role.SESSION)
    if span.role is Role.TOOL_CALL:
        name = first_text(span.attributes, TOOL_NAME_KEYS) or tool_name_from_span_name(span.name)
        add((association, P.agent, tool_iri(name)))
    elif session is not None and (key := session_agent_key(session)) is not None:
        add((association, P.agent, agent_iri(key)))


def map_postconditions(span: SpanRecord, activity: str, tree: SpanTree, out: SpanTriples) -> None:
    """Each postcondition checked while the span was current: an ``oprov:Postcondition``
    the span's activity generated, naming the plan step it was checked for."""
    events = [e for e in span.events if e.name == sc.POSTCONDITION_EVENT]
    add = out.add
    for index, event in enumerate(events, start=1):
        attributes = event.attributes
        name = attributes.get(sc.OTEL_PROV_POSTCONDITION_NAME)
        ok = attributes.get(sc.OTEL_PROV_POSTCONDITION_OK)
        if not isinstance(name, str) or not name or not isinstance(ok, bool):
            out.report(f"postcondition {index} has no name or no boolean ok; left out")
            continue
        entity = entity_iri(activity, f"postcondition-{index}")
        out.entity(entity, O.Postcondition, None)
        add((entity, RDFS_LABEL, literal(name)))
        add((entity, O.satisfied, boolean(ok)))
        detail = attributes.get(sc.OTEL_PROV_POSTCONDITION_DETAIL)
        if isinstance(detail, str):
            add((entity, O.detail, literal(detail)))
        out.generated(entity, activity, within(event.time_ns, span))
        # Checked for the step running then, else for the step the span itself runs.
        named = attributes if sc.OTEL_PROV_PLAN_ID in attributes else span.attributes
        plan = tree.plan(named)
        if plan is not None and (step := plan_step_iri(named, plan, out)) is not None:
            add((entity, O.planStep, step))


def map_evaluations(span: SpanRecord, activity: str, tree: SpanTree, out: SpanTriples) -> None:
    """Each ``gen_ai.evaluation.result`` event of the span: an ``oprov:Evaluation`` of
    the span's activity, or of the span whose ``gen_ai.response.id`` it names.

    Generated by no activity of the trace: that is how the seal tells an evaluation made
    in the run (part of its content) from one added afterwards (``otel-prov annotate``,
    sealed on its own)."""
    events = [e for e in span.events if e.name == sc.GEN_AI_EVALUATION_RESULT]
    for index, event in enumerate(events, start=1):
        attributes = event.attributes
        name = attributes.get(sc.GEN_AI_EVALUATION_NAME)
        if not isinstance(name, str) or not name:
            out.report(f"evaluation event {index} has no {sc.GEN_AI_EVALUATION_NAME}; left out")
            continue
        target = tree.by_response_id.get(attributes.get(sc.GEN_AI_RESPONSE_ID), span)
        evaluated = activity_iri(target.trace_id, target.span_id)
        score = attributes.get(sc.GEN_AI_EVALUATION_SCORE_VALUE)
        if score is not None and not _finite_number(score):
            out.report(f"evaluation {name!r}: score {score!r} is not a number; left out")
            score = None
        evaluator = attributes.get(sc.OTEL_PROV_EVALUATION_EVALUATOR)
        out.triples.extend(
            evaluation_triples(
                entity_iri(activity, f"evaluation-{index}"),
                evaluated,
                name=name,
                score=None if score is None else float(score),
                label=_text_or_none(attributes.get(sc.GEN_AI_EVALUATION_SCORE_LABEL)),
                explanation=_text_or_none(attributes.get(sc.GEN_AI_EVALUATION_EXPLANATION)),
                evaluator=evaluator if isinstance(evaluator, str) and evaluator else name,
                derived_from=_evaluated_output(target, tree),
                at_ns=event.time_ns,
            )
        )


def evaluation_triples(
    entity: str,
    evaluated: str,
    *,
    name: str,
    score: float | None,
    label: str | None,
    explanation: str | None,
    evaluator: str,
    derived_from: str | None,
    at_ns: int,
) -> list[Triple]:
    """An ``oprov:Evaluation`` of the activity ``evaluated``, attributed to ``evaluator``
    (an ``oprov:Evaluator`` agent by that name) and derived from the output it judged."""
    agent = evaluator_iri(evaluator)
    triples = [
        (entity, RDF_TYPE, O.Evaluation),
        (entity, RDF_TYPE, P.Entity),
        (entity, O.evaluationName, literal(name)),
        (entity, O.evaluates, evaluated),
        (entity, P.wasAttributedTo, agent),
        (entity, P.generatedAtTime, datetime_from_ns(at_ns)),
        (agent, RDF_TYPE, O.Evaluator),
        (agent, RDF_TYPE, P.Agent),
        (agent, RDFS_LABEL, literal(evaluator)),
    ]
    if score is not None:
        triples.append((entity, O.score, double(score)))
    if label is not None:
        triples.append((entity, O.scoreLabel, literal(label)))
    if explanation is not None:
        triples.append((entity, O.explanation, literal(explanation)))
    if derived_from is not None:
        triples.append((entity, P.wasDerivedFrom, derived_from))
    return triples


def _finite_number(value: Any) -> bool:
    try:
        return not isinstance(value, bool) and math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _evaluated_output(span: SpanRecord, tree: SpanTree) -> str | None:
    """The entity an evaluation of ``span`` judged: a session's answer, a successful tool
    call's observation, an inferred step's thought for its model call."""
    activity = activity_iri(span.trace_id, span.span_id)
    answered = recorded(span.attributes, sc.OTEL_PROV_ANSWER) or any(
        span.attributes.get(key) is not None for key in ANSWER_KEYS
    )
    if span.role is Role.SESSION and answered:
        return entity_iri(activity, "answer")
    if span.role is Role.TOOL_CALL and succeeded(span):
        return entity_iri(activity, "observation")
    step = tree.opened_step(span)
    if step is not None and step.thought is not None:
        return entity_iri(entity_iri(activity, "step"), "thought")
    return None
