"""The sessions a store already holds sealed, for a writer that continues them.

``import`` (and the receiver through it) must not seal a stored session a second time:
that would fork its agent's bundle chain.  It asks the destination, trace by trace,
which sessions it holds, with their newest bundle and how many bundles each has, and
continues those (:func:`~otel_prov.read._verify.stored_content` reads their content).
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_prov.prov._rdf import literal
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = ["sealed_sessions"]

_TRACES_PER_QUERY = 100


def stored_sessions_query(graph: str, trace_ids: Sequence[str]) -> str:
    """SELECT ``?trace ?session ?bundle ?bundles``: each sealed session of these traces,
    its newest bundle and how many bundles it has."""
    return f"""{SPARQL_PREFIXES}
SELECT ?trace ?session ?bundle (COUNT(DISTINCT ?any) AS ?bundles) WHERE {{ GRAPH {graph} {{
  VALUES ?trace {{ {" ".join(literal(trace) for trace in trace_ids)} }}
  ?session a oprov:AgentSession ; oprov:traceId ?trace .
  ?bundle oprov:bundleOf ?session .
  FILTER NOT EXISTS {{ ?newer prov:wasRevisionOf ?bundle }}
  ?any oprov:bundleOf ?session .
}} }} GROUP BY ?trace ?session ?bundle ORDER BY ?session ?bundle"""


def sealed_sessions(
    backend: QueryBackend, graph: str, trace_ids: Sequence[str]
) -> dict[str, list[tuple[str, str, int]]]:
    """Trace id -> (session IRI, its newest bundle, how many bundles it has) of each
    sealed session the destination holds for it."""
    found: dict[str, list[tuple[str, str, int]]] = {}
    for start in range(0, len(trace_ids), _TRACES_PER_QUERY):
        chunk = trace_ids[start : start + _TRACES_PER_QUERY]
        for row in backend.query(stored_sessions_query(graph, chunk)).rows:
            found.setdefault(row["trace"] or "", []).append(
                (row["session"] or "", row["bundle"] or "", int(row["bundles"] or 1))
            )
    return found
