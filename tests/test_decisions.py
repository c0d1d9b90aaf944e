"""Reasoning as provenance: goals, hypotheses, evidence for and against, decisions.

The capture API records events (and never raises into the agent); the mapper, a pure
function, makes them entities of the step that formed them, evidence qualified
derivations of what it rests on (influences when that came later), a goal a plan the
session follows; bad input is recorded as far as it goes and reported once.
"""

from __future__ import annotations

import json
import logging
import random
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov import semconv as sc
from otel_prov.capture import _decisions
from otel_prov.prov._iris import activity_iri, agent_iri, entity_iri
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import double, literal
from otel_prov.prov._reasoning import structured_reasoning
from otel_prov.prov._span_record import SpanEvent, SpanRecord, record_from_span
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.builders import T0, TRACE, make_span

SESSION, STEP_1, CALL, STEP_2 = (activity_iri(TRACE, n) for n in (1, 2, 3, 4))


def _event(name: str, at_ms: float, **attributes: Any) -> SpanEvent:
    attrs = {key.replace("__", "."): value for key, value in attributes.items()}
    return SpanEvent(name, T0 + int(at_ms * 1_000_000), attrs)


def _run(
    *step_2: SpanEvent, step_1: tuple[SpanEvent, ...] = (), call_status: str = "ok"
) -> list[SpanRecord]:
    """A session: step 1 states reasoning and calls ``track`` (call id ``call_1``, ends at
    4 ms); step 2 (from 5 ms) weighs it."""
    return [
        make_span(1, name="invoke_agent refunds", end_ms=20, gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="refunds", otel_prov__answer="No refund."),
        make_span(2, 1, name="iteration 1", start_ms=1, end_ms=4.5, events=step_1,
                  otel_prov__iteration__number=1),
        make_span(3, 2, name="execute_tool track", start_ms=2, end_ms=4, status=call_status,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="track",
                  gen_ai__tool__call__id="call_1", otel_prov__observation="delivered"),
        make_span(4, 1, name="iteration 2", start_ms=5, end_ms=10, events=step_2,
                  otel_prov__iteration__number=2),
    ]  # fmt: skip


H1 = _event(
    sc.HYPOTHESIS_EVENT,
    1.5,
    otel_prov__reasoning__id="h1",
    otel_prov__reasoning__text="lost in transit",
    otel_prov__reasoning__confidence=0.4,
)
D1 = _event(
    sc.DECISION_EVENT,
    6,
    otel_prov__reasoning__id="d1",
    otel_prov__reasoning__text="refuse",
    otel_prov__decision__adopts=("h1",),
    otel_prov__reasoning__confidence=0.8,
)
HYPOTHESIS = entity_iri(STEP_1, "hypothesis-1")
DECISION = entity_iri(STEP_2, "decision-1")
OBSERVATION = entity_iri(CALL, "observation")


def _evidence(at_ms: float, **attributes: Any) -> SpanEvent:
    return _event(sc.EVIDENCE_EVENT, at_ms, **attributes)


def test_hypotheses_and_decisions_are_entities_of_the_step_that_formed_them() -> None:
    record = map_spans(_run(D1, step_1=(H1,)))
    triples = set(record.triples)
    assert {
        (HYPOTHESIS, RDF_TYPE, O.Hypothesis),
        (HYPOTHESIS, RDF_TYPE, P.Entity),
        (HYPOTHESIS, P.wasGeneratedBy, STEP_1),
        (HYPOTHESIS, O.reasoningId, literal("h1")),
        (HYPOTHESIS, P.value, literal("lost in transit")),
        (HYPOTHESIS, O.confidence, double(0.4)),
        (DECISION, RDF_TYPE, O.Decision),
        (DECISION, P.wasGeneratedBy, STEP_2),
        (DECISION, P.wasDerivedFrom, HYPOTHESIS),  # it adopts h1
        (DECISION, P.qualifiedDerivation, entity_iri(DECISION, "adopts-1")),
        (entity_iri(DECISION, "adopts-1"), RDF_TYPE, O.Adoption),
        (entity_iri(DECISION, "adopts-1"), P.entity, HYPOTHESIS),
        (entity_iri(SESSION, "answer"), P.wasDerivedFrom, DECISION),  # the answer rests on it
    } <= triples
    assert record.problems == ()


