"""Agent sessions read back from a store: the typed views and how rows become them.

The SPARQL lives in :mod:`otel_prov.prov._queries`; here its rows are put together.
A run is its outermost session.  Sessions nest: a sub-agent's session (a handoff, a
tool that delegates to another agent) is ``oprov:partOf`` an activity of its parent's,
and a run's view nests it where it started instead of mixing its iterations into the
run's.  Views are frozen: what a reader returns cannot be changed behind its back.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal

import pyoxigraph

from otel_prov.processing._blobs import BlobError, read_blob
from otel_prov.prov._iris import STEP
from otel_prov.prov._queries import (
    TOKEN_PROPERTIES,
    RunFilter,
    activities_query,
    content_links_query,
    content_query,
    evaluated_query,
    evaluations_query,
    find_query,
    marks_count_query,
    model_calls_query,
    properties_query,
    run_counts_query,
    run_details_query,
    run_page_query,
    session_head_query,
    session_members_query,
    sub_sessions_query,
    subject_triples_query,
    unmarked_runs_query,
    usage_totals_query,
)
from otel_prov.prov._rdf import OPROV, PROV, datetime_literal, instant_order
from otel_prov.read._backend import QueryBackend
from otel_prov.read._plans import PlanView, PostconditionView, plans_and_postconditions
from otel_prov.read._text_index import TextIndex, chunks

__all__ = [
    "CONTENT_DESCRIPTORS",
    "Cost",
    "EvaluationView",
    "IterationView",
    "ModelCallView",
    "SessionSummary",
    "SessionView",
    "ToolCallView",
    "Usage",
    "content_text",
    "evaluations_of",
    "find_sessions",
    "has_unmarked_runs",
    "list_runs",
    "load_session",
    "member_triples",
    "settled_status",
    "usage_totals",
]


@dataclass(frozen=True)
class Cost:
    amount: Decimal
    currency: str | None
    """ISO 4217 code; None where the calls priced did not say."""


@dataclass(frozen=True)
class EvaluationView:
    """One evaluation of a session or of an activity in it."""

    name: str
    score: float | None
    label: str | None
    explanation: str | None
    evaluator: str | None
    evaluates: str
    """The IRI of the session or activity judged."""
    annotation: str | None = None
    """The ``otel-prov annotate`` that added it after the run (None: made in the run)."""


@dataclass(frozen=True)
class Usage:
    """Tokens and cost of a session's model calls, sub-agent sessions included."""

    tokens: Mapping[str, int] = field(default_factory=dict)
    """Token kind (``input``, ``output``, ``cache_read``, ``cache_write``, ``reasoning``)
    -> total, for the kinds some model call reported."""
    costs: tuple[Cost, ...] = ()
    """One total per currency: amounts in different currencies are not added."""

    @property
    def cost(self) -> Cost | None:
        """The total cost, or None when nothing was priced or the currencies are mixed."""
        return self.costs[0] if len(self.costs) == 1 else None


@dataclass(frozen=True)
class SessionSummary:
    """One run in a listing: the counts are the whole run's, sub-agent sessions included."""

    id: str
    start: str
    """``xsd:dateTime`` in UTC, canonical (``2025-11-30T09:15:02.5Z``)."""
    agent: str | None
    question: str | None
    iterations: int
    tool_calls: int
    status: str
    """``ok``, ``error`` or ``incomplete`` (exported before its span ended)."""
    trace_id: str
    failed_calls: int = 0
    usage: Usage = Usage()
    evaluations: tuple[EvaluationView, ...] = ()
    """Of the run, any activity in it and its sub-sessions, made in it or added later."""


@dataclass(frozen=True)
class ToolCallView:
    id: str
    name: str
    call_id: str | None
    status: str
    error_type: str | None
    error_message: str | None
    arguments: str | None
    observation: str | None
    sub_sessions: tuple[SessionView, ...] = ()
    """Sessions this call started: a handoff's specialist, an agent used as a tool."""
    start: str | None = None
    """``xsd:dateTime`` in UTC, as :attr:`SessionView.start`."""
    end: str | None = None


@dataclass(frozen=True)
class ModelCallView:
    id: str
    model: str | None
    input_tokens: int | None
    output_tokens: int | None
    status: str
    tokens: Mapping[str, int] = field(default_factory=dict)
    """Every token count reported, by kind (as :attr:`Usage.tokens`)."""
    cost: Cost | None = None
    start: str | None = None
    end: str | None = None


@dataclass(frozen=True)
class IterationView:
    id: str
    number: int | None
    thought: str | None
    action: str | None
    arguments: str | None
    observation: str | None
    status: str
    tool_calls: tuple[ToolCallView, ...] = ()
    model_calls: tuple[ModelCallView, ...] = ()
    sub_sessions: tuple[SessionView, ...] = ()
    """Sessions started in this iteration outside any tool call shown."""
    start: str | None = None
    end: str | None = None


