"""Whether content (thoughts, arguments, observations, questions, answers) is recorded.

Two switches, as the contract says: ours, ``OTEL_PROV_CAPTURE_CONTENT`` (on by default,
provenance being the product), and the OpenTelemetry GenAI opt-in
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` for the ``gen_ai.*`` content
attributes (off unless set).  ``NO_CONTENT`` set explicitly turns both off.
Read on every call, so a change of environment (or a test's monkeypatch) takes effect.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Sequence

from otel_prov._settings import env_bool
from otel_prov.environment_variables import (
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
    OTEL_PROV_CAPTURE_CONTENT,
    OTEL_PROV_REDACT_PATTERNS,
)

__all__ = [
    "capture_genai_content",
    "capture_prov_content",
    "capture_switches",
    "patterns_from_environment",
    "redact",
    "redaction_active",
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


def capture_switches() -> tuple[bool, bool]:
    """Record the ``otel_prov.*`` content attributes?  And the opt-in ``gen_ai.*`` ones (tool
    call arguments and result)?  Each variable read once: content is set on the agent's
    thread, several values at a time, and every read of the environment costs there."""
    genai = _genai_setting()
    genai_content = genai in _GENAI_SPAN_CONTENT
    if _override is not None:
        return _override, genai_content
    if genai == "no_content":
        return False, genai_content
    return env_bool(OTEL_PROV_CAPTURE_CONTENT, True), genai_content


def capture_prov_content() -> bool:
    """Record the ``otel_prov.*`` content attributes?"""
    return capture_switches()[0]


def capture_genai_content() -> bool:
    """Record the opt-in ``gen_ai.*`` content attributes (tool call arguments and result)?"""
    return _genai_setting() in _GENAI_SPAN_CONTENT


_REDACTED = "[REDACTED]"
_patterns: tuple[re.Pattern[str], ...] = ()
_hook: Callable[[str], str] | None = None


def patterns_from_environment() -> list[str]:
    """``OTEL_PROV_REDACT_PATTERNS``: a JSON array of regular expressions (empty if unset)."""
    setting = os.environ.get(OTEL_PROV_REDACT_PATTERNS, "").strip()
    if not setting:
        return []
    try:
        patterns = json.loads(setting)
    except ValueError as exc:
        message = f"{OTEL_PROV_REDACT_PATTERNS} must be a JSON array of strings: {exc}"
        raise ValueError(message) from exc
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise ValueError(f"{OTEL_PROV_REDACT_PATTERNS} must be a JSON array of strings")
    return patterns


def set_redaction(hook: Callable[[str], str] | None = None, patterns: Sequence[str] = ()) -> None:
    """``configure(redact=..., redact_patterns=...)``: applied to every content value.

    Patterns are regular expressions whose matches become ``[REDACTED]``; the hook then
    gets the text and returns what may be recorded.  Both run where our content is set on
    a span, before it reaches any processor, and again over every string attribute of
    every span on its way out (:mod:`otel_prov.capture._redaction`), which catches what
    third-party instrumentations set.  Text therefore passes more than once, so the hook
    must be idempotent (``hook(hook(t)) == hook(t)``).  Patterns are: they never see the
    ``[REDACTED]`` markers already in the text, so a pattern that could match the marker
    itself (``[A-Z]{5,}``) does not grow it on every pass; only patterns with anchors,
    word boundaries or lookarounds may redact a little more on a second pass.
    """
    global _patterns, _hook
    try:
        _patterns = tuple(re.compile(pattern) for pattern in patterns)
    except re.error as exc:
        raise ValueError(f"invalid redaction pattern: {exc}") from exc
    _hook = hook


def redaction_active() -> bool:
    """Is any redaction configured?  Cheap, so callers can skip copying spans when not."""
    return bool(_patterns) or _hook is not None


def redact(text: str) -> str:
    """The text with every pattern match replaced by ``[REDACTED]``, then through the hook."""
    for pattern in _patterns:
        parts = text.split(_REDACTED)
        text = _REDACTED.join(pattern.sub(_REDACTED, part) for part in parts)
    return _hook(text) if _hook is not None else text
