"""The SPARQL text of every read: listing runs, showing one, checking and importing.

One module holds it so that a pattern (what a session's members are, what makes a run)
has one definition that every reader shares.  Queries are built only from IRIs checked
by :func:`~otel_prov.prov._rdf.iri`, literals escaped by
:func:`~otel_prov.prov._rdf.literal` and the fixed vocabulary, and they name the
provenance graph (``graph``, an IRI term) explicitly, so they mean the same on every
store.  The functions return text; running it and putting rows together is the read
side's job (``otel_prov.read``).

Runs (outermost sessions) are found two ways.  Sessions sealed by this version carry
``oprov:runStartedAt``: one property, so "newest first" is a scan of it and a sort.
Stores written before it only tell a run by a path query over every session
(:func:`_outermost`); :func:`run_page_query` takes that way when asked to.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from otel_prov.prov._rdf import SPARQL_PREFIXES, InvalidIRIError, iri, literal

__all__ = [
    "STATUSES",
    "RunFilter",
    "activities_query",
    "bundle_hashes_query",
    "content_links_query",
    "content_query",
    "find_query",
    "properties_query",
    "run_counts_query",
    "run_details_query",
    "run_page_query",
    "session_construct_query",
    "session_head_query",
    "session_members",
    "stored_content_query",
    "stored_sessions_query",
    "sub_sessions_query",
    "unmarked_runs_query",
    "verify_rows_query",
]


def _outermost(variable: str) -> str:
    """Keeps ``variable`` when no session encloses it: a run, told by a path query."""
    return f"FILTER NOT EXISTS {{ {variable} oprov:partOf+ ?outer . ?outer a oprov:AgentSession }}"


_STATUS_PATTERNS = {
    "error": '?s oprov:status "error" .',
    "ok": '?s oprov:status "ok" . FILTER NOT EXISTS { ?s oprov:status "error" }',
    "incomplete": '?s oprov:status "incomplete" .\n'
    '  FILTER NOT EXISTS { ?s oprov:status ?settled . FILTER(?settled != "incomplete") }',
}
"""A session exported ``incomplete`` and again when it ended holds both statuses; these
keep the settled one (``error`` over ``ok`` over ``incomplete``), as the listing shows it."""

STATUSES = tuple(sorted(_STATUS_PATTERNS))


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


def _filter_patterns(where: RunFilter) -> list[str]:
    patterns = []
    if where.agent is not None:
        patterns.append(
            f"?s prov:wasAssociatedWith ?byAgent . ?byAgent a oprov:AIAgent ; "
            f"rdfs:label {where.agent} ."
        )
    if where.service is not None:
        patterns.append(f"?s oprov:serviceName {where.service} .")
    if where.status is not None:
        patterns.append(_STATUS_PATTERNS[where.status])
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
    if where.after is not None:
        start, run = where.after
        patterns.append(f"FILTER(?start < {start} || (?start = {start} && STR(?s) > STR({run})))")
    return patterns


def run_page_query(graph: str, where: RunFilter, limit: int, *, marked: bool = True) -> str:
    """SELECT ``?s ?start`` of runs, newest first, at most ``limit``.

    ``marked``: read ``oprov:runStartedAt`` (fast); otherwise every session's start and
    the path test of :func:`_outermost` (stores with runs written before the mark).
    """
    run = (
        "?s oprov:runStartedAt ?start ."
        if marked
        else f"?s a oprov:AgentSession ; prov:startedAtTime ?start .\n  {_outermost('?s')}"
    )
    body = "\n  ".join([run, *_filter_patterns(where)])
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  {body}
}} }}
ORDER BY DESC(?start) ?s
LIMIT {int(limit)}"""


def unmarked_runs_query(graph: str) -> str:
    """SELECT how many sessions were sealed (``?sealed``) and how many runs are marked
    (``?marked``): fewer marked means some runs predate the mark.  Both are scans of
    one property each, cheap beside the path query they spare."""
    return f"""{SPARQL_PREFIXES}
SELECT ?sealed ?marked WHERE {{
  {{ SELECT (COUNT(DISTINCT ?session) AS ?sealed) WHERE {{ GRAPH {graph} {{
    ?bundle oprov:bundleOf ?session }} }} }}
  {{ SELECT (COUNT(DISTINCT ?run) AS ?marked) WHERE {{ GRAPH {graph} {{
    ?run oprov:runStartedAt ?start }} }} }}
}}"""


