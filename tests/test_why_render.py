"""``why`` output formats: Mermaid and DOT take any agent text and stay valid.

Labels are decoded back from what the writers produce (Mermaid's ``#code;`` entities, a
real DOT parser's quoted strings) and compared with the text they were made from.
"""

from __future__ import annotations

import json
import re
import unicodedata

import pydot
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.cli._render_why import render_why_dot, render_why_mermaid, render_why_text
from otel_prov.read import WhyEdge, WhyGraph, WhyNode

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:pydot")

HOSTILE = [
    '"quoted" and """triple"""',
    "back\\slash \\n \\N \\l \\u0041",
    "new\nline\r\n tab\t form\f bell\x07 esc\x1b[2J",
    "U+2028\u2028 U+2029\u2029 nbsp\u00a0 bidi\u202e",
    '"]; n9["pwned"] --> n0; click n0 "javascript:alert(1)"',
    "<b>html</b> &amp; #quot; #35; `markdown` | pipe | {braces} [brackets]",
    "} } ; DROP ALL ; INSERT DATA { GRAPH <urn:pwn> { <a> <b> <c> } }",
    "emoji 🙂 and 中文 and é (e + \u0301)",
    "",
]

_MERMAID_LINE = re.compile(
    r'^  n\d+(?:\["(?P<a>[^"]*)"\]|\("(?P<e>[^"]*)"\))$'
    r"|^  n\d+ (?:-->|-\.->)\|[A-Za-z]+\| n\d+$"
    r"|^  classDef failed [^\n]*$|^  class n\d+(?:,n\d+)* failed$"
)
_RAW_FORBIDDEN = re.compile(r'["\[\]{}|<>`&\\;#]')


def _graph(label: str, *, failed: bool = True) -> WhyGraph:
    nodes = (
        WhyNode("urn:x:answer", "Answer", label),
        WhyNode(
            "urn:x:call",
            "ToolCall",
            label,
            call_id=label,
            tool=label,
            status="error" if failed else "ok",
            error=label if failed else None,
            supports_answer=not failed,
        ),
        WhyNode("urn:x:obs", "Observation", label),
    )
    edges = (
        WhyEdge("urn:x:answer", "urn:x:obs", "wasDerivedFrom"),
        WhyEdge("urn:x:call", "urn:x:answer", "partOf"),
        WhyEdge("urn:x:obs", "urn:x:call", "wasGeneratedBy"),
    )
    return WhyGraph("urn:x:answer", nodes, edges)


def _visible(text: str) -> str:
    """What survives as text: no whitespace, no control or format characters."""
    return "".join(c for c in text if not c.isspace() and unicodedata.category(c)[0] != "C")


def _mermaid_labels(text: str) -> list[str]:
    lines = text.splitlines()
    assert lines[0] == "flowchart TD"
    labels = []
    for line in lines[1:]:
        match = _MERMAID_LINE.match(line)
        assert match is not None, line
        raw = match.group("a") or match.group("e")
        if raw is not None:
            assert _RAW_FORBIDDEN.search(re.sub(r"#\d+;", "", raw)) is None, raw
            labels.append(re.sub(r"#(\d+);", lambda m: chr(int(m.group(1))), raw))
    return labels


def _dot_labels(text: str) -> list[str]:
    dot_parses(text, 3, 3)
    (parsed,) = pydot.graph_from_dot_data(text)
    nodes = [node for node in parsed.get_nodes() if re.fullmatch(r"n\d+", node.get_name())]
    labels = []
    for node in sorted(nodes, key=lambda node: int(node.get_name()[1:])):
        quoted = node.get_label()
        assert quoted.startswith('"') and quoted.endswith('"')
        labels.append(re.sub(r"\\(.)", r"\1", quoted[1:-1]))
    return labels


def mermaid_lines_ok(text: str, nodes: int, edges: int) -> None:
    """``text`` is a flowchart of ``nodes`` boxes and ``edges`` arrows, every line of it
    in the grammar this writer uses, no label holding a raw special character."""
    assert len(_mermaid_labels(text)) == nodes
    assert sum(1 for line in text.splitlines() if "->" in line) == edges


def dot_parses(text: str, nodes: int, edges: int) -> None:
    """``text`` is a digraph a real DOT parser reads, with ``nodes`` nodes and ``edges``
    edges."""
    (parsed,) = pydot.graph_from_dot_data(text)
    assert len([n for n in parsed.get_nodes() if re.fullmatch(r"n\d+", n.get_name())]) == nodes
    assert len(parsed.get_edges()) == edges


def _check(labels: list[str], label: str, failed: bool = True) -> None:
    """Every label decodes to its node's text (the failed call's with its error)."""
    assert len(labels) == 3
    short = len(label) <= 30  # longer ones are cut to fit a box
    for decoded, kind in zip(labels, ("Answer", "ToolCall", "Observation"), strict=True):
        assert decoded.startswith(f"{kind}:")
        assert "\n" not in decoded and "\r" not in decoded
        if short:
            error = f"FAILED{label}" if kind == "ToolCall" and failed else ""
            expected = f"{kind}:{label}{error}"
            assert _visible(decoded) == _visible(expected)


def test_hostile_strings_make_valid_mermaid_and_dot() -> None:
    for label in HOSTILE:
        graph = _graph(label)
        _check(_mermaid_labels(render_why_mermaid(graph)), label)
        _check(_dot_labels(render_why_dot(graph)), label)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.booleans())
def test_any_label_gives_valid_mermaid(label: str, failed: bool) -> None:
    text = render_why_mermaid(_graph(label, failed=failed))
    _check(_mermaid_labels(text), label, failed)
    assert ("class n1 failed" in text) is failed


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=30), st.booleans())
def test_any_label_gives_valid_dot(label: str, failed: bool) -> None:
    _check(_dot_labels(render_why_dot(_graph(label, failed=failed))), label, failed)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_text_shows_no_control_character_and_json_round_trips(label: str) -> None:
    graph = _graph(label)
    text = render_why_text(graph)
    assert re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text) is None
    assert "FAILED" in text and "(does not support the answer)" in text
    assert json.loads(json.dumps(graph.as_json()))["nodes"][1]["label"] == label
