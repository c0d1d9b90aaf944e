"""Reading a real store back with plain HTTP (independent of the code under test)."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from otel_prov import ProvRecord
from otel_prov.exporters import OxigraphStoreExporter, SparqlUpdateExporter
from otel_prov.prov._vocab import O
from tests.servers import SparqlServer

GRAPH = "urn:otel-prov:graph"


def select(server: SparqlServer, query: str) -> list[dict[str, str]]:
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(
        server.query_endpoint,
        data=data,
        headers={
            "Accept": "application/sparql-results+json",
            "Content-Type": "application/x-www-form-urlencoded",
        },
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    return [{k: v["value"] for k, v in row.items()} for row in answer["results"]["bindings"]]


def count(server: SparqlServer, where: str) -> int:
    rows = select(server, f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{GRAPH}> {{ {where} }} }}")
    return int(rows[0]["n"])


def triple_count(server: SparqlServer) -> int:
    return count(server, "?s ?p ?o")


def run_triple_count(server: SparqlServer) -> int:
    """Triples but the writers' checkpoints, whose number follows flushes and shutdowns,
    not the runs."""
    return count(server, f"?s ?p ?o FILTER NOT EXISTS {{ ?s a {O.Checkpoint} }}")


def store_both(
    records: Sequence[ProvRecord], server: SparqlServer, tmp_path: Path
) -> tuple[tuple[str, str], tuple[str, str]]:
    """The same records in an embedded store and on ``server``: the CLI arguments that read
    each (``--store`` and ``--endpoint``), for comparing what the CLI shows from both."""
    store = OxigraphStoreExporter(tmp_path / "store")
    store.export(records)
    store.shutdown()
    remote = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    remote.export(records)
    assert remote.force_flush(30_000)
    remote.shutdown()
    return ("--store", str(tmp_path / "store")), ("--endpoint", server.query_endpoint)


def update(server: SparqlServer, sparql: str) -> None:
    """Run a SPARQL Update on ``server`` (an edit made behind the exporter's back)."""
    request = urllib.request.Request(
        server.update_endpoint,
        data=sparql.encode(),
        headers={"Content-Type": "application/sparql-update; charset=utf-8"},
    )
    with urllib.request.urlopen(request, timeout=30):
        pass
