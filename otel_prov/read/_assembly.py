"""One run read back whole: its head, iterations, calls and nested sessions, put in place.

A few small queries anchored on the run's IRI read its activities, their properties,
the content they generated or used and the heads of the sessions nested in it; here
their rows become the frozen views of :mod:`~otel_prov.read._views`, each sub-agent's
session nested where it started.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from decimal import Decimal

from otel_prov.exporters._reading import QueryBackend
from otel_prov.processing._blobs import BlobError, read_blob
from otel_prov.prov._iris import STEP
from otel_prov.prov._rdf import OPROV, PROV, instant_order, iri, milliseconds_between
from otel_prov.read._approvals import approvals_of
from otel_prov.read._plans import plans_and_postconditions
from otel_prov.read._session_facts import TOKEN_PROPERTIES, evaluations_of, usage_totals
from otel_prov.read._sparql import SPARQL_PREFIXES, settled_status, shown_agent
from otel_prov.read._views import (
    Cost,
    DownstreamView,
    IterationView,
    ModelCallView,
    SessionView,
    ToolCallView,
)

__all__ = ["CONTENT_DESCRIPTORS", "content_text", "load_session"]


def _head_pattern(subject: str) -> str:
    """What heads a session in ``show``; ``subject`` is the session's IRI or a variable."""
    return f"""{subject} oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status ;
      prov:startedAtTime ?start .
  OPTIONAL {{ {subject} prov:endedAtTime ?end }}
  OPTIONAL {{ {subject} oprov:sessionId ?conversation }}
  {shown_agent(subject, "?agent")}
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
    """SELECT ``?sub``: every session nested in ``session``.

    Asked apart from their heads (:func:`sub_session_heads_query`): joined with the
    head's optional parts, Virtuoso's planner guesses hours for the path and refuses.
    """
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?sub WHERE {{ GRAPH {graph} {{
  ?sub oprov:partOf+ {iri(session)} ; a oprov:AgentSession .
}} }} ORDER BY ?sub"""


def sub_session_heads_query(graph: str, subs: Sequence[str]) -> str:
    """The head of each session of ``subs``, by ``?sub``."""
    return f"""{SPARQL_PREFIXES}
SELECT ?sub ?trace ?span ?status ?start ?end ?conversation ?agent ?qe ?ae ?failed ?errorType
  ?errorMessage
WHERE {{ GRAPH {graph} {{
  VALUES ?sub {{ {" ".join(iri(sub) for sub in subs)} }}
  {_head_pattern("?sub")}
}} }} ORDER BY ?sub ?agent ?qe ?ae ?end ?conversation"""


def content_query(graph: str, session: str) -> str:
    """SELECT ``?e ?p ?o``: how each content entity of the session was recorded.

    The entities come first, from a subquery, each way spelled out: Virtuoso loses rows
    of ``partOf*`` (the session itself) joined with a union and ``?e ?p ?o``.
    """
    run = iri(session)
    return f"""{SPARQL_PREFIXES}
SELECT ?e ?p ?o WHERE {{ GRAPH {graph} {{
  {{ SELECT DISTINCT ?e WHERE {{
    {{ ?e prov:wasGeneratedBy {run} }} UNION {{ {run} prov:used ?e }}
    UNION {{ ?a oprov:partOf+ {run} . ?e prov:wasGeneratedBy ?a }}
    UNION {{ ?a oprov:partOf+ {run} . ?a prov:used ?e }}
  }} }}
  ?e ?p ?o .
  FILTER(?p IN (prov:value, oprov:contentHash, oprov:byteSize, oprov:contentLocation,
                oprov:truncated))
}} }} ORDER BY ?e ?p ?o"""


