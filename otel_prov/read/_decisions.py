"""A run's decisions, with the evidence for and against each: what ``why``, ``summary``
and ``diff`` say of them.

A decision is accounted for by the evidence on it and on the hypotheses it adopts
(``via``): what each rests on, its weight, and whether it was *considered*: there when
the decision was made (generated before it in the run).  Evidence that came after it, or
that rests on something the run does not have, is *not considered*: the auditor's
"which evidence spoke against refusing this refund, and was it looked at?".  A
reviewer's later revision of a decision (``otel-prov review``) is told beside it.

:func:`decision_accounts` is pure, over a :class:`~otel_prov.read.WhyGraph`;
:func:`load_reasoning` reads the hypotheses and decisions of one run (one query), for
``diff`` to compare two runs by (:func:`reasoning_differences`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import InvalidIRIError, instant_order, iri, literal
from otel_prov.prov._review import Reviewed
from otel_prov.read._evidence import ADOPTS, CONTRADICTED_BY, SUPPORTED_BY
from otel_prov.read._sparql import SPARQL_PREFIXES
from otel_prov.read._why import WhyEdge, WhyGraph, WhyNode

__all__ = [
    "DecisionAccount",
    "Reasoned",
    "Weighed",
    "decision_accounts",
    "decision_sentence",
    "describe",
    "find_reasoning",
    "load_reasoning",
    "reasoning_differences",
    "revision_sentence",
    "weighed",
]

_QUOTE = 80


@dataclass(frozen=True)
class Weighed:
    """One piece of evidence on a decision: what it rests on (``basis``, a node of the
    graph; an ``UnresolvedReference`` node when the run has no entity by the name the
    agent gave), whether it speaks ``against`` the decision, its ``weight``, whether it
    was ``considered`` (there when the decision was made), and the adopted hypothesis it
    bears on (``via``; ``None``: on the decision itself)."""

    basis: WhyNode
    against: bool
    weight: float | None
    considered: bool
    via: WhyNode | None = None


@dataclass(frozen=True)
class DecisionAccount:
    """A decision of the run, what it adopts, the evidence on it and its revisions."""

    decision: WhyNode
    adopted: tuple[WhyNode, ...]
    evidence: tuple[Weighed, ...]
    revisions: tuple[tuple[WhyNode, WhyNode | None], ...] = ()
    """(revision, reviewer) for each later revision by a person."""

    @property
    def supporting(self) -> tuple[Weighed, ...]:
        return tuple(e for e in self.evidence if e.considered and not e.against)

    @property
    def contradicting(self) -> tuple[Weighed, ...]:
        return tuple(e for e in self.evidence if e.considered and e.against)

    @property
    def not_considered(self) -> tuple[Weighed, ...]:
        return tuple(e for e in self.evidence if not e.considered)


def decision_accounts(graph: WhyGraph) -> list[DecisionAccount]:
    """Every decision the agent made in ``graph`` (a reviewer's revision is told with the
    decision it revises), in the graph's order."""
    revisions: dict[str, list[tuple[WhyNode, WhyNode | None]]] = {}
    reviewed: set[str] = set()
    for node in graph.nodes:
        reviewer = next(
            (
                graph.node(e.target)
                for e in graph.outgoing(node.id)
                if e.relation == "wasAttributedTo"
            ),
            None,
        )
        if reviewer is None:
            continue
        reviewed.add(node.id)
        for edge in graph.outgoing(node.id):
            if edge.relation == "wasRevisionOf":
                revisions.setdefault(edge.target, []).append((node, reviewer))
    return [
        _account(graph, node, tuple(revisions.get(node.id, ())))
        for node in graph.nodes
        if node.type == "Decision" and node.id not in reviewed
    ]


def _account(
    graph: WhyGraph, decision: WhyNode, revisions: tuple[tuple[WhyNode, WhyNode | None], ...]
) -> DecisionAccount:
    adopted = [graph.node(e.target) for e in graph.outgoing(decision.id) if e.relation == ADOPTS]
    found = [_weighed(graph, decision, edge, None) for edge in graph.outgoing(decision.id)]
    for hypothesis in adopted:
        found += [
            _weighed(graph, decision, edge, hypothesis) for edge in graph.outgoing(hypothesis.id)
        ]
    return DecisionAccount(
        decision=decision,
        adopted=tuple(adopted),
        evidence=tuple(item for item in found if item is not None),
        revisions=revisions,
    )


def _weighed(
    graph: WhyGraph, decision: WhyNode, edge: WhyEdge, via: WhyNode | None
) -> Weighed | None:
    if edge.relation not in (SUPPORTED_BY, CONTRADICTED_BY):
        return None
    basis = graph.node(edge.target)
    # On an adopted hypothesis: was it there when the decision was made?
    considered = bool(edge.considered) if via is None else _before(basis, decision)
    return Weighed(basis, edge.relation == CONTRADICTED_BY, edge.weight, considered, via)


