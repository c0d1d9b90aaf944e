"""The why-graph's drawing and the timeline's SVG: pure functions of hand-made inputs.

The why-graph is what the page's script draws (JSON); the timeline is read back as XML
(an SVG inside an HTML page must still be well-formed), so a label that broke out of its
element would show up as a parse error or a stray element, and every text is compared
with what went in.
"""

from __future__ import annotations

import itertools
import json
import xml.etree.ElementTree as ET
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.read._views import IterationView, ModelCallView, SessionView, ToolCallView
from otel_prov.view._timeline_svg import timeline_rows, timeline_svg
from otel_prov.view._why_graph import LINE_CHARS, excerpts, why_drawing

SVG = "{http://www.w3.org/2000/svg}"


def _node(ident: str, kind: str, label: str, **extra: Any) -> dict[str, Any]:
    return {"id": ident, "type": kind, "label": label, **extra}


def _edge(a: str, b: str, relation: str = "used") -> dict[str, str]:
    return {"from": a, "to": b, "relation": relation}


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


def _drawn(graph: dict[str, Any]) -> dict[str, Any]:
    """The drawing as the page's script reads it (JSON)."""
    data: dict[str, Any] = json.loads(why_drawing(graph).as_json())
    return data


def test_every_node_is_drawn_once_with_its_role_and_the_failed_call_is_marked() -> None:
    drawing = _drawn(DEMO)
    nodes = {node["iri"]: node for node in drawing["nodes"]}
    assert list(nodes) == [node["id"] for node in DEMO["nodes"]]
    assert nodes["session"]["activity"] and not nodes["obs"]["activity"]
    assert nodes["answer"]["root"] and [n for n in nodes.values() if n["root"]] == [nodes["answer"]]
    assert nodes["bad"]["failed"] and not nodes["ok"]["failed"]
    assert nodes["bad"]["lines"][-1] == "FAILED TimeoutError: slow"
    long = {**DEMO["nodes"][4], "error": "TimeoutError: weather service did not answer"}
    (cut,) = _drawn({"root": "x", "nodes": [long], "edges": []})["nodes"]
    assert cut["lines"][-1] == "FAILED TimeoutError: weather service…"
    # Each node is named in words, its class given beside.
    told = {(node["role"], node["type"]) for node in nodes.values()}
    assert told >= {("Answer", "Answer"), ("Tool call", "ToolCall"), ("Step 1 of 1", "Iteration")}
    assert len(drawing["edges"]) == len(DEMO["edges"])


def test_content_with_no_recorded_value_reads_as_such_not_as_its_iri() -> None:
    """An Arguments or Observation entity stored without a value (content capture off, or
    not recorded by the instrumentation): the store gives its IRI as its label."""
    args, obs, doc = "urn:otel-prov:t:3:arguments", "urn:otel-prov:t:3:observation", "https://d"
    graph = {
        "root": obs,
        "nodes": [
            _node(args, "Arguments", args),
            _node("call", "ToolCall", "lookup [c1]", tool="lookup", status="ok"),
            _node(obs, "Observation", obs),
            _node("ask", "Question", "How far?"),
            _node(doc, "Document", doc),
        ],
        "edges": [_edge("call", args), _edge(obs, "call", "wasGeneratedBy")],
    }
    nodes = {node["iri"]: node for node in _drawn(graph)["nodes"]}
    assert nodes[args]["lines"] == ["for lookup", "(not recorded)"]
    assert nodes[obs]["lines"] == ["from lookup", "(not recorded)"]
    assert nodes[args]["text"].startswith("Not recorded: the arguments for the call to lookup.")
    assert nodes["ask"]["lines"] == ["How far?"]  # a value that is recorded stays as it is
    assert nodes[doc]["lines"] == [doc]  # a source known by its IRI is named by it


def test_a_step_holds_its_calls_failed_or_not_and_what_they_returned() -> None:
    drawing = _drawn(DEMO)
    nodes = {node["iri"]: node for node in drawing["nodes"]}
    (step,) = drawing["groups"]
    assert step["kind"] == "step" and step["head"] == nodes["it1"]["id"] and not step["open"]
    assert {iri for iri, node in nodes.items() if node["group"] == step["id"]} == {
        "it1", "ok", "bad", "obs",
    }  # fmt: skip
    assert nodes["answer"]["group"] is None and nodes["session"]["group"] is None
    # Shut, the step says what each call returned or how it failed, the failure in red.
    assert step["lines"] == ["get_weather → 18 °C", "get_weather FAILED TimeoutError: slow"]
    assert step["red"] == [1] and step["role"] == "Step 1 of 1"


