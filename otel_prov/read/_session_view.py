"""Agent sessions read back from a store: the SPARQL behind ``sessions`` and ``show``.

Queries are built from validated IRIs and escaped literals only (``_rdf``), and name
the provenance graph explicitly, so they mean the same on every store.

A run is its outermost session.  Sessions nest: a sub-agent's session (a handoff, a
tool that delegates to another agent) is ``oprov:partOf`` an activity of its parent's,
and ``show`` nests it where it started instead of mixing its iterations into the run's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from otel_prov.processing._blobs import BlobError, read_blob
from otel_prov.prov._rdf import InvalidIRIError, instant_order, iri, literal
from otel_prov.read._backend import QueryBackend

__all__ = [
    "IterationView",
    "SessionSummary",
    "SessionView",
    "ToolCallView",
    "find_sessions",
    "list_sessions",
    "load_session",
    "session_construct_query",
    "session_members",
]

PREFIXES = """PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""

_OPROV = "https://w3id.org/otel-prov/ns#"
_OUTERMOST = "FILTER NOT EXISTS { ?s oprov:partOf+ ?outer . ?outer a oprov:AgentSession }"

_T = TypeVar("_T")


@dataclass
class SessionSummary:
    """One run in ``sessions``: the counts are the whole run's, sub-agent sessions included."""

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
    sub_sessions: list[SessionView] = field(default_factory=list)
    """Sessions this call started: a handoff's specialist, an agent used as a tool."""


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
    sub_sessions: list[SessionView] = field(default_factory=list)
    """Sessions started in this iteration outside any tool call shown."""


@dataclass
class SessionView:
    """One session; a sub-agent's session is nested where it started, as its own view."""

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
    answered_by: str | None = None
    """The sub-session whose answer ``answer`` is, when the run's own session gave none."""
    failed_calls: int = 0
    """Tool and model calls of the session that failed (``oprov:failedCalls``)."""
    iterations: list[IterationView] = field(default_factory=list)
    sub_sessions: list[SessionView] = field(default_factory=list)
    """Sessions started by the session itself, outside any iteration shown."""

    def nested_sessions(self) -> Iterator[SessionView]:
        """Every session below this one, wherever it started, depth first in run order."""
        for step in self.iterations:
            for call in step.tool_calls:
                for sub in call.sub_sessions:
                    yield sub
                    yield from sub.nested_sessions()
            for sub in step.sub_sessions:
                yield sub
                yield from sub.nested_sessions()
        for sub in self.sub_sessions:
            yield sub
            yield from sub.nested_sessions()


def list_sessions(backend: QueryBackend, graph: str, limit: int) -> list[SessionSummary]:
    """Runs (outermost sessions), newest first.

    Iterations and tool calls are counted over the whole run, sub-agent sessions
    included, as ``show`` displays them: a handoff's work is the run's work.  They are
    counted by a second query over the runs listed: in the listing itself, Virtuoso
    (7.2) miscounts a transitive ``OPTIONAL`` beside the transitive outermost filter.
    """
    query = f"""{PREFIXES}
SELECT ?s ?start ?trace (GROUP_CONCAT(DISTINCT ?status; separator=" ") AS ?statuses)
       (SAMPLE(?agentLabel) AS ?agent) (SAMPLE(?q) AS ?question) (MAX(?f) AS ?failed)
WHERE {{ GRAPH {graph} {{
  ?s a oprov:AgentSession ; prov:startedAtTime ?start ; oprov:traceId ?trace ;
     oprov:status ?status .
  {_OUTERMOST}
  OPTIONAL {{ ?s prov:wasAssociatedWith ?a . ?a a oprov:AIAgent ; rdfs:label ?agentLabel }}
  OPTIONAL {{ ?s prov:used ?qe . ?qe a oprov:Question ; prov:value ?q }}
  OPTIONAL {{ ?s oprov:failedCalls ?f }}
}} }}
GROUP BY ?s ?start ?trace
ORDER BY DESC(?start) ?s
LIMIT {int(limit)}"""
    runs = backend.query(query).rows
    counts = _run_counts(backend, graph, [row["s"] or "" for row in runs])
    return [
        SessionSummary(
            id=row["s"] or "",
            start=row["start"] or "",
            agent=row["agent"],
            question=row["question"],
            iterations=counts.get((row["s"] or "", "Iteration"), 0),
            tool_calls=counts.get((row["s"] or "", "ToolCall"), 0),
            status=settled_status((row["statuses"] or "").split()),
            trace_id=row["trace"] or "",
            failed_calls=int(row["failed"] or 0),
        )
        for row in runs
    ]


