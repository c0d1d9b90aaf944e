"""Listing runs: newest first, filtered and paged by the store, then described.

Runs (outermost sessions) are found by ``oprov:runStartedAt``, the mark the mapper
seals into each run: one property, so "newest first" is a scan of it and a sort, and a
page is a cursor (the last run's start and IRI) rather than an offset.  A run marked
twice (a stand-in's start beside its own, which the receiver's streaming has left) is
listed once, at its first start (:func:`_at_first_start`), and the page is filled from
the runs after it.  A run is then described from a few queries anchored on the page's
IRIs (details, counts, usage, evaluations), where a run with two agents, questions or
statuses is still one row.  ``find`` turns a session IRI, a trace id or a conversation
id into runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import OPROV, datetime_literal, instant_order
from otel_prov.read._session_facts import evaluations_of, usage_totals
from otel_prov.read._sparql import (
    SPARQL_PREFIXES,
    STATUS_PATTERNS,
    named_sessions,
    outermost,
    settled_status,
    shown_agent,
    values,
)
from otel_prov.read._text_index import TextIndex, chunks, first_starts
from otel_prov.read._views import SessionSummary

__all__ = ["RunFilter", "find_sessions", "list_runs"]


@dataclass(frozen=True)
class RunFilter:
    """Which runs to list; every field is already a SPARQL term (or ``None``: any).

    ``since``/``until`` are ``xsd:dateTime`` terms (``since`` inclusive, ``until``
    exclusive); ``after`` is the (start term, IRI term) of the last run of the page
    before, whose successors come next in the newest-first order.
    """

    agent: str | None = None
    service: str | None = None
    status: str | None = None
    since: str | None = None
    until: str | None = None
    text: str | None = None
    """A string literal to find, case-insensitively, in the run's question or answer."""
    after: tuple[str, str] | None = None
    among: tuple[str, ...] | None = None
    """IRI terms of the only runs to consider (those a text index found)."""
    approved_by: str | None = None
    """The IRI term of a person who allowed a call of the run (approved or modified)."""
    rejected: bool = False
    """Only runs in which a person rejected a call."""


def _agent_label(subject: str, label: str) -> str:
    """A pattern binding (or matching) ``label`` to the agent label shown for session
    ``subject``: the one sealed with the session (``oprov:agentLabel``).  A session sealed
    before it was written shows its AI agent's ``rdfs:label``, which no bundle covers
    (``verify`` says so): the agent's description is shared by all its sessions."""
    return (
        f"{{ {subject} oprov:agentLabel {label} }} UNION {{\n"
        f"    {subject} prov:wasAssociatedWith ?labelled . "
        f"?labelled a oprov:AIAgent ; rdfs:label {label} .\n"
        f"    FILTER NOT EXISTS {{ {subject} oprov:agentLabel ?sealedLabel }} }}"
    )


def _filter_patterns(where: RunFilter) -> list[str]:
    patterns = []
    if where.agent is not None:
        patterns.append(_agent_label("?s", where.agent))
    if where.service is not None:
        patterns.append(f"?s oprov:serviceName {where.service} .")
    if where.status is not None:
        patterns.append(STATUS_PATTERNS[where.status])
    if where.since is not None:
        patterns.append(f"FILTER(?start >= {where.since})")
    if where.until is not None:
        patterns.append(f"FILTER(?start < {where.until})")
    if where.text is not None:
        patterns.append(
            "FILTER EXISTS { { ?s prov:used ?found . ?found a oprov:Question }\n"
            "    UNION { ?found prov:wasGeneratedBy ?s ; a oprov:Answer }\n"
            f"    ?found prov:value ?said . FILTER(CONTAINS(LCASE(?said), LCASE({where.text}))) }}"
        )
    if where.approved_by is not None:
        patterns.append(
            f"FILTER EXISTS {{ ?allowed oprov:partOf+ ?s ; a oprov:Approval ;\n"
            f"    prov:wasAssociatedWith {where.approved_by} ; oprov:decision ?decision .\n"
            '    FILTER(?decision != "rejected") }'
        )
    if where.rejected:
        patterns.append('FILTER EXISTS { ?refused oprov:partOf+ ?s ; oprov:decision "rejected" }')
    if where.after is not None:
        start, run = where.after
        patterns.append(f"FILTER(?start < {start} || (?start = {start} && STR(?s) > STR({run})))")
    return patterns


