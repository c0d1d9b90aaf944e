"""(k) Mapping third-party spans vs our own, of the same run, side by side.

``otel-prov receive`` reads the spans other instrumentations emit (OpenInference,
OpenLLMetry, the official GenAI packages): their conventions are read in
``otel_prov/prov/_conventions.py`` on top of the mapping our own spans get.  The fixtures
(``benchmarks/fixtures/``, made by ``benchmarks/record_third_party.py``) hold one run of
the conformance suite's script each, as the SDK's OTLP exporter sends it: under our OpenAI Agents
instrumentor, and under each third party's.  Each is mapped the same number of times in
one process, interleaved.  The rate is runs mapped per second (median of the repeats):
the runs are the same, and so is their provenance, whatever number of spans each
instrumentation tells it in.  Target: each third party's rate >= 0.8x ours.

The frameworks of the conformance suite's side venvs (:data:`FRAMEWORKS`, recorded with
``python -m benchmarks.record_third_party``) tell the same script in their own ways: DSPy
makes a fourth model call, AutoGen alone records no model call.  Their target is the rate
per span: spans mapped per second >= 0.8x ours.  Each line also gives the rate per run and
per triple written (the triples a run gives differ with what its spans hold), as ratios to
ours.

``--floor`` says where the floor is for OpenInference's run, which misses the target: its
rate with every message read free (answered from a memo the warm-up fills), without the
plain spans it has and ours has not (its ``turn`` and workflow spans: activities too,
twelve triples each), and with both; and the two runs' triple counts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from benchmarks.workload import median_seconds, report
from otel_prov.prov import _conventions
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._otlp_proto import parse_otlp_proto
from otel_prov.prov._span_record import Role, SpanRecord

FIXTURES = Path(__file__).resolve().parent / "fixtures"
OURS = "otel-prov-openai-agents"
THIRD_PARTIES = (
    "openinference-openai-agents",
    "openllmetry-openai-agents",
    "genai-openai-v2-latest",
)
FRAMEWORKS = (
    "openinference-dspy",
    "openinference-haystack",
    "autogen-agentchat",
    "autogen-agentchat-openllmetry",
    "agent-framework",
    "semantic-kernel",
    "openinference-agno",
    "openinference-litellm",
    "openllmetry-crewai",
    "ag2",
    "openinference-beeai",
)
"""Fixtures of the side-venv frameworks (their target is per span)."""
TARGET = 0.8
SPANS_PER_REPEAT = 5_000
"""Each side maps about this many spans per timed repeat: its run, mapped again and again."""


def spans_of(name: str) -> tuple[SpanRecord, ...]:
    """The spans of fixture ``name``; they must read without a problem."""
    parsed = parse_otlp_proto((FIXTURES / f"{name}.pb").read_bytes(), name)
    assert not parsed.problems and parsed.spans, (name, parsed.problems)
    return parsed.spans


def seconds_per_run(runs: Mapping[str, Sequence[SpanRecord]], repeats: int = 7) -> dict[str, float]:
    """Seconds to map each run once: the median of ``repeats``, the runs taking turns in
    each repeat so that a busy machine slows them alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for spans in runs.values():  # warm up, and each must map without a problem
        record = map_spans(spans)
        assert not record.problems, record.problems
    for _ in range(repeats):
        for name, spans in runs.items():
            rounds = max(1, SPANS_PER_REPEAT // len(spans))

            def mapped(spans: Sequence[SpanRecord] = spans, rounds: int = rounds) -> None:
                for _ in range(rounds):
                    map_spans(spans)

            times[name].append(median_seconds(mapped, 1) / rounds)
    return {name: sorted(seconds)[len(seconds) // 2] for name, seconds in times.items()}


@contextlib.contextmanager
def message_reads_free() -> Iterator[None]:
    """Each side of each span's messages read once, then answered from a memo: the mapping
    as it would cost if reading messages cost nothing (an ablation, never the product)."""
    names = ("received_messages", "sent_messages")
    reads = {name: getattr(_conventions, name) for name in names}
    memo: dict[tuple[str, int], Any] = {}

    def free(name: str, read: Callable[..., Any]) -> Callable[..., Any]:
        def answered(attributes: Mapping[str, Any], *args: Any) -> Any:
            key = (name, id(attributes))
            if key not in memo:
                memo[key] = read(attributes, *args)
            return memo[key]

        return answered

    for name, read in reads.items():
        setattr(_conventions, name, free(name, read))
    try:
        yield
    finally:
        for name, read in reads.items():
            setattr(_conventions, name, read)


def without_plain_spans(spans: Sequence[SpanRecord]) -> list[SpanRecord]:
    """The run without the plain spans inside it (the root stays), each span's parent its
    nearest kept ancestor."""
    by_id = {span.span_id: span for span in spans}
    dropped = {s.span_id for s in spans if s.role is Role.SPAN and s.parent_id is not None}

    def kept(parent: int | None) -> int | None:
        while parent in dropped:
            parent = by_id[parent].parent_id
        return parent

    return [
        dataclasses.replace(span, parent_id=kept(span.parent_id))
        for span in spans
        if span.span_id not in dropped
    ]


def floor(name: str) -> None:
    """Where the floor of ``name``'s rate is: see the module's docstring."""
    ours, theirs = list(spans_of(OURS)), list(spans_of(name))
    trimmed = without_plain_spans(theirs)
    runs = {OURS: ours, name: theirs, "without plain spans": trimmed}
    seconds = seconds_per_run(runs)
    with message_reads_free():
        free = seconds_per_run(runs)
    triples = {key: len(map_spans(spans).triples) for key, spans in runs.items()}
    print(f"floor of {name} (rate as a share of ours, same run):")
    print(f"  as it is: {seconds[OURS] / seconds[name]:.2f}x")
    print(f"  every message read free: {free[OURS] / free[name]:.2f}x")
    print(
        f"  without its {len(theirs) - len(trimmed)} plain spans: "
        f"{seconds[OURS] / seconds['without plain spans']:.2f}x; and reads free: "
        f"{free[OURS] / free['without plain spans']:.2f}x"
    )
    print(
        f"  triples: ours {triples[OURS]}, theirs {triples[name]} "
        f"({triples[OURS] / triples[name]:.2f}x), without plain spans "
        f"{triples['without plain spans']}"
    )


def main(argv: list[str]) -> int:
    if "--floor" in argv:
        floor(THIRD_PARTIES[0])
        return 0
    names = (OURS, *THIRD_PARTIES, *FRAMEWORKS)
    spans = {name: spans_of(name) for name in names}
    seconds = seconds_per_run(spans)
    size = {name: len(spans[name]) for name in names}
    triples = {name: len(map_spans(spans[name]).triples) for name in names}
    ours = seconds[OURS]
    print(
        f"ours ({OURS}): {1 / ours:,.0f} runs/s, {size[OURS] / ours:,.0f} spans/s, "
        f"{triples[OURS] / ours:,.0f} triples/s ({size[OURS]} spans, {triples[OURS]} triples a run)"
    )
    missed = 0
    for name in (*THIRD_PARTIES, *FRAMEWORKS):
        per_run = ours / seconds[name]  # the same run: its provenance, from their spans
        per_span = per_run * size[name] / size[OURS]
        per_triple = per_run * triples[name] / triples[OURS]
        ratio, unit = (per_span, "span") if name in FRAMEWORKS else (per_run, "run")
        missed += ratio < TARGET
        report(
            f"third-party mapping rate per {unit}, {name}",
            ratio,
            f">= {TARGET}x ours",
            ratio >= TARGET,
            f"per run {per_run:.2f}x, per span {per_span:.2f}x, per triple {per_triple:.2f}x; "
            f"{size[name] / seconds[name]:,.0f} spans/s ({size[name]} spans, "
            f"{triples[name]} triples a run)",
        )
    return 1 if missed and "--check" in argv else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
