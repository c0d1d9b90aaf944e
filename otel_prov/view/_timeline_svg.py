"""A run's activities and the spans of the trace around it as a Gantt chart, drawn as SVG
on the server.

One row per activity in run order (the session, each iteration, its model and tool
calls, under each call the spans it caused in every service it reached, and nested
sessions below what started them), indented by depth, with a bar from its start to its
end on one time axis and its duration written beside it.  Every other span of the trace
the store holds (the read API's ``trace_spans``) is a row where it sits in the trace:
the HTTP server span around the run and the spans of the service that sent the request
above the session, a span directly under a step among the step's calls, spans after the
run below it.  Span rows are coloured by service, named in a legend.  The axis on top
marks round times from the trace's start.  Times are the ``xsd:dateTime`` strings the
read API returns; an activity that never ended runs to the end of the chart and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from html import escape

from otel_prov.prov._rdf import instant_order
from otel_prov.read._trace_spans import TraceSpanView
from otel_prov.read._views import DownstreamView, SessionView
from otel_prov.view._labels import duration_label

__all__ = ["TimelineRow", "timeline_rows", "timeline_svg"]

ROW_HEIGHT = 18
AXIS_HEIGHT = 22
LEGEND_HEIGHT = 22
LABEL_WIDTH = 300
CHART_WIDTH = 560
DURATION_WIDTH = 90
_INDENT = 12
_MOST_TICKS = 6
_SERVICE_COLOURS = 6
"""Span bars take one of this many colours (``service-0``...), one per service in turn."""


@dataclass(frozen=True)
class TimelineRow:
    id: str
    """The activity's IRI."""
    depth: int
    kind: str
    """``session``, ``iteration``, ``model-call``, ``tool-call``, or ``span`` for any other
    span of the trace (what a call caused outside the agent, the spans around the run)."""
    label: str
    start: str | None
    end: str | None
    failed: bool
    service: str | None = None
    """The service of a ``span`` row."""
    note: str | None = None
    """Why a ``span`` row failed, where the store says."""


def timeline_rows(
    session: SessionView, trace: Sequence[TraceSpanView] = ()
) -> Iterator[TimelineRow]:
    """The rows the chart draws, in order: the run's (as :func:`_run_rows`), and each span
    of ``trace`` it does not show, under its parent span (the run's rows under the span
    the run is part of), after the siblings that start before it.  A span whose parent is not
    in ``trace`` is a root."""
    own = _tree(list(_run_rows(session)))
    if not trace:
        yield from _flat(own, 0)
        return
    nodes = {node.row.id: node for node in _walk(own)}
    shown = set(nodes)
    parents = {span.id: span.parent for span in trace}
    for span in trace:
        if span.id not in shown:
            nodes[span.id] = _Node(_span_row(span))
    roots: list[_Node] = []
    for span in trace:
        if span.id in shown and span.id != session.id:
            continue
        parent = parents[span.id]
        holder = None if parent is None else nodes.get(parent)
        _insert(holder.children if holder is not None else roots, nodes[span.id])
    if not any(node is own[0] for node in _walk(roots)):  # not in the trace, or a partOf loop
        _insert(roots, own[0])
    yield from _flat(roots, 0)


@dataclass(eq=False)
class _Node:
    """A row and the rows under it; told apart by identity."""

    row: TimelineRow
    children: list[_Node] = field(default_factory=list)
    start: tuple[str, str] = field(init=False)
    """The row's start, in time order (``("", "")`` when unknown)."""

    def __post_init__(self) -> None:
        self.start = instant_order(self.row.start) if self.row.start else ("", "")


def _tree(rows: Sequence[TimelineRow]) -> list[_Node]:
    """The rows (each one deeper than the row it is under) as a forest."""
    roots: list[_Node] = []
    path: list[_Node] = []
    for row in rows:
        node = _Node(row)
        while path and path[-1].row.depth >= row.depth:
            path.pop()
        (path[-1].children if path else roots).append(node)
        path.append(node)
    return roots


def _walk(nodes: Iterable[_Node]) -> Iterator[_Node]:
    for node in nodes:
        yield node
        yield from _walk(node.children)


def _flat(nodes: Iterable[_Node], depth: int) -> Iterator[TimelineRow]:
    for node in nodes:
        yield replace(node.row, depth=depth)
        yield from _flat(node.children, depth + 1)


