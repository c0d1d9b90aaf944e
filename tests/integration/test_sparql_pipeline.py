"""The SPARQL path end to end: configure(), metrics, the agent never waiting, the spool cap, GSP."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

import otel_prov
from otel_prov import map_spans
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import SparqlUpdateExporter
from tests.fault_proxy import FaultProxy
from tests.integration.store_queries import count, triple_count
from tests.servers import SparqlServer
from tests.session_tree import known_session

pytestmark = pytest.mark.integration


def test_configure_sends_to_the_endpoint_from_the_environment(
    server: SparqlServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_SPARQL_UPDATE_ENDPOINT", server.update_endpoint)
    monkeypatch.setenv("OTEL_PROV_SPOOL_DIR", str(tmp_path / "spool"))
    handle = otel_prov.configure(set_global=False, store=tmp_path / "unused")
    assert isinstance(handle.exporter, SparqlUpdateExporter)
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.shutdown()
    assert count(server, "?s a <https://w3id.org/otel-prov/ns#AgentSession>") == 1
    assert not (tmp_path / "unused").exists()


def test_counters_reach_the_metrics_api(server: SparqlServer, tmp_path: Path) -> None:
    reader = InMemoryMetricReader()
    exporter = SparqlUpdateExporter(
        server.update_endpoint,
        spool_dir=tmp_path / "spool",
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    exporter.export([map_spans(known_session())])
    assert exporter.force_flush(10_000)
    exporter.shutdown()
    data = reader.get_metrics_data()
    assert data is not None
    points = {
        (metric.name, tuple(sorted((point.attributes or {}).items()))): point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        for point in metric.data.data_points
    }
    assert points[("otel_prov.exporter.batches", (("outcome", "exported"),))].value == 1
    assert points[("otel_prov.exporter.triples", ())].value == len(
        map_spans(known_session()).triples
    )
    assert ("otel_prov.exporter.spool.size", ()) in points


def test_the_agent_never_waits_for_a_hung_store(server: SparqlServer, tmp_path: Path) -> None:
    upstream, path = server.update_endpoint.rsplit("/", 1)
    with FaultProxy(upstream) as proxy:
        proxy.delay_next(1000, 30.0)  # every request hangs
        handle = otel_prov.configure(
            set_global=False,
            sparql_update_endpoint=f"{proxy.url}/{path}",
            spool_dir=tmp_path / "spool",
        )
        done = threading.Event()

        def agent() -> None:
            for index in range(20):
                run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=str(index))
            done.set()

        thread = threading.Thread(target=agent)
        thread.start()
        thread.join(timeout=60)
        # All 20 sessions ran while the store answered nothing at all.
        assert done.is_set()
        assert handle.processor.statistics().spans_dropped == 0
        proxy.refuse(True)
        handle.shutdown()


def test_a_full_spool_warns_and_counts_what_it_drops(
    server: SparqlServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    server.stop()
    exporter = SparqlUpdateExporter(
        server.update_endpoint,
        spool_dir=tmp_path / "spool",
        max_spool_bytes=20_000,
        retry_initial_delay=5,
    )
    record = map_spans(known_session())  # about 30 kB as N-Quads
    caplog.set_level(logging.WARNING)
    exporter.export([record])
    exporter.force_flush(1000)
    assert exporter.counts["dropped"] == 1
    assert any("is full" in r.getMessage() for r in caplog.records)
    exporter.shutdown()


def test_graph_store_protocol_bulk_mode(server: SparqlServer, tmp_path: Path) -> None:
    if server.name == "virtuoso":
        endpoint = (
            server.update_endpoint.rsplit("/", 1)[0] + "/sparql-graph-crud-auth?graph-uri={graph}"
        )
        auth: tuple[str, str] | None = ("dba", "dba")
    else:  # Oxigraph's /store, Fuseki's /ds/data: the Graph Store Protocol's ?graph=
        assert server.graph_store_endpoint is not None
        endpoint, auth = server.graph_store_endpoint + "?graph={graph}", None
    exporter = SparqlUpdateExporter(
        server.update_endpoint,
        spool_dir=tmp_path / "spool",
        graph_store_endpoint=endpoint,
        digest_auth=auth,
    )
    record = map_spans(known_session())
    exporter.export([record])
    assert exporter.force_flush(10_000)
    exporter.export([record])  # idempotent here too
    assert exporter.force_flush(10_000)
    exporter.shutdown()
    assert triple_count(server) == len(record.triples)
