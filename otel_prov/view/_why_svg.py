"""The why-graph of a session drawn as SVG on the server: a layered DAG, no script needed.

Its input is the shape of ``WhyGraph.as_json()`` (``otel-prov why --format json``):
``{"root", "nodes": [{"id", "type", "label", ...}], "edges": [{"from", "to", "relation"}]}``,
so the drawing is a pure function of data a test can write by hand.  The layout is the
usual Sugiyama recipe, kept small: cycles (a hand-edited store can hold one) are broken
by dropping the edges that close them, each node's layer is the longest path to it, and
nodes are ordered in their layer by the mean position of their neighbours, sweeping down
and up a few times, which removes most crossings.  Every text goes through
:func:`html.escape`, since labels and errors are whatever the agent recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

__all__ = ["ACTIVITY_TYPES", "Layout", "layout", "why_svg"]

ACTIVITY_TYPES = frozenset(
    {"AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Span", "Activity"}
)
"""Node types drawn as activities (boxes); every other type is an entity (rounded)."""

NODE_WIDTH = 190
NODE_HEIGHT = 40
GAP_X = 24
GAP_Y = 46
MARGIN = 10
_LABEL_CHARS = 26
_SWEEPS = 4


@dataclass(frozen=True)
class Layout:
    """Where each node goes: ``layers[i]`` lists node indexes left to right."""

    layers: tuple[tuple[int, ...], ...]
    edges: tuple[tuple[int, int, str], ...]
    """(from index, to index, relation) of the edges kept, in input order."""

    def position(self) -> dict[int, tuple[int, int]]:
        """Node index -> (layer, place in layer)."""
        return {node: (depth, place) for depth, row in enumerate(self.layers)
                for place, node in enumerate(row)}  # fmt: skip

    def crossings(self) -> int:
        """How many pairs of edges between the same two layers cross."""
        where = self.position()
        spans = [(where[a], where[b]) for a, b, _ in self.edges]
        count = 0
        for i, ((la, pa), (lb, pb)) in enumerate(spans):
            for (lc, pc), (ld, pd) in spans[i + 1 :]:
                if (la, lb) == (lc, ld) and lb == la + 1 and (pa - pc) * (pb - pd) < 0:
                    count += 1
        return count


def _short_type(value: object) -> str:
    text = str(value or "")
    return text.rpartition("#")[2].rpartition("/")[2] or text


def _acyclic(count: int, edges: Sequence[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``edges`` less those that close a cycle (depth-first, in input order) and loops."""
    out: dict[int, list[int]] = {n: [] for n in range(count)}
    for a, b, _ in edges:
        out[a].append(b)
    state = [0] * count  # 0 unseen, 1 on the stack, 2 done
    back: set[tuple[int, int]] = set()
    for root in range(count):
        if state[root]:
            continue
        stack = [(root, iter(out[root]))]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state[child] == 1:
                back.add((node, child))
            elif state[child] == 0:
                state[child] = 1
                stack.append((child, iter(out[child])))
    return [(a, b, r) for a, b, r in edges if (a, b) not in back]


def layout(count: int, edges: Sequence[tuple[int, int, str]]) -> Layout:
    """Layers by longest path from the sources, then crossings reduced by barycentres."""
    kept = _acyclic(count, edges)
    incoming: dict[int, list[int]] = {n: [] for n in range(count)}
    outgoing: dict[int, list[int]] = {n: [] for n in range(count)}
    for a, b, _ in kept:
        outgoing[a].append(b)
        incoming[b].append(a)
    depth = [0] * count
    pending = [len(incoming[n]) for n in range(count)]
    ready = [n for n in range(count) if not pending[n]]
    while ready:
        node = ready.pop()
        for child in outgoing[node]:
            depth[child] = max(depth[child], depth[node] + 1)
            pending[child] -= 1
            if not pending[child]:
                ready.append(child)
    rows: list[list[int]] = [[] for _ in range(max(depth, default=-1) + 1)]
    for node in range(count):
        rows[depth[node]].append(node)
    for sweep in range(_SWEEPS):
        downward = sweep % 2 == 0
        order = range(1, len(rows)) if downward else range(len(rows) - 2, -1, -1)
        for index in order:
            fixed = rows[index - 1] if downward else rows[index + 1]
            rows[index] = _by_barycentre(rows[index], fixed, incoming if downward else outgoing)
    return Layout(tuple(tuple(row) for row in rows), tuple(kept))


