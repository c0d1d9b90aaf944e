"""``otel-prov why`` output: text for people, JSON for programs, Mermaid and Graphviz DOT.

Labels are agent text, so anything may be in them.  Mermaid reads a quoted label up to
the next ``"`` and decodes ``#...;`` entity codes and HTML inside it; DOT reads a quoted
string up to an unescaped ``"`` and gives backslashes meaning (``\\n``, ``\\N``, line
continuations).  Each writer therefore escapes every character that could end or change
a label, and writes node ids of its own (``n0``, ``n1``...), never IRIs.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable

from otel_prov.cli._terminal import printable
from otel_prov.read._why import WhyGraph, WhyNode
from otel_prov.view._labels import duration_label

__all__ = [
    "dot_string",
    "mermaid_label",
    "render_why",
    "render_why_dot",
    "render_why_mermaid",
    "render_why_text",
]


_LABEL_WIDTH = 80
_ACTIVITIES = {"AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Span"}
_FAILED_COLOUR = "#c62828"


def _one_line(text: str, width: int = _LABEL_WIDTH) -> str:
    """``text`` on one line (every kind of line break and control character a space),
    cut to ``width`` characters with an ellipsis."""
    flat = "".join(
        " " if char.isspace() or unicodedata.category(char)[0] == "C" else char for char in text
    )
    flat = " ".join(flat.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _failed(node: WhyNode) -> bool:
    """A call or step that failed; a session's ``error`` only says that one of its calls
    did, and it may well have answered."""
    return node.status == "error" and node.type != "AgentSession"


def _heading(node: WhyNode) -> str:
    """What a diagram box says: the node's type and label, and how a failed one failed."""
    text = f"{node.type}: {node.label}"
    if _failed(node):
        text += f" FAILED {node.error or ''}".rstrip()
    return _one_line(text)


def _outcome(node: WhyNode) -> str:
    if _failed(node):
        failed = f"FAILED {_one_line(node.error or '', 1000)}".rstrip()
        return f"  {failed}" + ("" if node.supports_answer else " (does not support the answer)")
    return f"  {node.status}" if node.status else ""


def _ran(node: WhyNode) -> str:
    """`` (service, duration)`` of what a tool call caused outside the agent."""
    parts = [node.service] if node.service else []
    if node.duration_ms is not None:
        parts.append(duration_label(node.duration_ms / 1000))
    return f" ({', '.join(parts)})" if parts else ""


def render_why_text(graph: WhyGraph) -> str:
    """A block per node, root first: ``[k] Type  IRI``, its text, then one line per edge
    to the nodes it rests on, named by their number and first line."""
    number = {node.id: index for index, node in enumerate(graph.nodes, start=1)}
    lines = [f"Why: {_one_line(graph.node(graph.root).label)}"]
    for node in graph.nodes:
        lines.append(f"[{number[node.id]}] {node.type}{_ran(node)}{_outcome(node)}  {node.id}")
        lines.extend(f"      {line}" for line in node.label.splitlines() or [""])
        for edge in graph.outgoing(node.id):
            target = graph.node(edge.target)
            lines.append(
                f"    {edge.relation:<16} [{number[target.id]}] {target.type}: "
                + _one_line(target.label, 60)
            )
    return printable("\n".join(lines)) + "\n"


def render_why_json(graph: WhyGraph) -> str:
    return json.dumps(graph.as_json(), ensure_ascii=False, indent=2) + "\n"


_MERMAID_SAFE = frozenset(" .,:()/@+=_-'*%$^~!?")


def mermaid_label(text: str) -> str:
    """``text`` (one line) for inside a quoted Mermaid label: letters, digits and plain
    punctuation as they are, every other character as a ``#code;`` entity, so that no
    quote, ``#``, ``;``, bracket, pipe, backtick or HTML in agent text reaches the parser."""
    return "".join(char if _plain(char) else f"#{ord(char)};" for char in text)


def _plain(char: str) -> bool:
    if char.isascii():
        return char.isalnum() or char in _MERMAID_SAFE
    return unicodedata.category(char)[0] in "LNSP"  # not a mark, space or control


def render_why_mermaid(graph: WhyGraph) -> str:
    """A top-down flowchart from the root: entities in rounded boxes, activities in
    rectangles, each edge labelled with its relation; failed attempts red and dashed,
    their edges dotted."""
    ids = {node.id: f"n{index}" for index, node in enumerate(graph.nodes)}
    lines = ["flowchart TD"]
    for node in graph.nodes:
        label = mermaid_label(_heading(node))
        shape = f'["{label}"]' if node.type in _ACTIVITIES else f'("{label}")'
        lines.append(f"  {ids[node.id]}{shape}")
    for edge in graph.edges:
        failed = not graph.node(edge.source).supports_answer
        arrow = "-.->" if failed else "-->"
        lines.append(f"  {ids[edge.source]} {arrow}|{edge.relation}| {ids[edge.target]}")
    failed_nodes = [ids[node.id] for node in graph.nodes if not node.supports_answer]
    if failed_nodes:
        lines.append(
            f"  classDef failed stroke:{_FAILED_COLOUR},stroke-dasharray:4 3,color:{_FAILED_COLOUR}"
        )
        lines.append(f"  class {','.join(failed_nodes)} failed")
    return "\n".join(lines) + "\n"


def dot_string(text: str) -> str:
    """``text`` (one line) as a quoted DOT string: backslashes doubled (so ``\\N`` or
    ``\\l`` in agent text stays literal) and quotes escaped."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render_why_dot(graph: WhyGraph) -> str:
    """A Graphviz digraph, root at the top; failed attempts red and dashed."""
    ids = {node.id: f"n{index}" for index, node in enumerate(graph.nodes)}
    lines = [
        "digraph why {",
        "  rankdir=TB;",
        '  node [shape=box, fontname="Helvetica"];',
        '  edge [fontname="Helvetica", fontsize=10];',
    ]
    for node in graph.nodes:
        attributes = [f"label={dot_string(_heading(node))}", f"tooltip={dot_string(node.id)}"]
        styles = [] if node.type in _ACTIVITIES else ["rounded"]
        if not node.supports_answer:
            styles.append("dashed")
            attributes.append(f'color="{_FAILED_COLOUR}"')
        if styles:
            attributes.append(f'style="{",".join(styles)}"')
        lines.append(f"  {ids[node.id]} [{', '.join(attributes)}];")
    for edge in graph.edges:
        attributes = [f"label={dot_string(edge.relation)}"]
        if not graph.node(edge.source).supports_answer:
            attributes.append('style="dotted"')
        lines.append(f"  {ids[edge.source]} -> {ids[edge.target]} [{', '.join(attributes)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


_RENDERERS: dict[str, Callable[[WhyGraph], str]] = {
    "text": render_why_text,
    "json": render_why_json,
    "mermaid": render_why_mermaid,
    "dot": render_why_dot,
}


def render_why(graph: WhyGraph, fmt: str) -> str:
    """``why`` output in one of its ``--format`` choices."""
    return _RENDERERS[fmt](graph)
