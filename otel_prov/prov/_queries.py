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

``why`` reads a derivation graph with property paths (:func:`why_query`): a fixed number
of queries whatever the size of the run, on every store.

Every query about one run is anchored on it: on the literal or IRI it was named by, or
on IRIs an earlier query found, written in as constants or ``VALUES``.  Oxigraph plans
a join by itself, and one pattern left free (a type, a status, an ``OPTIONAL`` beside a
union) makes it read that pattern over the whole store first: over 100,000 stored runs
that took seconds where the anchored query takes milliseconds.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from otel_prov.prov._rdf import SPARQL_PREFIXES, InvalidIRIError, iri, literal

__all__ = [
    "STATUSES",
    "TOKEN_PROPERTIES",
    "WHY_PROPERTIES",
    "WHY_RELATIONS",
    "RunFilter",
    "activities_query",
    "annotation_rows_query",
    "answers_query",
    "bundle_hashes_query",
    "content_links_query",
    "content_query",
    "earlier_turns_query",
    "evaluated_query",
    "evaluations_query",
    "find_query",
    "marks_count_query",
    "model_calls_query",
    "plans_query",
    "postconditions_query",
    "properties_query",
    "run_counts_query",
    "run_details_query",
    "run_marks_count_query",
    "run_marks_query",
    "run_page_query",
    "run_texts_query",
    "session_construct_query",
    "session_head_query",
    "session_members",
    "session_members_query",
    "stored_content_query",
    "stored_sessions_query",
    "sub_sessions_query",
    "subject_triples_query",
    "unmarked_runs_query",
    "usage_totals_query",
    "verify_rows_query",
    "why_attempts_query",
    "why_node_query",
    "why_properties_query",
    "why_query",
    "why_starts_query",
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
    among: tuple[str, ...] | None = None
    """IRI terms of the only runs to consider (those a text index found)."""


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


def _shown_agent(subject: str, label: str) -> str:
    """Patterns binding ``label`` as :func:`_agent_label` does, for a row that shows it:
    two ``OPTIONAL`` s and a ``COALESCE`` (the sealed label first).  Virtuoso (7.2)
    estimates the union with its ``FILTER NOT EXISTS`` inside an ``OPTIONAL`` at minutes
    for some data and refuses the query ("estimated execution time ... exceeds the
    limit"): the run listing failed so, now and then, once an MCP server's calls shared
    the run's trace."""
    return (
        f"OPTIONAL {{ {subject} oprov:agentLabel ?sealedAgent }}\n"
        f"  OPTIONAL {{ {subject} prov:wasAssociatedWith ?labelled . "
        f"?labelled a oprov:AIAgent ; rdfs:label ?sharedAgent }}\n"
        f"  BIND(COALESCE(?sealedAgent, ?sharedAgent) AS {label})"
    )


def _filter_patterns(where: RunFilter) -> list[str]:
    patterns = []
    if where.agent is not None:
        patterns.append(_agent_label("?s", where.agent))
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
    among = [] if where.among is None else [f"VALUES ?s {{ {' '.join(where.among)} }}"]
    body = "\n  ".join([*among, run, *_filter_patterns(where)])
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
    ?bundle oprov:bundleOf ?session FILTER NOT EXISTS {{ ?session a oprov:Annotation }} }} }} }}
  {{ SELECT (COUNT(DISTINCT ?run) AS ?marked) WHERE {{ GRAPH {graph} {{
    ?run oprov:runStartedAt ?start }} }} }}
}}"""


def marks_count_query(graph: str) -> str:
    """SELECT ``?bundles ?revisions ?annotations ?marked``: how many bundles are stored,
    how many of a run revise another, how many seal annotations, and how many runs are
    marked.  Plain counts, each a scan of one property (40 ms over 100,000 runs): when
    the bundles that are neither revisions nor annotations are no more than the marked
    runs, no run predates the mark, and :func:`unmarked_runs_query` (which counts
    distinct sessions, 1.6 s there) is not needed."""
    return f"""{SPARQL_PREFIXES}
