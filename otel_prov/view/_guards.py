"""What a request must pass before the web app answers it: ASGI middleware, one check each.

The app is read-only, yet it holds everything agents recorded, and ``/sparql`` costs the
machine what a query costs.  A browser lets any web page send requests to it, so:

- :class:`HostCheck`: the ``Host`` header must name this server.  DNS rebinding points a
  name the attacker owns at 127.0.0.1, so that their page reads ours as same-origin; the
  browser still sends ``Host: attacker.example``, and that is refused with 421.
- :class:`SameOrigin`: a request that is not a plain read (a POST, which is how a query
  runs) must come from this server's own pages.  A page elsewhere can post a form or a
  no-cors ``fetch`` here, unread but run; :func:`same_origin` refuses it with 403.

- :class:`ReaderLogin` (``serve --token-file``): every page and endpoint needs the
  bearer token, sent as ``Authorization: Bearer ...`` or typed once into ``/login``, which
  sets a ``Secure``, ``HttpOnly`` cookie standing for it (never the token itself).  With
  tenants under mutual TLS, a client certificate whose subject a tenant names lets its
  reader in without a token.
- :class:`TrustedProxy` (``serve --trusted-proxy-header NAME``): the user is who an
  authenticating proxy (oauth2-proxy) says in that header; a request without it did not
  come through the proxy and is refused.

Each class wraps the app below it and answers the refusal itself, so that others sit
beside them without touching the routes.  The reader a request is let in as goes in the
request's state (``request.state.reader``).  Tokens are never logged.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import secrets
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

from otel_prov._settings import is_loopback
from otel_prov._tls import client_subject
from otel_prov._tokens import token_digest
from otel_prov.view._pages import login_page

__all__ = [
    "COOKIE",
    "HostCheck",
    "HostPolicy",
    "ReaderLogin",
    "SameOrigin",
    "TrustedProxy",
    "host_name",
    "host_policy",
    "same_origin",
]

_logger = logging.getLogger(__name__)

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


COOKIE = "otel_prov_session"
"""The login cookie: a random name for a reader's login, kept in this process only."""

_MAX_LOGINS = 10_000
"""Logins kept at once; past it the oldest goes (its reader logs in again)."""


def _local_path(target: str) -> str:
    """``target`` when it is a path of this server, else ``/`` (no redirect elsewhere)."""
    if target.startswith("/") and not target.startswith(("//", "/\\")):
        return target
    return "/"


def _set_reader(scope: Scope, reader: str) -> None:
    scope.setdefault("state", {})["reader"] = reader


