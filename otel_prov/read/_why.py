"""Why an agent answered what it did: the derivation graph behind an answer, or any node.

From the answer back: the observations and thoughts it derives from, the tool calls that
returned those observations and the arguments they were called with, the steps that
chose them and the earlier observations those steps used, retrieved chunks and their
source documents, the question, and the earlier turns of the conversation.  The graph is
followed along PROV relations generically (see :data:`WHY_RELATIONS`),
so kinds of nodes the mapper gains later come along without a change here.

A failed call returned nothing, so no derivation reaches it; it is still part of why
the agent did what it did (it retried, it gave up), so the failed activities of every
step reached are added, with their error, marked as not supporting the answer.  What
each tool call reached caused outside the agent (HTTP client and server spans, database
calls, a called service's session) is added as the call's supporting activities, linked
``partOf`` it, with their service and duration.

A fixed number of queries reads it all, whatever the size of the run: a few find where to
start, one follows property paths from there (:func:`why_query`),
and two read what is said of the nodes reached and of the failed attempts among them.  The rows
become a :class:`WhyGraph` in pure functions.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import (
    OPROV,
    PROV,
    RDF,
    RDFS,
    InvalidIRIError,
    instant_order,
    iri,
    is_true,
    literal,
    milliseconds_between,
)
from otel_prov.read._assembly import CONTENT_DESCRIPTORS, content_text
from otel_prov.read._evidence import (
    QUALIFIER,
    Qualified,
    qualified_edges,
    reasoning_rows,
    unresolved_label,
)
from otel_prov.read._sparql import (
    SPARQL_PREFIXES,
    named_sessions,
    outermost,
    settled_status,
    values,
)

__all__ = [
    "FOLLOWS_TURN",
    "WhyEdge",
    "WhyGraph",
    "WhyNode",
    "WhyStart",
    "assemble_why",
    "downstream_rows",
    "load_why",
    "plan_why",
]


WHY_RELATIONS = (
    "wasDerivedFrom",
    "used",
    "wasGeneratedBy",
    "hadPrimarySource",
    "wasQuotedFrom",
    "wasInformedBy",
    "wasInfluencedBy",
    "wasRevisionOf",
)
"""The PROV relations a derivation is followed along, from what was made to what it was
made from: they hold for any kind of node (retrieved chunks and their sources, earlier
turns linked by span links), not only the ones the mapper writes today.
``wasInfluencedBy`` leads from a claim to evidence that came after it (``_evidence``),
``wasRevisionOf`` from a revised claim to the one it revises."""


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
    "oprov:reasoningId",
    "oprov:confidence",
    "oprov:unresolvedReference",
    "prov:qualifiedDerivation",
    "prov:qualifiedInfluence",
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
  {named_sessions("?s", ident, pattern)}
  {outermost("?s")}
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
  {outermost("?s")}
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
  VALUES ?s {{ {values(sessions)} }}
  ?answerBy oprov:partOf* ?s ; a oprov:AgentSession .
  ?answer prov:wasGeneratedBy ?answerBy ; a oprov:Answer .
}} }} ORDER BY ?s ?answerBy ?answer"""


def why_query(graph: str, starts: Sequence[str], sessions: Sequence[str]) -> str:
    """SELECT ``?n``: every node behind ``starts`` (IRIs), and behind what is part of
    ``sessions`` (IRIs: sessions that gave no answer: their steps and the steps' calls),
    by property paths.

    What is said of each node is asked for apart (:func:`why_properties_query`), with
    the nodes written in: joined to the paths here, as an ``OPTIONAL`` or a subquery,
    it took Oxigraph longer than the paths themselves.
    """
    # One branch per start, its IRI written in: Virtuoso runs a transitive path only
    # from an end bound that way (not by VALUES).
    branches = [f"{{ {iri(start)} {_WHY_PATH} ?n }}" for start in starts]
    # A session without an answer (it failed, or it is still running): its steps, and
    # their calls, which no later step may have used yet (the newest step's).
    branches += [
        f"{{ {iri(s)} ^oprov:partOf{'/^oprov:partOf' * depth}/{_WHY_PATH} ?n }}"
        for s in sessions
        for depth in (0, 1)
    ]
    if len(branches) == 1:
        # Virtuoso (7.2) refuses a transitive path standing alone ("transitive start not
        # given": why of one node); beside the start itself, which the path holds anyway,
        # it runs it.
        branches.append(f"{{ BIND({iri(starts[0])} AS ?n) }}")
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
  VALUES ?n {{ {values(nodes)} }}
  ?n ?p ?o . FILTER(?p IN ({", ".join(WHY_PROPERTIES)}))
}} }}"""


_DOWNSTREAM_PROPERTIES = (*WHY_PROPERTIES, "oprov:serviceName", "prov:endedAtTime")
"""What :func:`why_downstream_query` reads: a node's, and its service and end."""


