"""The Collector's load balancing for real: otelcol-prov runs
``deploy/otel-collector-loadbalancing.yaml`` (``load_balancing``, ``routing_key: traceID``,
its sending queue and retries as shipped) in front of three ``otel-prov receive``
replicas, a static resolver naming their loopback ports, each replica writing to an
embedded store of its own so that the test can tell where each trace went.

A trace that crosses two services lands whole in one replica's store.  A replica
SIGKILLed in the middle of a stream of 2,000 sessions from four agent processes, then
started again on its journal, loses nothing: every session the agents sent is stored
exactly once, and none in two replicas (counted by SPARQL in each store).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyoxigraph
import pytest

from tests.cli import CLI
from tests.engine_servers import DEPLOY, Collector, resolver, start_collector
from tests.receiver import ROOT, Receiver, Receivers, service
from tests.servers import free_port

pytestmark = pytest.mark.integration

CONFIG = DEPLOY / "otel-collector-loadbalancing.yaml"
SESSIONS_IN = """
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?trace (COUNT(DISTINCT ?session) AS ?n) WHERE { GRAPH ?g {
  ?session a oprov:AgentSession ; oprov:traceId ?trace } } GROUP BY ?trace"""
BUNDLES_IN = """
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT ?session (COUNT(DISTINCT ?bundle) AS ?n) WHERE { GRAPH ?g {
  ?bundle oprov:bundleOf ?session } } GROUP BY ?session"""
SERVICES_IN = """
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
SELECT DISTINCT ?trace ?service WHERE { GRAPH ?g {
  ?span oprov:traceId ?trace ; oprov:serviceName ?service } }"""


@dataclass
class Replica:
    """One ``otel-prov receive`` on fixed ports (the resolver names them), started again
    on the same journal and store after a crash."""

    grpc: str
    directory: Path
    receiver: Receiver | None = None

    @property
    def store(self) -> Path:
        return self.directory / "store"

    def start(self, receivers: Receivers) -> None:
        http = f"127.0.0.1:{free_port()}"
        self.receiver = receivers.start(
            *("--grpc", self.grpc, "--http", http, "--store", str(self.store)),
            *("--data-dir", str(self.directory / "journal"), "--trace-idle", "1"),
            name=self.directory.name,
        )

    def rows(self, query: str) -> list[dict[str, str]]:
        """What the replica's store answers (read-only: the receiver may be writing it)."""
        if not self.store.exists():
            return []
        store = pyoxigraph.Store.read_only(str(self.store))
        answer = store.query(query)
        assert isinstance(answer, pyoxigraph.QuerySolutions)
        names = [variable.value for variable in answer.variables]
        return [
            {name: solution[name].value for name in names if solution[name] is not None}
            for solution in answer
        ]

    def sessions(self) -> dict[str, int]:
        """Trace id -> how many agent sessions of it the store holds."""
        return {row["trace"]: int(row["n"]) for row in self.rows(SESSIONS_IN)}


@dataclass
class Stack:
    replicas: list[Replica]
    collector: Collector
    http: str
    """The Collector's OTLP/HTTP address, ``http://127.0.0.1:PORT``."""
    grpc: str


@pytest.fixture
def stack(receivers: Receivers, tmp_path: Path) -> Iterator[Stack]:
    replicas = [Replica(f"127.0.0.1:{free_port()}", tmp_path / f"replica-{n}") for n in range(3)]
    for replica in replicas:
        replica.start(receivers)
    http, grpc = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    collector = start_collector(
        tmp_path,
        CONFIG,
        {
            "OTELCOL_OTLP_GRPC_ENDPOINT": grpc,
            "OTELCOL_OTLP_HTTP_ENDPOINT": http,
            # Jaeger and Tempo are beside the point here: ports nothing listens on.
            "JAEGER_OTLP_ENDPOINT": f"127.0.0.1:{free_port()}",
            "TEMPO_OTLP_ENDPOINT": f"127.0.0.1:{free_port()}",
            "PROV_RECEIVERS_RESOLVER": resolver(*(replica.grpc for replica in replicas)),
        },
    )
    try:
        yield Stack(replicas, collector, f"http://{http}", grpc)
    finally:
        collector.stop()