@dataclass(frozen=True)
class SessionView:
    """One session; a sub-agent's session is nested where it started, as its own view.

    Text fields (question, answer, and those of iterations and calls) hold the value as
    recorded; where only a preview, a hash or a size was kept, the text says so in
    brackets.
    """

    id: str
    trace_id: str
    span_id: str
    agent: str | None
    conversation_id: str | None
    status: str
    """The session's own outcome: ``ok`` (it answered, even past failed calls),
    ``error`` (it raised: see ``error_type``) or ``incomplete`` (it never ended)."""
    start: str
    end: str | None
    question: str | None
    answer: str | None
    answered_by: str | None = None
    """The sub-session whose answer ``answer`` is, when the run's own session gave none."""
    failed_calls: int = 0
    """Tool and model calls of the session that failed (``oprov:failedCalls``): a fact
    apart from ``status``, which is the session's own."""
    error_type: str | None = None
    """Why the session failed, when its ``status`` is ``error``."""
    error_message: str | None = None
    iterations: tuple[IterationView, ...] = ()
    sub_sessions: tuple[SessionView, ...] = ()
    """Sessions started by the session itself, outside any iteration shown."""
    usage: Usage = Usage()
    """Tokens and cost of this session's model calls, its sub-sessions' included."""
    evaluations: tuple[EvaluationView, ...] = ()
    """Of this session or an activity in it (its sub-sessions' included), oldest first."""
    plans: tuple[PlanView, ...] = ()
    """Plans made in the run (its sub-sessions' included), oldest first; on the session
    :func:`load_session` loads, empty on the sub-sessions nested in it."""
    postconditions: tuple[PostconditionView, ...] = ()
    """Postconditions checked in the run outside any plan step (those checked for a step
    are under it), oldest first; on the loaded session only, as ``plans``."""

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


def member_triples(
    backend: QueryBackend, graph: str, session: str, *, whole: str, agents: bool = False
) -> list[pyoxigraph.Triple]:
    """Every triple of the session's members (with its agents when ``agents``): one
    query finds them by their ``partOf`` path, a second reads their triples.  Asked as
    one query (``whole``, a CONSTRUCT of the same triples), the embedded store joins the
    members with ``?x ?p ?o`` over the whole graph: 1.7 s a run over 10,000 runs, where
    the two anchored queries take milliseconds.  ``whole`` is still asked when a member
    is a blank node (someone added one), which no query can name."""
    found = backend.query(session_members_query(graph, session, agents=agents)).rows
    members = [row["x"] or "" for row in found]
    if any(member.startswith("_:") for member in members):
        return backend.query(whole).triples
    return backend.query(subject_triples_query(graph, members)).triples if members else []


def list_runs(
    backend: QueryBackend,
    graph: str,
    where: RunFilter,
    limit: int,
    *,
    search: tuple[TextIndex, str, tuple[str, str] | None] | None = None,
) -> list[SessionSummary]:
    """Runs, newest first, at most ``limit``: paged by the store, then described.

    Runs sealed by this version are marked (``oprov:runStartedAt``) and listed from the
    mark alone.  When the store also holds runs sealed before the mark, the listing
    tells runs by the slower path query instead, so that none is left out.  ``search``
    (an index, the text as typed and the cursor's start and IRI) finds the runs whose
    question or answer holds the text from the index instead of a scan of the store,
    when every run is marked; ``where.text`` is then not read.
    """
    marked = not has_unmarked_runs(backend, graph)
    if search is not None and marked:
        page = _searched_page(backend, graph, where, limit, *search)
    elif marked and _by_run(where) != RunFilter():
        page = _filtered_page(backend, graph, where, limit)
    else:
        page = backend.query(run_page_query(graph, where, limit, marked=marked)).rows
    runs = list(dict.fromkeys(row["s"] or "" for row in page))
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
        page += backend.query(
            run_page_query(graph, replace(rest, among=among), limit - len(page))
        ).rows
        if len(page) >= limit:
            break
    return page


def _by_run(where: RunFilter) -> RunFilter:
    """The filters a run's start alone does not decide (agent, service, status, text)."""
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
    by_start = replace(where, agent=None, service=None, status=None, text=None)
    by_run = _by_run(where)
    page: list[dict[str, str | None]] = []
    size = _CANDIDATES
    while len(page) < limit:
        if size > _MOST_BATCHED:  # few runs match: the page is one query over all
            return backend.query(run_page_query(graph, where, limit)).rows
        batch = backend.query(run_page_query(graph, by_start, size)).rows
        if not batch:
            break
        among = tuple(f"<{row['s']}>" for row in batch)
        page += backend.query(
            run_page_query(graph, replace(by_run, among=among), limit - len(page))
        ).rows
        if len(batch) < size:
            break
        last = batch[-1]
        start = datetime_literal(last["start"] or "")
        by_start = replace(by_start, after=(start, f"<{last['s']}>"))
        size *= 2
    return page


