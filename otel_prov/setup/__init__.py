"""Putting the pipeline together: ``configure()``, zero-code setup and the ``prov`` traces
exporter.  The only package that knows which concrete exporter to build."""

from otel_prov.setup._configure import ProvHandle, configure
from otel_prov.setup._span_exporter import ProvSpanExporter
from otel_prov.setup._zero_code import ProvConfigurator

__all__ = ["ProvConfigurator", "ProvHandle", "ProvSpanExporter", "configure"]
