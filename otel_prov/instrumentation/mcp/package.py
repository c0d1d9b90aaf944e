"""The distributions this instrumentation supports (checked by ``BaseInstrumentor``)."""

from __future__ import annotations

_instruments = ("mcp >= 2.0",)
