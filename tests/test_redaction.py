"""A redacted secret never reaches the OTLP side, the store, the spool, the WAL or the logs."""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

import otel_prov
from otel_prov.capture import _content
from otel_prov.capture._redaction import redact_attributes, redact_span_record
from otel_prov.prov._span_record import record_from_span
from tests.phoenix import Phoenix, start_phoenix

SECRET = "sk-live-4f9a8b7c6d5e"
SECRET_PATTERN = r"sk-live-[0-9a-f]{8,}"


@pytest.fixture(autouse=True)
def _no_redaction_after() -> Iterator[None]:
    yield
    _content.set_redaction(None, ())


def test_patterns_and_hook_clean_content_everywhere(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[r"sk-live-[0-9a-f]+"],
        redact=lambda text: text.replace("alice@example.com", "<email>"),
    )
    otlp_side = InMemorySpanExporter()
    handle.tracer_provider.add_span_processor(SimpleSpanProcessor(otlp_side))
    tp = handle.tracer_provider
    with otel_prov.agent_session(
        "a", question=f"use key {SECRET} for alice@example.com", tracer_provider=tp
    ) as session:
        with (
            otel_prov.iteration(
                1, thought=f"the key is {SECRET}", action="call", tracer_provider=tp
            ),
            otel_prov.tool_call("call", arguments=f'{{"key": "{SECRET}"}}', tracer_provider=tp),
        ):
            (tmp_path / "wal-snapshot").write_text(
                "".join(p.read_text() for p in (tmp_path / "wal").glob("*.jsonl"))
            )
            otel_prov.set_observation(f"echo {SECRET}")
        otel_prov.set_answer(f"done with {SECRET}", span=session)
    handle.shutdown()

    for span in otlp_side.get_finished_spans():
        assert SECRET not in str(dict(span.attributes or {}))
    wal_text = (tmp_path / "wal-snapshot").read_text()
    assert "[REDACTED]" in wal_text and SECRET not in wal_text
    dump = (
        pyoxigraph.Store.read_only(str(tmp_path / "store"))
        .dump(format=pyoxigraph.RdfFormat.N_QUADS)
        .decode()
    )
    assert SECRET not in dump and "alice@example.com" not in dump
    assert "use key [REDACTED] for <email>" in dump
    assert all(SECRET not in record.getMessage() for record in caplog.records)


def test_a_bad_pattern_is_refused_with_its_reason() -> None:
    with pytest.raises(ValueError, match="invalid redaction pattern"):
        _content.set_redaction(None, ["(unclosed"])


def test_the_spool_holds_only_redacted_text(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        sparql_update_endpoint="http://127.0.0.1:9/update",  # nothing listens: all is spooled
        spool_dir=tmp_path / "spool",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[r"sk-live-[0-9a-f]+"],
    )
    with otel_prov.agent_session(
        "a", question=f"key {SECRET}", tracer_provider=handle.tracer_provider
    ):
        pass
    handle.shutdown()
    spooled = "".join(p.read_text() for p in (tmp_path / "spool").glob("*.nq"))
    assert "key [REDACTED]" in spooled and SECRET not in spooled


# --- every span, whoever set its attributes (otel_prov.capture._redaction) ---------------------

_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(max_size=8)
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_KEYS = st.text(alphabet=st.characters(exclude_characters="-"), max_size=20)
_SECRETS = st.from_regex(r"sk-live-[0-9a-f]{8,24}", fullmatch=True)


def _containing(secret: str) -> st.SearchStrategy[Any]:
    """Attribute values with ``secret`` somewhere: in a string, a sequence, a nested map."""
    around = st.builds(lambda before, after: before + secret + after, st.text(), st.text())
    return st.recursive(
        around,
        lambda inner: (
            st.builds(
                lambda before, value, after: (*before, value, *after),
                st.lists(_VALUES, max_size=3),
                inner,
                st.lists(_VALUES, max_size=3),
            )
            | st.builds(
                lambda others, key, value: {**others, key: value},
                st.dictionaries(_KEYS, _VALUES, max_size=3),
                _KEYS,
                inner,
            )
        ),
        max_leaves=4,
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, tuple | list):
        for item in value:
            yield from _strings(item)


