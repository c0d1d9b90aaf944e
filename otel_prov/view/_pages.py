"""Every page of the web view, rendered on the server from Jinja2 templates.

One template set serves both ``otel-prov serve`` and ``otel-prov show --format html``:
the session page is the same markup either way, the file just leaves out the navigation,
the download links and the script.  Autoescaping is on for every template, so each value
read from the store is escaped where it is written; the only markup passed through
unescaped is the stylesheet and scripts (ours, and the vendored dagre) and the timeline's
SVG, which escapes every text itself.  The why-graph goes into an attribute as JSON (so
escaped like any value) and the script draws it.  The stylesheet is inlined, so a saved
page needs nothing else (the saved page inlines the scripts too), and its hash goes into
the server's Content-Security-Policy (:data:`STYLE_HASH`), so that no other inline style
or script can run.
"""

from __future__ import annotations

import base64
import hashlib
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.resources import files
from typing import Any

import jinja2
from markupsafe import Markup

from otel_prov.exporters._reading import QueryResult
from otel_prov.prov._stream import RUNNING
from otel_prov.read._diff import diff_sessions
from otel_prov.read._reader import SessionPage
from otel_prov.read._recipes import RECIPES
from otel_prov.read._sparql import STATUSES
from otel_prov.read._trace_spans import MOST_TRACE_SPANS, TraceSpanView
from otel_prov.read._views import SessionSummary, SessionView
from otel_prov.view._labels import (
    answerer_label,
    cost_total_label,
    downstream_label,
    ended_label,
    evaluation_label,
    failure_label,
    outcome_fields,
    readable_time,
    run_took_label,
    shortened,
    token_totals_label,
    tokens_label,
)
from otel_prov.view._timeline_svg import timeline_svg
from otel_prov.view._why_graph import why_drawing

__all__ = [
    "DAGRE",
    "SCRIPT",
    "STYLE_HASH",
    "Tenancy",
    "diff_page",
    "error_page",
    "listing_state",
    "login_page",
    "session_page",
    "sessions_page",
    "sparql_page",
    "tenants_page",
    "trace_links",
]

_STATIC = files("otel_prov.view") / "static"
STYLE = _STATIC.joinpath("style.css").read_text(encoding="utf-8")
SCRIPT = _STATIC.joinpath("app.js").read_text(encoding="utf-8")
"""The page's script: it draws the why-graph."""
DAGRE = (_STATIC / "vendor" / "dagre" / "dagre.min.js").read_text(encoding="utf-8")
"""dagre's minified build, as npm ships it (``static/vendor/dagre/``: its licence, its
version): the why-graph's layout."""
STYLE_HASH = "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()
"""The CSP source of the one inline ``<style>`` every page carries."""


def _status_class(status: str) -> str:
    """The class that colours a status; none for a status we do not know."""
    return f"status-{status}" if status in STATUSES else "status-other"


@jinja2.pass_context
def _query_string(context: jinja2.runtime.Context, **values: str) -> str:
    """A link's query string, with the page's ``tenant`` (``serve --tenants``: the
    tenant read, when the reader asked for one) kept in it."""
    tenant = context.get("tenant", "")
    return urllib.parse.urlencode({**values, "tenant": tenant} if tenant else values)


