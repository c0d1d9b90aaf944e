"""What the why-graph of a session shows, decided on the server; dagre lays it out and the
page's script (``static/app.js``) draws it.

Its input is the shape of ``WhyGraph.as_json()`` (``otel-prov why --format json``), so
what is drawn is a pure function of data a test can write by hand.  Three decisions are
made here, not left to the layout:

- *Time runs down the page.*  A PROV edge points from what was made to what it was made
  from (the answer ``wasDerivedFrom`` a thought), so each edge is laid out from its
  object to its subject and drawn with its arrowhead on the object.  Edges that are no
  relation keep the order a person reads: the question and the session above the first
  step, each step above the next, the last step above the answer (:data:`WhyDrawing.order`).
- *A step is a box* holding what it did: its thought and arguments, its calls (failed
  ones too), what they returned, and anything else made inside it.
- *Each node shows its role and an excerpt of its own*: where excerpts would read alike
  (a question, a thought and an answer that begin with the same words) they start where
  the texts part ways (:func:`excerpts`).

Evidence edges say which way they speak (``evidence``: :data:`EVIDENCE_KINDS`), so the
page draws supports and contradicts apart and a legend says how; their label carries
the weight.

Nothing is escaped here: the page writes the drawing into an attribute (Jinja2 escapes
it) and the script puts every text in with ``textContent``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "ACTIVITY_TYPES",
    "CONTENT_TYPES",
    "EVIDENCE_KINDS",
    "WhyDrawing",
    "excerpts",
    "why_drawing",
]

ACTIVITY_TYPES = frozenset(
    {"AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Span", "Activity"}
)
"""Node types drawn as activities (boxes); every other type is an entity (rounded)."""

CONTENT_TYPES = frozenset({"Question", "Answer", "Thought", "Arguments", "Observation", "Query"})
"""Entities whose text is content an agent exchanged: one stored without its value has
no name of its own (a source document has its IRI)."""

EVIDENCE_KINDS = {"supportedBy": "supports", "contradictedBy": "contradicts"}
"""Relation of an evidence edge -> the class the page draws it with."""

LINE_CHARS = 34
"""Characters on a line of a node's excerpt: what fits the node's width."""
EXCERPT_LINES = 2


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _wrapped(text: str, start: int, most: int = EXCERPT_LINES) -> tuple[str, ...]:
    """``text`` from ``start`` (an ellipsis before it when it is not the beginning) in at
    most ``most`` lines of :data:`LINE_CHARS`, broken between words where it can be; an
    ellipsis ends the last line when text is left over."""
    rest = ("…" if start else "") + text[start:]
    lines: list[str] = []
    while rest and len(lines) < most:
        if len(rest) <= LINE_CHARS:
            lines.append(rest)
            rest = ""
            break
        cut = rest.rfind(" ", 0, LINE_CHARS + 1)
        cut = cut if cut > LINE_CHARS // 2 else LINE_CHARS
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    if rest:
        last = lines[-1]
        lines[-1] = (last if len(last) < LINE_CHARS else last[: LINE_CHARS - 1]) + "…"
    return tuple(lines)


def _word_start(text: str, at: int) -> int:
    """The start of the word before position ``at`` of ``text`` (0 when none)."""
    space = text.rfind(" ", 0, at)
    return 0 if space < 0 else text.rfind(" ", 0, space) + 1


def _common_length(texts: Sequence[str]) -> int:
    """How many characters all of ``texts`` begin with alike."""
    same = itertools.takewhile(lambda chars: len(set(chars)) == 1, zip(*texts, strict=False))
    return sum(1 for _ in same)


def excerpts(texts: Sequence[str]) -> list[tuple[str, ...]]:
    """The lines each of ``texts`` is shown by: its beginning, unless that reads like the
    excerpt of a different text; then both start a word before where the texts part
    ways, with an ellipsis, until they read differently (equal texts stay equal)."""
    flat = [_one_line(text) for text in texts]
    start = [0] * len(flat)
    for _ in range(EXCERPT_LINES * LINE_CHARS):  # every round moves some start forward
        shown: dict[tuple[str, ...], list[int]] = {}
        for index, text in enumerate(flat):
            shown.setdefault(_wrapped(text, start[index]), []).append(index)
        moved = False
        for group in shown.values():
            if len({flat[i] for i in group}) < 2:
                continue
            common = _common_length([flat[i] for i in group])
            for i in group:
                at = max(_word_start(flat[i], common), start[i] + 1)
                if at < len(flat[i]):
                    start[i], moved = at, True
        if not moved:
            break
    return [_wrapped(text, start[index]) for index, text in enumerate(flat)]


@dataclass(frozen=True)
class WhyDrawing:
    """The why-graph as the page's script draws it (:meth:`as_json`)."""

    nodes: tuple[dict[str, Any], ...]
    """Per node: ``id`` (``why-N``), ``iri``, ``role`` (its type), ``activity``,
    ``failed``, ``root``, ``lines`` (its excerpt), ``text`` (all of it), ``status``,
    ``error``, and ``step``: the ``id`` of the step box it sits in, or ``None``."""
    steps: tuple[dict[str, Any], ...]
    """Per step box: ``id`` (its Iteration node's ``id``), ``iri``, and ``step``: the
    box it sits in itself (a sub-agent's steps inside the caller's step), or ``None``."""
    edges: tuple[dict[str, Any], ...]
    """``from`` (the subject), ``to`` (the object), ``relation``, ``label`` (the relation,
    and an evidence edge's weight), ``evidence`` (``supports``, ``contradicts`` or
    ``None``), ``considered`` (of evidence: false when it came after the claim), and
    ``far``: an edge
    between the answer and a step before the last, left out of the layout and drawn
    along the side (the answer rests on every step: laid out, those edges would cross
    the whole graph, and take dagre most of its time)."""
    order: tuple[tuple[str, str], ...]
    """(earlier, later): node ids laid out one below the other, drawn as nothing."""

    def as_json(self) -> str:
        return json.dumps(
            {
                "nodes": self.nodes,
                "steps": self.steps,
                "edges": self.edges,
                "order": self.order,
            },
            ensure_ascii=False,
        )


