"""Instrumentation of the official MCP SDK (PyPI ``mcp``, 2.x): tool calls across processes.

::

    from otel_prov.instrumentation.mcp import MCPInstrumentor

    MCPInstrumentor().instrument(tracer_provider=provider)   # in the client and in the server

* Client: ``ClientSession.call_tool`` (and ``Client.call_tool``, which drives it) ->
  ``execute_tool {name}``, a CLIENT span with ``gen_ai.tool.name``,
  ``gen_ai.operation.name``, ``mcp.method.name`` (``tools/call``), ``mcp.session.id``
  (streamable HTTP) and the arguments and result as content.  Its trace context
  (``traceparent``, ``tracestate``) goes into the request's ``params._meta``.  Inside an
  agent framework's ``execute_tool`` span of the same tool (an OpenAI Agents SDK agent's
  MCP tools), that span is the call: no second one is opened.
* Server: each ``tools/call`` request -> ``execute_tool {name}``, a SERVER span whose
  parent is the context in ``_meta``: the server's work joins the client's trace, below
  its tool call, whichever transport carried it.  The span is current while the tool
  runs, so what the tool does (HTTP calls, model calls) nests inside it.
* A result with ``isError`` (``MCPServer`` turns a tool's exception into one) is a
  failed call: status ERROR, ``error.type`` ``tool_error``; an exception raised through
  the SDK (an unknown tool, a timeout) is recorded as such.

Arguments and results follow the content policy: ``otel_prov.arguments`` /
``otel_prov.observation`` unless ``OTEL_PROV_CAPTURE_CONTENT=false``, and
``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result`` when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in.

A server process needs no agent session of its own: its tool call, whose parent is
remote, is stored like a session is (``oprov:partOf`` the client's tool call, by its
deterministic IRI).  Everything is restored by :meth:`uninstrument`; ``mcp`` is imported
only when :meth:`instrument` is called.
"""

from __future__ import annotations

from otel_prov.instrumentation import PatchingInstrumentor
from otel_prov.instrumentation.mcp.package import _instruments

__all__ = ["MCPInstrumentor"]


class MCPInstrumentor(PatchingInstrumentor):
    """Records MCP tool calls, client and server side, joined in one trace."""

    instruments = _instruments