SELECT ?bundles ?revisions ?annotations ?marked WHERE {{
  {{ SELECT (COUNT(*) AS ?bundles) WHERE {{ GRAPH {graph} {{ ?b oprov:bundleOf ?s }} }} }}
  {{ SELECT (COUNT(*) AS ?revisions) WHERE {{ GRAPH {graph} {{
    ?b prov:wasRevisionOf ?old ; oprov:bundleOf ?s
    FILTER NOT EXISTS {{ ?s a oprov:Annotation }} }} }} }}
  {{ SELECT (COUNT(*) AS ?annotations) WHERE {{ GRAPH {graph} {{
    ?s a oprov:Annotation . ?b oprov:bundleOf ?s }} }} }}
  {{ SELECT (COUNT(*) AS ?marked) WHERE {{ GRAPH {graph} {{ ?run oprov:runStartedAt ?t }} }} }}
}}"""


def run_marks_query(graph: str) -> str:
    """SELECT ``?s ?start``: every marked run (one property, no order: the text index
    keeps its own)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?start WHERE {{ GRAPH {graph} {{ ?s oprov:runStartedAt ?start }} }}"""


def run_marks_count_query(graph: str) -> str:
    """SELECT ``?marked``: how many runs are marked (a count, 60 ms over 100,000 runs,
    where reading them all takes seconds)."""
    return f"""{SPARQL_PREFIXES}
SELECT (COUNT(*) AS ?marked) WHERE {{ GRAPH {graph} {{ ?s oprov:runStartedAt ?start }} }}"""


def run_texts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?said``: the question and the answer of each of ``runs`` (IRIs), the
    text the listing's search looks in; each branch starts from the runs written in."""
    values = f"VALUES ?s {{ {_values(runs)} }}"
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?said WHERE {{ GRAPH {graph} {{
  {{ {values} ?s prov:used ?found . ?found a oprov:Question ; prov:value ?said }}
  UNION {{ {values} ?found prov:wasGeneratedBy ?s ; a oprov:Answer ; prov:value ?said }}
}} }}"""


def _values(runs: Sequence[str]) -> str:
    return " ".join(iri(run) for run in runs)


def run_details_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT what a listing row shows of each run, one row per combination of values
    (a run exported twice has two statuses)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?trace ?status ?agent ?question ?failed WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(runs)} }}
  ?s oprov:traceId ?trace ; oprov:status ?status .
  {_shown_agent("?s", "?agent")}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?question }}
  OPTIONAL {{ ?s oprov:failedCalls ?failed }}
}} }} ORDER BY ?s ?status ?agent ?question"""


def run_counts_query(graph: str, runs: Sequence[str]) -> str:
    """SELECT ``?s ?kind ?n``: iterations and tool calls of each run, at any depth, but
    one another process recorded under it (``oprov:remoteParent``: an MCP server's half
    of a call the run made; a path test for what lies below it Virtuoso gets wrong).

    A query of its own: in the listing itself, Virtuoso (7.2) miscounts a transitive
    ``OPTIONAL`` beside the transitive outermost filter.
    """
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?kind (COUNT(DISTINCT ?x) AS ?n) WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(runs)} }}
  ?x oprov:partOf+ ?s ; a ?kind .
  FILTER(?kind IN (oprov:Iteration, oprov:ToolCall))
  FILTER NOT EXISTS {{ ?x oprov:remoteParent true }}
}} }} GROUP BY ?s ?kind ORDER BY ?s ?kind"""


TOKEN_PROPERTIES = {
    "input": "inputTokens",
    "output": "outputTokens",
    "cache_read": "cacheReadTokens",
    "cache_write": "cacheWriteTokens",
    "reasoning": "reasoningTokens",
}
"""Token kind (as the read API and ``sessions --format json`` name it) -> its property."""


def model_calls_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?call``: the model calls below each session at any depth (sub-agent
    sessions included, as the listing's counts are), found from the sessions' IRIs."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?call WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(sessions)} }}
  ?call oprov:partOf+ ?s ; a oprov:ModelCall .
}} }} ORDER BY ?s ?call"""