def _short_type(value: object) -> str:
    text = str(value or "")
    return text.rpartition("#")[2].rpartition("/")[2] or text


def _holders(
    nodes: Sequence[Mapping[str, Any]],
    index: Mapping[str, int],
    edges: Sequence[tuple[int, int, str]],
) -> list[int | None]:
    """The node each node was made in: the activity it is ``part_of``, else (an entity)
    the activity that generated it."""
    holder: list[int | None] = [index.get(str(node.get("part_of"))) for node in nodes]
    for source, target, relation in edges:
        entity = _short_type(nodes[source].get("type")) not in ACTIVITY_TYPES
        if holder[source] is None and (
            relation == "partOf" or (relation == "wasGeneratedBy" and entity)
        ):
            holder[source] = target
    return holder


def _step_of(kinds: Sequence[str], holder: Sequence[int | None], node: int) -> int | None:
    """The Iteration ``node`` was made in (itself, for one), following holders."""
    seen: set[int] = set()
    at: int | None = node
    while at is not None and at not in seen:
        if kinds[at] == "Iteration":
            return at
        seen.add(at)
        at = holder[at]
    return None


def why_drawing(graph: Mapping[str, Any]) -> WhyDrawing:
    """What to draw of ``graph`` (``WhyGraph.as_json()``); edges to nodes it does not
    hold are left out."""
    nodes: list[dict[str, Any]] = [dict(item) for item in graph.get("nodes", ())]
    index = {str(node.get("id")): i for i, node in enumerate(nodes)}
    kept = [
        edge
        for edge in graph.get("edges", ())
        if str(edge.get("from")) in index and str(edge.get("to")) in index
    ]
    edges = [
        (index[str(edge.get("from"))], index[str(edge.get("to"))], str(edge.get("relation", "")))
        for edge in kept
    ]
    kinds = [_short_type(node.get("type")) for node in nodes]
    holder = _holders(nodes, index, edges)
    step = [_step_of(kinds, holder, i) for i in range(len(nodes))]
    texts = [str(node.get("label") or node.get("tool") or kinds[i]) for i, node in enumerate(nodes)]
    shown = excerpts(texts)
    for i, node in enumerate(nodes):
        if kinds[i] in CONTENT_TYPES and texts[i] == str(node.get("id")):
            shown[i], texts[i] = _unrecorded(i, kinds, nodes, edges)
    root = str(graph.get("root", ""))
    drawn = []
    for i, node in enumerate(nodes):
        failed = node.get("status") == "error" and kinds[i] != "AgentSession"
        lines = shown[i]
        if failed:
            lines = (*lines, *_wrapped("FAILED " + str(node.get("error") or "error"), 0, 1))
        drawn.append(
            {
                "id": f"why-{i}",
                "iri": str(node.get("id", "")),
                "role": kinds[i],
                "activity": kinds[i] in ACTIVITY_TYPES,
                "failed": failed,
                "root": str(node.get("id")) == root,
                "lines": lines,
                "text": texts[i],
                "status": node.get("status"),
                "error": node.get("error"),
                "step": None if step[i] is None else f"why-{step[i]}",
            }
        )
    boxes = [i for i, kind in enumerate(kinds) if kind == "Iteration"]
    around = {i: None if (h := holder[i]) is None else _step_of(kinds, holder, h) for i in boxes}
    return WhyDrawing(
        nodes=tuple(drawn),
        steps=tuple(
            {
                "id": f"why-{i}",
                "iri": drawn[i]["iri"],
                "step": None if around[i] is None else f"why-{around[i]}",
            }
            for i in boxes
        ),
        edges=tuple(
            {
                "from": f"why-{a}",
                "to": f"why-{b}",
                "relation": relation,
                "label": _edge_label(edge),
                "evidence": EVIDENCE_KINDS.get(relation),
                "considered": edge.get("considered"),
                "far": _far(a, b, index.get(root), step, boxes),
            }
            for (a, b, relation), edge in zip(edges, kept, strict=True)
        ),
        order=tuple(
            (f"why-{a}", f"why-{b}") for a, b in _order(boxes, holder, step, index.get(root))
        ),
    )


