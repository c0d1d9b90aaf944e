"""Reasoning: the goals an agent pursues, the hypotheses it weighs, the evidence for and
against each, and the decisions it reaches.

Each call records one event on the current span (or ``span``): the step that formed it,
whose activity generated it in the provenance::

    otel_prov.goal("Settle the refund request of order 1042", id="g1")
    otel_prov.hypothesis("The parcel was lost in transit", id="h1", confidence=0.4, goal="g1")
    otel_prov.hypothesis("The parcel was delivered", id="h2", confidence=0.6, goal="g1")
    result = track_parcel(order="1042")              # a tool call with call id "call_1"
    otel_prov.evidence(tool_call="call_1", supports="h2", weight=0.9)
    otel_prov.evidence(tool_call="call_1", contradicts="h1", weight=0.9)
    otel_prov.decision("Refuse the refund", id="d1", adopts=["h2"], confidence=0.8, goal="g1")

Evidence names what it rests on as the reader already knows it, never by its text: a
tool call's id (``tool_call=``, the ``gen_ai.tool.call.id``: what it returned), a
retrieved document's id (``document=``, as ``Retrieval.add_document`` gave it), an
earlier hypothesis (``hypothesis=``); and the hypothesis or decision it speaks for
(``supports=``) or against (``contradicts=``).  Ids are yours (unique in the run; the
same id stated again later is a revision of it); each function returns the id it used,
one made up when you gave none.  Texts are content (kept as the capture switches
allow); ids, weights and confidences (numbers from 0 to 1) are not.

A model's structured output with these fields goes in whole with
:func:`record_reasoning` (the LangChain and OpenAI Agents instrumentors call it).

Nothing here raises into the agent, nor checks what the provenance checks: an unknown
id, a weight outside [0, 1] are recorded as given and reported by the mapper
(``ProvRecord.problems``, the processor's log).  Reasoning recorded outside any span is
kept in a session of its own (agent ``unattached``), and one warning says so.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Span, TracerProvider

from otel_prov import semconv as sc
from otel_prov._version import __version__
from otel_prov.capture._shapes import put_reasoning, session_shape
from otel_prov.prov._reasoning import name_of, number_of, structured_reasoning

__all__ = ["UNATTACHED", "decision", "evidence", "goal", "hypothesis", "record_reasoning"]

UNATTACHED = "unattached"
"""The agent name of the session that keeps reasoning recorded outside any span."""

_logger = logging.getLogger("otel_prov")
_warned = threading.Event()


def goal(
    text: Any,
    *,
    id: str | None = None,
    parent: str | None = None,
    span: Span | None = None,
    tracer_provider: TracerProvider | None = None,
) -> str:
    """A goal the agent sets (a sub-goal of ``parent``); the session follows it."""
    name = _named(id, "g")
    _record(
        sc.GOAL_EVENT,
        {
            sc.OTEL_PROV_REASONING_ID: name,
            sc.OTEL_PROV_REASONING_TEXT: text,
            sc.OTEL_PROV_REASONING_GOAL: name_of(parent),
        },
        span,
        tracer_provider,
    )
    return name


def hypothesis(
    text: Any,
    *,
    id: str | None = None,
    confidence: float | None = None,
    goal: str | None = None,
    span: Span | None = None,
    tracer_provider: TracerProvider | None = None,
) -> str:
    """A hypothesis the agent weighs, for ``goal``, as sure of it as ``confidence`` (0-1)."""
    name = _named(id, "h")
    _record(
        sc.HYPOTHESIS_EVENT,
        {
            sc.OTEL_PROV_REASONING_ID: name,
            sc.OTEL_PROV_REASONING_TEXT: text,
            sc.OTEL_PROV_REASONING_CONFIDENCE: number_of(confidence),
            sc.OTEL_PROV_REASONING_GOAL: name_of(goal),
        },
        span,
        tracer_provider,
    )
    return name


def evidence(
    *,
    supports: str | None = None,
    contradicts: str | None = None,
    tool_call: str | None = None,
    document: str | None = None,
    hypothesis: str | None = None,
    weight: float | None = None,
    span: Span | None = None,
    tracer_provider: TracerProvider | None = None,
) -> None:
    """Evidence for (``supports``) or against (``contradicts``) a hypothesis or decision
    (its id), resting on a tool call's result, a retrieved document or an earlier
    hypothesis (their ids), weighing ``weight`` (0-1)."""
    _record(
        sc.EVIDENCE_EVENT,
        {
            sc.OTEL_PROV_EVIDENCE_SUPPORTS: name_of(supports),
            sc.OTEL_PROV_EVIDENCE_CONTRADICTS: name_of(contradicts),
            sc.OTEL_PROV_EVIDENCE_TOOL_CALL_ID: name_of(tool_call),
            sc.OTEL_PROV_EVIDENCE_DOCUMENT_ID: name_of(document),
            sc.OTEL_PROV_EVIDENCE_HYPOTHESIS_ID: name_of(hypothesis),
            sc.OTEL_PROV_EVIDENCE_WEIGHT: number_of(weight),
        },
        span,
        tracer_provider,
    )


def decision(
    text: Any,
    *,
    id: str | None = None,
    adopts: Sequence[str] = (),
    confidence: float | None = None,
    goal: str | None = None,
    span: Span | None = None,
    tracer_provider: TracerProvider | None = None,
) -> str:
    """The decision the agent reached, adopting the hypotheses ``adopts`` (their ids)."""
    name = _named(id, "d")
    adopted = [adopts] if isinstance(adopts, str) else [str(item) for item in adopts or ()]
    _record(
        sc.DECISION_EVENT,
        {
            sc.OTEL_PROV_REASONING_ID: name,
            sc.OTEL_PROV_REASONING_TEXT: text,
            sc.OTEL_PROV_REASONING_CONFIDENCE: number_of(confidence),
            sc.OTEL_PROV_DECISION_ADOPTS: adopted or None,
            sc.OTEL_PROV_REASONING_GOAL: name_of(goal),
        },
        span,
        tracer_provider,
    )
    return name


def record_reasoning(
    output: Any, *, span: Span | None = None, tracer_provider: TracerProvider | None = None
) -> bool:
    """The reasoning in a model's structured output (a Pydantic model, a dataclass, a
    mapping or its JSON text) with the fields ``goals``, ``hypotheses``, ``evidence``
    and ``decision`` (``docs/decisions.md`` gives the schema), as the functions above
    record it.  False, and nothing recorded, when ``output`` is no such object."""
    try:
        stated = structured_reasoning(_plain(output))
        if not stated:
            return False
        target = _target(span, tracer_provider, "record_reasoning")
        for item in stated:
            put_reasoning(target.span, item.event, item.attributes)
        target.done()
        return True
    except Exception:
        _logger.warning("otel_prov.record_reasoning could not record the output", exc_info=True)
        return False


def _plain(output: Any) -> Any:
    """A structured output as plain data: a Pydantic model's JSON form, a dataclass's
    fields; anything else as it is."""
    dump = getattr(output, "model_dump", None)
    if callable(dump) and not isinstance(output, type):
        return dump(mode="json")
    if dataclasses.is_dataclass(output) and not isinstance(output, type):
        return dataclasses.asdict(output)
    return output


@dataclasses.dataclass(frozen=True)
class _Target:
    span: Span
    own: bool
    """Made for the reasoning (there was no span): ended once it is recorded."""

    def done(self) -> None:
        if self.own:
            self.span.end()


def _target(span: Span | None, provider: TracerProvider | None, what: str) -> _Target:
    """Where to record: ``span``, else the current span, else a session of its own."""
    for candidate in (span, trace.get_current_span()):
        if candidate is not None and candidate.is_recording():
            return _Target(candidate, own=False)
    if not _warned.is_set():
        _warned.set()
        _logger.warning(
            "otel_prov.%s was called outside any span: kept in a session of its own (agent "
            "%r), linked to no run; record reasoning inside otel_prov.agent_session(...), "
            "or pass span=",
            what,
            UNATTACHED,
        )
    tracer = trace.get_tracer("otel_prov", __version__, tracer_provider=provider)
    return _Target(session_shape(UNATTACHED).start(tracer), own=True)


def _record(
    event: str,
    attributes: Mapping[str, Any],
    span: Span | None,
    provider: TracerProvider | None,
) -> None:
    try:
        target = _target(span, provider, event.removeprefix("otel_prov."))
        put_reasoning(target.span, event, attributes)
        target.done()
    except Exception:
        _logger.warning("%s could not be recorded", event, exc_info=True)


def _named(given: Any, prefix: str) -> str:
    return name_of(given) or f"{prefix}-{uuid.uuid4().hex[:8]}"
