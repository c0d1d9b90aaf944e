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

Tool approvals (``needs_approval``): the decisions made with ``RunState.approve`` /
``reject`` (``RunContextWrapper.approve_tool`` / ``reject_tool``, patched to tell the
processor) go on the record of the run resumed from that state, as
``otel_prov.approval`` events: on the span of the approved call when it runs
(``otel_prov.approval.required``, how long the run waited since it stopped at the call),
on the session span when the model is told of a rejection (the call never runs: the
decision names it and keeps the rejection message, as content).  The SDK does not say
who decided, so the person is recorded unnamed.  ``RunConfig.trace_metadata`` ``user.id``
(or ``user_id``) becomes the sessions' ``user.id``: the agent acted on that user's
behalf.  The run up to the interruption is an OTel trace of its own, the resumed run
another: in the first, the call that stopped to wait is marked
``otel_prov.approval.pending`` (it did not run there: no observation).

Times are the SDK's own ``started_at`` / ``ended_at``.  Content (thoughts, arguments,
observations, question, answer) only reaches the SDK spans when the run config has
``trace_include_sensitive_data`` (the default) and our spans only when the content
switches (``OTEL_PROV_CAPTURE_CONTENT``, the GenAI opt-in) allow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any

from opentelemetry import trace

# The upstream module starts with ``# type: ignore``, so mypy sees BaseInstrumentor as Any.
from opentelemetry.instrumentation.instrumentor import (  # type: ignore[attr-defined]
    BaseInstrumentor,
)

from otel_prov._version import __version__
from otel_prov.instrumentation import Patches
from otel_prov.instrumentation.openai_agents._processor import OpenAIAgentsSpanConverter
from otel_prov.instrumentation.openai_agents.package import _instruments

__all__ = ["OpenAIAgentsInstrumentor", "OpenAIAgentsSpanConverter"]


class OpenAIAgentsInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Turns the OpenAI Agents SDK's traces into otel-prov OTel spans."""

    _processor: Any = None
    _patches: Patches = Patches()

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
        self._patches = _patch_decisions(processor)

    def _uninstrument(self, **kwargs: Any) -> None:
        processor, self._processor = self._processor, None
        if processor is None:
            return
        self._patches.restore()
        processor.disable()
        _remove_processor(processor)

    @property
    def processor(self) -> OpenAIAgentsSpanConverter | None:
        """The registered SDK tracing processor (None when not instrumented)."""
        return self._processor  # type: ignore[no-any-return]


def _patch_decisions(processor: OpenAIAgentsSpanConverter) -> Patches:
    """Tell ``processor`` of each approval and rejection of a tool call (``RunState.approve``
    / ``reject`` come down to ``RunContextWrapper.approve_tool`` / ``reject_tool``) and of
    each turn stopped for them (``NextStepInterruption``): the SDK's tracing shows none."""
    from agents.run_context import RunContextWrapper

    patches = Patches()

    def approve(original: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(original)
        def approve_tool(self: Any, approval_item: Any, always_approve: bool = False) -> None:
            original(self, approval_item, always_approve)
            processor.record_decision(approval_item, approved=True)

        return approve_tool

    def reject(original: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(original)
        def reject_tool(
            self: Any,
            approval_item: Any,
            always_reject: bool = False,
            rejection_message: str | None = None,
        ) -> None:
            original(self, approval_item, always_reject, rejection_message)
            processor.record_decision(approval_item, approved=False, reason=rejection_message)

        return reject_tool

    def interrupt(original: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(original)
        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            processor.interrupted(getattr(self, "interruptions", None))

        return init

    patches.replace(RunContextWrapper, "approve_tool", approve)
    patches.replace(RunContextWrapper, "reject_tool", reject)
    try:  # where the SDK (0.24) says a turn stops for approvals; best effort if it moves
        from agents.run_internal.run_steps import NextStepInterruption
    except ImportError:
        return patches
    patches.replace(NextStepInterruption, "__init__", interrupt)
    return patches


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