def activities_query(graph: str, session: str) -> str:
    """SELECT ``?a ?type ?parent ?start ?end ?status ?label`` of every activity in the
    session, in run order.  Every kind is read: those between (``oprov:Span``,
    ``Retrieval``) link a call to the iteration or session above it, and the spans under
    a tool call are what it caused outside the agent."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?type ?parent ?start ?end ?status ?label WHERE {{ GRAPH {graph} {{
  ?a oprov:partOf+ {iri(session)} .
  ?a oprov:partOf ?parent ; a ?type ; prov:startedAtTime ?start ; oprov:status ?status .
  OPTIONAL {{ ?a prov:endedAtTime ?end }}
  OPTIONAL {{ ?a rdfs:label ?label }}
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


def load_session(
    backend: QueryBackend, graph: str, session: str, *, full: bool = False
) -> SessionView:
    """Everything shown about one run; ``full`` reads moved values back.

    Sub-agent sessions come nested where they started.  When the run's own session has
    no answer (a handoff: the specialist answers), ``answer`` is the answer generated
    last in the run and ``answered_by`` names the sub-session that gave it.
    """
    head = backend.query(session_head_query(graph, session)).rows
    if not head:
        raise LookupError(f"no session {session}")
    texts = _content_texts(backend, graph, session, full)
    view = _Assembly(backend, graph, session, texts).build(
        _session_head(session, _settled_row(head), texts)
    )
    if view.answer is None:
        answered = [sub for sub in view.nested_sessions() if sub.answer is not None]
        if answered:
            last = max(answered, key=lambda sub: instant_order(sub.end or sub.start))
            view = replace(view, answer=last.answer, answered_by=last.id)
    plans, postconditions = plans_and_postconditions(backend, graph, session)
    approvals = approvals_of(backend, graph, session)
    return replace(view, plans=plans, postconditions=postconditions, approvals=approvals)


def _session_head(
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
        error_type=row["errorType"],
        error_message=row["errorMessage"],
    )


def _settled_row(rows: Sequence[Mapping[str, str | None]]) -> Mapping[str, str | None]:
    """One head row per session (one agent, question and answer each), with the
    session's settled status (see :func:`settled_status`)."""
    status = settled_status(row["status"] for row in rows)
    failed = max(int(row["failed"] or 0) for row in rows)
    chosen = next(row for row in rows if (row["status"] or "") == status)
    return {**chosen, "failed": str(failed)}


CONTENT_DESCRIPTORS = {
    f"{PROV}value": "value",
    f"{OPROV}contentHash": "hash",
    f"{OPROV}byteSize": "size",
    f"{OPROV}contentLocation": "location",
    f"{OPROV}truncated": "truncated",
}
"""How a content entity was recorded, by property IRI: the fields :func:`content_text` reads."""


def _content_texts(backend: QueryBackend, graph: str, session: str, full: bool) -> dict[str, str]:
    """Entity IRI -> the text to show for each content entity of the session."""
    described: dict[str, dict[str, str]] = {}
    for row in backend.query(content_query(graph, session)).rows:
        described.setdefault(row["e"] or "", {})[CONTENT_DESCRIPTORS[row["p"] or ""]] = (
            row["o"] or ""
        )
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


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


_PROPERTIES = {
    **{name: kind for kind, name in TOKEN_PROPERTIES.items()},
    "costAmount": "cost",
    "costCurrency": "currency",
    "iterationNumber": "number",
    "action": "action",
    "toolName": "tool",
    "toolCallId": "call_id",
    "errorType": "error_type",
    "errorMessage": "error_message",
    "modelName": "model",
    "serviceName": "service",
}


