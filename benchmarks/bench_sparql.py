"""SPARQL delivery into a real Oxigraph server, measured side by side in one run.

1. Sustained triples/s through ProvSpanProcessor + SparqlUpdateExporter (ended spans
   handed to the processor, assembled, mapped, batched, posted, acknowledged) vs.
   posting the same N-Quads raw at the same batch size on one persistent connection
   (requests.Session; http.client shown too, to justify the HTTP client).  Target >= 0.8x.
2. The same vs. a plain hand-written exporter: one INSERT DATA per session, mapped by our
   mapper, on one persistent connection.  Target >= 1x (batching across sessions must not
   lose to it).  Also the optional Graph Store Protocol bulk mode, same spans.
3. Latency from a session's end to the store answering for it, default settings.
   Target p99 <= 1 s.
Each side writes to a fresh server so that no side re-inserts what is already stored, and
the order of the sides is reversed every round, so that drift of a noisy machine hits all.
"""

from __future__ import annotations

import http.client
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from urllib.parse import urlsplit

import requests
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from benchmarks.workload import report
from otel_prov import ProvRecord, ProvSpanProcessor, SpanRecord, map_spans, record_from_span
from otel_prov.exporters import ExportResult, ProvExporter, SparqlUpdateExporter
from otel_prov.exporters.sparql._client import update_text
from tests.servers import SparqlServer, start_oxigraph

SESSIONS = 600
ITERATIONS = 6
BATCH = 1000
FEED = 500  # spans handed over at a time
GRAPH = "<urn:otel-prov:graph>"


class Tee(ProvExporter):
    """Keeps a copy of what goes to the real exporter (to replay it raw)."""

    def __init__(self, inner: ProvExporter) -> None:
        self.inner, self.records = inner, []  # type: list[ProvRecord]

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        self.records.extend(records)
        return self.inner.export(records)

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return self.inner.force_flush(timeout_millis)

    def shutdown(self) -> None:
        self.inner.shutdown()


def _agent(provider: TracerProvider, index: int) -> None:
    with otel_prov.agent_session("bench", question=f"q{index}", tracer_provider=provider) as s:
        for step in range(1, ITERATIONS + 1):
            with otel_prov.iteration(
                step,
                thought=f"t{step}",
                action="search",
                arguments=f'{{"q": {step}}}',
                tracer_provider=provider,
            ):
                with otel_prov.model_call("m", tracer_provider=provider):
                    otel_prov.set_usage(input_tokens=100, output_tokens=10)
                with otel_prov.tool_call(
                    "search",
                    arguments=f'{{"q": {step}}}',
                    call_id=f"c{step}",
                    tracer_provider=provider,
                ):
                    otel_prov.set_observation(f"result {step} of session {index}")
        otel_prov.set_answer(f"answer {index}", span=s)