def test_evidence_there_before_the_claim_is_a_derivation_and_after_it_an_influence() -> None:
    """Evidence for the decision (stated at 6 ms) resting on what the call returned (at
    4 ms) is a qualified derivation; for the hypothesis (stated at 1.5 ms) the same result
    came after it: a qualified influence, since nothing derives from what did not exist."""
    for_decision = _evidence(
        7,
        otel_prov__evidence__supports="d1",
        otel_prov__evidence__tool_call__id="call_1",
        otel_prov__evidence__weight=0.9,
    )
    against_h1 = _evidence(
        7.5,
        otel_prov__evidence__contradicts="h1",
        otel_prov__evidence__tool_call__id="call_1",
        otel_prov__evidence__weight=0.6,
    )
    triples = set(map_spans(_run(D1, for_decision, against_h1, step_1=(H1,))).triples)
    derived, influenced = entity_iri(STEP_2, "evidence-1"), entity_iri(STEP_2, "evidence-2")
    assert {
        (DECISION, P.wasDerivedFrom, OBSERVATION),
        (DECISION, P.qualifiedDerivation, derived),
        (derived, RDF_TYPE, P.Derivation),
        (derived, RDF_TYPE, O.SupportingEvidence),
        (derived, P.entity, OBSERVATION),
        (derived, O.weight, double(0.9)),
        (HYPOTHESIS, P.wasInfluencedBy, OBSERVATION),
        (HYPOTHESIS, P.qualifiedInfluence, influenced),
        (influenced, RDF_TYPE, P.Influence),
        (influenced, RDF_TYPE, O.ContradictingEvidence),
        (influenced, O.weight, double(0.6)),
    } <= triples
    assert (HYPOTHESIS, P.wasDerivedFrom, OBSERVATION) not in triples


def test_evidence_rests_on_a_retrieved_document_and_on_an_earlier_hypothesis_by_their_ids() -> None:
    retrieval = make_span(
        5, 2, name="retrieval policies", start_ms=1.6, end_ms=1.9,
        gen_ai__operation__name="retrieval",
        otel_prov__retrieval__document__id__0="policy-4",
        otel_prov__retrieval__document__content__0="Refund only lost parcels.",
    )  # fmt: skip
    by_document = _evidence(
        7, otel_prov__evidence__supports="d1", otel_prov__evidence__document__id="policy-4"
    )
    by_hypothesis = _evidence(
        8, otel_prov__evidence__contradicts="d1", otel_prov__evidence__hypothesis__id="h1"
    )
    record = map_spans([*_run(D1, by_document, by_hypothesis, step_1=(H1,)), retrieval])
    triples = set(record.triples)
    document = entity_iri(activity_iri(TRACE, 5), "document-1")
    assert (entity_iri(STEP_2, "evidence-1"), P.entity, document) in triples
    assert (entity_iri(STEP_2, "evidence-2"), P.entity, HYPOTHESIS) in triples
    assert (entity_iri(STEP_2, "evidence-2"), RDF_TYPE, O.ContradictingEvidence) in triples
    assert {
        (DECISION, P.wasDerivedFrom, document),
        (DECISION, P.wasDerivedFrom, HYPOTHESIS),
    } <= triples
    assert record.problems == ()


