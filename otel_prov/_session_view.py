"""Agent sessions read back from a store: the SPARQL behind ``sessions`` and ``show``.

Queries are built from validated IRIs and escaped literals only (``_rdf``), and name
the provenance graph explicitly, so they mean the same on every store.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from otel_prov._backend import QueryBackend
from otel_prov._blobs import BlobError, read_blob
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
    failed_calls: int = 0


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
       (SAMPLE(?f) AS ?failed)
       (COUNT(DISTINCT ?it) AS ?iterations) (COUNT(DISTINCT ?tc) AS ?tools)
WHERE {{ GRAPH {graph} {{
  ?s a oprov:AgentSession ; prov:startedAtTime ?start ; oprov:traceId ?trace ;
     oprov:status ?status .
  {_OUTERMOST}
  OPTIONAL {{ ?s prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agentLabel }}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?q }}
  OPTIONAL {{ ?s oprov:failedCalls ?f }}
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
            failed_calls=int(row["failed"] or 0),
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


def load_session(
    backend: QueryBackend, graph: str, session: str, *, full: bool = False
) -> SessionView:
    """Everything ``show`` prints about one session; ``full`` reads moved values back."""
    s = iri(session)
    head = backend.query(
        f"""{PREFIXES}
SELECT ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae
WHERE {{ GRAPH {graph} {{
  {s} oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status ;
      prov:startedAtTime ?start .
  OPTIONAL {{ {s} prov:endedAtTime ?end }}
  OPTIONAL {{ {s} oprov:sessionId ?conversation }}
  OPTIONAL {{ {s} prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agent }}
  OPTIONAL {{ {s} prov:used ?qe . ?qe a oprov:Question }}
  OPTIONAL {{ ?ae prov:wasGeneratedBy {s} ; a oprov:Answer }}
}} }} LIMIT 1"""
    ).rows
    if not head:
        raise LookupError(f"no session {session}")
    row = head[0]
    texts = _content_texts(backend, graph, s, full)
    view = SessionView(
        id=session,
        trace_id=row["trace"] or "",
        span_id=row["span"] or "",
        agent=row["agent"],
        conversation_id=row["conversation"],
        status=row["status"] or "",
        start=row["start"] or "",
        end=row["end"],
        question=texts.get(row["qe"] or ""),
        answer=texts.get(row["ae"] or ""),
    )
    _fill_iterations(backend, graph, s, view, texts)
    return view


_DESCRIPTORS = {
    "http://www.w3.org/ns/prov#value": "value",
    "https://w3id.org/otel-prov/ns#contentHash": "hash",
    "https://w3id.org/otel-prov/ns#byteSize": "size",
    "https://w3id.org/otel-prov/ns#contentLocation": "location",
    "https://w3id.org/otel-prov/ns#truncated": "truncated",
}


def _content_texts(backend: QueryBackend, graph: str, s: str, full: bool) -> dict[str, str]:
    """Entity IRI -> the text to show for each content entity of the session."""
    described: dict[str, dict[str, str]] = {}
    for row in backend.query(
        f"""{PREFIXES}
SELECT ?e ?p ?o WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf* {s} .
  {{ ?e prov:wasGeneratedBy ?a }} UNION {{ ?a prov:used ?e }}
  ?e ?p ?o .
  FILTER(?p IN (prov:value, oprov:contentHash, oprov:byteSize, oprov:contentLocation,
                oprov:truncated))
}} }} ORDER BY ?e ?p ?o"""
    ).rows:
        described.setdefault(row["e"] or "", {})[_DESCRIPTORS[row["p"] or ""]] = row["o"] or ""
    return {
        entity: text
        for entity, fields in described.items()
        if (text := content_text(fields, full=full)) is not None
    }


def content_text(fields: dict[str, str], *, full: bool) -> str | None:
    """What to show for a value that may be whole, a preview, truncated or left off."""
    value, digest, size = fields.get("value"), fields.get("hash"), fields.get("size")
    location = fields.get("location")
    if location is not None:
        if full:
            try:
                return read_blob(location, digest)
            except BlobError as exc:
                return f"{value or ''}\n[{exc}]"
        whole = f"the whole value ({size} bytes) is at {location}"
        return f"{value or ''}\n[preview: {whole}; --full shows it]"
    if value is None:
        return f"[not captured: {size} bytes, {digest}]" if digest is not None else None
    if fields.get("truncated") == "true":
        whole = f"; the whole value was {size} bytes, {digest}" if digest is not None else ""
        return f"{value}\n[truncated by an attribute length limit{whole}]"
    return value


_PROPERTIES = {
    "iterationNumber": "number",
    "action": "action",
    "toolName": "tool",
    "toolCallId": "call_id",
    "errorType": "error_type",
    "errorMessage": "error_message",
    "modelName": "model",
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
}


def _fill_iterations(
    backend: QueryBackend, graph: str, s: str, view: SessionView, texts: dict[str, str]
) -> None:
    """Iterations with their model and tool calls, from three small queries.

    Small on purpose: one query joining it all makes Virtuoso's planner refuse to run it
    ("estimated execution time exceeds the limit").
    """
    oprov = "https://w3id.org/otel-prov/ns#"
    activities = backend.query(
        f"""{PREFIXES}
