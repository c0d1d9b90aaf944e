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
from otel_prov.read._decisions import decision_accounts, weighed
from otel_prov.read._evidence import CONTRADICTED_BY, SUPPORTED_BY
from otel_prov.read._why import WhyEdge, WhyGraph, WhyNode
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
_SUPPORTS_COLOUR = "#2e7d32"
_EVIDENCE_STYLE = {SUPPORTED_BY: (_SUPPORTS_COLOUR, ""), CONTRADICTED_BY: (_FAILED_COLOUR, "4 3")}
"""Evidence edges, by relation: (colour, dashes); supports solid green, contradicts dashed red."""


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


def _evidence_note(edge: WhyEdge) -> str:
    """``  (weight 0.8)`` of an evidence edge, and ``came after it`` when the claim was
    made before what the evidence rests on existed."""
    notes = [] if edge.weight is None else [f"weight {edge.weight:g}"]
    if edge.considered is False:
        notes.append("came after it")
    return f"  ({', '.join(notes)})" if notes else ""


def _accounts(graph: WhyGraph, number: dict[str, int]) -> list[str]:
    """For each decision: the evidence for and against it, and what it did not consider,
    each line naming the node it rests on by its number."""
    lines = []
    for account in decision_accounts(graph):
        decision = account.decision
        confidence = "" if decision.confidence is None else f" (confidence {decision.confidence:g})"
        name = f" {decision.reasoning_id}" if decision.reasoning_id else ""
        lines.append(
            f"Decision{name} [{number[decision.id]}]: {_one_line(decision.label)}{confidence}"
        )
        for title, items in (
            ("for", account.supporting),
            ("against", account.contradicting),
            ("not considered", account.not_considered),
        ):
            told = [
                f"[{number[item.basis.id]}] {item.basis.type}: {_one_line(item.basis.label, 50)}"
                f"  ({weighed(item, title == 'not considered')})"
                for item in items
            ]
            lines.append(f"  {title + ':':<16} " + (told[0] if told else "none"))
            lines.extend(f"  {'':<16} {line}" for line in told[1:])
        for revision, reviewer in account.revisions:
            who = f" by {reviewer.label}" if reviewer is not None else ""
            lines.append(f"  revised{who}: [{number[revision.id]}] {_one_line(revision.label)}")
    return lines


def render_why_text(graph: WhyGraph) -> str:
    """A block per node, root first: ``[k] Type  IRI``, its text, then one line per edge
    to the nodes it rests on, named by their number and first line.  Decisions come
    first with their evidence for and against (``_decisions``)."""
    number = {node.id: index for index, node in enumerate(graph.nodes, start=1)}
    lines = [f"Why: {_one_line(graph.node(graph.root).label)}", *_accounts(graph, number)]
    for node in graph.nodes:
        lines.append(f"[{number[node.id]}] {node.type}{_ran(node)}{_outcome(node)}  {node.id}")
        lines.extend(f"      {line}" for line in node.label.splitlines() or [""])
        for edge in graph.outgoing(node.id):
            target = graph.node(edge.target)
            lines.append(
                f"    {edge.relation:<16} [{number[target.id]}] {target.type}: "
                + _one_line(target.label, 60)
                + _evidence_note(edge)
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
    styles = []
    for index, edge in enumerate(graph.edges):
        failed = not graph.node(edge.source).supports_answer
        arrow = "-.->" if failed or edge.relation == CONTRADICTED_BY else "-->"
        label = edge.relation + ("" if edge.weight is None else f" {edge.weight:g}")
        lines.append(f"  {ids[edge.source]} {arrow}|{mermaid_label(label)}| {ids[edge.target]}")
        if edge.relation in _EVIDENCE_STYLE:
            colour, dashes = _EVIDENCE_STYLE[edge.relation]
            dashed = f",stroke-dasharray:{dashes}" if dashes else ""
            styles.append(f"  linkStyle {index} stroke:{colour},stroke-width:2px{dashed}")
    lines.extend(styles)
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
        label = edge.relation + ("" if edge.weight is None else f" {edge.weight:g}")
        attributes = [f"label={dot_string(label)}"]
        if not graph.node(edge.source).supports_answer:
            attributes.append('style="dotted"')
        elif edge.relation in _EVIDENCE_STYLE:
            colour, dashes = _EVIDENCE_STYLE[edge.relation]
            attributes.append(f'color="{colour}"')
            attributes.append('style="dashed"' if dashes else 'style="bold"')
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