@pytest.mark.parametrize(
    ("named", "reference", "problem"),
    [
        (
            {"otel_prov__evidence__tool_call__id": "call_9"},
            "tool_call:call_9",
            "no tool call 'call_9'",
        ),
        ({"otel_prov__evidence__document__id": "doc-x"}, "document:doc-x", "no retrieved document"),
        ({"otel_prov__evidence__hypothesis__id": "h9"}, "hypothesis:h9", "no hypothesis 'h9'"),
        ({}, "none", "names nothing it rests on"),
    ],
)
def test_evidence_naming_what_the_run_does_not_have_is_kept_and_reported_once(
    named: dict[str, str], reference: str, problem: str
) -> None:
    record = map_spans(
        _run(D1, _evidence(7, otel_prov__evidence__contradicts="d1", **named), step_1=(H1,))
    )
    triples = set(record.triples)
    node = entity_iri(STEP_2, "evidence-1")
    assert {
        (DECISION, P.qualifiedInfluence, node),
        (node, RDF_TYPE, O.ContradictingEvidence),
        (node, O.unresolvedReference, literal(reference)),
    } <= triples
    assert not any(s == node and p == P.entity for s, p, _ in triples)
    assert [m for m in record.problems if problem in m] == list(record.problems)
    assert len(record.problems) == 1


def test_evidence_on_a_failed_call_rests_on_nothing_it_returned() -> None:
    evidence = _evidence(
        7, otel_prov__evidence__supports="d1", otel_prov__evidence__tool_call__id="call_1"
    )
    record = map_spans(_run(D1, evidence, step_1=(H1,), call_status="error"))
    (problem,) = record.problems
    assert "returned nothing to rest on" in problem
    assert (
        entity_iri(STEP_2, "evidence-1"),
        O.unresolvedReference,
        literal("tool_call:call_1"),
    ) in record.triples


def test_evidence_for_a_claim_never_stated_keeps_a_stand_in_for_it() -> None:
    evidence = _evidence(
        7, otel_prov__evidence__supports="h7", otel_prov__evidence__tool_call__id="call_1"
    )
    record = map_spans(_run(evidence))
    stand_in = entity_iri(entity_iri(STEP_2, "evidence-1"), "claim")
    triples = set(record.triples)
    assert {
        (stand_in, RDF_TYPE, P.Entity),
        (stand_in, P.wasGeneratedBy, STEP_2),
        (stand_in, O.unresolvedReference, literal("claim:h7")),
        (stand_in, P.wasDerivedFrom, OBSERVATION),
    } <= triples
    (problem,) = record.problems
    assert "no hypothesis or decision 'h7'" in problem


@pytest.mark.parametrize("weight", [1.7, -0.1, "heavy", float("nan"), True])
def test_a_weight_out_of_range_is_left_out_and_reported_once(weight: object) -> None:
    evidence = _evidence(
        7,
        otel_prov__evidence__supports="d1",
        otel_prov__evidence__tool_call__id="call_1",
        otel_prov__evidence__weight=weight,
    )
    record = map_spans(_run(D1, evidence, step_1=(H1,)))
    node = entity_iri(STEP_2, "evidence-1")
    assert (node, P.entity, OBSERVATION) in record.triples  # the evidence itself is kept
    assert not any(s == node and p == O.weight for s, p, _ in record.triples)
    (problem,) = record.problems
    assert "weight" in problem and "not a number from 0 to 1" in problem


def test_a_confidence_out_of_range_is_left_out_and_reported() -> None:
    bad = _event(
        sc.HYPOTHESIS_EVENT,
        1.5,
        otel_prov__reasoning__id="h1",
        otel_prov__reasoning__confidence=4.0,
    )
    record = map_spans(_run(step_1=(bad,)))
    assert not any(p == O.confidence for _, p, _ in record.triples)
    assert [m for m in record.problems if "confidence 4.0" in m] == list(record.problems) != []