@given(data=st.data(), secret=_SECRETS)
def test_a_secret_anywhere_in_any_attribute_never_survives(
    data: st.DataObject, secret: str
) -> None:
    _content.set_redaction(None, [SECRET_PATTERN])
    attributes = data.draw(st.dictionaries(_KEYS, _VALUES, max_size=4))
    attributes[data.draw(_KEYS)] = data.draw(_containing(secret))
    redacted = redact_attributes(attributes)
    assert redacted.keys() == attributes.keys()
    assert not any(secret in text for text in _strings(redacted))
    assert any("[REDACTED]" in text for text in _strings(redacted))


_CLEAN_TEXT = st.text().filter(lambda text: re.search(SECRET_PATTERN, text) is None)
_CLEAN_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _CLEAN_TEXT,
    lambda inner: (
        st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)


@given(st.dictionaries(st.text(), _CLEAN_VALUES, max_size=5))
def test_attributes_without_a_match_are_unchanged(attributes: dict[str, Any]) -> None:
    _content.set_redaction(None, [SECRET_PATTERN])
    assert redact_attributes(attributes) == attributes


@given(data=st.data(), secret=_SECRETS)
def test_redacting_twice_changes_nothing(data: st.DataObject, secret: str) -> None:
    # Our own content attributes were redacted where they were set and pass again on the
    # way out; the second pattern also matches the marker's letters, "REDACTED".
    _content.set_redaction(None, [SECRET_PATTERN, r"[A-Z]{5,}"])
    attributes = data.draw(st.dictionaries(_KEYS, _VALUES | _containing(secret), max_size=5))
    once = redact_attributes(attributes)
    assert redact_attributes(once) == once


def test_without_redaction_everything_passes_as_it_is(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    with provider.get_tracer("t").start_as_current_span("s", attributes={"input.value": SECRET}):
        pass
    spans = exporter.get_finished_spans()
    inner = InMemorySpanExporter()
    otel_prov.RedactingSpanExporter(inner).export(spans)
    assert inner.get_finished_spans()[0] is spans[0]
    attributes = dict(spans[0].attributes or {})
    assert redact_attributes(attributes) is attributes
    record = record_from_span(spans[0])
    assert redact_span_record(record) is record


def _third_party_span(provider: TracerProvider) -> None:
    """Content set straight on the span, as OpenInference, OpenLLMetry and GenAI do."""
    tracer = provider.get_tracer("openinference.instrumentation.fake", "1.0")
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": SECRET}]}])
    with tracer.start_as_current_span("agent", kind=SpanKind.SERVER) as parent:
        link = Link(parent.get_span_context(), {"link.note": "kept as it is"})
        with tracer.start_as_current_span(
            "chat model",
            kind=SpanKind.CLIENT,
            links=[link],
            attributes={
                "openinference.span.kind": "LLM",
                "input.value": f"my key is {SECRET}",
                "llm.input_messages.0.message.content": f"key {SECRET}",
                "traceloop.entity.input": json.dumps({"key": SECRET}),
                "gen_ai.input.messages": messages,
                "gen_ai.system_instructions": f"never say {SECRET}",
                "gen_ai.prompt.0.content": [f"a {SECRET}", "b"],
                "gen_ai.usage.input_tokens": 12,
            },
        ) as span:
            span.add_event(
                "gen_ai.client.inference.operation.details",
                {"gen_ai.output.messages": messages, "gen_ai.tool.call.result": SECRET},
            )
            span.set_attribute("output.value", f"echo {SECRET}")
            span.set_status(Status(StatusCode.ERROR, f"rejected {SECRET}"))


def test_third_party_content_is_redacted_and_the_rest_of_the_span_kept(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[SECRET_PATTERN],
    )
    provider = TracerProvider(
        resource=Resource.create({"service.name": "svc"}),
        span_limits=SpanLimits(max_span_attributes=7),
    )
    plain, redacted = InMemorySpanExporter(), InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(plain))
    provider.add_span_processor(SimpleSpanProcessor(otel_prov.RedactingSpanExporter(redacted)))
    _third_party_span(provider)
    handle.shutdown()

    originals = plain.get_finished_spans()
    copies = redacted.get_finished_spans()
    assert SECRET in str([s.to_json() for s in originals])  # other exporters keep theirs
    dump = str([s.to_json() for s in copies])
    assert SECRET not in dump and "[REDACTED]" in dump
    chat, original = copies[0], originals[0]
    assert chat.attributes is not None
    assert chat.attributes["output.value"] == "echo [REDACTED]"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 12
    assert chat.status.description == "rejected [REDACTED]"
    event = dict(chat.events[0].attributes or {})
    assert event["gen_ai.tool.call.result"] == "[REDACTED]"
    assert json.loads(event["gen_ai.output.messages"])[0]["parts"][0]["content"] == "[REDACTED]"
    assert chat.dropped_attributes == original.dropped_attributes == 2
    for copy, span in zip(copies, originals, strict=True):
        assert (copy.name, copy.context, copy.parent, copy.kind) == (
            span.name,
            span.context,
            span.parent,
            span.kind,
        )
        assert (copy.start_time, copy.end_time, copy.status.status_code) == (
            span.start_time,
            span.end_time,
            span.status.status_code,
        )
        assert copy.resource is span.resource
        assert copy.links == span.links
        assert copy.instrumentation_scope == span.instrumentation_scope
        assert (copy.dropped_events, copy.dropped_links) == (
            span.dropped_events,
            span.dropped_links,
        )


