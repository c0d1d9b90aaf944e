"""Agent sessions as the read API returns them: frozen views of runs, sessions and calls.

A run is its outermost session.  Sessions nest: a sub-agent's session (a handoff, a
tool that delegates to another agent) is ``oprov:partOf`` an activity of its parent's,
and a run's view nests it where it started instead of mixing its iterations into the
run's.  Views are frozen: what a reader returns cannot be changed behind its back.
The listing (:mod:`~otel_prov.read._listing`) and the assembly of one run
(:mod:`~otel_prov.read._assembly`) build them from the store's rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from otel_prov.read._approvals import ApprovalView
from otel_prov.read._plans import PlanView, PostconditionView

__all__ = [
    "Cost",
    "DownstreamView",
    "EvaluationView",
    "IterationView",
    "ModelCallView",
    "SessionSummary",
    "SessionView",
    "ToolCallView",
    "Usage",
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
    service: str | None = None
    """The ``service.name`` of the process the run's session span came from: what the
    ``service`` filter matches."""
    end: str | None = None
    """When the run ended (``xsd:dateTime``, UTC, canonical); None while it runs, or when
    it was cut off before its end was recorded (``incomplete``)."""


@dataclass(frozen=True)
class DownstreamView:
    """An activity a tool (or model) call caused outside the agent: an HTTP client or server span,
    a database call, any span of another service, and the session a called service ran
    (``kind`` ``session``; its steps are its own :class:`SessionView` under the call)."""

    id: str
    kind: str
    """``span``, or ``session`` for an agent session reached through spans."""
    name: str
    """The span's name (``GET``, ``POST /run``, ``SELECT users``), a session's agent."""
    service: str | None
    status: str
    """As a call's: ``ok``, ``error`` (an HTTP status the OTel conventions call a
    failure included: see ``error_type``) or ``incomplete``."""
    depth: int
    """1 for a span directly under the call, 2 for one under that, and so on."""
    start: str | None = None
    end: str | None = None
    duration_ms: float | None = None
    """From ``start`` to ``end``; None when it never ended."""
    error_type: str | None = None
    """Why it failed: an exception's type, or the HTTP status code (``404``)."""
    error_message: str | None = None


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
    downstream: tuple[DownstreamView, ...] = ()
    """What the call caused outside the agent, depth first in run order: the spans
    under it (through spans only: a session's own calls are under that session) and the
    sessions directly under those spans."""


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
    downstream: tuple[DownstreamView, ...] = ()
    """The spans under the call (its HTTP request to the model's API), as
    :attr:`ToolCallView.downstream`."""


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
    :func:`~otel_prov.read._assembly.load_session` loads, empty on the sub-sessions
    nested in it."""
    postconditions: tuple[PostconditionView, ...] = ()
    """Postconditions checked in the run outside any plan step (those checked for a step
    are under it), oldest first; on the loaded session only, as ``plans``."""
    approvals: tuple[ApprovalView, ...] = ()
    """People's decisions on the run's tool calls, oldest first; on the loaded session
    only, as ``plans``."""

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