def test_a_decision_in_no_session_is_kept_on_its_span_and_reported() -> None:
    lone = make_span(9, name="POST /refunds", end_ms=3, events=(D1,))
    record = map_spans([lone])
    decision = entity_iri(activity_iri(TRACE, 9), "decision-1")
    assert (decision, P.wasGeneratedBy, activity_iri(TRACE, 9)) in record.triples
    assert (decision, RDF_TYPE, O.Decision) in record.triples
    (problem,) = [m for m in record.problems if "no agent session" in m]
    assert "decision 'd1' is recorded in no agent session" in problem


def test_the_same_id_stated_again_is_a_revision_and_evidence_names_the_version_of_its_time() -> (
    None
):
    again = _event(
        sc.HYPOTHESIS_EVENT, 6, otel_prov__reasoning__id="h1", otel_prov__reasoning__confidence=0.1
    )
    evidence = _evidence(
        7, otel_prov__evidence__contradicts="h1", otel_prov__evidence__tool_call__id="call_1"
    )
    triples = set(map_spans(_run(again, evidence, step_1=(H1,))).triples)
    revised = entity_iri(STEP_2, "hypothesis-1")
    assert {
        (revised, P.wasRevisionOf, HYPOTHESIS),
        (revised, P.wasDerivedFrom, HYPOTHESIS),
    } <= triples
    assert (revised, P.qualifiedDerivation, entity_iri(STEP_2, "evidence-1")) in triples


def test_a_goal_is_a_plan_the_session_follows_and_a_sub_goal_derives_from_it() -> None:
    goal = _event(
        sc.GOAL_EVENT, 1.2, otel_prov__reasoning__id="g1", otel_prov__reasoning__text="settle it"
    )
    sub = _event(sc.GOAL_EVENT, 1.3, otel_prov__reasoning__id="g2", otel_prov__reasoning__goal="g1")
    serving = _event(
        sc.HYPOTHESIS_EVENT, 1.4, otel_prov__reasoning__id="h1", otel_prov__reasoning__goal="g2"
    )
    triples = set(map_spans(_run(step_1=(goal, sub, serving))).triples)
    g1, g2 = entity_iri(STEP_1, "goal-1"), entity_iri(STEP_1, "goal-2")
    association = entity_iri(g1, "association")
    assert {
        (g1, RDF_TYPE, O.Goal),
        (g1, RDF_TYPE, P.Plan),
        (g1, RDF_TYPE, P.Entity),
        (SESSION, P.qualifiedAssociation, association),
        (association, P.hadPlan, g1),
        (association, P.agent, agent_iri("refunds")),
        (g2, O.subGoalOf, g1),
        (g2, P.wasDerivedFrom, g1),
        (entity_iri(STEP_1, "hypothesis-1"), O.forGoal, g2),
    } <= triples


def test_the_mapping_is_the_same_whatever_order_the_spans_come_in() -> None:
    evidence = _evidence(
        7, otel_prov__evidence__supports="d1", otel_prov__evidence__tool_call__id="call_1"
    )
    spans = _run(D1, evidence, step_1=(H1,))
    expected = map_spans(spans)
    for seed in range(5):
        shuffled = spans[:]
        random.Random(seed).shuffle(shuffled)
        again = map_spans(shuffled)
        assert set(again.triples) == set(expected.triples) and again.problems == expected.problems


# --- the capture API ------------------------------------------------------------------
def _reasoning_events(exporter: InMemorySpanExporter) -> list[tuple[str, str, dict[str, Any]]]:
    spans: list[ReadableSpan] = list(exporter.get_finished_spans())
    return [
        (span.name, event.name, dict(event.attributes or {}))
        for span in spans
        for event in span.events
        if event.name in sc.REASONING_EVENTS
    ]


