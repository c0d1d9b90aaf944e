"""Sessions as text for people, HTML to share, JSON for programs and Mermaid for diagrams."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from otel_prov._extras import needs_extra
from otel_prov.cli._terminal import columns, printable
from otel_prov.prov._rdf import instant_order
from otel_prov.read._approvals import ApprovalView
from otel_prov.read._trace_spans import TraceSpanView
from otel_prov.read._views import DownstreamView, SessionSummary, SessionView, Usage
from otel_prov.view._labels import (
    answerer_label,
    cost_total_label,
    downstream_label,
    evaluation_label,
    failure_label,
    outcome_fields,
    postcondition_label,
    shortened,
    step_label,
    token_totals_label,
    tokens_label,
)

__all__ = [
    "render_json",
    "render_mermaid",
    "render_session_list",
    "render_sessions_table",
    "render_text",
    "render_views",
]


_WIDTH = 13


def _line(label: str, value: str | None, indent: str = "  ") -> str:
    """``label  value`` with continuation lines aligned under the value."""
    text = "" if value is None else value
    pad = "\n" + indent + " " * _WIDTH
    return f"{indent}{label:<{_WIDTH}}{pad.join(text.splitlines() or [''])}"


def render_text(session: SessionView, *, trace_links: dict[str, str] | None = None) -> str:
    """``trace_links`` maps a backend name to a URL template with ``{trace_id}``.

    A sub-agent's session is a block of its own under what started it, laid out as the
    run is and indented, so that its iterations read as its own and not the run's.
    """
    lines = _session_lines(session, "Session", "")
    if session.answered_by is not None:
        lines.append(_line("answered by", answerer_label(session, session.answered_by), ""))
    lines.append(_line("trace", session.trace_id, ""))
    for backend, template in (trace_links or {}).items():
        lines.append(_line(backend, template.replace("{trace_id}", session.trace_id), ""))
    return printable("\n".join(lines))


def _session_lines(session: SessionView, heading: str, indent: str) -> list[str]:
    """A session from its heading to its answer, every line starting with ``indent``."""
    head, fields = indent + "  ", indent + "    "
    allowed: dict[str, list[ApprovalView]] = {}
    for approval in session.approvals:
        if approval.allowed is not None:
            allowed.setdefault(approval.allowed, []).append(approval)
    lines = [
        f"{indent}{heading} {session.id}",
        _line("agent", session.agent, head),
        *(_line(label, value, head) for label, value in outcome_fields(session)),
        _line("started", session.start, head),
        _line("ended", session.end or "(never)", head),
        _line("question", session.question, head),
    ]
    if session.usage.tokens:
        lines.append(_line("tokens", token_totals_label(session.usage), head))
    if session.usage.costs:
        lines.append(_line("cost", cost_total_label(session.usage), head))
    lines.extend(_line("evaluation", evaluation_label(e), head) for e in session.evaluations)
    lines.extend(_line("checked", postcondition_label(c), head) for c in session.postconditions)
    for plan in session.plans:
        # Before the iterations: the plan was made before its steps ran.
        lines.append(f"{indent}Plan {plan.name or plan.id}")
        for planned in plan.steps:
            lines.append(_line(f"step {planned.number}", step_label(planned), fields))
            lines.extend(
                _line("checked", postcondition_label(c), fields) for c in planned.postconditions
            )
    for step in session.iterations:
        lines.append(f"{indent}Iteration {step.number if step.number is not None else '?'}")
        for model in step.model_calls:
            lines.append(_line("model call", f"{model.model or '?'}{tokens_label(model)}", fields))
            lines.extend(_caused_lines(model.downstream, fields))
        lines.append(_line("thought", step.thought, fields))
        action = step.action or ""
        if step.arguments:
            action = f"{action} {step.arguments}".strip()
        lines.append(_line("action", action, fields))
        for call in step.tool_calls:
            ident = f" [{call.call_id}]" if call.call_id else ""
            failed = call.status == "error"
            outcome = f"FAILED {failure_label(call)}".rstrip() if failed else call.status
            outcome += "".join(f", {a.label}" for a in allowed.get(call.id, ()))
            lines.append(_line("tool call", f"{call.name}{ident} {outcome}", fields))
            if call.arguments is not None and call.arguments != step.arguments:
                # Not on the action line: parallel calls each have their own.
                lines.append(_line("arguments", call.arguments, fields))
            if call.observation is not None:
                lines.append(_line("observation", call.observation, fields))
            lines.extend(_caused_lines(call.downstream, fields))
            lines.extend(_sub_session_lines(call.sub_sessions, fields + "  "))
        if not step.tool_calls and step.observation is not None:
            lines.append(_line("observation", step.observation, fields))
        lines.extend(_sub_session_lines(step.sub_sessions, fields + "  "))
    lines.extend(_sub_session_lines(session.sub_sessions, head))
    for refused in session.approvals:
        if refused.decision == "rejected":
            ident = f" [{refused.call_id}]" if refused.call_id else ""
            lines.append(
                _line("not run", f"{refused.tool or 'a call'}{ident}: {refused.label}", head)
            )
    lines.append(_line("answer", session.answer, indent))
    return lines


def _caused_lines(downstream: Sequence[DownstreamView], indent: str) -> list[str]:
    """What a tool or model call caused outside the agent, indented by depth under it."""
    return [_line("caused", downstream_label(c), indent + "  " * c.depth) for c in downstream]


def _sub_session_lines(sessions: Sequence[SessionView], indent: str) -> list[str]:
    return [line for sub in sessions for line in _session_lines(sub, "Sub-session", indent)]


def _plain(value: Any) -> Any:
    """JSON-ready data; a :class:`Usage` field becomes ``tokens``, ``cost`` (the total, or
    null when nothing was priced or currencies are mixed) and ``costs`` (per currency)."""
    if isinstance(value, Usage):
        return {
            "tokens": dict(value.tokens),
            "cost": _plain(value.cost),
            "costs": [_plain(cost) for cost in value.costs],
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        plain: dict[str, Any] = {}
        for item in dataclasses.fields(value):
            field_value = getattr(value, item.name)
            if isinstance(field_value, Usage):
                plain.update(_plain(field_value))
            else:
                plain[item.name] = _plain(field_value)
        return plain
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, Decimal):
        return float(value)
    return value


def render_json(value: Any) -> str:
    return json.dumps(_plain(value), ensure_ascii=False, indent=2)


def _mermaid_label(text: str) -> str:
    return text.replace('"', "#quot;").replace("\n", " ")


def render_mermaid(session: SessionView) -> str:
    """A flowchart: question -> iterations -> tool calls -> answer.

    A sub-agent's session is a subgraph, drawn from what started it; when the run's
    answer is a sub-session's, a dotted edge leads from that one to the run's.
    """
    lines = ["flowchart TD"]
    answers: dict[str, str] = {}
    _mermaid_session(session, "", "  ", lines, answers)
    if session.answered_by in answers:
        lines.append(f"  {answers[session.answered_by]} -.-> A")
    return "\n".join(lines)


def _mermaid_session(
    session: SessionView, prefix: str, indent: str, lines: list[str], answers: dict[str, str]
) -> str:
    """Draw one session with node ids under ``prefix``; its question node's id back.

    ``answers`` collects each session's answer node, by session IRI.
    """
    question = f"{prefix}Q"
    lines.append(f'{indent}{question}["Question: {_mermaid_label(session.question or "")}"]')
    previous = question
    for index, step in enumerate(session.iterations, start=1):
        node = f"{prefix}I{index}"
        lines.append(
            f'{indent}{node}["Iteration {step.number}: {_mermaid_label(step.thought or "")}"]'
        )
        lines.append(f"{indent}{previous} --> {node}")
        for call_index, call in enumerate(step.tool_calls, start=1):
            tool = f"{node}T{call_index}"
            status = "failed" if call.status == "error" else call.status
            lines.append(f'{indent}{tool}["{_mermaid_label(call.name)} ({status})"]')
            lines.append(f"{indent}{node} --> {tool}")
            _mermaid_sub_sessions(call.sub_sessions, tool, indent, lines, answers)
        _mermaid_sub_sessions(step.sub_sessions, node, indent, lines, answers)
        previous = node
    _mermaid_sub_sessions(session.sub_sessions, question, indent, lines, answers)
    answer = f"{prefix}A"
    lines.append(f'{indent}{answer}["Answer: {_mermaid_label(session.answer or "")}"]')
    lines.append(f"{indent}{previous} --> {answer}")
    answers[session.id] = answer
    return question


def _mermaid_sub_sessions(
    sessions: Sequence[SessionView],
    starter: str,
    indent: str,
    lines: list[str],
    answers: dict[str, str],
) -> None:
    # The edge from the starter comes after ``end``: a node named inside a subgraph
    # is drawn in it, and the starter belongs outside.
    for index, sub in enumerate(sessions, start=1):
        box = f"{starter}S{index}"
        title = f"Sub-session: {sub.agent}" if sub.agent else "Sub-session"
        lines.append(f'{indent}subgraph {box}["{_mermaid_label(title)}"]')
        question = _mermaid_session(sub, box, indent + "  ", lines, answers)
        lines.append(f"{indent}end")
        lines.append(f"{indent}{starter} --> {question}")


def _mermaid_document(views: Sequence[SessionView]) -> str:
    """Several sessions' diagrams as Markdown, one fenced ``mermaid`` block each: one
    Mermaid text is one diagram, and GitHub, GitLab and ``mmdc`` draw every block."""
    return "\n".join(
        f"## Session {view.id}\n\n```mermaid\n{render_mermaid(view)}\n```\n" for view in views
    )


def _fixed_width_time(stamp: str) -> str:
    """A UTC dateTime with its fraction padded to microseconds, so that a column of them
    lines up (the canonical form drops the fraction's trailing zeros)."""
    seconds, fraction = instant_order(stamp)
    return f"{seconds}.{fraction}Z" if len(seconds) == 19 else stamp


def render_sessions_table(sessions: Sequence[SessionSummary]) -> str:
    """The ``sessions`` table, a line per session under a header, each ending in a newline."""
    header = (
        "ID", "START", "AGENT", "SERVICE", "QUESTION", "ITER", "TOOLS", "FAILED", "STATUS", "TRACE"
    )  # fmt: skip
    rows = [
        (
            s.id,
            _fixed_width_time(s.start),
            s.agent or "",
            s.service or "",
            shortened((s.question or "").replace("\n", " "), 48),
            str(s.iterations),
            str(s.tool_calls),
            str(s.failed_calls),
            s.status,
            s.trace_id,
        )
        for s in sessions
    ]
    return columns([header, *[[printable(cell) for cell in row] for row in rows]])


def render_session_list(
    sessions: list[SessionSummary], fmt: str, *, trace_links: Mapping[str, str] | None = None
) -> str:
    """``sessions`` output: the table, or ``json`` rows; with ``trace_links`` (backend ->
    URL template, as for ``show``) each row's ``"trace_links"`` opens its trace there."""
    if fmt != "json":
        return render_sessions_table(sessions)
    rows = _plain(sessions)
    for row in rows if trace_links else ():
        row["trace_links"] = {
            backend: template.replace("{trace_id}", row["trace_id"])
            for backend, template in (trace_links or {}).items()
        }
    return render_json(rows) + "\n"


def render_views(
    views: Sequence[SessionView],
    fmt: str,
    *,
    trace_links: Mapping[str, str] | None = None,
    why: Mapping[str, Mapping[str, Any]] | None = None,
    traces: Mapping[str, Sequence[TraceSpanView]] | None = None,
) -> str:
    """``show`` output for ``text``, ``json``, ``mermaid`` or ``html`` (the formats drawn from
    session views; the others print the session's triples): one JSON list, HTML page or
    Markdown document of diagrams of all ``views`` (one view: its bare diagram), or one
    text per session, a blank line between them.  ``why`` maps a run to its why-graph
    (``WhyGraph.as_json()``) and ``traces`` a trace id to its spans (``trace_spans``),
    drawn on the HTML page."""
    if fmt == "json":
        return render_json(list(views)) + "\n"
    if fmt == "html":
        with needs_extra("serve", "show --format html"):
            from otel_prov.view._pages import session_page
        return session_page(views, links=trace_links, why=why, traces=traces, standalone=True)
    if fmt == "mermaid" and len(views) > 1:
        return _mermaid_document(views)
    links = dict(trace_links or {})
    draw: Callable[[SessionView], str] = (
        render_mermaid if fmt == "mermaid" else lambda view: render_text(view, trace_links=links)
    )
    return "\n\n".join(draw(view).rstrip("\n") for view in views) + "\n"
