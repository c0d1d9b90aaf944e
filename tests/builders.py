"""Span-record builders for mapper, assembler and validity tests, and the stores and
records made of runs."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.id_generator import IdGenerator

from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.processing._processor import ProvSpanProcessor
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._span_record import SpanEvent, SpanRecord, classify, clean_record
from tests.recording_exporter import RecordingExporter

TRACE = 0x4BF92F3577B34DA6A3CE929D0E0E4736
T0 = 1_764_460_800_000_000_000  # 2025-11-30T00:00:00Z in ns


def make_span(
    span_id: int,
    parent: int | None = None,
    *,
    name: str = "span",
    start_ms: float = 0,
    end_ms: float | None = 1,
    status: str = "unset",
    message: str | None = None,
    trace_id: int = TRACE,
    service: str | None = "agent-service",
    events: tuple[SpanEvent, ...] = (),
    links: tuple[tuple[int, int], ...] = (),
    **attributes: Any,
) -> SpanRecord:
    """A span record as the pipeline takes it in (cleaned at the boundary, as every source's
    are); attribute keyword names use ``__`` for dots (``gen_ai__tool__name``)."""
    attrs = {key.replace("__", "."): value for key, value in attributes.items()}
    return clean_record(
        SpanRecord(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=parent,
            name=name,
            start_ns=T0 + int(start_ms * 1_000_000),
            end_ns=None if end_ms is None else T0 + int(end_ms * 1_000_000),
            status=status,
            status_message=message,
            attributes=attrs,
            events=events,
            links=links,
            service_name=service,
            role=classify(attrs, name=name),
        )
    )


def store_runs(
    path: Path, *runs: Sequence[SpanRecord], graph: str | None = None, chain: str = "store-runs"
) -> Path:
    """An embedded store at ``path`` holding each run's span records, mapped and exported
    together and sealed in one writer's chain (``chain``), as the processor would, into
    ``graph`` (an IRI; the provenance graph by default); the path."""
    exporter = OxigraphStoreExporter(path, graph=graph)
    sealer = Sealer(chain=chain)
    exporter.export([sealer.seal(map_spans(list(run)), 0) for run in runs])
    exporter.shutdown()
    return path


def records_of(*runs: Callable[[TracerProvider], object]) -> list[ProvRecord]:
    """The provenance records of agent runs (each given the provider to run under), as a
    ``ProvSpanProcessor`` makes them; nothing is stored."""
    exporter = RecordingExporter()
    provider = TracerProvider()
    provider.add_span_processor(ProvSpanProcessor(exporter))
    for run in runs:
        run(provider)
    provider.shutdown()
    return list(exporter.records)


class CountingIds(IdGenerator):
    """Ids that count up: two runs of the same code get the same ids (so their graphs can be
    laid over each other), and Hypothesis, which seeds ``random`` per example as the SDK's
    generator uses it, cannot make two examples share a trace."""

    def __init__(self) -> None:
        self._next = itertools.count(1)

    def generate_span_id(self) -> int:
        return next(self._next)

    def generate_trace_id(self) -> int:
        return next(self._next) << 64