def usage_totals_query(graph: str, calls: Sequence[tuple[str, str]]) -> str:
    """SELECT ``?s ?p ?currency ?total``: each session's tokens of each kind and its cost
    in each currency, summed over its model ``calls`` ((session, call) IRI pairs, as
    :func:`model_calls_query` finds them).  Costs in different currencies come as
    separate rows: they are never added (``?currency`` is ``""`` where none was said).

    The calls come written in: summed beside the transitive path itself, Virtuoso (7.2)
    counts one call and one kind only, and joined to it as a subquery, Oxigraph reads
    the usage of every call in the store (8 s over 100,000 runs).
    """
    kinds = ", ".join(f"oprov:{name}" for name in [*TOKEN_PROPERTIES.values(), "costAmount"])
    pairs = " ".join(f"({iri(session)} {iri(call)})" for session, call in calls)
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?p ?currency (SUM(?n) AS ?total) WHERE {{ GRAPH {graph} {{
  VALUES (?s ?call) {{ {pairs} }}
  ?call ?p ?n . FILTER(?p IN ({kinds}))
  OPTIONAL {{ ?call oprov:costCurrency ?c . FILTER(?p = oprov:costAmount) }}
  BIND(COALESCE(?c, "") AS ?currency)
}} }} GROUP BY ?s ?p ?currency ORDER BY ?s ?p ?currency"""


def evaluated_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?e``: each evaluation of each of ``sessions`` (IRIs) or of an activity
    in it, found from the sessions' IRIs.  Apart from :func:`evaluations_query`: beside
    its ``OPTIONAL`` parts, Oxigraph read every generation of the store (1 s for a page
    of 50 runs over 100,000), where this finds the usual none in milliseconds."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?e WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(sessions)} }}
  ?a oprov:partOf* ?s .
  ?e oprov:evaluates ?a .
}} }} ORDER BY ?s ?e"""


def evaluations_query(graph: str, evaluations: Sequence[tuple[str, str]]) -> str:
    """SELECT each of ``evaluations`` ((session, evaluation) IRI pairs, as
    :func:`evaluated_query` finds them) with what it judged (``?a``), its evaluator's
    name and, for one added after the run, the annotation that made it."""
    pairs = " ".join(f"({iri(session)} {iri(e)})" for session, e in evaluations)
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?e ?a ?name ?score ?label ?explanation ?evaluator ?annotation ?at
WHERE {{ GRAPH {graph} {{
  VALUES (?s ?e) {{ {pairs} }}
  ?e oprov:evaluates ?a ; oprov:evaluationName ?name .
  OPTIONAL {{ ?e oprov:score ?score }}
  OPTIONAL {{ ?e oprov:scoreLabel ?label }}
  OPTIONAL {{ ?e oprov:explanation ?explanation }}
  OPTIONAL {{ ?e prov:wasAttributedTo ?by . ?by rdfs:label ?evaluator }}
  OPTIONAL {{ ?e prov:wasGeneratedBy ?annotation }}
  OPTIONAL {{ ?e prov:generatedAtTime ?at }}
}} }} ORDER BY ?s ?at ?e"""


def plans_query(graph: str, session: str) -> str:
    """SELECT each step of each plan made in the run (sub-sessions included), in the
    order the plans were made and their steps numbered, with what became of it."""
    return f"""{SPARQL_PREFIXES}