def test_the_api_records_events_on_the_current_span_and_returns_the_ids(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    with (
        otel_prov.agent_session("refunds", tracer_provider=provider),
        otel_prov.iteration(1, tracer_provider=provider),
    ):
        assert otel_prov.goal("settle", id="g1") == "g1"
        made = otel_prov.hypothesis("lost", confidence=1, goal="g1")
        otel_prov.evidence(tool_call="call_1", contradicts=made, weight=0.5)
        assert otel_prov.decision("refuse", id="d1", adopts=[made]) == "d1"
    events = _reasoning_events(exporter)
    assert [(span, name) for span, name, _ in events] == [
        ("iteration 1", sc.GOAL_EVENT),
        ("iteration 1", sc.HYPOTHESIS_EVENT),
        ("iteration 1", sc.EVIDENCE_EVENT),
        ("iteration 1", sc.DECISION_EVENT),
    ]
    hypothesis, evidence, decision = (attrs for _, _, attrs in events[1:])
    assert made.startswith("h-") and hypothesis[sc.OTEL_PROV_REASONING_ID] == made
    assert hypothesis[sc.OTEL_PROV_REASONING_CONFIDENCE] == 1.0
    assert evidence == {
        sc.OTEL_PROV_EVIDENCE_CONTRADICTS: made,
        sc.OTEL_PROV_EVIDENCE_TOOL_CALL_ID: "call_1",
        sc.OTEL_PROV_EVIDENCE_WEIGHT: 0.5,
    }
    assert decision[sc.OTEL_PROV_DECISION_ADOPTS] == (made,)


def test_with_content_off_the_text_is_withheld_and_the_structure_kept(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    provider, exporter = memory_provider
    with otel_prov.agent_session("refunds", tracer_provider=provider):
        otel_prov.decision("refuse the refund", id="d1", confidence=0.8)
    ((_, _, attrs),) = _reasoning_events(exporter)
    assert sc.OTEL_PROV_REASONING_TEXT not in attrs
    assert attrs[sc.OTEL_PROV_CONTENT_REASONING_SIZE] == len("refuse the refund")
    assert attrs[sc.OTEL_PROV_CONTENT_REASONING_SHA256].startswith("sha256:")
    record = map_spans([record_from_span(s) for s in exporter.get_finished_spans()])
    (decision,) = [s for s, p, o in record.triples if o == O.Decision]
    said = {p: o for s, p, o in record.triples if s == decision}
    assert P.value not in said and said[O.contentHash] == literal(
        attrs[sc.OTEL_PROV_CONTENT_REASONING_SHA256]
    )
    assert said[O.reasoningId] == literal("d1") and said[O.confidence] == double(0.8)


def test_bad_input_never_raises_into_the_agent_and_is_recorded_as_given(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider

    class Odd:
        def __str__(self) -> str:
            return "odd ✓ \u2028 thing"

    with otel_prov.agent_session("refunds", tracer_provider=provider):
        otel_prov.hypothesis(Odd(), id=Odd(), confidence="very")  # type: ignore[arg-type]
        otel_prov.evidence(supports="nope", tool_call="call_x", weight=float("inf"))
        otel_prov.decision({"refund": False}, id="d1", adopts="nope", confidence=-2)
    events = _reasoning_events(exporter)
    assert events[0][2][sc.OTEL_PROV_REASONING_CONFIDENCE] == "very"
    record = map_spans([record_from_span(s) for s in exporter.get_finished_spans()])
    assert json.loads(
        next(o for s, p, o in record.triples if p == P.value and "refund" in o)[1:-1].replace(
            '\\"', '"'
        )
    ) == {"refund": False}
    assert sum("confidence" in m for m in record.problems) == 2
    assert sum("weight" in m for m in record.problems) == 1
    assert sum("nope" in m for m in record.problems) == 2  # the claim and the adopted hypothesis


def test_reasoning_outside_any_span_is_kept_in_a_session_of_its_own_with_one_warning(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(_decisions, "_warned", threading.Event())
    provider, exporter = memory_provider
    with caplog.at_level(logging.WARNING, logger="otel_prov"):
        otel_prov.decision("refuse", id="d1", tracer_provider=provider)
        otel_prov.hypothesis("lost", id="h1", tracer_provider=provider)
    spans = list(exporter.get_finished_spans())
    assert [s.name for s in spans] == [f"invoke_agent {_decisions.UNATTACHED}"] * 2
    assert [r.message for r in caplog.records if "outside any span" in r.message] != []
    assert sum("outside any span" in r.message for r in caplog.records) == 1
    record = map_spans([record_from_span(spans[0])])
    assert any(o == O.Decision for _, _, o in record.triples)


def test_record_reasoning_takes_a_pydantic_model_a_dataclass_a_mapping_or_json(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    import dataclasses

    from tests.reasoning_schema import ANSWER

    @dataclasses.dataclass
    class Only:
        decision: str

    provider, exporter = memory_provider
    with otel_prov.agent_session("refunds", tracer_provider=provider):
        assert otel_prov.record_reasoning(ANSWER)
        assert otel_prov.record_reasoning(Only("refund"))
        assert otel_prov.record_reasoning({"hypotheses": ["lost"]})
        assert otel_prov.record_reasoning('{"decision": {"text": "refund", "id": "d9"}}')
        assert not otel_prov.record_reasoning("I decided to refund the order.")  # free text
        assert not otel_prov.record_reasoning({"reply": "Refunded."})  # another schema
        assert not otel_prov.record_reasoning(None)
    names = [name for _, name, _ in _reasoning_events(exporter)]
    assert names.count(sc.DECISION_EVENT) == 3 and names.count(sc.HYPOTHESIS_EVENT) == 3


# --- the schema reader: it never raises, and reads only objects of its schema --------
_JSON = st.recursive(
    st.none() | st.booleans() | st.floats(allow_nan=True) | st.integers() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=20,
)
_FIELDS = st.sampled_from(["goals", "hypotheses", "evidence", "decision", "reply"])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_FIELDS, _JSON, max_size=5) | _JSON)
def test_the_schema_reader_takes_anything_and_reads_only_its_schema(value: object) -> None:
    stated = structured_reasoning(value)
    if not isinstance(value, dict) or not (
        isinstance(value.get("hypotheses"), list) or isinstance(value.get("decision"), (dict, str))
    ):
        assert stated is None
        return
    assert stated is not None
    assert all(item.event in sc.REASONING_EVENTS for item in stated)
    assert all(value is not None for item in stated for value in item.attributes.values())


@settings(max_examples=100, deadline=None)
@given(st.text(), st.text(), st.floats(allow_nan=True, allow_infinity=True))
def test_any_text_and_number_map_to_valid_literals_and_reports(
    name: str, text: str, weight: float
) -> None:
    hypothesis = _event(
        sc.HYPOTHESIS_EVENT, 1.5, otel_prov__reasoning__id=name, otel_prov__reasoning__text=text
    )
    evidence = _evidence(
        7,
        otel_prov__evidence__supports=name,
        otel_prov__evidence__hypothesis__id=name,
        otel_prov__evidence__weight=weight,
    )
    record = map_spans(_run(evidence, step_1=(hypothesis,)))
    weighed = [o for _, p, o in record.triples if p == O.weight]
    assert weighed == ([double(weight)] if 0 <= weight <= 1 else [])
    assert all(isinstance(term, str) and term for triple in record.triples for term in triple)


def test_a_hypothesis_resting_on_itself_is_no_derivation_and_is_reported() -> None:
    evidence = _evidence(
        7, otel_prov__evidence__supports="h1", otel_prov__evidence__hypothesis__id="h1"
    )
    record = map_spans(_run(evidence, step_1=(H1,)))
    assert (HYPOTHESIS, P.wasDerivedFrom, HYPOTHESIS) not in record.triples
    node = entity_iri(STEP_2, "evidence-1")
    assert (node, O.unresolvedReference, literal("hypothesis:h1")) in record.triples
    (problem,) = record.problems
    assert "would rest on itself" in problem
