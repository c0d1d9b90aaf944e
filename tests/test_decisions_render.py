"""Evidence edges as the renderers draw them, from a why-graph written by hand: ``why
--format mermaid`` and ``dot`` colour supports and contradicts apart, the web view's
drawing says which way each speaks and carries its weight in its label."""

from __future__ import annotations

from otel_prov.cli._render_why import render_why_dot, render_why_mermaid, render_why_text
from otel_prov.read._why import WhyEdge, WhyGraph, WhyNode
from otel_prov.view._why_graph import why_drawing

GRAPH = WhyGraph(
    root="urn:d",
    nodes=(
        WhyNode("urn:d", "Decision", "Refuse", reasoning_id="d1", confidence=0.7,
                time="2025-11-30T09:00:05Z"),
        WhyNode("urn:o", "Observation", "Delivered", time="2025-11-30T09:00:01Z"),
        WhyNode("urn:m", "Observation", "The box was empty", time="2025-11-30T09:00:09Z"),
        WhyNode("urn:x", "UnresolvedReference", "unknown tool call call_9"),
    ),
    edges=(
        WhyEdge("urn:d", "urn:o", "supportedBy", 0.9, True),
        WhyEdge("urn:d", "urn:m", "contradictedBy", 0.7, False),
        WhyEdge("urn:d", "urn:x", "contradictedBy", None, False),
    ),
)  # fmt: skip


def test_mermaid_and_dot_draw_supports_and_contradicts_apart() -> None:
    mermaid = render_why_mermaid(GRAPH)
    assert "n0 -->|supportedBy 0.9| n1" in mermaid
    assert "n0 -.->|contradictedBy 0.7| n2" in mermaid
    assert "linkStyle 0 stroke:#2e7d32,stroke-width:2px\n" in mermaid
    assert "linkStyle 1 stroke:#c62828,stroke-width:2px,stroke-dasharray:4 3" in mermaid
    dot = render_why_dot(GRAPH)
    assert 'n0 -> n1 [label="supportedBy 0.9", color="#2e7d32", style="bold"]' in dot
    assert 'n0 -> n2 [label="contradictedBy 0.7", color="#c62828", style="dashed"]' in dot


def test_the_text_names_each_piece_of_evidence_and_when_it_came() -> None:
    text = render_why_text(GRAPH)
    lines = text.splitlines()
    assert lines[1] == "Decision d1 [1]: Refuse (confidence 0.7)"
    assert lines[2] == "  for:             [2] Observation: Delivered  (weight 0.9)"
    assert lines[3] == "  against:         none"
    assert lines[4] == (
        "  not considered:  [3] Observation: The box was empty  "
        "(weight 0.7, against, came after the decision)"
    )
    assert lines[5].endswith(
        "[4] UnresolvedReference: unknown tool call call_9  (against, not in the run)"
    )
    assert (
        "    contradictedBy   [3] Observation: The box was empty  (weight 0.7, came after it)"
        in lines
    )


def test_the_drawing_says_which_way_evidence_speaks_with_its_weight() -> None:
    drawn = why_drawing(GRAPH.as_json())
    told = [
        (e["relation"], e["label"], e["term"], e["evidence"], e["considered"], e["backward"])
        for e in drawn.edges
    ]
    assert told == [
        ("supportedBy", "supported by 0.9", "supportedBy 0.9", "supports", True, False),
        ("contradictedBy", "contradicted by 0.7", "contradictedBy 0.7", "contradicts", False, True),
        ("contradictedBy", "contradicted by", "contradictedBy", "contradicts", False, True),
    ]
    plain = why_drawing(
        {
            "root": "a",
            "nodes": [{"id": "a"}, {"id": "b"}],
            "edges": [{"from": "a", "to": "b", "relation": "used"}],
        }
    )
    assert [(e["label"], e["evidence"]) for e in plain.edges] == [("used", None)]
