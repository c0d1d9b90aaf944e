"""Zero-code instrumentation of smolagents (``ToolCallingAgent``, ``CodeAgent``, ...).

::

    from otel_prov.instrumentation.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=provider)
    agent.run("Weather in Paris?")

smolagents has no global callback registry (``step_callbacks`` need the agent's
constructor), so this instrumentor wraps methods on the classes themselves:

* ``MultiStepAgent._run_stream`` (what ``run`` drives, streaming or not) -> an agent
  session ``invoke_agent {agent}`` with ``otel_prov.question`` (the task),
  ``otel_prov.answer`` (the final answer) and ``otel_prov.agent.tools``, the names in
  ``agent.tools`` but ``final_answer`` (how every agent answers; declared, it would fail
  ``otel-prov verify``'s ``tool_use_verified`` gate for agents given no other tool);
* each agent class's ``_step_stream`` -> one iteration per ``ActionStep``: number,
  thought (``model_output``), action (tool names or ``final_answer``) and the exact JSON
  arguments the model produced (captured before smolagents parses them in place);
* each ``Model`` subclass's ``generate``, and ``generate_stream`` (what agents built with
  ``stream_outputs=True`` call) -> ``chat {model_id}`` CLIENT spans with usage.  A
  stream's span runs from the request until the stream is exhausted, raises or is
  closed; its usage is the sum of the deltas' ``token_usage``;
* ``Tool.__call__`` (and overrides) -> ``execute_tool {name}`` with the model's call id,
  arguments, observation or error.  The ``final_answer`` tool gets no span of its own:
  its arguments are the iteration's, its result the session's answer.

A run streamed to the caller (``agent.run(task, stream=True)``) that the caller stops
early (``close()``, or dropping the generator) still ends every span it opened: those
cut short get status ERROR, ``error.type`` ``GeneratorExit`` and the description
``closed early: the consumer stopped iterating`` (stopping at the ``FinalAnswerStep``
cuts nothing short).

Subclasses defined after :meth:`instrument` are wrapped when an agent using them
starts a run.  Everything is restored by :meth:`uninstrument`; smolagents is imported
only when :meth:`instrument` is called.
"""

from __future__ import annotations

from otel_prov.instrumentation import PatchingInstrumentor
from otel_prov.instrumentation.smolagents.package import _instruments

__all__ = ["SmolagentsInstrumentor"]


class SmolagentsInstrumentor(PatchingInstrumentor):
    """Records smolagents runs as otel-prov spans: sessions, iterations, model, tool calls."""

    instruments = _instruments
