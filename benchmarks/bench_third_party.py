"""(k) Mapping third-party spans vs our own, of the same run, side by side.

``otel-prov receive`` reads the spans other instrumentations emit (OpenInference,
OpenLLMetry, the official GenAI packages): their conventions are read in
``otel_prov/prov/_conventions.py`` on top of the mapping our own spans get.  The fixtures
(``benchmarks/fixtures/``, made by ``benchmarks/record_third_party.py``) hold one run of
the conformance suite's script each, as the SDK's OTLP exporter sends it: under our OpenAI Agents
instrumentor, and under each third party's.  Each is mapped the same number of times in
one process, interleaved.  The rate is runs mapped per second (median of the repeats):
the runs are the same, and so is their provenance, whatever number of spans each
instrumentation tells it in (spans per second are printed too).  Target: each third
party's rate >= 0.8x ours.
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchmarks.workload import median_seconds, report
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._otlp_proto import parse_otlp_proto
from otel_prov.prov._span_record import SpanRecord

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OURS = "otel-prov-openai-agents"
THIRD_PARTIES = (
    "openinference-openai-agents",
    "openllmetry-openai-agents",
    "genai-openai-v2-latest",
)
TARGET = 0.8
SPANS_PER_REPEAT = 5_000
"""Each side maps about this many spans per timed repeat: its run, mapped again and again."""


def spans_of(name: str) -> tuple[SpanRecord, ...]:
    """The spans of fixture ``name``; they must read without a problem."""
    parsed = parse_otlp_proto((FIXTURES / f"{name}.pb").read_bytes(), name)
    assert not parsed.problems and parsed.spans, (name, parsed.problems)
    return parsed.spans


def seconds_per_run(names: tuple[str, ...], repeats: int = 7) -> dict[str, float]:
    """Seconds to map each fixture's run once: the median of ``repeats``, the sides taking
    turns in each repeat so that a busy machine slows them alike."""
    runs = {name: list(spans_of(name)) for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    for spans in runs.values():  # warm up, and each must map without a problem
        record = map_spans(spans)
        assert not record.problems, record.problems
    for _ in range(repeats):
        for name, spans in runs.items():
            rounds = max(1, SPANS_PER_REPEAT // len(spans))

            def mapped(spans: list[SpanRecord] = spans, rounds: int = rounds) -> None:
                for _ in range(rounds):
                    map_spans(spans)

            times[name].append(median_seconds(mapped, 1) / rounds)
    return {name: sorted(seconds)[len(seconds) // 2] for name, seconds in times.items()}


def main(argv: list[str]) -> int:
    seconds = seconds_per_run((OURS, *THIRD_PARTIES))
    ours = seconds[OURS]
    size = {name: len(spans_of(name)) for name in seconds}
    print(
        f"ours ({OURS}): {1 / ours:,.0f} runs/s, {size[OURS] / ours:,.0f} spans/s "
        f"({size[OURS]} spans a run)"
    )
    missed = 0
    for name in THIRD_PARTIES:
        ratio = ours / seconds[name]  # the same run: its provenance, from their spans
        missed += ratio < TARGET
        report(
            f"third-party mapping rate, {name}",
            ratio,
            f">= {TARGET}x ours",
            ratio >= TARGET,
            f"{1 / seconds[name]:,.0f} runs/s, {size[name] / seconds[name]:,.0f} spans/s "
            f"({size[name]} spans a run)",
        )
    return 1 if missed and "--check" in argv else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
