"""Plans: recorded when made, steps linked to the activities run for them, outcomes,
postconditions, and verify's ``plan_followed`` gate on a real embedded store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from otel_prov import semconv as sc
from otel_prov.prov._iris import activity_iri, entity_iri
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._span_record import SpanEvent
from otel_prov.prov._vocab import PP, O, P
from otel_prov.setup._configure import configure
from tests.builders import T0, TRACE, make_span
from tests.cli import run_cli

PLAN = entity_iri(activity_iri(TRACE, 2), "plan")


def _step(number: int) -> str:
    return entity_iri(PLAN, f"step-{number}")


def _outcome(span_id: int, number: int, outcome: str, at_ms: float) -> SpanEvent:
    return SpanEvent(
        sc.STEP_OUTCOME_EVENT,
        T0 + int(at_ms * 1_000_000),
        {
            sc.OTEL_PROV_PLAN_ID: f"{span_id:016x}",
            sc.OTEL_PROV_PLAN_STEP: number,
            sc.OTEL_PROV_PLAN_STEP_OUTCOME: outcome,
        },
    )


def _spans(*session_events: SpanEvent, tool_status: str = "ok") -> list[object]:
    plan_id = {"otel_prov__plan__id": f"{2:016x}"}
    return [
        make_span(1, name="invoke_agent a", end_ms=10, events=session_events,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="a"),
        make_span(2, 1, name="plan", end_ms=1, gen_ai__operation__name="plan",
                  otel_prov__plan__steps=("fetch", "check", "reply")),
        make_span(3, 1, name="execute_tool fetch", start_ms=2, end_ms=3, status=tool_status,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="fetch",
                  otel_prov__plan__step=1, **plan_id),
        make_span(4, 1, name="iteration 1", start_ms=4, end_ms=5,
                  otel_prov__iteration__number=1, otel_prov__plan__step=2, **plan_id),
    ]  # fmt: skip


def test_a_plan_is_ordered_steps_and_each_run_is_associated_with_its_step() -> None:
    record = map_spans(_spans())  # type: ignore[arg-type]
    triples = set(record.triples)
    assert (PLAN, P.wasGeneratedBy, activity_iri(TRACE, 2)) in triples
    assert {(_step(n), PP.isStepOfPlan, PLAN) for n in (1, 2, 3)} <= triples
    assert (_step(3), PP.isPrecededBy, _step(2)) in triples
    tool, association = activity_iri(TRACE, 3), entity_iri(activity_iri(TRACE, 3), "association")
    assert {
        (tool, P.qualifiedAssociation, association),
        (association, P.hadPlan, PLAN),
        (association, O.planStep, _step(1)),
        (association, P.agent, "<urn:otel-prov:tool:fetch>"),
    } <= triples
    iteration = entity_iri(activity_iri(TRACE, 4), "association")
    assert (iteration, P.agent, "<urn:otel-prov:agent:a>") in triples
    outcomes = {s: o for s, p, o in triples if p == O.stepOutcome}
    assert outcomes == {_step(1): '"executed"', _step(2): '"executed"'}  # 3: never run
    assert record.triples == map_spans(reversed(_spans())).triples  # type: ignore[arg-type]


def test_the_latest_mark_wins_over_what_the_run_says() -> None:
    record = map_spans(
        _spans(  # type: ignore[arg-type]
            _outcome(2, 1, "executed", 6),
            _outcome(2, 1, "rolled_back", 7),
            _outcome(2, 3, "skipped", 8),
            _outcome(2, 3, "maybe", 9),  # not an outcome: ignored
            tool_status="error",
        )
    )
    outcomes = {s: o for s, p, o in record.triples if p == O.stepOutcome}
    assert outcomes == {_step(1): '"rolled_back"', _step(2): '"executed"', _step(3): '"skipped"'}


def test_a_failed_run_fails_its_step_and_a_missing_plan_is_reported() -> None:
    spans = _spans(tool_status="error")
    record = map_spans(spans)  # type: ignore[arg-type]
    assert (_step(1), O.stepOutcome, '"failed"') in record.triples
    orphan = make_span(
        5,
        1,
        name="execute_tool x",
        start_ms=6,
        end_ms=7,
        gen_ai__operation__name="execute_tool",
        otel_prov__plan__id="00000000000000ff",
        otel_prov__plan__step=1,
    )
    record = map_spans([*spans, orphan])  # type: ignore[list-item]
    assert any("otel_prov.plan.id names no plan of this trace" in p for p in record.problems)


def test_bad_plans_and_marks_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="at least one step"):
        otel_prov.plan(steps=[])
    plan = otel_prov.plan(steps=["a"], tracer_provider=TracerProvider())
    with pytest.raises(ValueError, match="executed, failed, skipped, rolled_back"):
        plan.steps[0].mark("done")


def _trip(provider: TracerProvider, *, skip_last: bool) -> None:
    at = provider
    with otel_prov.agent_session("trip", question="Book a trip", tracer_provider=at) as session:
        plan = otel_prov.plan(steps=["search", "book", "email", "celebrate"], tracer_provider=at)
        with plan.steps[0], otel_prov.tool_call("search", tracer_provider=at):
            otel_prov.set_observation("3 flights")
        with otel_prov.tool_call("book", step=plan.steps[1], tracer_provider=at):
            otel_prov.postcondition("seat held", True, detail="12A")
        with pytest.raises(RuntimeError), plan.steps[2]:
            with otel_prov.tool_call("email", tracer_provider=at):
                pass
            raise RuntimeError("mail server down")
        plan.steps[2].mark("skipped")  # decided afterwards: the receipt is not needed
        if skip_last:
            plan.steps[3].mark("skipped")
        otel_prov.set_answer("booked", span=session)


@pytest.mark.parametrize("skip_last", [False, True])
def test_verify_gates_on_every_step_executed_or_skipped(tmp_path: Path, skip_last: bool) -> None:
    store = tmp_path / "store"
    handle = configure(store=store, set_global=False, otlp=False)
    _trip(handle.tracer_provider, skip_last=skip_last)
    handle.shutdown()

    result = run_cli("verify", "--store", str(store), "--format", "json")
    (check,) = json.loads(result.stdout)
    assert check["gates"]["plan_followed"] is skip_last
    assert result.returncode == (0 if skip_last else 1)
    if not skip_last:
        (problem,) = check["problems"]
        assert "step 4 'celebrate': no outcome" in problem
        assert "departed from its plan" in problem and "mark such steps skipped" in problem
    rows = run_cli(
        "query", "--store", str(store), "--format", "json",
        "SELECT ?n ?outcome ?post WHERE { ?step p-plan:isStepOfPlan ?plan ; "
        "oprov:stepNumber ?n . OPTIONAL { ?step oprov:stepOutcome ?outcome } "
        "OPTIONAL { ?post oprov:planStep ?step ; a oprov:Postcondition } } ORDER BY ?n",
    )  # fmt: skip
    found = [(r["n"], r.get("outcome"), r.get("post") is not None) for r in json.loads(rows.stdout)]
    assert found == [
        (1, "executed", False),
        (2, "executed", True),  # the postcondition was checked inside the step's tool call
        (3, "skipped", False),
        (4, "skipped" if skip_last else None, False),
    ]
