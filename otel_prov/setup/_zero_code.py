"""Zero-code setup through ``opentelemetry-instrument``: otel-prov's configurator.

``opentelemetry-instrument`` loads one ``opentelemetry_configurator``.  Ours does what
the SDK's does (providers and exporters from the ``OTEL_*`` variables) and, when
``OTEL_TRACES_EXPORTER`` lists ``prov`` or an ``OTEL_PROV_*`` destination is set, adds a
:class:`~otel_prov.ProvSpanProcessor` to the tracer provider: the full processor, with
span-start hooks, rather than the batch-fed ``prov`` exporter (which then stands aside).
With ``opentelemetry-distro`` installed too, pick ours with
``OTEL_PYTHON_CONFIGURATOR=otel_prov``; with the distro's, ``prov`` still works as an
exporter.

The OTLP protocol defaults to ``http/protobuf``, the OTLP specification's default and
``configure()``'s, where the SDK alone would pick gRPC: the same variables then reach the
same receiver whichever way the agent is set up.  ``OTEL_EXPORTER_OTLP_PROTOCOL`` (or its
``_TRACES_`` form) still picks ``grpc``.

Every traces exporter the SDK builds from ``OTEL_TRACES_EXPORTER`` (``otlp``, ``console``,
...) is wrapped in a :class:`~otel_prov.RedactingSpanExporter`, so once redaction is
configured in the process (``OTEL_PROV_REDACT_PATTERNS``, read here), spans leave
through them redacted; until then the wrapper passes them on untouched.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from opentelemetry.sdk._configuration import _OTelSDKConfigurator
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from otel_prov.capture import _content
from otel_prov.capture._redaction import RedactingSpanExporter
from otel_prov.environment_variables import (
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
    OTEL_PROV_STORE,
)

__all__ = ["ProvConfigurator", "processor_installed", "wants_provenance"]

_installed = False

_PROTOCOL_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")


def processor_installed() -> bool:
    """Did the configurator put a ProvSpanProcessor on the provider of this process?"""
    return _installed


def wants_provenance() -> bool:
    names = os.environ.get("OTEL_TRACES_EXPORTER", "")
    listed = "prov" in {name.strip() for name in names.split(",")}
    destination = any(
        os.environ.get(v) for v in (OTEL_PROV_SPARQL_UPDATE_ENDPOINT, OTEL_PROV_STORE)
    )
    return listed or destination


def _redacting(
    make_processor: Callable[[SpanExporter], SpanProcessor],
) -> Callable[[SpanExporter], SpanProcessor]:
    """The SDK's ``export_span_processor`` hook: its exporters, each behind redaction."""

    def make(exporter: SpanExporter) -> SpanProcessor:
        return make_processor(RedactingSpanExporter(exporter))

    return make


class ProvConfigurator(_OTelSDKConfigurator):
    """The SDK's configurator, plus provenance when the environment asks for it."""

    def _configure(self, **kwargs: Any) -> None:
        global _installed
        if not any(os.environ.get(name) for name in _PROTOCOL_VARIABLES):
            os.environ[_PROTOCOL_VARIABLES[0]] = "http/protobuf"
        patterns = _content.patterns_from_environment()
        if patterns:
            _content.set_redaction(None, patterns)
        kwargs["export_span_processor"] = _redacting(
            kwargs.get("export_span_processor") or BatchSpanProcessor
        )
        if wants_provenance():
            from otel_prov.processing._processor import ProvSpanProcessor
            from otel_prov.setup._destination import exporter_from_settings

            processor = ProvSpanProcessor(exporter_from_settings())
            kwargs["span_processors"] = [*kwargs.get("span_processors", ()), processor]
            _installed = True
        super()._configure(**kwargs)  # type: ignore[no-untyped-call]
