"""Agent sessions read back from a store: the SPARQL behind ``sessions`` and ``show``.

Queries are built from validated IRIs and escaped literals only (``_rdf``), and name
the provenance graph explicitly, so they mean the same on every store.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from otel_prov._backend import QueryBackend
from otel_prov._rdf import InvalidIRIError, iri, literal

__all__ = [
    "IterationView",
    "SessionSummary",
    "SessionView",
    "ToolCallView",
    "find_sessions",
    "list_sessions",
    "load_session",
    "session_construct_query",
]

PREFIXES = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""

_OUTERMOST = "FILTER NOT EXISTS { ?s oprov:partOf+ ?outer . ?outer a oprov:AgentSession }"


@dataclass
class SessionSummary:
    id: str
    start: str
    agent: str | None
    question: str | None
    iterations: int
    tool_calls: int
    status: str
    trace_id: str


@dataclass
class ToolCallView:
    id: str
    name: str
    call_id: str | None
    status: str
    error_type: str | None
    error_message: str | None
    arguments: str | None
    observation: str | None


@dataclass
class ModelCallView:
    id: str
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    status: str


@dataclass
class IterationView:
    id: str
    number: int | None
    thought: str | None
    action: str | None
    arguments: str | None
    observation: str | None
    status: str
    tool_calls: list[ToolCallView] = field(default_factory=list)
    model_calls: list[ModelCallView] = field(default_factory=list)


@dataclass
class SessionView:
    id: str
    trace_id: str
    span_id: str
    agent: str | None
    conversation_id: str | None
    status: str
    start: str
    end: str | None
    question: str | None
    answer: str | None
    iterations: list[IterationView] = field(default_factory=list)


def list_sessions(backend: QueryBackend, graph: str, limit: int) -> list[SessionSummary]:
    """Newest first."""
    query = f"""{PREFIXES}
SELECT ?s ?start ?trace ?status (SAMPLE(?agentLabel) AS ?agent) (SAMPLE(?q) AS ?question)
       (COUNT(DISTINCT ?it) AS ?iterations) (COUNT(DISTINCT ?tc) AS ?tools)
WHERE {{ GRAPH {graph} {{
  ?s a oprov:AgentSession ; prov:startedAtTime ?start ; oprov:traceId ?trace ;
     oprov:status ?status .
  {_OUTERMOST}
  OPTIONAL {{ ?s prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agentLabel }}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?q }}
  OPTIONAL {{ ?it oprov:partOf ?s ; a oprov:Iteration }}
  OPTIONAL {{ ?tc oprov:partOf+ ?s ; a oprov:ToolCall }}
}} }}
GROUP BY ?s ?start ?trace ?status
ORDER BY DESC(?start) ?s
LIMIT {int(limit)}"""
    return [
        SessionSummary(
            id=row["s"] or "",
            start=row["start"] or "",
            agent=row["agent"],
            question=row["question"],
            iterations=int(row["iterations"] or 0),
            tool_calls=int(row["tools"] or 0),
            status=row["status"] or "",
            trace_id=row["trace"] or "",
        )
        for row in backend.query(query).rows
    ]


def find_sessions(backend: QueryBackend, graph: str, ident: str) -> list[str]:
    """Outermost sessions matching a session IRI, a trace id or a conversation id, oldest first."""
    branches = [
        f"{{ ?s oprov:traceId {literal(ident)} }}",
        f"{{ ?s oprov:sessionId {literal(ident)} }}",
    ]
    with contextlib.suppress(InvalidIRIError):
        branches.append(f"{{ BIND({iri(ident)} AS ?s) }}")
    query = f"""{PREFIXES}
SELECT DISTINCT ?s ?start WHERE {{ GRAPH {graph} {{
  ?s a oprov:AgentSession ; prov:startedAtTime ?start .
  {" UNION ".join(branches)}
  {_OUTERMOST}
}} }} ORDER BY ?start ?s"""
    return [row["s"] or "" for row in backend.query(query).rows]


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


def load_session(backend: QueryBackend, graph: str, session: str) -> SessionView:
    """Everything ``show`` prints about one session."""
    s = iri(session)
    head = backend.query(
        f"""{PREFIXES}