def why_downstream_query(graph: str, calls: Sequence[str]) -> str:
    """SELECT ``?n ?p ?o``: every span and session part of one of ``calls`` (IRIs of the
    tool calls ``why`` reached), with what :data:`_DOWNSTREAM_PROPERTIES` says of it;
    :func:`downstream_rows` keeps those the call caused outside the agent."""
    branches = "\n  UNION ".join(f"{{ ?n oprov:partOf+ {iri(call)} }}" for call in calls)
    return f"""{SPARQL_PREFIXES}
SELECT ?n ?p ?o WHERE {{ GRAPH {graph} {{
  {branches}
  ?n a ?kind . FILTER(?kind IN (oprov:Span, oprov:AgentSession))
  ?n ?p ?o . FILTER(?p IN ({", ".join(_DOWNSTREAM_PROPERTIES)}))
}} }}"""


def downstream_rows(
    rows: Sequence[Mapping[str, str | None]], calls: Iterable[str]
) -> list[dict[str, str | None]]:
    """The rows of :func:`why_downstream_query` of the spans under ``calls`` through
    spans only, and of the sessions directly under those spans: a session's own calls
    and their spans are that session's (as :attr:`ToolCallView.downstream` has them)."""
    parents: dict[str, str] = {}
    kinds: dict[str, set[str]] = {}
    for row in rows:
        node = row["n"] or ""
        if row["p"] == f"{OPROV}partOf":
            parents[node] = row["o"] or ""
        if row["p"] == RDF + "type":
            kinds.setdefault(node, set()).add(row["o"] or "")
    spans = {node for node, types in kinds.items() if f"{OPROV}Span" in types}
    kept: set[str] = set()
    holders = set(calls)
    grew = True
    while grew:
        found = {node for node in spans - kept if parents.get(node) in holders}
        kept |= found
        holders |= found
        grew = bool(found)
    kept |= {
        node
        for node, types in kinds.items()
        if f"{OPROV}AgentSession" in types and parents.get(node) in kept
    }
    return [{**row, "attempt": "downstream"} for row in rows if row["n"] in kept]


def why_attempts_query(graph: str, holders: Sequence[str]) -> str:
    """SELECT ``?n ?holder ?p ?o``: each failed activity (``oprov:status "error"``) and
    each rejected call (``oprov:decision "rejected"``) made in one of ``holders`` (IRIs of
    the sessions and steps ``why`` reached), with what :data:`WHY_PROPERTIES` says of it.
    A failed tool call produced nothing, and a rejected one never ran, so no derivation
    leads to them, yet they are part of why the agent did what it did.

    Made in a holder as ``show`` places a call: part of it, or (third-party spans, where
    a framework's span sits between the step the mapper inferred and the call) calling
    with the arguments the holder generated.  ``?holder`` says which, whatever span the
    call is stored as part of."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?n ?holder ?p ?o WHERE {{ GRAPH {graph} {{
  VALUES ?holder {{ {values(holders)} }}
  {{ ?n oprov:partOf ?holder }}
  UNION {{ ?n prov:used ?arguments . ?arguments a oprov:Arguments ; prov:wasGeneratedBy ?holder }}
  {{ ?n oprov:status "error" }} UNION {{ ?n oprov:decision "rejected" }}
  ?n ?p ?o . FILTER(?p IN ({", ".join(WHY_PROPERTIES)}))
}} }}"""


