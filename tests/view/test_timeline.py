"""The timeline: a time axis, and the spans of every service a tool call reached."""

from __future__ import annotations

import dataclasses
import itertools
import xml.etree.ElementTree as ET
from typing import Any

from otel_prov.read._trace_spans import MOST_TRACE_SPANS, TraceSpanView
from otel_prov.read._views import DownstreamView
from otel_prov.view._pages import session_page
from otel_prov.view._timeline_svg import timeline_rows, timeline_svg
from tests.view.test_svg import SVG, _texts, _view


def _with_downstream() -> object:
    view = _view()
    step = view.iterations[0]
    call = dataclasses.replace(
        step.tool_calls[0],
        downstream=(
            DownstreamView(
                "urn:d1", "span", "GET", "agent-service", "error", 1,
                "2025-11-30T09:00:00.3Z", "2025-11-30T09:00:01.1Z", 800.0, "503", "HTTP status 503",
            ),
            DownstreamView(
                "urn:d2", "span", "GET /weather", "weather-service", "error", 2,
                "2025-11-30T09:00:00.35Z", "2025-11-30T09:00:01.05Z", 700.0, "503", None,
            ),
        ),
    )  # fmt: skip
    return dataclasses.replace(view, iterations=(dataclasses.replace(step, tool_calls=(call,)),))


def test_the_axis_has_ticks_at_round_times_from_the_start_of_the_run() -> None:
    svg = ET.fromstring(timeline_svg(_view()))  # a run of 2 s
    (axis,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "axis"]
    labels = [t.text for t in axis.iter(f"{SVG}text")]
    assert labels == ["0 s", "0.5 s", "1 s", "1.5 s", "2 s"]
    xs = [float(t.get("x", "0")) for t in axis.iter(f"{SVG}text")]
    assert xs == sorted(xs) and len({round(b - a, 1) for a, b in itertools.pairwise(xs)}) == 1
    bars = [g for g in svg.iter(f"{SVG}g") if "bar" in g.get("class", "").split()]
    first_bar = bars[0].find(f"{SVG}rect")
    assert first_bar is not None and float(first_bar.get("x", "0")) == xs[0]
    assert float(first_bar.get("y", "0")) > max(
        float(t.get("y", "0")) for t in axis.iter(f"{SVG}text")
    )


def test_a_calls_downstream_spans_are_rows_under_it_with_their_service() -> None:
    rows = list(timeline_rows(_with_downstream()))  # type: ignore[arg-type]
    assert [(r.depth, r.kind, r.label, r.service, r.failed) for r in rows][3:] == [
        (2, "tool-call", "tool get_weather", None, True),
        (3, "span", "GET", "agent-service", True),
        (4, "span", "GET /weather", "weather-service", True),
    ]
    svg = timeline_svg(_with_downstream())  # type: ignore[arg-type]
    assert "GET /weather · weather-service" in svg
    assert svg.count('class="bar span failed service-') == 2


def _span(
    ident: str, name: str, parent: str | None, service: str, start: str, end: str, **more: Any
) -> TraceSpanView:
    return TraceSpanView(
        ident, more.pop("kind", "Span"), name, parent, service, more.pop("status", "ok"),
        f"2025-11-30T09:00:{start}Z", f"2025-11-30T09:00:{end}Z", **more,
    )  # fmt: skip


def _trace() -> tuple[TraceSpanView, ...]:
    """The trace around ``_view()``'s run: a web front end's request into the agent's
    service (whose server span holds the run), a cache read directly under the step, the
    call's own HTTP span, and the front end's work after the answer."""
    return (
        _span("urn:ask", "GET /ask", None, "web-frontend", "00", "02.6"),
        _span("urn:post", "POST /agent", "urn:ask", "web-frontend", "00", "02.2", kind="Span"),
        _span("urn:server", "POST /agent", "urn:post", "agent-service", "00", "02.1",
              status="error", error="500: HTTP status 500"),
        _span("urn:s", "invoke_agent bot", "urn:server", "agent-service", "00", "02",
              kind="AgentSession", status="error"),
        _span("urn:i1", "iteration 1", "urn:s", "agent-service", "00.05", "01.5",
              kind="Iteration"),
        _span("urn:cache", "GET cache", "urn:i1", "redis", "00.12", "00.14"),
        _span("urn:m1", "chat gpt", "urn:i1", "agent-service", "00.1", "00.15", kind="ModelCall"),
        _span("urn:t1", "execute_tool get_weather", "urn:i1", "agent-service", "00.2", "01.2",
              kind="ToolCall", status="error"),
        _span("urn:render", "render answer", "urn:ask", "web-frontend", "02.3", "02.5"),
    )  # fmt: skip


