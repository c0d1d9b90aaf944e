"""The why-graph and the timeline as SVG: pure functions of hand-made inputs.

Each drawing is read back as XML (an SVG inside an HTML page must still be well-formed),
so a label that broke out of its element would show up as a parse error or a stray
element, and every text is compared with what went in.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.read._views import IterationView, ModelCallView, SessionView, ToolCallView
from otel_prov.view._timeline_svg import timeline_rows, timeline_svg
from otel_prov.view._why_svg import layout, why_svg

SVG = "{http://www.w3.org/2000/svg}"


def _node(ident: str, kind: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"id": ident, "type": kind, "label": label, **extra}


def _edge(a: str, b: str, relation: str = "used") -> dict[str, str]:
    return {"from": a, "to": b, "relation": relation}


def _groups(svg: str) -> dict[str, ET.Element]:
    """Node id (``data-iri``) -> its ``<g>``."""
    root = ET.fromstring(svg)
    return {g.get("data-iri", ""): g for g in root.iter(f"{SVG}g") if "node" in g.get("class", "")}


def _texts(element: ET.Element) -> list[str]:
    return [t.text or "" for t in element.iter(f"{SVG}text")]


DEMO = {
    "root": "answer",
    "nodes": [
        _node("answer", "Answer", "It is 64.4 °F"),
        _node("session", "AgentSession", "weather-assistant"),
        _node("obs", "Observation", "18 °C"),
        _node("ok", "ToolCall", "get_weather", status="ok", tool="get_weather"),
        _node("bad", "ToolCall", "get_weather", status="error", error="TimeoutError: slow"),
        _node("it1", "Iteration", "iteration 1"),
    ],
    "edges": [
        _edge("answer", "session", "wasGeneratedBy"),
        _edge("answer", "obs", "wasDerivedFrom"),
        _edge("obs", "ok", "wasGeneratedBy"),
        _edge("ok", "it1", "partOf"),
        _edge("bad", "it1", "partOf"),
        _edge("it1", "session", "partOf"),
    ],
}


def test_every_node_is_drawn_once_with_its_kind_and_the_failed_call_is_marked() -> None:
    groups = _groups(why_svg(DEMO))
    assert set(groups) == {node["id"] for node in DEMO["nodes"]}
    classes = {ident: set(g.get("class", "").split()) for ident, g in groups.items()}
    assert classes["session"] >= {"node", "activity"}
    assert classes["obs"] >= {"node", "entity"}
    assert "root" in classes["answer"]
    assert "failed" in classes["bad"] and "failed" not in classes["ok"]
    assert any("TimeoutError: slow" in text for text in _texts(groups["bad"]))
    assert "TimeoutError: slow" in (groups["bad"].find(f"{SVG}title").text or "")
    edges = ET.fromstring(why_svg(DEMO)).findall(f"{SVG}path")
    assert len(edges) == len(DEMO["edges"])


def test_layers_are_longest_paths_and_every_edge_points_down() -> None:
    # a -> b -> c and a -> c: c goes below b, not beside it.
    placed = layout(3, [(0, 1, ""), (1, 2, ""), (0, 2, "")])
    assert placed.layers == ((0,), (1,), (2,))
    where = layout(6, [(a, b, "") for a, b in [(0, 1), (0, 2), (1, 3), (2, 4), (3, 5), (4, 5)]])
    depth = {node: d for node, (d, _) in where.position().items()}
    assert all(depth[b] > depth[a] for a, b, _ in where.edges)


def test_ordering_removes_the_crossing_a_naive_order_has() -> None:
    # Top row 0, 1; bottom row 2, 3 in input order, but 0 -> 3 and 1 -> 2: crossed as given.
    placed = layout(4, [(0, 3, ""), (1, 2, "")])
    assert placed.crossings() == 0


def test_a_cycle_is_broken_and_still_drawn() -> None:
    graph = {
        "root": "a",
        "nodes": [_node(x, "Thought", x) for x in "abc"],
        "edges": [_edge("a", "b"), _edge("b", "c"), _edge("c", "a"), _edge("a", "a")],
    }
    assert set(_groups(why_svg(graph))) == {"a", "b", "c"}
    assert len(layout(3, [(0, 1, ""), (1, 2, ""), (2, 0, "")]).edges) == 2


def test_edges_to_unknown_nodes_are_left_out() -> None:
    graph = {"root": "a", "nodes": [_node("a", "Answer", "x")], "edges": [_edge("a", "ghost")]}
    assert ET.fromstring(why_svg(graph)).findall(f"{SVG}path") == []


_HOSTILE = st.sampled_from(
    ["<script>alert(1)</script>", "]]>", '"/><script>x</script>', "&amp;", "'", "<!--", "&"]
)
_text = st.lists(st.one_of(_HOSTILE, st.text(max_size=6)), min_size=1, max_size=3).map("".join)
_xml_text = _text.map(lambda t: "".join(c for c in t if c.isprintable() and c not in "\r"))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(_xml_text, _xml_text, _xml_text), min_size=1, max_size=6))
def test_hostile_labels_stay_text(values: list[tuple[str, str, str]]) -> None:
    nodes = [
        _node(f"urn:n{i}{ident}", "ToolCall", label, status="error", error=error)
        for i, (ident, label, error) in enumerate(values)
    ]
    edges = [_edge(nodes[i]["id"], nodes[i + 1]["id"], values[i][0]) for i in range(len(nodes) - 1)]
    svg = why_svg({"root": nodes[0]["id"], "nodes": nodes, "edges": edges})
    root = ET.fromstring(svg)  # well-formed: nothing broke out of its element
    assert {element.tag for element in root.iter()} <= {
        f"{SVG}{tag}" for tag in ("svg", "a", "g", "rect", "text", "title", "path")
    }
    groups = _groups(svg)
    assert set(groups) == {node["id"] for node in nodes}
    for node, (_, label, error) in zip(nodes, values, strict=True):
        title = groups[node["id"]].find(f"{SVG}title")
        assert title is not None and f"ToolCall: {label}" in (title.text or "")
        assert error in (title.text or "")
    relations = [path.find(f"{SVG}title") for path in root.iter(f"{SVG}path")]
    assert [(t.text or "") if t is not None else None for t in relations] == [
        edge["relation"] for edge in edges
    ]


def _view(**changes: Any) -> SessionView:
    failed = ToolCallView(
        "urn:t1", "get_weather", "c1", "error", "TimeoutError", "slow", None, None,
        start="2025-11-30T09:00:00.2Z", end="2025-11-30T09:00:01.2Z",
    )  # fmt: skip
    model = ModelCallView(
        "urn:m1", "gpt", 1, 2, "ok", start="2025-11-30T09:00:00.1Z", end="2025-11-30T09:00:00.15Z"
    )
    step = IterationView(
        "urn:i1", 1, "t", "get_weather", None, None, "ok", (failed,), (model,),
        start="2025-11-30T09:00:00.05Z", end="2025-11-30T09:00:01.5Z",
    )  # fmt: skip
    base = SessionView(
        id="urn:s", trace_id="t", span_id="s", agent="bot", conversation_id=None,
        status="error", start="2025-11-30T09:00:00Z", end="2025-11-30T09:00:02Z",
        question="q", answer="a", failed_calls=1, iterations=(step,),
    )  # fmt: skip
    return SessionView(**{**base.__dict__, **changes})


def test_the_timeline_has_a_bar_per_activity_with_its_duration() -> None:
    svg = ET.fromstring(timeline_svg(_view()))
    bars = [g for g in svg.iter(f"{SVG}g") if "bar" in g.get("class", "").split()]
    assert [b.get("class") for b in bars] == [
        "bar session failed", "bar iteration", "bar model-call", "bar tool-call failed",
    ]  # fmt: skip
    durations = [_texts(b)[1] for b in bars]
    assert durations == ["2.00 s", "1.45 s", "50.0 ms", "1.00 s"]
    widths = [float(b.find(f"{SVG}rect").get("width", "0")) for b in bars]  # type: ignore[union-attr]
    assert widths[0] > widths[1] > widths[3] > widths[2] > 0


def test_an_activity_that_never_ended_says_so_and_nested_sessions_are_indented() -> None:
    sub = _view(id="urn:sub", agent="helper", end=None, iterations=())
    rows = list(timeline_rows(_view(end=None, sub_sessions=(sub,))))
    assert [(r.depth, r.kind) for r in rows][-1] == (1, "session")
    svg = timeline_svg(_view(end=None))
    assert "never ended" in svg
