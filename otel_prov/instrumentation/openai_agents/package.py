"""The framework versions this instrumentation supports (``BaseInstrumentor`` checks them)."""

from __future__ import annotations

_instruments = ("openai-agents >= 0.20",)