SELECT ?plan ?name ?made ?step ?n ?label ?outcome WHERE {{ GRAPH {graph} {{
  ?plan a prov:Plan ; prov:wasGeneratedBy ?act .
  ?act oprov:partOf* {iri(session)} .
  ?step p-plan:isStepOfPlan ?plan ; oprov:stepNumber ?n .
  OPTIONAL {{ ?plan rdfs:label ?name }}
  OPTIONAL {{ ?plan prov:generatedAtTime ?made }}
  OPTIONAL {{ ?step rdfs:label ?label }}
  OPTIONAL {{ ?step oprov:stepOutcome ?outcome }}
}} }} ORDER BY ?made ?plan ?n"""


def postconditions_query(graph: str, session: str) -> str:
    """SELECT each postcondition checked in the run, oldest first, with the plan step
    it was checked for (unbound: checked outside any plan)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?post ?name ?ok ?detail ?step ?at WHERE {{ GRAPH {graph} {{
  ?post a oprov:Postcondition ; prov:wasGeneratedBy ?act ; rdfs:label ?name ;
        oprov:satisfied ?ok .
  ?act oprov:partOf* {iri(session)} .
  OPTIONAL {{ ?post oprov:detail ?detail }}
  OPTIONAL {{ ?post oprov:planStep ?step }}
  OPTIONAL {{ ?post prov:generatedAtTime ?at }}
}} }} ORDER BY ?at ?post"""


def _named_sessions(variable: str, ident: str, pattern: str) -> str:
    """A union binding ``variable`` to the sessions ``ident`` names (a session IRI, a
    trace id or a conversation id), each matching ``pattern`` (its other properties).

    ``pattern`` is repeated inside each branch, beside the literal or IRI that anchors
    it: joined to the union from outside, Oxigraph reads the pattern for every session of
    the store first (2.5 s over 100,000 runs, where each branch alone takes milliseconds).
    """
    branches = [
        f"{{ {variable} oprov:traceId {literal(ident)} ; {pattern} }}",
        f"{{ {variable} oprov:sessionId {literal(ident)} ; {pattern} }}",
    ]
    with contextlib.suppress(InvalidIRIError):
        branches.append(f"{{ VALUES {variable} {{ {iri(ident)} }} {variable} {pattern} }}")
    return "\n  UNION ".join(branches)


def find_query(graph: str, ident: str) -> str:
    """SELECT ``?s``: runs matching a session IRI, a trace id or a conversation id,
    oldest first."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  {_named_sessions("?s", ident, "a oprov:AgentSession ; prov:startedAtTime ?start .")}
  {_outermost("?s")}
}} }} ORDER BY ?start ?s"""


def _head_pattern(subject: str) -> str:
    """What heads a session in ``show``; ``subject`` is the session's IRI or a variable."""
    return f"""{subject} oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status ;
      prov:startedAtTime ?start .
  OPTIONAL {{ {subject} prov:endedAtTime ?end }}
  OPTIONAL {{ {subject} oprov:sessionId ?conversation }}
  {_shown_agent(subject, "?agent")}
  OPTIONAL {{ {subject} prov:used ?qe . ?qe a oprov:Question }}
  OPTIONAL {{ ?ae prov:wasGeneratedBy {subject} ; a oprov:Answer }}
  OPTIONAL {{ {subject} oprov:failedCalls ?failed }}
  OPTIONAL {{ {subject} oprov:errorType ?errorType }}
  OPTIONAL {{ {subject} oprov:errorMessage ?errorMessage }}"""


def session_head_query(graph: str, session: str) -> str:
    return f"""{SPARQL_PREFIXES}
SELECT ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed ?errorType
  ?errorMessage
WHERE {{ GRAPH {graph} {{
  {_head_pattern(iri(session))}
}} }} ORDER BY ?status LIMIT 16"""