def run_page_query(graph: str, where: RunFilter, limit: int) -> str:
    """SELECT ``?s ?start`` of runs, newest first, at most ``limit``."""
    among = [] if where.among is None else [f"VALUES ?s {{ {' '.join(where.among)} }}"]
    run = "?s oprov:runStartedAt ?start ."
    body = "\n  ".join([*among, run, *_filter_patterns(where)])
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  {body}
}} }}
ORDER BY DESC(?start) ?s
LIMIT {int(limit)}"""


def run_starts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?start``: every start mark of each of ``runs`` (IRIs)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?start WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(runs)} }}
  ?s oprov:runStartedAt ?start .
}} }}"""


def run_details_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT what a listing row shows of each run, one row per combination of values
    (a run exported twice has two statuses)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?trace ?status ?agent ?service ?question ?failed ?end WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(runs)} }}
  ?s oprov:traceId ?trace ; oprov:status ?status .
  {shown_agent("?s", "?agent")}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?question }}
  OPTIONAL {{ ?s oprov:failedCalls ?failed }}
  OPTIONAL {{ ?s oprov:serviceName ?service }}
  OPTIONAL {{ ?s prov:endedAtTime ?end }}
}} }} ORDER BY ?s ?status ?agent ?service ?question"""


def run_counts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?kind ?n``: iterations and tool calls of each run, at any depth, but
    one another process recorded under it (``oprov:remoteParent``: an MCP server's half
    of a call the run made; a path test for what lies below it Virtuoso gets wrong).

    A query of its own: in the listing itself, Virtuoso (7.2) miscounts a transitive
    ``OPTIONAL`` beside the transitive outermost filter.
    """
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?kind (COUNT(DISTINCT ?x) AS ?n) WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(runs)} }}
  ?x oprov:partOf+ ?s ; a ?kind .
  FILTER(?kind IN (oprov:Iteration, oprov:ToolCall))
  FILTER NOT EXISTS {{ ?x oprov:remoteParent true }}
}} }} GROUP BY ?s ?kind ORDER BY ?s ?kind"""


def find_query(graph: str, ident: str) -> str:
    """SELECT ``?s``: runs matching a session IRI, a trace id or a conversation id,
    oldest first."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  {named_sessions("?s", ident, "a oprov:AgentSession ; prov:startedAtTime ?start .")}
  {outermost("?s")}
}} }} ORDER BY ?start ?s"""


def list_runs(
    backend: QueryBackend,
    graph: str,
    where: RunFilter,
    limit: int,
    *,
    search: tuple[TextIndex, str, tuple[str, str] | None] | None = None,
) -> list[SessionSummary]:
    """Runs, newest first, at most ``limit``: paged by the store, then described.

    ``search`` (an index, the text as typed and the cursor's start and IRI) finds the
    runs whose question or answer holds the text from the index instead of a scan of
    the store; ``where.text`` is then not read.
    """
    if search is not None:
        page = _searched_page(backend, graph, where, limit, *search)
    elif _by_run(where) != RunFilter():
        page = _filtered_page(backend, graph, where, limit)
    else:
        page = _runs_page(backend, graph, where, limit)
    runs = [row["s"] or "" for row in page]
    if not runs:
        return []
    starts = {row["s"] or "": row["start"] or "" for row in page}
    details: dict[str, list[Mapping[str, str | None]]] = {}
    for row in backend.query(run_details_query(graph, runs)).rows:
        details.setdefault(row["s"] or "", []).append(row)
    counts = {
        (row["s"] or "", (row["kind"] or "").removeprefix(OPROV)): int(row["n"] or 0)
        for row in backend.query(run_counts_query(graph, runs)).rows
    }
    usage = usage_totals(backend, graph, runs)
    evaluations = evaluations_of(backend, graph, runs)
    return [
        replace(
            _summary(run, starts[run], details.get(run, []), counts),
            usage=usage[run],
            evaluations=evaluations[run],
        )
        for run in runs
    ]


_CANDIDATES = 500
"""Runs the text index found whose other filters one query checks."""


def _searched_page(
    backend: QueryBackend,
    graph: str,
    where: RunFilter,
    limit: int,
    index: TextIndex,
    text: str,
    after: tuple[str, str] | None,
) -> list[dict[str, str | None]]:
    """The page of runs holding ``text`` (see :mod:`~otel_prov.read._text_index`), newest
    first: straight from the index, or, with other filters, the index's runs a few
    hundred at a time through the store's page query until the page is full."""
    index.refresh(backend, graph)
    found = index.matches(text, after)
    rest = replace(where, text=None, after=None)
    if rest == RunFilter():
        return [{"s": run, "start": start} for run, start in itertools.islice(found, limit)]
    page: list[dict[str, str | None]] = []
    for batch in chunks(found, _CANDIDATES):
        among = tuple(f"<{run}>" for run, _ in batch)
        page += _runs_page(backend, graph, replace(rest, among=among), limit - len(page))
        if len(page) >= limit:
            break
    return page


def _by_run(where: RunFilter) -> RunFilter:
    """The filters a run's start alone does not decide (agent, service, status, text,
    approvals)."""
    return replace(where, since=None, until=None, after=None, among=None)


_MOST_BATCHED = 4 * _CANDIDATES
"""The largest batch of runs checked on its own; past it (a filter that keeps few runs)
the page is the one query over every run, so that a page of rare runs costs little more
than that query did alone."""


def _filtered_page(
    backend: QueryBackend, graph: str, where: RunFilter, limit: int
) -> list[dict[str, str | None]]:
    """The page of runs ``where`` keeps, newest first, from the newest runs a batch at a
    time (a batch twice the size of the one before): the store sorts the marks, cheap
    even over 100,000 runs, and checks the other filters on one batch's runs only.
    Checked on every run, an agent's label is looked up through a union for each one
    before the sort (5 s for the newest page of one agent over 100,000 runs)."""
    by_start = replace(
        where, agent=None, service=None, status=None, text=None, approved_by=None, rejected=False
    )
    by_run = _by_run(where)
    page: list[dict[str, str | None]] = []
    size = _CANDIDATES
    while len(page) < limit:
        if size > _MOST_BATCHED:  # few runs match: the page is one query over all
            return _runs_page(backend, graph, where, limit)
        batch = _runs_page(backend, graph, by_start, size)
        if not batch:
            break
        among = tuple(f"<{row['s']}>" for row in batch)
        page += _runs_page(backend, graph, replace(by_run, among=among), limit - len(page))
        if len(batch) < size:
            break
        last = batch[-1]
        start = datetime_literal(last["start"] or "")
        by_start = replace(by_start, after=(start, f"<{last['s']}>"))
        size *= 2
    return page


def _runs_page(
    backend: QueryBackend, graph: str, where: RunFilter, limit: int
) -> list[dict[str, str | None]]:
    """At most ``limit`` runs ``where`` keeps (``?s ?start``), newest first, each once at
    its first start: a row of a run's later start is dropped, and the page is filled
    from the rows after the last one read."""
    page: list[dict[str, str | None]] = []
    after = where.after
    while len(page) < limit:
        wanted = limit - len(page)
        rows = backend.query(run_page_query(graph, replace(where, after=after), wanted)).rows
        page += _at_first_start(backend, graph, rows)
        if len(rows) < wanted:
            break
        last = rows[-1]
        after = (datetime_literal(last["start"] or ""), f"<{last['s']}>")
    return page


def _at_first_start(
    backend: QueryBackend, graph: str, rows: Sequence[dict[str, str | None]]
) -> list[dict[str, str | None]]:
    """The rows (``?s ?start``) that hold their run's first start.

    A run has one ``oprov:runStartedAt``, but a run recorded from a stand-in (``receive
    --stream``, its steps before its own span) has kept the stand-in's too, a later
    one.  Listed at each, it filled two rows of a page, the page came out short and said
    no more followed: every older run was out of reach.  Where a run began is its first
    start, so it is listed there, and since "newest first" puts its later starts before
    it, none of them comes after a page that showed it.  One query, anchored on the
    rows' runs.
    """
    runs = list(dict.fromkeys(row["s"] or "" for row in rows))
    if not runs:
        return []
    first = {
        run: instant_order(start)
        for run, start in first_starts(backend.query(run_starts_query(graph, runs)).rows).items()
    }
    kept: list[dict[str, str | None]] = []
    for row in rows:
        run = row["s"] or ""
        if run in first and first[run] == instant_order(row["start"] or ""):
            del first[run]  # one row for a run, whatever its marks print alike
            kept.append(row)
    return kept


def _summary(
    run: str,
    start: str,
    rows: Sequence[Mapping[str, str | None]],
    counts: Mapping[tuple[str, str], int],
) -> SessionSummary:
    def first(name: str) -> str | None:
        return min((v for row in rows if (v := row[name]) is not None), default=None)

    return SessionSummary(
        id=run,
        start=start,
        agent=first("agent"),
        service=first("service"),
        question=first("question"),
        iterations=counts.get((run, "Iteration"), 0),
        tool_calls=counts.get((run, "ToolCall"), 0),
        status=settled_status(row["status"] for row in rows),
        trace_id=first("trace") or "",
        failed_calls=max((int(row["failed"] or 0) for row in rows), default=0),
        end=first("end"),
    )


def find_sessions(backend: QueryBackend, graph: str, ident: str) -> list[str]:
    """Runs matching a session IRI, a trace id or a conversation id, oldest first (by
    first start: a run with two is named once)."""
    rows = backend.query(find_query(graph, ident)).rows
    return list(dict.fromkeys(row["s"] or "" for row in rows))
