"""A SPARQL answer as ``otel-prov query`` prints it: an aligned table, JSON or CSV rows,
``true``/``false`` for ASK, and Turtle (or JSON-LD for ``json``) for CONSTRUCT and DESCRIBE."""

from __future__ import annotations

import json

from otel_prov.cli._exit import UsageError
from otel_prov.cli._terminal import columns, printable
from otel_prov.exporters._reading import QueryResult
from otel_prov.read._rdf_documents import (
    render_jsonld,
    render_rows_csv,
    render_rows_json,
    render_turtle,
)

__all__ = ["render_query_result"]


def render_query_result(result: QueryResult, fmt: str) -> str:
    """``fmt`` is one of ``query --format``'s choices; the text ends with a newline unless empty."""
    if result.kind == "ask":
        return (json.dumps(result.boolean) if fmt == "json" else str(result.boolean).lower()) + "\n"
    if result.kind == "graph":
        if fmt == "csv":
            raise UsageError(
                "a CONSTRUCT or DESCRIBE answer is a graph, not rows: use --format table "
                "(Turtle) or json (JSON-LD)"
            )
        return render_jsonld(result.triples) if fmt == "json" else render_turtle(result.triples)
    if fmt == "json":
        return render_rows_json(result)
    if fmt == "csv":
        return render_rows_csv(result)
    header = list(result.variables)
    cells = [
        [printable(row[name] or "").replace("\n", "\\n") for name in header] for row in result.rows
    ]
    return columns([header, *cells])