FOLLOWS_TURN = "followsTurn"
"""The relation from a session to the turn before it in the same conversation (same
``oprov:sessionId``): not a stored triple but what the conversation id says."""

PART_OF = "partOf"
"""The relation from a failed attempt to the step (or session) it was made in, and from
what a tool call caused outside the agent to the call (or the span) it is part of."""

_KINDS = (
    "AgentSession",
    "Iteration",
    "ToolCall",
    "ModelCall",
    "Retrieval",
    "Span",
    "Question",
    "Thought",
    "Arguments",
    "Observation",
    "Answer",
    "Document",
    "Approval",
    "Decision",
    "Hypothesis",
    "Goal",
)
"""The ``oprov`` classes, most telling first, that name a node's type."""

UNRESOLVED = "UnresolvedReference"
"""The type of a node standing for what evidence rests on when no entity has its name."""

_ACTIVITY_KINDS = frozenset(_KINDS[:6]) | {"Activity", "Approval"}


@dataclass(frozen=True)
class WhyNode:
    """One activity or entity of the graph.

    ``type`` is its ``oprov`` class (``Answer``, ``ToolCall``, ``Document``...), else
    ``Entity`` or ``Activity``; ``label`` its text (a value as recorded, a tool call's
    name and call id, a step's number).  ``supports_answer`` is false for a failed
    attempt: a call that returned nothing the answer could rest on.
    """

    id: str
    type: str
    label: str
    call_id: str | None = None
    tool: str | None = None
    status: str | None = None
    error: str | None = None
    supports_answer: bool = True
    time: str | None = None
    """When it started (an activity) or was generated (an entity), canonical UTC."""
    number: int | None = None
    """A step's iteration number."""
    part_of: str | None = None
    """The node of the graph this activity is directly part of (a call's step, a step's
    session): where the why-graph draws it."""
    service: str | None = None
    """The service that ran it, for what a tool call caused outside the agent."""
    duration_ms: float | None = None
    """How long it took, for what a tool call caused outside the agent."""
    reasoning_id: str | None = None
    """The id a goal, hypothesis or decision has in its run."""
    confidence: float | None = None
    """How sure the agent (or a reviewer) was of a hypothesis or decision, 0 to 1."""

    def as_json(self) -> dict[str, Any]:
        """The node as ``why --format json`` writes it: ``id``, ``type``, ``label``, and
        ``call_id``, ``tool``, ``status``, ``error``, ``part_of``, ``service``,
        ``duration_ms``, ``reasoning_id``, ``confidence`` where they apply;
        ``supports_answer: false`` on failed attempts."""
        out: dict[str, Any] = {"id": self.id, "type": self.type, "label": self.label}
        names = ("call_id", "tool", "status", "error", "part_of", "service", "duration_ms")
        for name in (*names, "reasoning_id", "confidence"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if not self.supports_answer:
            out["supports_answer"] = False
        return out


@dataclass(frozen=True)
class WhyEdge:
    """``source`` stands in ``relation`` to ``target``: a PROV relation's local name
    (``wasDerivedFrom``, ``used``, ``wasGeneratedBy``, ``hadPrimarySource``,
    ``wasQuotedFrom``, ``wasInformedBy``, ``wasInfluencedBy``, ``wasRevisionOf``),
    ``partOf`` from a failed attempt to its step and from what a call caused to the
    call, ``followsTurn`` from a session to the conversation's turn before it;
    ``supportedBy``, ``contradictedBy`` (evidence) and ``adopts`` (a decision's
    hypothesis) from a claim to what it rests on, or ``wasAttributedTo`` from a
    reviewer's revision to the reviewer.

    Evidence has its ``weight`` (0 to 1, when the agent gave one) and ``considered``:
    what it rests on was there when the claim was made (false: it came later, or the
    agent named something the run does not have)."""

    source: str
    target: str
    relation: str
    weight: float | None = None
    considered: bool | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"from": self.source, "to": self.target, "relation": self.relation}
        if self.weight is not None:
            out["weight"] = self.weight
        if self.considered is not None:
            out["considered"] = self.considered
        return out