def _by_barycentre(
    row: list[int], fixed: list[int], neighbours: Mapping[int, list[int]]
) -> list[int]:
    """``row`` ordered by the mean place of each node's neighbours in the ``fixed`` layer;
    a node with none keeps its place (a stable sort keeps ties as they were)."""
    place = {node: i for i, node in enumerate(fixed)}

    def centre(item: tuple[int, int]) -> float:
        at, node = item
        seen = [place[n] for n in neighbours[node] if n in place]
        return sum(seen) / len(seen) if seen else float(at)

    return [node for _, node in sorted(enumerate(row), key=centre)]


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1] + "…"


def why_svg(graph: Mapping[str, Any]) -> str:
    """The SVG (an ``<svg>`` element, to put inside a page) of a why-graph.

    Each node is a ``<g class="node activity|entity">`` with ``failed`` added for a call
    whose status is ``error`` (it shows its error too), ``root`` for the graph's root;
    its full label, type and error are its ``<title>`` tooltip.  Nodes are links to
    themselves (``#why-N``), so a click focuses one even with scripts off.
    """
    nodes: list[dict[str, Any]] = [dict(item) for item in graph.get("nodes", ())]
    index = {str(node.get("id")): i for i, node in enumerate(nodes)}
    edges = [
        (index[str(edge.get("from"))], index[str(edge.get("to"))], str(edge.get("relation", "")))
        for edge in graph.get("edges", ())
        if str(edge.get("from")) in index and str(edge.get("to")) in index
    ]
    placed = layout(len(nodes), edges)
    columns = max((len(row) for row in placed.layers), default=0)
    width = MARGIN * 2 + columns * NODE_WIDTH + max(columns - 1, 0) * GAP_X
    height = MARGIN * 2 + len(placed.layers) * (NODE_HEIGHT + GAP_Y) - GAP_Y
    spot: dict[int, tuple[int, int]] = {}
    for depth, row in enumerate(placed.layers):
        offset = (columns - len(row)) * (NODE_WIDTH + GAP_X) // 2
        for place, member in enumerate(row):
            spot[member] = (
                MARGIN + offset + place * (NODE_WIDTH + GAP_X),
                MARGIN + depth * (NODE_HEIGHT + GAP_Y),
            )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="why-graph" width="{width}" '
        f'height="{max(height, 0)}" viewBox="0 0 {width} {max(height, 0)}" role="img" '
        'aria-label="why-graph">'
    ]
    for a, b, relation in placed.edges:
        (xa, ya), (xb, yb) = spot[a], spot[b]
        x1, y1 = xa + NODE_WIDTH // 2, ya + NODE_HEIGHT
        x2, y2 = xb + NODE_WIDTH // 2, yb
        if y2 <= y1:  # an edge to a node on the same layer or above (cut from a cycle: none)
            y1, y2 = ya, yb + NODE_HEIGHT
        middle = (y1 + y2) // 2
        parts.append(
            f'<path class="edge" data-from="why-{a}" data-to="why-{b}" '
            f'd="M{x1},{y1} C{x1},{middle} {x2},{middle} {x2},{y2}">'
            f"<title>{escape(relation)}</title></path>"
        )
    root = str(graph.get("root", ""))
    for node_index, node in enumerate(nodes):
        x, y = spot[node_index]
        kind = _short_type(node.get("type"))
        failed = node.get("status") == "error"
        classes = ["node", "activity" if kind in ACTIVITY_TYPES else "entity"]
        classes += ["failed"] if failed else []
        classes += ["root"] if str(node.get("id")) == root else []
        label = str(node.get("label") or node.get("tool") or kind)
        error = str(node.get("error") or "error") if failed else ""
        tip = "\n".join(
            part for part in (f"{kind}: {label}", str(node.get("id", "")), error) if part
        )
        radius = 3 if kind in ACTIVITY_TYPES else 14
        parts.append(
            f'<a href="#why-{node_index}"><g id="why-{node_index}" class="{" ".join(classes)}" '
            f'data-iri="{escape(str(node.get("id", "")))}">'
            f"<title>{escape(tip)}</title>"
            f'<rect x="{x}" y="{y}" width="{NODE_WIDTH}" height="{NODE_HEIGHT}" '
            f'rx="{radius}"></rect>'
            f'<text x="{x + 8}" y="{y + 16}" class="kind">{escape(kind)}</text>'
            f'<text x="{x + 8}" y="{y + 32}" class="label">'
            f"{escape(_cut(('FAILED ' + error) if failed else label))}</text></g></a>"
        )
    parts.append("</svg>")
    return "".join(parts)
