"""The ``prov`` traces exporter: provenance for ``OTEL_TRACES_EXPORTER=otlp,prov``.

Zero-code setup::

    OTEL_TRACES_EXPORTER=otlp,prov opentelemetry-instrument python agent.py

The SDK's configurator wraps every traces exporter in a ``BatchSpanProcessor``, so this
one receives ended spans in batches: it feeds them to a :class:`ProvSpanProcessor` that
assembles session trees across batches (waiting ``late_span_grace`` seconds after a
session ends for children still in a later batch) and exports them to the SPARQL store
or the embedded store, as ``OTEL_PROV_*`` says.  When otel-prov's own configurator is in
charge, it installs the processor itself (with span-start hooks) and this exporter
stands aside, so nothing is recorded twice.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from otel_prov.exporters._base import ProvExporter
from otel_prov.processing._processor import ProcessorStatistics, ProvSpanProcessor
from otel_prov.setup import _zero_code
from otel_prov.setup._destination import exporter_from_settings

__all__ = ["ProvSpanExporter"]

_logger = logging.getLogger(__name__)


class ProvSpanExporter(SpanExporter):
    """A ``SpanExporter`` that records provenance; see the module documentation."""

    def __init__(self, exporter: ProvExporter | None = None, *, late_span_grace: float = 6.0):
        self._processor: ProvSpanProcessor | None = None
        if _zero_code.processor_installed():
            _logger.debug("otel-prov's configurator records provenance; 'prov' stands aside")
            return
        self._processor = ProvSpanProcessor(
            exporter or exporter_from_settings(),
            knows_open_spans=False,
            late_span_grace=late_span_grace,
        )

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._processor is not None:
            for span in spans:
                self._processor.on_end(span)
        return SpanExportResult.SUCCESS

    def statistics(self) -> ProcessorStatistics | None:
        """The counters of the processor behind it (spans dropped included); ``None`` when
        it stands aside for otel-prov's configurator, whose processor counts instead."""
        return self._processor.statistics() if self._processor else None

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self._processor.force_flush(timeout_millis) if self._processor else True

    def shutdown(self) -> None:
        if self._processor is not None:
            self._processor.shutdown()