SELECT ?a ?type ?parent ?start ?status WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {s} .
  ?a oprov:partOf ?parent ; a ?type ; prov:startedAtTime ?start ; oprov:status ?status .
  FILTER(?type IN (oprov:Iteration, oprov:ToolCall, oprov:ModelCall))
}} }} ORDER BY ?start ?a"""
    ).rows
    properties: dict[str, dict[str, str]] = {}
    for row in backend.query(
        f"""{PREFIXES}
SELECT ?a ?p ?o WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {s} . ?a ?p ?o .
  FILTER(?p IN ({", ".join(f"oprov:{name}" for name in _PROPERTIES)}))
}} }} ORDER BY ?a ?p ?o"""
    ).rows:
        name = _PROPERTIES[(row["p"] or "").removeprefix(oprov)]
        properties.setdefault(row["a"] or "", {}).setdefault(name, row["o"] or "")
    content: dict[tuple[str, str, str], set[str]] = {}
    for row in backend.query(
        f"""{PREFIXES}
SELECT ?a ?link ?kind ?e WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {s} .
  {{ ?e prov:wasGeneratedBy ?a . BIND("generated" AS ?link) }}
  UNION {{ ?a prov:used ?e . BIND("used" AS ?link) }}
  ?e a ?kind .
  FILTER(?kind IN (oprov:Thought, oprov:Arguments, oprov:Observation))
}} }} ORDER BY ?a ?link ?kind ?e"""
    ).rows:
        kind = (row["kind"] or "").removeprefix(oprov)
        text = texts.get(row["e"] or "")
        if text is not None:
            content.setdefault((row["a"] or "", row["link"] or "", kind), set()).add(text)

    def one(activity: str, link: str, kind: str) -> str | None:
        # One value, or None where parallel calls each hold their own.
        values = content.get((activity, link, kind), set())
        return next(iter(values)) if len(values) == 1 else None

    iterations: dict[str, IterationView] = {}
    seen: set[str] = set()
    for row in activities:
        activity, kind = row["a"] or "", (row["type"] or "").removeprefix(oprov)
        if activity in seen:
            continue
        seen.add(activity)
        props = properties.get(activity, {})
        if kind == "Iteration":
            iterations[activity] = IterationView(
                id=activity,
                number=_int(props.get("number")),
                thought=one(activity, "generated", "Thought"),
                action=props.get("action"),
                arguments=one(activity, "generated", "Arguments"),
                observation=one(activity, "generated", "Observation"),
                status=row["status"] or "",
            )
    for row in activities:
        activity, kind = row["a"] or "", (row["type"] or "").removeprefix(oprov)
        owner = iterations.get(row["parent"] or "")
        if owner is None or kind == "Iteration" or activity not in seen:
            continue
        seen.discard(activity)
        props = properties.get(activity, {})
        if kind == "ToolCall":
            owner.tool_calls.append(
                ToolCallView(
                    id=activity,
                    name=props.get("tool", ""),
                    call_id=props.get("call_id"),
                    status=row["status"] or "",
                    error_type=props.get("error_type"),
                    error_message=props.get("error_message"),
                    arguments=one(activity, "used", "Arguments"),
                    observation=one(activity, "generated", "Observation"),
                )
            )
        else:
            owner.model_calls.append(
                ModelCallView(
                    id=activity,
                    model=props.get("model"),
                    input_tokens=_int(props.get("input_tokens")),
                    output_tokens=_int(props.get("output_tokens")),
                    status=row["status"] or "",
                )
            )
    view.iterations = sorted(
        iterations.values(), key=lambda it: it.number if it.number is not None else 1 << 62
    )


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