def _before(basis: WhyNode, decision: WhyNode) -> bool:
    if basis.time is None or decision.time is None:
        return False
    return instant_order(basis.time) <= instant_order(decision.time)


def _quoted(text: str, width: int = _QUOTE) -> str:
    flat = " ".join(text.split())
    return f"“{flat if len(flat) <= width else flat[: width - 1] + '…'}”"


def describe(graph: WhyGraph, node: WhyNode) -> str:
    """What a piece of evidence rests on, as a reader names it: ``what track_parcel
    [call_1] returned``, ``the document “...”``, ``hypothesis h1 “...”``."""
    if node.type == "Observation":
        call = next(
            (
                graph.node(e.target)
                for e in graph.outgoing(node.id)
                if e.relation == "wasGeneratedBy" and graph.node(e.target).tool
            ),
            None,
        )
        if call is not None:
            ident = f" [{call.call_id}]" if call.call_id else ""
            return f"what {call.tool}{ident} returned"
    if node.type in ("Hypothesis", "Decision", "Goal") and node.reasoning_id:
        return f"{node.type.lower()} {node.reasoning_id} {_quoted(node.label)}"
    if node.type == "UnresolvedReference":
        return node.label
    return f"the {node.type.lower()} {_quoted(node.label)}"


def _listed(graph: WhyGraph, items: Sequence[Weighed], *, direction: bool = True) -> str:
    if not items:
        return "none"
    return ", ".join(
        f"{describe(graph, item.basis)} ({weighed(item, direction)})" for item in items
    )


def weighed(item: Weighed, direction: bool = True) -> str:
    """How a piece of evidence counts: ``weight 0.7, against, via h2, came after the
    decision`` (its direction, and why it was not considered, when ``direction``)."""
    notes = [] if item.weight is None else [f"weight {item.weight:g}"]
    if direction:
        notes.append("against" if item.against else "for")
    if item.via is not None:
        notes.append(f"via {item.via.reasoning_id or item.via.label}")
    if direction and not item.considered:
        unknown = item.basis.type == "UnresolvedReference"
        notes.append("not in the run" if unknown else "came after the decision")
    return ", ".join(notes)


def decision_sentence(graph: WhyGraph, account: DecisionAccount) -> str:
    """``Decided “X” (d1, confidence 0.7); for: ...; against: ...; not considered: ...``"""
    decision = account.decision
    about = [decision.reasoning_id] if decision.reasoning_id else []
    if decision.confidence is not None:
        about.append(f"confidence {decision.confidence:g}")
    head = f"Decided {_quoted(decision.label, 120)}" + (f" ({', '.join(about)})" if about else "")
    parts = [
        head,
        f"for: {_listed(graph, account.supporting, direction=False)}",
        f"against: {_listed(graph, account.contradicting, direction=False)}",
        f"not considered: {_listed(graph, account.not_considered)}",
    ]
    return "; ".join(parts) + "."


def revision_sentence(account: DecisionAccount, revision: WhyNode, reviewer: WhyNode | None) -> str:
    """``Decision d1 was revised by Alice Martin: “Refund half”.``"""
    who = f" by {reviewer.label}" if reviewer is not None else ""
    name = account.decision.reasoning_id or _quoted(account.decision.label)
    return f"Decision {name} was revised{who}: {_quoted(revision.label, 120)}."


@dataclass(frozen=True)
class Reasoned:
    """A hypothesis or decision of a run, as ``diff`` compares them."""

    kind: str
    """``hypothesis`` or ``decision``."""
    id: str
    text: str | None
    confidence: float | None
    adopts: tuple[str, ...]
    step: int | None
    """The iteration number of the step that formed it, when it was an iteration."""

    def told(self) -> str:
        """One line: ``h1: The parcel was lost (confidence 0.5)``."""
        notes = [] if self.confidence is None else [f"confidence {self.confidence:g}"]
        if self.adopts:
            notes.append("adopts " + ", ".join(self.adopts))
        text = f"{self.id}: {self.text if self.text is not None else '(text not recorded)'}"
        return text + (f" ({'; '.join(notes)})" if notes else "")


