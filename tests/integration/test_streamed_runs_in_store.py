"""A run streamed step by step ends up in every store exactly as the same run sealed at
its end (issue 39.2): one start, no ``running`` status left, its final bundle over the
same content, and ``verify`` passes, on the embedded store and on real SPARQL servers."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov.exporters import OxigraphStoreExporter, ProvExporter, SparqlUpdateExporter
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.processing._processor import ProvSpanProcessor
from otel_prov.prov._span_record import record_from_span
from otel_prov.prov._vocab import O
from otel_prov.read import ProvenanceReader
from tests.servers import SparqlServer
from tests.streamed_runs import sealed_at_end

STEPS = 4
PAUSE_S = 0.2
"""Between steps: several worker cycles (``schedule_delay`` 0.05 s) see each one."""


def _run(exporter: ProvExporter) -> list[object]:
    """A run of ``STEPS`` steps recorded with streaming on; its ended spans."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    processor = ProvSpanProcessor(exporter, stream=True, schedule_delay=0.05)
    provider.add_span_processor(processor)
    with otel_prov.agent_session(
        "researcher", question="what?", tools=["lookup"], tracer_provider=provider
    ):
        for number in range(1, STEPS + 1):
            step = otel_prov.iteration(number, thought=f"step {number}", tracer_provider=provider)
            call = otel_prov.tool_call("lookup", arguments={"n": number}, tracer_provider=provider)
            with step, call:
                otel_prov.set_observation(f"found {number}")
            time.sleep(PAUSE_S)
        otel_prov.set_answer("done")
    assert processor.force_flush()
    assert processor.statistics().steps_exported >= STEPS - 1
    provider.shutdown()
    return list(spans.get_finished_spans())


def _check(backend: QueryBackend, finished: list[object], tmp_path: Path) -> None:
    reader = ProvenanceReader(backend)
    (run,) = reader.sessions().sessions
    assert run.status == "ok" and run.iterations == STEPS
    assert [check.problems for check in reader.verify(run.id)] == [()]
    counts = backend.query(
        "PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#>"
        " SELECT (COUNT(?start) AS ?starts) (COUNT(?mark) AS ?marks) WHERE { GRAPH ?g {"
        " { ?s a oprov:AgentSession ; prov:startedAtTime ?start }"
        " UNION { ?s a oprov:AgentSession ; oprov:runStartedAt ?mark } } }"
    ).rows[0]
    assert (counts["starts"], counts["marks"]) == ("1", "1"), counts
    running = backend.query(
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#>"
        ' ASK { GRAPH ?g { ?a oprov:status "running" } }'
    )
    assert running.boolean is False
    # The newest bundle hashes what the same spans sealed at their end hash: same content.
    at_end = sealed_at_end([record_from_span(s) for s in finished], str(tmp_path / "blobs"))
    bundles = {s for s, p, _ in at_end.triples if p == O.bundleOf}
    (expected,) = {o for s, p, o in at_end.triples if p == O.contentHash and s in bundles}
    newest = backend.query(
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> PREFIX prov: <http://www.w3.org/ns/prov#>"
        " SELECT ?h WHERE { GRAPH ?g { ?b oprov:bundleOf ?s ; oprov:contentHash ?h ."
        " FILTER NOT EXISTS { ?later prov:wasRevisionOf ?b } } }"
    ).rows
    assert [row["h"] for row in newest] == [expected[1:-1]]


def test_a_streamed_run_in_the_embedded_store_is_the_run_sealed_at_its_end(tmp_path: Path) -> None:
    store = tmp_path / "store"
    finished = _run(OxigraphStoreExporter(store))
    _check(EmbeddedBackend(store), finished, tmp_path)


@pytest.fixture
def remote(server: SparqlServer, tmp_path: Path) -> Iterator[tuple[SparqlServer, Path]]:
    yield server, tmp_path / "spool"


def test_a_streamed_run_on_a_sparql_server_is_the_run_sealed_at_its_end(
    remote: tuple[SparqlServer, Path], tmp_path: Path
) -> None:
    server, spool = remote
    exporter = SparqlUpdateExporter(server.update_endpoint, server.query_endpoint, spool_dir=spool)
    finished = _run(exporter)
    _check(RemoteBackend(server.query_endpoint), finished, tmp_path)
