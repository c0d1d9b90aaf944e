"""Documents to download: a session's triples as Turtle and JSON-LD, a query's rows as
CSV and JSON.

Turtle and JSON-LD come from pyoxigraph and carry every value: a pyoxigraph term cannot hold a lone
surrogate (it refuses one), and both formats escape control characters.  ``otel-prov
show``, ``query`` and the downloads of ``otel-prov serve`` write them the same way.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence

import pyoxigraph

from otel_prov.exporters._reading import QueryResult
from otel_prov.prov._rdf import PREFIXES

__all__ = ["render_jsonld", "render_rows_csv", "render_rows_json", "render_turtle"]


def render_turtle(triples: Sequence[pyoxigraph.Triple]) -> str:
    """Turtle with the project's prefixes, so that it reads as the README's queries do."""
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
    return (data or b"").decode()


def render_jsonld(triples: Sequence[pyoxigraph.Triple]) -> str:
    """Expanded JSON-LD (full IRIs, no ``@context`` to fetch), indented for people."""
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.JSON_LD)
    return json.dumps(json.loads(data or b"[]"), ensure_ascii=False, indent=2) + "\n"


def render_rows_json(result: QueryResult) -> str:
    """A SELECT answer's rows, one object each (``null`` for an unbound variable), numbers
    and booleans typed."""
    return json.dumps(result.json_rows(), ensure_ascii=False, indent=2) + "\n"


def render_rows_csv(result: QueryResult) -> str:
    """A SELECT answer as CSV: a header of its variables, a line per row."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(result.variables), lineterminator="\n")
    writer.writeheader()
    writer.writerows(result.rows)
    return buffer.getvalue()