@dataclass(frozen=True)
class WhyGraph:
    """The derivation graph behind ``root``: the root first, the other nodes in time
    order; every edge's ends are among the nodes."""

    root: str
    nodes: tuple[WhyNode, ...]
    edges: tuple[WhyEdge, ...]
    _by_id: dict[str, WhyNode] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_id.update((node.id, node) for node in self.nodes)

    def node(self, ident: str) -> WhyNode:
        """The node with IRI ``ident``; ``KeyError`` when the graph has none."""
        return self._by_id[ident]

    def outgoing(self, ident: str) -> tuple[WhyEdge, ...]:
        """The edges from node ``ident``, in the graph's order."""
        return tuple(edge for edge in self.edges if edge.source == ident)

    def as_json(self) -> dict[str, Any]:
        """``{"root", "nodes": [{"id", "type", "label", ...}], "edges": [{"from", "to",
        "relation"}]}``, as ``otel-prov why --format json`` writes it."""
        return {
            "root": self.root,
            "nodes": [node.as_json() for node in self.nodes],
            "edges": [edge.as_json() for edge in self.edges],
        }


@dataclass(frozen=True)
class WhyStart:
    """Where to follow derivations from: what the first query found, decided."""

    root: str
    starts: tuple[str, ...]
    unanswered: tuple[str, ...] = ()
    """Sessions without an answer: their steps are started from too."""
    turns: tuple[str, ...] = ()
    """The conversation's sessions, oldest first, the root's last."""


def load_why(backend: QueryBackend, graph: str, ident: str) -> WhyGraph:
    """The graph behind ``ident``: a session (IRI, trace id or conversation id: the
    newest run it names, with the conversation's earlier turns) or any activity or
    entity IRI.  Raises ``LookupError`` when the store has nothing by that name."""
    start = plan_why(_start_rows(backend, graph, ident))
    if start is None:
        raise LookupError(f"no session, activity or entity {ident!r}")
    return assemble_why(start, _graph_rows(backend, graph, start))


_HOLDERS = (f"{OPROV}Iteration", f"{OPROV}AgentSession")
"""The kinds of node whose failed parts :func:`_graph_rows` adds as attempts."""
_TOOL_CALL = f"{OPROV}ToolCall"


def _graph_rows(backend: QueryBackend, graph: str, start: WhyStart) -> list[dict[str, str | None]]:
    """The rows :func:`assemble_why` reads (``n``, ``attempt``, ``p``, ``o``), from four
    queries: the nodes reached by the paths, what is said of them, the failed
    activities of the steps and sessions among them, and what the tool calls among
    those caused outside the agent, each anchored on IRIs the one before found (see
    :func:`why_query`).  ``attempt`` is ``true`` for a failed attempt, ``downstream``
    for what a call caused."""
    reached = [
        row["n"] or ""
        for row in backend.query(why_query(graph, start.starts, start.unanswered)).rows
    ]
    rows: list[dict[str, str | None]] = [
        {"n": node, "attempt": "false", "p": None, "o": None} for node in reached
    ]
    if not reached:
        return rows
    described = backend.query(why_properties_query(graph, reached)).rows
    rows += [{**row, "attempt": "false"} for row in described]
    rows += reasoning_rows(backend, graph, described, WHY_PROPERTIES)
    holders = sorted(
        {row["n"] or "" for row in described if row["p"] == RDF + "type" and row["o"] in _HOLDERS}
    )
    if holders:
        attempts = backend.query(why_attempts_query(graph, holders)).rows
        rows += [
            {"n": row["n"], "attempt": "true", "p": row["p"], "o": row["o"]} for row in attempts
        ]
        made_in = sorted({(row["n"], row["holder"]) for row in attempts})
        rows += [
            {"n": node, "attempt": "true", "p": f"{OPROV}partOf", "o": holder}
            for node, holder in made_in
        ]
    calls = sorted(
        {row["n"] or "" for row in rows if row["p"] == RDF + "type" and row["o"] == _TOOL_CALL}
    )
    if calls:
        caused = backend.query(why_downstream_query(graph, calls)).rows
        rows += downstream_rows(caused, calls)
    return rows


