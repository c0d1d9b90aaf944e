"""Sessions as text for people, HTML to share, JSON for programs and Mermaid for diagrams."""

from __future__ import annotations

import dataclasses
import json
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from html import escape
from typing import Any

from otel_prov.cli._terminal import columns, printable
from otel_prov.prov._rdf import instant_order
from otel_prov.read._session_view import (
    Cost,
    EvaluationView,
    IterationView,
    ModelCallView,
    SessionSummary,
    SessionView,
    ToolCallView,
    Usage,
)

__all__ = [
    "VIEW_FORMATS",
    "render_html",
    "render_json",
    "render_mermaid",
    "render_session_list",
    "render_sessions_table",
    "render_text",
    "render_views",
]

VIEW_FORMATS = ("text", "json", "mermaid", "html")
"""The ``show`` formats drawn from session views (the others print the session's triples)."""

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
        lines.append(_line("answered by", _answerer(session, session.answered_by), ""))
    lines.append(_line("trace", session.trace_id, ""))
    for backend, template in (trace_links or {}).items():
        lines.append(_line(backend, template.replace("{trace_id}", session.trace_id), ""))
    return printable("\n".join(lines))


def _outcome(session: SessionView) -> list[tuple[str, str]]:
    """How the session went, as separate facts: its own status, why it failed (when it
    raised), and the calls that failed on the way (an agent may carry on past them).
    A run that recovered from a failed call reads ``ok`` with failed calls, one that
    raised ``error`` with its error, one whose process died ``incomplete``."""
    fields = [("status", session.status)]
    if session.status == "error" and (session.error_type or session.error_message):
        fields.append(("error", _failure(session)))
    if session.failed_calls:
        fields.append(("failed calls", str(session.failed_calls)))
    return fields


def _session_lines(session: SessionView, heading: str, indent: str) -> list[str]:
    """A session from its heading to its answer, every line starting with ``indent``."""
    head, fields = indent + "  ", indent + "    "
    lines = [
        f"{indent}{heading} {session.id}",
        _line("agent", session.agent, head),
        *(_line(label, value, head) for label, value in _outcome(session)),
        _line("started", session.start, head),
        _line("ended", session.end or "(never)", head),
        _line("question", session.question, head),
    ]
    if session.usage.tokens:
        lines.append(_line("tokens", _token_totals(session.usage), head))
    if session.usage.costs:
        lines.append(_line("cost", _cost_total(session.usage), head))
    lines.extend(_line("evaluation", _evaluation(e), head) for e in session.evaluations)
    for step in session.iterations:
        lines.append(f"{indent}Iteration {step.number if step.number is not None else '?'}")
        for model in step.model_calls:
            lines.append(_line("model call", f"{model.model or '?'}{_tokens(model)}", fields))
        lines.append(_line("thought", step.thought, fields))
        action = step.action or ""
        if step.arguments:
            action = f"{action} {step.arguments}".strip()
        lines.append(_line("action", action, fields))
        for call in step.tool_calls:
            ident = f" [{call.call_id}]" if call.call_id else ""
            failed = call.status == "error"
            outcome = f"FAILED {_failure(call)}".rstrip() if failed else call.status
            lines.append(_line("tool call", f"{call.name}{ident} {outcome}", fields))
            if call.arguments is not None and call.arguments != step.arguments:
                # Not on the action line: parallel calls each have their own.
                lines.append(_line("arguments", call.arguments, fields))
            if call.observation is not None:
                lines.append(_line("observation", call.observation, fields))
            lines.extend(_sub_session_lines(call.sub_sessions, fields + "  "))
        if not step.tool_calls and step.observation is not None:
            lines.append(_line("observation", step.observation, fields))
        lines.extend(_sub_session_lines(step.sub_sessions, fields + "  "))
    lines.extend(_sub_session_lines(session.sub_sessions, head))
    lines.append(_line("answer", session.answer, indent))
    return lines


def _tokens(model: ModelCallView) -> str:
    cost = f", {_money(model.cost)}" if model.cost is not None else ""
    if model.input_tokens is None and model.output_tokens is None:
        return f" ({_money(model.cost)})" if model.cost is not None else ""
    return f" ({model.input_tokens or 0} in / {model.output_tokens or 0} out tokens{cost})"


def _evaluation(evaluation: EvaluationView) -> str:
    """``name: score label (by evaluator, added later): explanation``."""
    verdict = " ".join(
        part
        for part in (
            None if evaluation.score is None else f"{evaluation.score:g}",
            evaluation.label,
        )
        if part
    )
    by = f"by {evaluation.evaluator}" if evaluation.evaluator else ""
    when = "added after the run" if evaluation.annotation else ""
    note = ", ".join(part for part in (by, when) if part)
    text = f"{evaluation.name}: {verdict or '(no score)'}" + (f" ({note})" if note else "")
    return f"{text}\n{evaluation.explanation}" if evaluation.explanation else text


def _token_totals(usage: Usage) -> str:
    return ", ".join(f"{n:,} {kind.replace('_', ' ')}" for kind, n in usage.tokens.items())


