"""A run with a plan, as span records with fixed ids and times: every step outcome
(executed, failed, rolled_back, skipped, none), postconditions for a step and for the run."""

from __future__ import annotations

from otel_prov import semconv as sc
from otel_prov.prov._span_record import SpanEvent, SpanRecord
from tests.builders import T0, make_span

TRACE_ID = 0x9A


def _event(name: str, at_ms: float, **attributes: object) -> SpanEvent:
    return SpanEvent(name, T0 + int(at_ms * 1_000_000), attributes)


def _outcome(number: int, outcome: str, at_ms: float) -> SpanEvent:
    return _event(
        sc.STEP_OUTCOME_EVENT,
        at_ms,
        **{
            sc.OTEL_PROV_PLAN_ID: f"{2:016x}",
            sc.OTEL_PROV_PLAN_STEP: number,
            sc.OTEL_PROV_PLAN_STEP_OUTCOME: outcome,
        },
    )


def _checked(name: str, ok: bool, at_ms: float, detail: str | None = None) -> SpanEvent:
    attributes: dict[str, object] = {
        sc.OTEL_PROV_POSTCONDITION_NAME: name,
        sc.OTEL_PROV_POSTCONDITION_OK: ok,
    }
    if detail is not None:
        attributes[sc.OTEL_PROV_POSTCONDITION_DETAIL] = detail
    return _event(sc.POSTCONDITION_EVENT, at_ms, **attributes)


def planned_session() -> list[SpanRecord]:
    plan = {"otel_prov__plan__id": f"{2:016x}"}
    return [
        make_span(1, None, trace_id=TRACE_ID, name="invoke_agent trip", end_ms=20,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="trip",
                  gen_ai__conversation__id="planned", otel_prov__question="Book a trip",
                  otel_prov__answer="Booked, no receipt.",
                  events=(_outcome(4, "rolled_back", 15), _outcome(5, "skipped", 16),
                          _checked("budget kept", False, 17, "spent 120 of 100"))),
        make_span(2, 1, trace_id=TRACE_ID, name="plan", start_ms=1, end_ms=2,
                  gen_ai__operation__name="plan",
                  otel_prov__plan__steps=("search", "book", "email", "hold seat", "celebrate",
                                          "pay")),
        make_span(3, 1, trace_id=TRACE_ID, name="execute_tool search", start_ms=3, end_ms=4,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="search",
                  otel_prov__plan__step=1, **plan),
        make_span(4, 1, trace_id=TRACE_ID, name="execute_tool book", start_ms=5, end_ms=6,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="book",
                  otel_prov__plan__step=2, events=(_checked("seat held", True, 5.5, "12A"),),
                  **plan),
        make_span(5, 1, trace_id=TRACE_ID, name="execute_tool email", start_ms=7, end_ms=8,
                  status="error", gen_ai__operation__name="execute_tool",
                  gen_ai__tool__name="email", error__type="SMTPError",
                  otel_prov__plan__step=3, **plan),
    ]  # fmt: skip
