"""The timeline: a time axis, and the spans of every service a tool call reached."""

from __future__ import annotations

import dataclasses
import itertools
import xml.etree.ElementTree as ET

from otel_prov.read._views import DownstreamView
from otel_prov.view._timeline_svg import timeline_rows, timeline_svg
from tests.view.test_svg import SVG, _view


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
