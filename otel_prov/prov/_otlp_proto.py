"""OTLP protobuf trace requests -> span records: what ``otel-prov receive`` reads.

The input is a serialized ``ExportTraceServiceRequest``, the body of OTLP/gRPC
``TraceService/Export`` and of OTLP/HTTP ``POST /v1/traces`` with
``application/x-protobuf``.  The rules are those of the OTLP/JSON reader
(:mod:`otel_prov.prov._otlp_json`) with the protobuf encoding's own shapes: ids are raw
bytes (16 for a trace, 8 for a span; all zeros is no id), a field at its default value
is absent (no parent: a root span; an end time of 0: a span that never ended, mapped
``incomplete``), and an attribute whose ``AnyValue`` holds nothing is left out.  Both
readers give the same records for the same spans (a test holds them to it).

Pure: bytes in, records and problems out.  Bytes that are not a protobuf request raise
:class:`~otel_prov.prov._otlp_json.InvalidRequestError` (an OTLP receiver answers them
with HTTP 400 or gRPC INVALID_ARGUMENT); anything else wrong is one problem each and
only the broken part is left out, so that the receiver can answer with
``partial_success``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from google.protobuf.message import DecodeError
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from otel_prov.prov._iris import span_hex
from otel_prov.prov._otlp_json import InvalidRequestError, ParsedSpans
from otel_prov.prov._span_record import (
    OTLP_SPAN_KINDS,
    SpanEvent,
    SpanRecord,
    classify,
    clean_record,
    parent_is_remote,
)
from otel_prov.semconv import SERVICE_NAME

__all__ = ["parse_otlp_proto"]

_STATUS = {0: "unset", 1: "ok", 2: "error"}


class _Invalid(ValueError):
    """One part of a request breaks the OTLP rules; the message says how, after its subject."""


def parse_otlp_proto(data: bytes, source: str) -> ParsedSpans:
    """Every span in the serialized request ``data``; ``source`` names it in problems."""
    try:
        request = ExportTraceServiceRequest.FromString(data)
    except DecodeError as exc:
        raise InvalidRequestError(f"{source}: not an OTLP protobuf trace request: {exc}") from exc
    return parse_otlp_message(request, source)


def parse_otlp_message(request: ExportTraceServiceRequest, source: str) -> ParsedSpans:
    """Every span in a request that gRPC has already deserialized."""
    spans: list[SpanRecord] = []
    problems: list[str] = []
    number = 0
    for index, resource_spans in enumerate(request.resource_spans, 1):
        service = _service_name(resource_spans.resource, f"{source}: resource {index}", problems)
        for scope_spans in resource_spans.scope_spans:
            for raw in scope_spans.spans:
                number += 1
                record = _span(raw, service, f"{source}: span {number}", problems)
                if record is not None:
                    spans.append(record)
    return ParsedSpans(tuple(spans), tuple(problems), number - len(spans))


def _service_name(resource: Resource, where: str, problems: list[str]) -> str | None:
    """The resource's ``service.name``; its other attributes do not reach the provenance."""
    for item in resource.attributes:
        if item.key == SERVICE_NAME:
            if item.value.WhichOneof("value") == "string_value":
                return item.value.string_value
            problems.append(f"{where}: {SERVICE_NAME} is no string_value; left out")
    return None


def _span(raw: Span, service: str | None, where: str, problems: list[str]) -> SpanRecord | None:
    try:
        trace_id = _id(raw.trace_id, "trace_id", 16)
        span_id = _id(raw.span_id, "span_id", 8)
        parent_id = _parent_id(raw.parent_span_id)
        if not raw.start_time_unix_nano:
            raise _Invalid("has no start_time_unix_nano")
        status = _STATUS.get(raw.status.code)
        if status is None:
            raise _Invalid(f"has status code {raw.status.code}, not 0, 1 or 2")
    except _Invalid as exc:
        problems.append(f"{where} {exc}; skipped")
        return None
    where = f"{where} ({span_hex(span_id)})"
    attributes = _attributes(raw.attributes)
    return clean_record(
        SpanRecord(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=parent_id,
            name=raw.name,
            start_ns=raw.start_time_unix_nano,
            end_ns=raw.end_time_unix_nano or None,
            status=status,
            status_message=raw.status.message or None,
            attributes=attributes,
            events=tuple(_events(raw, where, problems)),
            links=tuple(_links(raw, where, problems)),
            service_name=service,
            role=classify(attributes, root=parent_id is None, name=raw.name),
            kind=OTLP_SPAN_KINDS.get(raw.kind, "unspecified"),
            remote_parent=parent_id is not None and parent_is_remote(raw.flags),
        )
    )


def _id(value: bytes, key: str, size: int) -> int:
    """A trace or span id; all zeros is no valid id (W3C trace context)."""
    if not value:
        raise _Invalid(f"has no {key}")
    if len(value) != size:
        raise _Invalid(f"has a {key} of {len(value)} bytes, not {size}")
    number = int.from_bytes(value, "big")
    if number == 0:
        raise _Invalid(f"has an all-zero {key}")
    return number


def _parent_id(value: bytes) -> int | None:
    """Absent (a root span) or, from lenient producers, all zeros: no parent."""
    if not value:
        return None
    if len(value) != 8:
        raise _Invalid(f"has a parent_span_id of {len(value)} bytes, not 8")
    return int.from_bytes(value, "big") or None


def _attributes(items: Iterable[KeyValue]) -> dict[str, Any]:
    """Attributes by key (the last of duplicates wins); an empty value is left out.  The
    protobuf decoder has checked every type already: nothing here can be malformed."""
    attributes: dict[str, Any] = {}
    for item in items:
        value = _any_value(item.value)
        if value is not None:
            attributes[item.key] = value
    return attributes


def _any_value(raw: AnyValue) -> Any:
    """An ``AnyValue`` as the SDK holds attribute values: arrays as tuples, kvlists as
    dicts, bytes as bytes; ``None`` when empty (no value)."""
    kind = raw.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return tuple(_any_value(item) for item in raw.array_value.values)
    if kind == "kvlist_value":
        return {item.key: _any_value(item.value) for item in raw.kvlist_value.values}
    return getattr(raw, kind)


def _events(raw: Span, where: str, problems: list[str]) -> Iterator[SpanEvent]:
    for index, event in enumerate(raw.events, 1):
        here = f"{where}: event {index}"
        if not event.time_unix_nano:
            problems.append(f"{here} has no time_unix_nano; skipped")
            continue
        yield SpanEvent(event.name, event.time_unix_nano, _attributes(event.attributes))


def _links(raw: Span, where: str, problems: list[str]) -> Iterator[tuple[int, int]]:
    for index, link in enumerate(raw.links, 1):
        try:
            ids = _id(link.trace_id, "trace_id", 16), _id(link.span_id, "span_id", 8)
        except _Invalid as exc:
            problems.append(f"{where}: link {index} {exc}; skipped")
            continue
        yield ids