def reasoning_query(graph: str, session: str) -> str:
    """SELECT the hypotheses and decisions generated in run ``session`` (an IRI), with
    their ids, texts (or hashes), confidences, adopted hypotheses' ids and the iteration
    that formed them, in the order they were formed."""
    s = iri(session)
    return f"""{SPARQL_PREFIXES}
SELECT ?n ?kind ?id ?value ?hash ?confidence ?at ?number ?adopted WHERE {{ GRAPH {graph} {{
  {{ BIND({s} AS ?act) }} UNION {{ ?act oprov:partOf+ {s} }}
  ?n prov:wasGeneratedBy ?act ; a ?kind ; oprov:reasoningId ?id ; prov:generatedAtTime ?at .
  FILTER(?kind IN (oprov:Hypothesis, oprov:Decision))
  OPTIONAL {{ ?n prov:value ?value }}
  OPTIONAL {{ ?n oprov:contentHash ?hash }}
  OPTIONAL {{ ?n oprov:confidence ?confidence }}
  OPTIONAL {{ ?act oprov:iterationNumber ?number }}
  OPTIONAL {{ ?n prov:qualifiedDerivation ?q . ?q a oprov:Adoption ; prov:entity ?h .
             ?h oprov:reasoningId ?adopted }}
}} }} ORDER BY ?at ?n ?adopted"""


def _formed(row: Mapping[str, str | None]) -> tuple[tuple[str, str], bool, int]:
    """When a row's node was formed, and its place among those formed at once (a
    structured output's): hypotheses first, each by its number (``hypothesis-10`` after
    ``hypothesis-9``)."""
    number = re.search(r"-([0-9]+)$", row["n"] or "")
    kind = (row["kind"] or "").endswith("Decision")
    return instant_order(row["at"] or ""), kind, int(number.group(1)) if number else 0


def load_reasoning(backend: QueryBackend, graph: str, session: str) -> tuple[Reasoned, ...]:
    """The hypotheses and decisions of run ``session`` (an IRI), in the order formed."""
    found: dict[str, Reasoned] = {}
    for row in sorted(backend.query(reasoning_query(graph, session)).rows, key=_formed):
        node = row["n"] or ""
        adopted = (row["adopted"],) if row["adopted"] else ()
        if node in found:
            known = found[node]
            found[node] = Reasoned(
                known.kind,
                known.id,
                known.text,
                known.confidence,
                known.adopts + adopted,
                known.step,
            )
            continue
        number = row["number"]
        found[node] = Reasoned(
            kind=(row["kind"] or "").rpartition("#")[2].lower(),
            id=row["id"] or "",
            text=row["value"] if row["value"] is not None else row["hash"],
            confidence=None if row["confidence"] is None else float(row["confidence"]),
            adopts=adopted,
            step=None if number is None else int(number),
        )
    return tuple(found.values())


def reasoning_differences(
    a: Sequence[Reasoned], b: Sequence[Reasoned]
) -> list[tuple[int | None, str, str | None, str | None]]:
    """Where two runs' hypotheses, then their decisions, part: (step, ``hypothesis`` or
    ``decision``, how ``a`` states it, how ``b`` does), position by position, the first
    of each kind that differs and every one after it."""
    parted = []
    for kind in ("hypothesis", "decision"):
        of_a = [item for item in a if item.kind == kind]
        of_b = [item for item in b if item.kind == kind]
        for index in range(max(len(of_a), len(of_b))):
            left = of_a[index] if index < len(of_a) else None
            right = of_b[index] if index < len(of_b) else None
            told = (None if left is None else left.told(), None if right is None else right.told())
            if told[0] != told[1]:
                step = next((x.step for x in (left, right) if x is not None and x.step), None)
                parted.append((step, kind, *told))
    return parted


def find_reasoning(backend: QueryBackend, graph: str, session: str, name: str) -> Reviewed | None:
    """The goal, hypothesis or decision of run ``session`` (an IRI) that ``name`` names:
    its id in the run (``d1``) or its IRI; of several versions, the last the agent
    stated.  ``None`` when the run has none by that name."""
    s = iri(session)
    named = f"?id = {literal(name)}"
    with contextlib.suppress(InvalidIRIError):  # an id, not an IRI
        named += f" || ?n = {iri(name)}"
    query = f"""{SPARQL_PREFIXES}
SELECT ?n ?kind ?id ?at WHERE {{ GRAPH {graph} {{
  {{ BIND({s} AS ?act) }} UNION {{ ?act oprov:partOf+ {s} }}
  ?n prov:wasGeneratedBy ?act ; a ?kind ; oprov:reasoningId ?id ; prov:generatedAtTime ?at .
  FILTER(?kind IN (oprov:Goal, oprov:Hypothesis, oprov:Decision))
  FILTER({named})
}} }} ORDER BY DESC(?at) ?n"""
    rows = backend.query(query).rows
    if not rows:
        return None
    row = rows[0]
    return Reviewed(
        node=f"<{row['n']}>", cls=f"<{row['kind']}>", reasoning_id=row["id"] or "", session=s
    )
