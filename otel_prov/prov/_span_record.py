"""The mapper's input: a plain, immutable snapshot of one span, whatever produced it.

The SDK's ``ReadableSpan`` (ended spans), a live ``Span`` that never ended (flushed on
timeout) and, later, OTLP JSON files all become a :class:`SpanRecord`, so that the
mapper depends on none of them and stays a pure function.  A record's :class:`Role` is
read from its attributes by :func:`classify`, with every other convention reader in
``_conventions``; both are re-exported here for the sources that build records.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from otel_prov.prov._conventions import Role, classify
from otel_prov.semconv import SERVICE_NAME

__all__ = [
    "OTLP_SPAN_KINDS",
    "BlobRef",
    "Role",
    "SpanEvent",
    "SpanRecord",
    "attribute_length_limit",
    "classify",
    "clean_attributes",
    "clean_record",
    "clean_text",
    "is_remote_root",
    "parent_is_remote",
    "record_from_span",
]


@dataclass(frozen=True, slots=True)
class SpanEvent:
    name: str
    time_ns: int
    attributes: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BlobRef:
    """Where the whole value of a too-large attribute went (its attribute keeps a preview)."""

    sha256: str
    """``sha256:<hex>`` of the value as UTF-8."""
    size: int
    """Bytes (UTF-8)."""
    media_type: str
    location: str
    """An absolute IRI (``file:`` URI of the blob)."""


@dataclass(frozen=True, slots=True)
class SpanRecord:
    """One span.  Ids are the OTel integers; ``end_ns`` is ``None`` for a span that never ended."""

    trace_id: int
    span_id: int
    parent_id: int | None
    name: str
    start_ns: int
    end_ns: int | None
    status: str = "unset"
    """``ok``, ``error`` or ``unset`` (the OTel status code, lower case)."""
    status_message: str | None = None
    attributes: Mapping[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    links: tuple[tuple[int, int], ...] = ()
    """(trace id, span id) of each span link."""
    service_name: str | None = None
    role: Role = Role.SPAN
    blobs: Mapping[str, BlobRef] = field(default_factory=dict)
    """Attribute key -> where its whole value went, for values moved to the blob store."""
    truncated: frozenset[str] = frozenset()
    """Attribute keys whose string value is exactly as long as the SDK's attribute length
    limit: most likely cut by it (``OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT``)."""
    kind: str = "internal"
    """The OTel span kind, lower case: ``internal``, ``server``, ``client``, ``producer``,
    ``consumer`` (``unspecified`` where the source said none)."""
    remote_parent: bool = False
    """The parent's context came from another process (W3C trace context in a request, an
    MCP ``_meta``): that process records the parent, this one never sees it end."""
    content_withheld: bool = False
    """The content policy keeps this span's content out of the store (capture off, or a
    receiver told to strip it): the mapper records each content value's size and hash, not
    its text, and no argument of the span inside its error message."""


def is_remote_root(span: SpanRecord) -> bool:
    """An agent span (not a plain one) whose parent runs in another process: the server's
    half of a tool call.  Its process runs no session, yet the span is provenance, and is
    stored like a session is."""
    return span.remote_parent and span.role is not Role.SPAN


_KIND_NAMES = ("unspecified", "internal", "server", "client", "producer", "consumer")
OTLP_SPAN_KINDS: dict[int | str, str] = {
    **dict(enumerate(_KIND_NAMES)),
    **{f"SPAN_KIND_{name.upper()}": name for name in _KIND_NAMES},
}
"""OTLP ``Span.kind`` (the enum's number, or its name in OTLP/JSON) -> :attr:`SpanRecord.kind`."""


_HAS_IS_REMOTE, _IS_REMOTE = 0x100, 0x200
"""OTLP ``Span.flags`` bits: the exporter knew whether the parent is remote, and it is."""


def parent_is_remote(flags: int) -> bool:
    """Does an OTLP span's ``flags`` say its parent came from another process?"""
    return flags & (_HAS_IS_REMOTE | _IS_REMOTE) == _HAS_IS_REMOTE | _IS_REMOTE


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD; ``text`` itself when it has none.

    Python strings can hold surrogates (``surrogateescape``, ``json.loads('"\\ud83d"')``)
    that no UTF-8 encoder accepts: left in, they break the hash, the blob, the WAL line
    and the store's literal, and the session falls apart.  A pair spelled as two code
    points is joined into the one character it encodes.
    """
    if text.isascii() or _SURROGATE.search(text) is None:  # isascii: O(1), the usual case
        return text
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return _SURROGATE.sub("\ufffd", joined)


def _clean_value(value: Any) -> Any:
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, (list, tuple)):
        return tuple(_clean_value(item) for item in value)
    if value is None or isinstance(value, (bool, int, float)):
        return value  # the usual attribute values, without the slower test below
    if isinstance(value, Mapping):
        return clean_attributes(value)
    return value


def clean_record(record: SpanRecord) -> SpanRecord:
    """``record`` with every string in it encodable (see :func:`clean_text`).

    Every way into the pipeline (SDK spans, OTLP files, the WAL) passes through here, so
    a value, its hash, its blob and its WAL line are computed from the same text.
    """
    return dataclasses.replace(
        record,
        name=clean_text(record.name),
        status_message=None if record.status_message is None else clean_text(record.status_message),
        attributes=clean_attributes(record.attributes),
        events=tuple(
            SpanEvent(clean_text(e.name), e.time_ns, clean_attributes(e.attributes))
            for e in record.events
        ),
        service_name=None if record.service_name is None else clean_text(record.service_name),
    )


def clean_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    """Attributes (keys too) with every string made encodable, see :func:`clean_text`,
    inside sequences (made tuples) and nested mappings too: also what makes a whole JSON
    object encodable, such as a write-ahead log line."""
    return {clean_text(key): _clean_value(value) for key, value in attributes.items()}


_STATUS = {StatusCode.OK: "ok", StatusCode.ERROR: "error", StatusCode.UNSET: "unset"}


def record_from_span(span: ReadableSpan, *, ended: bool = True) -> SpanRecord:
    """Snapshot an SDK span.  ``ended=False`` snapshots a live span that has not ended yet.

    Built clean in one go (what :func:`clean_record` would make of it, without a second
    record and attribute copy): the worker snapshots every span the agent makes.  Its
    role and truncated keys are read from the attributes as the SDK holds them.
    """
    context = span.context
    parent = span.parent
    attributes = dict(span.attributes or {})
    resource = span.resource.attributes if span.resource is not None else {}
    service = resource.get(SERVICE_NAME)
    status = span.status
    return SpanRecord(
        trace_id=context.trace_id if context is not None else 0,
        span_id=context.span_id if context is not None else 0,
        parent_id=parent.span_id if parent is not None else None,
        name=clean_text(span.name),
        start_ns=span.start_time or 0,
        end_ns=span.end_time if ended else None,
        status=_STATUS.get(status.status_code, "unset"),
        status_message=None if status.description is None else clean_text(status.description),
        attributes=clean_attributes(attributes),
        events=tuple(
            SpanEvent(
                clean_text(event.name), event.timestamp, clean_attributes(event.attributes or {})
            )
            for event in span.events
        ),
        links=tuple(
            (link.context.trace_id, link.context.span_id) for link in span.links if link.context
        ),
        service_name=clean_text(service) if isinstance(service, str) else None,
        role=classify(attributes, root=parent is None, name=span.name),
        truncated=_at_limit(attributes, attribute_length_limit(span)),
        kind=span.kind.name.lower(),
        remote_parent=parent is not None and parent.is_remote,
    )


def attribute_length_limit(span: object) -> int | None:
    """The SDK's attribute value length limit on ``span`` (None: unlimited).

    ``ReadableSpan.attributes`` is a read-only view without the limit; the bounded
    mapping behind it has it.  Read defensively: another SDK may not have it at all.
    """
    limit = getattr(getattr(span, "_attributes", None), "max_value_len", None)
    return limit if isinstance(limit, int) else None


def _at_limit(attributes: dict[str, Any], limit: int | None) -> frozenset[str]:
    """Keys whose value the SDK's length limit probably cut (it cuts silently)."""
    if not limit:
        return frozenset()
    return frozenset(k for k, v in attributes.items() if isinstance(v, str) and len(v) == limit)
