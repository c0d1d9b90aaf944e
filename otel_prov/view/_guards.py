"""What a request must pass before the web app answers it: ASGI middleware, one check each.

The app is read-only, yet it holds everything agents recorded, and ``/sparql`` costs the
machine what a query costs.  A browser lets any web page send requests to it, so:

- :class:`HostCheck`: the ``Host`` header must name this server.  DNS rebinding points a
  name the attacker owns at 127.0.0.1, so that their page reads ours as same-origin; the
  browser still sends ``Host: attacker.example``, and that is refused with 421.
- :class:`SameOrigin`: a request that is not a plain read (a POST, which is how a query
  runs) must come from this server's own pages.  A page elsewhere can post a form or a
  no-cors ``fetch`` here, unread but run; :func:`same_origin` refuses it with 403.

Each class wraps the app below it and answers the refusal itself, so that others (a
login, TLS) sit beside them without touching the routes.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from otel_prov._settings import is_loopback

__all__ = ["HostCheck", "HostPolicy", "SameOrigin", "host_name", "host_policy", "same_origin"]

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
"""Names a browser on this machine may use for a server bound to a loopback address."""

_PORT = re.compile(r":\d{1,5}")


def _bare(host: str) -> str:
    """A host in one spelling: lower case, no trailing dot, an IP address canonical."""
    host = host.lower().rstrip(".")
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return host


def host_name(header: str) -> str | None:
    """The host a ``Host`` header names, without its port and in :func:`_bare` spelling
    (an IPv6 address without its brackets); None when the header is malformed."""
    if header.startswith("["):
        address, closed, port = header[1:].partition("]")
        if not closed or (port and not _PORT.fullmatch(port)):
            return None
        return _bare(address)
    name, colon, port = header.partition(":")
    if colon and not _PORT.fullmatch(colon + port):
        return None  # a second colon (an IPv6 address needs brackets) or no digits
    return _bare(name) if name else None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class HostPolicy:
    """Which ``Host`` headers the server answers: those naming one of ``names`` and, when
    it listens on every address (``any_address``), any IP address."""

    names: frozenset[str]
    any_address: bool

    def allows(self, header: str) -> bool:
        host = host_name(header)
        if host is None:
            return False
        return host in self.names or (self.any_address and _is_address(host))


def host_policy(bound: str, allowed: Iterable[str] = ()) -> HostPolicy:
    """The hosts a server bound to ``bound`` answers for: that address, the ``allowed``
    names (``--allowed-host``), and the loopback names when it is bound to loopback or to
    every address.  Bound to every address (0.0.0.0, ::), it also answers for any IP
    address: an address cannot be rebound to another machine the way a name can, and
    the machine's own addresses are not known here."""
    bare = _bare(bound.strip("[]"))
    every = _is_address(bare) and ipaddress.ip_address(bare).is_unspecified
    names = {bare, *(_bare(name.strip("[]")) for name in allowed)}
    if every or is_loopback(bare):
        names |= LOOPBACK_NAMES
    return HostPolicy(frozenset(names), any_address=every)


class HostCheck:
    """Answers 421 to a request whose ``Host`` the :class:`HostPolicy` refuses, and 400
    to one without a ``Host``; passes the others on."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = Headers(scope=scope).get("host")
        if host is None:
            refusal = PlainTextResponse("a request must name its host (a Host header)\n", 400)
        elif not self.policy.allows(host):
            refusal = PlainTextResponse(
                f"this server does not answer for the host {host!r}: a page whose name "
                "was pointed at this address would read the store (DNS rebinding). "
                "Start otel-prov serve with --allowed-host NAME for a name it is "
                "reached by.\n",
                421,
            )
        else:
            await self.app(scope, receive, send)
            return
        await refusal(scope, receive, send)


SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that only read: the routes answering them run no query and change nothing."""


def same_origin(headers: Headers) -> bool:
    """Whether a request that is not a plain read may go on: the browser says it comes
    from this origin (``Sec-Fetch-Site: same-origin``, or ``none`` when the user typed
    it), or, from a browser that sends no ``Sec-Fetch-Site`` (one too old, or a page not
    in a secure context, such as plain HTTP to a LAN address), an ``Origin`` naming this
    host; a request with neither comes from no browser, and no page can send it.  This is
    the rule of Go's ``http.CrossOriginProtection``.  ``Origin: null`` (a sandboxed page,
    a redirect) is no origin of ours.  The Host header has passed :class:`HostCheck`."""
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = headers.get("origin")
    if origin is None:
        return True
    return origin.partition("://")[2].lower() == headers.get("host", "").lower()


class SameOrigin:
    """Answers 403 to a request other than GET, HEAD or OPTIONS that another site's page
    sent (:func:`same_origin`); passes the others on."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] in SAFE_METHODS
            or same_origin(Headers(scope=scope))
        ):
            await self.app(scope, receive, send)
            return
        refusal = PlainTextResponse(
            "refused: this request came from a page of another site; a query runs only "
            "from this server's own SPARQL page\n",
            403,
        )
        await refusal(scope, receive, send)