class ReaderLogin:
    """Lets in a request that carries a token of ``tokens()`` (its SHA-256, by
    :func:`~otel_prov._tokens.token_digest`: the reader it stands for) as
    ``Authorization: Bearer <token>``, or the cookie that ``POST /login`` set for it, or
    without either a client certificate of a subject of ``subjects()`` (its
    :func:`~otel_prov._tls.canonical_subject`: the reader); sends a browser asking for a
    page to ``/login``, and answers anything else 401.  Both are asked at each request:
    a token taken out of the tenants file stops working, and so do the logins made
    with it.

    The cookie names a random login kept here (a restart logs everyone out), not the
    token, and is ``Secure`` (browsers keep it on ``http://localhost`` too, not over
    plaintext elsewhere), ``HttpOnly`` and ``SameSite=Lax``.  The login form's POST has
    passed :class:`SameOrigin`.

    Without ``login`` (an MCP server: its clients are programs, not browsers) only the
    header or a certificate lets a request in: there is no ``/login`` and no cookie."""

    def __init__(
        self,
        app: ASGIApp,
        tokens: Callable[[], Mapping[bytes, str]],
        subjects: Callable[[], Mapping[str, str]] | None = None,
        *,
        login: bool = True,
    ) -> None:
        self.app = app
        self._tokens = tokens
        self._subjects = subjects
        self._login_form = login
        self._logins: dict[str, bytes] = {}
        """Login -> the SHA-256 of the token it was made with."""
        self._lock = threading.Lock()

    def _by_token(self, token: str) -> tuple[bytes, str] | None:
        """(digest, reader) of ``token``; None: no reader's."""
        # The sha256 of a guess says nothing of how near it came: a plain lookup is safe.
        digest = token_digest(token)
        reader = self._tokens().get(digest) if token.strip() else None
        return None if reader is None else (digest, reader)

    def _reader(self, headers: Headers, cookies: Mapping[str, str]) -> str | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer":
            found = self._by_token(token)
            return None if found is None else found[1]
        login = cookies.get(COOKIE) if self._login_form else None
        if login is None:
            return None
        with self._lock:
            digest = self._logins.get(login)
        reader = None if digest is None else self._tokens().get(digest)
        if digest is not None and reader is None:  # its token was taken out: it ends
            with self._lock:
                self._logins.pop(login, None)
        return reader

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        if self._login_form and request.url.path == "/login":
            answer = await self._login(request)
        elif request.url.path == "/favicon.ico":
            # Asked for by the login page too, before any login: there is none to give.
            answer = Response(status_code=204)
        else:
            reader = self._reader(request.headers, request.cookies)
            if reader is None and self._subjects is not None:
                reader = self._by_subject(request, self._subjects())
            if reader is not None:
                _set_reader(scope, reader)
                await self.app(scope, receive, send)
                return
            answer = self._refusal(request)
        await answer(scope, receive, send)

    def _by_subject(self, request: Request, subjects: Mapping[str, str]) -> str | None:
        subject = client_subject(request.scope) if subjects else None
        if subject is None:
            return None
        reader = subjects.get(subject)
        if reader is None:
            _logger.warning(
                "serve refused a request from %s: no token, and its client certificate %s "
                "is no tenant's (--tenants)",
                request.client.host if request.client else "unknown",
                subject,
            )
        return reader

    def _refusal(self, request: Request) -> Response:
        browser = request.method == "GET" and "text/html" in request.headers.get("accept", "")
        if self._login_form and browser:
            back = request.url.path + (f"?{request.url.query}" if request.url.query else "")
            return RedirectResponse("/login?" + urllib.parse.urlencode({"next": back}), 303)
        return PlainTextResponse(
            "this server needs a reader's token: send 'Authorization: Bearer <token>'"
            + (", or log in at /login\n" if self._login_form else "\n"),
            401,
            headers={"www-authenticate": 'Bearer realm="otel-prov"'},
        )

    async def _login(self, request: Request) -> Response:
        if request.method != "POST":
            target = _local_path(request.query_params.get("next", "/"))
            return _form("Give your reader's token.", target, 200)
        body = (await request.body()).decode("utf-8", errors="replace")
        values = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        target = _local_path(values.get("next", "/"))
        found = self._by_token(values.get("token", ""))
        if found is None:
            client = request.client.host if request.client else "unknown"
            _logger.warning("serve: a login with a wrong token, from %s", client)
            return _form("That token is not one of this server's.", target, 401)
        login = secrets.token_urlsafe(32)
        with self._lock:
            if len(self._logins) >= _MAX_LOGINS:
                del self._logins[next(iter(self._logins))]
            self._logins[login] = found[0]
        answer = RedirectResponse(target, 303)
        answer.set_cookie(COOKIE, login, secure=True, httponly=True, samesite="lax", path="/")
        return answer


def _form(message: str, target: str, status: int) -> HTMLResponse:
    return HTMLResponse(login_page(message, target), status)


class TrustedProxy:
    """Lets in a request carrying the ``header`` an authenticating proxy sets (its value
    is the user, and the reader); answers 401 to one without it, which did not come
    through the proxy.  With ``readers`` (tenants), the reader is the one it gives for the
    user, and a user it gives none for is refused (403).  Only the proxy must be able to
    reach this server (bind it to the loopback, or to a network only the proxy is on):
    anyone else could set the header too."""

    def __init__(
        self, app: ASGIApp, header: str, readers: Callable[[str], str | None] | None = None
    ) -> None:
        self.app = app
        self.header = header
        self.readers = readers

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        user = Headers(scope=scope).get(self.header, "").strip()
        reader = user if self.readers is None or not user else self.readers(user)
        if reader:
            _set_reader(scope, reader)
            await self.app(scope, receive, send)
            return
        refusal = (
            PlainTextResponse(
                f"refused: no {self.header} header, so this request did not come through "
                "the authenticating proxy in front of this server\n",
                401,
            )
            if not user
            else PlainTextResponse(f"refused: {user} is no tenant's reader here\n", 403)
        )
        await refusal(scope, receive, send)