def _start_rows(backend: QueryBackend, graph: str, ident: str) -> list[dict[str, str | None]]:
    """The rows :func:`plan_why` reads (``s``, ``start``, ``kind``, ``answer``,
    ``answerBy``), from queries each anchored on what the one before found (see
    :func:`why_starts_query`): the runs ``ident`` names, the
    earlier turns of their conversations, else the node ``ident`` is an IRI of; then
    the answers given in each."""
    runs = backend.query(why_starts_query(graph, ident)).rows
    session = f"{OPROV}AgentSession"
    found: list[dict[str, str | None]] = [
        {"s": row["s"], "start": row["start"], "kind": session} for row in runs
    ]
    turns = sorted(
        {
            (row["conversation"], row["start"])
            for row in runs
            if row["conversation"] and row["start"]
        }
    )
    if turns:
        earlier = backend.query(earlier_turns_query(graph, turns)).rows
        found += [{"s": row["s"], "start": row["start"], "kind": session} for row in earlier]
    if not found:
        with contextlib.suppress(InvalidIRIError):
            kinds = backend.query(why_node_query(graph, ident)).rows
            found = [{"s": ident, "start": None, "kind": row["kind"]} for row in kinds]
    named = sorted({row["s"] or "" for row in found})
    answers: dict[str, list[tuple[str | None, str | None]]] = {}
    if named:
        for row in backend.query(answers_query(graph, named)).rows:
            answers.setdefault(row["s"] or "", []).append((row["answer"], row["answerBy"]))
    return [
        {**row, "answer": answer, "answerBy": by}
        for row in found
        for answer, by in answers.get(row["s"] or "", [(None, None)])
    ]


def plan_why(rows: Sequence[Mapping[str, str | None]]) -> WhyStart | None:
    """Rows of :func:`why_starts_query` -> where to start.

    A session starts from its answer (one of its own, else the last of a sub-session's:
    a handoff's specialist answers) and from itself (its question); a session that gave
    none, from its steps too.  ``None`` when the rows name nothing.
    """
    if not rows:
        return None
    starts: dict[str, str] = {}
    answers: dict[str, set[tuple[str, str]]] = {}
    kinds: dict[str, set[str]] = {}
    for row in rows:
        node = row["s"] or ""
        kinds.setdefault(node, set()).add(row["kind"] or "")
        if row["start"] is not None:
            starts[node] = row["start"]
        if row["answer"] is not None:
            answers.setdefault(node, set()).add((row["answerBy"] or "", row["answer"]))
    sessions = sorted(starts, key=lambda s: (instant_order(starts[s]), s))
    if not sessions:
        (node,) = kinds  # the node branch binds the one IRI asked about
        if f"{OPROV}AgentSession" not in kinds[node]:
            return WhyStart(root=node, starts=(node,))
        sessions = [node]
    given = {session: _answer_of(session, answers.get(session, set())) for session in sessions}
    unanswered = tuple(session for session in sessions if given[session] is None)
    begin = [start for s in sessions for start in (given[s], s) if start is not None]
    return WhyStart(
        root=given[sessions[-1]] or sessions[-1],
        starts=tuple(dict.fromkeys(begin)),
        unanswered=unanswered,
        turns=tuple(sessions),
    )


def _answer_of(session: str, answers: Iterable[tuple[str, str]]) -> str | None:
    found = sorted(answers)
    own = [answer for by, answer in found if by == session]
    return own[0] if own else (found[-1][1] if found else None)


