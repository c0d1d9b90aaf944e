"""A session's activities as a Gantt chart, drawn as SVG on the server.

One row per activity in run order (the session, each iteration, its model and tool
calls, under each call the spans it caused in every service it reached, and nested
sessions below what started them), indented by depth, with a bar from its start to its
end on one time axis and its duration written beside it.  The axis on top marks round
times from the run's start.  Times are the ``xsd:dateTime`` strings the read API
returns; an activity that never ended runs to the end of the chart and says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from otel_prov.prov._rdf import instant_order
from otel_prov.read._views import DownstreamView, SessionView
from otel_prov.view._labels import duration_label

__all__ = ["TimelineRow", "timeline_rows", "timeline_svg"]

ROW_HEIGHT = 18
AXIS_HEIGHT = 22
LABEL_WIDTH = 300
CHART_WIDTH = 560
DURATION_WIDTH = 90
_INDENT = 12
_MOST_TICKS = 6
_SERVICE_COLOURS = 6
"""Span bars take one of this many colours (``service-0``...), one per service in turn."""


@dataclass(frozen=True)
class TimelineRow:
    depth: int
    kind: str
    """``session``, ``iteration``, ``model-call``, ``tool-call``, or ``span`` for what a
    tool call caused outside the agent."""
    label: str
    start: str | None
    end: str | None
    failed: bool
    service: str | None = None
    """The service of a ``span`` row."""


def timeline_rows(session: SessionView, depth: int = 0) -> Iterator[TimelineRow]:
    """The session's activities in the order the page shows them."""
    yield TimelineRow(
        depth, "session", f"session {session.agent or ''}".strip(), session.start, session.end,
        session.status == "error",
    )  # fmt: skip
    for step in session.iterations:
        number = step.number if step.number is not None else "?"
        yield TimelineRow(
            depth + 1, "iteration", f"iteration {number}", step.start, step.end,
            step.status == "error",
        )  # fmt: skip
        for model in step.model_calls:
            yield TimelineRow(
                depth + 2, "model-call", f"model {model.model or '?'}", model.start, model.end,
                model.status == "error",
            )  # fmt: skip
            yield from _span_rows(model.downstream, depth + 2)
        for call in step.tool_calls:
            yield TimelineRow(
                depth + 2, "tool-call", f"tool {call.name}", call.start, call.end,
                call.status == "error",
            )  # fmt: skip
            yield from _span_rows(call.downstream, depth + 2)
            for sub in call.sub_sessions:
                yield from timeline_rows(sub, depth + 3)
        for sub in step.sub_sessions:
            yield from timeline_rows(sub, depth + 2)
    for sub in session.sub_sessions:
        yield from timeline_rows(sub, depth + 1)


def _span_rows(caused: Iterable[DownstreamView], depth: int) -> Iterator[TimelineRow]:
    """The spans a call caused, below it; a session it reached comes whole, after them."""
    for span in caused:
        if span.kind == "span":
            yield TimelineRow(
                depth + span.depth, "span", span.name, span.start, span.end,
                span.status == "error", span.service,
            )  # fmt: skip


def _seconds(stamp: str | None) -> float | None:
    """Seconds since the epoch of a canonical UTC ``xsd:dateTime``; ``None`` if unreadable."""
    if not stamp:
        return None
    whole, fraction = instant_order(stamp)
    try:
        moment = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
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


def timeline_svg(session: SessionView) -> str:
    """The Gantt chart (an ``<svg>`` element) of ``session`` under its time axis; each
    bar's ``<title>`` holds its start and end, a failed activity's bar has the ``failed``
    class, and a span's bar the ``service-N`` class of its service."""
    rows = list(timeline_rows(session))
    spans = [(_seconds(row.start), _seconds(row.end)) for row in rows]
    known = [t for pair in spans for t in pair if t is not None]
    first = min(known, default=0.0)
    total = max(max(known, default=0.0) - first, 1e-9)
    width = LABEL_WIDTH + CHART_WIDTH + DURATION_WIDTH
    height = AXIS_HEIGHT + ROW_HEIGHT * len(rows) + 4
    services: dict[str, int] = {}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="timeline">',
        _axis(total, height),
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
        if row.kind == "span":
            colour = services.setdefault(row.service or "", len(services) % _SERVICE_COLOURS)
            classes += f" service-{colour}"
            label = f"{row.label} · {row.service}" if row.service else row.label
        tip = f"{label}: {row.start or '?'} to {row.end or '(never)'} ({took})"
        parts.append(
            f'<g class="{classes}"><title>{escape(tip)}</title>'
            f'<text x="{4 + row.depth * _INDENT}" y="{y + 12}">{escape(label[:40])}</text>'
            f'<rect x="{left:.1f}" y="{y + 2}" width="{max(right - left, 1.0):.1f}" '
            f'height="{ROW_HEIGHT - 5}"></rect>'
            f'<text x="{LABEL_WIDTH + CHART_WIDTH + 6}" y="{y + 12}" class="duration">'
            f"{escape(took)}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