def sub_sessions_query(graph: str, session: str) -> str:
    """The head of every session nested in ``session``, by ``?sub``."""
    return f"""{SPARQL_PREFIXES}
SELECT ?sub ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed ?errorType
  ?errorMessage
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
    session, its activities, the entities they generated or used, the qualified starts
    of its sub-sessions, the associations and steps of its plans and the evaluations made
    in the run, as
    ``_bundle.session_content`` defines a session's content; ``agents`` adds the agents
    they were associated with and the evaluators."""
    links = ["?x prov:wasGeneratedBy ?act", "?act prov:used ?x"]
    links += (
        ["?act prov:wasAssociatedWith ?x", "?e oprov:evaluates ?act ; prov:wasAttributedTo ?x"]
        if agents
        else []
    )
    links += [
        "?act prov:qualifiedStart ?x",
        "?act prov:qualifiedAssociation ?x",
        "?plan prov:wasGeneratedBy ?act . ?x p-plan:isStepOfPlan ?plan",
        "?x oprov:evaluates ?act . FILTER NOT EXISTS { ?x prov:wasGeneratedBy ?by }",
    ]
    branches = [f"{{ BIND({s} AS ?x) }}", f"{{ ?x oprov:partOf+ {s} }}"]
    branches += [f"{{ ?act oprov:partOf* {s} . {link} }}" for link in links]
    return "\n  UNION ".join(branches)


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


def stored_content_query(graph: str, session: str, bundle: str) -> str:
    """CONSTRUCT the session's content as its bundle hashed it (the bundle left out).

    One query, for members that :func:`subject_triples_query` cannot name (a blank
    node); otherwise :func:`session_members_query` and that one are faster: the
    embedded store joins this subquery with ``?x ?p ?o`` over the whole graph (1.7 s
    over 10,000 runs, where the two anchored queries take milliseconds)."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{
  {{ SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{
    {session_members(iri(session))}
  }} }} }}
  GRAPH {graph} {{ ?x ?p ?o . FILTER(?x != {iri(bundle)}) }}
}}"""


def session_members_query(graph: str, session: str, *, agents: bool = False) -> str:
    """SELECT ``?x``: each subject of the session's content (:func:`session_members`),
    with its agents when ``agents``."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{
  {session_members(iri(session), agents=agents)}
}} }}"""


def subject_triples_query(graph: str, subjects: Sequence[str]) -> str:
    """CONSTRUCT every triple of these subjects (IRIs)."""
    return f"""{SPARQL_PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  VALUES ?x {{ {_values(subjects)} }}
  ?x ?p ?o .
}} }}"""


def verify_rows_query(
    graph: str,
    *,
    marked: bool = True,
    sessions: Sequence[str] | None = None,
    ordered: bool = True,
) -> str:
    """SELECT each run with its newest bundle, what that one revised and its chain link.

    ``marked``: runs are those with ``oprov:runStartedAt``; otherwise told by the path
    test (see :func:`run_page_query`).  ``sessions``: only these runs (checking one run
    of 10,000 should not read the bundles of all of them).  ``ordered``: sorted by run,
    which an endpoint read in pages needs for a stable order; the embedded store sorts
    by decoding every IRI again and again (a second and a half over 10,000 runs), where
    the caller sorts the plain strings in an instant.
    """
    run = (
        "?session oprov:runStartedAt ?start ."
        if marked
        else f"?session a oprov:AgentSession .\n  {_outermost('?session')}"
    )
    among = f"VALUES ?session {{ {_values(sessions)} }}\n  " if sessions is not None else ""
    order = " ORDER BY ?session" if ordered else ""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?session ?bundle ?hash ?manifest ?canonicalization ?revised ?revisedManifest
  ?previous ?previousHash ?revisionPrevious ?revisionPreviousHash
