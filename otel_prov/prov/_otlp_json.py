"""OTLP/JSON trace files -> span records: what ``otel-prov import`` reads.

The input is the OTLP/JSON encoding of ``ExportTraceServiceRequest``
(https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding) as the OpenTelemetry
Collector's ``file`` exporter writes it, one request per line (JSON Lines), or a single
document, pretty-printed or not (several concatenated documents work too).  As that
encoding says: trace and span ids are hex strings (case-insensitive; not base64 as in
the generic protobuf JSON mapping), 64-bit integers (times, ``intValue``) are decimal
strings or numbers, enums are integers (their names are accepted too), field names are
lowerCamelCase and unknown fields are ignored, and a field at its default value may be
left out: a root span has no ``parentSpanId``, an unset status is ``{}`` or absent, a
span without ``endTimeUnixNano`` (or with 0) never ended and is mapped ``incomplete``.

Pure: text in, records and problems out, so that every rule is tested without files.
Nothing here raises on bad input (:func:`parse_otlp_json_body`, for a request body,
raises :class:`InvalidRequestError` only, for a body that is not a JSON object at all).
Each problem names the source, the line the JSON value starts on and what is wrong
(``traces.jsonl:12: span 3 has no traceId; skipped``), and only the broken part is left
out: a line that is not JSON (or nested too deep for Python's recursion limit to read),
a span without valid ids, start time or status, or one attribute, event or link of the
wrong shape.  After invalid JSON, reading resumes at the next line that starts with
``{``.  Hostile input is bounded: a number of any length is read without ``int()``
(which refuses more than 4,300 digits) and is out of the 64-bit range when it is long,
and an attribute value nested more than 64 arrays or kvlists deep (deeper than any
OTLP/protobuf request can carry) is left out.

What a file cannot tell: the attribute length limit of the SDK that recorded the span,
so ``SpanRecord.truncated`` stays empty; and a top-level attribute whose ``AnyValue`` is
empty (no value at all, which no SDK records) is left out without a problem.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from otel_prov.prov._iris import span_hex
from otel_prov.prov._span_record import (
    OTLP_SPAN_KINDS,
    SpanEvent,
    SpanRecord,
    classify,
    clean_record,
    clean_text,
    parent_is_remote,
)
from otel_prov.semconv import SERVICE_NAME

__all__ = [
    "InvalidRequestError",
    "ParsedSpans",
    "parse_otlp_json",
    "parse_otlp_json_body",
    "parse_otlp_request",
]

_VALUE_START = re.compile(r"[^ \t\n\r]")
_RESUME = re.compile(r"\n(?=\{)")
_HEX = re.compile(r"[0-9a-fA-F]+")
_UNSIGNED = re.compile(r"[0-9]+")
_SIGNED = re.compile(r"-?[0-9]+")
_NON_FINITE = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
_STATUS = {
    0: "unset",
    1: "ok",
    2: "error",
    "STATUS_CODE_UNSET": "unset",
    "STATUS_CODE_OK": "ok",
    "STATUS_CODE_ERROR": "error",
}
_VALUE_KINDS = (
    "stringValue",
    "boolValue",
    "intValue",
    "doubleValue",
    "arrayValue",
    "kvlistValue",
    "bytesValue",
)
_INT64 = range(-(1 << 63), 1 << 63)
_UINT64 = range(1 << 64)
_MAX_DIGITS = 20
"""Of 2**64 - 1; an integer with more digits is out of range, and is never converted."""
_MAX_DEPTH = 64
"""AnyValues nested in one another at most (protobuf's decoders stop before 50)."""


class InvalidRequestError(ValueError):
    """A request body that is not an OTLP trace request at all (an OTLP receiver answers
    it with HTTP 400 or gRPC INVALID_ARGUMENT); the message starts with the source."""


@dataclass(frozen=True, slots=True)
class _LongNumber:
    """A JSON integer with more digits than any 64-bit one: kept as its text, so that
    reading it cannot fail, and refused where an integer is expected."""

    text: str

    @property
    def digits(self) -> int:
        return len(self.text.lstrip("-"))


def _json_int(text: str) -> int | _LongNumber:
    return int(text) if len(text) <= _MAX_DIGITS else _LongNumber(text)


_DECODER = json.JSONDecoder(parse_int=_json_int)


@dataclass(frozen=True, slots=True)
class ParsedSpans:
    """The spans read from one source, and what could not be read (one message each)."""

    spans: tuple[SpanRecord, ...]
    problems: tuple[str, ...]
    skipped: int = 0
    """Spans found in the input and left out for a problem: what an OTLP receiver reports
    as ``rejected_spans`` (spans in a part that is not even JSON are not counted)."""


class _Invalid(ValueError):
    """One part of the input is not OTLP/JSON; the message says how, after its subject."""


def parse_otlp_json(text: str, source: str) -> ParsedSpans:
    """Every span in ``text``; ``source`` names it in problems (a file name, ``-``)."""
    spans: list[SpanRecord] = []
    problems: list[str] = []
    skipped = 0
    for line, document in _documents(text.removeprefix("\ufeff")):
        where = f"{source}:{line}"
        if isinstance(document, json.JSONDecodeError):
            problems.append(
                f"{where}: invalid JSON: {document.msg} (line {document.lineno}, column "
                f"{document.colno}); skipped"
            )
        elif isinstance(document, RecursionError):
            problems.append(f"{where}: JSON nested too deep to read; skipped")
        else:
            found, left_out = _request(document, where, problems)
            spans.extend(found)
            skipped += left_out
    return ParsedSpans(tuple(spans), tuple(problems), skipped)


def parse_otlp_json_body(body: bytes, source: str) -> ParsedSpans:
    """The spans of one OTLP/HTTP JSON request body; :class:`InvalidRequestError` when it
    is no JSON object (refused whole), while spans that are bad are problems."""
    try:
        document = json.loads(body, parse_int=_json_int)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        problem = "nested too deep to read" if isinstance(exc, RecursionError) else exc
        raise InvalidRequestError(clean_text(f"{source}: not JSON: {problem}")) from exc
    if not isinstance(document, dict):
        raise InvalidRequestError(f"{source}: not an OTLP trace request (a JSON object)")
    return parse_otlp_request(document, source)


def parse_otlp_request(document: Any, source: str) -> ParsedSpans:
    """The spans of one request already read as JSON."""
    problems: list[str] = []
    spans, skipped = _request(document, source, problems)
    return ParsedSpans(tuple(spans), tuple(problems), skipped)


def _documents(text: str) -> Iterator[tuple[int, Any]]:
    """(line it starts on, value) for each JSON value in ``text``; the value is the
    ``JSONDecodeError`` for one that does not parse, a ``RecursionError`` for one nested
    too deep to."""
    position, line = 0, 1
    while (found := _VALUE_START.search(text, position)) is not None:
        start = found.start()
        line += text.count("\n", position, start)
        try:
            value, end = _DECODER.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError) as exc:
            value = exc
            resume = _RESUME.search(text, start)
            end = resume.start() if resume else len(text)
        yield line, value
        line += text.count("\n", start, end)
        position = end