def test_every_span_of_the_trace_is_a_row_where_it_sits_in_the_trace() -> None:
    """The server span around the run, the front end above it, a span directly under a
    step, and the front end's work after the run: each once, the run's own rows as before."""
    rows = list(timeline_rows(_view(), _trace()))
    assert [(r.depth, r.kind, r.label, r.service) for r in rows] == [
        (0, "span", "GET /ask", "web-frontend"),
        (1, "span", "POST /agent", "web-frontend"),
        (2, "span", "POST /agent", "agent-service"),
        (3, "session", "session bot", None),
        (4, "iteration", "iteration 1", None),
        (5, "model-call", "model gpt", None),
        (5, "span", "GET cache", "redis"),
        (5, "tool-call", "tool get_weather", None),
        (1, "span", "render answer", "web-frontend"),
    ]
    assert rows[2].failed and rows[2].note == "500: HTTP status 500"
    # What the run's view already shows is not drawn twice.
    with_downstream = list(timeline_rows(_with_downstream(), _trace()))  # type: ignore[arg-type]
    assert [r.label for r in with_downstream].count("GET /weather") == 1


def test_without_the_trace_the_run_is_drawn_as_before() -> None:
    assert list(timeline_rows(_view(), ())) == list(timeline_rows(_view()))
    orphan = (_span("urn:lost", "GET", "urn:gone", "other", "00.3", "00.4"),)
    rows = list(timeline_rows(_view(), orphan))
    assert [(r.depth, r.label) for r in rows][-1] == (0, "GET")  # its parent is not stored


def test_spans_are_coloured_by_service_with_a_legend() -> None:
    svg = ET.fromstring(timeline_svg(_view(), _trace()))
    bars = [g for g in svg.iter(f"{SVG}g") if "span" in g.get("class", "").split()]
    by_service: dict[str, set[str]] = {}
    for bar in bars:
        label = "".join(bar.find(f"{SVG}text").itertext())  # type: ignore[union-attr]
        colour = next(c for c in bar.get("class", "").split() if c.startswith("service-"))
        by_service.setdefault(label.rpartition(" · ")[2], set()).add(colour)
    assert sorted(by_service) == ["agent-service", "redis", "web-frontend"]
    assert all(len(colours) == 1 for colours in by_service.values())
    assert len({c for colours in by_service.values() for c in colours}) == 3
    (legend,) = [g for g in svg.iter(f"{SVG}g") if g.get("class") == "legend"]
    entries = [g for g in legend.iter(f"{SVG}g") if g.get("class", "").startswith("service-")]
    assert [("".join(e.itertext()), e.get("class")) for e in entries] == [
        (service, colour) for service, (colour,) in by_service.items()
    ]
    assert float(legend.find(f".//{SVG}text").get("y", "0")) < float(svg.get("height", "0"))  # type: ignore[union-attr]


def test_a_long_span_name_is_cut_before_its_service() -> None:
    deep = _span("urn:deep", "SELECT title, year FROM papers WHERE topic = $1", "urn:i1",
                 "research-service", "00.3", "00.4")  # fmt: skip
    svg = ET.fromstring(timeline_svg(_view(), (deep,)))
    (bar,) = [g for g in svg.iter(f"{SVG}g") if "span" in g.get("class", "").split()]
    label = _texts(bar)[0]
    assert label.startswith("SELECT title") and label.endswith("… · research-service")
    assert "WHERE topic = $1" in "".join(bar.find(f"{SVG}title").itertext())  # type: ignore[union-attr]


def test_the_page_says_when_the_trace_has_more_spans_than_are_drawn() -> None:
    few = session_page([_view()], traces={"t": _trace()}, standalone=True)
    assert "GET /ask · web-frontend" in few and "spans of the trace by start time" not in few
    many = tuple(
        _span(f"urn:x{k}", f"GET /{k}", "urn:i1", "cache", "00.3", "00.4")
        for k in range(MOST_TRACE_SPANS)
    )
    page = session_page([_view()], traces={"t": many}, standalone=True)
    assert f"The first {MOST_TRACE_SPANS} spans of the trace by start time are drawn" in page