def _values(runs: Sequence[str]) -> str:
    return " ".join(iri(run) for run in runs)


def run_details_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT what a listing row shows of each run, one row per combination of values
    (a run exported twice has two statuses)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?trace ?status ?agent ?question ?failed WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(runs)} }}
  ?s oprov:traceId ?trace ; oprov:status ?status .
  OPTIONAL {{ ?s prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agent }}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?question }}
  OPTIONAL {{ ?s oprov:failedCalls ?failed }}
}} }} ORDER BY ?s ?status ?agent ?question"""


def run_counts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?kind ?n``: iterations and tool calls of each run, at any depth.

    A query of its own: in the listing itself, Virtuoso (7.2) miscounts a transitive
    ``OPTIONAL`` beside the transitive outermost filter.
    """
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?kind (COUNT(DISTINCT ?x) AS ?n) WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(runs)} }}
  ?x oprov:partOf+ ?s ; a ?kind .
  FILTER(?kind IN (oprov:Iteration, oprov:ToolCall))
}} }} GROUP BY ?s ?kind ORDER BY ?s ?kind"""


def find_query(graph: str, ident: str) -> str:
    """SELECT ``?s``: runs matching a session IRI, a trace id or a conversation id,
    oldest first."""
    branches = [
        f"{{ ?s oprov:traceId {literal(ident)} }}",
        f"{{ ?s oprov:sessionId {literal(ident)} }}",
    ]
    with contextlib.suppress(InvalidIRIError):
        branches.append(f"{{ BIND({iri(ident)} AS ?s) }}")
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  ?s a oprov:AgentSession ; prov:startedAtTime ?start .
  {" UNION ".join(branches)}
  {_outermost("?s")}
}} }} ORDER BY ?start ?s"""


def _head_pattern(subject: str) -> str:
    """What heads a session in ``show``; ``subject`` is the session's IRI or a variable."""
    return f"""{subject} oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status ;
      prov:startedAtTime ?start .
  OPTIONAL {{ {subject} prov:endedAtTime ?end }}
  OPTIONAL {{ {subject} oprov:sessionId ?conversation }}
  OPTIONAL {{ {subject} prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agent }}
  OPTIONAL {{ {subject} prov:used ?qe . ?qe a oprov:Question }}
  OPTIONAL {{ ?ae prov:wasGeneratedBy {subject} ; a oprov:Answer }}
  OPTIONAL {{ {subject} oprov:failedCalls ?failed }}"""


def session_head_query(graph: str, session: str) -> str:
    return f"""{SPARQL_PREFIXES}
SELECT ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed
WHERE {{ GRAPH {graph} {{
  {_head_pattern(iri(session))}
}} }} ORDER BY ?status LIMIT 16"""


def sub_sessions_query(graph: str, session: str) -> str:
    """The head of every session nested in ``session``, by ``?sub``."""
    return f"""{SPARQL_PREFIXES}
SELECT ?sub ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed
WHERE {{ GRAPH {graph} {{
  ?sub oprov:partOf+ {iri(session)} ; a oprov:AgentSession .
  {_head_pattern("?sub")}
}} }} ORDER BY ?sub ?agent ?qe ?ae ?end ?conversation"""


def content_query(graph: str, session: str) -> str:
    """SELECT ``?e ?p ?o``: how each content entity of the session was recorded."""
    return f"""{SPARQL_PREFIXES}
SELECT ?e ?p ?o WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf* {iri(session)} .
  {{ ?e prov:wasGeneratedBy ?a }} UNION {{ ?a prov:used ?e }}
  ?e ?p ?o .
  FILTER(?p IN (prov:value, oprov:contentHash, oprov:byteSize, oprov:contentLocation,
                oprov:truncated))
}} }} ORDER BY ?e ?p ?o"""


def activities_query(graph: str, session: str) -> str:
    """SELECT ``?a ?type ?parent ?start ?end ?status`` of every activity in the session,
    in run order.  Every kind is read: those between (``oprov:Span``, ``Retrieval``) link
    a call to the iteration or session above it."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?type ?parent ?start ?end ?status WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {iri(session)} .
  ?a oprov:partOf ?parent ; a ?type ; prov:startedAtTime ?start ; oprov:status ?status .
  OPTIONAL {{ ?a prov:endedAtTime ?end }}
  FILTER(?type IN (oprov:Iteration, oprov:ToolCall, oprov:ModelCall, oprov:AgentSession,
                   oprov:Retrieval, oprov:Span))
}} }} ORDER BY ?start ?a"""


