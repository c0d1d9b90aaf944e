"""OpenAI Agents SDK auto-instrumentation: the SDK's own trace, as otel-prov OTel spans.

::

    from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)

It registers a tracing processor with ``agents.tracing.add_trace_processor``, beside the
SDK's own (OpenAI's exporter keeps working; tracing must stay enabled, since a disabled
SDK tracer tells processors nothing).  Each SDK trace becomes one OTel trace:

* the SDK trace -> a plain root span named after the workflow (the SDK's ``task`` span
  is folded into it);
* each ``agent`` span -> an agent session ``invoke_agent {agent}`` with
  ``otel_prov.question`` (the run input), ``otel_prov.answer`` (the final output) and
  ``otel_prov.agent.tools``, the agent's tools (``tools`` of the SDK span) that leave a
  ``function`` span when called: not OpenAI's hosted tools (web search, file search,
  ...), and not handoffs, which pass the conversation on rather than fetch data for the
  answer that ``otel-prov verify``'s ``tool_use_verified`` gate checks;
* each ``turn`` span -> an iteration (``otel_prov.iteration.number``, thought, action,
  arguments); when the run has no turn spans (``include_task_and_turn_spans=False``,
  or an older SDK) each model call under an agent opens a new iteration that takes the
  tool calls up to the next model call;
* ``generation`` / ``response`` spans -> ``chat {model}`` CLIENT spans with usage;
* ``function`` spans -> ``execute_tool {name}`` with the exact JSON arguments, the
  observation and the call id the model gave (matched on name and arguments);
* ``handoff`` spans -> ``execute_tool {tool}`` for the handoff tool the model called
  (``transfer_to_<agent>``, ``gen_ai.tool.type`` ``function``), with its call id and
  exact arguments, ``openai_agents.handoff.from_agent`` / ``to_agent``, and the agent
  handed to as the observation.  The session of that agent is nested under this span
  and links to it: in the provenance it is a sub-session started by (a
  ``prov:qualifiedStart``) and ``prov:wasInformedBy`` the handoff, so a run with handoffs
  stays one outermost session, and the final answer belongs to the agent that gave it;
* anything else (guardrails, custom spans) -> a plain span.

Times are the SDK's own ``started_at`` / ``ended_at``.  Content (thoughts, arguments,
observations, question, answer) only reaches the SDK spans when the run config has
``trace_include_sensitive_data`` (the default) and our spans only when the content
switches (``OTEL_PROV_CAPTURE_CONTENT``, the GenAI opt-in) allow.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from opentelemetry import trace

# The upstream module starts with ``# type: ignore``, so mypy sees BaseInstrumentor as Any.
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from otel_prov._version import __version__
from otel_prov.instrumentation.openai_agents._processor import OpenAIAgentsSpanConverter
from otel_prov.instrumentation.openai_agents.package import _instruments

__all__ = ["OpenAIAgentsInstrumentor", "OpenAIAgentsSpanConverter"]


class OpenAIAgentsInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Turns the OpenAI Agents SDK's traces into otel-prov OTel spans."""

    _processor: Any = None

    def instrumentation_dependencies(self) -> Collection[str]:
        return _instruments

    def _instrument(self, **kwargs: Any) -> None:
        from agents.tracing import TracingProcessor, add_trace_processor

        tracer = trace.get_tracer(
            __name__, __version__, tracer_provider=kwargs.get("tracer_provider")
        )
        # A real subclass of the SDK's ABC, so that the SDK's checks and future
        # default methods apply; the behaviour is all in OpenAIAgentsSpanConverter.
        cls = type("OtelProvTracingProcessor", (OpenAIAgentsSpanConverter, TracingProcessor), {})
        processor = cls(tracer)
        add_trace_processor(processor)
        self._processor = processor

    def _uninstrument(self, **kwargs: Any) -> None:
        processor, self._processor = self._processor, None
        if processor is None:
            return
        processor.disable()
        _remove_processor(processor)

    @property
    def processor(self) -> OpenAIAgentsSpanConverter | None:
        """The registered SDK tracing processor (None when not instrumented)."""
        return self._processor  # type: ignore[no-any-return]


def _remove_processor(processor: Any) -> None:
    """Take the processor out of the SDK's list; the SDK has no public API for it.

    Best effort over the private list of ``agents`` 0.20-0.24: when that changes the
    processor simply stays registered, inert (``disable()`` already made it so).
    """
    try:
        from agents.tracing import get_trace_provider, set_trace_processors

        multi = getattr(get_trace_provider(), "_multi_processor", None)
        current = getattr(multi, "_processors", None)
        if isinstance(current, tuple) and processor in current:
            set_trace_processors([p for p in current if p is not processor])
    except Exception:  # noqa: BLE001 - removal is an optimisation, inertness is the contract
        pass