def _recorded_spans(sessions: int) -> list[ReadableSpan]:
    """Spans of ``sessions`` agent runs, recorded once, so the timed part is the pipeline."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    for index in range(sessions):
        _agent(provider, index)
    return list(memory.get_finished_spans())


def _pipeline(
    server: SparqlServer, spool: Path, spans: Sequence[ReadableSpan], graph_store: bool = False
) -> tuple[float, list[ProvRecord]]:
    """Ended spans handed to the processor, until the store acknowledged the last triple."""
    bulk = server.update_endpoint.rsplit("/", 1)[0] + "/store?graph={graph}"
    exporter = Tee(
        SparqlUpdateExporter(
            server.update_endpoint,
            spool_dir=spool,
            graph_store_endpoint=bulk if graph_store else None,
        )
    )
    processor = ProvSpanProcessor(exporter)
    start = time.perf_counter()
    for offset in range(0, len(spans), FEED):  # a steady stream, as agents produce spans
        for span in spans[offset : offset + FEED]:
            processor.on_end(span)
        time.sleep(0.001)
    processor.force_flush(120_000)
    elapsed = time.perf_counter() - start
    processor.shutdown()
    return elapsed, exporter.records


def _batches(records: Sequence[ProvRecord]) -> list[bytes]:
    lines = [f"{s} {p} {o} ." for record in records for s, p, o in record.triples]
    return [
        update_text({GRAPH: lines[i : i + BATCH]}).encode() for i in range(0, len(lines), BATCH)
    ]


def _raw_requests(server: SparqlServer, bodies: list[bytes]) -> float:
    session = requests.Session()
    start = time.perf_counter()
    for body in bodies:
        session.post(
            server.update_endpoint, data=body, headers={"Content-Type": "application/sparql-update"}
        ).raise_for_status()
    return time.perf_counter() - start


def _raw_http_client(server: SparqlServer, bodies: list[bytes]) -> float:
    url = urlsplit(server.update_endpoint)
    connection = http.client.HTTPConnection(url.hostname or "", url.port)
    start = time.perf_counter()
    for body in bodies:
        connection.request("POST", url.path, body, {"Content-Type": "application/sparql-update"})
        response = connection.getresponse()
        response.read()
        assert response.status < 300, response.status
    return time.perf_counter() - start


def _per_session(server: SparqlServer, records_spans: list[list[SpanRecord]]) -> tuple[float, int]:
    """One INSERT DATA per session on one persistent connection: what a careful first
    exporter would do (the mapping is ours on both sides, so the delivery is compared)."""
    client = requests.Session()
    triples = 0
    start = time.perf_counter()
    for spans in records_spans:
        mapped = map_spans(spans).triples
        triples += len(mapped)
        body = update_text({GRAPH: [f"{s} {p} {o} ." for s, p, o in mapped]}).encode()
        client.post(
            server.update_endpoint,
            data=body,
            headers={"Content-Type": "application/sparql-update"},
        ).raise_for_status()
    return time.perf_counter() - start, triples


def _latency(server: SparqlServer, spool: Path, samples: int = 40) -> list[float]:
    handle = otel_prov.configure(
        set_global=False, sparql_update_endpoint=server.update_endpoint, spool_dir=spool
    )
    client = requests.Session()
    latencies = []
    for index in range(samples):
        with otel_prov.agent_session("lat", tracer_provider=handle.tracer_provider) as session:
            pass
        ended = time.perf_counter()
        ctx = session.get_span_context()
        iri = f"<urn:otel-prov:{ctx.trace_id:032x}:{ctx.span_id:016x}>"
        ask = f"ASK {{ GRAPH {GRAPH} {{ {iri} ?p ?o }} }}"
        while not client.post(
            server.query_endpoint,
            data={"query": ask},
            headers={"Accept": "application/sparql-results+json"},
        ).json()["boolean"]:
            time.sleep(0.005)
        latencies.append(time.perf_counter() - ended)
        time.sleep(0.05 * (index % 5))  # sessions end at every phase of the worker's cycle
    handle.shutdown()
    return latencies


def main() -> None:
    root = Path(tempfile.mkdtemp(prefix="bench-sparql-"))
    servers = []
    try:

        def fresh() -> SparqlServer:
            server = start_oxigraph(root / f"s{len(servers)}")
            servers.append(server)
            return server

        spans = _recorded_spans(SESSIONS)
        by_trace: dict[int, list[SpanRecord]] = {}
        for span in spans:
            by_trace.setdefault(span.context.trace_id, []).append(record_from_span(span))
        records_spans = list(by_trace.values())
        _, records = _pipeline(fresh(), root / "spool-warm", spans)
        bodies = _batches(records)
        triples = sum(len(r.triples) for r in records)
        runs: dict[str, list[float]] = {"ours": [], "raw": [], "http": [], "session": []}
        sides: list[tuple[str, Callable[[int], float]]] = [
            ("ours", lambda r: _pipeline(fresh(), root / f"spool-{r}", spans)[0]),
            ("raw", lambda r: _raw_requests(fresh(), bodies)),
            ("http", lambda r: _raw_http_client(fresh(), bodies)),
            ("session", lambda r: _per_session(fresh(), records_spans)[0]),
        ]
        for round_ in range(4):
            for name, side in sides if round_ % 2 == 0 else reversed(sides):
                runs[name].append(side(round_))
        ours_s, raw_s, raw_http_s, session_s = (
            statistics.median(runs[name]) for name in ("ours", "raw", "http", "session")
        )
        gsp_s, _ = _pipeline(fresh(), root / "spool3", spans, graph_store=True)
        latencies = sorted(_latency(fresh(), root / "spool2"))
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)
    ours_rate, raw_rate = triples / ours_s, triples / raw_s
    ratio = ours_rate / raw_rate
    report(
        "SPARQL pipeline vs raw POST of the same quads",
        ratio,
        ">= 0.8x",
        ratio >= 0.8,
        f"ours {ours_rate:,.0f} triples/s (span to acknowledged triple), raw "
        f"requests.Session {raw_rate:,.0f}/s, raw http.client {triples / raw_http_s:,.0f}/s; "
        f"{triples:,} triples in batches of {BATCH}",
    )
    session_rate = triples / session_s
    report(
        "SPARQL pipeline vs one INSERT DATA per session on a persistent connection",
        ours_rate / session_rate,
        ">= 1x",
        ours_rate >= session_rate,
        f"per session {session_rate:,.0f} triples/s",
    )
    gsp_rate = triples / gsp_s
    print(
        f"Graph Store POST mode: {gsp_rate:,.0f} triples/s "
        f"({gsp_rate / raw_rate:.2f}x raw INSERT DATA)"
    )
    p50 = statistics.median(latencies)
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
    print(
        f"session end to queryable: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
        f"max {latencies[-1] * 1000:.0f} ms over {len(latencies)} sessions "
        f"({'meets' if p99 <= 1 else 'MISSES'} target p99 <= 1 s)"
    )


if __name__ == "__main__":
    main()