def assemble_why(start: WhyStart, rows: Sequence[Mapping[str, str | None]]) -> WhyGraph:
    """Rows of :func:`why_query` -> the graph (pure)."""
    props: dict[str, dict[str, list[str]]] = {}
    qualifiers: dict[str, dict[str, list[str]]] = {}
    reached: set[str] = set()
    downstream: set[str] = set()
    for row in rows:
        node = row["n"] or ""
        described = (qualifiers if row["attempt"] == QUALIFIER else props).setdefault(node, {})
        if row["attempt"] == QUALIFIER:
            if row["p"] is not None and row["o"] is not None:
                described.setdefault(row["p"], []).append(row["o"])
            continue
        if row["attempt"] == "downstream":
            downstream.add(node)
        elif not is_true(row["attempt"]):
            reached.add(node)
        if row["p"] is not None and row["o"] is not None:
            values = described.setdefault(row["p"], [])
            if row["o"] not in values:
                values.append(row["o"])
    for node in start.starts:
        props.setdefault(node, {})
        reached.add(node)
    downstream -= reached
    # What a call caused supports the answer as the call does.
    reached |= {node for node in downstream if _caller(node, props, downstream) in reached}
    qualified = qualified_edges(props, qualifiers)
    edges = _qualify(_edges(start, props, reached, downstream), qualified, props)
    acting = {e.target for e in edges if e.relation in ("wasGeneratedBy", "wasInformedBy")}
    acting |= {e.source for e in edges if e.relation in ("used", "wasInformedBy")}
    nodes = [
        _node(node, described, node in reached, node in acting, props)
        for node, described in props.items()
    ]
    nodes += [
        WhyNode(q.node, UNRESOLVED, unresolved_label(q.reference))
        for q in qualified
        if q.basis is None
    ]
    order = {node.id: index for index, node in enumerate(_ordered(nodes, start.root))}
    return WhyGraph(
        root=start.root,
        nodes=tuple(sorted(nodes, key=lambda node: order[node.id])),
        edges=tuple(
            sorted(edges, key=lambda edge: (order[edge.source], order[edge.target], edge.relation))
        ),
    )


def _qualify(
    edges: list[WhyEdge],
    qualified: Sequence[Qualified],
    props: Mapping[str, Mapping[str, list[str]]],
) -> list[WhyEdge]:
    """``edges`` with each plain edge of evidence (or of an adoption) in the relation its
    qualifying node names, with its weight; evidence resting on nothing found gets an
    edge to a node of its own; a revision's edge to its reviewer, and not the plain
    derivation beside its ``wasRevisionOf`` (a revision is one)."""
    named: dict[tuple[str, str, str], list[Qualified]] = {}
    for q in qualified:
        if q.basis is not None:
            named.setdefault((q.claim, q.basis, q.plain), []).append(q)
    revised = {(e.source, e.target) for e in edges if e.relation == "wasRevisionOf"}
    kept = []
    for edge in edges:
        if edge.relation == "wasDerivedFrom" and (edge.source, edge.target) in revised:
            continue
        said = named.get((edge.source, edge.target, edge.relation))
        if said is None:
            kept.append(edge)
        else:  # one edge per piece of evidence: the same basis may speak for and against
            kept += [WhyEdge(q.claim, edge.target, q.relation, q.weight, q.derived) for q in said]
    kept += [
        WhyEdge(q.claim, q.node, q.relation, q.weight, False) for q in qualified if q.basis is None
    ]
    kept += [
        WhyEdge(node, person, "wasAttributedTo")
        for node, described in props.items()
        if described.get(f"{PROV}wasRevisionOf")
        for person in described.get(f"{PROV}wasAttributedTo", [])
        if person in props
    ]
    return kept


def _caller(node: str, props: Mapping[str, Mapping[str, list[str]]], downstream: set[str]) -> str:
    """The tool call above a node it caused (the first ancestor that is not of them)."""
    seen = {node}
    while node in downstream:
        node = min(props[node].get(f"{OPROV}partOf", [""]))
        if node in seen:
            break
        seen.add(node)
    return node


