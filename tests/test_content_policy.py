"""Content capture off keeps every third-party span's content out of the store, on every path.

``OTEL_PROV_CAPTURE_CONTENT=false`` (or the GenAI opt-in ``NO_CONTENT``) promises
"structure, ids, tool names, sizes and hashes only".  Our own instrumentation leaves the
text off its spans; other instrumentations do not (OpenInference's ``input.value``), so
the record preparation every path shares (``RecordPreparer``: the processor in process,
``otel-prov import``, ``otel-prov receive``) marks each record, and the mapper keeps each
content value's size and hash, not its text, nor the arguments inside an error message.
The receiver and import also take ``--no-content`` and ``OTEL_PROV_STRIP_CONTENT``, so
that a Collector-side deployment strips what agents sent.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Status, StatusCode

from otel_prov import map_spans
from otel_prov.capture import _content
from otel_prov.processing._preparer import RecordPreparer
from otel_prov.processing._processor import ProvSpanProcessor
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.builders import make_span
from tests.cli import CLI
from tests.receiver import Receivers
from tests.recording_exporter import RecordingExporter
from tests.test_import import OtlpJsonFileExporter

SECRETS = ("Zanzibar", "Kilimanjaro", "Serengeti", "Arusha", "Ngorongoro", "Atlantis")
"""Words of the question, answer, thought, arguments and observation, and of the arguments
of the failed call, which its error message repeats."""
_FAILURE = "no weather for {'city': 'Atlantis'}: Atlantis is not on the map"


def _run(exporter: SpanExporter | None = None, processor: ProvSpanProcessor | None = None) -> None:
    """An OpenInference-shaped run: agent, model call, a tool that answers, one that fails."""
    provider = TracerProvider()
    if exporter is not None:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    if processor is not None:
        provider.add_span_processor(processor)
    tracer = provider.get_tracer("openinference-like")
    kind = "openinference.span.kind"
    with tracer.start_as_current_span("weather") as agent:
        agent.set_attributes(
            {kind: "AGENT", "agent.name": "weather", "input.value": "Weather in Zanzibar?"}
        )
        with tracer.start_as_current_span("llm") as llm:
            llm.set_attributes(
                {
                    kind: "LLM",
                    "llm.model_name": "m",
                    "llm.input_messages.0.message.role": "user",
                    "llm.input_messages.0.message.content": "Weather in Zanzibar?",
                    "llm.output_messages.0.message.role": "assistant",
                    "llm.output_messages.0.message.content": "Ask about Serengeti.",
                }
            )
        with tracer.start_as_current_span("get_weather") as tool:
            tool.set_attributes(
                {
                    kind: "TOOL",
                    "tool.name": "get_weather",
                    "input.value": '{"city": "Arusha"}',
                    "output.value": "Ngorongoro: 18 °C",
                }
            )
        with tracer.start_as_current_span("get_weather", record_exception=False) as tool:
            tool.set_attributes(
                {kind: "TOOL", "tool.name": "get_weather", "input.value": '{"city": "Atlantis"}'}
            )
            tool.record_exception(ValueError(_FAILURE))
            tool.set_status(Status(StatusCode.ERROR, _FAILURE))
        agent.set_attribute("output.value", "Kilimanjaro is sunny.")
    provider.shutdown()


def _leaks(texts: list[str]) -> list[str]:
    return [secret for secret in SECRETS if any(secret in text for text in texts)]


def test_withheld_records_map_to_hashes_and_sizes_only_and_the_same_shape() -> None:
    """The mapper's side: a withheld record keeps every entity, hash and size, no value,
    and its error message without the call's arguments."""

    def spans(withheld: bool) -> list[object]:
        found = [
            make_span(1, name="weather", openinference__span__kind="AGENT", agent__name="w",
                      input__value="Weather in Zanzibar?"),
            make_span(2, 1, name="t", start_ms=0.2, openinference__span__kind="TOOL",
                      tool__name="t", input__value='{"city": "Atlantis", "n": 7}', status="error",
                      message=f"{_FAILURE} (n=7, 17 runs)"),
        ]  # fmt: skip
        return [
            dataclasses.replace(span, content_withheld=withheld)  # type: ignore[type-var]
            for span in found
        ]

    on, off = map_spans(spans(False)).triples, map_spans(spans(True)).triples  # type: ignore[arg-type]
    assert any(p == P.value for _, p, _ in on)
    assert not any(p == P.value for _, p, _ in off)
    assert {t for t in on if t[1] in (O.contentHash, O.byteSize) and ":bundle>" not in t[0]} == {
        t for t in off if t[1] in (O.contentHash, O.byteSize) and ":bundle>" not in t[0]
    }
    assert {(s, o) for s, p, o in on if p == RDF_TYPE} == {
        (s, o) for s, p, o in off if p == RDF_TYPE
    }
    (message,) = [o for _, p, o in off if p == O.errorMessage]
    assert "Atlantis" not in message
    assert "17 runs" in message and "n=7" not in message  # the number 7 is an argument


