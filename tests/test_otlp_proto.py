"""OTLP protobuf requests -> span records, the receiver's decoder.

Checked three ways: against an encoder written here from the OTLP protobuf definitions
(every attribute type, defaults left out), against the OpenTelemetry SDK's own encoder
(what its OTLP exporters send), and against the OTLP/JSON reader: the same request in
both encodings gives the same records.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov.demo import run_demo_agent
from otel_prov.prov._otlp_json import InvalidRequestError, parse_otlp_request
from otel_prov.prov._otlp_proto import parse_otlp_proto
from otel_prov.prov._span_record import SpanRecord, record_from_span
from tests.test_import import _KINDS, _hex_ids, span_records

_CODES = {"unset": 0, "ok": 1, "error": 2}


def _any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, str):
        return AnyValue(string_value=value)
    if isinstance(value, bytes):
        return AnyValue(bytes_value=value)
    if isinstance(value, tuple):
        return AnyValue(array_value={"values": [_any_value(item) for item in value]})
    pairs = [KeyValue(key=k, value=_any_value(v)) for k, v in value.items()]
    return AnyValue(kvlist_value={"values": pairs})


def _attributes(attributes: Any) -> list[KeyValue]:
    return [KeyValue(key=k, value=_any_value(v)) for k, v in attributes.items()]


def _span(record: SpanRecord) -> Span:
    return Span(
        trace_id=record.trace_id.to_bytes(16, "big"),
        span_id=record.span_id.to_bytes(8, "big"),
        parent_span_id=b"" if record.parent_id is None else record.parent_id.to_bytes(8, "big"),
        flags=0x300 if record.remote_parent else 0x100,
        name=record.name,
        kind=_KINDS.index(record.kind),  # type: ignore[arg-type]
        start_time_unix_nano=record.start_ns,
        end_time_unix_nano=record.end_ns or 0,
        attributes=_attributes(record.attributes),
        events=[
            Span.Event(time_unix_nano=e.time_ns, name=e.name, attributes=_attributes(e.attributes))
            for e in record.events
        ],
        links=[
            Span.Link(trace_id=t.to_bytes(16, "big"), span_id=s.to_bytes(8, "big"))
            for t, s in record.links
        ],
        status=Status(code=_CODES[record.status], message=record.status_message or ""),  # type: ignore[arg-type]
    )


def encode_request(records: Sequence[SpanRecord]) -> ExportTraceServiceRequest:
    """The spans grouped by service into resource spans, as an SDK exporter sends them."""
    by_service: dict[str | None, list[Span]] = {}
    for record in records:
        by_service.setdefault(record.service_name, []).append(_span(record))
    request = ExportTraceServiceRequest()
    for service, spans in by_service.items():
        resource_spans = ResourceSpans(scope_spans=[ScopeSpans(spans=spans)])
        if service is not None:
            resource_spans.resource.attributes.append(
                KeyValue(key="service.name", value=AnyValue(string_value=service))
            )
        request.resource_spans.append(resource_spans)
    return request


@settings(max_examples=150, deadline=None)
@given(st.lists(span_records(), max_size=6))
def test_span_records_survive_otlp_protobuf_and_back(records: list[SpanRecord]) -> None:
    request = encode_request(records)
    parsed = parse_otlp_proto(request.SerializeToString(), "request")
    assert parsed.problems == () and parsed.skipped == 0
    assert sorted(parsed.spans, key=repr) == sorted(records, key=repr)
    # The same request as OTLP/JSON (hex ids) reads to the same records.
    document = MessageToDict(request, always_print_fields_with_no_presence=True)
    as_json = parse_otlp_request(_hex_ids(document), "request")
    assert as_json.problems == ()
    assert sorted(as_json.spans, key=repr) == sorted(records, key=repr)


def test_what_the_sdk_exporters_send_reads_as_the_spans_they_recorded() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run_demo_agent(tracer_provider=provider)
    spans = exporter.get_finished_spans()
    parsed = parse_otlp_proto(encode_spans(spans).SerializeToString(), "sdk")
    assert parsed.problems == ()
    # An SDK span knows its attribute length limit; a request does not.
    expected = [
        dataclasses.replace(record_from_span(span), truncated=frozenset()) for span in spans
    ]
    assert sorted(parsed.spans, key=repr) == sorted(expected, key=repr)
    assert len(parsed.spans) == 12


GOOD = Span(  # one valid span, for requests that break it
    trace_id=bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
    span_id=bytes.fromhex("b7ad6b7169203331"),
    name="invoke_agent a",
    start_time_unix_nano=1000,
    end_time_unix_nano=2000,
)


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"trace_id": b""}, "r: span 2 has no trace_id; skipped"),
        ({"span_id": b"\x01\x02"}, "r: span 2 has a span_id of 2 bytes, not 8; skipped"),
        ({"span_id": bytes(8)}, "r: span 2 has an all-zero span_id; skipped"),
        ({"parent_span_id": b"\x01"}, "r: span 2 has a parent_span_id of 1 bytes, not 8; skipped"),
        ({"start_time_unix_nano": 0}, "r: span 2 has no start_time_unix_nano; skipped"),
        ({"status": Status(code=7)}, "r: span 2 has status code 7, not 0, 1 or 2; skipped"),  # type: ignore[arg-type]
        (
            {"events": [Span.Event(name="e")]},
            "r: span 2 (b7ad6b7169203331): event 1 has no time_unix_nano; skipped",
        ),
        (
            {"links": [Span.Link(trace_id=b"x", span_id=bytes(8))]},
            "r: span 2 (b7ad6b7169203331): link 1 has a trace_id of 1 bytes, not 16; skipped",
        ),
    ],
)
def test_a_bad_part_is_named_and_counted_and_the_rest_is_read(
    changes: dict[str, Any], problem: str
) -> None:
    bad = Span()
    bad.CopyFrom(GOOD)
    for field, value in changes.items():
        bad.ClearField(field)
        if isinstance(value, list):
            getattr(bad, field).extend(value)
        elif isinstance(value, Status):
            bad.status.CopyFrom(value)
        else:
            setattr(bad, field, value)
    other = Span()
    other.CopyFrom(GOOD)
    other.trace_id = b"\x11" * 16
    request = ExportTraceServiceRequest(
        resource_spans=[ResourceSpans(scope_spans=[ScopeSpans(spans=[other, bad, other])])]
    )
    parsed = parse_otlp_proto(request.SerializeToString(), "r")
    (reported,) = parsed.problems
    assert reported == problem
    span_kept = "(b7ad6b7169203331)" in problem
    assert parsed.skipped == (0 if span_kept else 1)
    assert len(parsed.spans) == (3 if span_kept else 2)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_give_records_or_an_invalid_request_error(data: bytes) -> None:
    try:
        parsed = parse_otlp_proto(data, "fuzz")
    except InvalidRequestError as exc:
        assert str(exc).startswith("fuzz: not an OTLP protobuf trace request")
    else:  # every span takes bytes of its own
        assert len(parsed.spans) + parsed.skipped <= len(data)


def test_a_cut_request_is_invalid() -> None:
    data = encode_request([]).SerializeToString() + b"\x0a\x05ab"
    with pytest.raises(InvalidRequestError):
        parse_otlp_proto(data, "cut")
