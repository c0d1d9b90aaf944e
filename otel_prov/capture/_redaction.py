"""Redaction of whole spans, whoever set their attributes, before they leave the process.

Our own content attributes are redacted where they are set (``put_content`` in
``otel_prov.capture._shapes``), but third-party instrumentations set theirs directly on
the span: OpenInference's
``input.value``/``output.value``/``llm.input_messages.*``, OpenLLMetry's
``traceloop.entity.input``/``gen_ai.prompt.*``, the official GenAI
``gen_ai.input.messages``, ``gen_ai.system_instructions``, tool call arguments and results,
and the attributes of events (exceptions included).  The functions here apply
:func:`otel_prov.capture._content.redact` to every string in a span (every key, nested
sequences and mappings too), on both ways out: :func:`redact_span_record` before the
provenance mapper, :class:`RedactingSpanExporter` around the OTLP exporter.

Our own values are redacted a second time here, so the redaction hook must be idempotent;
the patterns are (see :func:`otel_prov.capture._content.set_redaction`).  With no redaction
configured, everything is passed through as it is, without a copy.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import Event, ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.sdk.util import BoundedList
from opentelemetry.trace import Status

from otel_prov.capture._content import redact, redaction_active
from otel_prov.prov._span_record import SpanRecord, attribute_length_limit

__all__ = ["RedactingSpanExporter", "redact_attributes", "redact_span_record"]

_logger = logging.getLogger(__name__)


def _redact_value(value: Any) -> Any:
    """Strings redacted, containers rebuilt (sequences as tuples, as the SDK stores them)."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {key: _redact_value(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        return tuple(_redact_value(item) for item in value)
    return value


def redact_attributes(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """``attributes`` with :func:`~otel_prov.capture._content.redact` applied to every string value.

    Every key is cleaned, not a list of known content keys: a secret is caught wherever an
    instrumentation put it.  Strings inside sequences and nested mappings (the SDK's
    extended attributes) are cleaned too; other values (numbers, booleans, bytes) are kept.
    Without redaction configured, ``attributes`` itself is returned.
    """
    if not redaction_active():
        return attributes
    return {key: _redact_value(value) for key, value in attributes.items()}


def redact_span_record(record: SpanRecord) -> SpanRecord:
    """The record with its attributes, event attributes and status message redacted.

    The provenance side's counterpart of :class:`RedactingSpanExporter`; the record itself
    when no redaction is configured.
    """
    if not redaction_active():
        return record
    return dataclasses.replace(
        record,
        attributes=redact_attributes(record.attributes),
        events=tuple(
            dataclasses.replace(event, attributes=redact_attributes(event.attributes))
            for event in record.events
        ),
        status_message=redact(record.status_message) if record.status_message is not None else None,
    )


def _bounded(
    attributes: Mapping[str, Any], *, dropped: int, max_value_len: int | None = None
) -> BoundedAttributes:
    """Redacted attributes in the SDK's own container, keeping the counts the OTLP encoder
    reports (``dropped_attributes_count``) and the length limit the mapper reads."""
    bounded = BoundedAttributes(
        attributes=redact_attributes(attributes), immutable=True, max_value_len=max_value_len
    )
    bounded.dropped = dropped
    return bounded


def _with_dropped(items: Sequence[Any], dropped: int) -> BoundedList[Any]:
    """``items`` in the SDK's list type, so ``dropped_events``/``dropped_links`` survive."""
    bounded = BoundedList.from_seq(None, items)
    bounded.dropped = dropped
    return bounded


def _redacted_event(event: Event) -> Event:
    return Event(
        event.name,
        _bounded(event.attributes or {}, dropped=event.dropped_attributes),
        event.timestamp,
    )


def _redacted_span(span: ReadableSpan) -> ReadableSpan:
    """A copy of ``span`` with redacted attributes, event attributes and status description;
    context, parent, resource, links, kind, times and instrumentation scope are the same."""
    status = span.status
    if status.description is not None:
        status = Status(status.status_code, redact(status.description))
    return ReadableSpan(
        name=span.name,
        context=span.context,
        parent=span.parent,
        resource=span.resource,
        attributes=_bounded(
            span.attributes or {},
            dropped=span.dropped_attributes,
            max_value_len=attribute_length_limit(span),
        ),
        events=_with_dropped(
            [_redacted_event(event) for event in span.events], span.dropped_events
        ),
        links=_with_dropped(span.links, span.dropped_links),
        kind=span.kind,
        status=status,
        start_time=span.start_time,
        end_time=span.end_time,
        instrumentation_scope=span.instrumentation_scope,
    )


class RedactingSpanExporter(SpanExporter):
    """Wraps a ``SpanExporter`` (OTLP, console, ...) so it only ever sees redacted spans.

    ``configure()`` and otel-prov's zero-code configurator wrap the exporters they build;
    wrap your own when you build the ``TracerProvider`` yourself::

        provider.add_span_processor(BatchSpanProcessor(RedactingSpanExporter(OTLPSpanExporter())))

    The inner exporter gets copies of the spans (the SDK's span objects are shared with the
    other processors, provenance included) with every string attribute, event attribute
    and the status description passed through the redaction configured with
    ``configure(redact=..., redact_patterns=...)``.  Whether redaction is configured is
    checked on every export, and with none the original spans are passed on untouched.
    When the hook raises, the batch is dropped (logged, ``FAILURE``) rather than exported
    unredacted.  Thread safety and the rest of the failure behaviour are the inner
    exporter's.
    """

    def __init__(self, exporter: SpanExporter) -> None:
        self._exporter = exporter

    @property
    def exporter(self) -> SpanExporter:
        """The wrapped exporter."""
        return self._exporter

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not redaction_active():
            return self._exporter.export(spans)
        try:
            redacted = [_redacted_span(span) for span in spans]
        except Exception:  # a failing hook must not let the originals through
            _logger.exception("redaction failed; %d span(s) not exported", len(spans))
            return SpanExportResult.FAILURE
        return self._exporter.export(redacted)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._exporter.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self._exporter.shutdown()
