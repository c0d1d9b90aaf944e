"""Two tenants read one SPARQL server (Oxigraph, Virtuoso) through one ``otel-prov serve``
at the same time, and neither ever gets a row of the other's graph.

A query's dataset (the tenant's graph as its default and only named graph) goes with
that query: the answers here are longer than a page (5,000 rows), so each is read in
several requests, while other requests (the other tenant's queries, the listing, which
reads without a dataset) run on the same backend.  Kept on the shared backend, the
dataset of the last request was the one the next page was sent with: a page of team-a's
answer then came from team-b's graph, or from the whole store.
"""

from __future__ import annotations

import json
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import requests

from tests.integration.store_queries import update
from tests.servers import SparqlServer
from tests.serving import Served, serving

pytestmark = pytest.mark.integration

GRAPH = "urn:otel-prov:graph"
TOKENS = {"team-a": "token-of-team-a", "team-b": "token-of-team-b"}
ROWS = {"team-a": 5_600, "team-b": 5_300}
"""More than the backend's page of 5,000 rows: each answer is read in two pages."""
SECRET = {"team-a": "said-only-to-team-a", "team-b": "said-only-to-team-b"}
QUERIES = {
    "default graph": "SELECT ?s ?o WHERE { ?s ?p ?o }",
    "graph ?g": "SELECT ?g ?s ?o WHERE { GRAPH ?g { ?s ?p ?o } }",
}
TRIES = 4
"""Answers each tenant reads per query while the others run."""


def _graph(tenant: str) -> str:
    return f"{GRAPH}/tenants/{tenant}"


def _load(server: SparqlServer) -> None:
    """Each tenant's graph, written directly: ``ROWS`` triples, each holding its secret."""
    for tenant, rows in ROWS.items():
        for begin in range(0, rows, 1_000):
            lines = " ".join(
                f'<urn:{tenant}:row:{index}> <urn:{tenant}:said> "{SECRET[tenant]} {index}" .'
                for index in range(begin, min(rows, begin + 1_000))
            )
            update(server, f"INSERT DATA {{ GRAPH <{_graph(tenant)}> {{ {lines} }} }}")


@pytest.fixture
def loaded(server: SparqlServer) -> SparqlServer:
    _load(server)
    return server


@dataclass
class Seen:
    """What the readers of one tenant got back."""

    answers: int = 0
    leaked: int = 0
    """Rows of another tenant's graph (its secret, or its graph's name)."""
    wrong: list[str] = field(default_factory=list)
    """Answers that were not the tenant's whole graph, each said in a line."""


def _sparql(served: Served, token: str, text: str) -> requests.Response:
    return requests.post(
        served.url + "/sparql",
        data={"query": text, "format": "json"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=300,
    )


def _check(tenant: str, name: str, answer: requests.Response, seen: Seen) -> None:
    seen.answers += 1
    if answer.status_code != 200:
        seen.wrong.append(f"{name}: HTTP {answer.status_code} {answer.text[:200]}")
        return
    rows = json.loads(answer.text)
    others = [other for other in ROWS if other != tenant]
    leaked = [
        row
        for row in rows
        if any(
            SECRET[other] in json.dumps(row) or _graph(other) in json.dumps(row) for other in others
        )
    ]
    seen.leaked += len(leaked)
    mine = [row for row in rows if SECRET[tenant] in str(row.get("o"))]
    if len(rows) != ROWS[tenant] or len(mine) != ROWS[tenant]:
        seen.wrong.append(f"{name}: {len(rows)} rows, {len(mine)} of its own graph")
    if name == "graph ?g" and {row["g"] for row in rows} - {_graph(tenant)}:
        seen.wrong.append(f"{name}: graphs {sorted({row['g'] for row in rows})}")


def _read_at_once(served: Served, readers: dict[str, str], also: list[str]) -> dict[str, Seen]:
    """Each of ``readers`` (tenant: token) sends each query ``TRIES`` times, all at once,
    while a thread reads the pages of ``also`` (paths, with the first reader's token)
    over and over: the listing reads the same backend without a dataset."""
    seen = {tenant: Seen() for tenant in readers}
    done = threading.Event()

    def read(tenant: str, name: str) -> None:
        for _ in range(TRIES):
            _check(tenant, name, _sparql(served, readers[tenant], QUERIES[name]), seen[tenant])

    def browse() -> None:
        token = next(iter(readers.values()))
        while not done.is_set():
            for path in also:
                requests.get(
                    served.url + path, headers={"Authorization": f"Bearer {token}"}, timeout=300
                )

    with ThreadPoolExecutor(max_workers=1 + len(readers) * len(QUERIES)) as pool:
        browsing = pool.submit(browse)
        reads = [pool.submit(read, tenant, name) for tenant in readers for name in QUERIES]
        try:
            for each in reads:
                each.result()  # a reader's failure fails the test
        finally:
            done.set()
        browsing.result()
    return seen


def test_two_tenants_of_one_serve_read_their_own_graphs_only(
    loaded: SparqlServer, tmp_path: Path
) -> None:
    tenants = tmp_path / "tenants.json"
    tenants.write_text(
        json.dumps({"tenants": {name: {"tokens": [token]} for name, token in TOKENS.items()}})
    )
    with serving(
        "--endpoint", loaded.query_endpoint, "--tenants", str(tenants),
        "--max-queries", "8", "--query-timeout", "300",
    ) as served:  # fmt: skip
        seen = _read_at_once(served, dict(TOKENS), ["/", "/?agent=x"])
    for tenant, got in seen.items():
        assert got.answers == TRIES * len(QUERIES), tenant
        assert got.leaked == 0, (tenant, got.leaked, got.wrong)
        assert not got.wrong, (tenant, got.wrong)


def test_a_tenants_deployed_reader_reads_its_graph_only(
    loaded: SparqlServer, tmp_path: Path
) -> None:
    """``serve --endpoint URL --tenant team-a --token-file F``, as the two teams' deployment
    runs it (``deploy/docker-compose.tenants.yaml``), its listing read at the same time."""
    token = tmp_path / "token"
    token.write_text(TOKENS["team-a"])
    with serving(
        "--endpoint", loaded.query_endpoint, "--tenant", "team-a", "--token-file", str(token),
        "--max-queries", "8", "--query-timeout", "300",
    ) as served:  # fmt: skip
        seen = _read_at_once(served, {"team-a": TOKENS["team-a"]}, ["/", "/?agent=x"])
    got = seen["team-a"]
    assert got.answers == TRIES * len(QUERIES)
    assert got.leaked == 0, (got.leaked, got.wrong)
    assert not got.wrong, got.wrong
