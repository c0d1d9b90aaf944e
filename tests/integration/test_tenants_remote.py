"""A tenant's reader of a SPARQL server (Oxigraph, Fuseki): ``otel-prov query --tenant``
sends the tenant's graph as the query's whole dataset (``default-graph-uri`` and
``named-graph-uri``), so hostile queries get nothing of another tenant's graph out.
(Virtuoso's Graph Store endpoint takes no N-Quads, which this test loads the runs with.)"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pytest

from tests.cli import run_cli
from tests.servers import SparqlServer, start_fuseki, start_oxigraph

pytestmark = pytest.mark.integration

GRAPH = "urn:otel-prov:graph"
HOSTILE = (
    "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }",
    f"SELECT ?s FROM <{GRAPH}/tenants/team-b> WHERE {{ ?s ?p ?o }}",
    f"SELECT ?g FROM NAMED <{GRAPH}/tenants/team-b> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
    f"SELECT ?s WHERE {{ GRAPH <{GRAPH}/tenants/team-b> {{ ?s ?p ?o }} }}",
    f"ASK {{ GRAPH <{GRAPH}/tenants/team-b> {{ ?s ?p ?o }} }}",
)


@pytest.fixture(params=["oxigraph", "fuseki"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SparqlServer]:
    started = {"oxigraph": start_oxigraph, "fuseki": start_fuseki}[request.param](tmp_path)
    try:
        yield started
    finally:
        started.stop()


def test_a_tenant_reads_nothing_of_another_on_a_sparql_server(
    server: SparqlServer, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    assert run_cli("demo", "--store", str(store), "--tenant", "team-b").returncode == 0
    quads = pyoxigraph.serialize(
        pyoxigraph.Store.read_only(str(store)), format=pyoxigraph.RdfFormat.N_QUADS
    )
    assert server.graph_store_endpoint is not None
    loaded = urllib.request.Request(
        server.graph_store_endpoint,
        data=quads,
        headers={"Content-Type": "application/n-quads"},
        method="POST",
    )
    with urllib.request.urlopen(loaded, timeout=60) as answer:
        assert answer.status in (200, 201, 204)
    read = ("--endpoint", server.query_endpoint)
    listed = run_cli("sessions", *read, "--tenant", "team-b", "--format", "json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1
    assert run_cli("sessions", *read, "--tenant", "team-a").returncode == 1
    for text in HOSTILE:
        done = run_cli("query", *read, "--tenant", "team-a", "--format", "json", text)
        assert "team-b" not in done.stdout and "urn:otel-prov:" not in done.stdout, text
        assert done.returncode in (0, 1), done.stderr
    seen = run_cli("query", *read, "--tenant", "team-b", "--format", "json", HOSTILE[0])
    assert json.loads(seen.stdout) == [{"g": f"{GRAPH}/tenants/team-b"}]
    assert run_cli("verify", *read, "--tenant", "team-b", "--all").returncode == 0
