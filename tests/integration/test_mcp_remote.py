"""``otel-prov mcp --endpoint`` over a real SPARQL server (Oxigraph, Virtuoso): the tools
answer what the CLI answers from the same endpoint, and ``--tenants`` keeps each token
to its tenant's graph, ``sparql`` included (the dataset goes with each query, and a
``FROM`` naming another graph is refused before Virtuoso could read it)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest

from tests.cli import run_cli
from tests.integration.store_queries import update
from tests.mcp_reading.asking import everything_asked, leaks, tenants_of
from tests.mcp_reading.client import http_session, stdio_session
from tests.mcp_reading.store import CROSSING, FAILED, TOKENS, Stored, build_store
from tests.servers import SparqlServer
from tests.serving import serving

pytestmark = pytest.mark.integration

BATCH = 400
"""Triples an INSERT DATA carries (Virtuoso refuses about 1,500)."""


def _copy(store: Path, server: SparqlServer) -> None:
    """Every quad of the embedded store, graph by graph, onto ``server``."""
    graphs: dict[str, list[str]] = defaultdict(list)
    for quad in pyoxigraph.Store.read_only(str(store)):
        graphs[str(quad.graph_name)].append(str(quad.triple) + " .")
    for graph, lines in graphs.items():
        for begin in range(0, len(lines), BATCH):
            triples = "\n".join(lines[begin : begin + BATCH])
            update(server, f"INSERT DATA {{ GRAPH {graph} {{ {triples} }} }}")


@pytest.fixture
def stored(server: SparqlServer, tmp_path: Path) -> Stored:
    built = build_store(tmp_path)
    _copy(built.store, server)
    return built


def _cli(server: SparqlServer, *args: str) -> Any:
    done = run_cli(*args, "--endpoint", server.query_endpoint, "--format", "json")
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def test_the_tools_answer_as_the_cli_does_from_a_sparql_server(
    server: SparqlServer, stored: Stored
) -> None:
    with stdio_session("--endpoint", server.query_endpoint) as client:
        assert client.ok("list_runs")["runs"] == _cli(server, "sessions")
        for trace in (stored.demo, FAILED, CROSSING):
            (shown,) = _cli(server, "show", trace)
            assert client.ok("show_run", run=trace)["run"] == shown
            drawn = client.ok("why", id=trace)
            assert {k: drawn[k] for k in ("root", "nodes", "edges")} == _cli(server, "why", trace)
        assert client.ok("summarize_run", run=FAILED) == _cli(server, "summary", FAILED)
        assert client.ok("diff_runs", a=FAILED, b=stored.demo) == _cli(
            server, "diff", FAILED, stored.demo
        )
        query = "SELECT ?tool WHERE { ?c a oprov:ToolCall ; oprov:toolName ?tool } ORDER BY ?tool"
        assert client.ok("sparql", query=query)["rows"] == _cli(server, "query", query)
        spans = client.ok("trace_spans", id=CROSSING)
        assert spans["services"] == ["agent-service", "research-service"]


@pytest.mark.parametrize(("reader", "other"), [("team-b", "team-a"), ("team-a", "team-b")])
def test_a_tenant_reads_nothing_of_another_on_a_sparql_server(
    server: SparqlServer, stored: Stored, reader: str, other: str
) -> None:
    tenants = tenants_of(stored)
    with (
        serving(
            "--endpoint", server.query_endpoint, "--tenants", str(stored.tenants),
            command=("mcp", "--http", "127.0.0.1:0"),
        ) as served,
        http_session(served.url, token=TOKENS[reader]) as client,
    ):  # fmt: skip
        listed = client.ok("list_runs")["runs"]
        assert [run["trace_id"] for run in listed] == [tenants[reader].trace]
        said = everything_asked(client, tenants[reader], tenants[other], store_may_refuse=True)
    leaked = leaks(said, stored, tenants[other])
    assert not leaked, leaked[:3]
