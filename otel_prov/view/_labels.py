"""Short phrases both the terminal (``otel-prov show``) and the web pages write about a
session, so that the two say the same thing in the same words."""

from __future__ import annotations

from decimal import Decimal

from otel_prov.prov._rdf import instant_order, milliseconds_between
from otel_prov.read._plans import PlanStepView, PostconditionView
from otel_prov.read._views import (
    Cost,
    DownstreamView,
    EvaluationView,
    ModelCallView,
    SessionView,
    ToolCallView,
    Usage,
)

__all__ = [
    "answerer_label",
    "cost_total_label",
    "downstream_label",
    "duration_label",
    "ended_label",
    "evaluation_label",
    "failure_label",
    "outcome_fields",
    "postcondition_label",
    "readable_time",
    "run_took_label",
    "shortened",
    "step_label",
    "token_totals_label",
    "tokens_label",
    "took_label",
]


def outcome_fields(session: SessionView) -> list[tuple[str, str]]:
    """How the session went, as separate facts: its own status, why it failed (when it
    raised), and the calls that failed on the way (an agent may carry on past them).
    A run that recovered from a failed call reads ``ok`` with failed calls, one that
    raised ``error`` with its error, one whose process died ``incomplete``."""
    fields = [("status", session.status)]
    if session.status == "error" and (session.error_type or session.error_message):
        fields.append(("error", failure_label(session)))
    if session.failed_calls:
        fields.append(("failed calls", str(session.failed_calls)))
    return fields


def tokens_label(model: ModelCallView) -> str:
    cost = f", {_money(model.cost)}" if model.cost is not None else ""
    if model.input_tokens is None and model.output_tokens is None:
        return f" ({_money(model.cost)})" if model.cost is not None else ""
    return f" ({model.input_tokens or 0} in / {model.output_tokens or 0} out tokens{cost})"


def evaluation_label(evaluation: EvaluationView) -> str:
    """``name: score label (by evaluator, added later): explanation``."""
    verdict = " ".join(
        part
        for part in (
            None if evaluation.score is None else f"{evaluation.score:g}",
            evaluation.label,
        )
        if part
    )
    by = f"by {evaluation.evaluator}" if evaluation.evaluator else ""
    when = "added after the run" if evaluation.annotation else ""
    note = ", ".join(part for part in (by, when) if part)
    text = f"{evaluation.name}: {verdict or '(no score)'}" + (f" ({note})" if note else "")
    return f"{text}\n{evaluation.explanation}" if evaluation.explanation else text


def step_label(step: PlanStepView) -> str:
    """``label: outcome``; a step neither run nor marked says so, since that is what
    leaves a plan unfollowed."""
    return f"{step.label}: {step.outcome or '(no outcome)'}"


def postcondition_label(postcondition: PostconditionView) -> str:
    """``name: satisfied (detail)``, or ``NOT satisfied`` when the check failed."""
    verdict = "satisfied" if postcondition.satisfied else "NOT satisfied"
    detail = f" ({postcondition.detail})" if postcondition.detail else ""
    return f"{postcondition.name}: {verdict}{detail}"


def token_totals_label(usage: Usage) -> str:
    return ", ".join(f"{n:,} {kind.replace('_', ' ')}" for kind, n in usage.tokens.items())


def _money(cost: Cost) -> str:
    return f"{_plain_number(cost.amount)} {cost.currency or '(no currency)'}"


def _plain_number(amount: Decimal) -> str:
    return format(amount.normalize(), "f")


def cost_total_label(usage: Usage) -> str:
    """The total, or each currency's when they are mixed: amounts in different
    currencies are never added."""
    if usage.cost is not None:
        return _money(usage.cost)
    each = " + ".join(_money(cost) for cost in usage.costs)
    return f"{each} (mixed currencies, not added)"


# (unit, its size in seconds, decimals, shown below this many of the unit): a duration
# takes the first row its rounded value stays under, so 999.97 µs reads ``1 ms``, not
# ``1000 µs``.
_DURATION_UNITS = (
    ("µs", 1e-6, 1, 1000.0),
    ("ms", 1e-3, 3, 10.0),
    ("ms", 1e-3, 1, 1000.0),
    ("s", 1.0, 2, 120.0),
    ("min", 60.0, 1, float("inf")),
)


