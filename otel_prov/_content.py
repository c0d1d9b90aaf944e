"""Whether content (thoughts, arguments, observations, questions, answers) is recorded.

Two switches, as the contract says: ours, ``OTEL_PROV_CAPTURE_CONTENT`` (on by default,
provenance being the product), and the OpenTelemetry GenAI opt-in
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` for the ``gen_ai.*`` content
attributes (off unless set).  ``NO_CONTENT`` set explicitly turns both off.
Read on every call, so a change of environment (or a test's monkeypatch) takes effect.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence

from otel_prov._settings import env_bool
from otel_prov.environment_variables import (
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    OTEL_PROV_CAPTURE_CONTENT,
)

__all__ = [
    "capture_genai_content",
    "capture_prov_content",
    "redact",
    "set_override",
    "set_redaction",
]

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


_REDACTED = "[REDACTED]"
_patterns: tuple[re.Pattern[str], ...] = ()
_hook: Callable[[str], str] | None = None


def set_redaction(hook: Callable[[str], str] | None = None, patterns: Sequence[str] = ()) -> None:
    """``configure(redact=..., redact_patterns=...)``: applied to every content value.

    Patterns are regular expressions whose matches become ``[REDACTED]``; the hook then
    gets the text and returns what may be recorded.  Both run where content is set on a
    span, before it reaches any processor, so the OTLP export, the provenance, the spool,
    the write-ahead log and the logs only ever see the redacted text.
    """
    global _patterns, _hook
    try:
        _patterns = tuple(re.compile(pattern) for pattern in patterns)
    except re.error as exc:
        raise ValueError(f"invalid redaction pattern: {exc}") from exc
    _hook = hook


def redact(text: str) -> str:
    for pattern in _patterns:
        text = pattern.sub(_REDACTED, text)
    return _hook(text) if _hook is not None else text