def _agents(stack: Stack, count: int, sessions: int, *extra: str) -> list[subprocess.Popen[str]]:
    """``count`` agent processes, half over OTLP/gRPC and half over OTLP/HTTP, to the
    Collector; their span queues large enough to send every span they make."""
    return [
        subprocess.Popen(
            [
                *(*CLI[:1], "-m", "tests.otlp_agent", "--sessions", str(sessions), "--steps", "2"),
                *("--service", f"agent-{n}", "--protocol", "grpc" if n % 2 else "http"),
                *("--endpoint", stack.grpc if n % 2 else stack.http, *extra),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "OTEL_BSP_MAX_QUEUE_SIZE": "100000"},
        )
        for n in range(count)
    ]


def _traces_of(agents: list[subprocess.Popen[str]]) -> list[str]:
    """The trace ids each agent ran and flushed (it exits non-zero when a flush failed)."""
    traces: list[str] = []
    try:
        for agent in agents:
            out, _ = agent.communicate(timeout=600)
            assert agent.returncode == 0, out
            traces += json.loads(out.splitlines()[-1])["traces"]
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
                agent.communicate()
    return traces


def _drained(stack: Stack, traces: list[str], timeout: float = 300.0) -> list[dict[str, int]]:
    """Each replica's sessions once they hold one of every trace (or the deadline has
    passed); the receivers are stopped (SIGTERM maps what they buffer) before the count."""
    deadline = time.monotonic() + timeout
    wanted = set(traces)
    while time.monotonic() < deadline:
        try:
            if wanted <= {t for replica in stack.replicas for t in replica.sessions()}:
                break
        except RuntimeError:  # RocksDB compacting under the reader: look again
            pass
        time.sleep(2)
    for replica in stack.replicas:
        assert replica.receiver is not None
        assert replica.receiver.stop() == 0, replica.receiver.log_text()[-3000:]
    return [replica.sessions() for replica in stack.replicas]


def test_a_trace_through_two_services_lands_whole_in_one_replica(stack: Stack) -> None:
    with service(stack.http) as (process, research):
        traces = _traces_of(_agents(stack, 1, 12, "--research", research))
        process.send_signal(signal.SIGTERM)  # flushes what it has not exported yet
        assert process.wait(30) == 0
    stored = _drained(stack, traces)
    for trace in traces:
        holders = [n for n, sessions in enumerate(stored) if trace in sessions]
        assert len(holders) == 1, (trace, holders)
        services = {
            row["service"]
            for row in stack.replicas[holders[0]].rows(SERVICES_IN)
            if row["trace"] == trace
        }
        assert services == {"agent-0", "research-service"}, trace
    # Each run, and the session it started in the service, which it called once.
    counts = sorted(stored[n][t] for t in traces for n in range(3) if t in stored[n])
    assert counts == [2] * len(traces)


def test_a_replica_killed_mid_stream_and_restarted_loses_and_duplicates_no_session(
    stack: Stack, receivers: Receivers
) -> None:
    agents = _agents(stack, 4, 500, "--pause", "0.03")  # a stream of 15 s or more
    victim = stack.replicas[1]
    assert victim.receiver is not None
    victim.receiver.wait_for("otel_prov_receiver_spans_received_total", 1000, timeout=120)
    victim.receiver.kill()  # SIGKILL: what it acknowledged is in its journal
    time.sleep(3)  # the Collector queues and retries the victim's share meanwhile
    assert all(agent.poll() is None for agent in agents), "the stream ended before the restart"
    victim.start(receivers)
    traces = _traces_of(agents)
    assert len(traces) == len(set(traces)) == 2000
    stored = _drained(stack, traces)
    everywhere = [trace for sessions in stored for trace in sessions]
    assert sorted(everywhere) == sorted(traces), "each session in one replica, none lost"
    assert {n for sessions in stored for n in sessions.values()} == {1}
    assert all(stored), "each replica took a share of the trace ids"
    sealed = [int(row["n"]) for replica in stack.replicas for row in replica.rows(BUNDLES_IN)]
    assert len(sealed) == 2000 and set(sealed) == {1}, "each sealed once"
    # The kill came between the journal and the store: the restart stored what the victim
    # had acknowledged and not yet stored.
    assert "acknowledged before the last stop and not yet stored" in victim.receiver.log_text()
