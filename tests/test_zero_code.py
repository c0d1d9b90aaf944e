"""Zero-code: the `prov` traces exporter fed in batches, and opentelemetry-instrument end to end."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov import ProvSpanExporter
from otel_prov.demo import run_demo_agent
from otel_prov.prov._vocab import RDF_TYPE, O
from tests.instrumented import SPANS_PER_RUN, run_plain_agent
from tests.recording_exporter import RecordingExporter
from tests.waiting import until


def _count(record: object, cls: str) -> int:
    return sum(1 for _, p, o in record.triples if p == RDF_TYPE and o == cls)  # type: ignore[attr-defined]


def test_prov_exporter_assembles_sessions_from_batches() -> None:
    recording, ended = RecordingExporter(), InMemorySpanExporter()
    # The grace outlasts any stall of a loaded machine between the two batches below.
    prov = ProvSpanExporter(recording, late_span_grace=2.0)
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(ended))
    # Small batches: one session's spans arrive over several export calls.
    provider.add_span_processor(
        BatchSpanProcessor(prov, max_export_batch_size=3, schedule_delay_millis=50)
    )
    run_demo_agent(tracer_provider=provider)
    tracer = provider.get_tracer("t")
    session = tracer.start_span(
        "invoke_agent late", attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    with trace.use_span(session, end_on_exit=False):
        child = tracer.start_span(
            "execute_tool slow",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "slow"},
        )
    session.end()

    def handed_over() -> bool:
        statistics = prov.statistics()
        return statistics is not None and statistics.spans_received == len(
            ended.get_finished_spans()
        )

    until(handed_over, "every ended span in the prov exporter")  # the session in one batch...
    child.end()  # ...its late child in a later one, within the grace
    records = recording.wait_for(2)
    demo = next(r for r in records if _count(r, O.Iteration) == 4)
    assert _count(demo, O.ToolCall) == 3 and _count(demo, O.ModelCall) == 4
    late = next(r for r in records if r is not demo)
    assert _count(late, O.AgentSession) == 1 and _count(late, O.ToolCall) == 1
    provider.shutdown()


def test_prov_exporter_counts_and_logs_every_span_over_the_bound(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("OTEL_PROV_MAX_PENDING_SPANS", "100")
    caplog.set_level(logging.WARNING, logger="otel_prov.processing._processor")
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with otel_prov.agent_session("busy", tracer_provider=provider):
        for i in range(499):
            with otel_prov.tool_call("t", call_id=f"call-{i}", tracer_provider=provider):
                pass
    recording = RecordingExporter()
    exporter = ProvSpanExporter(recording, late_span_grace=0.0)
    exporter.export(memory.get_finished_spans())  # one batch of 500 spans, over the bound
    assert exporter.force_flush()
    exporter.shutdown()
    stats = exporter.statistics()
    assert stats is not None
    (record,) = recording.records
    assert stats.spans_received == 500 and stats.spans_dropped > 0
    assert _count(record, O.ToolCall) + stats.spans_dropped == 499  # stored or counted
    drop_logs = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert sum(int(m.split()[1]) for m in drop_logs) == stats.spans_dropped


def _console_spans(stdout: str) -> list[dict[str, object]]:
    decoder, spans, index = json.JSONDecoder(), [], 0
    while (start := stdout.find("{", index)) != -1:
        span, index = decoder.raw_decode(stdout, start)
        spans.append(span)
    return spans


def test_opentelemetry_instrument_records_an_unmodified_script(tmp_path: Path) -> None:
    run = run_plain_agent("console,prov", OTEL_PROV_STORE=str(tmp_path / "store"))
    console = [s for s in _console_spans(run.stdout) if isinstance(s, dict) and "context" in s]
    assert len(console) == SPANS_PER_RUN
    shown = subprocess.run(
        [
            sys.executable,
            "-m",
            "otel_prov",
            "show",
            "plain-agent-run",
            "--format",
            "turtle",
            "--store",
            str(tmp_path / "store"),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for span in console:
        context = span["context"]
        assert isinstance(context, dict)
        assert f'oprov:spanId "{context["span_id"][2:]}"' in shown
        assert f'oprov:traceId "{context["trace_id"][2:]}"' in shown
    assert 'oprov:serviceName "plain-agent"' in shown
