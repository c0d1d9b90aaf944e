"""A SELECT read from a SPARQL server in pages gives each row exactly once, whatever the
page size: what a reader of a real server (Oxigraph, Virtuoso) reads three rows at a time
is what it reads of the embedded store holding the same runs.

Without an order every page is a query of its own, free to order its rows otherwise
(SPARQL 1.1, 15.4/15.5).  Oxigraph orders alike every time; Virtuoso 7.2 ignores the
``OFFSET`` of a page over an unordered ``SELECT DISTINCT`` (each page repeats the rows
before it), so paging one never ends.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from otel_prov import ProvRecord, map_spans
from otel_prov.read import ProvenanceReader
from otel_prov.read._backend import EmbeddedBackend, QueryBackend, RemoteBackend
from otel_prov.read._chains import entries_query
from otel_prov.read._verify import verify_sessions
from tests.builders import make_span
from tests.integration.store_queries import store_both
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
