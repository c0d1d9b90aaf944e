"""The sessions a store already holds sealed, for a writer that continues them.

Every writer that may seal spans the store holds already (``import``, the receiver, a
writer recovering a dead one's runs) must not seal a stored session a second time: that
would fork its chain.  It asks the destination, trace by trace, which sessions it holds,
with their newest bundle, how many bundles each has and whether the newest is a streamed
entry (the run still open), and goes on from there
(:func:`~otel_prov.read._verify.stored_content` reads their content).
"""

from __future__ import annotations

from collections.abc import Sequence

from otel_prov.processing._stored import OpenStoredRun, StoredSession
from otel_prov.prov._rdf import Triple, instant, literal
from otel_prov.prov._stream import STREAMED
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sparql import SPARQL_PREFIXES
from otel_prov.read._verify import stored_content

__all__ = ["StoreReads"]

_TRACES_PER_QUERY = 100


def stored_sessions_query(graph: str, trace_ids: Sequence[str]) -> str:
    """SELECT ``?trace ?session ?bundle ?bundles ?form``: each sealed session of these
    traces, its newest bundle, how many bundles it has and the newest's canonical form."""
    return f"""{SPARQL_PREFIXES}
SELECT ?trace ?session ?bundle (COUNT(DISTINCT ?any) AS ?bundles) (SAMPLE(?canonical) AS ?form)
WHERE {{ GRAPH {graph} {{
  VALUES ?trace {{ {" ".join(literal(trace) for trace in trace_ids)} }}
  ?session a oprov:AgentSession ; oprov:traceId ?trace .
  ?bundle oprov:bundleOf ?session .
  FILTER NOT EXISTS {{ ?newer prov:wasRevisionOf ?bundle }}
  OPTIONAL {{ ?bundle oprov:canonicalization ?canonical }}
  ?any oprov:bundleOf ?session .
}} }} GROUP BY ?trace ?session ?bundle ORDER BY ?session ?bundle"""


def open_runs_query(graph: str) -> str:
    """SELECT ``?session ?bundle ?chain ?at (bundles)``: each run whose newest entry is a
    streamed one, with its writer's chain, when that entry was sealed, and its bundles."""
    return f"""{SPARQL_PREFIXES}
SELECT ?session ?bundle ?chain ?at (COUNT(DISTINCT ?any) AS ?bundles) WHERE {{ GRAPH {graph} {{
  ?bundle oprov:bundleOf ?session ; oprov:canonicalization {literal(STREAMED)} ;
    oprov:chainId ?chain ; prov:generatedAtTime ?at .
  FILTER NOT EXISTS {{ ?newer prov:wasRevisionOf ?bundle }}
  ?any oprov:bundleOf ?session .
}} }} GROUP BY ?session ?bundle ?chain ?at"""


class StoreReads:
    """The store's answers to a writer that goes on from what it holds
    (:class:`~otel_prov.processing._stored.StoredRuns`), in ``graph`` (an IRI term)."""

    def __init__(self, backend: QueryBackend, graph: str) -> None:
        self.backend = backend
        self.graph = graph

    def sessions(self, trace_ids: Sequence[str]) -> dict[str, list[StoredSession]]:
        found: dict[str, list[StoredSession]] = {}
        for start in range(0, len(trace_ids), _TRACES_PER_QUERY):
            chunk = trace_ids[start : start + _TRACES_PER_QUERY]
            for row in self.backend.query(stored_sessions_query(self.graph, chunk)).rows:
                found.setdefault(row["trace"] or "", []).append(
                    StoredSession(
                        row["session"] or "",
                        row["bundle"] or "",
                        int(row["bundles"] or 1),
                        streamed=row.get("form") == STREAMED,
                    )
                )
        return found

    def content(self, session: StoredSession) -> list[Triple]:
        return stored_content(self.backend, self.graph, session.session, session.bundle)

    def open_runs(self) -> list[OpenStoredRun]:
        found = []
        for row in self.backend.query(open_runs_query(self.graph)).rows:
            try:
                sealed_ns = int(instant(row["at"] or "").timestamp() * 1_000_000_000)
            except ValueError:
                continue  # an entry whose time cannot be read: not this writer's to end
            stored = StoredSession(
                row["session"] or "", row["bundle"] or "", int(row["bundles"] or 1), True
            )
            found.append(OpenStoredRun(stored, row["chain"] or "", sealed_ns))
        return found