def _shown(value: Any) -> str:
    """A value as it appears in the input, cut short for a one-line message (and with
    any lone surrogate replaced: the message must be writable)."""
    if isinstance(value, _LongNumber):
        return f"{value.text[:8]}... ({value.digits} digits)"
    try:
        text = json.dumps(value, ensure_ascii=False, default=_shown)
    except RecursionError:
        text = f"a {type(value).__name__} nested too deep to show"
    return clean_text(text if len(text) <= 40 else text[:37] + "...")


def _request(document: Any, where: str, problems: list[str]) -> tuple[list[SpanRecord], int]:
    """The spans of one export request, and how many of its spans were left out."""
    if not isinstance(document, dict):
        problems.append(f"{where}: not an OTLP trace export (a JSON object); skipped")
        return [], 0
    if document and "resourceSpans" not in document:
        problems.append(
            f"{where}: no resourceSpans: not an OTLP trace export (logs or metrics?); skipped"
        )
        return [], 0
    spans: list[SpanRecord] = []
    number = 0
    for index, resource_spans in enumerate(_list(document, "resourceSpans", where, problems), 1):
        if not isinstance(resource_spans, dict):
            problems.append(f"{where}: resourceSpans {index} is not an object; skipped")
            continue
        service = _service_name(resource_spans, f"{where}: resource {index}", problems)
        for scope_spans in _list(resource_spans, "scopeSpans", where, problems):
            if not isinstance(scope_spans, dict):
                problems.append(f"{where}: resource {index}: a scopeSpans is no object; skipped")
                continue
            for raw in _list(scope_spans, "spans", where, problems):
                number += 1
                record = _span(raw, service, f"{where}: span {number}", problems)
                if record is not None:
                    spans.append(record)
    return spans, number - len(spans)


