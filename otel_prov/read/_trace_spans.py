"""Every span of a trace the store holds, whichever service and session it belongs to.

A run's view (:mod:`~otel_prov.read._assembly`) holds what is inside the run; the trace
around it holds more: the HTTP server span a request into the agent's service opened
around the run, the spans of the service that sent that request, spans directly under a
step that are no call, another run of the same trace.  The timeline draws them all, so
they are read here, from one query anchored on the trace id.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import OPROV, literal
from otel_prov.read._sparql import SPARQL_PREFIXES, settled_status

__all__ = ["MOST_TRACE_SPANS", "TraceSpanView", "trace_spans", "trace_spans_query"]

MOST_TRACE_SPANS = 2000
"""Spans of one trace read at most (the earliest): a page draws a row for each."""


@dataclass(frozen=True)
class TraceSpanView:
    """One span (an activity) of a trace, as the store holds it."""

    id: str
    """The activity's IRI, as the run's views name it."""
    kind: str
    """Its ``oprov`` class: ``AgentSession``, ``Iteration``, ``ToolCall``, ``ModelCall``,
    ``Retrieval`` or ``Span``."""
    name: str
    """The span's name."""
    parent: str | None
    """The IRI of the span it is part of, None for a root of the trace."""
    service: str | None
    status: str
    """``ok``, ``error`` or ``incomplete``, as a call's."""
    start: str
    """``xsd:dateTime`` in UTC, canonical."""
    end: str | None = None
    error: str | None = None
    """Why it failed: ``type: message`` as far as recorded (an HTTP status code)."""


_KINDS = ("AgentSession", "Iteration", "ToolCall", "ModelCall", "Retrieval", "Span")


def trace_spans_query(graph: str, trace_id: str, limit: int = MOST_TRACE_SPANS) -> str:
    """SELECT ``?a ?type ?name ?parent ?service ?status ?start ?end ?errorType
    ?errorMessage`` of every activity of the trace, earliest first."""
    return f"""{SPARQL_PREFIXES}
SELECT ?a ?type ?name ?parent ?service ?status ?start ?end ?errorType ?errorMessage
WHERE {{ GRAPH {graph} {{
  ?a oprov:traceId {literal(trace_id)} ; a ?type ; prov:startedAtTime ?start ;
     oprov:status ?status .
  FILTER(?type IN ({", ".join(f"oprov:{kind}" for kind in _KINDS)}))
  OPTIONAL {{ ?a rdfs:label ?name }}
  OPTIONAL {{ ?a oprov:partOf ?parent }}
  OPTIONAL {{ ?a oprov:serviceName ?service }}
  OPTIONAL {{ ?a prov:endedAtTime ?end }}
  OPTIONAL {{ ?a oprov:errorType ?errorType }}
  OPTIONAL {{ ?a oprov:errorMessage ?errorMessage }}
}} }} ORDER BY ?start ?a LIMIT {limit * 4}"""


def trace_spans(
    backend: QueryBackend, graph: str, trace_id: str, limit: int = MOST_TRACE_SPANS
) -> tuple[TraceSpanView, ...]:
    """The first ``limit`` spans of the trace by start time, each once (a span exported
    while open and again once it ended holds two statuses: the settled one is kept)."""
    rows: dict[str, list[Mapping[str, str | None]]] = {}
    for row in backend.query(trace_spans_query(graph, trace_id, limit)).rows:
        rows.setdefault(row["a"] or "", []).append(row)
    return tuple(_span(activity, found) for activity, found in list(rows.items())[:limit])


def _span(activity: str, rows: Sequence[Mapping[str, str | None]]) -> TraceSpanView:
    status = settled_status(row["status"] for row in rows)
    row = next(row for row in rows if row["status"] == status)
    reason = [part for part in (row["errorType"], row["errorMessage"]) if part]
    return TraceSpanView(
        id=activity,
        kind=(row["type"] or "").removeprefix(OPROV),
        name=row["name"] or "",
        parent=row["parent"],
        service=row["service"],
        status=status,
        start=row["start"] or "",
        end=row["end"],
        error=": ".join(reason) if status == "error" and reason else None,
    )
