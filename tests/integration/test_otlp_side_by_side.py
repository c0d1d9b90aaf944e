"""One trace in a real OTLP backend (Arize Phoenix) and in a real SPARQL store, same ids.

An unmodified agent script runs under ``opentelemetry-instrument`` with
``OTEL_TRACES_EXPORTER=otlp,prov``: spans go to Phoenix over OTLP/HTTP or OTLP/gRPC,
provenance to Oxigraph's server over SPARQL Update.  Then both are read back.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.instrumented import SPANS_PER_RUN, run_plain_agent
from tests.integration.store_queries import select
from tests.phoenix import Phoenix, start_phoenix
from tests.servers import SparqlServer, start_oxigraph

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    started = start_phoenix(tmp_path_factory.mktemp("phoenix"))
    yield started
    started.stop()


@pytest.fixture
def oxigraph(tmp_path: Path) -> Iterator[SparqlServer]:
    server = start_oxigraph(tmp_path)
    yield server
    server.stop()


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_every_span_in_phoenix_is_an_activity_in_the_store_and_back(
    phoenix: Phoenix, oxigraph: SparqlServer, tmp_path: Path, protocol: str
) -> None:
    project = f"otel-prov-{protocol.split('/')[0]}"
    endpoint = phoenix.otlp_http_traces if protocol != "grpc" else f"http://{phoenix.otlp_grpc}"
    run_plain_agent(
        "otlp,prov",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=protocol,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=endpoint,
        OTEL_EXPORTER_OTLP_TRACES_INSECURE="true",
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
        OTEL_PROV_SPARQL_UPDATE_ENDPOINT=oxigraph.update_endpoint,
        OTEL_PROV_SPOOL_DIR=str(tmp_path / "spool"),
    )
    stored = phoenix.spans(project, expected=SPANS_PER_RUN, timeout=90)
    in_phoenix = {(span["trace_id"], span["span_id"]) for span in stored}
    rows = select(
        oxigraph,
        """
        SELECT ?trace ?span WHERE { GRAPH <urn:otel-prov:graph> {
          ?a a <http://www.w3.org/ns/prov#Activity> ;
             <https://w3id.org/otel-prov/ns#traceId> ?trace ;
             <https://w3id.org/otel-prov/ns#spanId> ?span } }""",
    )
    in_store = {(row["trace"], row["span"]) for row in rows}
    assert len(in_phoenix) == SPANS_PER_RUN
    assert in_phoenix == in_store
    names = {span["name"] for span in stored}
    assert {"invoke_agent weather-assistant", "execute_tool get_weather"} <= names


def test_the_readme_zero_code_command_reaches_an_http_receiver_with_no_protocol_set(
    phoenix: Phoenix, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The README's command: OTEL_EXPORTER_OTLP_ENDPOINT at an OTLP/HTTP receiver, no
    # protocol named.  The SDK's own default is gRPC, which an HTTP port cannot parse;
    # configure() defaults to http/protobuf (the OTLP specification's default), and so
    # does the configurator, so that the two ways of setting up agree.
    for name in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        monkeypatch.delenv(name, raising=False)
    project = "otel-prov-readme"
    run_plain_agent(
        "otlp,prov",
        OTEL_EXPORTER_OTLP_ENDPOINT=phoenix.http_endpoint,
        OTEL_RESOURCE_ATTRIBUTES=f"openinference.project.name={project}",
        OTEL_PROV_STORE=str(tmp_path / "store"),
    )
    stored = phoenix.spans(project, expected=SPANS_PER_RUN, timeout=60)
    assert len(stored) == SPANS_PER_RUN
