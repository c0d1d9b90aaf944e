"""(g) ``otel-prov receive`` under agent-shaped load, side by side, in one run.

Senders are separate processes with the OpenTelemetry SDK's own OTLP exporters (half
gRPC, half HTTP/protobuf), each exporting its share of agent sessions (``workload``:
a session, and per step an iteration, a model call and a tool call) in batches of 512
spans, as a ``BatchSpanProcessor`` does, all at once.  Measured:

* the sustained spans/s of one receiver, from the first request to the last session
  stored, into the embedded store and into an Oxigraph server;
* the store's own bulk ingest of the same triples over the same protocol (the quads the
  receiver stored, loaded into a fresh store right after: ``bulk_load`` for the embedded
  store; into the server, one Graph Store Protocol ``POST`` of them all against the
  receiver's Graph Store batches, one ``INSERT DATA`` of them all against its SPARQL
  Update batches).  Target: the receiver at >= 0.7x of it;
* Arize Phoenix, a real OTLP receiver, ingesting the first sessions of the same stream
  (it stores about 100 spans/s: the whole stream would take minutes).  Target: the
  receiver (embedded) at >= 20x;
* the receiver's resident memory with 10,000 traces open (sent, not yet idle);
* the receiver with a tenants file (two tenants, each sender with one's token) against
  the receiver without, side by side, alternating, into the embedded store.  Target:
  tenants cost <= 10% (``--tenants`` runs this one only).

Run: ``python -m benchmarks.bench_receiver`` (about 3 minutes; Phoenix from
``scripts/phoenix-venv.sh``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import pyoxigraph
import requests
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

from benchmarks.workload import report, session_spans
from otel_prov.prov._span_record import SpanRecord
from tests.phoenix import start_phoenix
from tests.receiver import Receiver, Receivers, writing_to
from tests.servers import start_oxigraph

SENDERS = 4
SESSIONS = int(os.environ.get("BENCH_RECEIVER_SESSIONS", "1000"))
"""Per sender (``BENCH_RECEIVER_SESSIONS`` for a shorter run)."""
STEPS = 3
SPANS_PER_SESSION = 1 + 3 * STEPS
PHOENIX_SESSIONS = 100
"""Per sender, for Phoenix."""
OPEN_TRACES = 10_000
BATCH = 512


# --- a sender process --------------------------------------------------------------------


def _readable(record: SpanRecord, resource: Resource) -> ReadableSpan:
    def context(span_id: int) -> SpanContext:
        # Unique across traces, as an SDK's random ids are: Phoenix keys spans by span id.
        digest = hashlib.sha256(f"{record.trace_id}:{span_id}".encode()).digest()
        unique = int.from_bytes(digest[:8], "big") or 1
        return SpanContext(record.trace_id, unique, False, TraceFlags(TraceFlags.SAMPLED))

    return ReadableSpan(
        name=record.name,
        context=context(record.span_id),
        parent=context(record.parent_id) if record.parent_id is not None else None,
        resource=resource,
        attributes=dict(record.attributes),
        kind=SpanKind.INTERNAL,
        status=Status(StatusCode.ERROR if record.status == "error" else StatusCode.UNSET),
        start_time=record.start_ns,
        end_time=record.end_ns,
    )


def _exporter(protocol: str, endpoint: str, token: str | None) -> SpanExporter:
    headers = {"authorization": f"Bearer {token}"} if token else None
    if protocol == "grpc":
        return GrpcExporter(endpoint=endpoint, insecure=True, timeout=120, headers=headers)
    return HttpExporter(endpoint=endpoint, timeout=120, headers=headers)


def send(protocol: str, endpoint: str, first: int, count: int, token: str | None) -> None:
    """Build the spans of sessions ``first..first+count`` (untimed), wait for ``go`` on
    stdin, export them in batches; print the seconds it took and the failed batches."""
    resource = Resource.create({"service.name": f"bench-{protocol}"})
    spans = [
        _readable(record, resource)
        for index in range(first, first + count)
        for record in session_spans(index, iterations=STEPS)
    ]
    exporter = _exporter(protocol, endpoint, token)
    print("ready", flush=True)
    sys.stdin.readline()
    began = time.perf_counter()
    failed = sum(
        exporter.export(spans[start : start + BATCH]) is not SpanExportResult.SUCCESS
        for start in range(0, len(spans), BATCH)
    )
    print(json.dumps({"seconds": time.perf_counter() - began, "failed": failed}), flush=True)
    exporter.shutdown()


def _senders(
    endpoints: dict[str, str], sessions: int, offset: int = 0, tokens: tuple[str, ...] = ()
) -> list[subprocess.Popen[str]]:
    """Sender processes, half on gRPC and half on HTTP, each ready to go; with ``tokens``,
    each pair of senders (one gRPC, one HTTP) sends with one of them."""
    started = []
    for n in range(SENDERS):
        protocol = "grpc" if n % 2 else "http"
        command = [sys.executable, "-m", "benchmarks.bench_receiver", "--send", protocol]
        command += [endpoints[protocol], str(offset + n * sessions), str(sessions)]
        if tokens:
            command += ["--token", tokens[(n // 2) % len(tokens)]]
        process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        started.append(process)
    for process in started:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return started


def _go(senders: list[subprocess.Popen[str]]) -> float:
    began = time.perf_counter()
    for process in senders:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    return began


def _finish(senders: list[subprocess.Popen[str]]) -> None:
    for process in senders:
        out, _ = process.communicate(timeout=600)
        result = json.loads(out.splitlines()[-1])
        if result["failed"]:
            raise RuntimeError(f"a sender had {result['failed']} batch(es) refused for good")


# --- the measurements ------------------------------------------------------------------


def _endpoints(receiver: Receiver) -> dict[str, str]:
    return {"grpc": receiver.grpc, "http": f"{receiver.http}/v1/traces"}


def _receive(receiver: Receiver, tokens: tuple[str, ...] = ()) -> float:
    """Spans/s of one receiver: every sender's sessions, first request to last stored."""
    senders = _senders(_endpoints(receiver), SESSIONS, tokens=tokens)
    began = _go(senders)
    deadline = time.monotonic() + 900
    while _sealed(receiver) < SENDERS * SESSIONS:
        if time.monotonic() > deadline:
            raise RuntimeError(f"sessions not all sealed after 900 s: {_sealed(receiver)}")
        time.sleep(0.05)
    elapsed = time.perf_counter() - began
    _finish(senders)
    return SENDERS * SESSIONS * SPANS_PER_SESSION / elapsed