def settled_status(statuses: Iterable[str | None]) -> str:
    """The status of a session recorded more than once: a session exported
    ``incomplete`` (its span was still open at the timeout) and later again, when it
    ended, holds both literals; the later one is what happened."""
    found = {status for status in statuses if status}
    final = found - {"incomplete"}
    if "error" in final:
        return "error"
    return min(final) if final else ("incomplete" if found else "")


def _run_counts(backend: QueryBackend, graph: str, runs: list[str]) -> dict[tuple[str, str], int]:
    """(run IRI, ``Iteration`` or ``ToolCall``) -> how many the run holds, at any depth."""
    if not runs:
        return {}
    query = f"""{PREFIXES}
SELECT ?s ?kind (COUNT(DISTINCT ?x) AS ?n) WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {" ".join(iri(run) for run in runs)} }}
  ?x oprov:partOf+ ?s ; a ?kind .
  FILTER(?kind IN (oprov:Iteration, oprov:ToolCall))
}} }} GROUP BY ?s ?kind ORDER BY ?s ?kind"""
    return {
        (row["s"] or "", (row["kind"] or "").removeprefix(_OPROV)): int(row["n"] or 0)
        for row in backend.query(query).rows
    }


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
    """Everything ``show`` prints about one run; ``full`` reads moved values back.

    Sub-agent sessions come nested where they started.  When the run's own session has
    no answer (a handoff: the specialist answers), ``answer`` is the answer generated
    last in the run and ``answered_by`` names the sub-session that gave it.
    """
    s = iri(session)
    head = backend.query(
        f"""{PREFIXES}
SELECT ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed
WHERE {{ GRAPH {graph} {{
  {_head_pattern(s)}
}} }} ORDER BY ?status LIMIT 16"""
    ).rows
    if not head:
        raise LookupError(f"no session {session}")
    texts = _content_texts(backend, graph, s, full)
    view = _session_view(session, _settled_row(head), texts)
    _fill_iterations(backend, graph, s, view, texts)
    if view.answer is None:
        answered = [sub for sub in view.nested_sessions() if sub.answer is not None]
        if answered:
            last = max(answered, key=lambda sub: instant_order(sub.end or sub.start))
            view.answer, view.answered_by = last.answer, last.id
    return view


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


def _session_view(
    session: str, row: Mapping[str, str | None], texts: dict[str, str]
) -> SessionView:
    return SessionView(
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
        failed_calls=int(row["failed"] or 0),
    )


def _sub_sessions(
    backend: QueryBackend, graph: str, s: str, texts: dict[str, str]
) -> dict[str, SessionView]:
    """Every session nested in the run, by IRI, from one query (the run's head, for each)."""
    rows_by_sub: dict[str, list[Mapping[str, str | None]]] = {}
    for row in backend.query(
        f"""{PREFIXES}
SELECT ?sub ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed
WHERE {{ GRAPH {graph} {{
  ?sub oprov:partOf+ {s} ; a oprov:AgentSession .
  {_head_pattern("?sub")}
}} }} ORDER BY ?sub ?agent ?qe ?ae ?end ?conversation"""
    ).rows:
        rows_by_sub.setdefault(row["sub"] or "", []).append(row)
    return {sub: _session_view(sub, _settled_row(rows), texts) for sub, rows in rows_by_sub.items()}


