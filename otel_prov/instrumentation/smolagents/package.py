"""The distributions this instrumentation supports (checked by ``BaseInstrumentor``)."""

from __future__ import annotations

_instruments = ("smolagents >= 1.20",)