def _list(parent: dict[str, Any], key: str, where: str, problems: list[str]) -> list[Any]:
    """``parent[key]`` as a list: absent (an empty repeated field) or null is empty."""
    value = parent.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        problems.append(f"{where}: {key} is {_shown(value)}, not a list; skipped")
        return []
    return value


def _service_name(resource_spans: dict[str, Any], where: str, problems: list[str]) -> str | None:
    """The resource's ``service.name``; its other attributes do not reach the provenance."""
    resource = resource_spans.get("resource") or {}
    attributes = resource.get("attributes") if isinstance(resource, dict) else None
    for item in attributes if isinstance(attributes, list) else []:
        if isinstance(item, dict) and item.get("key") == SERVICE_NAME:
            value = item.get("value")
            name = value.get("stringValue") if isinstance(value, dict) else None
            if isinstance(name, str):
                return name
            problems.append(f"{where}: {SERVICE_NAME} {_shown(value)} is no stringValue; left out")
    return None


def _span(raw: Any, service: str | None, where: str, problems: list[str]) -> SpanRecord | None:
    if not isinstance(raw, dict):
        problems.append(f"{where} is not a JSON object; skipped")
        return None
    try:
        trace_id = _id(raw, "traceId", 32)
        span_id = _id(raw, "spanId", 16)
        parent_id = _parent_id(raw)
        start_ns = _nanos(raw, "startTimeUnixNano")
        end_ns = _nanos(raw, "endTimeUnixNano") if _given(raw, "endTimeUnixNano") else None
        status, message = _status(raw.get("status"))
        name = raw.get("name", "")
        if not isinstance(name, str):
            raise _Invalid(f"has name {_shown(name)}, not a string")
    except _Invalid as exc:
        problems.append(f"{where} {exc}; skipped")
        return None
    where = f"{where} ({span_hex(span_id)})"
    attributes = _attributes(raw, where, problems)
    return clean_record(
        SpanRecord(
            trace_id=trace_id,
            span_id=span_id,
            parent_id=parent_id,
            name=name,
            start_ns=start_ns,
            end_ns=end_ns,
            status=status,
            status_message=message,
            attributes=attributes,
            events=tuple(_events(raw, where, problems)),
            links=tuple(_links(raw, where, problems)),
            service_name=service,
            role=classify(attributes, root=parent_id is None, name=name),
            kind=_kind(raw.get("kind")),
            remote_parent=parent_id is not None and parent_is_remote(_flags(raw)),
        )
    )