def _money(cost: Cost) -> str:
    return f"{_plain_number(cost.amount)} {cost.currency or '(no currency)'}"


def _plain_number(amount: Decimal) -> str:
    return format(amount.normalize(), "f")


def _cost_total(usage: Usage) -> str:
    """The total, or each currency's when they are mixed: amounts in different
    currencies are never added."""
    if usage.cost is not None:
        return _money(usage.cost)
    each = " + ".join(_money(cost) for cost in usage.costs)
    return f"{each} (mixed currencies, not added)"


def _failure(failed: ToolCallView | SessionView) -> str:
    """A failed call's or session's error type and message."""
    return f"{failed.error_type or 'error'}: {failed.error_message or ''}"


def _sub_session_lines(sessions: Sequence[SessionView], indent: str) -> list[str]:
    return [line for sub in sessions for line in _session_lines(sub, "Sub-session", indent)]


def _answerer(session: SessionView, answered_by: str) -> str:
    """Who gave the run's answer: the sub-session's agent and IRI."""
    agent = next((sub.agent for sub in session.nested_sessions() if sub.id == answered_by), None)
    return f"{agent} (sub-session {answered_by})" if agent else f"sub-session {answered_by}"


_HTML_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #1d1d1f; max-width: 64rem;
       margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.3rem; } h2 { font-size: 1.15rem; } h3 { font-size: 1rem; margin: 0 0 .3rem; }
