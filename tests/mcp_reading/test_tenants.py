"""``otel-prov mcp --http --tenants``: each token reads its own tenant's graph, on every
tool, resource and the prompt, and nothing of another tenant's or of the graph outside
the tenants: not by its ids, not by guessed IRIs, not through ``sparql`` (``GRAPH ?g``,
``FROM NAMED``, ``VALUES``, ``DESCRIBE``), not with another reader's session id."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from otel_prov._tenants import tenant_graph
from otel_prov.exporters._base import DEFAULT_GRAPH
from otel_prov.mcp_server._tools import account_uri
from tests.mcp_reading.asking import Tenant, everything_asked, leaks, tenants_of
from tests.mcp_reading.client import http_session, stdio_session
from tests.mcp_reading.raw import RawSession, answer_of
from tests.mcp_reading.store import SECRET_RUN, TOKENS, Stored, build_store
from tests.serving import Served, serving


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    return build_store(tmp_path_factory.mktemp("mcp-tenants"))


@pytest.fixture(scope="module")
def tenants(stored: Stored) -> dict[str, Tenant]:
    return tenants_of(stored)


@pytest.fixture(scope="module")
def served(stored: Stored) -> Iterator[Served]:
    with serving(
        "--store", str(stored.store), "--tenants", str(stored.tenants),
        command=("mcp", "--http", "127.0.0.1:0"),
    ) as server:  # fmt: skip
        yield server


@pytest.mark.parametrize(("reader", "other"), [("team-b", "team-a"), ("team-a", "team-b")])
def test_a_tenant_reads_nothing_of_another_through_any_tool(
    served: Served, stored: Stored, tenants: dict[str, Tenant], reader: str, other: str
) -> None:
    own, foreign = tenants[reader], tenants[other]
    with http_session(served.url, token=TOKENS[reader]) as client:
        listed = client.ok("list_runs")["runs"]
        assert [run["trace_id"] for run in listed] == [own.trace]
        # What the reader reads of its own graph, each tool's answer about its own run.
        assert client.ok("show_run", run=own.trace)["run"]["id"] == own.run
        graphs = client.ok("sparql", query="SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        assert graphs["rows"] == [{"g": tenant_graph(DEFAULT_GRAPH, reader)}]
        assert client.read(account_uri(own.trace)).startswith(f"# Run {own.run}")
        said = everything_asked(client, own, foreign)
    leaked = leaks(said, stored, foreign)
    assert not leaked, leaked[:3]


def test_a_tenant_named_in_the_url_must_be_one_the_token_reads(
    served: Served, tenants: dict[str, Tenant]
) -> None:
    with http_session(served.url + "?tenant=team-a", token=TOKENS["team-b"]) as client:
        for tool, arguments in (
            ("list_runs", {}),
            ("show_run", {"run": tenants["team-a"].trace}),
            ("sparql", {"query": "SELECT * WHERE { ?s ?p ?o }"}),
        ):
            answer = client.call(tool, **arguments)
            assert answer.error and answer.text.endswith("may read team-b, not 'team-a'"), answer
    with http_session(served.url + "?tenant=team-b", token=TOKENS["team-b"]) as client:
        assert [r["trace_id"] for r in client.ok("list_runs")["runs"]] == [SECRET_RUN]


def test_no_token_or_a_wrong_one_is_refused_before_anything_runs(served: Served) -> None:
    for headers in ({}, {"Authorization": "Bearer not-a-token"}, {"Authorization": "Basic eA=="}):
        refused = RawSession(served.url, headers).initialize()
        assert refused.status_code == 401, refused.text
        assert refused.headers["www-authenticate"] == 'Bearer realm="otel-prov"'
        assert "/login" not in refused.text  # no login form, no cookie: an MCP client sends it
    assert "not-a-token" not in served.stderr()


def test_a_session_id_reads_as_the_token_that_comes_with_it(
    served: Served, tenants: dict[str, Tenant]
) -> None:
    """Who reads is decided at each request: team-b sending team-a's session id reads
    team-b's runs, and the session id alone reads nothing."""
    alice = RawSession(served.url, {"Authorization": f"Bearer {TOKENS['team-a']}"})
    assert alice.initialize().status_code == 200 and alice.session_id
    mine = alice.result("list_runs", {})
    assert [r["trace_id"] for r in mine["structuredContent"]["runs"]] == [tenants["team-a"].trace]
    taken = RawSession(
        served.url, {"Authorization": f"Bearer {TOKENS['team-b']}"}, alice.session_id
    )
    theirs = taken.call("list_runs", {})
    if theirs.status_code == 200:
        runs = answer_of(theirs)["result"]["structuredContent"]["runs"]
        assert [r["trace_id"] for r in runs] == [SECRET_RUN]
    else:  # the SDK may refuse a session a request did not open: nothing read either way
        assert theirs.status_code in (400, 403, 404), theirs.text
        assert tenants["team-a"].trace not in theirs.text
    bare = RawSession(served.url, {}, alice.session_id).call("list_runs", {})
    assert bare.status_code == 401


def test_a_token_taken_out_of_the_tenants_file_stops_working_at_once(
    stored: Stored, tmp_path_factory: pytest.TempPathFactory
) -> None:
    folder = tmp_path_factory.mktemp("revoked")
    tenants = folder / "tenants.json"
    tenants.write_text(stored.tenants.read_text())
    with serving(
        "--store", str(stored.store), "--tenants", str(tenants),
        command=("mcp", "--http", "127.0.0.1:0"),
    ) as served:  # fmt: skip
        bob = RawSession(served.url, {"Authorization": f"Bearer {TOKENS['team-b']}"})
        assert bob.initialize().status_code == 200
        assert bob.result("list_runs", {})["isError"] is False
        kept = {"tenants": {"team-a": {"tokens": [TOKENS["team-a"]]}}}
        time.sleep(1.1)  # a new modification time, past the look-at-most-once-a-second
        tenants.write_text(json.dumps(kept))
        time.sleep(1.1)
        assert bob.call("list_runs", {}).status_code == 401
        assert "the tenants file" in served.stderr()


def test_over_stdio_a_tenant_reads_its_graph_only(
    stored: Stored, tenants: dict[str, Tenant]
) -> None:
    """``--tenant`` confines a local client's server as ``--tenants`` confines a token."""
    with stdio_session("--store", str(stored.store), "--tenant", "team-b") as client:
        assert [r["trace_id"] for r in client.ok("list_runs")["runs"]] == [SECRET_RUN]
        said = everything_asked(client, tenants["team-b"], tenants["team-a"])
    leaked = leaks(said, stored, tenants["team-a"])
    assert not leaked, leaked[:3]