def _insert(siblings: list[_Node], node: _Node) -> None:
    """``node`` after the last of ``siblings`` that starts no later than it (first when
    none does), keeping the order of those already there.  The trace comes earliest
    first, so the search from the end mostly stops at once."""
    at = len(siblings)
    while at and siblings[at - 1].row.start and siblings[at - 1].start > node.start:
        at -= 1
    siblings.insert(at, node)


def _span_row(span: TraceSpanView) -> TimelineRow:
    return TimelineRow(
        span.id, 0, "span", span.name, span.start, span.end, span.status == "error",
        span.service, span.error,
    )  # fmt: skip


def _run_rows(session: SessionView, depth: int = 0) -> Iterator[TimelineRow]:
    """The session's activities in the order the page shows them."""
    yield TimelineRow(
        session.id, depth, "session", f"session {session.agent or ''}".strip(), session.start,
        session.end, session.status == "error",
    )  # fmt: skip
    for step in session.iterations:
        number = step.number if step.number is not None else "?"
        yield TimelineRow(
            step.id, depth + 1, "iteration", f"iteration {number}", step.start, step.end,
            step.status == "error",
        )  # fmt: skip
        for model in step.model_calls:
            yield TimelineRow(
                model.id, depth + 2, "model-call", f"model {model.model or '?'}", model.start,
                model.end, model.status == "error",
            )  # fmt: skip
            yield from _span_rows(model.downstream, depth + 2)
        for call in step.tool_calls:
            yield TimelineRow(
                call.id, depth + 2, "tool-call", f"tool {call.name}", call.start, call.end,
                call.status == "error",
            )  # fmt: skip
            yield from _span_rows(call.downstream, depth + 2)
            for sub in call.sub_sessions:
                yield from _run_rows(sub, depth + 3)
        for sub in step.sub_sessions:
            yield from _run_rows(sub, depth + 2)
    for sub in session.sub_sessions:
        yield from _run_rows(sub, depth + 1)


def _span_rows(caused: Iterable[DownstreamView], depth: int) -> Iterator[TimelineRow]:
    """The spans a call caused, below it; a session it reached comes whole, after them."""
    for span in caused:
        if span.kind == "span":
            reason = [part for part in (span.error_type, span.error_message) if part]
            yield TimelineRow(
                span.id, depth + span.depth, "span", span.name, span.start, span.end,
                span.status == "error", span.service, ": ".join(reason) or None,
            )  # fmt: skip


def _seconds(stamp: str | None) -> float | None:
    """Seconds since the epoch of a canonical UTC ``xsd:dateTime``; ``None`` if unreadable."""
    if not stamp:
        return None
    whole, fraction = instant_order(stamp)
    try:
        moment = datetime.fromisoformat(whole).replace(tzinfo=timezone.utc)  # strptime: 10x slower
    except ValueError:
        return None
    return moment.timestamp() + float(f"0.{fraction or 0}")


def _ticks(total: float) -> tuple[float, list[float]]:
    """A round step (1, 2 or 5 times a power of ten) giving at most ``_MOST_TICKS``
    intervals over ``total`` seconds, and the ticks from 0 to ``total``."""
    power = 10.0 ** math.floor(math.log10(total / _MOST_TICKS))
    step = next(m * power for m in (1, 2, 5, 10) if total / (m * power) <= _MOST_TICKS)
    count = int(total / step + 1e-9)
    return step, [round(k * step, 12) for k in range(count + 1)]


def _tick_label(seconds: float, total: float) -> str:
    if total >= 1:
        return f"{seconds:.6g} s"
    if total >= 0.001:
        return f"{seconds * 1000:.6g} ms"
    return f"{seconds * 1_000_000:.6g} µs"


def _axis(total: float, height: int) -> str:
    """The time axis: a tick and a label at each round time, a grid line down the chart."""
    parts = ['<g class="axis">']
    for tick in _ticks(total)[1]:
        x = LABEL_WIDTH + tick / total * CHART_WIDTH
        parts.append(
            f'<path class="tick" d="M{x:.1f} {AXIS_HEIGHT - 5} V{height}"></path>'
            f'<text x="{x:.1f}" y="{AXIS_HEIGHT - 8}" text-anchor="middle">'
            f"{escape(_tick_label(tick, total))}</text>"
        )
    parts.append("</g>")
    return "".join(parts)


