"""Plans: what the agent meant to do, recorded before it does it.

:func:`plan` records a plan when it is made (a short ``plan`` span carrying the ordered
steps) and returns a :class:`Plan` whose steps the agent then runs and marks.  An
activity started under a step (``with plan.steps[0]:`` around it, or ``step=`` on
``tool_call``/``iteration``) carries the plan's id and the step's number, which the
mapper turns into a ``prov:qualifiedAssociation`` with ``prov:hadPlan``.  What became of
each step is an ``otel_prov.plan.step_outcome`` event on the span current when it was
marked (the latest wins); a step run by ``with`` is marked ``executed``, or ``failed``
when its block raised, unless it was marked inside.  ``otel-prov verify``'s
``plan_followed`` gate then asks that every step was executed or explicitly skipped.
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.trace import Span, TracerProvider

from otel_prov import semconv as sc
from otel_prov._version import __version__
from otel_prov.capture._also_async import Scope
from otel_prov.capture._shapes import plan_shape, put_postcondition, put_step_outcome

__all__ = ["Plan", "PlanStep", "active_step", "plan", "postcondition"]

_ACTIVE: contextvars.ContextVar[PlanStep | None] = contextvars.ContextVar(
    "otel_prov_plan_step", default=None
)


def active_step() -> contextvars.ContextVar[PlanStep | None]:
    """The step whose ``with`` block is running: the next span started takes it (and
    clears it for the spans inside, which belong to that one)."""
    return _ACTIVE


class PlanStep(Scope["PlanStep"]):
    """One step of a :class:`Plan`: a context manager to run it under, and its marks."""

    def __init__(self, owner: Plan, number: int, text: str) -> None:
        self.plan = owner
        self.number = number
        """1-based, in the plan's order."""
        self.text = text
        self._marked = False
        self._token: contextvars.Token[PlanStep | None] | None = None

    @property
    def attributes(self) -> dict[str, str | int]:
        """What an activity run for this step carries."""
        return {sc.OTEL_PROV_PLAN_ID: self.plan.id, sc.OTEL_PROV_PLAN_STEP: self.number}

    def mark(self, outcome: str, *, span: Span | None = None) -> None:
        """Record what became of the step: ``executed``, ``failed``, ``skipped`` or
        ``rolled_back`` (on ``span``, else the current span, else the plan's parent)."""
        if outcome not in sc.STEP_OUTCOMES:
            raise ValueError(
                f"step outcome must be one of {', '.join(sc.STEP_OUTCOMES)}, not {outcome!r}"
            )
        target = span if span is not None else trace.get_current_span()
        if not target.is_recording():
            target = self.plan.parent
        put_step_outcome(target, self.plan.id, self.number, outcome)
        self._marked = True

    def __enter__(self) -> PlanStep:
        self._marked = False
        self._token = _ACTIVE.set(self)
        return self

    def _close(self, exc: BaseException | None) -> None:
        if self._token is not None:
            _ACTIVE.reset(self._token)
            self._token = None
        if not self._marked:
            self.mark("failed" if exc is not None else "executed")


class Plan:
    """A plan recorded by :func:`plan`; ``steps`` in order."""

    def __init__(self, span: Span, parent: Span, steps: Sequence[str]) -> None:
        self.id = format(span.get_span_context().span_id, "016x")
        """The span id of the span that recorded it (16 hex digits)."""
        self.parent = parent
        self.steps = tuple(PlanStep(self, number, text) for number, text in enumerate(steps, 1))


def plan(
    steps: Sequence[str],
    *,
    name: str = "plan",
    tracer_provider: TracerProvider | None = None,
) -> Plan:
    """Record a plan of ``steps`` (texts, in order) now, before any of them runs, under
    the current span (the session, or the iteration that planned)."""
    texts = [str(step) for step in steps]
    if not texts:
        raise ValueError("a plan needs at least one step")
    tracer = trace.get_tracer("otel_prov", __version__, tracer_provider=tracer_provider)
    parent = trace.get_current_span()
    span = plan_shape(texts, name=name).start(tracer)
    span.end()
    return Plan(span, parent, texts)


def postcondition(name: str, ok: bool, detail: str | None = None) -> None:
    """Record that a postcondition was checked, and whether it held, on the current span
    (with the step running, if any)."""
    if not name:
        raise ValueError("a postcondition needs a name")
    step = _ACTIVE.get()
    put_postcondition(
        trace.get_current_span(),
        name,
        ok=bool(ok),
        detail=detail,
        step=None if step is None else step.attributes,
    )