WHERE {{ GRAPH {graph} {{
  {among}{run}
  OPTIONAL {{
    ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; oprov:manifest ?manifest .
    OPTIONAL {{ ?bundle oprov:canonicalization ?canonicalization }}
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
}} }}{order}"""


def annotation_rows_query(graph: str) -> str:
    """SELECT each annotation (``?session``, as :func:`verify_rows_query` names what a
    bundle seals), the run its evaluation judges, its bundle and chain link."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?session ?run ?bundle ?hash ?manifest ?canonicalization ?previous ?previousHash
WHERE {{ GRAPH {graph} {{
  ?session a oprov:Annotation .
  OPTIONAL {{ ?evaluation prov:wasGeneratedBy ?session ; oprov:evaluates ?run }}
  OPTIONAL {{
    ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; oprov:manifest ?manifest .
    OPTIONAL {{ ?bundle oprov:canonicalization ?canonicalization }}
    OPTIONAL {{ ?bundle oprov:previousBundle ?previous ; oprov:previousHash ?previousHash }}
  }}
}} }} ORDER BY ?session"""


def bundle_hashes_query(
    graph: str, bundles: Sequence[str] | None = None, *, ordered: bool = True
) -> str:
    """SELECT ``?b ?h``: every bundle stored (or those of ``bundles``), with its content
    hash; ``ordered`` as in :func:`verify_rows_query`."""
    among = f"VALUES ?b {{ {_values(bundles)} }}\n  " if bundles is not None else ""
    order = " ORDER BY ?b" if ordered else ""
    return f"""{SPARQL_PREFIXES}
SELECT ?b ?h WHERE {{ GRAPH {graph} {{
  {among}?b oprov:bundleOf ?s ; oprov:contentHash ?h .
}} }}{order}"""


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


WHY_RELATIONS = (
    "wasDerivedFrom",
    "used",
    "wasGeneratedBy",
    "hadPrimarySource",
    "wasQuotedFrom",
    "wasInformedBy",
)
"""The PROV relations a derivation is followed along, from what was made to what it was
made from: they hold for any kind of node (retrieved chunks and their sources, earlier
turns linked by span links), not only the ones the mapper writes today."""

_WHY_PATH = (
    "(" + "|".join([*(f"prov:{name}" for name in WHY_RELATIONS), "^prov:wasGeneratedBy"]) + ")*"
)
"""Everything behind a node.  ``^prov:wasGeneratedBy`` adds what an activity reached
produced (a step's thought, a session's answer): the reasoning that chose a call is
behind what the call returned."""

WHY_PROPERTIES = (
    "rdf:type",
    "rdfs:label",
    "prov:value",
    "prov:startedAtTime",
    "prov:generatedAtTime",
    "oprov:contentHash",
    "oprov:byteSize",
    "oprov:contentLocation",
    "oprov:truncated",
    "oprov:toolName",
    "oprov:toolCallId",
    "oprov:status",
    "oprov:errorType",
    "oprov:errorMessage",
    "oprov:iterationNumber",
    "oprov:partOf",
    *(f"prov:{name}" for name in WHY_RELATIONS),
)
"""What :func:`why_query` reads of each node: how to show it, and its links."""


def why_starts_query(graph: str, ident: str) -> str:
    """SELECT ``?s ?start ?conversation``: the runs ``ident`` names (as
    :func:`find_query` finds them) with their conversation ids, where ``why`` starts.

    The earlier turns of the conversations (:func:`earlier_turns_query`), a node that is
    no session (:func:`why_node_query`) and the answers (:func:`answers_query`) are
    asked for apart, each query anchored on the literal or IRIs the one before found: in
    one query, Oxigraph joined every session and every answer of the store to the few
    named (21 s over 100,000 runs).
    """
    pattern = (
        "a oprov:AgentSession ; prov:startedAtTime ?start .\n"
        "    OPTIONAL { ?s oprov:sessionId ?conversation }"
    )
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start ?conversation WHERE {{ GRAPH {graph} {{
  {_named_sessions("?s", ident, pattern)}
  {_outermost("?s")}
}} }} ORDER BY ?start ?s ?conversation"""


def earlier_turns_query(graph: str, turns: Sequence[tuple[str, str]]) -> str:
    """SELECT ``?s ?start``: the runs of each conversation started before a turn of it;
    ``turns`` are (conversation id, ``xsd:dateTime`` lexical form) pairs."""
    values = " ".join(
        f"({literal(conversation)} {literal(start)}^^xsd:dateTime)" for conversation, start in turns
    )
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  VALUES (?conversation ?runStart) {{ {values} }}
  ?s oprov:sessionId ?conversation ; a oprov:AgentSession ; prov:startedAtTime ?start .
  FILTER(?start < ?runStart)
  {_outermost("?s")}
}} }} ORDER BY ?start ?s"""


def why_node_query(graph: str, node: str) -> str:
    """SELECT ``?kind``: the types of ``node`` (an IRI); one row with ``?kind`` unbound
    when it has none but is in the graph, no row when the graph does not know it."""
    term = iri(node)
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?kind WHERE {{ GRAPH {graph} {{
  {{ SELECT ?p WHERE {{ {{ {term} ?p ?o }} UNION {{ ?o ?p {term} }} }} LIMIT 1 }}
  OPTIONAL {{ {term} a ?kind }}
}} }} ORDER BY ?kind"""


