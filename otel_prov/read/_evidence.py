"""What ``why`` reads of the reasoning it reaches: evidence for and against each
hypothesis and decision, and the revisions reviewers made later.

A claim's evidence is a node of its own (``oprov:SupportingEvidence`` or
``oprov:ContradictingEvidence``: a qualified derivation, or a qualified influence when
what it rests on came after the claim), and so is a decision's adoption of a hypothesis
(``oprov:Adoption``).  ``why`` follows the plain relations beside them
(``prov:wasDerivedFrom``, ``prov:wasInfluencedBy``) to what the evidence rests on; this
module reads the qualifying nodes, with one query anchored on the claims reached, and
turns each plain edge they qualify into the edge a reader asks about
(:data:`EVIDENCE_RELATIONS`), with its weight.  Evidence whose basis the mapper could not
find (an ``oprov:unresolvedReference``) becomes a node of its own, so that nothing the
agent said is lost from the graph.  A reviewer's revision of a claim (``otel-prov
review``) comes later than the claim and no derivation leads to it: it is read by its
``prov:wasRevisionOf``, with the person it is attributed to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import OPROV, PROV, RDF
from otel_prov.read._sparql import SPARQL_PREFIXES, values

__all__ = [
    "ADOPTS",
    "CONTRADICTED_BY",
    "EVIDENCE_RELATIONS",
    "QUALIFIER",
    "SUPPORTED_BY",
    "Qualified",
    "qualified_edges",
    "reasoning_query",
    "reasoning_rows",
    "unresolved_label",
]

SUPPORTED_BY = "supportedBy"
CONTRADICTED_BY = "contradictedBy"
ADOPTS = "adopts"
EVIDENCE_RELATIONS = {
    f"{OPROV}SupportingEvidence": SUPPORTED_BY,
    f"{OPROV}ContradictingEvidence": CONTRADICTED_BY,
    f"{OPROV}Adoption": ADOPTS,
}
"""The class of a qualifying node -> the relation ``why`` names its edge by: from the
claim to what it rests on (``supportedBy`` an observation, ``contradictedBy`` a
document, ``adopts`` a hypothesis)."""

QUALIFIER = "qualifier"
"""The ``attempt`` of the rows that describe a qualifying node (no node of the graph)."""

_QUALIFYING = (f"{PROV}qualifiedDerivation", f"{PROV}qualifiedInfluence")
_REVISED = (f"{OPROV}Goal", f"{OPROV}Hypothesis", f"{OPROV}Decision")


def reasoning_query(graph: str, claims: Sequence[str], properties: Sequence[str]) -> str:
    """SELECT ``?n ?kind ?p ?o``: of each of ``claims`` (IRIs), what qualifies its
    derivations and influences (``?kind`` :data:`QUALIFIER`), the revisions made of it
    (``?kind`` ``false``, with ``properties``, the prefixed names ``why`` reads of a node)
    and the people those are attributed to."""
    listed = ", ".join((*properties, "prov:wasAttributedTo"))
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?n ?kind ?p ?o WHERE {{ GRAPH {graph} {{
  VALUES ?claim {{ {values(claims)} }}
  {{ ?claim prov:qualifiedDerivation|prov:qualifiedInfluence ?n . BIND("{QUALIFIER}" AS ?kind)
     ?n ?p ?o . FILTER(?p IN (rdf:type, prov:entity, oprov:weight, oprov:unresolvedReference)) }}
  UNION {{ ?n prov:wasRevisionOf ?claim . BIND("false" AS ?kind)
     ?n ?p ?o . FILTER(?p IN ({listed})) }}
  UNION {{ ?revision prov:wasRevisionOf ?claim ; prov:wasAttributedTo ?n . BIND("false" AS ?kind)
     ?n ?p ?o . FILTER(?p IN (rdf:type, rdfs:label)) }}
}} }}"""


def reasoning_rows(
    backend: QueryBackend,
    graph: str,
    described: Sequence[Mapping[str, str | None]],
    properties: Sequence[str],
) -> list[dict[str, str | None]]:
    """Rows as ``why`` reads them (``n``, ``attempt``, ``p``, ``o``) of the evidence,
    adoptions and revisions of the claims among ``described`` (the rows of the nodes
    reached); none, and no query, when the run recorded no reasoning."""
    claims = sorted(
        {
            row["n"] or ""
            for row in described
            if row["p"] in _QUALIFYING or (row["p"] == f"{RDF}type" and row["o"] in _REVISED)
        }
    )
    if not claims:
        return []
    rows = backend.query(reasoning_query(graph, claims, properties)).rows
    return [{"n": row["n"], "attempt": row["kind"], "p": row["p"], "o": row["o"]} for row in rows]


@dataclass(frozen=True)
class Qualified:
    """An edge of the graph as the qualifying node says it: from ``claim`` to what it
    rests on (``basis``, or ``None`` when the mapper could not find it: ``reference``
    says what the agent named), by ``relation`` (:data:`EVIDENCE_RELATIONS`), with its
    ``weight``; ``derived``: a derivation (the basis was there when the claim was made),
    not an influence."""

    node: str
    claim: str
    relation: str
    basis: str | None
    reference: str | None
    weight: float | None
    derived: bool

    @property
    def plain(self) -> str:
        """The plain relation beside it, which the qualified edge stands for."""
        return "wasDerivedFrom" if self.derived else "wasInfluencedBy"


def qualified_edges(
    props: Mapping[str, Mapping[str, list[str]]],
    qualifiers: Mapping[str, Mapping[str, list[str]]],
) -> list[Qualified]:
    """The qualified edges of the claims in ``props`` (what ``why`` read of each node),
    from what ``qualifiers`` says of their qualifying nodes, in a stable order."""
    found: list[Qualified] = []
    for claim, described in props.items():
        for predicate in _QUALIFYING:
            for node in described.get(predicate, []):
                said = qualifiers.get(node, {})
                relation = next(
                    (
                        EVIDENCE_RELATIONS[t]
                        for t in said.get(f"{RDF}type", [])
                        if t in EVIDENCE_RELATIONS
                    ),
                    None,
                )
                if relation is None:
                    continue  # someone else's qualified derivation: the plain edge stays
                weights = said.get(f"{OPROV}weight", [])
                basis = min(said.get(f"{PROV}entity", []), default=None)
                reference = min(said.get(f"{OPROV}unresolvedReference", []), default=None)
                found.append(
                    Qualified(
                        node=node,
                        claim=claim,
                        relation=relation,
                        basis=basis,
                        reference=reference,
                        weight=float(weights[0]) if weights else None,
                        derived=predicate == _QUALIFYING[0],
                    )
                )
    return sorted(found, key=lambda q: (q.claim, q.node))


def unresolved_label(reference: str | None) -> str:
    """What a reader is told of evidence resting on a name no entity has: ``unknown tool
    call call_9``."""
    kind, _, name = (reference or "").partition(":")
    kinds = {
        "tool_call": "tool call",
        "document": "document",
        "hypothesis": "hypothesis",
        "goal": "goal",
        "claim": "hypothesis or decision",
    }
    if kind == "none" or not reference:
        return "nothing named: the evidence rests on no entity"
    return f"unknown {kinds.get(kind, kind)} {name}".rstrip()
