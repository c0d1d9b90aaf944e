"""The wrappers that turn MCP tool calls into otel-prov spans, on both sides of the wire.

Imported only by :meth:`MCPInstrumentor.instrument`.  MCP objects are read by attribute
(``Any`` at the boundary), defensively where they are private to the SDK.

* Client: ``ClientSession.call_tool`` (what ``Client.call_tool`` drives too) runs inside
  an ``execute_tool {name}`` CLIENT span, whose context is injected into the request's
  ``_meta`` (``traceparent``, ``tracestate``).  The SDK's own ``MCP send`` span (when a
  global tracer provider records it) is a child of ours; it would inject its own
  context over ours, and is kept from doing so.  Called inside an agent framework's own
  ``execute_tool`` span of the same tool (the OpenAI Agents SDK's MCP tools), that span
  is the call: its context goes into ``_meta`` and no second span is opened, so the call
  is counted once and the server's joins it.
* Server: the SDK's ``OpenTelemetryMiddleware`` wraps every inbound request in a span.
  For ``tools/call`` ours takes its place (the SDK's would be a second ``execute_tool``
  span of the same call): ``execute_tool {name}``, SERVER, a child of the context in
  ``_meta`` (not of the transport's HTTP spans: the call, not the connection, is what
  the tool runs for).  Other methods keep the SDK's span.
* Both record the arguments and the result as content (the capture switches and the
  GenAI opt-in apply), and a result with ``isError`` as a failed call, ``error.type``
  ``tool_error``, its text as the status description.

``mcp.session.id`` is the streamable HTTP session (the ``Mcp-Session-Id`` header); stdio
has none.  The client learns it from its transport, found through the write stream the
session and the transport share.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Tracer

from otel_prov import semconv as sc
from otel_prov.capture import (
    content_text,
    put_content,
    record_error,
    record_failure,
    tool_call_shape,
)
from otel_prov.instrumentation import Patches

__all__ = ["install", "uninstall"]

_TOOLS_CALL = "tools/call"
_TOOL_ERROR = "tool_error"
"""``error.type`` of a call whose result says ``isError``, as the SDK's middleware sets it."""
_SESSION_HEADER = "mcp-session-id"
_TRACEPARENT = "traceparent"

_lock = threading.Lock()
_patches = Patches()
_transports: dict[int, Any] = {}
"""id(write stream) -> the streamable HTTP transport writing it, while it runs."""


def _result_data(result: Any) -> Any:
    dump = getattr(result, "model_dump", None)
    return dump(mode="json", by_alias=True, exclude_none=True) if callable(dump) else result


def result_text(result: Any) -> str:
    """What the tool returned, as the model reads it: the text of its content blocks when
    they are all text, else the whole result as JSON (images, resources, structure)."""
    data = _result_data(result)
    blocks = data.get("content") if isinstance(data, Mapping) else None
    texts = [
        b.get("text") for b in blocks or () if isinstance(b, Mapping) and b.get("type") == "text"
    ]
    if isinstance(blocks, list) and blocks and len(texts) == len(blocks):
        return "\n".join(str(text) for text in texts)
    return content_text(data)


def _is_error(result: Any) -> bool:
    data = _result_data(result)
    return isinstance(data, Mapping) and data.get("isError") is True


def _finish(span: Span, result: Any) -> None:
    """A result the tool produced: its observation, or a failure when it says ``isError``."""
    text = result_text(result)
    if _is_error(result):
        record_failure(span, _TOOL_ERROR, text)
    else:
        put_content(span, sc.OTEL_PROV_OBSERVATION, text)


def _client_session_id(session: Any) -> str | None:
    stream = getattr(getattr(session, "_dispatcher", None), "_write_stream", None)
    transport = _transports.get(id(stream)) if stream is not None else None
    session_id = getattr(transport, "session_id", None)
    return session_id if isinstance(session_id, str) else None


def _framework_call(name: str) -> Span | None:
    """The current span when it is a framework's call of the tool ``name`` (an agent
    framework's ``execute_tool`` span around its MCP client's call: the OpenAI Agents
    SDK's, LangChain's MCP adapters'), None otherwise."""
    span = trace.get_current_span()
    attributes = getattr(span, "attributes", None) or {}
    same = (
        attributes.get(sc.GEN_AI_OPERATION_NAME) == "execute_tool"
        and attributes.get(sc.GEN_AI_TOOL_NAME) == name
    )
    return span if same and span.is_recording() else None


