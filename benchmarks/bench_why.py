"""``why`` on a 200-step session: how long it takes, and how many queries it sends.

One workload session of 200 iterations (a model call and a tool call each, every fourth
call failing) is stored in the embedded store and in an Oxigraph server.  ``why`` reads
its derivation graph with property paths, so the number of queries must not grow with
the steps: it is counted through a backend that passes each query on, and compared
with ``show`` (``session``) of the same run, measured side by side.  Target: ``why``
within 2x of ``show``'s time, and at most 2 queries.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from benchmarks.workload import median_seconds, report, session_spans
from otel_prov.exporters import OxigraphStoreExporter, SparqlUpdateExporter
from otel_prov.exporters._reading import Dataset, QueryBackend, QueryResult
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.prov._mapper import map_spans
from otel_prov.read import ProvenanceReader
from tests.servers import start_oxigraph

STEPS = 200
MAX_QUERIES = 2


class CountingBackend:
    """Passes every query on and counts them."""

    def __init__(self, inner: QueryBackend) -> None:
        self.inner = inner
        self.queries = 0

    def query(self, sparql: str, *, dataset: Dataset | None = None) -> QueryResult:
        self.queries += 1
        return self.inner.query(sparql, dataset=dataset)


def _measure(where: str, backend: QueryBackend, run: str) -> None:
    counting = CountingBackend(backend)
    reader = ProvenanceReader(counting)
    graph = reader.why(run)
    queries = counting.queries
    why_ms = median_seconds(lambda: reader.why(run), 5) * 1000
    show_ms = median_seconds(lambda: reader.session(run), 5) * 1000
    failed = sum(1 for node in graph.nodes if not node.supports_answer)
    report(
        f"why, {STEPS}-step session, {where}",
        why_ms / show_ms,
        f"<= 2x show, <= {MAX_QUERIES} queries",
        why_ms <= 2 * show_ms and queries <= MAX_QUERIES,
        f"why {why_ms:.0f} ms in {queries} queries ({len(graph.nodes)} nodes, "
        f"{len(graph.edges)} edges, {failed} failed attempts); show {show_ms:.0f} ms",
    )


def main() -> None:
    record = map_spans(session_spans(0, iterations=STEPS))
    with tempfile.TemporaryDirectory() as tmp:
        store = OxigraphStoreExporter(Path(tmp) / "store")
        store.export([record])
        store.shutdown()
        backend = EmbeddedBackend(Path(tmp) / "store")
        (run,) = ProvenanceReader(backend).find(record.trace_id)
        _measure("embedded store", backend, run)
        server = start_oxigraph(Path(tmp) / "server")
        try:
            remote = SparqlUpdateExporter(server.update_endpoint, spool_dir=Path(tmp) / "spool")
            remote.export([record])
            remote.force_flush(60_000)
            remote.shutdown()
            _measure("Oxigraph server", RemoteBackend(server.query_endpoint), run)
        finally:
            server.stop()


if __name__ == "__main__":
    main()
