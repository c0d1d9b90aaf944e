"""Zero-code instrumentation of LangChain v1 agents (``langchain.agents.create_agent``).

::

    from otel_prov.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
    agent.invoke({"messages": [{"role": "user", "content": "Weather in Paris?"}]})

A callback handler registered with LangChain's configure hook sees every run, sync and
async, with no change to the agent's code.  Each root run of a ``create_agent`` graph
becomes an ``invoke_agent {name}`` session span, with the names of the tools the model
is given in ``otel_prov.agent.tools`` (for ``otel-prov verify``'s ``tool_use_verified``
gate; a provider's built-in tools and the tools of a ``ToolStrategy`` structured answer
are not declared, since no tool run of theirs can be recorded); each reason-act step an
iteration span
(thought, action, exact JSON arguments); each model call a ``chat {model}`` span and
each tool call an ``execute_tool {name}`` span with its call id, arguments and
observation.  A retriever that runs inside the agent (in a tool made with
``create_retriever_tool``, in a middleware) becomes a ``retrieval {name}`` span with its
query and every document it returned: id, text (content, under the capture switches),
metadata and, when the metadata has one (``score``, ``relevance_score``), the score; in
the provenance, the observation of the tool call derives from those documents, each
``prov:hadPrimarySource`` its metadata's ``source`` or ``url``.  LangChain is imported
only when :meth:`instrument` is called.

While a tool runs, its ``execute_tool`` span is the current span, so spans started in
the tool's body are its children: an HTTP call traced by
``opentelemetry-instrumentation-requests`` or ``-httpx``, a database query, a
``tracer.start_as_current_span`` of your own.  This holds for sync and async tools and
for tool calls that LangGraph runs in parallel.  Likewise the ``chat`` span is current
inside a synchronous model call (a model client's own HTTP span nests under it); an
async model call, or a batch of several prompts in one ``generate``, is recorded but
not made current, because LangChain ends those runs where the context cannot be
restored.  After every run the current span is what it was before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_prov.instrumentation import PatchingInstrumentor
from otel_prov.instrumentation.langchain.package import _instruments

if TYPE_CHECKING:
    from otel_prov.instrumentation.langchain._handler import ProvCallbackHandler

__all__ = ["LangChainInstrumentor"]


class LangChainInstrumentor(PatchingInstrumentor):
    """Records LangChain agent runs as otel-prov spans: sessions, iterations, model, tool calls."""

    instruments = _instruments
    patches = "_handler"

    @property
    def handler(self) -> ProvCallbackHandler | None:
        """The active callback handler (None when not instrumented), e.g. to pass explicitly."""
        from otel_prov.instrumentation.langchain import _handler

        return _handler.active_handler()