def test_a_record_is_redacted_for_the_provenance_side(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    _content.set_redaction(None, [SECRET_PATTERN])
    _third_party_span(provider)
    record = record_from_span(exporter.get_finished_spans()[0])
    redacted = redact_span_record(record)
    assert SECRET in repr(record)
    assert SECRET not in repr(redacted)
    assert redacted.attributes["input.value"] == "my key is [REDACTED]"
    assert redacted.events[0].attributes["gen_ai.tool.call.result"] == "[REDACTED]"
    assert redacted.status_message == "rejected [REDACTED]"
    assert (redacted.span_id, redacted.role, redacted.links) == (
        record.span_id,
        record.role,
        record.links,
    )


def test_a_failing_hook_drops_the_batch_rather_than_leak_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(text: str) -> str:
        raise RuntimeError("hook bug")

    _content.set_redaction(broken, ())
    provider = TracerProvider()
    inner = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(otel_prov.RedactingSpanExporter(inner)))
    with provider.get_tracer("t").start_as_current_span("s", attributes={"input.value": SECRET}):
        pass
    assert inner.get_finished_spans() == ()
    assert "redaction failed" in caplog.text


def test_configure_wraps_its_otlp_exporter_when_redaction_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_PROTOCOL", raising=False)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", raising=False)
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        set_global=False,
        redact_patterns=[SECRET_PATTERN],
    )
    processors = handle.tracer_provider._active_span_processor._span_processors
    (batch,) = [p for p in processors if isinstance(p, BatchSpanProcessor)]
    wrapper = batch._batch_processor._exporter
    assert isinstance(wrapper, otel_prov.RedactingSpanExporter)
    assert isinstance(wrapper.exporter, OTLPSpanExporter)
    handle.shutdown()


