"""configure(): embedded store by default, OTLP beside it when the standard variables say so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.trace.export import BatchSpanProcessor

import otel_prov
from otel_prov.exporters import OxigraphStoreExporter


def _exporters(handle: otel_prov.ProvHandle) -> list[object]:
    processors = handle.tracer_provider._active_span_processor._span_processors
    return [p._batch_processor._exporter for p in processors if isinstance(p, BatchSpanProcessor)]


def test_default_is_the_embedded_store_without_otlp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_PROV_STORE", str(tmp_path / "from-env"))
    handle = otel_prov.configure(set_global=False, service_name="svc")
    try:
        assert isinstance(handle.exporter, OxigraphStoreExporter)
        assert handle.exporter.path == tmp_path / "from-env"
        assert _exporters(handle) == []
        assert handle.tracer_provider.resource.attributes["service.name"] == "svc"
    finally:
        handle.shutdown()


@pytest.mark.parametrize(
    ("protocol", "kind"), [("http/protobuf", HttpExporter), ("grpc", GrpcExporter)]
)
def test_otlp_is_added_when_an_endpoint_is_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, protocol: str, kind: type
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
    handle = otel_prov.configure(store=tmp_path / "s", set_global=False)
    try:
        (exporter,) = _exporters(handle)
        assert isinstance(exporter, kind)
    finally:
        exporter_shutdown = exporter.shutdown
        handle.shutdown()
        exporter_shutdown()


def test_capture_content_keyword_wins_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "true")
    handle = otel_prov.configure(store=tmp_path / "s", set_global=False, capture_content=False)
    try:
        with otel_prov.agent_session(
            "a", question="private", tracer_provider=handle.tracer_provider
        ) as span:
            assert "otel_prov.question" not in (span.attributes or {})
    finally:
        handle.shutdown()


def test_bad_input_reaches_the_store_as_far_as_it_converts(tmp_path: Path) -> None:
    handle = otel_prov.configure(store=tmp_path / "s", set_global=False)
    provider = handle.tracer_provider
    with (
        otel_prov.agent_session("a", tracer_provider=provider),
        otel_prov.iteration(1, arguments="not json {", tracer_provider=provider) as step,
    ):
        step.set_attribute("otel_prov.thought", 3.5)  # wrong type
        step.set_attribute("otel_prov.observation", "x" * 10_000_000)
    handle.shutdown()
    assert handle.processor is not None
    stats = handle.processor.statistics()
    assert stats.records_exported == 1 and stats.problems == 2


def test_provenance_off_leaves_otlp_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("OTEL_PROV_PROVENANCE", "false")
    handle = otel_prov.configure(store=tmp_path / "s", set_global=False)
    try:
        assert handle.processor is None and handle.exporter is None
        processors = handle.tracer_provider._active_span_processor._span_processors
        assert len(processors) == len(_exporters(handle)) == 1  # OTLP, nothing else
    finally:
        handle.shutdown()
    assert not (tmp_path / "s").exists()  # no store was even opened


def test_a_store_variable_naming_a_file_is_logged_and_the_agent_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("not a store\n", encoding="utf-8")
    monkeypatch.setenv("OTEL_PROV_STORE", str(taken))
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.ERROR, logger="otel_prov"):
        handle = otel_prov.configure(set_global=False)
    assert f"OTEL_PROV_STORE={taken}" in caplog.text and "no provenance" in caplog.text
    with otel_prov.agent_session("a", question="q", tracer_provider=handle.tracer_provider):
        pass
    assert handle.force_flush() is False  # no session of the agent's is acknowledged
    handle.shutdown()
    assert taken.read_text(encoding="utf-8") == "not a store\n"


def test_a_store_keyword_naming_a_file_is_a_clear_error(tmp_path: Path) -> None:
    taken = tmp_path / "notes.txt"
    taken.write_text("", encoding="utf-8")
    with pytest.raises(ValueError, match=r"store=.*notes\.txt.*cannot be opened"):
        otel_prov.configure(store=taken, set_global=False)
