"""Short phrases both the terminal (``otel-prov show``) and the web pages write about a
session, so that the two say the same thing in the same words."""

from __future__ import annotations

from otel_prov.read._session_view import ModelCallView, SessionView, ToolCallView

__all__ = ["answerer_label", "failure_label", "shortened", "status_label", "tokens_label"]


def status_label(session: SessionView) -> str:
    """The status, with the count of failed calls when the session carried on past them."""
    if not session.failed_calls:
        return session.status
    plural = "s" if session.failed_calls > 1 else ""
    return f"{session.status} ({session.failed_calls} failed call{plural})"


def tokens_label(model: ModelCallView) -> str:
    if model.input_tokens is None and model.output_tokens is None:
        return ""
    return f" ({model.input_tokens or 0} in / {model.output_tokens or 0} out tokens)"


def failure_label(call: ToolCallView) -> str:
    """A failed call's error type and message."""
    return f"{call.error_type or 'error'}: {call.error_message or ''}"


def answerer_label(session: SessionView, answered_by: str) -> str:
    """Who gave the run's answer: the sub-session's agent and IRI."""
    agent = next((sub.agent for sub in session.nested_sessions() if sub.id == answered_by), None)
    return f"{agent} (sub-session {answered_by})" if agent else f"sub-session {answered_by}"


def shortened(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"