def test_zero_code_exporters_are_wrapped(tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(
        "from opentelemetry import trace\n"
        'with trace.get_tracer("third-party").start_as_current_span(\n'
        f'    "chat", attributes={{"input.value": "key {SECRET}"}}\n'
        "):\n"
        "    pass\n"
    )
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("OTEL_PROV_", "OTEL_EXPORTER_OTLP_"))
    }
    env.update(
        OTEL_PYTHON_CONFIGURATOR="otel_prov",
        OTEL_TRACES_EXPORTER="console",
        OTEL_METRICS_EXPORTER="none",
        OTEL_LOGS_EXPORTER="none",
        OTEL_PROV_REDACT_PATTERNS=json.dumps([SECRET_PATTERN]),
    )
    instrument = Path(sys.executable).parent / "opentelemetry-instrument"
    run = subprocess.run(
        [str(instrument), sys.executable, str(script)],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert '"input.value": "key [REDACTED]"' in run.stdout
    assert SECRET not in run.stdout


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    started = start_phoenix(tmp_path_factory.mktemp("phoenix"))
    yield started
    started.stop()


@pytest.mark.integration
def test_a_real_otlp_receiver_never_sees_the_secret(
    phoenix: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", phoenix.otlp_http_traces)
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "openinference.project.name=redaction")
    handle = otel_prov.configure(
        store=tmp_path / "store",
        wal_dir=tmp_path / "wal",
        set_global=False,
        otlp=True,
        redact_patterns=[SECRET_PATTERN],
    )
    _third_party_span(handle.tracer_provider)
    handle.shutdown()
    stored = phoenix.spans("redaction", expected=2, timeout=90)
    assert SECRET not in json.dumps(stored)
    (chat,) = [span for span in stored if span["name"] == "chat model"]
    assert chat["attributes"]["input.value"] == "my key is [REDACTED]"
    assert chat["status_message"] == "rejected [REDACTED]"
    (event,) = chat["events"]
    assert event["attributes"]["gen_ai.tool.call.result"] == "[REDACTED]"


def test_third_party_secrets_never_reach_the_store_the_wal_or_the_blobs(tmp_path: Path) -> None:
    """The provenance side of third-party spans: the processor redacts before it maps,
    moves big values to blobs or writes the write-ahead log."""
    _content.set_redaction(None, [SECRET_PATTERN])
    store, wal, blobs = tmp_path / "store", tmp_path / "wal", tmp_path / "blobs"
    provider = TracerProvider()
    processor = otel_prov.ProvSpanProcessor(
        otel_prov.exporters.OxigraphStoreExporter(store),
        wal_dir=wal,
        blob_dir=blobs,
        blob_threshold=1024,
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("openinference-like")
    agent = {"openinference.span.kind": "AGENT", "input.value": f"use {SECRET}"}
    tool = {"openinference.span.kind": "TOOL", "tool.name": "t", "input.value": SECRET}
    with (
        tracer.start_as_current_span("agent", attributes=agent),
        tracer.start_as_current_span("tool", attributes=tool) as span,
    ):
        wal_text = "".join(p.read_text() for p in wal.rglob("*") if p.is_file())
        assert "[REDACTED]" in wal_text and SECRET not in wal_text
        span.set_attribute("output.value", f"{SECRET} " + "x" * 4096)  # goes to a blob
    provider.shutdown()
    db = pyoxigraph.Store.read_only(str(store))
    dump = "".join(str(quad) for quad in db)
    assert "[REDACTED]" in dump and SECRET not in dump
    blob_text = "".join(p.read_text() for p in blobs.rglob("*") if p.is_file())
    assert blob_text.startswith("[REDACTED] xxx") and SECRET not in blob_text


def test_bad_redaction_patterns_in_the_environment_are_named(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OTEL_PROV_REDACT_PATTERNS", "sk-.*")
    with pytest.raises(ValueError, match="OTEL_PROV_REDACT_PATTERNS must be a JSON array"):
        _content.patterns_from_environment()
    monkeypatch.setenv("OTEL_PROV_REDACT_PATTERNS", '["(unclosed"]')
    with pytest.raises(ValueError, match="invalid redaction pattern"):
        otel_prov.configure(exporter=otel_prov.exporters.FileExporter(tmp_path / "p.nq"))
