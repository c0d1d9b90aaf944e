"""The read API: one reader over the embedded store or a SPARQL endpoint."""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pyoxigraph
import rdflib

from otel_prov.exporters._base import graph_term
from otel_prov.exporters._members import member_triples, session_members
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters._registry import StoreOptions, get
from otel_prov.prov._approval_triples import person_iri
from otel_prov.prov._chain import Checkpoint
from otel_prov.prov._rdf import PREFIXES, datetime_literal, iri, literal
from otel_prov.read._assembly import load_session
from otel_prov.read._decisions import load_reasoning
from otel_prov.read._diff import SessionDiff, diff_sessions
from otel_prov.read._listing import RunFilter, find_sessions, list_runs
from otel_prov.read._sparql import SPARQL_PREFIXES, STATUSES
from otel_prov.read._summary import RunSummary, summarize
from otel_prov.read._text_index import TextIndex
from otel_prov.read._trace_spans import TraceSpanView, trace_spans
from otel_prov.read._verify import SessionCheck, verify_sessions
from otel_prov.read._views import SessionSummary, SessionView
from otel_prov.read._why import WhyGraph, load_why

__all__ = [
    "ProvenanceReader",
    "SessionPage",
    "decode_cursor",
    "encode_cursor",
    "open_endpoint",
    "open_store",
]


def session_construct_query(graph: str, session: str) -> str:
    """CONSTRUCT every triple about the session, its activities, entities and agents.

    The members are found in a subquery (here and in :func:`stored_content_query`):
    joined with ``?x ?p ?o`` beside the union itself, Virtuoso (7.2) drops most rows
    once the union has more than a few branches."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{
    {session_members(iri(session), agents=True)}
  }} }} }}
  GRAPH {graph} {{ ?x ?p ?o }}
}}"""


@dataclass(frozen=True)
class SessionPage:
    """One page of runs, newest first; ``next_cursor`` is ``None`` on the last page."""

    sessions: tuple[SessionSummary, ...]
    next_cursor: str | None


class ProvenanceReader:
    """Reads provenance back as typed objects; build one with :func:`open_store` or
    :func:`open_endpoint`.

    Every method queries the store when called; nothing is cached, so a reader of a
    SPARQL endpoint sees what agents wrote since.  Methods raise
    :class:`~otel_prov.read.StoreUnavailableError` when the store cannot be read.
    """

    def __init__(
        self,
        backend: QueryBackend,
        *,
        graph: str | None = None,
        text_index: TextIndex | None = None,
    ) -> None:
        self._backend = backend
        self._graph = graph_term(graph)
        self._text_index = text_index if text_index is not None else TextIndex()
        """What ``sessions(text=...)`` searches; pass one to share it between readers of
        one store (it reads each run's text once)."""

    def sessions(
        self,
        *,
        agent: str | None = None,
        service: str | None = None,
        status: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        text: str | None = None,
        approved_by: str | None = None,
        rejected: bool = False,
        limit: int = 20,
        cursor: str | None = None,
    ) -> SessionPage:
        """Runs (outermost sessions), newest first, filtered and paged by the store.

        ``agent`` is the agent's name, ``service`` the ``service.name``, ``status`` one
        of ``ok``, ``error``, ``incomplete``; ``since`` (inclusive) and ``until``
        (exclusive) bound the start time, a naive ``datetime`` being UTC; ``text`` keeps
        runs whose question or answer holds it, ignoring case; ``approved_by`` (a
        person's id) runs in which that person allowed a call, ``rejected`` runs in
        which someone rejected one.  Pass a
        page's ``next_cursor`` as ``cursor`` for the page after it: paging by cursor
        stays correct while agents add runs, which an offset would not.
        """
        if status is not None and status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
        if limit < 0:
            raise ValueError(f"limit must be 0 or more, not {limit}")
        if limit == 0:
            return SessionPage((), None)
        where = RunFilter(
            agent=None if agent is None else literal(agent),
            service=None if service is None else literal(service),
            status=status,
            since=None if since is None else _datetime_term(since),
            until=None if until is None else _datetime_term(until),
            text=None if not text else literal(text),
            after=None if cursor is None else _after(cursor),
            approved_by=None if approved_by is None else person_iri(approved_by),
            rejected=rejected,
        )
        search = None
        if text:
            after = None if cursor is None else _after_lexical(cursor)
            search = (self._text_index, text, after)
        found = list_runs(self._backend, self._graph, where, limit + 1, search=search)
        last = found[limit - 1] if len(found) > limit else None
        return SessionPage(
            tuple(found[:limit]), None if last is None else encode_cursor(last.start, last.id)
        )

    def find(self, ident: str) -> list[str]:
        """IRIs of the runs a session IRI, trace id or conversation id names, oldest first."""
        return find_sessions(self._backend, self._graph, ident)

    def session(self, session: str, *, full: bool = False) -> SessionView:
        """One session (by IRI, see :meth:`find`) with its iterations, calls and the
        sessions it started; ``full`` reads values kept in the blob store back whole
        (checked against their hash).  Raises ``LookupError`` when there is none."""
        return load_session(self._backend, self._graph, session, full=full)

    def trace_spans(self, trace_id: str) -> tuple[TraceSpanView, ...]:
        """Every span of the trace ``trace_id`` (32 hex digits) the store holds, earliest
        first, whichever service or run it belongs to: the server span around a run, the
        spans of the services it called and of those that called it (the timeline draws
        them).  One query; at most the first ``MOST_TRACE_SPANS``."""
        return trace_spans(self._backend, self._graph, trace_id)

    def graph(self, session: str) -> rdflib.Graph:
        """Every triple about the session, its activities, entities and agents, with the
        ``prov``/``oprov`` prefixes bound: for analysis with rdflib or SPARQL in Python."""
        graph = rdflib.Graph()
        for name, namespace in PREFIXES.items():
            graph.bind(name, namespace)
        data = pyoxigraph.serialize(self.triples(session), format=pyoxigraph.RdfFormat.N_TRIPLES)
        return graph.parse(data=(data or b"").decode(), format="nt")

    def triples(self, session: str) -> list[pyoxigraph.Triple]:
        """The triples of :meth:`graph` as pyoxigraph reads them (what ``otel-prov show``
        serializes as Turtle, JSON-LD or PROV)."""
        whole = session_construct_query(self._graph, session)
        return member_triples(self._backend, self._graph, session, whole=whole, agents=True)

    def why(self, ident: str) -> WhyGraph:
        """The derivation graph behind a run's answer (``ident`` a session IRI, trace id
        or conversation id: the newest run it names, with the conversation's earlier
        turns) or behind any activity or entity (``ident`` its IRI), from a fixed number of queries
        whatever the run's size.  Raises ``LookupError`` when nothing has that name."""
        return load_why(self._backend, self._graph, ident)

    def diff(self, a: str, b: str) -> SessionDiff:
        """Run ``a`` and run ``b`` (each a session IRI, trace id or conversation id: the
        newest run it names) compared step by step: the first divergence, calls added
        and missing, changed arguments, statuses, hypotheses, decisions and answers.
        ``LookupError`` names the one that is not there."""
        first, second = self._newest(a), self._newest(b)
        reasoning = (
            load_reasoning(self._backend, self._graph, first),
            load_reasoning(self._backend, self._graph, second),
        )
        return diff_sessions(self.session(first), self.session(second), reasoning)

    def summary(self, ident: str) -> RunSummary:
        """A run (session IRI, trace id or conversation id: the newest run it names) told
        in plain sentences from its provenance alone, each naming the nodes of
        :meth:`why` it speaks of.  ``LookupError`` when there is no such run."""
        run = self._newest(ident)
        return summarize(self.session(run), self.why(run))

    def _newest(self, ident: str) -> str:
        runs = self.find(ident)
        if not runs:
            raise LookupError(f"no session with id, trace id or conversation id {ident!r}")
        return runs[-1]

    def verify(
        self,
        ident: str | None = None,
        *,
        trusted: Sequence[str] = (),
        checkpoints: Sequence[Checkpoint] = (),
    ) -> list[SessionCheck]:
        """Check every run (or those ``ident`` names, see :meth:`find`) against its bundle,
        and the writers' chains (see ``verify_sessions``: ``trusted`` key ids, a
        checkpoint file's ``checkpoints``)."""
        return verify_sessions(
            self._backend, self._graph, ident, trusted=trusted, checkpoints=checkpoints
        )