@jinja2.pass_context
def _tenant_query(context: jinja2.runtime.Context) -> str:
    """``?tenant=NAME`` for a link with no other parameter, or nothing."""
    tenant = context.get("tenant", "")
    return "?" + urllib.parse.urlencode({"tenant": tenant}) if tenant else ""


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("otel_prov.view", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.globals.update(
    css=Markup(STYLE),
    inline_scripts=(Markup(DAGRE), Markup(SCRIPT)),
    outcome_fields=outcome_fields,
    token_totals_label=token_totals_label,
    cost_total_label=cost_total_label,
    evaluation_label=evaluation_label,
    tokens_label=tokens_label,
    failure_label=failure_label,
    downstream_label=downstream_label,
    answerer_label=answerer_label,
    shortened=shortened,
    readable_time=readable_time,
    ended_label=ended_label,
    run_took_label=run_took_label,
    query_string=_query_string,
    tenant_query=_tenant_query,
    status_class=_status_class,
)


@dataclass(frozen=True)
class Tenancy:
    """Whose runs a page shows (``serve --tenants``, ``--tenant``): every page names the
    tenant, and offers the switch among those its reader may read."""

    name: str
    readable: tuple[str, ...] = ()
    """The tenants its reader may switch among (``--tenants``), ``name`` among them;
    empty when the server reads one tenant (``--tenant``).  With them, every link and
    form of the page keeps ``?tenant=name``."""


def _now() -> str:
    """The time of reading, as stored times are written: what a run still running is
    timed to."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class _Run:
    view: SessionView
    links: list[tuple[str, str, bool]]
    why: str | None
    """The why-graph to draw (:class:`~otel_prov.view._why_graph.WhyDrawing` as JSON)."""
    timeline: Markup
    cut: int | None = None
    """How many spans of the trace are drawn, when the store may hold more."""


def trace_links(trace_id: str, templates: Mapping[str, str]) -> list[tuple[str, str, bool]]:
    """(backend, URL, whether it may be a link) for each URL template with ``{trace_id}``:
    only ``http(s)`` URLs become links, so a template cannot smuggle in ``javascript:``."""
    found = []
    for name, template in templates.items():
        url = template.replace("{trace_id}", urllib.parse.quote(trace_id, safe=""))
        found.append((name, url, urllib.parse.urlsplit(url).scheme in ("http", "https")))
    return found


def _render(
    template: str,
    *,
    title: str,
    standalone: bool = False,
    tenancy: Tenancy | None = None,
    now: str | None = None,
    **context: Any,
) -> str:
    """``tenancy``: whose runs the page shows; ``now``: the time of reading (the clock's
    by default)."""
    return _ENV.get_template(template).render(
        title=title,
        standalone=standalone,
        tenancy=tenancy,
        tenant=tenancy.name if tenancy is not None and tenancy.readable else "",
        now=now or _now(),
        **context,
    )


def _run(
    view: SessionView,
    links: Mapping[str, str],
    why: Mapping[str, Any] | None = None,
    trace: Sequence[TraceSpanView] = (),
) -> _Run:
    return _Run(
        view,
        trace_links(view.trace_id, links),
        None if why is None else why_drawing(why).as_json(),
        Markup(timeline_svg(view, trace)),
        MOST_TRACE_SPANS if len(trace) >= MOST_TRACE_SPANS else None,
    )


def session_page(
    views: Sequence[SessionView],
    *,
    links: Mapping[str, str] | None = None,
    why: Mapping[str, Mapping[str, Any]] | None = None,
    traces: Mapping[str, Sequence[TraceSpanView]] | None = None,
    standalone: bool = False,
    tenancy: Tenancy | None = None,
    now: str | None = None,
) -> str:
    """The page of one or more runs (a conversation id can name several): each run with
    its why-graph (``why`` maps a run's IRI to its ``WhyGraph.as_json()``), its timeline
    (with the spans of its trace ``traces`` holds by trace id: the read API's
    ``trace_spans``) and its trace ``links`` (backend -> URL template); a run still open
    (``running``) says how long it has run by ``now`` and keeps itself up to date
    (``static/app.js`` polls ``/session/state``).  ``standalone``: the file ``show
    --format html`` writes, with no navigation or downloads, its scripts inlined."""
    if len(views) == 1:
        title = f"otel-prov: {views[0].agent or 'session'} {views[0].id}"
    else:
        title = f"otel-prov: {len(views)} sessions"
    runs = [
        _run(view, links or {}, (why or {}).get(view.id), (traces or {}).get(view.trace_id, ()))
        for view in views
    ]
    # A run still open: the page polls its state and reads itself again when it changes.
    running = [view.id for view in views if view.status == RUNNING and not standalone]
    live = _state_url("/session/state", {"id": running[0]}, tenancy) if running else None
    return _render(
        "session.html",
        title=title,
        standalone=standalone,
        runs=runs,
        live=live,
        tenancy=tenancy,
        now=now,
    )


def _state_url(path: str, values: Mapping[str, str], tenancy: Tenancy | None) -> str:
    """The address a live page polls, its tenant kept."""
    kept = (
        {**values, "tenant": tenancy.name} if tenancy is not None and tenancy.readable else values
    )
    return path + "?" + urllib.parse.urlencode(kept)


def sessions_page(
    page: SessionPage,
    filters: Mapping[str, str],
    *,
    first: bool,
    error: str | None = None,
    tenancy: Tenancy | None = None,
    waiting: str | None = None,
    now: str | None = None,
) -> str:
    """The list of runs: ``filters`` are the form's values, kept in the paging links.
    Each run with how long it took (or has run, by ``now``), and a box to pick it for
    the diff.  The first page keeps itself up to date (``static/app.js`` polls
    ``/sessions/state``): runs show as they arrive.  ``waiting``: the store that does not
    exist yet (``serve`` started before any agent wrote it)."""
    kept = {name: value for name, value in filters.items() if value and name != "cursor"}
    if tenancy is not None and tenancy.readable:
        kept["tenant"] = tenancy.name
    next_url = (
        None
        if page.next_cursor is None
        else "/?" + urllib.parse.urlencode({**kept, "cursor": page.next_cursor})
    )
    return _render(
        "sessions.html",
        title="otel-prov: sessions",
        rows=page.sessions,
        filters={name: filters.get(name, "") for name in _FILTERS},
        error=error,
        next_url=next_url,
        first_url=None if first else "/?" + urllib.parse.urlencode(kept),
        live=_state_url("/sessions/state", kept, None) if first and not error else None,
        waiting=waiting,
        tenancy=tenancy,
        now=now,
    )


_FILTERS = ("agent", "service", "status", "since", "until", "q")


def listing_state(rows: Sequence[SessionSummary], waiting: bool) -> dict[str, Any]:
    """What the first page of the list polls (``/sessions/state``): its runs, their
    status and steps, and whether the store is still awaited; the page is read again
    when this changes."""
    return {
        "follow": True,
        "waiting": waiting,
        "runs": [[row.id, row.status, row.iterations, row.end] for row in rows],
    }


def tenants_page(choices: Sequence[tuple[str, SessionSummary | None]]) -> str:
    """The first page of a reader of several tenants none of which is its own (an
    auditor's): each tenant, with its newest run, to pick one from."""
    return _render("tenants.html", title="otel-prov: tenants", choices=choices)


def diff_page(
    a: str,
    b: str,
    sides: tuple[SessionView, SessionView] | None,
    *,
    links: Mapping[str, str] | None = None,
    error: str | None = None,
    tenancy: Tenancy | None = None,
    now: str | None = None,
) -> str:
    """Two runs side by side (``sides``), asked for as ``a`` and ``b``, with where they
    first part ways (the read API's :func:`~otel_prov.read._diff.diff_sessions`) said
    above them and marked in both: the step, or the answer."""
    left, right = (None, None) if sides is None else (_run(s, links or {}) for s in sides)
    diff = None if sides is None else diff_sessions(*sides)
    return _render(
        "diff.html",
        title="otel-prov: diff",
        a=a,
        b=b,
        left=left,
        right=right,
        diff=diff,
        error=error,
        tenancy=tenancy,
        now=now,
    )


def sparql_page(
    text: str,
    result: QueryResult | None,
    *,
    timeout_s: float,
    turtle: str = "",
    error: str | None = None,
    tenancy: Tenancy | None = None,
) -> str:
    """The query box with ``text`` (empty: the first recipe of docs/sparql.md, the others a
    pick away), and the answer: a table of rows, a boolean, or the ``turtle`` of a
    CONSTRUCT or DESCRIBE."""
    text = text or RECIPES[0].text
    typed = text.replace("\r\n", "\n")  # a browser sends a textarea's lines so
    return _render(
        "sparql.html",
        title="otel-prov: SPARQL",
        text=text,
        recipes=RECIPES,
        chosen=next((recipe for recipe in RECIPES if recipe.text == typed), None),
        result=result,
        turtle=turtle,
        timeout=f"{timeout_s:g}",
        error=error,
        tenancy=tenancy,
    )


def error_page(heading: str, message: str, *, tenancy: Tenancy | None = None) -> str:
    return _render(
        "error.html",
        title=f"otel-prov: {heading}",
        heading=heading,
        message=message,
        tenancy=tenancy,
    )


def login_page(message: str, target: str) -> str:
    """The form a reader types its token into (``serve --token-file``, ``--tenants``),
    styled as every page is; ``target`` is where the login leads back to."""
    return _render(
        "login.html", title="otel-prov: log in", message=message, target=target, login=True
    )
