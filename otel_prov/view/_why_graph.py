"""What the why-graph of a session shows, decided on the server; dagre lays it out and the
page's script (``static/app.js``) draws it.

Its input is the shape of ``WhyGraph.as_json()`` (``otel-prov why --format json``), so
what is drawn is a pure function of data a test can write by hand.  The decisions made
here, not left to the layout:

- *What is drawn at first.*  Steps, earlier turns and the middle of long runs are groups
  the page draws shut, one box each, opened by a click (:mod:`~otel_prov.view._why_folds`):
  a shut step says what it thought and what each of its calls returned or how it failed.
- *Time runs down the page.*  A PROV edge points from what was made to what it was made
  from (the answer ``wasDerivedFrom`` a thought), so each edge is laid out from its
  object to its subject and drawn with its arrowhead on the object; evidence that came
  after the claim it speaks to is laid out the other way (``backward``).  Edges that are
  no relation keep the order a person reads: the question and the session above the
  first step, each step above the next, the last step above the answer, each turn below
  the one before (:data:`WhyDrawing.order`).
- *Words a person reads*: each node says what it is (``Step 2``, ``Tool call``) and an
  excerpt of its own (where excerpts would read alike, they start where the texts part
  ways: :func:`excerpts`); each edge says its relation in plain words (``produced by``,
  ``answered from``: :func:`plain_relation`), and the PROV term goes in the details.

Evidence edges say which way they speak (``evidence``: :data:`EVIDENCE_KINDS`), so the
page draws supports and contradicts apart and a legend says how; their label carries
the weight.

Nothing is escaped here: the page writes the drawing into an attribute (Jinja2 escapes
it) and the script puts every text in with ``textContent``.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from otel_prov.view._why_folds import ACTIVITIES, CHUNK, PINNED, Folding, Group, folding

__all__ = [
    "ACTIVITY_TYPES",
    "CONTENT_TYPES",
    "EVIDENCE_KINDS",
    "WhyDrawing",
    "excerpts",
    "plain_relation",
    "why_drawing",
]

ACTIVITY_TYPES = ACTIVITIES
"""Node types drawn as activities (boxes); every other type is an entity (rounded)."""

CONTENT_TYPES = frozenset({"Question", "Answer", "Thought", "Arguments", "Observation", "Query"})
"""Entities whose text is content an agent exchanged: one stored without its value has
no name of its own (a source document has its IRI)."""

EVIDENCE_KINDS = {"supportedBy": "supports", "contradictedBy": "contradicts"}
"""Relation of an evidence edge -> the class the page draws it with."""

ROLES = {
    "AgentSession": "Session",
    "Iteration": "Step",
    "ToolCall": "Tool call",
    "ModelCall": "Model call",
    "UnresolvedReference": "Not in the run",
}
"""What a node of a type is called on the page, where its class name is no word; the
class goes in the details."""

RELATIONS = {
    "used": "used",
    "wasGeneratedBy": "produced by",
    "wasDerivedFrom": "derived from",
    "wasInformedBy": "informed by",
    "followsTurn": "follows",
    "partOf": "part of",
    "hadPrimarySource": "from source",
    "wasQuotedFrom": "quoted from",
    "wasInfluencedBy": "influenced by",
    "wasRevisionOf": "revises",
    "wasAttributedTo": "by",
    "supportedBy": "supported by",
    "contradictedBy": "contradicted by",
    "adopts": "adopts",
}
"""Each relation in words read along its arrow, from subject to object."""

FOLLOWS_TURN = "followsTurn"
"""The relation from a turn to the turn before it, drawn along the side of the graph: laid
out, it pulled the turns off the line of this run."""

MOST_CALLS = 4
"""Calls a shut step names, one a line; the others are counted."""

LINE_CHARS = 38
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
    """Per node: ``id`` (``why-N``; ``why-fold-N`` for a fold's own node), ``iri``,
    ``role`` (what it is, in words), ``type`` (its class), ``activity``, ``failed``,
    ``root``, ``pinned`` (drawn inside a shut step), ``lines`` (its excerpt), ``red``
    (the lines drawn as failures), ``text`` (all of it), ``status``, ``error``, and
    ``group``: the ``id`` of the innermost group it is in, or ``None``."""
    groups: tuple[dict[str, Any], ...]
    """Per group: ``id`` (``g-N``), ``key`` (the same for the same group when the page is
    read again: what keeps it open), ``kind`` (``step``, ``turn``, ``fold``), ``head`` (the
    node standing for it when shut), ``parent`` (the group it is in), ``open`` (at
    first), ``role``, ``lines`` and ``red`` (its head's, shut), and ``label`` (written on
    its box, open)."""
    edges: tuple[dict[str, Any], ...]
    """``from`` (the subject), ``to`` (the object), ``relation``, ``term`` (the relation,
    and an evidence edge's weight: the details give it), ``label`` (the same in words),
    ``evidence`` (``supports``, ``contradicts`` or ``None``), ``considered`` (of evidence:
    false when it came after the claim), ``backward`` (laid out from subject to object:
    evidence that came after), ``implied`` (not drawn: a step's ``partOf`` its session,
    which its box shows), and ``far``: an edge between the answer and a node that is
    not in the last step, left out of the layout and drawn along the side (the answer
    rests on every step: laid out, those edges would cross the whole graph)."""
    order: tuple[tuple[str, str], ...]
    """(earlier, later): node ids laid out one below the other, drawn as nothing."""

    def as_json(self) -> str:
        return json.dumps(
            {
                "nodes": self.nodes,
                "groups": self.groups,
                "edges": self.edges,
                "order": self.order,
            },
            ensure_ascii=False,
        )


def _short_type(value: object) -> str:
    text = str(value or "")
    return text.rpartition("#")[2].rpartition("/")[2] or text


def _words(name: str) -> str:
    """``wasRelatedTo`` as ``was related to``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name).lower()


def plain_relation(relation: str, subject: str = "", target: str = "") -> str:
    """``relation`` in words read along its arrow (:data:`RELATIONS`), as said of a
    ``subject`` and a ``target`` of these types: an answer is ``answered from`` what it
    derives from, a step ``follows`` the step that informed it, a sub-agent's session is
    ``started by`` the call that informed it."""
    if relation == "wasDerivedFrom" and subject == "Answer":
        return "answered from"
    if relation == "wasInformedBy" and subject == target == "Iteration":
        return "follows"
    if relation == "wasInformedBy" and subject == "AgentSession" and target in ACTIVITIES:
        return "started by"
    return RELATIONS.get(relation) or _words(relation)


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
    root = index.get(str(graph.get("root", "")))
    folded = folding(kinds, [index.get(str(node.get("part_of"))) for node in nodes], edges, root)
    texts = [str(node.get("label") or node.get("tool") or kinds[i]) for i, node in enumerate(nodes)]
    shown = excerpts(texts)
    for i, node in enumerate(nodes):
        if kinds[i] in CONTENT_TYPES and texts[i] == str(node.get("id")):
            shown[i], texts[i] = _unrecorded(i, kinds, nodes, edges)
    drawn = [
        _drawn_node(i, node, kinds[i], shown[i], texts[i], i == root, folded)
        for i, node in enumerate(nodes)
    ]
    groups = [
        _drawn_group(number, group, folded, drawn, kinds)
        for number, group in enumerate(folded.groups)
    ]
    drawn += [_fold_node(group) for group in groups if group["kind"] == "fold"]
    return WhyDrawing(
        nodes=tuple(drawn),
        groups=tuple(groups),
        edges=tuple(
            {
                "from": f"why-{a}",
                "to": f"why-{b}",
                "relation": relation,
                "term": _edge_term(edge),
                "label": _weighed(plain_relation(relation, kinds[a], kinds[b]), edge),
                "evidence": EVIDENCE_KINDS.get(relation),
                "considered": edge.get("considered"),
                "backward": relation in EVIDENCE_KINDS and edge.get("considered") is False,
                "implied": relation == "partOf" and (a, b) in folded.implied,
                "far": _far(a, b, folded),
                "side": relation == FOLLOWS_TURN,
            }
            for (a, b, relation), edge in zip(edges, kept, strict=True)
        ),
        order=tuple((f"why-{a}", f"why-{b}") for a, b in folded.order),
    )


def _drawn_node(
    i: int,
    node: Mapping[str, Any],
    kind: str,
    lines: tuple[str, ...],
    text: str,
    root: bool,
    folded: Folding,
) -> dict[str, Any]:
    failed = node.get("status") == "error"
    red = []
    if failed:
        red = [len(lines)]
        lines = (*lines, *_wrapped("FAILED " + str(node.get("error") or "error"), 0, 1))
    group = folded.group[i]
    role = _role(kind)
    if group is not None and folded.groups[group].head == i and kind == "Iteration":
        role, lines, red = _step_role(folded.groups[group]), ("click to fold",), []
    return {
        "id": f"why-{i}",
        "iri": str(node.get("id", "")),
        "role": role,
        "type": kind,
        "activity": kind in ACTIVITY_TYPES,
        "failed": failed,
        "root": root,
        "pinned": root or kind in PINNED,
        "lines": lines,
        "red": red,
        "text": text,
        "status": node.get("status"),
        "error": node.get("error"),
        "group": None if group is None else f"g-{group}",
    }


def _role(kind: str) -> str:
    return ROLES.get(kind, kind)


def _step_role(group: Group) -> str:
    return f"Step {group.number} of {group.of}"


def _drawn_group(
    number: int,
    group: Group,
    folded: Folding,
    drawn: Sequence[Mapping[str, Any]],
    kinds: Sequence[str],
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": f"g-{number}",
        "kind": group.kind,
        "head": f"why-{group.head}" if group.head is not None else f"why-fold-{number}",
        "parent": None if group.parent is None else f"g-{group.parent}",
        "open": group.open,
        "label": "",
    }
    if group.kind == "step":
        assert group.head is not None
        role, lines, red = _step_role(group), *_step_lines(group.head, folded, drawn, kinds)
        key = "step " + str(drawn[group.head]["iri"])
    elif group.kind == "turn":
        assert group.head is not None
        role = f"Turn {group.number} of {group.of}"
        lines, red = _turn_lines(group.head, folded, drawn, kinds)
        out["label"] = role + (": this run" if group.number == group.of else "")
        key = "turn " + str(drawn[group.head]["iri"])
    else:
        role, lines, red = _fold_words(number, folded, drawn)
        first = min(_held(number, folded), default=None)
        key = "fold " + ("" if first is None else str(drawn[first]["iri"]))
    return {**out, "key": key, "role": role, "lines": lines, "red": red}


def _fold_node(group: Mapping[str, Any]) -> dict[str, Any]:
    """The node a fold is drawn as, shut."""
    return {
        "id": group["head"],
        "iri": "",
        "role": group["role"],
        "type": "Fold",
        "activity": True,
        "failed": bool(group["red"]),
        "root": False,
        "pinned": False,
        "lines": group["lines"],
        "red": group["red"],
        "text": " ".join(group["lines"]),
        "status": None,
        "error": None,
        "group": group["id"],
        "fold": True,
    }


def _one(text: str) -> str:
    return _wrapped(_one_line(text), 0, 1)[0] if text.strip() else ""


def _step_lines(
    box: int, folded: Folding, drawn: Sequence[Mapping[str, Any]], kinds: Sequence[str]
) -> tuple[tuple[str, ...], list[int]]:
    """A shut step's lines: its thought, then each call it made, with what the call
    returned or how it failed (red), a line each; the calls past :data:`MOST_CALLS`
    counted."""
    made = [i for i, holder in enumerate(folded.holder) if holder == box and i != box]
    thoughts = [str(drawn[i]["text"]) for i in made if kinds[i] == "Thought"][:1]
    lines = [*_wrapped(_one_line(thoughts[0]), 0, 2)] if thoughts else []
    red: list[int] = []
    calls = [i for i in made if kinds[i] in ACTIVITY_TYPES]
    for call in calls[:MOST_CALLS]:
        name = _call_name(call, drawn, kinds)
        if drawn[call]["failed"]:
            red.append(len(lines))
            lines.append(_one(f"{name} FAILED {drawn[call]['error'] or 'error'}"))
            continue
        results = [
            i
            for i, holder in enumerate(folded.holder)
            if holder == call and kinds[i] not in ACTIVITY_TYPES and kinds[i] != "Arguments"
        ]
        said = str(drawn[results[0]]["text"]) if results else ""
        if kinds[call] == "AgentSession":
            answers = [i for i in results if kinds[i] == "Answer"]
            said = str(drawn[answers[0]]["text"]) if answers else ""
        more = f" (+{len(results) - 1})" if len(results) > 1 else ""
        lines.append(_one(f"{name} → {said}{more}" if said else name))
    if len(calls) > MOST_CALLS:
        lines.append(f"+ {len(calls) - MOST_CALLS} more calls")
    return tuple(lines) or ("nothing recorded",), red


def _call_name(call: int, drawn: Sequence[Mapping[str, Any]], kinds: Sequence[str]) -> str:
    text = str(drawn[call]["text"])
    if kinds[call] == "AgentSession":
        return f"sub-agent {text.removeprefix('invoke_agent ')}"
    return text.split(" [", 1)[0] if kinds[call] == "ToolCall" else text


def _turn_lines(
    session: int, folded: Folding, drawn: Sequence[Mapping[str, Any]], kinds: Sequence[str]
) -> tuple[tuple[str, ...], list[int]]:
    """A shut turn's lines: what was asked and what was answered, as their own nodes show
    them (excerpts that tell turns asked alike apart), and how it failed."""
    made = [i for i, holder in enumerate(folded.holder) if holder == session]
    questions = [i for i in made if kinds[i] == "Question"]
    answers = [i for i in made if kinds[i] == "Answer"]
    lines = list(drawn[questions[0]]["lines"]) if questions else []
    if answers:
        lines.append(_one("→ " + str(drawn[answers[0]]["lines"][0])))
    red = []
    if drawn[session]["failed"]:
        red.append(len(lines))
        lines.append(_one(f"FAILED {drawn[session]['error'] or 'error'}"))
    return tuple(lines) or ("nothing recorded",), red


def _held(fold: int, folded: Folding) -> list[int]:
    """The heads of the steps or turns in ``fold``, folds in it included, in time order."""
    heads: list[int] = []
    for group in folded.groups[fold].holds:
        head = folded.groups[group].head
        if head is not None:
            heads.append(head)
    for number, inner in enumerate(folded.groups):
        if inner.kind == "fold" and inner.parent == fold:
            heads += _held(number, folded)
    return sorted(heads)


def _fold_words(
    fold: int, folded: Folding, drawn: Sequence[Mapping[str, Any]]
) -> tuple[str, tuple[str, ...], list[int]]:
    """A fold's role and lines: which steps (or turns) it holds, how many, what a click
    opens, and how many calls failed in it (red)."""
    heads = _held(fold, folded)
    numbers = [g.number for g in folded.groups if g.head in heads]
    kind = "Turns" if any(g.kind == "turn" and g.head in heads for g in folded.groups) else "Steps"
    span = f"{min(numbers)}–{max(numbers)}" if numbers else ""
    count = len(heads)
    noun = "earlier turns" if kind == "Turns" else "steps"
    opens = f"click to open {CHUNK}" if count > CHUNK else "click to open them"
    lines = [f"{count} {noun} folded · {opens}"]
    inside = {i for i, step in enumerate(folded.step) if step in heads}
    inside |= {i for i, holder in enumerate(folded.holder) if holder in heads}
    failed = sum(1 for i in inside if drawn[i]["failed"] and drawn[i]["type"] != "AgentSession")
    red = []
    if failed:
        red.append(len(lines))
        lines.append(f"{failed} failed call{'s' if failed > 1 else ''} in them")
    return f"{kind} {span}", tuple(lines), red


def _edge_term(edge: Mapping[str, Any]) -> str:
    """The relation as stored, and the weight of evidence: what the details say."""
    return _weighed(str(edge.get("relation", "")), edge)


def _weighed(text: str, edge: Mapping[str, Any]) -> str:
    weight = edge.get("weight")
    if isinstance(weight, (int, float)) and not isinstance(weight, bool):
        return f"{text} {weight:g}"
    return text


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


def _far(a: int, b: int, folded: Folding) -> bool:
    """Whether the edge a-b joins an answer (or the root, an entity) to a node that is
    not in the last step of the run it ends: drawn along the side.  A root that is an
    activity (a session that failed before it answered) is where its steps hang from,
    drawn above them."""
    for end, other in ((a, b), (b, a)):
        if end in folded.ends and end != other:
            return folded.step[other] != folded.ends[end]
    return False