def answers_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?answer ?answerBy``: each answer given in each of ``sessions``
    (IRIs), sub-sessions included (``?answerBy`` the session that gave it)."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?s ?answer ?answerBy WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {_values(sessions)} }}
  ?answerBy oprov:partOf* ?s ; a oprov:AgentSession .
  ?answer prov:wasGeneratedBy ?answerBy ; a oprov:Answer .
}} }} ORDER BY ?s ?answerBy ?answer"""


def why_query(graph: str, starts: Sequence[str], sessions: Sequence[str]) -> str:
    """SELECT ``?n``: every node behind ``starts`` (IRIs), and behind what is part of
    ``sessions`` (IRIs: sessions that gave no answer: their steps), by property paths.

    What is said of each node is asked for apart (:func:`why_properties_query`), with
    the nodes written in: joined to the paths here, as an ``OPTIONAL`` or a subquery,
    it took Oxigraph longer than the paths themselves.
    """
    # One branch per start, its IRI written in: Virtuoso runs a transitive path only
    # from an end bound that way (not by VALUES).
    branches = [f"{{ {iri(start)} {_WHY_PATH} ?n }}" for start in starts]
    branches += [f"{{ {iri(s)} ^oprov:partOf/{_WHY_PATH} ?n }}" for s in sessions]
    body = "\n  UNION ".join(branches)
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?n WHERE {{ GRAPH {graph} {{
  {body}
}} }}"""


def why_properties_query(graph: str, nodes: Sequence[str]) -> str:
    """SELECT ``?n ?p ?o``: what :data:`WHY_PROPERTIES` says of each of ``nodes`` (IRIs).
    No ORDER BY: on a 200-step run, sorting the 8,000 rows took Oxigraph longer than
    finding them, and the reader orders the graph."""
    return f"""{SPARQL_PREFIXES}
SELECT ?n ?p ?o WHERE {{ GRAPH {graph} {{
  VALUES ?n {{ {_values(nodes)} }}
  ?n ?p ?o . FILTER(?p IN ({", ".join(WHY_PROPERTIES)}))
}} }}"""


def why_attempts_query(graph: str, holders: Sequence[str]) -> str:
    """SELECT ``?n ?p ?o``: each failed activity (``oprov:status "error"``) directly part
    of one of ``holders`` (IRIs of the sessions and steps ``why`` reached), with what
    :data:`WHY_PROPERTIES` says of it.  A failed tool call produced nothing, so no
    derivation leads to it, yet it is part of why the agent did what it did."""
    return f"""{SPARQL_PREFIXES}
SELECT ?n ?p ?o WHERE {{ GRAPH {graph} {{
  VALUES ?holder {{ {_values(holders)} }}
  ?n oprov:partOf ?holder ; oprov:status "error" .
  ?n ?p ?o . FILTER(?p IN ({", ".join(WHY_PROPERTIES)}))
}} }}"""
