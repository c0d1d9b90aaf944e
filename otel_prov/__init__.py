"""otel-prov: why did this AI agent do that?  OpenTelemetry spans in, W3C PROV-O out.

Instrument an agent (by hand with :func:`agent_session`, :func:`iteration`,
:func:`tool_call` and :func:`model_call`), add :class:`ProvSpanProcessor` to your
``TracerProvider`` (or call :func:`configure`), and every finished agent session lands
in a triple store as PROV-O, next to your regular OTLP traces, joined by trace and
span ids.
"""

import importlib
import typing

from otel_prov._version import __version__

if typing.TYPE_CHECKING:
    from otel_prov.capture import (
        Plan,
        PlanStep,
        RedactingSpanExporter,
        Retrieval,
        agent_session,
        decision,
        evidence,
        goal,
        hypothesis,
        iteration,
        model_call,
        plan,
        postcondition,
        record_approval,
        record_evaluation,
        record_reasoning,
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

# Where each public name lives.  Each loads on first use: an instrumentor's import runs
# this file first, and must not pay for setup, the exporters, the embedded store or the
# SPARQL client (issue 28).
_HOMES: dict[str, tuple[str, ...]] = {
    "otel_prov.capture": (
        "Plan",
        "PlanStep",
        "RedactingSpanExporter",
        "Retrieval",
        "agent_session",
        "decision",
        "evidence",
        "goal",
        "hypothesis",
        "iteration",
        "model_call",
        "plan",
        "postcondition",
        "record_approval",
        "record_evaluation",
        "record_reasoning",
        "retrieval",
        "set_action",
        "set_answer",
        "set_arguments",
        "set_observation",
        "set_question",
        "set_thought",
        "set_usage",
        "tool_call",
    ),
    "otel_prov.processing._processor": ("ProcessorStatistics", "ProvSpanProcessor"),
    "otel_prov.prov._mapper": ("map_spans",),
    "otel_prov.prov._record": ("ProvRecord",),
    "otel_prov.prov._span_record": ("SpanRecord", "record_from_span"),
    "otel_prov.setup": ("ProvHandle", "ProvSpanExporter", "configure"),
}
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}

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
    "decision",
    "evidence",
    "goal",
    "hypothesis",
    "iteration",
    "map_spans",
    "model_call",
    "plan",
    "postcondition",
    "record_approval",
    "record_evaluation",
    "record_from_span",
    "record_reasoning",
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


def __getattr__(name: str) -> object:
    """Import a public name's home on first use and keep it here (PEP 562).

    A subpackage loads on first use too: ``import otel_prov`` then
    ``otel_prov.exporters.FileExporter`` worked when this file imported everything."""
    home = _HOME_OF.get(name)
    if home is not None:
        value: object = getattr(importlib.import_module(home), name)
        globals()[name] = value  # the next lookup finds it without this function
        return value
    if not name.startswith("__"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise  # the subpackage is there; something it imports is not
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