def _client_call_tool(tracer: Tracer, original: Callable[..., Any]) -> Callable[..., Any]:
    async def call_tool(
        self: Any,
        name: str,
        arguments: dict[str, Any] | None = None,
        *args: Any,
        meta: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        mcp = {sc.MCP_METHOD_NAME: _TOOLS_CALL, sc.MCP_SESSION_ID: _client_session_id(self)}
        calling = _framework_call(name)
        if calling is not None:  # the framework's span is the call: one call, not two
            calling.set_attributes({k: v for k, v in mcp.items() if v is not None})
            carrier = dict(meta or {})
            propagate.inject(carrier)
            return await original(self, name, arguments, *args, meta=carrier, **kwargs)
        shape = tool_call_shape(name, arguments=arguments or {}, kind=SpanKind.CLIENT)
        span = shape.with_attributes(mcp).start(tracer)
        with trace.use_span(
            span, end_on_exit=True, record_exception=False, set_status_on_exception=False
        ):
            carrier = dict(meta or {})
            propagate.inject(carrier)
            try:
                result = await original(self, name, arguments, *args, meta=carrier, **kwargs)
            except BaseException as error:
                record_error(span, error)
                raise
            _finish(span, result)
            return result

    return call_tool


def _request_session_id(context: Any) -> str | None:
    headers = getattr(getattr(context, "request", None), "headers", None)
    session_id = headers.get(_SESSION_HEADER) if headers is not None else None
    return session_id if isinstance(session_id, str) else None


def _server_middleware(tracer: Tracer, original: Callable[..., Any]) -> Callable[..., Any]:
    async def middleware(self: Any, context: Any, call_next: Callable[..., Any]) -> Any:
        params = getattr(context, "params", None) or {}
        name = params.get("name") if isinstance(params, Mapping) else None
        if getattr(context, "method", None) != _TOOLS_CALL or not isinstance(name, str):
            return await original(self, context, call_next)
        meta = getattr(context, "meta", None)
        remote = propagate.extract(meta) if isinstance(meta, Mapping) else None
        parent = trace.get_current_span(remote) if remote is not None else None
        shape = tool_call_shape(name, arguments=params.get("arguments") or {}, kind=SpanKind.SERVER)
        span = shape.with_attributes(
            {
                sc.MCP_METHOD_NAME: _TOOLS_CALL,
                sc.MCP_SESSION_ID: _request_session_id(context),
                sc.MCP_PROTOCOL_VERSION: getattr(context, "protocol_version", None),
            }
        ).start(tracer, parent=parent if parent and parent.get_span_context().is_valid else None)
        with trace.use_span(
            span, end_on_exit=True, record_exception=False, set_status_on_exception=False
        ):
            try:
                result = await call_next(context)
            except BaseException as error:
                record_error(span, error)
                raise
            _finish(span, result)
            return result

    return middleware


def _transport_post_writer(original: Callable[..., Any]) -> Callable[..., Any]:
    async def post_writer(
        self: Any, client: Any, reader: Any, writer: Any, write_stream: Any, *args: Any
    ) -> Any:
        _transports[id(write_stream)] = self
        try:
            return await original(self, client, reader, writer, write_stream, *args)
        finally:
            _transports.pop(id(write_stream), None)

    return post_writer


def _keep_injected(original: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    """The SDK injects the context of its own ``MCP send`` span, a child of our tool call:
    a ``traceparent`` already in ``_meta`` (ours, or the caller's) is kept, so the
    server's tool call is a child of the client's, not of a transport span beside it."""

    def inject_trace_context(meta: dict[str, Any]) -> None:
        if _TRACEPARENT not in meta:
            original(meta)

    return inject_trace_context


def install(tracer: Tracer) -> None:
    """Wrap the client, the server middleware, the HTTP transport and the SDK's context
    injection (once)."""
    with _lock:
        if _patches:
            return
        session = importlib.import_module("mcp.client.session")
        otel = importlib.import_module("mcp.server._otel")
        http = importlib.import_module("mcp.client.streamable_http")
        dispatcher = importlib.import_module("mcp.shared.jsonrpc_dispatcher")
        patch = _patches.replace
        patch(session.ClientSession, "call_tool", lambda f: _client_call_tool(tracer, f))
        patch(otel.OpenTelemetryMiddleware, "__call__", lambda f: _server_middleware(tracer, f))
        patch(http.StreamableHTTPTransport, "post_writer", _transport_post_writer)
        patch(dispatcher, "inject_trace_context", _keep_injected)


def uninstall() -> None:
    with _lock:
        _patches.restore()
        _transports.clear()
