"""The Starlette app of ``otel-prov serve``: routes, and what each answers.

Read-only by construction: the routes answer GET, the SPARQL box runs a query by POST
only (from this server's own page: :mod:`otel_prov.view._guards`), and every read goes
through the read API or the checked user query.  The embedded store is opened
read-only and opened again when the last opening is more than ``refresh_s`` old, since
a read-only opening sees the store as it was then while agents keep writing.  Every
answer carries the security headers of :data:`HEADERS`.
"""

from __future__ import annotations

import functools
import json
import math
import threading
import urllib.parse
from collections.abc import Callable, Collection, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from otel_prov._tenants import Tenants
from otel_prov.exporters._reading import QueryBackend, QueryResult, StoreUnavailableError
from otel_prov.prov._stream import RUNNING
from otel_prov.read._confinement import Confinement
from otel_prov.read._rdf_documents import (
    render_jsonld,
    render_rows_csv,
    render_rows_json,
    render_turtle,
)
from otel_prov.read._reader import ProvenanceReader, SessionPage, parse_moment
from otel_prov.read._sparql import STATUSES
from otel_prov.read._user_query import UpdateRefusedError
from otel_prov.read._views import SessionSummary
from otel_prov.view._guards import (
    HostCheck,
    ReaderLogin,
    SameOrigin,
    TrustedProxy,
    host_policy,
)
from otel_prov.view._pages import (
    DAGRE,
    SCRIPT,
    STYLE_HASH,
    Tenancy,
    diff_page,
    error_page,
    listing_state,
    session_page,
    sessions_page,
    sparql_page,
    tenants_page,
)
from otel_prov.view._reading import FreshBackend, NoStoreYet, TextIndexes
from otel_prov.view._timed_query import QueryTimeoutError, run_timed_query

__all__ = ["HEADERS", "PAGE_SIZE", "create_app"]

PAGE_SIZE = 50

