"""An agent inside a real HTTP service calling another real HTTP service: one trace, joined."""

from __future__ import annotations

import importlib.util
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pyoxigraph
import pytest
import requests
import uvicorn
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov import ProvSpanProcessor
from otel_prov.exporters import OxigraphStoreExporter

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "service_app.py"
PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
    "PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "
)


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("service_app", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _listening() -> tuple[socket.socket, int]:
    """A socket bound to a port of its own, kept until uvicorn serves on it (a port only
    looked up as free could be taken by another process before uvicorn binds it)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    return sock, port


def _serve(app: object, sock: socket.socket) -> uvicorn.Server:
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    return server


@pytest.fixture
def services(
    tmp_path: Path,
) -> Iterator[tuple[pyoxigraph.Store, InMemorySpanExporter, InMemorySpanExporter]]:
    example = _load_example()
    agent_spans, weather_spans = InMemorySpanExporter(), InMemorySpanExporter()
    agent_tp = TracerProvider(resource=Resource.create({"service.name": "agent-service"}))
    agent_tp.add_span_processor(SimpleSpanProcessor(agent_spans))
    processor = ProvSpanProcessor(OxigraphStoreExporter(tmp_path / "store"))
    agent_tp.add_span_processor(processor)
    weather_tp = TracerProvider(resource=Resource.create({"service.name": "weather-service"}))
    weather_tp.add_span_processor(SimpleSpanProcessor(weather_spans))
    (weather_socket, weather_port), (agent_socket, agent_port) = _listening(), _listening()
    weather = example.weather_app()
    FastAPIInstrumentor.instrument_app(weather, tracer_provider=weather_tp)
    agent = example.agent_app(f"http://127.0.0.1:{weather_port}", tracer_provider=agent_tp)
    FastAPIInstrumentor.instrument_app(agent, tracer_provider=agent_tp)
    RequestsInstrumentor().instrument(tracer_provider=agent_tp)
    servers = [_serve(weather, weather_socket), _serve(agent, agent_socket)]
    try:
        for _ in range(2):  # two turns of one conversation
            answer = requests.post(f"http://127.0.0.1:{agent_port}/ask", json={}, timeout=30)
            assert answer.status_code == 200 and "64.4 °F" in answer.json()["answer"]
        # The server span ends just after the response is sent: wait for it.
        deadline = time.monotonic() + 10
        while (
            time.monotonic() < deadline
            and sum(s.name == "POST /ask" for s in agent_spans.get_finished_spans()) < 2
        ):
            time.sleep(0.01)
    finally:
        RequestsInstrumentor().uninstrument()
        for server in servers:
            server.should_exit = True
    agent_tp.shutdown()
    yield pyoxigraph.Store.read_only(str(tmp_path / "store")), agent_spans, weather_spans


def _ask(store: pyoxigraph.Store, query: str) -> list[dict[str, str]]:
    rows = store.query(PREFIXES + query, use_default_graph_as_union=True)
    return [{v.value: row[v.value].value for v in rows.variables} for row in rows]


def test_the_session_sits_inside_the_request_and_the_call_inside_the_tool(services: tuple) -> None:
    store, agent_spans, weather_spans = services
    server_span = next(s for s in agent_spans.get_finished_spans() if s.name == "POST /ask")
    request = (
        f"urn:otel-prov:{server_span.context.trace_id:032x}:{server_span.context.span_id:016x}"
    )
    rows = _ask(
        store,
        f"""SELECT ?session ?service WHERE {{
        ?session a oprov:AgentSession ; oprov:partOf <{request}> .
        <{request}> a oprov:Span , prov:Activity ; oprov:serviceName ?service . }}""",
    )
    assert [row["service"] for row in rows] == ["agent-service"]
    # The second turn's session links to the first: prov:wasInformedBy across traces.
    (turns,) = _ask(
        store,
        """SELECT ?second ?first WHERE {
        ?second a oprov:AgentSession ; prov:wasInformedBy ?first .
        ?first a oprov:AgentSession ; oprov:traceId ?t1 . ?second oprov:traceId ?t2 .
        FILTER(?t1 != ?t2) }""",
    )
    assert turns["first"] != turns["second"]
    calls = _ask(
        store,
        """SELECT ?call ?tool ?status WHERE {
        ?call a oprov:Span ; oprov:partOf ?tc ; rdfs:label ?label .
        ?tc a oprov:ToolCall ; oprov:toolName ?tool ; oprov:status ?status .
        FILTER(STRSTARTS(?label, "GET")) }""",
    )
    # Turn one: the weather service fails once, the agent retries; turn two: one call works.
    assert sorted((c["tool"], c["status"]) for c in calls) == [
        ("get_weather", "error"),
        ("get_weather", "ok"),
        ("get_weather", "ok"),
    ]
    # W3C trace context crossed the wire: the weather service's spans joined the trace,
    # each server span a child of the agent's outgoing call.
    client_ids = {s.context.span_id for s in agent_spans.get_finished_spans() if s.name == "GET"}
    weather_servers = [
        s
        for s in weather_spans.get_finished_spans()
        if s.parent is not None and s.parent.span_id in client_ids
    ]
    assert len(weather_servers) >= 2
    requests_traces = {
        s.context.trace_id for s in agent_spans.get_finished_spans() if s.name == "POST /ask"
    }
    assert {s.context.trace_id for s in weather_servers} == requests_traces


def test_services_are_agents(services: tuple) -> None:
    store, _, _ = services
    rows = _ask(
        store,
        """SELECT ?name WHERE {
        ?service a oprov:Service , prov:SoftwareAgent , prov:Agent ; oprov:serviceName ?name .
        ?session a oprov:AgentSession ; prov:wasAssociatedWith ?service . }""",
    )
    assert [row["name"] for row in rows] == ["agent-service", "agent-service"]  # two turns


def _docs_queries(*titles: str) -> list[str]:
    """The SPARQL blocks of docs/sparql.md whose first line starts with each of ``titles``,
    each one whole query to paste as it is."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "sparql.md").read_text(encoding="utf-8")
    blocks = [block.split("```", 1)[0] for block in page.split("```sparql\n")[1:]]
    return [next(b for b in blocks if b.startswith(f"# {title}")) for title in titles]


def test_the_docs_join_queries_answer(services: tuple) -> None:
    store, agent_spans, _ = services
    failed, by_service, caused = _docs_queries(
        "Every failed tool call", "All sessions served by one service", "Everything a tool call"
    )
    (row,) = list(store.query(failed, use_default_graph_as_union=True))
    trace_id = f"{agent_spans.get_finished_spans()[0].context.trace_id:032x}"
    assert row["tool"].value == "get_weather" and row["trace"].value == trace_id
    assert row["request"].value == "POST /ask" and "503" in row["message"].value
    sessions = list(store.query(by_service, use_default_graph_as_union=True))
    assert len(sessions) == 2 and sessions[-1]["trace"].value == trace_id  # newest first
    rows = [
        {
            name: None if row[name] is None else row[name].value
            for name in ("call", "name", "status", "error", "service")
        }
        for row in store.query(caused, use_default_graph_as_union=True)
    ]
    # Three weather calls, each one outgoing GET; the first got a 503.
    assert [(r["name"], r["service"], r["status"], r["error"]) for r in rows] == [
        ("GET", "agent-service", "error", "503"),
        ("GET", "agent-service", "ok", None),
        ("GET", "agent-service", "ok", None),
    ]
    assert len({r["call"] for r in rows}) == 3