def _kind(value: Any) -> str:
    """The span kind, from its number or name; one the reader does not know says nothing
    the mapper needs, so it is ``unspecified`` rather than a reason to skip the span."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        return "unspecified"
    return OTLP_SPAN_KINDS.get(value, "unspecified")


def _flags(raw: dict[str, Any]) -> int:
    """``flags`` (a fixed32: a JSON number, or a decimal string from some writers); 0 when
    absent or unreadable, which says nothing about the parent."""
    value = raw.get("flags", 0)
    if isinstance(value, str) and len(value) <= _MAX_DIGITS and _UNSIGNED.fullmatch(value):
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _given(raw: dict[str, Any], key: str) -> bool:
    """Is the field there with a value other than its default?  proto3 JSON may leave a
    default out or write it: ``""`` for ids, ``0`` for times."""
    value = raw.get(key)
    if isinstance(value, bool):
        return True  # no default of any field here: given, and found invalid by its reader
    return value not in (None, "", "0", 0)


def _hex(raw: dict[str, Any], key: str, digits: int) -> int:
    if not _given(raw, key):
        raise _Invalid(f"has no {key}")
    value = raw[key]
    if not (isinstance(value, str) and len(value) == digits and _HEX.fullmatch(value)):
        raise _Invalid(
            f"has {key} {_shown(value)}, not {digits} hex digits (OTLP/JSON ids are hex, "
            "not base64)"
        )
    return int(value, 16)


def _id(raw: dict[str, Any], key: str, digits: int) -> int:
    """A trace or span id; all zeros is no valid id (W3C trace context)."""
    number = _hex(raw, key, digits)
    if number == 0:
        raise _Invalid(f"has an all-zero {key}")
    return number


def _parent_id(raw: dict[str, Any]) -> int | None:
    """Absent (a root span) or, from lenient producers, all zeros: no parent."""
    return (_hex(raw, "parentSpanId", 16) or None) if _given(raw, "parentSpanId") else None


def _nanos(raw: dict[str, Any], key: str) -> int:
    """Nanoseconds since the epoch (a fixed64: a decimal string or a number)."""
    if not _given(raw, key):
        raise _Invalid(f"has no {key}")
    return _integer(raw[key], key, signed=False)


def _integer(value: Any, what: str, *, signed: bool) -> int:
    """A 64-bit integer written as a JSON number or a decimal string."""
    pattern, bounds = (_SIGNED, _INT64) if signed else (_UNSIGNED, _UINT64)
    if isinstance(value, str) and pattern.fullmatch(value):
        if len(value.lstrip("-").lstrip("0")) > _MAX_DIGITS:
            raise _Invalid(f"has {what} of {len(value.lstrip('-'))} digits, {_OUT_OF_RANGE}")
        number = int(value)
    elif isinstance(value, _LongNumber):
        raise _Invalid(f"has {what} of {value.digits} digits, {_OUT_OF_RANGE}")
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise _Invalid(f"has {what} {_shown(value)}, not an integer")
    if number not in bounds:
        raise _Invalid(f"has {what} {value}, {_OUT_OF_RANGE}")
    return number


_OUT_OF_RANGE = "out of the 64-bit range"


def _status(raw: Any) -> tuple[str, str | None]:
    if raw is None:
        return "unset", None
    if not isinstance(raw, dict):
        raise _Invalid(f"has status {_shown(raw)}, not an object")
    code = raw.get("code", 0)
    if isinstance(code, bool) or not isinstance(code, int | str) or code not in _STATUS:
        raise _Invalid(f"has status code {_shown(code)}, not 0, 1, 2 or a STATUS_CODE_ name")
    message = raw.get("message")
    if message is not None and not isinstance(message, str):
        raise _Invalid(f"has status message {_shown(message)}, not a string")
    return _STATUS[code], message or None


def _attributes(raw: dict[str, Any], where: str, problems: list[str]) -> dict[str, Any]:
    """Attributes by key (the last of duplicates wins); a bad one is reported and left out."""
    attributes: dict[str, Any] = {}
    for index, item in enumerate(_list(raw, "attributes", where, problems), 1):
        key = item.get("key") if isinstance(item, dict) else None
        if not isinstance(key, str):
            problems.append(f"{where}: attribute {index} has no key; skipped")
            continue
        try:
            value = _any_value(item.get("value"))
        except _Invalid as exc:
            problems.append(f"{where}: attribute {key!r} {exc}; skipped")
            continue
        if value is not None:
            attributes[key] = value
    return attributes


def _any_value(raw: Any, depth: int = 0) -> Any:
    """An ``AnyValue`` as the SDK holds attribute values: arrays as tuples, kvlists as
    dicts, bytes as bytes; ``None`` when empty (no value).  ``depth``: how many it is
    nested in."""
    if raw is None:
        return None
    if depth > _MAX_DEPTH:
        raise _Invalid(f"has values nested more than {_MAX_DEPTH} deep")
    if not isinstance(raw, dict):
        raise _Invalid(f"has value {_shown(raw)}, not an AnyValue object")
    kinds = [kind for kind in _VALUE_KINDS if kind in raw]
    if not kinds:
        return None
    if len(kinds) > 1:
        raise _Invalid(f"has several values ({', '.join(kinds)})")
    kind, value = kinds[0], raw[kinds[0]]
    if kind == "stringValue" and isinstance(value, str):
        return value
    if kind == "boolValue" and isinstance(value, bool):
        return value
    if kind == "intValue":
        return _integer(value, kind, signed=True)
    if kind == "doubleValue":
        return _double(value)
    if kind == "bytesValue" and isinstance(value, str):
        return _bytes(value)
    if kind == "arrayValue" and isinstance(value, dict):
        return tuple(_any_value(item, depth + 1) for item in _values(value, kind))
    if kind == "kvlistValue" and isinstance(value, dict):
        pairs: dict[str, Any] = {}
        for item in _values(value, kind):
            key = item.get("key") if isinstance(item, dict) else None
            if not isinstance(key, str):
                raise _Invalid(f"has a kvlistValue entry without a key: {_shown(item)}")
            pairs[key] = _any_value(item.get("value"), depth + 1)
        return pairs
    raise _Invalid(f"has {kind} {_shown(value)} of the wrong type")


def _values(container: dict[str, Any], kind: str) -> list[Any]:
    values = container.get("values", [])
    if not isinstance(values, list):
        raise _Invalid(f"has {kind}.values {_shown(values)}, not a list")
    return values


def _double(value: Any) -> float:
    """A JSON number, or the strings proto3 JSON uses for non-finite and exact values."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, _LongNumber):
        return float(value.text)  # a double: infinite past about 309 digits, as it should
    if isinstance(value, str):
        if value in _NON_FINITE:
            return _NON_FINITE[value]
        try:
            return float(value)
        except ValueError:
            pass
    raise _Invalid(f"has doubleValue {_shown(value)}, not a number")


