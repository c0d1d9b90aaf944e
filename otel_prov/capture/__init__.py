"""Stage 1: turning what an agent does into spans.

The manual API, the span shapes every instrumentor shares, the content policy (the OTel
GenAI opt-in) and redaction.  Instrumentors build their spans with the names exported
here (never with another module's private helpers, nor each other's), so every
framework's spans have the shapes the manual API gives, and the mapper reads one shape.
"""

from otel_prov.capture._api import (
    agent_session,
    iteration,
    model_call,
    record_approval,
    record_evaluation,
    set_action,
    set_answer,
    set_arguments,
    set_observation,
    set_question,
    set_thought,
    set_usage,
    tool_call,
)
from otel_prov.capture._decisions import (
    decision,
    evidence,
    goal,
    hypothesis,
    record_reasoning,
)
from otel_prov.capture._plan import Plan, PlanStep, plan, postcondition
from otel_prov.capture._redaction import RedactingSpanExporter
from otel_prov.capture._retrieval import Retrieval, retrieval
from otel_prov.capture._shapes import (
    FINAL_ANSWER,
    SpanShape,
    content_text,
    declare_tools,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    name_provider,
    person_id,
    put_approval,
    put_content,
    put_document,
    put_evaluation,
    put_reasoning,
    put_usage,
    record_error,
    record_failure,
    retrieval_shape,
    session_shape,
    tool_call_shape,
)
from otel_prov.prov._conventions import tool_schema_name

__all__ = [
    "FINAL_ANSWER",
    "Plan",
    "PlanStep",
    "RedactingSpanExporter",
    "Retrieval",
    "SpanShape",
    "agent_session",
    "content_text",
    "decision",
    "declare_tools",
    "describe_iteration",
    "evidence",
    "goal",
    "hypothesis",
    "iteration",
    "iteration_shape",
    "model_call",
    "model_call_shape",
    "name_provider",
    "person_id",
    "plan",
    "postcondition",
    "put_approval",
    "put_content",
    "put_document",
    "put_evaluation",
    "put_reasoning",
    "put_usage",
    "record_approval",
    "record_error",
    "record_evaluation",
    "record_failure",
    "record_reasoning",
    "retrieval",
    "retrieval_shape",
    "session_shape",
    "set_action",
    "set_answer",
    "set_arguments",
    "set_observation",
    "set_question",
    "set_thought",
    "set_usage",
    "tool_call",
    "tool_call_shape",
    "tool_schema_name",
]