def duration_label(seconds: float) -> str:
    """A duration as people read it: ``250 µs``, ``2 ms``, ``1.5 ms``, ``12 ms``, ``3.2 s``,
    ``4.5 min``. Rounded to 0.1 µs below 1 ms, to the µs below 10 ms, to 0.1 ms below 1 s,
    to 0.01 s below 2 min and to 0.1 min beyond, without trailing zeros (``2.000 ms``
    would claim a precision the reader then has to discount)."""
    for unit, size, decimals, limit in _DURATION_UNITS:
        value = round(seconds / size, decimals)
        if abs(value) < limit:
            text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")  # every row has decimals
            return f"{'0' if text == '-0' else text} {unit}"
    return f"{seconds} s"  # NaN or infinite: no unit reads it better


def downstream_label(caused: DownstreamView) -> str:
    """``name (service) outcome, duration`` of what a tool call caused outside the agent."""
    name = f"session {caused.name}" if caused.kind == "session" else caused.name
    service = f" ({caused.service})" if caused.service else ""
    outcome = f"FAILED {failure_label(caused)}" if caused.status == "error" else caused.status
    took = (
        "never ended" if caused.duration_ms is None else duration_label(caused.duration_ms / 1000)
    )
    return f"{name}{service} {outcome}, {took}"


def failure_label(failed: ToolCallView | SessionView | DownstreamView) -> str:
    """A failed call's or session's error type and message."""
    return f"{failed.error_type or 'error'}: {failed.error_message or ''}"


def answerer_label(session: SessionView, answered_by: str) -> str:
    """Who gave the run's answer: the sub-session's agent and IRI."""
    agent = next((sub.agent for sub in session.nested_sessions() if sub.id == answered_by), None)
    return f"{agent} (sub-session {answered_by})" if agent else f"sub-session {answered_by}"


def readable_time(stamp: str) -> str:
    """A stored ``xsd:dateTime`` as a person reads it, to the second (``2025-11-30
    09:15:02 UTC``); the exact value goes beside it, for hovering and copying."""
    seconds, _ = instant_order(stamp)
    return f"{seconds.replace('T', ' ')} UTC" if len(seconds) == 19 else stamp


def shortened(text: str, width: int) -> str:
    """``text`` cut to ``width`` characters, the cut marked with an ellipsis."""
    return text if len(text) <= width else text[: width - 1] + "…"


def _run_seconds(start: str, end: str | None, status: str, now: str) -> float | None:
    """Seconds a run took, or has run so far while it runs (never below 0: the clock
    reading may be another machine's); None when it never said, or the times are no
    times."""
    if end is None and status != "running":
        return None
    took = milliseconds_between(start, end or now)
    return None if took is None else max(took, 0.0) / 1000


def took_label(start: str, end: str | None, status: str, now: str) -> str:
    """How long a run took (``took 3.2 s``); of one still running, how long it has run
    so far, ``now`` (an ``xsd:dateTime``) being the time of reading (``running for 2.1
    min``); of one that never said, that it was cut off before its end was recorded."""
    seconds = _run_seconds(start, end, status, now)
    if end is None and status != "running":
        return "not recorded: cut off before it ended"
    if seconds is None:
        return "took an unknown time" if end is not None else "running"
    said = duration_label(seconds)
    return f"took {said}" if end is not None else f"running for {said}"


def run_took_label(start: str, end: str | None, status: str, now: str) -> str:
    """The duration column of a list of runs: ``3.2 s``, ``2.1 min so far`` while it
    runs, ``""`` when it never said or its times are no times."""
    seconds = _run_seconds(start, end, status, now)
    if seconds is None:
        return ""
    return duration_label(seconds) + ("" if end is not None else " so far")


def ended_label(start: str, end: str | None, status: str, now: str) -> str:
    """When a run ended and how long it took (``2025-11-30 09:15:03 UTC (took 3.2 s)``);
    of one still running, ``not yet: running for 2.1 min``; of one cut off before its end
    was recorded, that it was."""
    took = took_label(start, end, status, now)
    if end is not None:
        return f"{readable_time(end)} ({took})"
    return f"not yet: {took}" if status == "running" else took
