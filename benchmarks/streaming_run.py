"""A run of N steps as the processor maps it: once at its end, or, streamed, after every
step as well (the run so far, its session open), for the streaming tests and benchmark."""

from __future__ import annotations

import dataclasses

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov import semconv as sc
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import Role, SpanRecord, record_from_span


def run_spans(steps: int) -> list[SpanRecord]:
    """The ended spans of a run of ``steps`` iterations, each a model call and a tool call."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with otel_prov.agent_session(
        "researcher", question="what?", tools=["lookup"], tracer_provider=provider
    ):
        for number in range(1, steps + 1):
            with otel_prov.iteration(number, thought=f"look up {number}", tracer_provider=provider):
                with otel_prov.model_call("m", provider="p", tracer_provider=provider):
                    pass
                with otel_prov.tool_call(
                    "lookup", arguments={"n": number}, tracer_provider=provider
                ):
                    otel_prov.set_observation(f"found {number}")
        otel_prov.set_answer("done")
    return [record_from_span(span) for span in exporter.get_finished_spans()]


def open_session(session: SpanRecord) -> SpanRecord:
    """``session`` as a snapshot taken while it ran: no end, no answer yet."""
    attributes = {k: v for k, v in session.attributes.items() if k != sc.OTEL_PROV_ANSWER}
    return dataclasses.replace(session, end_ns=None, status="unset", attributes=attributes)


def run_records(steps: int, *, streamed: bool) -> list[tuple[list[ProvRecord], bool]]:
    """(records, final) in the order a processor seals them: with ``streamed``, the run
    so far after each iteration ended (``final`` false; mapped without a bundle, as a
    streamed step is), then the whole run."""
    spans = run_spans(steps)
    session = next(span for span in spans if span.role is Role.SESSION)
    out: list[tuple[list[ProvRecord], bool]] = []
    if streamed:
        ends = sorted(s.end_ns or 0 for s in spans if s.role is Role.ITERATION)
        running = open_session(session)
        for end in ends:
            so_far = [s for s in spans if s is not session and (s.end_ns or 0) <= end]
            out.append(([map_spans([running, *so_far], unbundled=(running.span_id,))], False))
    out.append(([map_spans(spans)], True))
    return out
