"""Sessions as text for people, JSON for programs and Mermaid for diagrams."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from otel_prov._session_view import SessionSummary, SessionView

__all__ = ["render_json", "render_mermaid", "render_sessions_table", "render_text"]

_WIDTH = 13


def _line(label: str, value: str | None, indent: str = "  ") -> str:
    """``label  value`` with continuation lines aligned under the value."""
    text = "" if value is None else value
    pad = "\n" + indent + " " * _WIDTH
    return f"{indent}{label:<{_WIDTH}}{pad.join(text.splitlines() or [''])}"


def render_text(session: SessionView, *, trace_links: dict[str, str] | None = None) -> str:
    """``trace_links`` maps a backend name to a URL template with ``{trace_id}``."""
    lines = [
        f"Session {session.id}",
        _line("agent", session.agent),
        _line("status", session.status),
        _line("started", session.start),
        _line("ended", session.end or "(never)"),
        _line("question", session.question),
    ]
    for step in session.iterations:
        lines.append(f"Iteration {step.number if step.number is not None else '?'}")
        for model in step.model_calls:
            tokens = ""
            if model.input_tokens is not None or model.output_tokens is not None:
                tokens = f" ({model.input_tokens or 0} in / {model.output_tokens or 0} out tokens)"
            lines.append(_line("model call", f"{model.model or '?'}{tokens}", "    "))
        lines.append(_line("thought", step.thought, "    "))
        action = step.action or ""
        if step.arguments:
            action = f"{action} {step.arguments}".strip()
        lines.append(_line("action", action, "    "))
        for call in step.tool_calls:
            ident = f" [{call.call_id}]" if call.call_id else ""
            if call.status == "error":
                outcome = (
                    f"FAILED {call.error_type or 'error'}: {call.error_message or ''}".rstrip()
                )
            else:
                outcome = call.status
            lines.append(_line("tool call", f"{call.name}{ident} {outcome}", "    "))
            if call.observation is not None:
                lines.append(_line("observation", call.observation, "    "))
        if not step.tool_calls and step.observation is not None:
            lines.append(_line("observation", step.observation, "    "))
    lines.append(_line("answer", session.answer, ""))
    lines.append(_line("trace", session.trace_id, ""))
    for backend, template in (trace_links or {}).items():
        lines.append(_line(backend, template.replace("{trace_id}", session.trace_id), ""))
    return "\n".join(lines)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return value


def render_json(value: Any) -> str:
    if isinstance(value, list):
        return json.dumps([_plain(item) for item in value], ensure_ascii=False, indent=2)
    return json.dumps(_plain(value), ensure_ascii=False, indent=2)


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", " ")


def render_mermaid(session: SessionView) -> str:
    """A flowchart: question -> iterations -> tool calls -> answer."""
    lines = ["flowchart TD", f'  Q["Question: {_mermaid_label(session.question or "")}"]']
    previous = "Q"
    for index, step in enumerate(session.iterations, start=1):
        node = f"I{index}"
        lines.append(f'  {node}["Iteration {step.number}: {_mermaid_label(step.thought or "")}"]')
        lines.append(f"  {previous} --> {node}")
        for call_index, call in enumerate(step.tool_calls, start=1):
            tool = f"{node}T{call_index}"
            status = "failed" if call.status == "error" else call.status
            lines.append(f'  {tool}["{_mermaid_label(call.name)} ({status})"]')
            lines.append(f"  {node} --> {tool}")
        previous = node
    lines.append(f'  A["Answer: {_mermaid_label(session.answer or "")}"]')
    lines.append(f"  {previous} --> A")
    return "\n".join(lines)


def render_sessions_table(sessions: list[SessionSummary]) -> str:
    header = ("ID", "START", "AGENT", "QUESTION", "ITER", "TOOLS", "STATUS", "TRACE")
    rows = [
        (
            s.id,
            s.start,
            s.agent or "",
            (s.question or "").replace("\n", " ")[:48],
            str(s.iterations),
            str(s.tool_calls),
            f"{s.status} ({s.failed_calls} failed)" if s.failed_calls else s.status,
            s.trace_id,
        )
        for s in sessions
    ]
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in [header, *rows]
    )
