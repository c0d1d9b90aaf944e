"""otel-prov: why did this AI agent do that?  OpenTelemetry spans in, W3C PROV-O out.

Instrument an agent (by hand with :func:`agent_session`, :func:`iteration`,
:func:`tool_call` and :func:`model_call`), add :class:`ProvSpanProcessor` to your
``TracerProvider`` (or call :func:`configure`), and every finished agent session lands
in a triple store as PROV-O, next to your regular OTLP traces, joined by trace and
span ids.
"""

from otel_prov._version import __version__
from otel_prov.capture import (
    Plan,
    PlanStep,
    RedactingSpanExporter,
    Retrieval,
    agent_session,
    iteration,
    model_call,
    plan,
    postcondition,
    record_evaluation,
    retrieval,
    set_action,
    set_answer,
    set_arguments,
    set_observation,
    set_question,
    set_thought,
    set_usage,
    tool_call,
)
from otel_prov.processing._processor import ProcessorStatistics, ProvSpanProcessor
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import SpanRecord, record_from_span
from otel_prov.setup import ProvHandle, ProvSpanExporter, configure

__all__ = [
    "Plan",
    "PlanStep",
    "ProcessorStatistics",
    "ProvHandle",
    "ProvRecord",
    "ProvSpanExporter",
    "ProvSpanProcessor",
    "RedactingSpanExporter",
    "Retrieval",
    "SpanRecord",
    "__version__",
    "agent_session",
    "configure",
    "iteration",
    "map_spans",
    "model_call",
    "plan",
    "postcondition",
    "record_evaluation",
    "record_from_span",
    "retrieval",
    "set_action",
    "set_answer",
    "set_arguments",
    "set_observation",
    "set_question",
    "set_thought",
    "set_usage",
    "tool_call",
]