def _settled_row(rows: Sequence[Mapping[str, str | None]]) -> Mapping[str, str | None]:
    """One head row per session (one agent, question and answer each), with the
    session's settled status (see :func:`settled_status`)."""
    status = settled_status(row["status"] for row in rows)
    failed = max(int(row["failed"] or 0) for row in rows)
    chosen = next(row for row in rows if (row["status"] or "") == status)
    return {**chosen, "failed": str(failed)}


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
    """Iterations with their model and tool calls, and the sessions nested in the run.

    From three small queries (four when sessions nest), put together here: one query
    joining it all makes Virtuoso's planner refuse to run it ("estimated execution time
    exceeds the limit").  Each iteration goes to its nearest session; a nested session
    to the nearest shown tool call, iteration or session above it.  Every kind of
    activity is read, because those between (``oprov:Span``, ``Retrieval``) link the two.
    """
    activities = backend.query(
        f"""{PREFIXES}
SELECT ?a ?type ?parent ?start ?status WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {s} .
  ?a oprov:partOf ?parent ; a ?type ; prov:startedAtTime ?start ; oprov:status ?status .
  FILTER(?type IN (oprov:Iteration, oprov:ToolCall, oprov:ModelCall, oprov:AgentSession,
                   oprov:Retrieval, oprov:Span))
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
        name = _PROPERTIES[(row["p"] or "").removeprefix(_OPROV)]
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
        kind = (row["kind"] or "").removeprefix(_OPROV)
        text = texts.get(row["e"] or "")
        if text is not None:
            content.setdefault((row["a"] or "", row["link"] or "", kind), set()).add(text)

    def one(activity: str, link: str, kind: str) -> str | None:
        # One value, or None where parallel calls each hold their own.
        values = content.get((activity, link, kind), set())
        return next(iter(values)) if len(values) == 1 else None

    # In run order, each activity once (a store may hold two starts or statuses for one).
    kinds: dict[str, str] = {}
    parents: dict[str, str] = {}
    statuses: dict[str, str] = {}
    for row in activities:
        activity = row["a"] or ""
        if activity not in kinds:
            kinds[activity] = (row["type"] or "").removeprefix(_OPROV)
            parents[activity] = row["parent"] or ""
            statuses[activity] = row["status"] or ""

    sessions = {view.id: view}
    if "AgentSession" in kinds.values():
        sessions.update(_sub_sessions(backend, graph, s, texts))
    iterations: dict[str, IterationView] = {}
    for activity, kind in kinds.items():
        if kind != "Iteration":
            continue
        props = properties.get(activity, {})
        iterations[activity] = step = IterationView(
            id=activity,
            number=_int(props.get("number")),
            thought=one(activity, "generated", "Thought"),
            action=props.get("action"),
            arguments=one(activity, "generated", "Arguments"),
            observation=one(activity, "generated", "Observation"),
            status=statuses[activity],
        )
        home = _nearest(activity, parents, sessions)
        (view if home is None else home).iterations.append(step)
    # Where a nested session shows: the sub-session list of each shown holder.
    holders: dict[str, list[SessionView]] = {
        activity: step.sub_sessions for activity, step in iterations.items()
    }
    for activity, kind in kinds.items():
        owner = iterations.get(parents[activity])
        if owner is None or kind not in ("ToolCall", "ModelCall"):
            continue
        props = properties.get(activity, {})
        if kind == "ToolCall":
            call = ToolCallView(
                id=activity,
                name=props.get("tool", ""),
                call_id=props.get("call_id"),
                status=statuses[activity],
                error_type=props.get("error_type"),
                error_message=props.get("error_message"),
                arguments=one(activity, "used", "Arguments"),
                observation=one(activity, "generated", "Observation"),
            )
            owner.tool_calls.append(call)
            holders[activity] = call.sub_sessions
        else:
            owner.model_calls.append(
                ModelCallView(
                    id=activity,
                    model=props.get("model"),
                    input_tokens=_int(props.get("input_tokens")),
                    output_tokens=_int(props.get("output_tokens")),
                    status=statuses[activity],
                )
            )
    holders.update((activity, shown.sub_sessions) for activity, shown in sessions.items())
    for activity in kinds:
        if activity in sessions:
            holder = _nearest(activity, parents, holders)
            (view.sub_sessions if holder is None else holder).append(sessions[activity])
    for shown in sessions.values():
        shown.iterations.sort(key=lambda it: it.number if it.number is not None else 1 << 62)


def _nearest(activity: str, parents: Mapping[str, str], places: Mapping[str, _T]) -> _T | None:
    """What the first of the activity's ancestors that is one of ``places`` maps to.

    ``None`` when none is: a parent the queries did not read (one without a start time
    or status) ends the chain, and so does a ``partOf`` loop in a hand-edited store.
    """
    seen = {activity}
    parent = parents.get(activity)
    while parent is not None and parent not in places and parent not in seen:
        seen.add(parent)
        parent = parents.get(parent)
    return places.get(parent) if parent is not None else None


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
    return f"""{PREFIXES}
CONSTRUCT {{ ?x ?p ?o }} WHERE {{ GRAPH {graph} {{
  {session_members(iri(session), agents=True)}
  ?x ?p ?o .
}} }}"""