def _bytes(value: str) -> bytes:
    """Base64, standard or URL-safe alphabet, padding optional (as proto3 JSON allows)."""
    text = value.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except binascii.Error as exc:
        raise _Invalid(f"has bytesValue {_shown(value)}, not base64") from exc


def _events(raw: dict[str, Any], where: str, problems: list[str]) -> Iterator[SpanEvent]:
    for index, event in enumerate(_list(raw, "events", where, problems), 1):
        here = f"{where}: event {index}"
        try:
            if not isinstance(event, dict):
                raise _Invalid("is not an object")
            time_ns = _nanos(event, "timeUnixNano")
            name = event.get("name", "")
            if not isinstance(name, str):
                raise _Invalid(f"has name {_shown(name)}, not a string")
        except _Invalid as exc:
            problems.append(f"{here} {exc}; skipped")
            continue
        yield SpanEvent(name, time_ns, _attributes(event, here, problems))


def _links(raw: dict[str, Any], where: str, problems: list[str]) -> Iterator[tuple[int, int]]:
    for index, link in enumerate(_list(raw, "links", where, problems), 1):
        try:
            if not isinstance(link, dict):
                raise _Invalid("is not an object")
            ids = _id(link, "traceId", 32), _id(link, "spanId", 16)
        except _Invalid as exc:
            problems.append(f"{where}: link {index} {exc}; skipped")
            continue
        yield ids