class _Assembly:
    """A run's iterations, calls and nested sessions, read and put in place.

    From three small queries (four when sessions nest): one query joining it all makes
    Virtuoso's planner refuse to run it ("estimated execution time exceeds the
    limit").  Each iteration goes to its nearest session; a nested session to the
    nearest shown tool call, iteration or session above it.  Views are built bottom up
    once every activity's place is known, so that each comes out frozen.
    """

    def __init__(
        self, backend: QueryBackend, graph: str, session: str, texts: dict[str, str]
    ) -> None:
        self._run = session
        self._texts = texts
        # In run order, each activity once (a store may hold two starts or statuses for one).
        self.kinds: dict[str, str] = {}
        self.parents: dict[str, str] = {}
        self.statuses: dict[str, str] = {}
        self.times: dict[str, tuple[str | None, str | None]] = {}
        self.labels: dict[str, str] = {}
        for row in backend.query(activities_query(graph, session)).rows:
            activity = row["a"] or ""
            if activity not in self.kinds:
                self.kinds[activity] = (row["type"] or "").removeprefix(OPROV)
                self.parents[activity] = row["parent"] or ""
                self.statuses[activity] = row["status"] or ""
                self.times[activity] = (row["start"], row["end"])
                self.labels[activity] = row["label"] or ""
            else:  # written running while the run went on, and again when it ended
                status = settled_status((self.statuses[activity], row["status"]))
                self.statuses[activity] = status
                if row["end"] and not self.times[activity][1]:
                    self.times[activity] = (self.times[activity][0], row["end"])
        self.properties: dict[str, dict[str, str]] = {}
        for row in backend.query(properties_query(graph, session, list(_PROPERTIES))).rows:
            name = _PROPERTIES[(row["p"] or "").removeprefix(OPROV)]
            self.properties.setdefault(row["a"] or "", {}).setdefault(name, row["o"] or "")
        self.content: dict[tuple[str, str, str], set[str]] = {}
        arguments_by: dict[str, str] = {}
        self.decided_by: dict[str, str] = {}
        """Tool call -> the activity that generated the arguments it used."""
        for row in backend.query(content_links_query(graph, session)).rows:
            activity, link, entity = row["a"] or "", row["link"] or "", row["e"] or ""
            kind = (row["kind"] or "").removeprefix(OPROV)
            if kind == "Arguments" and link == "generated":
                arguments_by[entity] = activity
            elif kind == "Arguments":
                self.decided_by[activity] = entity
            text = texts.get(entity)
            if text is not None:
                self.content.setdefault((activity, link, kind), set()).add(text)
        self.decided_by = {
            call: arguments_by[entity]
            for call, entity in self.decided_by.items()
            if entity in arguments_by
        }
        self.heads: dict[str, SessionView] = {}
        if "AgentSession" in self.kinds.values():
            self.heads = _sub_sessions(backend, graph, session, texts)
        self.usage = usage_totals(backend, graph, [session, *self.heads])
        self.evaluations = evaluations_of(backend, graph, [session, *self.heads])
        self.placed: dict[str, list[str]] = {}
        """Holder (session, iteration or tool call) -> what is shown under it, in run order."""
        self.children: dict[str, list[str]] = {}
        """Activity -> the activities directly part of it, in run order."""
        for activity, parent in self.parents.items():
            self.children.setdefault(parent, []).append(activity)

    def _one(self, activity: str, link: str, kind: str) -> str | None:
        # One value, or None where parallel calls each hold their own.
        values = self.content.get((activity, link, kind), set())
        return next(iter(values)) if len(values) == 1 else None

    def build(self, run: SessionView) -> SessionView:
        sessions = {run.id, *self.heads}
        iterations = [a for a, kind in self.kinds.items() if kind == "Iteration"]
        for activity in iterations:
            home = _nearest(activity, self.parents, sessions)
            self.placed.setdefault(home or self._run, []).append(activity)
        holders = {*iterations, *sessions}
        for activity, kind in self.kinds.items():
            step = self._step(activity, kind)
            if step is not None:
                self.placed.setdefault(step, []).append(activity)
                if kind == "ToolCall":
                    holders.add(activity)
        for activity in self.kinds:
            if activity in self.heads:
                holder = _nearest(activity, self.parents, holders)
                self.placed.setdefault(holder or self._run, []).append(activity)
        return self._session(run, {run.id})

    def _step(self, activity: str, kind: str) -> str | None:
        """The iteration a model or tool call is shown under: the iteration span around it,
        else, in a step the mapper inferred (third-party spans), the step the model call
        opened or the step that generated the arguments the tool call used."""
        if kind not in ("ModelCall", "ToolCall"):
            return None
        found: str | None = self.parents[activity]
        if self.kinds.get(found or "") != "Iteration":
            found = f"{activity}:{STEP}" if kind == "ModelCall" else self.decided_by.get(activity)
        return found if self.kinds.get(found or "") == "Iteration" else None

    def _under(self, holder: str, kind: str) -> list[str]:
        return [a for a in self.placed.get(holder, []) if self.kinds.get(a) == kind]

    def _subs(self, holder: str, seen: set[str]) -> tuple[SessionView, ...]:
        # ``seen`` ends a partOf loop of a hand-edited store.
        return tuple(
            self._session(self.heads[sub], seen | {sub})
            for sub in self._under(holder, "AgentSession")
            if sub not in seen
        )

    def _session(self, head: SessionView, seen: set[str]) -> SessionView:
        steps = [self._iteration(step, seen) for step in self._under(head.id, "Iteration")]
        steps.sort(key=lambda it: it.number if it.number is not None else 1 << 62)
        return replace(
            head,
            iterations=tuple(steps),
            sub_sessions=self._subs(head.id, seen),
            usage=self.usage[head.id],
            evaluations=self.evaluations[head.id],
        )

    def _iteration(self, activity: str, seen: set[str]) -> IterationView:
        props = self.properties.get(activity, {})
        return IterationView(
            id=activity,
            number=_int(props.get("number")),
            thought=self._one(activity, "generated", "Thought"),
            action=props.get("action"),
            arguments=self._one(activity, "generated", "Arguments"),
            observation=self._one(activity, "generated", "Observation"),
            status=self.statuses[activity],
            tool_calls=tuple(self._tool_call(c, seen) for c in self._under(activity, "ToolCall")),
            model_calls=tuple(self._model_call(c) for c in self._under(activity, "ModelCall")),
            sub_sessions=self._subs(activity, seen),
            start=self.times[activity][0],
            end=self.times[activity][1],
        )

    def _tool_call(self, activity: str, seen: set[str]) -> ToolCallView:
        props = self.properties.get(activity, {})
        return ToolCallView(
            id=activity,
            name=props.get("tool", ""),
            call_id=props.get("call_id"),
            status=self.statuses[activity],
            error_type=props.get("error_type"),
            error_message=props.get("error_message"),
            arguments=self._one(activity, "used", "Arguments"),
            observation=self._one(activity, "generated", "Observation"),
            sub_sessions=self._subs(activity, seen),
            start=self.times[activity][0],
            end=self.times[activity][1],
            downstream=tuple(self._downstream(activity, 1)),
        )

    def _downstream(self, holder: str, depth: int) -> Iterator[DownstreamView]:
        """The spans under ``holder`` depth first, through spans only, and the sessions
        directly under them (their own calls are theirs)."""
        for activity in self.children.get(holder, []):
            kind = self.kinds[activity]
            if kind not in ("Span", "AgentSession") or (kind == "AgentSession" and depth == 1):
                continue  # a session the call started itself is no service's
            yield self._downstream_view(activity, depth)
            if kind == "Span":
                yield from self._downstream(activity, depth + 1)

    def _downstream_view(self, activity: str, depth: int) -> DownstreamView:
        props = self.properties.get(activity, {})
        start, end = self.times[activity]
        session = self.kinds[activity] == "AgentSession"
        name = self.heads[activity].agent if session and activity in self.heads else None
        return DownstreamView(
            id=activity,
            kind="session" if session else "span",
            name=name or self.labels[activity],
            service=props.get("service"),
            status=self.statuses[activity],
            depth=depth,
            start=start,
            end=end,
            duration_ms=None if start is None or end is None else milliseconds_between(start, end),
            error_type=props.get("error_type"),
            error_message=props.get("error_message"),
        )

    def _model_call(self, activity: str) -> ModelCallView:
        props = self.properties.get(activity, {})
        tokens = {kind: int(props[kind]) for kind in TOKEN_PROPERTIES if kind in props}
        amount = props.get("cost")
        return ModelCallView(
            id=activity,
            model=props.get("model"),
            input_tokens=tokens.get("input"),
            output_tokens=tokens.get("output"),
            status=self.statuses[activity],
            tokens=tokens,
            cost=None if amount is None else Cost(Decimal(amount), props.get("currency")),
            start=self.times[activity][0],
            end=self.times[activity][1],
            downstream=tuple(self._downstream(activity, 1)),
        )


def _sub_sessions(
    backend: QueryBackend, graph: str, session: str, texts: dict[str, str]
) -> dict[str, SessionView]:
    """The head of every session nested in the run, by IRI: which they are, then their
    heads together."""
    subs = [row["sub"] or "" for row in backend.query(sub_sessions_query(graph, session)).rows]
    if not subs:
        return {}
    rows_by_sub: dict[str, list[Mapping[str, str | None]]] = {}
    for row in backend.query(sub_session_heads_query(graph, subs)).rows:
        rows_by_sub.setdefault(row["sub"] or "", []).append(row)
    return {sub: _session_head(sub, _settled_row(rows), texts) for sub, rows in rows_by_sub.items()}


def _nearest(activity: str, parents: Mapping[str, str], places: Iterable[str]) -> str | None:
    """The first of the activity's ancestors that is one of ``places``.

    ``None`` when none is: a parent the queries did not read (one without a start time
    or status) ends the chain, and so does a ``partOf`` loop in a hand-edited store.
    """
    wanted = set(places)
    seen = {activity}
    parent = parents.get(activity)
    while parent is not None and parent not in wanted and parent not in seen:
        seen.add(parent)
        parent = parents.get(parent)
    return parent if parent is not None and parent in wanted else None