def properties_query(graph: str, session: str, names: Sequence[str]) -> str:
    """SELECT ``?a ?p ?o``: the ``oprov`` properties ``names`` of the session's activities."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?p ?o WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {iri(session)} . ?a ?p ?o .
  FILTER(?p IN ({", ".join(f"oprov:{name}" for name in names)}))
}} }} ORDER BY ?a ?p ?o"""


def content_links_query(graph: str, session: str) -> str:
    """SELECT ``?a ?link ?kind ?e``: thoughts, arguments and observations each activity
    of the session generated or used."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?link ?kind ?e WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {iri(session)} .
  {{ ?e prov:wasGeneratedBy ?a . BIND("generated" AS ?link) }}
  UNION {{ ?a prov:used ?e . BIND("used" AS ?link) }}
  ?e a ?kind .
  FILTER(?kind IN (oprov:Thought, oprov:Arguments, oprov:Observation))
}} }} ORDER BY ?a ?link ?kind ?e"""


def session_members(s: str, *, agents: bool = False) -> str:
    """A graph pattern binding ``?x`` to each subject of session ``s`` (an IRI term): the
    session, its activities, the entities they generated or used and the qualified
    starts of its sub-sessions, as ``_bundle.session_content`` defines a session's
    content; ``agents`` adds the agents they were associated with."""
    links = ["?x prov:wasGeneratedBy ?act", "?act prov:used ?x"]
    links += ["?act prov:wasAssociatedWith ?x"] if agents else []
    links += ["?act prov:qualifiedStart ?x"]
    branches = [f"{{ BIND({s} AS ?x) }}", f"{{ ?x oprov:partOf+ {s} }}"]
    branches += [f"{{ ?act oprov:partOf* {s} . {link} }}" for link in links]
    return "\n  UNION ".join(branches)


def session_construct_query(graph: str, session: str) -> str:
    """CONSTRUCT every triple about the session, its activities, entities and agents."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  {session_members(iri(session), agents=True)}
  ?x ?p ?o .
}} }}"""


def stored_content_query(graph: str, session: str, bundle: str) -> str:
    """CONSTRUCT the session's content as its bundle hashed it (the bundle left out)."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  {session_members(iri(session))}
  ?x ?p ?o .
  FILTER(?x != {iri(bundle)})
}} }}"""


def verify_rows_query(graph: str, *, marked: bool = True) -> str:
    """SELECT each run with its newest bundle, what that one revised and its chain link.

    ``marked``: runs are those with ``oprov:runStartedAt``; otherwise told by the path
    test (see :func:`run_page_query`).
    """
    run = (
        "?session oprov:runStartedAt ?start ."
        if marked
        else f"?session a oprov:AgentSession .\n  {_outermost('?session')}"
    )
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?session ?bundle ?hash ?manifest ?revised ?revisedManifest ?previous
  ?previousHash ?revisionPrevious ?revisionPreviousHash
WHERE {{ GRAPH {graph} {{
  {run}
  OPTIONAL {{
    ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; oprov:manifest ?manifest .
    FILTER NOT EXISTS {{ ?newer prov:wasRevisionOf ?bundle }}
    OPTIONAL {{
      ?bundle prov:wasRevisionOf ?revised .
      OPTIONAL {{ ?revised oprov:manifest ?revisedManifest }}
    }}
  }}
  OPTIONAL {{
    ?first oprov:bundleOf ?session ; oprov:previousBundle ?previous ;
           oprov:previousHash ?previousHash .
    FILTER NOT EXISTS {{ ?first prov:wasRevisionOf ?earlier }}
  }}
  OPTIONAL {{
    ?bundle prov:wasRevisionOf ?revisedToo ; oprov:previousBundle ?revisionPrevious ;
            oprov:previousHash ?revisionPreviousHash .
  }}
}} }} ORDER BY ?session"""


def bundle_hashes_query(graph: str) -> str:
    """SELECT ``?b ?h``: every bundle stored, with its content hash."""
    return f"""{SPARQL_PREFIXES}
SELECT ?b ?h WHERE {{ GRAPH {graph} {{
  ?b oprov:bundleOf ?s ; oprov:contentHash ?h .
}} }} ORDER BY ?b"""


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
