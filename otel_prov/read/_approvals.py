"""People's decisions on a run's tool calls, as ``show`` and the web view mark them.

Each ``oprov:Approval`` of the run (sub-sessions included), oldest first: what was
decided, in words (``approved by Alice after 42 s``, as the mapper labels it), the call it
was about, and the call it allowed (the tool call ``prov:wasInformedBy`` it), none for a
rejected call, which never ran.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import iri
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = ["ApprovalView", "approvals_of"]


@dataclass(frozen=True)
class ApprovalView:
    """One person's decision on a tool call."""

    id: str
    decision: str
    """``approved``, ``rejected`` or ``modified``."""
    label: str
    """The decision in words: who, after how long, why."""
    tool: str | None
    call_id: str | None
    allowed: str | None
    """The IRI of the tool call the decision allowed (None: rejected, or not recorded)."""
    at: str | None
    """When it was decided, ``xsd:dateTime`` in UTC."""


def approvals_query(graph: str, session: str) -> str:
    """SELECT each decision made in the run, oldest first, with the call it allowed."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?decision ?label ?tool ?callId ?allowed ?at WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {iri(session)} ; a oprov:Approval ; oprov:decision ?decision .
  OPTIONAL {{ ?a rdfs:label ?label }}
  OPTIONAL {{ ?a oprov:toolName ?tool }}
  OPTIONAL {{ ?a oprov:toolCallId ?callId }}
  OPTIONAL {{ ?a prov:endedAtTime ?at }}
  OPTIONAL {{ ?allowed prov:wasInformedBy ?a ; a oprov:ToolCall }}
}} }} ORDER BY ?at ?a"""


def approvals_of(backend: QueryBackend, graph: str, session: str) -> tuple[ApprovalView, ...]:
    """The run's decisions (one per decision: a second value of a field is not shown)."""
    found: dict[str, ApprovalView] = {}
    for row in backend.query(approvals_query(graph, session)).rows:
        ident = row["a"] or ""
        if ident in found:
            continue
        found[ident] = ApprovalView(
            id=ident,
            decision=row["decision"] or "",
            label=row["label"] or row["decision"] or "",
            tool=row["tool"],
            call_id=row["callId"],
            allowed=row["allowed"],
            at=row["at"],
        )
    return tuple(found.values())