def evaluations_of(
    backend: QueryBackend, graph: str, sessions: Sequence[str]
) -> dict[str, tuple[EvaluationView, ...]]:
    """Each session's evaluations (a query for all of them, and one more when any is
    found)."""
    found: dict[str, dict[str, EvaluationView]] = {session: {} for session in sessions}
    pairs = [
        (row["s"] or "", row["e"] or "")
        for row in backend.query(evaluated_query(graph, sessions)).rows
    ]
    rows = backend.query(evaluations_query(graph, pairs)).rows if pairs else []
    for row in rows:
        score = row["score"]
        found[row["s"] or ""].setdefault(
            row["e"] or "",
            EvaluationView(
                name=row["name"] or "",
                score=None if score is None else float(score),
                label=row["label"],
                explanation=row["explanation"],
                evaluator=row["evaluator"],
                evaluates=row["a"] or "",
                annotation=row["annotation"],
            ),
        )
    return {session: tuple(views.values()) for session, views in found.items()}


_TOKEN_KINDS = {f"{OPROV}{name}": kind for kind, name in TOKEN_PROPERTIES.items()}


def usage_totals(backend: QueryBackend, graph: str, sessions: Sequence[str]) -> dict[str, Usage]:
    """Each session's :class:`Usage`, summed by the store (two queries for all of them:
    the calls, then their usage)."""
    tokens: dict[str, dict[str, int]] = {session: {} for session in sessions}
    costs: dict[str, list[Cost]] = {session: [] for session in sessions}
    calls = [
        (row["s"] or "", row["call"] or "")
        for row in backend.query(model_calls_query(graph, sessions)).rows
    ]
    totals = backend.query(usage_totals_query(graph, calls)).rows if calls else []
    for row in totals:
        session, prop, total = row["s"] or "", row["p"] or "", row["total"] or "0"
        if prop in _TOKEN_KINDS:
            tokens[session][_TOKEN_KINDS[prop]] = int(Decimal(total))
        else:
            costs[session].append(Cost(Decimal(total), row["currency"] or None))
    return {
        session: Usage(
            {kind: tokens[session][kind] for kind in TOKEN_PROPERTIES if kind in tokens[session]},
            tuple(costs[session]),
        )
        for session in sessions
    }


def has_unmarked_runs(backend: QueryBackend, graph: str) -> bool:
    """Whether the store holds runs sealed before ``oprov:runStartedAt`` (see the README).

    Plain counts answer first (:func:`~otel_prov.prov._queries.marks_count_query`);
    each run has one bundle and each revision one more, so when the bundles of runs
    are no more than the marks, every run is marked; otherwise the sessions are
    counted one by one."""
    counts = backend.query(marks_count_query(graph)).rows[0]
    number = {name: int(value or 0) for name, value in counts.items()}
    if number["bundles"] - number["revisions"] - number["annotations"] <= number["marked"]:
        return False
    row = backend.query(unmarked_runs_query(graph)).rows[0]
    return int(row["marked"] or 0) < int(row["sealed"] or 0)


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
        question=first("question"),
        iterations=counts.get((run, "Iteration"), 0),
        tool_calls=counts.get((run, "ToolCall"), 0),
        status=settled_status(row["status"] for row in rows),
        trace_id=first("trace") or "",
        failed_calls=max((int(row["failed"] or 0) for row in rows), default=0),
    )


def settled_status(statuses: Iterable[str | None]) -> str:
    """The status of a session recorded more than once: a session exported
    ``incomplete`` (its span was still open at the timeout) and later again, when it
    ended, holds both literals; the later one is what happened."""
    found = {status for status in statuses if status}
    final = found - {"incomplete"}
    if "error" in final:
        return "error"
    return min(final) if final else ("incomplete" if found else "")


def find_sessions(backend: QueryBackend, graph: str, ident: str) -> list[str]:
    """Runs matching a session IRI, a trace id or a conversation id, oldest first."""
    return [row["s"] or "" for row in backend.query(find_query(graph, ident)).rows]


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


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
        _session_view(session, _settled_row(head), texts)
    )
    if view.answer is None:
        answered = [sub for sub in view.nested_sessions() if sub.answer is not None]
        if answered:
            last = max(answered, key=lambda sub: instant_order(sub.end or sub.start))
            view = replace(view, answer=last.answer, answered_by=last.id)
    plans, postconditions = plans_and_postconditions(backend, graph, session)
    return replace(view, plans=plans, postconditions=postconditions)


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
        for row in backend.query(activities_query(graph, session)).rows:
            activity = row["a"] or ""
            if activity not in self.kinds:
                self.kinds[activity] = (row["type"] or "").removeprefix(OPROV)
                self.parents[activity] = row["parent"] or ""
                self.statuses[activity] = row["status"] or ""
                self.times[activity] = (row["start"], row["end"])
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
        )


def _sub_sessions(
    backend: QueryBackend, graph: str, session: str, texts: dict[str, str]
) -> dict[str, SessionView]:
    """The head of every session nested in the run, by IRI, from one query."""
    rows_by_sub: dict[str, list[Mapping[str, str | None]]] = {}
    for row in backend.query(sub_sessions_query(graph, session)).rows:
        rows_by_sub.setdefault(row["sub"] or "", []).append(row)
    return {sub: _session_view(sub, _settled_row(rows), texts) for sub, rows in rows_by_sub.items()}


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