def timeline_svg(session: SessionView, trace: Sequence[TraceSpanView] = ()) -> str:
    """The Gantt chart (an ``<svg>`` element) of ``session`` and the rest of its ``trace``
    under its time axis, and below it the legend of the services' colours; each bar's
    ``<title>`` holds its start and end, a failed activity's bar has the ``failed``
    class, and a span's bar the ``service-N`` class of its service."""
    rows = list(timeline_rows(session, trace))
    spans = [(_seconds(row.start), _seconds(row.end)) for row in rows]
    known = [t for pair in spans for t in pair if t is not None]
    first = min(known, default=0.0)
    total = max(max(known, default=0.0) - first, 1e-9)
    services: dict[str, int] = {}
    for row in rows:
        if row.kind == "span":
            services.setdefault(row.service or "", len(services) % _SERVICE_COLOURS)
    width = LABEL_WIDTH + CHART_WIDTH + DURATION_WIDTH
    chart = AXIS_HEIGHT + ROW_HEIGHT * len(rows) + 4
    height = chart + (LEGEND_HEIGHT if services else 0)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="timeline">',
        _axis(total, chart),
    ]
    for number, (row, (start, end)) in enumerate(zip(rows, spans, strict=True)):
        y = AXIS_HEIGHT + number * ROW_HEIGHT + 2
        left = LABEL_WIDTH + ((start if start is not None else first) - first) / total * CHART_WIDTH
        stop = end if end is not None else first + total
        right = LABEL_WIDTH + (stop - first) / total * CHART_WIDTH
        took = (
            duration_label(stop - start) if start is not None and end is not None else "never ended"
        )
        classes = f"bar {row.kind}" + (" failed" if row.failed else "")
        label = row.label
        shown = _fitted(label, "", row.depth)
        if row.kind == "span":
            classes += f" service-{services[row.service or '']}"
            label = f"{row.label} · {row.service}" if row.service else row.label
            shown = _fitted(row.label, f" · {row.service}" if row.service else "", row.depth)
        outcome = f"; FAILED {row.note}" if row.failed and row.note else ""
        tip = f"{label}: {row.start or '?'} to {row.end or '(never)'} ({took}){outcome}"
        parts.append(
            f'<g class="{classes}"><title>{escape(tip)}</title>'
            f'<text x="{4 + row.depth * _INDENT}" y="{y + 12}">'
            f"{escape(shown)}</text>"
            f'<rect x="{left:.1f}" y="{y + 2}" width="{max(right - left, 1.0):.1f}" '
            f'height="{ROW_HEIGHT - 5}"></rect>'
            f'<text x="{LABEL_WIDTH + CHART_WIDTH + 6}" y="{y + 12}" class="duration">'
            f"{escape(took)}</text></g>"
        )
    if services:
        parts.append(_legend(services, chart))
    parts.append("</svg>")
    return "".join(parts)


_CHAR_WIDTH = 6.0
"""About the width of a character of the chart's labels, in pixels."""


def _fitted(name: str, service: str, depth: int) -> str:
    """``name`` and then ``service`` as they fit left of the bars at ``depth``: the name
    cut with an ellipsis first, so that the service stays readable."""
    most = max(int((LABEL_WIDTH - 8 - depth * _INDENT) / _CHAR_WIDTH), 12)
    if len(name) + len(service) <= most:
        return name + service
    room = most - len(service)
    if room < 8:  # a service name too long to keep whole
        return (name + service)[: most - 1] + "…"
    return name[: room - 1] + "…" + service


def _legend(services: dict[str, int], top: int) -> str:
    """A swatch and a name per service, in the order their spans first appear."""
    parts = ['<g class="legend">']
    x = 4.0
    for service, colour in services.items():
        name = service or "(no service)"
        parts.append(
            f'<g class="service-{colour}"><rect x="{x:.1f}" y="{top + 5}" width="12" '
            f'height="12"></rect><text x="{x + 16:.1f}" y="{top + 15}">{escape(name)}</text></g>'
        )
        x += 16 + len(name) * _CHAR_WIDTH + 14
    parts.append("</g>")
    return "".join(parts)