def _edge_label(edge: Mapping[str, Any]) -> str:
    """What an edge says beside it: its relation, and the weight of evidence."""
    relation, weight = str(edge.get("relation", "")), edge.get("weight")
    if isinstance(weight, (int, float)) and not isinstance(weight, bool):
        return f"{relation} {weight:g}"
    return relation


def _unrecorded(
    node: int,
    kinds: Sequence[str],
    nodes: Sequence[Mapping[str, Any]],
    edges: Sequence[tuple[int, int, str]],
) -> tuple[tuple[str, ...], str]:
    """The excerpt and text of content stored without its value (the store names it by
    its IRI): what it was, the tool call it went to or came from, and that it was not
    recorded."""
    calls = [
        str(nodes[other].get("tool") or "")
        for source, target, relation in edges
        for other in [target if source == node else source if target == node else None]
        if other is not None
        and kinds[other] == "ToolCall"
        and relation in ("used", "wasGeneratedBy")
        and nodes[other].get("tool")
    ]
    kind = kinds[node].lower()
    if not calls:
        return ("(not recorded)",), f"Not recorded: the {kind}. {_WHY_UNRECORDED}"
    tool = calls[0]
    side = "from" if kinds[node] == "Observation" else "for"
    text = f"Not recorded: the {kind} {side} the call to {tool}. {_WHY_UNRECORDED}"
    return (*_wrapped(f"{side} {tool}", 0, 1), "(not recorded)"), text


_WHY_UNRECORDED = (
    "Content capture was off (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT), "
    "or the instrumentation did not record it."
)


def _far(
    a: int, b: int, root: int | None, step: Sequence[int | None], boxes: Sequence[int]
) -> bool:
    """Whether the edge a-b joins the ``root`` to a node that is not in the last step."""
    if root is None or root not in (a, b) or not boxes or a == b:
        return False
    other = b if a == root else a
    return step[other] != boxes[-1]


def _order(
    boxes: Sequence[int], holder: Sequence[int | None], step: Sequence[int | None], root: int | None
) -> list[tuple[int, int]]:
    """(earlier, later) pairs that keep time running down: each run of steps made in the
    same activity (a session's), in time order (the order of ``boxes``), below that
    activity, each step's parts above the next step, the last step's above the ``root``
    (the answer), unless the root is in a step itself."""
    runs: dict[int | None, list[int]] = {}
    for box in boxes:
        runs.setdefault(holder[box], []).append(box)
    parts: dict[int, list[int]] = {}
    for node, inside in enumerate(step):
        if inside is not None:
            parts.setdefault(inside, []).append(node)
    pairs: list[tuple[int, int]] = []
    for made_in, run in runs.items():
        if made_in is not None:
            pairs.append((made_in, run[0]))
        for earlier, later in itertools.pairwise(run):
            pairs.extend((part, later) for part in parts[earlier])
        if root is not None and step[root] is None:
            pairs.extend((part, root) for part in parts[run[-1]] if part != root)
    return pairs
