"""``total_order``: a SELECT read in pages gets an order that places each row for certain,
keeping the query's own order first and its rows unchanged; and a server answering a
page with more rows than asked stops the paging."""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.read._backend import RemoteBackend, StoreUnavailableError, total_order

PROLOGUE = "PREFIX e: <urn:e#>\n# a comment with { and ORDER BY\n"
VARIABLES = ("a", "b", "c")

_DATA = "\n".join(
    line
    for index in range(12)
    for line in (
        f"<urn:s{index % 4}> <urn:e#p> <urn:o{index % 3}> .",
        f'<urn:s{index % 4}> <urn:e#q> "{index % 2}" .' if index % 3 else "",
    )
    if line
)
STORE = pyoxigraph.Store()
STORE.load(_DATA.encode(), pyoxigraph.RdfFormat.N_TRIPLES)


Row = dict[str, str | None]


@st.composite
def selects(draw: st.DrawFn) -> tuple[str, list[str], list[tuple[str, bool]]]:
    """A SELECT over :data:`STORE` (ties, unbound OPTIONAL values, strings and comments
    holding braces and keywords), its projected variables and its own ORDER BY keys
    (variable, descending)."""
    projected = draw(st.lists(st.sampled_from(VARIABLES), min_size=1, max_size=3, unique=True))
    distinct = draw(st.sampled_from(["", "DISTINCT "]))
    where = '?a e:p ?b . OPTIONAL { ?a e:q ?c FILTER(?c != "} ORDER BY ?x #") }' + draw(
        st.sampled_from(["", " # } ORDER BY ?a", "\n# ORDER BY\n"])
    )
    keys = draw(st.lists(st.sampled_from(projected), max_size=2, unique=True))
    own = [(key, draw(st.booleans())) for key in keys]
    order = " ".join(f"DESC(?{key})" if down else f"?{key}" for key, down in own)
    tail = draw(st.sampled_from(["", " # the end", "\n"]))
    select = " ".join(f"?{name}" for name in projected)
    body = f"SELECT {distinct}{select} WHERE {{ {where}\n}}"
    return body + (f" ORDER BY {order}" if own else "") + tail, projected, own


def _rows(sparql: str) -> list[Row]:
    answer = STORE.query(sparql)
    assert isinstance(answer, pyoxigraph.QuerySolutions)
    names = [variable.value for variable in answer.variables]
    return [{n: None if s[n] is None else str(s[n]) for n in names} for s in answer]


def _sorted(rows: list[Row], keys: list[tuple[str, bool]]) -> list[Row]:
    """``rows`` in SPARQL's order by ``keys`` for the terms of :data:`STORE`: unbound
    first, then IRIs and simple literals, which sort by their text."""
    for name, down in reversed(keys):  # a stable sort per key, the last key first
        rows = sorted(rows, key=lambda row: (row[name] is not None, row[name] or ""), reverse=down)
    return rows


def _pages(sparql: str, size: int) -> list[Row]:
    rows: list[Row] = []
    while True:
        page = _rows(f"{PROLOGUE}SELECT * WHERE {{ {sparql}\n}} LIMIT {size} OFFSET {len(rows)}")
        rows += page
        if len(page) < size:
            return rows


def _key(row: Row) -> tuple[tuple[str, str | None], ...]:
    return tuple(sorted(row.items()))


@settings(max_examples=150, deadline=None)
@given(selects(), st.integers(min_value=1, max_value=5))
def test_the_order_is_total_and_keeps_the_querys_own(
    query: tuple[str, list[str], list[tuple[str, bool]]], size: int
) -> None:
    body, projected, own = query
    ordered = total_order(PROLOGUE, body)
    assert ordered is not None
    rows = _rows(PROLOGUE + ordered)
    assert Counter(map(_key, rows)) == Counter(map(_key, _rows(PROLOGUE + body)))
    # Its own keys first, then every projected variable: one order only.
    assert rows == _sorted(rows, [*own, *((name, False) for name in projected)])
    assert _pages(ordered, size) == rows  # so pages of it read each row once


def test_a_query_oxigraph_cannot_parse_has_no_order() -> None:
    assert total_order("", "SELECT ?x WHERE { ?x bif:contains ?y }") is None


def test_an_ordered_query_gets_its_variables_as_tie_breakers() -> None:
    body = "SELECT ?a ?b WHERE { ?a ?p ?b } ORDER BY DESC(?b) # newest"
    assert total_order("", body) == body + "\n?a ?b"


def test_an_unordered_query_is_sorted_outside_by_what_it_projects() -> None:
    body = "SELECT ?a (COUNT(*) AS ?n) WHERE { ?a ?p ?b } GROUP BY ?a # count"
    assert total_order("", body) == f"SELECT * WHERE {{ {body}\n}} ORDER BY ?a ?n"


class _FourRows(BaseHTTPRequestHandler):
    """A SPARQL endpoint that answers every query with the same four rows, whatever its
    LIMIT and OFFSET (as Virtuoso does a page of an unordered SELECT DISTINCT)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        rows = [{"x": {"type": "literal", "value": str(n)}} for n in range(4)]
        body = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": rows}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/sparql-results+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def four_rows() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _FourRows)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_longer_than_asked_stops_the_paging(four_rows: str) -> None:
    backend = RemoteBackend(four_rows, page_size=3)
    with pytest.raises(StoreUnavailableError, match="answered 4 rows to a query for at most 3"):
        backend.query("SELECT DISTINCT ?x WHERE { ?x ?p ?o }")
