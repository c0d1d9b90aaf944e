"""The session list of a SPARQL server (Oxigraph, Virtuoso) pages exactly, whatever a run
holds: the runs of ``tests/test_listing_marked_twice.py``, three of them with two starts,
agents, questions and services written directly into the server's graph, each listed
once at its first start, none hidden, on every page and with every filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._sealer import Sealer
from otel_prov.read import ProvenanceReader
from tests.integration.store_queries import update
from tests.servers import SparqlServer
from tests.test_listing_marked_twice import (
    GRAPH,
    PREFIXES,
    SECOND_START,
    check_every_page,
    second_values,
    trace_of,
)
from tests.test_read_api import RUNS, _run

pytestmark = pytest.mark.integration


def test_a_run_with_two_of_each_field_is_listed_once_and_hides_no_other(
    server: SparqlServer, tmp_path: Path
) -> None:
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    sealer = Sealer(chain="listing")
    exporter.export(
        [sealer.seal(map_spans(_run(index, **run)), 0) for index, run in enumerate(RUNS)]
    )
    assert exporter.force_flush(30_000)
    exporter.shutdown()
    reader = ProvenanceReader(RemoteBackend(server.query_endpoint))
    runs = {index: reader.find(trace_of(index))[0] for index in SECOND_START}
    triples = " ".join(second_values(run, index) for index, run in runs.items())
    update(server, f"{PREFIXES} INSERT DATA {{ GRAPH <{GRAPH}> {{ {triples} }} }}")
    check_every_page(reader)
