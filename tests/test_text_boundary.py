"""Any text an agent produces survives the trip: span -> WAL -> blobs -> mapper -> store -> read.

Python strings may hold lone surrogates (``surrogateescape``, ``json.loads('"\\ud83d"')``),
which no UTF-8 encoder accepts.  They are replaced with U+FFFD once, where a span becomes a
record, so the value, its hash, its blob and its WAL line agree.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

import otel_prov
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._wal import IntentLog, recover_intents
from otel_prov.prov._otlp_json import parse_otlp_json
from otel_prov.prov._span_record import SpanEvent, clean_record, clean_text, record_from_span
from otel_prov.read._assembly import load_session
from otel_prov.read._verify import verify_sessions
from tests.builders import CountingIds

GRAPH = "<urn:otel-prov:graph>"

# Every code point, surrogates included (``st.characters`` leaves them out), and surrogates
# often enough that most examples hold one.
every_code_point = st.lists(
    st.integers(0, 0x10FFFF).map(chr) | st.integers(0xD800, 0xDFFF).map(chr), max_size=40
).map("".join)


@given(every_code_point)
def test_clean_text_is_utf8_encodable_idempotent_and_changes_only_surrogates(text: str) -> None:
    cleaned = clean_text(text)
    cleaned.encode("utf-8")
    assert clean_text(cleaned) == cleaned
    assert len(cleaned) <= len(text)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert cleaned is text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("a\ud800b", "a\ufffdb"),
        ("\udfff", "\ufffd"),
        ("x\udbff\udc00y", "x\U0010fc00y"),  # a pair spelled as two code points is one character
        (json.loads('"\\ud83d"'), "\ufffd"),
        (b"caf\xe9".decode("utf-8", "surrogateescape"), "caf\ufffd"),
    ],
)
def test_lone_surrogates_become_one_replacement_character(raw: str, expected: str) -> None:
    assert clean_text(raw) == expected


@given(every_code_point, every_code_point)
def test_an_sdk_span_is_snapshot_as_clean_record_makes_it(name: str, value: str) -> None:
    """record_from_span cleans as it builds (no second copy): the same record as
    clean_record over the span's raw snapshot."""
    provider = TracerProvider()
    span = provider.get_tracer("t").start_span(
        name or "span", attributes={"otel_prov.question": value, "k": (value, "x")}
    )
    span.add_event(value or "event", {"k": value})
    span.set_status(Status(StatusCode.ERROR, value))
    span.end()
    record = record_from_span(span)
    raw = dataclasses.replace(
        record,
        name=span.name,
        status_message=span.status.description,
        attributes=dict(span.attributes or {}),
        events=tuple(SpanEvent(e.name, e.timestamp, dict(e.attributes or {})) for e in span.events),
    )
    assert record == clean_record(raw)
    assert record_from_span(span, ended=False) == dataclasses.replace(record, end_ns=None)


@pytest.fixture
def pipeline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[TracerProvider, Path]]:
    store = tmp_path / "store"
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))  # where readers look
    # Hypothesis seeds ``random`` per example, and so the SDK's ids: count them instead.
    provider = TracerProvider(id_generator=CountingIds())
    processor = otel_prov.ProvSpanProcessor(
        OxigraphStoreExporter(store),
        wal_dir=tmp_path / "wal",
        blob_dir=tmp_path / "blobs",
        blob_threshold=64,
    )
    provider.add_span_processor(processor)
    yield provider, store
    provider.shutdown()


def test_any_text_in_every_content_field_keeps_the_session(
    pipeline: tuple[TracerProvider, Path],
) -> None:
    provider, store = pipeline
    texts: list[str] = []

    @settings(
        max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
    )
    @given(every_code_point, st.booleans())
    def run(text: str, big: bool) -> None:
        value = text * 10 if big else text  # over the blob threshold half of the time
        with otel_prov.agent_session("probe", question=value, tracer_provider=provider):
            step = otel_prov.iteration(1, thought=value, action="lookup", tracer_provider=provider)
            call = otel_prov.tool_call("lookup", arguments={"q": value}, tracer_provider=provider)
            with step, call:
                otel_prov.set_observation(value)
            otel_prov.set_answer(value)
        texts.append(value)

    run()
    assert provider.force_flush(10_000)
    provider.shutdown()

    backend = EmbeddedBackend(store)
    ids = _all_sessions(backend)
    assert len(ids) == len(texts), "a session vanished"
    questions = sorted(load_session(backend, GRAPH, s, full=True).question or "" for s in ids)
    assert questions == sorted(clean_text(t) for t in texts)
    checks = verify_sessions(backend, GRAPH, None)
    assert [c for c in checks if not c.ok] == []


def _all_sessions(backend: EmbeddedBackend) -> list[str]:
    rows = backend.query(
        f"""PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?s WHERE {{ GRAPH {GRAPH} {{ ?s a oprov:AgentSession }} }}"""
    ).rows
    return [str(row["s"]) for row in rows]


def test_a_tool_call_intent_with_surrogates_is_logged_and_recovered(tmp_path: Path) -> None:
    wal = IntentLog(tmp_path)
    provider = TracerProvider()
    with provider.get_tracer("t").start_as_current_span(
        "execute_tool probe",
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "probe\udc80",
            "gen_ai.tool.call.arguments": '{"q": "\ud83d"}',
        },
    ) as span:
        wal.intent(span, "svc")
    os.close(wal._fd)  # the process dies: the intent stays pending
    (record,) = [r for r in recover_intents(tmp_path)[0] if r.attributes]
    assert record.attributes["gen_ai.tool.name"] == "probe\ufffd"
    assert record.attributes["gen_ai.tool.call.arguments"] == '{"q": "\ufffd"}'


def test_an_otlp_file_with_an_escaped_lone_surrogate_is_read_cleaned() -> None:
    document = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "0af7651916cd43dd8448eb211c80319c",
                                "spanId": "b7ad6b7169203331",
                                "name": "invoke_agent a",
                                "startTimeUnixNano": "1",
                                "endTimeUnixNano": "2",
                                "attributes": [
                                    {"key": "otel_prov.question", "value": {"stringValue": "X"}}
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    text = json.dumps(document).replace('"X"', '"\\ud83d and \\udc00"')
    (record,) = parse_otlp_json(text, "spans.json").spans
    assert record.attributes["otel_prov.question"] == "\ufffd and \ufffd"