def _sealed(receiver: Receiver) -> float:
    """Sessions sealed, all tenants' together."""
    headers = (
        {"Authorization": f"Bearer {receiver.metrics_token}"} if receiver.metrics_token else {}
    )
    text = requests.get(f"{receiver.http}/metrics", headers=headers, timeout=10).text
    name = "otel_prov_receiver_sessions_sealed_total"
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith(name) and line[len(name)] in " {"
    )


TENANT_TOKENS = ("token-of-team-a", "token-of-team-b")
METRICS_TOKEN = "token-of-the-scraper"
ROUNDS = 3


def _tenants_side_by_side(receivers: Receivers, tmp: Path) -> None:
    """The receiver with and without a tenants file, alternating: medians of spans/s."""
    tenants = tmp / "tenants.json"
    tenants.write_text(
        json.dumps(
            {
                "tenants": {
                    f"team-{c}": {"tokens": [t]} for c, t in zip("ab", TENANT_TOKENS, strict=True)
                }
            }
        )
    )
    rates: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(ROUNDS):
        for with_tenants in (False, True) if round_ % 2 == 0 else (True, False):
            where = tmp / f"tenants-{with_tenants}-{round_}"
            extra = ("--tenants", str(tenants)) if with_tenants else ()
            receiver = receivers.start(
                "--store", str(where / "store"), "--data-dir", str(where / "data"),
                "--trace-idle", "0.5", *extra,
                env={"OTEL_PROV_RECEIVER_METRICS_TOKEN": METRICS_TOKEN},
            )  # fmt: skip
            receiver.metrics_token = METRICS_TOKEN  # with tenants, /metrics needs it
            rates[with_tenants].append(_receive(receiver, TENANT_TOKENS if with_tenants else ()))
            receiver.stop()
            shutil.rmtree(where, ignore_errors=True)
    plain, tenanted = (sorted(rates[k])[len(rates[k]) // 2] for k in (False, True))
    report(
        "receiver with tenants vs without (embedded store)",
        tenanted / plain,
        ">= 0.91x (tenants cost <= 10%)",
        tenanted / plain >= 1 / 1.1,
        f"medians of {ROUNDS} alternating runs: {tenanted:,.0f} vs {plain:,.0f} spans/s "
        f"(all: {[round(r) for r in rates[True]]} vs {[round(r) for r in rates[False]]})",
    )


def _bulk_embedded(data: bytes, directory: Path) -> float:
    store = pyoxigraph.Store(str(directory))
    began = time.perf_counter()
    store.bulk_load(data, pyoxigraph.RdfFormat.N_QUADS)
    store.flush()
    return time.perf_counter() - began


def _bulk_server(data: bytes, tmp: Path, graph_store: bool) -> float:
    """Seconds a fresh server takes to store ``data`` (N-Quads of one graph) in as few
    requests as it takes: one Graph Store ``POST`` with ``graph_store``, else ``INSERT
    DATA`` updates of up to ``_UPDATE_BODY`` bytes (Oxigraph refuses larger ones)."""
    server = start_oxigraph(tmp)
    graph, lines = _one_graph(data)
    if graph_store:
        url = f"{server.graph_store_endpoint}?graph={quote(graph[1:-1], safe='')}"
        content_type, bodies = "application/n-triples", [lines]
    else:
        url, content_type = server.update_endpoint, "application/sparql-update"
        head, tail = b"INSERT DATA { GRAPH " + graph.encode() + b" {\n", b"} }"
        bodies = [head + part + tail for part in _parts(lines, _UPDATE_BODY)]
    try:
        began = time.perf_counter()
        for body in bodies:
            response = requests.post(
                url, data=body, headers={"Content-Type": content_type}, timeout=900
            )
            response.raise_for_status()
        return time.perf_counter() - began
    finally:
        server.stop()


_UPDATE_BODY = 100 << 20
"""Bytes of one bulk ``INSERT DATA``: Oxigraph's server takes SPARQL bodies up to 128 MiB."""


def _parts(lines: bytes, size: int) -> list[bytes]:
    """``lines`` cut after line ends into parts of at most ``size`` bytes (or one line)."""
    parts, start = [], 0
    while start < len(lines):
        end = len(lines)
        if end - start > size:
            end = lines.rfind(b"\n", start, start + size) + 1
            if end <= start:  # a line longer than size: alone
                end = lines.index(b"\n", start) + 1
        parts.append(lines[start:end])
        start = end
    return parts


def _one_graph(data: bytes) -> tuple[str, bytes]:
    """The graph of N-Quads ``data`` (one graph, as the receiver writes) and its N-Triples."""
    first = data[: data.index(b"\n")]
    graph = first.removesuffix(b" .").rpartition(b" ")[2]
    suffix = b" " + graph + b" .\n"
    if data.count(suffix) != data.count(b"\n"):
        raise RuntimeError("the receiver's quads are not all in one graph")
    return graph.decode(), data.replace(suffix, b" .\n")


def _server_quads(server_query: str) -> bytes:
    store = server_query.removesuffix("/query") + "/store"
    response = requests.get(store, headers={"Accept": "application/n-quads"}, timeout=600)
    response.raise_for_status()
    return response.content


def _phoenix(tmp: Path) -> float:
    phoenix = start_phoenix(tmp)
    try:
        endpoints = {"grpc": phoenix.otlp_grpc, "http": phoenix.otlp_http_traces}
        senders = _senders(endpoints, PHOENIX_SESSIONS)
        began = _go(senders)
        _finish(senders)
        expected = SENDERS * PHOENIX_SESSIONS * SPANS_PER_SESSION
        deadline = time.monotonic() + 1800
        while len(phoenix._all_spans("default")) < expected:  # a page of 1,000 at a time
            if time.monotonic() > deadline:
                raise RuntimeError(f"Phoenix did not store {expected} spans in 30 minutes")
            time.sleep(1.0)
        return expected / (time.perf_counter() - began)
    finally:
        phoenix.stop()


def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def _open_traces(receivers: Receivers, tmp: Path) -> tuple[int, int]:
    """RSS (KiB) of an idle receiver, and with OPEN_TRACES traces open."""
    receiver = receivers.start(
        "--store", str(tmp / "rss-store"), "--data-dir", str(tmp / "rss"), "--trace-idle", "3600"
    )
    idle = _rss_kib(receiver.process.pid)
    senders = _senders(_endpoints(receiver), OPEN_TRACES // SENDERS, offset=1_000_000)
    _go(senders)
    _finish(senders)
    receiver.wait_for("otel_prov_receiver_open_traces", OPEN_TRACES, timeout=900)
    loaded = _rss_kib(receiver.process.pid)
    receiver.kill()
    return idle, loaded


def _into_server(receivers: Receivers, tmp: Path, graph_store: bool) -> tuple[float, bytes]:
    """Spans/s of one receiver into a fresh Oxigraph server, and the quads it stored;
    ``graph_store``: batches POSTed through the Graph Store Protocol, not INSERT DATA."""
    server = start_oxigraph(tmp / "server")
    env = {"OTEL_PROV_SPOOL_DIR": str(tmp / "spool")}
    if graph_store:
        env["OTEL_PROV_SPARQL_GRAPH_STORE_ENDPOINT"] = (
            f"{server.graph_store_endpoint}?graph={{graph}}"
        )
    try:
        receiver = receivers.start(
            *writing_to(server), "--data-dir", str(tmp / "r"), "--trace-idle", "0.5", env=env
        )
        remote = _receive(receiver)
        receiver.stop()
        return remote, _server_quads(server.query_endpoint)
    finally:
        server.stop()


def _against_bulk(name: str, spans_per_s: float, data: bytes, bulk_s: float, how: str) -> None:
    """Report the receiver's rate against the store's bulk ingest of the same quads."""
    spans = SENDERS * SESSIONS * SPANS_PER_SESSION
    quads = data.count(b"\n")
    ours, bulk = spans_per_s * quads / spans, quads / bulk_s
    report(
        name,
        ours / bulk,
        ">= 0.7x",
        ours / bulk >= 0.7,
        f"{spans_per_s:,.0f} spans/s ({ours:,.0f} quads/s) {how} {bulk:,.0f} quads/s; "
        f"{spans:,} spans, {quads:,} quads",
    )


def main(tenants_only: bool = False) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-receiver-"))
    receivers = Receivers(tmp)
    try:
        _tenants_side_by_side(receivers, tmp)
        if tenants_only:
            return
        # Into the embedded store.
        store = tmp / "store"
        receiver = receivers.start(
            "--store", str(store), "--data-dir", str(tmp / "r1"), "--trace-idle", "0.5"
        )
        embedded = _receive(receiver)
        receiver.stop()
        data = pyoxigraph.Store.read_only(str(store)).dump(format=pyoxigraph.RdfFormat.N_QUADS)
        _against_bulk(
            "receiver into the embedded store vs its bulk_load",
            embedded,
            data,
            _bulk_embedded(data, tmp / "bulk"),
            f"from {SENDERS} OTLP exporters; bulk_load",
        )

        # Into an Oxigraph server: SPARQL Update (the default), then the Graph Store
        # Protocol, each against the server's bulk ingest through the same protocol.
        for how, graph_store in (("INSERT DATA", False), ("Graph Store POST", True)):
            remote, data = _into_server(receivers, tmp / how.split()[-1], graph_store)
            _against_bulk(
                f"receiver into an Oxigraph server ({how}) vs one {how} of it all",
                remote,
                data,
                _bulk_server(data, tmp / f"server-bulk-{graph_store}", graph_store),
                f"{how} batches; one {how}",
            )

        phoenix = _phoenix(tmp / "phoenix")
        ratio = embedded / phoenix
        report(
            "receiver (embedded store) vs Arize Phoenix",
            ratio,
            ">= 20x",
            ratio >= 20,
            f"{embedded:,.0f} vs {phoenix:,.0f} spans/s stored (Phoenix: the first "
            f"{SENDERS * PHOENIX_SESSIONS * SPANS_PER_SESSION:,} spans of the same stream)",
        )

        idle, loaded = _open_traces(receivers, tmp)
        per_trace = (loaded - idle) * 1024 / OPEN_TRACES
        print(
            f"receiver RSS: {idle / 1024:,.0f} MiB idle, {loaded / 1024:,.0f} MiB with "
            f"{OPEN_TRACES:,} traces open ({SPANS_PER_SESSION} spans each): "
            f"{per_trace / 1024:,.1f} KiB per open trace"
        )
    finally:
        receivers.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--send":
        parser = argparse.ArgumentParser()
        parser.add_argument("--send", choices=("grpc", "http"))
        parser.add_argument("endpoint")
        parser.add_argument("first", type=int)
        parser.add_argument("count", type=int)
        parser.add_argument("--token")
        args = parser.parse_args()
        send(args.send, args.endpoint, args.first, args.count, args.token)
    else:
        main(tenants_only="--tenants" in sys.argv[1:])
