"""What each tool, resource and prompt of ``otel-prov mcp`` answers, for one reader.

Each is a thin shell over :mod:`otel_prov.read` (and the checked user query): the read
API answers, the data is what the CLI prints for the same question (``sessions``,
``show``, ``why``, ``diff``, ``summary``, ``verify`` and ``query`` with ``--format
json``), and :mod:`~otel_prov.mcp_server._fit` keeps it to a size a model can take, with a
cursor to the rest.  Every answer names the run ids and trace ids the next call can
follow.  No protocol here: the server (:mod:`~otel_prov.mcp_server._server`) calls these
with the reader the request may read, and the benchmark calls them without it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import urllib.parse
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from otel_prov.cli._render import render_json, render_mermaid, render_text
from otel_prov.cli._render_report import render_checks
from otel_prov.cli._verify import UNTRUSTED_NOTE
from otel_prov.exporters._reading import QueryBackend, QueryResult
from otel_prov.mcp_server._fit import (
    LIMITS,
    MOST_TEXT,
    decode_position,
    encode_position,
    fit_page,
    shrink,
)
from otel_prov.read._confinement import Confinement
from otel_prov.read._rdf_documents import render_turtle
from otel_prov.read._reader import ProvenanceReader, encode_cursor, parse_moment
from otel_prov.read._text_index import TextIndex
from otel_prov.read._user_query import (
    check_user_query,
    dataset_graphs,
    prologue_end,
    query_form,
)
from otel_prov.view._timed_query import run_timed_query

__all__ = ["MOST_ROWS", "Tools", "account_uri", "turtle_uri"]

MOST_ROWS = 1000
"""Rows (or triples) one ``sparql`` page holds at most, whatever its ``limit`` asks."""

_TRACE_ID = re.compile(r"[0-9a-f]{32}")


def account_uri(run: str) -> str:
    """The resource of a run's Markdown account."""
    return f"otel-prov://runs/{urllib.parse.quote(run, safe='')}"


def turtle_uri(run: str) -> str:
    """The resource of a run's PROV-O triples as Turtle."""
    return f"{account_uri(run)}/turtle"


def _no_run(ident: str) -> LookupError:
    return LookupError(
        f"no run with id, trace id or conversation id {ident!r} (list_runs gives the ids)"
    )


def _cut_note(count: int, where: str) -> dict[str, str]:
    """The note of a result whose texts were cut: how many, and where they are whole."""
    if not count:
        return {}
    return {
        "cut": f"{count} text(s) longer than {MOST_TEXT:,} characters were cut, each "
        f"saying how many characters it lost; {where}"
    }


def _paged(
    tool: str,
    key: str,
    start: int,
    result: dict[str, Any],
    path: tuple[str, ...],
    items: list[Any],
    where: str,
    limit: int | None = None,
) -> dict[str, Any]:
    """``result`` with the page of ``items`` from ``start`` at ``path`` that fits the
    tool's limit (or ``limit``), its ``next_cursor`` (``key``: the question it pages), and
    where the whole of a cut text is (``where``)."""
    page, following, cut = fit_page(result, path, items, start, limit or LIMITS[tool])
    if following is not None:
        page["next_cursor"] = encode_position(tool, key, following)
    return page | _cut_note(cut, where)


