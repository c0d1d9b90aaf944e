"""``otel-prov mcp --http``: the server over streamable HTTP at ``/mcp``, and what a request
passes before a tool runs, and who it reads as.

The checks are ``serve``'s (:mod:`otel_prov.view._guards`) where they apply, in this
order, each answering its own refusal:

- :class:`~otel_prov.view._guards.HostCheck`: the ``Host`` header must name this server
  (421 otherwise): a page whose name was pointed at 127.0.0.1 (DNS rebinding) would
  otherwise read the store from the user's browser.
- :class:`OriginCheck`: a request with an ``Origin`` (one a browser sent) must come from
  this origin or one allowed by name (``--allowed-origin``), else 403, as the MCP
  specification asks of every connection, the event stream's GET included.
- :class:`~otel_prov.view._guards.ReaderLogin` without its login form: the bearer token
  of ``--token-file``, a tenant's token, or under mutual TLS a tenant's client
  certificate; 401 otherwise.  It is asked at every request, so a token taken out of the
  tenants file stops working at once, within a session too.

Who a call reads as is decided per request, never per session: :func:`confinements`
reads the reader the checks let in from the request that carried the call.  A session id
taken by another reader therefore reads that reader's own graph, not the session's.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from otel_prov._tenants import Tenants
from otel_prov.read._confinement import Confinement
from otel_prov.view._guards import HostCheck, ReaderLogin, host_policy, same_origin

__all__ = ["MCP_PATH", "OriginCheck", "confinements", "http_app"]

MCP_PATH = "/mcp"


def _origin(text: str) -> str:
    """An origin in one spelling: lower case, no trailing slash."""
    return text.strip().rstrip("/").lower()


class OriginCheck:
    """Answers 403 to a request whose ``Origin`` is neither this server's own (the
    browser says ``Sec-Fetch-Site: same-origin``, or the origin names the ``Host``) nor
    one of ``allowed``; a request without ``Origin`` came from no browser's page."""

    def __init__(self, app: ASGIApp, allowed: Iterable[str] = ()) -> None:
        self.app = app
        self.allowed = frozenset(_origin(origin) for origin in allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = Headers(scope=scope)
            origin = headers.get("origin")
            mine = origin is None or _origin(origin) in self.allowed or same_origin(headers)
            if not mine:
                refusal = PlainTextResponse(
                    f"refused: a page of {origin!r} may not call this MCP server (start "
                    "otel-prov mcp with --allowed-origin ORIGIN for a client that runs "
                    "in a browser)\n",
                    403,
                )
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def confinements(
    graph: str, tenant: str | None, tenants: Tenants | None
) -> Callable[[Any], Confinement]:
    """What a call may read, from the HTTP request that carried it (``None`` over stdio):
    the graph ``graph`` (an IRI) or ``tenant``'s; with ``tenants``, the tenant of the
    request's reader, or one it may read named by ``?tenant=NAME`` on the server's URL.
    Raises ``PermissionError`` for a tenant the reader may not read."""
    own = Confinement.of(graph, tenant)
    if tenants is None:
        return lambda request: own

    def reads(request: Any) -> Confinement:
        scope: Mapping[str, Any] = getattr(request, "scope", None) or {}
        reader = (scope.get("state") or {}).get("reader")
        found = tenants.tenants.get(reader) if isinstance(reader, str) else None
        if found is None:
            raise PermissionError("this request carries no tenant's token")
        query = urllib.parse.parse_qs(scope.get("query_string", b"").decode("latin-1"))
        asked = (query.get("tenant") or [""])[0].strip() or found.reads[0]
        if asked not in found.reads:
            raise PermissionError(
                f"this reader may read {', '.join(found.reads)}, not {asked[:80]!r}"
            )
        return Confinement.of(graph, asked)

    return reads


def http_app(
    server: MCPServer,
    *,
    bound_host: str,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    reader_tokens: Mapping[bytes, str] | None = None,
    tenants: Tenants | None = None,
) -> Starlette:
    """The ASGI app of ``server`` at :data:`MCP_PATH`, behind the checks of the module:
    readers by ``reader_tokens`` (SHA-256 of a token: its reader) or ``tenants``' tokens
    and client certificates; none of either: no login (a loopback server, say)."""
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        # The SDK's own Host and Origin checks, replaced by the module's.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=bound_host,
    )
    # The last added runs first: the Host, then the Origin, then the reader.
    if tenants is not None:
        app.add_middleware(
            ReaderLogin, tokens=tenants.tokens, subjects=tenants.subjects, login=False
        )
    elif reader_tokens:
        app.add_middleware(ReaderLogin, tokens=lambda: reader_tokens, login=False)
    app.add_middleware(OriginCheck, allowed=allowed_origins)
    app.add_middleware(HostCheck, policy=host_policy(bound_host, allowed_hosts))
    return app
