"""``otel-prov receive`` delivering through the Graph Store Protocol
(``OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT``) into each kind of server: every session lands
once, a store that was down is caught up from the spool, and ``verify`` passes."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.receiver import Receivers, bundles_per_session, run_agent, writing_to
from tests.servers import SparqlServer

pytestmark = pytest.mark.integration


def _graph_store(server: SparqlServer) -> str:
    assert server.graph_store_endpoint is not None
    parameter = "graph-uri" if server.name == "virtuoso" else "graph"
    return f"{server.graph_store_endpoint}?{parameter}={{graph}}"


def test_sessions_go_through_the_graph_store_once_even_across_an_outage(
    server: SparqlServer, receivers: Receivers, tmp_path: Path
) -> None:
    spool = tmp_path / "spool"
    receiver = receivers.start(
        *writing_to(server),
        "--trace-idle",
        "0.5",
        env={
            "OTEL_PROV_SPOOL_DIR": str(spool),
            "OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT": _graph_store(server),
        },
    )
    first = run_agent("--protocol", "http", "--endpoint", receiver.http, "--sessions", "2")
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 2)
    server.stop()
    second = run_agent("--protocol", "http", "--endpoint", receiver.http, "--sessions", "2")
    receiver.wait_for("otel_prov_receiver_export_failures_total", 1)
    time.sleep(1)
    server.start()
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 4, timeout=120)
    assert receiver.stop() == 0
    where = ("--endpoint", server.query_endpoint)
    listed = json.loads(run_cli("sessions", *where, "--format", "json").stdout)
    assert sorted(row["trace_id"] for row in listed) == sorted(first["traces"] + second["traces"])
    assert set(bundles_per_session(server.query_endpoint)) == {1}
    assert not list((spool / "dead-letter").glob("*.nq"))
    (status,) = spool.glob("status-*.json")  # the batches went through the Graph Store
    assert json.loads(status.read_text())["endpoint"] == _graph_store(server)
    assert run_cli("verify", *where, "--all").returncode == 0