code, .value { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; }
.value { white-space: pre-wrap; overflow-wrap: anywhere; }
dl { display: grid; grid-template-columns: 8rem 1fr; gap: .15rem 1rem; margin: .4rem 0; }
dt { color: #555; } dd { margin: 0; }
.iteration { border-left: 3px solid #c8cbe0; padding: .2rem 0 .2rem 1rem; margin: 1rem 0; }
.call { border: 1px solid #dcdde8; border-radius: 4px; padding: .3rem .6rem; margin: .4rem 0; }
.call p { margin: 0; }
.sub-session { border: 1px dashed #9a9cb0; border-radius: 4px; padding: .2rem 1rem;
               margin: .6rem 0; }
.failed { border-color: #c62828; background: #fdecea; }
.badge { font-weight: bold; color: #c62828; }
.status-error { color: #c62828; font-weight: bold; }
.outcome-ok { color: #2e7d32; }
"""


def render_html(
    sessions: Sequence[SessionView], *, trace_links: Mapping[str, str] | None = None
) -> str:
    """One self-contained page of ``sessions``, laid out as :func:`render_text` lays them out.

    Made to be attached to a ticket or mailed: the style is inline and there are no
    scripts and no external assets.  Every value read from the store goes through
    ``html.escape`` (quotes included), since agents record whatever text they are given;
    trace links are only made links when the template gives an ``http(s)`` URL.  Failed
    tool and model calls carry ``FAILED`` and the ``failed`` class (red).
    """
    if len(sessions) == 1:
        title = f"otel-prov: {sessions[0].agent or 'session'} {sessions[0].id}"
    else:
        title = f"otel-prov: {len(sessions)} sessions"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f"<title>{escape(title)}</title>",
        f"<style>{_HTML_STYLE}</style>",
        "</head>",
        "<body>",
    ]
    for session in sessions:
        parts.append('<article class="run">')
        parts.extend(_html_session(session, "Session", "h1"))
        footer = []
        if session.answered_by is not None:
            footer.append(_html_field("answered by", _answerer(session, session.answered_by)))
        footer.append(_html_field("trace", session.trace_id))
        for backend, template in (trace_links or {}).items():
            footer.append(_html_link(backend, template, session.trace_id))
        parts.extend(["<dl>", *footer, "</dl>", "</article>"])
    parts.extend(["</body>", "</html>"])
    return "\n".join(parts) + "\n"


def _html_field(label: str, value: str | None, css: str = "value") -> str:
    return f'<dt>{escape(label)}</dt><dd class="{css}">{escape(value or "")}</dd>'


def _html_link(backend: str, template: str, trace_id: str) -> str:
    url = template.replace("{trace_id}", urllib.parse.quote(trace_id, safe=""))
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        return _html_field(backend, url)
    return f'<dt>{escape(backend)}</dt><dd><a href="{escape(url)}">{escape(url)}</a></dd>'


def _html_session(session: SessionView, heading: str, tag: str) -> list[str]:
    """A session from its heading to its answer; sub-sessions come as nested sections."""
    status_css = "value status-error" if session.status == "error" else "value"
    parts = [
        f"<{tag}>{escape(heading)} <code>{escape(session.id)}</code></{tag}>",
        "<dl>",
        _html_field("agent", session.agent),
        *(
            _html_field(label, value, status_css if label == "status" else "value")
            for label, value in _outcome(session)
        ),
        _html_field("started", session.start),
        _html_field("ended", session.end or "(never)"),
        _html_field("question", session.question),
        *([_html_field("tokens", _token_totals(session.usage))] if session.usage.tokens else []),
        *([_html_field("cost", _cost_total(session.usage))] if session.usage.costs else []),
        *(_html_field("evaluation", _evaluation(e)) for e in session.evaluations),
        "</dl>",
    ]
    for step in session.iterations:
        parts.extend(_html_iteration(step))
    parts.extend(_html_sub_sessions(session.sub_sessions))
    parts.extend(["<dl>", _html_field("answer", session.answer), "</dl>"])
    return parts


def _html_iteration(step: IterationView) -> list[str]:
    number = step.number if step.number is not None else "?"
    parts = ['<section class="iteration">', f"<h3>Iteration {number}</h3>"]
    parts.extend(_html_model_call(model) for model in step.model_calls)
    parts.extend(["<dl>", _html_field("thought", step.thought), _html_field("action", step.action)])
    if step.arguments:
        parts.append(_html_field("arguments", step.arguments))
    parts.append("</dl>")
    for call in step.tool_calls:
        parts.extend(_html_tool_call(call))
    if not step.tool_calls and step.observation is not None:
        parts.extend(["<dl>", _html_field("observation", step.observation), "</dl>"])
    parts.extend(_html_sub_sessions(step.sub_sessions))
    parts.append("</section>")
    return parts


def _html_model_call(model: ModelCallView) -> str:
    failed = model.status == "error"
    badge = ' <span class="badge">FAILED</span>' if failed else ""
    return (
        f'<div class="call model-call{" failed" if failed else ""}"><p>model call '
        f"<code>{escape(model.model or '?')}</code>{escape(_tokens(model))}{badge}</p></div>"
    )


def _html_tool_call(call: ToolCallView) -> list[str]:
    failed = call.status == "error"
    ident = f" <code>[{escape(call.call_id)}]</code>" if call.call_id else ""
    if failed:
        error = escape(_failure(call))
        outcome = f'<span class="badge">FAILED</span> <span class="value">{error}</span>'
    else:
        css = "outcome-ok" if call.status == "ok" else "outcome"
        outcome = f'<span class="{css}">{escape(call.status)}</span>'
    parts = [
        f'<div class="call tool-call{" failed" if failed else ""}">',
        f"<p>tool call <code>{escape(call.name)}</code>{ident} {outcome}</p>",
    ]
    fields = [
        _html_field(label, value)
        for label, value in (("arguments", call.arguments), ("observation", call.observation))
        if value is not None
    ]
    if fields:
        parts.extend(["<dl>", *fields, "</dl>"])
    parts.extend(_html_sub_sessions(call.sub_sessions))
    parts.append("</div>")
    return parts


def _html_sub_sessions(sessions: Sequence[SessionView]) -> list[str]:
    parts = []
    for sub in sessions:
        parts.append('<section class="sub-session">')
        parts.extend(_html_session(sub, "Sub-session", "h2"))
        parts.append("</section>")
    return parts


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


def _shortened(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _fixed_width_time(stamp: str) -> str:
    """A UTC dateTime with its fraction padded to microseconds, so that a column of them
    lines up (the canonical form drops the fraction's trailing zeros)."""
    seconds, fraction = instant_order(stamp)
    return f"{seconds}.{fraction}Z" if len(seconds) == 19 else stamp


def render_sessions_table(sessions: Sequence[SessionSummary]) -> str:
    """The ``sessions`` table, a line per session under a header, each ending in a newline."""
    header = ("ID", "START", "AGENT", "QUESTION", "ITER", "TOOLS", "FAILED", "STATUS", "TRACE")
    rows = [
        (
            s.id,
            _fixed_width_time(s.start),
            s.agent or "",
            _shortened((s.question or "").replace("\n", " "), 48),
            str(s.iterations),
            str(s.tool_calls),
            str(s.failed_calls),
            s.status,
            s.trace_id,
        )
        for s in sessions
    ]
    return columns([header, *[[printable(cell) for cell in row] for row in rows]])


def render_session_list(sessions: list[SessionSummary], fmt: str) -> str:
    """``sessions`` output: the table, or ``json`` rows."""
    return render_json(sessions) + "\n" if fmt == "json" else render_sessions_table(sessions)


def render_views(
    views: Sequence[SessionView], fmt: str, *, trace_links: Mapping[str, str] | None = None
) -> str:
    """``show`` output for one of :data:`VIEW_FORMATS`: one JSON list, HTML page or
    Markdown document of diagrams of all ``views`` (one view: its bare diagram), or one
    text per session, a blank line between them."""
    if fmt == "json":
        return render_json(list(views)) + "\n"
    if fmt == "html":
        return render_html(views, trace_links=trace_links)
    if fmt == "mermaid" and len(views) > 1:
        return _mermaid_document(views)
    links = dict(trace_links or {})
    draw: Callable[[SessionView], str] = (
        render_mermaid if fmt == "mermaid" else lambda view: render_text(view, trace_links=links)
    )
    return "\n\n".join(draw(view).rstrip("\n") for view in views) + "\n"
