"""A SELECT read from a SPARQL server in pages gives each row exactly once, whatever the
page size: what a reader of a real server (Oxigraph, Virtuoso) reads three rows at a time
is what it reads of the embedded store holding the same runs.

Without an order every page is a query of its own, free to order its rows otherwise
(SPARQL 1.1, 15.4/15.5).  Oxigraph orders alike every time; Virtuoso 7.2 ignores the
``OFFSET`` of a page over an unordered ``SELECT DISTINCT`` (each page repeats the rows
before it), so paging one never ends.  The order pages are read in must be one the
server can sort: ordered by the values themselves, values of mixed types made Oxigraph
0.5.13 panic and exit, under every reader and writer of the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pyoxigraph
import pytest

from otel_prov import ProvRecord, map_spans
from otel_prov.exporters._reading import Dataset, QueryBackend
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.read import ProvenanceReader
from otel_prov.read._chains import entries_query
from otel_prov.read._verify import verify_sessions
from tests.builders import make_span
from tests.cli import run_cli
from tests.integration.store_queries import select, store_both, update
from tests.servers import SparqlServer

pytestmark = pytest.mark.integration

GRAPH = "<urn:otel-prov:graph>"
RUNS = 8
PAGE = 3


def _run(index: int) -> ProvRecord:
    """A run with two tool calls: more members than a page, several rows per run."""
    trace = 7000 + index
    return map_spans(
        [
            make_span(1, None, trace_id=trace, start_ms=index * 100, end_ms=index * 100 + 50,
                      gen_ai__operation__name="invoke_agent", gen_ai__agent__name="pager",
                      gen_ai__conversation__id=f"page-{index}",
                      otel_prov__question=f"question {index}"),
            make_span(2, 1, trace_id=trace, start_ms=index * 100 + 1, end_ms=index * 100 + 2,
                      gen_ai__operation__name="execute_tool", gen_ai__tool__name="look"),
            make_span(3, 1, trace_id=trace, start_ms=index * 100 + 3, end_ms=index * 100 + 4,
                      gen_ai__operation__name="execute_tool", gen_ai__tool__name="fetch"),
        ]
    )  # fmt: skip


@pytest.fixture
def both(server: SparqlServer, tmp_path: Path) -> Iterator[tuple[EmbeddedBackend, RemoteBackend]]:
    """The embedded store and ``server`` holding the same runs, the server read in pages
    of three rows."""
    (_, store), _ = store_both([_run(index) for index in range(RUNS)], server, tmp_path)
    yield EmbeddedBackend(store), RemoteBackend(server.query_endpoint, page_size=PAGE)


def _rows(backend: QueryBackend, sparql: str) -> Counter[tuple[tuple[str, str | None], ...]]:
    return Counter(tuple(sorted(row.items())) for row in backend.query(sparql).rows)


def _once(rows: Counter[tuple[tuple[str, str | None], ...]]) -> bool:
    return all(count == 1 for count in rows.values())


def _checks(backend: QueryBackend) -> list[tuple[str, tuple[str, ...]]]:
    checks = verify_sessions(backend, GRAPH, None)
    return sorted((check.session, check.problems) for check in checks)


def test_chain_entries_and_verify_read_each_run_once(
    both: tuple[EmbeddedBackend, RemoteBackend],
) -> None:
    embedded, remote = both
    entries = _rows(remote, entries_query(GRAPH))
    assert sum(entries.values()) == RUNS and _once(entries)
    assert entries == _rows(embedded, entries_query(GRAPH))
    checks = _checks(remote)
    assert len(checks) == RUNS and all(not problems for _, problems in checks)
    assert checks == _checks(embedded)


def _views(backend: QueryBackend) -> Mapping[str, object]:
    """What a reader lists and shows; the edges of ``why`` as a set (their order follows
    the store's order of rows, which two stores need not share)."""
    reader = ProvenanceReader(backend, graph=GRAPH[1:-1])
    why = reader.why("page-5")
    return {
        "listed": list(reader.sessions(limit=RUNS + 1).sessions),
        "shown": reader.session(reader.find("page-3")[0]),
        "why": (why.root, why.nodes, sorted(why.edges, key=repr)),
    }


def test_listing_and_views_read_each_row_once(
    both: tuple[EmbeddedBackend, RemoteBackend],
) -> None:
    embedded, remote = both
    views = _views(remote)
    assert [run.tool_calls for run in views["listed"]] == [2] * RUNS  # type: ignore[attr-defined]
    assert views == _views(embedded)


def test_a_distinct_query_without_order_reads_each_row_once(
    both: tuple[EmbeddedBackend, RemoteBackend],
) -> None:
    embedded, remote = both
    query = f"SELECT DISTINCT ?s ?p WHERE {{ GRAPH {GRAPH} {{ ?s ?p ?o }} }}"
    rows = _rows(remote, query)
    assert sum(rows.values()) > 10 * PAGE and _once(rows)
    assert rows == _rows(embedded, query)


MIXED = '"10" "11" "9" 2 "3" 2 "3" "3" "3" "10" "8" "5" 4 3 5 4 "8" "8" 12 1 1'
"""21 values, numbers and strings: ``ORDER BY ?o`` over them made Oxigraph 0.5.13 panic
(the fewest that do; 20 are sorted by insertion, which checks nothing)."""


def test_values_of_mixed_types_are_paged_and_the_server_stays_up(server: SparqlServer) -> None:
    remote = RemoteBackend(server.query_endpoint, page_size=PAGE)
    rows = _rows(remote, f"SELECT ?o WHERE {{ VALUES ?o {{ {MIXED} }} }}")
    assert server.is_running()
    assert sorted(value for ((_, value),) in rows.elements()) == sorted(
        value.strip('"') for value in MIXED.split()
    )
    update(
        server,
        "INSERT { GRAPH <urn:mixed> { "
        + " ".join(f"<urn:s> <urn:p{index}> {value} ." for index, value in enumerate(MIXED.split()))
        + ' _:b <urn:p> <urn:o> . _:b <urn:q> _:c . <urn:s> <urn:p> "9"@en . } } WHERE {}',
    )  # INSERT DATA holds no blank node on Virtuoso
    query = "SELECT ?s ?p ?o WHERE { GRAPH <urn:mixed> { ?s ?p ?o } }"
    rows = _rows(remote, query)
    assert server.is_running()
    assert sum(rows.values()) == len(MIXED.split()) + 3 and _once(rows)


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """20 of the demo's runs as N-Triples: 5,884 triples, more than a page of 5,000."""
    store = tmp_path_factory.mktemp("demo-runs") / "store"
    for _ in range(20):
        assert run_cli("demo", "--store", str(store)).returncode == 0
    quads = pyoxigraph.Store.read_only(str(store)).quads_for_pattern(None, None, None, None)
    return (
        pyoxigraph.serialize([quad.triple for quad in quads], format=pyoxigraph.RdfFormat.N_TRIPLES)
        or b""
    )


def test_every_triple_of_our_runs_is_read_in_pages_of_the_default_size(
    server: SparqlServer, demo_runs: bytes
) -> None:
    """``SELECT ?s ?o WHERE { ?s ?p ?o }`` over the demo's runs, with the page size a reader
    has: the order the pages were read in made Oxigraph 0.5.13 panic and exit."""
    lines = demo_runs.decode().splitlines()
    for begin in range(0, len(lines), 1_000):
        chunk = " ".join(lines[begin : begin + 1_000])
        update(server, f"INSERT DATA {{ GRAPH {GRAPH} {{ {chunk} }} }}")
    (stored,) = select(server, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {GRAPH} {{ ?s ?p ?o }} }}")
    assert int(stored["n"]) > 5_000
    remote = RemoteBackend(server.query_endpoint)
    rows = Counter(
        tuple(sorted(row.items()))
        for row in remote.query(
            "SELECT ?s ?p ?o WHERE { ?s ?p ?o }", dataset=Dataset((GRAPH[1:-1],))
        ).rows
    )
    assert server.is_running()
    assert sum(rows.values()) == int(stored["n"]) and _once(rows)
    remote.query("SELECT ?s ?o WHERE { ?s ?p ?o }", dataset=Dataset((GRAPH[1:-1],)))
    assert server.is_running()
