"""The ``otel-prov`` command: a shell over :mod:`otel_prov.read` and the pipeline."""

from otel_prov.cli._commands import main

__all__ = ["main"]
