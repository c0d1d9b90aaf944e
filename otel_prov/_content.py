"""Whether content (thoughts, arguments, observations, questions, answers) is recorded.

Two switches, as the contract says: ours, ``OTEL_PROV_CAPTURE_CONTENT`` (on by default,
provenance being the product), and the OpenTelemetry GenAI opt-in
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` for the ``gen_ai.*`` content
attributes (off unless set).  ``NO_CONTENT`` set explicitly turns both off.
Read on every call, so a change of environment (or a test's monkeypatch) takes effect.
"""

from __future__ import annotations

import os

from otel_prov._settings import env_bool
from otel_prov.environment_variables import (
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    OTEL_PROV_CAPTURE_CONTENT,
)

__all__ = ["capture_genai_content", "capture_prov_content", "set_override"]

_GENAI_SPAN_CONTENT = frozenset({"true", "span_only", "span_and_event"})
_override: bool | None = None


def set_override(capture: bool | None) -> None:
    """``configure(capture_content=...)``: wins over ``OTEL_PROV_CAPTURE_CONTENT``; None clears."""
    global _override
    _override = capture


def _genai_setting() -> str:
    return os.environ.get(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, "").strip().lower()


def capture_prov_content() -> bool:
    """Record the ``otel_prov.*`` content attributes?"""
    if _override is not None:
        return _override
    if _genai_setting() == "no_content":
        return False
    return env_bool(OTEL_PROV_CAPTURE_CONTENT, True)


def capture_genai_content() -> bool:
    """Record the opt-in ``gen_ai.*`` content attributes (tool call arguments and result)?"""
    return _genai_setting() in _GENAI_SPAN_CONTENT