SELECT ?trace ?span ?status ?start ?end ?conversation ?agent ?question ?answer
WHERE {{ GRAPH {graph} {{
  {s} oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status ;
      prov:startedAtTime ?start .
  OPTIONAL {{ {s} prov:endedAtTime ?end }}
  OPTIONAL {{ {s} oprov:sessionId ?conversation }}
  OPTIONAL {{ {s} prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agent }}
  OPTIONAL {{ {s} prov:used ?qe . ?qe a oprov:Question ; prov:value ?question }}
  OPTIONAL {{ ?ae prov:wasGeneratedBy {s} ; a oprov:Answer ; prov:value ?answer }}
}} }} LIMIT 1"""
    ).rows
    if not head:
        raise LookupError(f"no session {session}")
    row = head[0]
    view = SessionView(
        id=session,
        trace_id=row["trace"] or "",
        span_id=row["span"] or "",
        agent=row["agent"],
        conversation_id=row["conversation"],
        status=row["status"] or "",
        start=row["start"] or "",
        end=row["end"],
        question=row["question"],
        answer=row["answer"],
    )
    activities = backend.query(
        f"""{PREFIXES}
SELECT ?a ?type ?parent ?start ?status ?number ?action ?tool ?callId ?errorType ?errorMessage
       ?model ?inTokens ?outTokens ?thought ?arguments ?observation
WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {s} ; oprov:partOf ?parent ; a ?type ; prov:startedAtTime ?start ;
     oprov:status ?status .
  FILTER(?type IN (oprov:Iteration, oprov:ToolCall, oprov:ModelCall))
  OPTIONAL {{ ?a oprov:iterationNumber ?number }}
  OPTIONAL {{ ?a oprov:action ?action }}
  OPTIONAL {{ ?a oprov:toolName ?tool }}
  OPTIONAL {{ ?a oprov:toolCallId ?callId }}
  OPTIONAL {{ ?a oprov:errorType ?errorType }}
  OPTIONAL {{ ?a oprov:errorMessage ?errorMessage }}
  OPTIONAL {{ ?a oprov:modelName ?model }}
  OPTIONAL {{ ?a oprov:inputTokens ?inTokens }}
  OPTIONAL {{ ?a oprov:outputTokens ?outTokens }}
  OPTIONAL {{ ?te prov:wasGeneratedBy ?a ; a oprov:Thought ; prov:value ?thought }}
  OPTIONAL {{ ?a prov:used ?ue . ?ue a oprov:Arguments ; prov:value ?arguments }}
  OPTIONAL {{ ?ge prov:wasGeneratedBy ?a ; a oprov:Arguments ; prov:value ?arguments }}
  OPTIONAL {{ ?oe prov:wasGeneratedBy ?a ; a oprov:Observation ; prov:value ?observation }}
}} }} ORDER BY ?start ?a"""
    ).rows
    iterations: dict[str, IterationView] = {}
    children = []
    oprov = "https://w3id.org/otel-prov/ns#"
    for row in activities:
        kind = (row["type"] or "").removeprefix(oprov)
        if kind == "Iteration" and row["a"] not in iterations:
            iterations[row["a"] or ""] = IterationView(
                id=row["a"] or "",
                number=_int(row["number"]),
                thought=row["thought"],
                action=row["action"],
                arguments=row["arguments"],
                observation=row["observation"],
                status=row["status"] or "",
            )
        elif kind in ("ToolCall", "ModelCall"):
            children.append((kind, row))
    seen: set[str | None] = set()
    for kind, row in children:
        owner = iterations.get(row["parent"] or "")
        if owner is None or row["a"] in seen:
            continue
        seen.add(row["a"])
        if kind == "ToolCall":
            owner.tool_calls.append(
                ToolCallView(
                    id=row["a"] or "",
                    name=row["tool"] or "",
                    call_id=row["callId"],
                    status=row["status"] or "",
                    error_type=row["errorType"],
                    error_message=row["errorMessage"],
                    arguments=row["arguments"],
                    observation=row["observation"],
                )
            )
        else:
            owner.model_calls.append(
                ModelCallView(
                    id=row["a"] or "",
                    model=row["model"],
                    input_tokens=_int(row["inTokens"]),
                    output_tokens=_int(row["outTokens"]),
                    status=row["status"] or "",
                )
            )
    view.iterations = sorted(
        iterations.values(), key=lambda it: it.number if it.number is not None else 1 << 62
    )
    return view


def session_construct_query(graph: str, session: str) -> str:
    """CONSTRUCT every triple about the session, its activities, entities and agents."""
    s = iri(session)
    return f"""{PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  {{ BIND({s} AS ?x) }}
  UNION {{ ?x oprov:partOf+ {s} }}
  UNION {{ ?act oprov:partOf* {s} . ?x prov:wasGeneratedBy ?act }}
  UNION {{ ?act oprov:partOf* {s} . ?act prov:used ?x }}
  UNION {{ ?act oprov:partOf* {s} . ?act prov:wasAssociatedWith ?x }}
  ?x ?p ?o .
}} }}"""
