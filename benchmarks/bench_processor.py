"""(a) What ProvSpanProcessor adds to starting and ending a span, beside a BatchSpanProcessor.

Two providers, identical but for the ProvSpanProcessor (writing to a real embedded
store, with the write-ahead log on, as ``configure()`` sets it up): each runs the same
agent-shaped span trees, and the time of every span start and ``span.end()`` on the
agent's thread is recorded.  Rounds alternate between the providers.  The target (median
end() cost ratio <= 1.10x) is about the agent's thread; p50 and p99 of start and end are
printed (a tool call's start writes its WAL intent), and the whole-loop ratio shows what
the background mapping costs a loop that never waits (real agents wait on their model
most of the time, and the worker runs then).
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

from benchmarks.workload import report
from otel_prov import ProvSpanProcessor
from otel_prov.exporters import OxigraphStoreExporter

SESSIONS_PER_ROUND = 200
ITERATIONS = 5


class Discard(SpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _session(tracer: trace.Tracer, ends: list[int], starts: list[int]) -> None:
    def end(span: trace.Span) -> None:
        start = time.perf_counter_ns()
        span.end()
        ends.append(time.perf_counter_ns() - start)

    def begin(name: str, attributes: dict[str, str | int]) -> trace.Span:
        start = time.perf_counter_ns()
        span = tracer.start_span(name, attributes=attributes)
        starts.append(time.perf_counter_ns() - start)
        return span

    session = begin(
        "invoke_agent b",
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "b",
            "otel_prov.question": "What now?",
        },
    )
    with trace.use_span(session, end_on_exit=False):
        for n in range(1, ITERATIONS + 1):
            step = begin(
                f"iteration {n}",
                {
                    "otel_prov.iteration.number": n,
                    "otel_prov.thought": "think",
                    "otel_prov.action": "search",
                    "otel_prov.arguments": '{"q": "x"}',
                },
            )
            with trace.use_span(step, end_on_exit=False):
                model = begin(
                    "chat m", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
                )
                end(model)
                tool = begin(
                    "execute_tool search",
                    {
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "search",
                        "otel_prov.observation": "found",
                    },
                )
                end(tool)
            end(step)
    end(session)


def _round(provider: TracerProvider, ends: list[int], starts: list[int]) -> float:
    tracer = provider.get_tracer("bench")
    start = time.perf_counter()
    for _ in range(SESSIONS_PER_ROUND):
        _session(tracer, ends, starts)
    return time.perf_counter() - start


def _percentiles(samples: list[int]) -> str:
    cuts = statistics.quantiles(samples, n=100)
    return f"p50 {cuts[49] / 1000:.2f} us, p99 {cuts[98] / 1000:.2f} us"


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-processor-"))
    baseline, with_prov = TracerProvider(), TracerProvider()
    baseline.add_span_processor(BatchSpanProcessor(Discard()))
    with_prov.add_span_processor(BatchSpanProcessor(Discard()))
    processor = ProvSpanProcessor(OxigraphStoreExporter(root / "store"), wal_dir=root / "wal")
    with_prov.add_span_processor(processor)
    base_ends: list[int] = []
    prov_ends: list[int] = []
    base_starts: list[int] = []
    prov_starts: list[int] = []
    base_loops: list[float] = []
    prov_loops: list[float] = []
    try:
        for round_ in range(12):
            pairs = [
                (baseline, base_ends, base_starts, base_loops),
                (with_prov, prov_ends, prov_starts, prov_loops),
            ]
            for provider, ends, starts, loops in pairs if round_ % 2 else reversed(pairs):
                loops.append(_round(provider, ends, starts))
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
    for what, base, prov in (("end()", base_ends, prov_ends), ("start", base_starts, prov_starts)):
        print(f"  {what}: batch only {_percentiles(base)}; with prov + WAL {_percentiles(prov)}")


if __name__ == "__main__":
    main()