HEADERS = {
    "content-security-policy": (
        f"default-src 'none'; style-src '{STYLE_HASH}'; script-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    # Not no-referrer: under it a browser sends "Origin: null" with the page's own POST,
    # and a browser that sends no Sec-Fetch-Site then has nothing else to show it is ours.
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
"""Only the page's own stylesheet (by hash) and scripts (``/static/``) may run; no
other site is sent where a link of ours was followed from."""


class _SecurityHeaders:
    """Adds :data:`HEADERS` to every answer, Starlette's own 404 and 405 included."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [
                    *message.get("headers", []),
                    *((k.encode(), v.encode()) for k, v in HEADERS.items()),
                ]
            await send(message)

        await self.app(scope, receive, with_headers)


class _BadRequest(ValueError):
    """A parameter the page cannot use; the message names it."""


class _NotFound(LookupError):
    """No session the page was asked for; the message says which."""


class _Forbidden(Exception):
    """A tenant the reader may not read; the message says which it may."""


def _moment(name: str, value: str) -> datetime | None:
    if not value:
        return None
    try:
        return parse_moment(value)
    except ValueError as exc:
        raise _BadRequest(f"{name}: {exc}") from exc


def create_app(
    open_backend: Callable[[], QueryBackend],
    *,
    graph: str,
    tenant: str | None = None,
    trace_links: Mapping[str, str] | None = None,
    query_timeout_s: float = 10.0,
    refresh_s: float = 2.0,
    allow_service: Collection[str] = (),
    bound_host: str = "127.0.0.1",
    allowed_hosts: Iterable[str] = (),
    max_queries: int = 2,
    reader_tokens: Mapping[bytes, str] | None = None,
    proxy_header: str | None = None,
    tenants: Tenants | None = None,
    awaited_store: Path | None = None,
) -> Starlette:
    """The web app over the backend ``open_backend`` opens and the provenance graph
    ``graph`` (an IRI), or the graph of ``tenant`` under it, the only graph a query of
    the SPARQL page then sees; ``trace_links`` maps a backend name (jaeger, tempo) to a URL
    template with ``{trace_id}``; a query of the SPARQL page may call SERVICE only on the
    endpoints of ``allow_service``.  It answers requests whose ``Host`` names
    ``bound_host`` (the address it listens on), one of ``allowed_hosts``, or the
    loopback names when bound to loopback (:func:`~otel_prov.view._guards.host_policy`).
    At most ``max_queries`` queries of the SPARQL page run at once: each may hold a core,
    and on the embedded store a process, until its time is up; one more is told to come
    back (503, ``Retry-After``) rather than wait.  With ``reader_tokens`` (token: the
    reader it stands for) every page needs one (:class:`~otel_prov.view._guards.ReaderLogin`);
    with ``proxy_header``, the header an authenticating proxy sets
    (:class:`~otel_prov.view._guards.TrustedProxy`).  With ``tenants``, the readers are
    theirs (by token, client certificate or the proxy's user), and each request reads one
    tenant's graph (under ``graph``) of those its reader may read: its own, or
    ``?tenant=NAME``; a query
    of the SPARQL page sees that graph only; every page names the tenant it reads and
    offers the others.  Opens the backend once now, so that a store that cannot be read
    fails here (``StoreUnavailableError``); with ``awaited_store``, the embedded store's
    directory, one that does not exist yet is waited for: the pages say there are no
    runs yet, and the list shows them once a writer has made it."""
    own = Confinement.of(graph, tenant)
    # Each tenant a reader may read, confined once: the SPARQL page's queries are run
    # with the confinement of the request's tenant, as ``otel-prov query --tenant`` is.
    confinements = {
        name: Confinement.of(graph, name)
        for reader_tenant in (tenants.tenants.values() if tenants is not None else ())
        for name in reader_tenant.reads
    }
    fresh = FreshBackend(open_backend, refresh_s, awaited_store)
    links = dict(trace_links or {})
    free = threading.BoundedSemaphore(max_queries)  # taken without waiting, in the event loop

    index_of = TextIndexes(fresh).of  # a graph's for the app's life: its runs read once

    if tenants is None:
        index_of(own.graph)

    def asked_tenant(request: Request) -> str:
        """The tenant this request reads, of those its reader may (``serve --tenants``):
        ``?tenant=``, else the first it may read (its own, when it may)."""
        assert tenants is not None
        reader = tenants.tenants[request.state.reader]
        asked = request.query_params.get("tenant", "").strip() or reader.reads[0]
        if asked not in reader.reads:
            raise _Forbidden(f"this reader may read {', '.join(reader.reads)}, not {asked!r}")
        return asked

    def confinement_of(request: Request) -> Confinement:
        """What this request may read: ``graph`` or ``tenant``'s, or the graph of the
        tenant of its reader (``?tenant=`` among those it may read)."""
        return own if tenants is None else confinements[asked_tenant(request)]

    def shown(request: Request) -> Tenancy | None:
        """Whose runs the page shows, and the tenants its reader may switch to."""
        if tenants is None:
            return None if tenant is None else Tenancy(tenant)
        return Tenancy(asked_tenant(request), tenants.tenants[request.state.reader].reads)

    def choosing(request: Request) -> bool:
        """Whether the first page asks its reader to pick a tenant: it may read several,
        none its own (an auditor), and named none."""
        if tenants is None or request.query_params.get("tenant", "").strip():
            return False
        reader = tenants.tenants[request.state.reader]
        return reader.name not in reader.reads and len(reader.reads) > 1

    def reader(request: Request) -> ProvenanceReader:
        named = confinement_of(request).graph
        return ProvenanceReader(fresh.get(), graph=named, text_index=index_of(named))

    def html(text: str, status: int = 200) -> HTMLResponse:
        return HTMLResponse(text, status_code=status)

    def listing(request: Request) -> tuple[SessionPage, dict[str, str]]:
        """The page of runs the list's parameters ask for, and those parameters."""
        filters = {name: request.query_params.get(name, "").strip() for name in _LIST_PARAMS}
        if filters["status"] and filters["status"] not in STATUSES:
            raise _BadRequest(f"status: {filters['status']!r} is none of {', '.join(STATUSES)}")
        page = reader(request).sessions(
            agent=filters["agent"] or None,
            service=filters["service"] or None,
            status=filters["status"] or None,
            since=_moment("since", filters["since"]),
            until=_moment("until", filters["until"]),
            text=filters["q"] or None,
            cursor=filters["cursor"] or None,
            limit=PAGE_SIZE,
        )
        return page, filters

    def sessions(request: Request) -> Response:
        if choosing(request):
            return html(tenants_page(tenant_choices(request)))
        try:
            page, filters = listing(request)
        except ValueError as exc:
            return html(error_page("Bad request", str(exc), tenancy=shown(request)), 400)
        return html(
            sessions_page(page, filters, first=not filters["cursor"], tenancy=shown(request))
        )

    def sessions_state(request: Request) -> Response:
        """What the first page of the list polls (``static/app.js``): the runs on it."""
        return JSONResponse(listing_state(listing(request)[0].sessions, waiting=False))

    def tenant_choices(request: Request) -> list[tuple[str, SessionSummary | None]]:
        """Each tenant the reader may read, with its newest run (None: none yet)."""
        assert tenants is not None
        found: list[tuple[str, SessionSummary | None]] = []
        for name in tenants.tenants[request.state.reader].reads:
            graph_of = confinements[name].graph
            newest = ProvenanceReader(fresh.get(), graph=graph_of).sessions(limit=1).sessions
            found.append((name, newest[0] if newest else None))
        return found

    def matches(request: Request) -> tuple[ProvenanceReader, list[str]]:
        ident = request.query_params.get("id", "").strip()
        if not ident:
            raise _BadRequest("id: give a session IRI, trace id or conversation id")
        found = reader(request)
        runs = found.find(ident)
        if not runs:
            raise _NotFound(f"no session with id, trace id or conversation id {ident!r}")
        return found, runs

    def session(request: Request) -> Response:
        found, runs = matches(request)
        views = [found.session(run) for run in runs]
        why = {run: found.why(run).as_json() for run in runs}
        traces = {view.trace_id: found.trace_spans(view.trace_id) for view in views}
        page = session_page(views, links=links, why=why, traces=traces, tenancy=shown(request))
        return html(page)

    def session_state(request: Request) -> Response:
        """What the page of a run still open polls (``static/app.js``): each run's status
        and how many steps it has; the page is read again when this changes."""
        found, runs = matches(request)
        views = [found.session(run) for run in runs]
        return JSONResponse(
            {
                "running": any(view.status == RUNNING for view in views),
                "runs": [
                    {"id": view.id, "status": view.status, "iterations": len(view.iterations)}
                    for view in views
                ],
            }
        )

    def download(render: Callable[[Any], str], media: str, suffix: str) -> Callable[..., Response]:
        def answer(request: Request) -> Response:
            found, runs = matches(request)
            triples = list(dict.fromkeys(t for run in runs for t in found.triples(run)))
            name = runs[0].rpartition(":")[2] or "session"
            return Response(
                render(triples),
                media_type=media,
                headers={"content-disposition": f'attachment; filename="{name}.{suffix}"'},
            )

        return answer

    def diff(request: Request) -> Response:
        a = request.query_params.get("a", "").strip()
        b = request.query_params.get("b", "").strip()
        tenancy = shown(request)
        picked = [run.strip() for run in request.query_params.getlist("run") if run.strip()]
        if picked and not (a or b):
            if len(picked) != 2:
                error = f"pick two runs in the list to compare them ({len(picked)} picked)"
                return html(diff_page("", "", None, error=error, tenancy=tenancy), 400)
            b, a = picked  # the list is newest first: the older one first, as diff A B reads
        if not (a and b):
            return html(diff_page(a, b, None, links=links, tenancy=tenancy))
        found = reader(request)
        sides = []
        for ident in (a, b):
            runs = found.find(ident)
            if not runs:
                message = f"no session with id, trace id or conversation id {ident!r}"
                return html(diff_page(a, b, None, error=message, tenancy=tenancy), 404)
            sides.append(found.session(runs[-1]))  # the newest, as ``otel-prov diff`` takes
        return html(diff_page(a, b, (sides[0], sides[1]), links=links, tenancy=tenancy))

    async def sparql(request: Request) -> Response:
        tenancy = shown(request)
        if request.method == "GET":
            return _sparql_get(request.query_params.get("query", ""), query_timeout_s, tenancy)
        page = functools.partial(sparql_page, timeout_s=query_timeout_s, tenancy=tenancy)
        body = (await request.body()).decode("utf-8", errors="replace")
        values = dict(urllib.parse.parse_qsl(body, keep_blank_values=True))
        text, fmt = values.get("query", ""), values.get("format", "html")
        if not text.strip():
            return html(page("", None))
        reads = confinement_of(request)
        if not free.acquire(blocking=False):
            return _busy(text, max_queries, query_timeout_s, tenancy)
        try:
            result = await run_in_threadpool(
                run_timed_query,
                fresh.get(),
                text,
                confinement=reads,
                timeout_s=query_timeout_s,
                allow_service=allow_service,
            )
        except UpdateRefusedError as exc:
            return html(page(text, None, error=str(exc)), 400)
        except QueryTimeoutError as exc:
            return html(page(text, None, error=str(exc)), 504)
        except ValueError as exc:
            return html(page(text, None, error=str(exc)), 400)
        finally:
            free.release()
        if fmt in ("csv", "json"):
            return _download_answer(result, fmt)
        turtle = render_turtle(result.triples) if result.kind == "graph" else ""
        return html(page(text, result, turtle=turtle))

    def script(request: Request) -> Response:
        return Response(SCRIPT, media_type="text/javascript")

    def layout_library(request: Request) -> Response:
        return Response(DAGRE, media_type="text/javascript")

    def no_icon(request: Request) -> Response:
        # Browsers ask for one on every site; a 404 would be an error in their console.
        return Response(status_code=204)

    app = Starlette(
        routes=[
            Route("/", sessions),
            Route("/sessions/state", sessions_state),
            Route("/session", session),
            Route("/session/state", session_state),
            Route("/session.ttl", download(render_turtle, "text/turtle", "ttl")),
            Route("/session.jsonld", download(render_jsonld, "application/ld+json", "jsonld")),
            Route("/diff", diff),
            Route("/sparql", sparql, methods=["GET", "POST"]),
            Route("/static/app.js", script),
            Route("/static/dagre.min.js", layout_library),
            Route("/favicon.ico", no_icon),
        ],
        exception_handlers={
            StoreUnavailableError: _store_unavailable,
            _BadRequest: _bad_request,
            _NotFound: _not_found,
            _Forbidden: _forbidden,
            NoStoreYet: _no_store_yet,
        },
    )
    # The last added runs first: the headers go on every answer, refusals included.
    if proxy_header:
        users = None if tenants is None else _tenant_of_user(tenants)
        app.add_middleware(TrustedProxy, header=proxy_header, readers=users)
    elif tenants is not None:
        app.add_middleware(ReaderLogin, tokens=tenants.tokens, subjects=tenants.subjects)
    elif reader_tokens:
        app.add_middleware(ReaderLogin, tokens=lambda: reader_tokens)
    app.add_middleware(SameOrigin)
    app.add_middleware(HostCheck, policy=host_policy(bound_host, allowed_hosts))
    app.add_middleware(_SecurityHeaders)
    return app


def _sparql_get(text: str, timeout_s: float, tenancy: Tenancy | None) -> Response:
    """The SPARQL page; a query given in the URL is shown, not run (405): a link or an
    image on any site could send that GET, and a query costs what it costs."""
    if not text.strip():
        return HTMLResponse(sparql_page("", None, timeout_s=timeout_s, tenancy=tenancy))
    error = "a query runs only when posted by this page's Run button; press it to run this one"
    return HTMLResponse(
        sparql_page(text, None, timeout_s=timeout_s, error=error, tenancy=tenancy),
        status_code=405,
        headers={"allow": "POST"},
    )


def _busy(text: str, max_queries: int, timeout_s: float, tenancy: Tenancy | None) -> Response:
    """503 for a query beyond the ``max_queries`` running: a slot frees within the time
    limit, which ``Retry-After`` gives."""
    running = "1 query is" if max_queries == 1 else f"{max_queries} queries are"
    retry = str(math.ceil(timeout_s))
    error = f"{running} running, the most at once (--max-queries); try again in {retry} s"
    return HTMLResponse(
        sparql_page(text, None, timeout_s=timeout_s, error=error, tenancy=tenancy),
        status_code=503,
        headers={"retry-after": retry},
    )


def _tenant_of_user(tenants: Tenants) -> Callable[[str], str | None]:
    def tenant(user: str) -> str | None:
        found = tenants.by_user(user)
        return None if found is None else found.name

    return tenant


_LIST_PARAMS = ("agent", "service", "status", "since", "until", "q", "cursor")


def _store_unavailable(request: Request, exc: Exception) -> Response:
    return HTMLResponse(error_page("Store unavailable", str(exc)), status_code=503)


def _bad_request(request: Request, exc: Exception) -> Response:
    return HTMLResponse(error_page("Bad request", str(exc)), status_code=400)


def _not_found(request: Request, exc: Exception) -> Response:
    return HTMLResponse(error_page("Not found", str(exc)), status_code=404)


def _forbidden(request: Request, exc: Exception) -> Response:
    return HTMLResponse(error_page("Forbidden", str(exc)), status_code=403)


def _no_store_yet(request: Request, exc: Exception) -> Response:
    """Before an agent has written the store: the list says there are no runs yet and
    keeps looking (its state says it waits); any other page that there is no run."""
    assert isinstance(exc, NoStoreYet)
    if request.url.path == "/sessions/state":
        return JSONResponse(listing_state((), waiting=True))
    if request.url.path == "/":
        filters = {name: "" for name in _LIST_PARAMS}
        page = SessionPage(sessions=(), next_cursor=None)
        return HTMLResponse(sessions_page(page, filters, first=True, waiting=str(exc.path)))
    return HTMLResponse(error_page("Not found", str(exc)), status_code=404)


def _download_answer(result: QueryResult, fmt: str) -> Response:
    """A SELECT answer as CSV or JSON rows, an ASK as JSON, a graph as JSON-LD."""
    if result.kind == "graph":
        body, media, name = render_jsonld(result.triples), "application/ld+json", "answer.jsonld"
    elif result.kind == "ask":
        body, media, name = json.dumps(result.boolean), "application/json", "answer.json"
    elif fmt == "json":
        body, media, name = render_rows_json(result), "application/json", "answer.json"
    else:
        body, media, name = render_rows_csv(result), "text/csv", "answer.csv"
    return Response(
        body, media_type=media, headers={"content-disposition": f'attachment; filename="{name}"'}
    )