def test_time_runs_down_from_the_session_through_the_steps_to_the_answer() -> None:
    graph = {
        "root": "answer",
        "nodes": [
            _node("answer", "Answer", "a"),
            _node("session", "AgentSession", "s"),
            *(_node(f"it{n}", "Iteration", f"iteration {n}", part_of="session") for n in (1, 2)),
            _node("t1", "Thought", "first"),
            _node("t2", "Thought", "second"),
        ],
        "edges": [
            _edge("answer", "session", "wasGeneratedBy"),
            _edge("t1", "it1", "wasGeneratedBy"),
            _edge("t2", "it2", "wasGeneratedBy"),
        ],
    }
    drawing = _drawn(graph)
    ident = {node["iri"]: node["id"] for node in drawing["nodes"]}
    order = {(a, b) for a, b in drawing["order"]}
    pairs = [("session", "it1"), ("it1", "it2"), ("t1", "it2"), ("it2", "answer"), ("t2", "answer")]
    assert order == {(ident[a], ident[b]) for a, b in pairs}
    steps = [group for group in drawing["groups"] if group["kind"] == "step"]
    assert [step["head"] for step in steps] == [ident["it1"], ident["it2"]]
    assert [step["role"] for step in steps] == ["Step 1 of 2", "Step 2 of 2"]
    # The answer's edges that would cross the graph are drawn along its side instead.
    far = {(e["from"], e["to"]) for e in drawing["edges"] if e["far"]}
    assert far == {(ident["answer"], ident["session"])}


def test_a_cycle_of_parts_ends_and_edges_to_unknown_nodes_are_left_out() -> None:
    graph = {
        "root": "a",
        "nodes": [_node(x, "ToolCall", x, part_of=y) for x, y in ("ab", "ba")],
        "edges": [_edge("a", "b", "partOf"), _edge("a", "ghost")],
    }
    drawing = _drawn(graph)
    assert [node["group"] for node in drawing["nodes"]] == [None, None]
    assert [edge["relation"] for edge in drawing["edges"]] == ["partOf"]


def test_excerpts_that_would_read_alike_start_where_the_texts_part_ways() -> None:
    common = "Twice the population of Paris, as the census of the city counted it in 2021,"
    texts = [f"{common} is what?", f"{common} is 4.2 million.", f"{common} is 2 x 2.1 m.", "x"]
    shown = excerpts([*texts, texts[0]])
    assert len(set(shown[:4])) == 4 and shown[0] == shown[4]
    assert shown[0][0].startswith("…") and "what?" in " ".join(shown[0])
    assert shown[3] == ("x",)
    assert all(len(line) <= LINE_CHARS for lines in shown for line in lines)
    (long,) = excerpts(["word " * 40])
    assert len(long) == 2 and long[-1].endswith("…")


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=90), min_size=1, max_size=6))
def test_different_texts_get_different_excerpts(texts: list[str]) -> None:
    shown = excerpts(texts)
    flat = [" ".join(text.split()) for text in texts]
    for i, j in itertools.combinations(range(len(texts)), 2):
        if flat[i] != flat[j]:
            assert shown[i] != shown[j], (texts[i], texts[j])


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
    assert durations == ["2 s", "1.45 s", "50 ms", "1 s"]
    widths = [float(b.find(f"{SVG}rect").get("width", "0")) for b in bars]  # type: ignore[union-attr]
    assert widths[0] > widths[1] > widths[3] > widths[2] > 0


def test_an_activity_that_never_ended_says_so_and_nested_sessions_are_indented() -> None:
    sub = _view(id="urn:sub", agent="helper", end=None, iterations=())
    rows = list(timeline_rows(_view(end=None, sub_sessions=(sub,))))
    assert [(r.depth, r.kind) for r in rows][-1] == (1, "session")
    svg = timeline_svg(_view(end=None))
    assert "never ended" in svg