def _edges(
    start: WhyStart,
    props: Mapping[str, Mapping[str, list[str]]],
    reached: set[str],
    downstream: set[str],
) -> list[WhyEdge]:
    edges = [
        WhyEdge(node, target, relation)
        for node, described in props.items()
        for relation in WHY_RELATIONS
        for target in described.get(f"{PROV}{relation}", [])
        if target in props
    ]
    unanswered = set(start.unanswered)
    for node, described in props.items():
        for holder in described.get(f"{OPROV}partOf", []):
            if holder in props and (
                node not in reached or holder in unanswered or node in downstream
            ):
                edges.append(WhyEdge(node, holder, PART_OF))
    edges.extend(
        WhyEdge(later, earlier, FOLLOWS_TURN)
        for earlier, later in zip(start.turns, start.turns[1:], strict=False)
        if earlier in props and later in props
    )
    return edges


def _ordered(nodes: Sequence[WhyNode], root: str) -> list[WhyNode]:
    """The root, then the rest in time order (undated last), IRIs breaking ties."""

    def key(node: WhyNode) -> tuple[bool, bool, tuple[str, str], str]:
        return (node.id != root, node.time is None, instant_order(node.time or ""), node.id)

    return sorted(nodes, key=key)


def _node(
    node: str,
    described: Mapping[str, list[str]],
    reached: bool,
    acting: bool,
    graph: Mapping[str, object],
) -> WhyNode:
    def first(prefix: str, name: str) -> str | None:
        values = described.get(f"{prefix}{name}")
        return min(values) if values else None

    kind = _kind(described.get(f"{RDF}type", []), acting)
    tool, call_id = first(OPROV, "toolName"), first(OPROV, "toolCallId")
    number = first(OPROV, "iterationNumber")
    statuses = described.get(f"{OPROV}status", [])
    status = settled_status(statuses) if statuses else None
    error_type, message = first(OPROV, "errorType"), first(OPROV, "errorMessage")
    error = None
    if status == "error" and (error_type or message):
        error = ": ".join(part for part in (error_type, message) if part)
    fields = {
        name: values[0]
        for predicate, name in CONTENT_DESCRIPTORS.items()
        if (values := described.get(predicate))
    }
    text = content_text(fields, full=False) if fields else None
    if text is None and kind == "Approval":
        text = first(RDFS, "label")  # the decision in words, not the call it is about
    if text is None and tool is not None:
        text = f"{tool} [{call_id}]" if call_id else tool
    if text is None and number is not None and kind == "Iteration":
        text = f"iteration {number}"
    label = text or first(RDFS, "label") or node
    started, ended = first(PROV, "startedAtTime"), first(PROV, "endedAtTime")
    confidence = first(OPROV, "confidence")
    return WhyNode(
        id=node,
        type=kind,
        label=label,
        call_id=call_id,
        tool=tool,
        status=status if kind in _ACTIVITY_KINDS else None,
        error=error,
        supports_answer=reached,
        time=started or first(PROV, "generatedAtTime"),
        number=int(number) if number is not None else None,
        part_of=min((h for h in described.get(f"{OPROV}partOf", []) if h in graph), default=None),
        service=first(OPROV, "serviceName"),
        duration_ms=None if not (started and ended) else milliseconds_between(started, ended),
        reasoning_id=first(OPROV, "reasoningId"),
        confidence=None if confidence is None else float(confidence),
    )


def _kind(types: Sequence[str], acting: bool) -> str:
    """The most telling class of ``types``.  A node stored without one (a source document
    known only by its IRI, the span a link points to in another store) is told by its
    place: ``acting`` (it generated, used or informed) means an ``Activity``."""
    local = {t.removeprefix(OPROV) for t in types if t.startswith(OPROV)}
    for kind in _KINDS:
        if kind in local:
            return kind
    if local:
        return min(local)
    if f"{PROV}Person" in types:
        return "Person"
    return "Activity" if acting or f"{PROV}Activity" in types else "Entity"
