"""(a) What ProvSpanProcessor adds to ending a span, beside a BatchSpanProcessor.

Two providers, identical but for the ProvSpanProcessor (writing to a real embedded
store): each runs the same agent-shaped span trees, and the time of every ``span.end()``
on the agent's thread is recorded.  Rounds alternate between the providers.  The target
(median end() cost ratio <= 1.10x) is about the agent's thread; the whole-loop ratio is
printed too, to show what the background mapping costs a loop that never waits (real
agents wait on their model most of the time, and the worker runs then).
"""

from __future__ import annotations

import shutil
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from otel_prov.exporters import OxigraphStoreExporter

from benchmarks.workload import report
from otel_prov import ProvSpanProcessor

SESSIONS_PER_ROUND = 200
ITERATIONS = 5


class Discard(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _session(tracer: trace.Tracer, ends: list[int]) -> None:
    def end(span: trace.Span) -> None:
        start = time.perf_counter_ns()
        span.end()
        ends.append(time.perf_counter_ns() - start)

    session = tracer.start_span(
        "invoke_agent b",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "b",
            "otel_prov.question": "What now?",
        },
    )
    with trace.use_span(session, end_on_exit=False):
        for n in range(1, ITERATIONS + 1):
            step = tracer.start_span(
                f"iteration {n}",
                attributes={
                    "otel_prov.iteration.number": n,
                    "otel_prov.thought": "think",
                    "otel_prov.action": "search",
                    "otel_prov.arguments": '{"q": "x"}',
                },
            )
            with trace.use_span(step, end_on_exit=False):
                model = tracer.start_span(
                    "chat m",
                    attributes={"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"},
                )
                end(model)
                tool = tracer.start_span(
                    "execute_tool search",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search",
                        "otel_prov.observation": "found",
                    },
                )
                end(tool)
            end(step)
    end(session)


def _round(provider: TracerProvider, ends: list[int]) -> float:
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for _ in range(SESSIONS_PER_ROUND):
        _session(tracer, ends)
    return time.perf_counter() - start


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-processor-"))
    baseline, with_prov = TracerProvider(), TracerProvider()
    baseline.add_span_processor(BatchSpanProcessor(Discard()))
    with_prov.add_span_processor(BatchSpanProcessor(Discard()))
    processor = ProvSpanProcessor(OxigraphStoreExporter(root / "store"))
    with_prov.add_span_processor(processor)
    base_ends: list[int] = []
    prov_ends: list[int] = []
    base_loops, prov_loops = [], []
    try:
        for round_ in range(12):
            pairs = [(baseline, base_ends, base_loops), (with_prov, prov_ends, prov_loops)]
            for provider, ends, loops in pairs if round_ % 2 else reversed(pairs):
                loops.append(_round(provider, ends))
                provider.force_flush()
        with_prov.shutdown()
        baseline.shutdown()
        stats = processor.statistics()
    finally:
        shutil.rmtree(root)
    base_end, prov_end = statistics.median(base_ends), statistics.median(prov_ends)
    ratio = prov_end / base_end
    loop_ratio = statistics.median(prov_loops) / statistics.median(base_loops)
    report(
        "span end() with ProvSpanProcessor vs BatchSpanProcessor only",
        ratio,
        "<= 1.10x",
        ratio <= 1.10,
        f"median end() {base_end / 1000:.2f} us vs {prov_end / 1000:.2f} us; "
        f"whole busy loop incl. background mapping {loop_ratio:.2f}x; "
        f"{stats.records_exported} sessions stored, {stats.spans_dropped} dropped",
    )


if __name__ == "__main__":
    main()