def open_store(path: str | os.PathLike[str], *, graph: str | None = None) -> ProvenanceReader:
    """A reader of the embedded store at ``path`` (``configure()`` writes to
    ``.otel-prov/store`` unless told otherwise), opened read-only: it works while an
    agent writes to it, and sees the store as it was when opened."""
    reader = get("embedded").reader(StoreOptions(store=Path(path)))
    return ProvenanceReader(reader, graph=graph)


def open_endpoint(
    url: str, *, headers: dict[str, str] | None = None, graph: str | None = None
) -> ProvenanceReader:
    """A reader of a SPARQL 1.1 query endpoint.  ``headers`` (e.g. authorization) go
    with every request and are never logged."""
    options = StoreOptions(sparql_query_endpoint=url, sparql_headers=headers or {})
    return ProvenanceReader(get("sparql").reader(options), graph=graph)


def parse_moment(text: str) -> datetime:
    """A start-time bound as people type it (``2025-11-30``, ``2025-11-30T09:00``, with
    ``Z`` or an offset); without a zone it is UTC, as :meth:`ProvenanceReader.sessions`
    takes it.  ``ValueError`` names the text and the expected form."""
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError as exc:
        raise ValueError(
            f"{text!r} is not a date and time (write it as 2025-11-30T09:00, UTC)"
        ) from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _datetime_term(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return datetime_literal(moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"))


def encode_cursor(start: str, session: str) -> str:
    """Where a page ended: the last run's start and IRI, opaque and URL-safe."""
    return base64.urlsafe_b64encode(json.dumps([start, session]).encode()).decode()


def decode_cursor(cursor: str) -> tuple[datetime, str]:
    """The start and IRI :func:`encode_cursor` wrote; ``ValueError`` for anything else."""
    try:
        start, session = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        moment = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        iri(str(session))
    except (binascii.Error, UnicodeError, TypeError, ValueError) as exc:
        raise ValueError(f"not a cursor from SessionPage.next_cursor: {cursor!r}") from exc
    return moment, str(session)


def _after_lexical(cursor: str) -> tuple[str, str]:
    """The cursor's start (``xsd:dateTime`` lexical form, UTC) and IRI, as text."""
    moment, session = decode_cursor(cursor)
    return moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z"), session


def _after(cursor: str) -> tuple[str, str]:
    moment, session = decode_cursor(cursor)
    return _datetime_term(moment), iri(session)
