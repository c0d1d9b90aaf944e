"""(h) ``otel-prov receive`` behind the real OpenTelemetry Collector, side by side, in one run.

The senders of ``bench_receiver`` (four processes with the SDK's OTLP exporters, half gRPC,
half HTTP/protobuf, agent sessions of 10 spans in batches of 512) send the same stream
three ways, one after the other:

* straight into one receiver (the baseline);
* through otelcol-prov running ``deploy/otel-collector-loadbalancing.yaml`` (``scripts/
  build-otelcol.sh``) into one receiver, the Collector also exporting every span to a real
  Jaeger (``deploy/jaeger.yaml``; Tempo's exporter points at a closed port: no Tempo here);
* the same into three receivers (``load_balancing``, static resolver, ``routing_key:
  traceID``), each with an embedded store of its own.

Measured: spans/s from the first request to the last session sealed, each way against the
baseline; and the CPU seconds per 1,000 spans of the Collector, of the receivers (all of
them) and of Jaeger, from ``/proc`` (user + system), so that the Collector's share sits
beside ours.  Every process shares the machine's cores: read the ratios, not the rates.

Each way runs twice, in turn and then in the opposite order, and the slower of its two
runs is reported.  Run: ``python -m benchmarks.bench_collector`` (about 5 minutes;
``BENCH_RECEIVER_SESSIONS`` sessions per sender, 1,000 by default).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bench_receiver import (
    SENDERS,
    SESSIONS,
    SPANS_PER_SESSION,
    _finish,
    _go,
    _sealed,
    _senders,
)
from tests.engine_servers import DEPLOY, Collector, resolver, start_collector, start_jaeger
from tests.receiver import Receiver, Receivers
from tests.servers import free_port

CONFIG = DEPLOY / "otel-collector-loadbalancing.yaml"
SPANS = SENDERS * SESSIONS * SPANS_PER_SESSION
TICKS = os.sysconf("SC_CLK_TCK")
ROUNDS = (("direct", "one", "three"), ("three", "one", "direct"))


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


@dataclass
class Way:
    name: str
    spans_per_s: float
    cpu: dict[str, float]
    """CPU seconds per 1,000 spans, by process kind."""


def _run(name: str, receivers: list[Receiver], endpoints: dict[str, str], **others: int) -> Way:
    """The senders' stream into ``endpoints`` until ``receivers`` sealed every session."""
    processes = {"receivers": [r.process.pid for r in receivers]}
    processes.update({kind: [pid] for kind, pid in others.items()})
    before = {kind: sum(map(_cpu_seconds, pids)) for kind, pids in processes.items()}
    senders = _senders(endpoints, SESSIONS)
    began = _go(senders)
    deadline = time.monotonic() + 900
    while sum(_sealed(r) for r in receivers) < SENDERS * SESSIONS:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: sessions not all sealed after 900 s")
        time.sleep(0.05)
    elapsed = time.perf_counter() - began
    _finish(senders)
    cpu = {
        kind: (sum(map(_cpu_seconds, pids)) - before[kind]) * 1000 / SPANS
        for kind, pids in processes.items()
    }
    return Way(name, SPANS / elapsed, cpu)


def _replicas(receivers: Receivers, tmp: Path, count: int) -> list[Receiver]:
    return [
        receivers.start(
            *("--store", str(tmp / f"store-{n}"), "--data-dir", str(tmp / f"journal-{n}")),
            *("--trace-idle", "0.5"),
            name=f"{tmp.name}-{n}",
        )
        for n in range(count)
    ]


def _through_collector(
    receivers: Receivers, tmp: Path, count: int, jaeger_grpc: str, jaeger_pid: int
) -> Way:
    tmp.mkdir()
    replicas = _replicas(receivers, tmp, count)
    grpc, http = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    collector: Collector = start_collector(
        tmp,
        CONFIG,
        {
            "OTELCOL_OTLP_GRPC_ENDPOINT": grpc,
            "OTELCOL_OTLP_HTTP_ENDPOINT": http,
            "JAEGER_OTLP_ENDPOINT": jaeger_grpc,
            "TEMPO_OTLP_ENDPOINT": f"127.0.0.1:{free_port()}",
            "PROV_RECEIVERS_RESOLVER": resolver(*(r.grpc for r in replicas)),
        },
    )
    try:
        return _run(
            f"through the Collector into {count} receiver(s)",
            replicas,
            {"grpc": grpc, "http": f"http://{http}/v1/traces"},
            collector=collector.pid,
            jaeger=jaeger_pid,
        )
    finally:
        collector.stop()
        for replica in replicas:
            replica.stop()


def _direct(receivers: Receivers, tmp: Path) -> Way:
    tmp.mkdir()
    (receiver,) = _replicas(receivers, tmp, 1)
    try:
        return _run(
            "straight into 1 receiver",
            [receiver],
            {"grpc": receiver.grpc, "http": f"{receiver.http}/v1/traces"},
        )
    finally:
        receiver.stop()


def _median(runs: list[Way]) -> Way:
    """The run of median rate (of an odd count), or the slower of the middle two."""
    ranked = sorted(runs, key=lambda way: way.spans_per_s)
    return ranked[(len(ranked) - 1) // 2]


def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="bench-collector-"))
    receivers = Receivers(tmp)
    jaeger = start_jaeger(tmp)
    try:
        runs: dict[str, list[Way]] = {"direct": [], "one": [], "three": []}
        ways = {
            "direct": lambda path: _direct(receivers, path),
            "one": lambda path: _through_collector(
                receivers, path, 1, jaeger.otlp_grpc, jaeger.pid
            ),
            "three": lambda path: _through_collector(
                receivers, path, 3, jaeger.otlp_grpc, jaeger.pid
            ),
        }
        # Each way in turn, then in the opposite order: a machine that grows busier or
        # quieter over the run weighs on every way alike.
        for round_, order in enumerate(ROUNDS):
            for name in order:
                runs[name].append(ways[name](tmp / f"{name}-{round_}"))
        direct = _median(runs["direct"])
        medians = [direct, _median(runs["one"]), _median(runs["three"])]
        print(f"{SPANS:,} spans from {SENDERS} OTLP exporters, each way ({len(ROUNDS)} runs):")
        for name, way_runs in runs.items():
            rates = " / ".join(f"{way.spans_per_s:,.0f}" for way in way_runs)
            print(f"  {name}: {rates} spans/s")
        print("medians:")
        for way in medians:
            cpu = ", ".join(f"{kind} {seconds:.2f}" for kind, seconds in way.cpu.items())
            print(
                f"  {way.name}: {way.spans_per_s:,.0f} spans/s "
                f"({way.spans_per_s / direct.spans_per_s:.2f}x of straight into one); "
                f"CPU s per 1,000 spans: {cpu}"
            )
        one, three = medians[1], medians[2]
        print(
            f"three receivers vs one, both behind the Collector: "
            f"{three.spans_per_s / one.spans_per_s:.2f}x; the Collector's CPU vs the "
            f"receivers' (one receiver): {one.cpu['collector'] / one.cpu['receivers']:.2f}x"
        )
    finally:
        jaeger.stop()
        receivers.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