@dataclass(frozen=True)
class Tools:
    """The answers of one server: ``backend`` gives the store as it is now, ``indexes``
    the text index of a graph; a query of ``sparql`` stops after ``query_timeout_s`` and
    may call SERVICE only on the endpoints of ``allow_service``."""

    backend: Callable[[], QueryBackend]
    indexes: Callable[[str], TextIndex]
    query_timeout_s: float = 10.0
    allow_service: Collection[str] = ()

    def reader(self, reads: Confinement) -> ProvenanceReader:
        return ProvenanceReader(
            self.backend(), graph=reads.graph, text_index=self.indexes(reads.graph)
        )

    def _newest(self, reader: ProvenanceReader, ident: str) -> tuple[str, list[str]]:
        """The run ``ident`` names (itself when it is a run's IRI, else the newest of those
        it names) and every run it names, oldest first."""
        runs = reader.find(ident.strip())
        if not runs:
            raise _no_run(ident)
        return (ident if ident in runs else runs[-1]), runs

    def list_runs(
        self,
        reads: Confinement,
        *,
        agent: str | None = None,
        service: str | None = None,
        status: str | None = None,
        since: str | None = None,
        until: str | None = None,
        text: str | None = None,
        limit: int = 20,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``otel-prov sessions --format json``, a page of it."""
        page = self.reader(reads).sessions(
            agent=agent or None,
            service=service or None,
            status=status or None,
            since=parse_moment(since) if since else None,
            until=parse_moment(until) if until else None,
            text=text or None,
            limit=limit,
            cursor=cursor or None,
        )
        rows = json.loads(render_json(list(page.sessions)))
        result, following, cut = fit_page(
            {"runs": [], "next_cursor": None}, ("runs",), rows, 0, LIMITS["list_runs"]
        )
        if following is not None:  # fewer than asked fit: the next page starts after them
            last = page.sessions[following - 1]
            result["next_cursor"] = encode_cursor(last.start, last.id)
        else:
            result["next_cursor"] = page.next_cursor
        return result | _cut_note(cut, "show_run gives a run whole")

    def show_run(self, reads: Confinement, run: str, cursor: str | None = None) -> dict[str, Any]:
        """``otel-prov show RUN --format json`` of one run (the newest ``run`` names), its
        steps a page at a time."""
        reader = self.reader(reads)
        chosen, named = self._newest(reader, run)
        start = decode_position(cursor, "show_run", chosen)
        (view,) = json.loads(render_json([reader.session(chosen)]))
        steps = view.pop("iterations")
        if start:  # a later page: the run's own fields were on the first
            view = {key: view[key] for key in ("id", "trace_id", "status")}
        return _paged(
            "show_run",
            chosen,
            start,
            {
                "run": view,
                "runs_named": named,
                "steps_from": start + 1,
                "next_cursor": None,
                "account": account_uri(chosen),
                "turtle": turtle_uri(chosen),
            },
            ("run", "iterations"),
            steps,
            "the turtle resource holds every value whole",
        )

    def why(self, reads: Confinement, ident: str, cursor: str | None = None) -> dict[str, Any]:
        """``otel-prov why IDENT --format json``, its nodes a page at a time (the root first),
        each page with the edges from its nodes."""
        drawn = self.reader(reads).why(ident.strip()).as_json()
        start = decode_position(cursor, "why", drawn["root"])
        result = _paged(
            "why",
            drawn["root"],
            start,
            {"root": drawn["root"], "nodes": [], "edges": [], "next_cursor": None},
            ("nodes",),
            drawn["nodes"],
            "read a whole value with sparql: SELECT ?v WHERE { <node id> prov:value ?v }",
            limit=LIMITS["why"] * 2 // 3,  # the rest for the edges
        )
        shown = {node["id"] for node in result["nodes"]}
        edges = [edge for edge in drawn["edges"] if edge["from"] in shown]
        result["edges"], _ = shrink(edges, LIMITS["why"] // 3)
        return result

    def diff_runs(self, reads: Confinement, a: str, b: str) -> dict[str, Any]:
        """``otel-prov diff A B --format json``."""
        compared = self.reader(reads).diff(a.strip(), b.strip())
        fitted, cut = shrink(compared.as_json(), LIMITS["diff_runs"])
        return dict(fitted) | _cut_note(cut, "show_run gives each run whole")

    def summarize_run(self, reads: Confinement, run: str) -> dict[str, Any]:
        """``otel-prov summary RUN --format json``."""
        reader = self.reader(reads)
        chosen, _ = self._newest(reader, run)
        data = reader.summary(chosen).as_json()
        fitted, cut = shrink(data, LIMITS["summarize_run"])
        return dict(fitted) | _cut_note(cut, "show_run gives the run whole")

    def trace_spans(
        self, reads: Confinement, ident: str, cursor: str | None = None
    ) -> dict[str, Any]:
        """Every span of a run's trace (``ident`` a trace id, or anything naming a run):
        the services around the run and the runs in it, earliest first."""
        reader = self.reader(reads)
        ident = ident.strip()
        if _TRACE_ID.fullmatch(ident):
            trace = ident
        else:
            chosen, _ = self._newest(reader, ident)
            trace = reader.session(chosen).trace_id
        spans = [dataclasses.asdict(span) for span in reader.trace_spans(trace)]
        if not spans:
            raise LookupError(f"no span of the trace {trace!r} here (list_runs gives trace ids)")
        return _paged(
            "trace_spans",
            trace,
            decode_position(cursor, "trace_spans", trace),
            {
                "trace_id": trace,
                "services": sorted({s["service"] for s in spans if s["service"]}),
                "runs": [
                    s["id"] for s in spans if s["kind"] == "AgentSession" and s["parent"] is None
                ],
                "spans": [],
                "next_cursor": None,
            },
            ("spans",),
            spans,
            "show_run gives a run whole",
        )

    def verify(
        self,
        reads: Confinement,
        run: str | None = None,
        *,
        only_failed: bool = False,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``otel-prov verify [RUN] --format json``: each run checked against its sealed
        bundle, and the writers' chains; the totals, and the checks a page at a time."""
        ident = (run or "").strip() or None
        checks = self.reader(reads).verify(ident)
        if not checks:
            if ident is not None:
                raise _no_run(ident)
            return {"verified": 0, "failed": 0, "checks": [], "next_cursor": None}
        rows = json.loads(render_checks(checks, "json"))
        failed = sum(not row["ok"] for row in rows)
        shown = [row for row in rows if not row["ok"]] if only_failed else rows
        key = f"{ident or ''}|{only_failed}"
        return _paged(
            "verify",
            key,
            decode_position(cursor, "verify", key),
            {
                "verified": len(rows) - failed,
                "failed": failed,
                "checks": [],
                "next_cursor": None,
                "note": UNTRUSTED_NOTE,
            },
            ("checks",),
            shown,
            "otel-prov verify prints each problem whole",
        )

    def sparql(
        self,
        reads: Confinement,
        query: str,
        *,
        limit: int = 100,
        cursor: str | None = None,
    ) -> dict[str, Any]:
        """``otel-prov query QUERY --format json``, a page of its rows (or triples, as
        Turtle) at a time: read only, confined to the reader's graph, stopped after the
        time limit.  A SELECT is asked for the rows up to the page's end only (nested in
        a SELECT with a LIMIT), so a huge answer costs the store what one page costs."""
        check_user_query(
            query, allow_service=self.allow_service, dataset=reads.dataset
        )  # named against the text as written, before anything runs
        limit = max(1, min(limit, MOST_ROWS))
        key = hashlib.sha256(query.encode("utf-8", "replace")).hexdigest()
        start = decode_position(cursor, "sparql", key)
        answer = self._run(reads, query, start + limit + 1)
        if answer.kind == "ask":
            return {"kind": "ask", "boolean": answer.boolean, "next_cursor": None}
        if answer.kind == "graph":
            triples = answer.triples[start : start + limit]
            more = len(answer.triples) > start + limit
            turtle, cut = shrink(render_turtle(triples), LIMITS["sparql"])
            return {
                "kind": "graph",
                "triples": len(triples),
                "turtle": turtle,
                "next_cursor": encode_position("sparql", key, start + limit) if more else None,
            } | _cut_note(cut, "ask for fewer triples a page (limit)")
        rows = answer.json_rows()
        result, following, cut = fit_page(
            {
                "kind": "select",
                "variables": list(answer.variables),
                "rows": [],
                "next_cursor": None,
            },
            ("rows",),
            rows[start : start + limit],
            0,
            LIMITS["sparql"],
        )
        taken = len(result["rows"])
        if following is not None or len(rows) > start + limit:
            result["next_cursor"] = encode_position("sparql", key, start + taken)
        return result | _cut_note(cut, "select SUBSTR(?v, 4001) to read the rest of a value")

    def _run(self, reads: Confinement, query: str, rows: int) -> QueryResult:
        """The answer to ``query``, a SELECT's rows up to ``rows`` only where the query
        can be nested (it names no dataset); as written when it cannot, or when its nested
        form is refused (the store's message then names the text as written)."""

        def run(text: str) -> QueryResult:
            return run_timed_query(
                self.backend(),
                text,
                confinement=reads,
                timeout_s=self.query_timeout_s,
                allow_service=self.allow_service,
            )

        if query_form(query) != "SELECT" or dataset_graphs(query):
            return run(query)
        split = prologue_end(query)
        nested = f"{query[:split]}SELECT * WHERE {{ {query[split:]}\n}} LIMIT {rows}"
        try:
            return run(nested)
        except ValueError:
            return run(query)

    def account(self, reads: Confinement, run: str) -> str:
        """A run told in Markdown: its summary, its steps as ``otel-prov show`` prints
        them, and its flow as a Mermaid diagram."""
        reader = self.reader(reads)
        chosen, _ = self._newest(reader, run)
        view = reader.session(chosen)
        told = reader.summary(chosen)
        return "\n".join(
            [
                f"# Run {chosen}",
                "",
                f"Trace `{view.trace_id}`, status **{view.status}**.",
                "",
                *(f"- {sentence.text}" for sentence in told.sentences),
                "",
                "## Steps",
                "",
                "```text",
                render_text(view).rstrip("\n"),
                "```",
                "",
                "## Flow",
                "",
                "```mermaid",
                render_mermaid(view),
                "```",
                "",
            ]
        )

    def turtle(self, reads: Confinement, run: str) -> str:
        """``otel-prov show RUN --format turtle`` of the run ``run`` names (the newest)."""
        reader = self.reader(reads)
        chosen, _ = self._newest(reader, run)
        return render_turtle(reader.triples(chosen))
