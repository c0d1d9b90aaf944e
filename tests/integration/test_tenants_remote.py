"""A tenant's reader of a SPARQL server (Oxigraph, Virtuoso): ``otel-prov query --tenant``
and the SPARQL page of ``serve --tenant`` send the tenant's graph as the query's whole
dataset (``default-graph-uri`` and ``named-graph-uri``), so hostile queries get nothing
of another tenant's graph out."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest
import requests

from tests.cli import run_cli
from tests.integration.store_queries import update
from tests.servers import SparqlServer
from tests.serving import serving
from tests.tenant_queries import naming, reading

pytestmark = pytest.mark.integration

GRAPH = "urn:otel-prov:graph"
B = f"{GRAPH}/tenants/team-b"
HOSTILE = reading(B, "team-b:note")
NAMING_B = naming(B)
GRAPHS = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
SECRET = "question-of-team-b"


def _load_team_b(server: SparqlServer, tmp_path: Path) -> None:
    """The demo's run, written into team-b's graph on ``server``, with a question a reader
    of team-a must never see."""
    store = tmp_path / "store"
    assert run_cli("demo", "--store", str(store), "--tenant", "team-b").returncode == 0
    named = pyoxigraph.NamedNode(f"{GRAPH}/tenants/team-b")
    triples = pyoxigraph.serialize(
        [
            quad.triple
            for quad in pyoxigraph.Store.read_only(str(store)).quads_for_pattern(
                None, None, None, named
            )
        ],
        format=pyoxigraph.RdfFormat.N_TRIPLES,
    )
    secret = f'<urn:team-b:note> <urn:team-b:said> "{SECRET}" .'
    update(server, f"INSERT DATA {{ GRAPH {named} {{ {(triples or b'').decode()} {secret} }} }}")


def test_a_tenant_reads_nothing_of_another_on_a_sparql_server(
    server: SparqlServer, tmp_path: Path
) -> None:
    _load_team_b(server, tmp_path)
    read = ("--endpoint", server.query_endpoint)
    listed = run_cli("sessions", *read, "--tenant", "team-b", "--format", "json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == 1
    assert run_cli("sessions", *read, "--tenant", "team-a").returncode == 1
    for text in HOSTILE.values():
        done = run_cli("query", *read, "--tenant", "team-a", "--format", "json", text)
        assert "team-b" not in done.stdout and "urn:otel-prov:" not in done.stdout, text
        assert SECRET not in done.stdout, text
        assert done.returncode in (0, 1), done.stderr
    for text in NAMING_B.values():
        done = run_cli("query", *read, "--tenant", "team-a", "--format", "json", text)
        assert done.returncode == 2 and "is refused" in done.stderr, (text, done.stderr)
        assert done.stdout == "", text
    seen = run_cli("query", *read, "--tenant", "team-b", "--format", "json", GRAPHS)
    assert json.loads(seen.stdout) == [{"g": f"{GRAPH}/tenants/team-b"}]
    own = run_cli("query", *read, "--tenant", "team-b", "--format", "json", NAMING_B["from"])
    assert own.returncode == 0 and SECRET in own.stdout, own.stderr
    assert run_cli("verify", *read, "--tenant", "team-b", "--all").returncode == 0


def test_the_sparql_page_of_a_tenants_reader_reads_nothing_of_another(
    server: SparqlServer, tmp_path: Path
) -> None:
    """``serve --endpoint URL --tenant team-a``: the reader the two teams' deployment runs."""
    _load_team_b(server, tmp_path)
    with serving("--endpoint", server.query_endpoint, "--tenant", "team-a") as served:
        for text in HOSTILE.values():
            answer = requests.post(
                served.url + "/sparql", data={"query": text, "format": "json"}, timeout=60
            )
            assert answer.status_code == 200, (text, answer.text)
            assert "team-b" not in answer.text and SECRET not in answer.text, text
            assert "urn:otel-prov:" not in answer.text, text
        for text in NAMING_B.values():
            answer = requests.post(
                served.url + "/sparql", data={"query": text, "format": "json"}, timeout=60
            )
            assert answer.status_code == 400 and "is refused" in answer.text, text
            assert SECRET not in answer.text, text