@pytest.fixture
def no_override() -> Iterator[None]:
    _content.set_override(None)
    yield
    _content.set_override(None)


@pytest.mark.parametrize(
    "env",
    [
        {"OTEL_PROV_CAPTURE_CONTENT": "false"},
        {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"},
    ],
    ids=["capture-off", "genai-no-content"],
)
def test_in_process_no_third_party_content_reaches_the_store(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    no_override: None,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    exporter = RecordingExporter()
    processor = ProvSpanProcessor(
        exporter, schedule_delay=0.05, blob_dir=tmp_path / "blobs", blob_threshold=16
    )
    _run(processor=processor)
    processor.shutdown()
    (record,) = exporter.records
    literals = [o for _, _, o in record.triples]
    assert _leaks(literals) == []
    assert any(p == O.contentHash for _, p, _ in record.triples)  # hashes and sizes stay
    assert '"get_weather"' in literals  # tool names stay
    assert not (tmp_path / "blobs").exists()  # no value over the threshold was written


def test_a_preparer_withholds_by_its_own_flag_or_the_capture_switches(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, no_override: None
) -> None:
    record = make_span(1, input__value="Zanzibar")
    assert not RecordPreparer.from_settings(blob_dir=tmp_path)(record).content_withheld
    assert RecordPreparer.from_settings(blob_dir=tmp_path, content=False)(record).content_withheld
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    assert RecordPreparer.from_settings(blob_dir=tmp_path)(record).content_withheld


_WITHOUT_CONTENT = pytest.mark.parametrize(
    ("flags", "env"),
    [
        (("--no-content",), {}),
        ((), {"OTEL_PROV_CAPTURE_CONTENT": "false"}),
        ((), {"OTEL_PROV_STRIP_CONTENT": "true"}),
    ],
    ids=["flag", "capture-off", "strip-variable"],
)
"""The three ways to keep content out of what ``import`` and ``receive`` store."""


def _store_texts(store: Path) -> list[str]:
    return [str(quad.object) for quad in pyoxigraph.Store.read_only(str(store))]


@_WITHOUT_CONTENT
def test_import_stores_no_content(
    flags: tuple[str, ...], env: dict[str, str], tmp_path: Path
) -> None:
    trace_file, store = tmp_path / "traces.jsonl", tmp_path / "store"
    _run(exporter=OtlpJsonFileExporter(trace_file))
    assert _leaks([trace_file.read_text()]) == list(SECRETS)  # the file holds them all
    done = subprocess.run(
        [*CLI, "import", str(trace_file), "--store", str(store), *flags],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=tmp_path,
        env={**os.environ, **env},
    )
    assert done.returncode == 0, done.stderr
    texts = _store_texts(store)
    assert _leaks(texts) == []
    assert any("sha256:" in text for text in texts)
    assert not (tmp_path / ".otel-prov" / "blobs").exists()


@_WITHOUT_CONTENT
def test_receive_stores_no_content(
    flags: tuple[str, ...], env: dict[str, str], receivers: Receivers, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    receiver = receivers.start(
        "--store", str(store), "--data-dir", str(tmp_path / "data"), "--trace-idle", "0.3",
        *flags, env=env,
    )  # fmt: skip
    _run(exporter=OTLPSpanExporter(endpoint=f"{receiver.http}/v1/traces"))
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 1)
    assert receiver.stop() == 0
    texts = _store_texts(store)
    assert _leaks(texts) == []
    assert any("sha256:" in text for text in texts)
