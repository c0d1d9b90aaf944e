"""What a writer asks of the store it writes before it seals: the runs it holds already.

A writer that seals spans the store may hold already must go on from what is stored, not
seal a second time: ``import`` of a file imported before (or of more spans of its trace),
a receiver started again on its journal, the next writer of a run a dead process was
streaming.  Sealing anew would give a stored session a second first bundle, a fork of its
chain.  So the writer asks, trace by trace, which sessions the store holds, with their
newest entry (how many bundles each has, whether the newest is a streamed entry: the run
still open), and reads what is stored of each (``WritePipeline.continue_stored``).  The
writer names what it needs (:class:`StoredRuns`); :class:`StoreReads` asks any store's
reader (``_reading``) for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from otel_prov.exporters._content import stored_content
from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import SPARQL_PREFIXES, Triple, instant, literal
from otel_prov.prov._stream import STREAMED

__all__ = ["OpenStoredRun", "StoreReads", "StoredRuns", "StoredSession"]


@dataclass(frozen=True)
class StoredSession:
    """A session the store holds, as the writer needs it to go on from there."""

    session: str
    """Its IRI (plain)."""
    bundle: str
    """Its newest entry's bundle (plain IRI)."""
    revision: int
    """How many bundles it has (the newest is the ``revision``-th)."""
    streamed: bool
    """The newest entry is a streamed one (``_stream``): the run was still open."""


@dataclass(frozen=True)
class OpenStoredRun:
    """A run the store holds streamed and not ended."""

    stored: StoredSession
    chain: str
    """The chain its newest entry is in: its writer's."""
    last_ns: int
    """When that entry was sealed (ns since the epoch)."""


class StoredRuns(Protocol):
    """Reads of the store a writer goes on from."""

    def sessions(self, trace_ids: Sequence[str]) -> dict[str, list[StoredSession]]:
        """Trace id (32 hex digits) -> the sessions the store holds of it."""

    def content(self, session: StoredSession) -> list[Triple]:
        """What the store holds of ``session``'s content, in the mapper's syntax."""

    def open_runs(self) -> list[OpenStoredRun]:
        """The runs whose newest entry is a streamed one: still open, as far as the store
        knows (their writer at work, or gone)."""


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
    (:class:`StoredRuns`), in ``graph`` (an IRI term)."""

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
