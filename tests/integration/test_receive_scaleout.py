"""Scale-out by trace id: three receivers write to one Oxigraph server, and senders in
several processes route every span by its trace id through a stand-in for the
Collector's ``loadbalancing`` exporter (``tests.otlp_agent.LoadBalancingExporterStandIn``).
Each trace reaches one receiver whole, even one that crosses processes, so every
session lands exactly once and verifies."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli import CLI, run_cli
from tests.receiver import (
    ROOT,
    Receiver,
    Receivers,
    bundles_per_session,
    service,
    writing_to,
)
from tests.servers import start_oxigraph

pytestmark = pytest.mark.integration

AGENTS, SESSIONS = 4, 5


def test_three_receivers_behind_a_trace_id_load_balancer_store_each_session_once(
    receivers: Receivers, tmp_path: Path
) -> None:
    server = start_oxigraph(tmp_path)
    try:
        started = [
            receivers.start(
                *writing_to(server),
                "--data-dir",
                str(tmp_path / f"receiver-{n}"),
                "--trace-idle",
                "1",
                env={"OTEL_PROV_SPOOL_DIR": str(tmp_path / f"spool-{n}")},
            )
            for n in range(3)
        ]
        http = ",".join(receiver.http for receiver in started)
        grpc = ",".join(receiver.grpc for receiver in started)
        with service(http) as (process, research):
            traces = _run_agents(http, grpc, research)
            process.send_signal(signal.SIGTERM)  # flushes what it has not exported yet
            assert process.wait(30) == 0
        # Outermost sessions are sealed; the service's are nested in the runs that called it.
        deadline = time.monotonic() + 60
        while sum(_sealed(receiver) for receiver in started) < AGENTS * SESSIONS:
            assert time.monotonic() < deadline, [r.metrics() for r in started]
            time.sleep(0.2)
        assert all(_sealed(receiver) for receiver in started)  # each took its share
        assert sum(_sealed(receiver) for receiver in started) == AGENTS * SESSIONS
        assert [receiver.stop() for receiver in started] == [0, 0, 0]

        where = ("--endpoint", server.query_endpoint)
        listed = run_cli("sessions", *where, "--format", "json", "--limit", "1000")
        assert listed.returncode == 0, listed.stderr
        rows = json.loads(listed.stdout)
        assert sorted(row["trace_id"] for row in rows) == sorted(traces)
        nested = run_cli(
            "query",
            *where,
            "--format",
            "json",
            "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
            "SELECT ?inner ?start WHERE { ?inner a oprov:AgentSession ; oprov:partOf+ ?outer ; "
            "<http://www.w3.org/ns/prov#qualifiedStart> ?start . ?outer a oprov:AgentSession }",
        )
        assert len(json.loads(nested.stdout)) == SESSIONS  # each research run, nested once
        counts = bundles_per_session(server.query_endpoint)
        assert len(counts) == AGENTS * SESSIONS and set(counts) == {1}
        verified = run_cli("verify", *where, "--all")
        assert verified.returncode == 0, verified.stdout + verified.stderr
    finally:
        server.stop()


def _sealed(receiver: Receiver) -> int:
    return int(receiver.metrics()["otel_prov_receiver_sessions_sealed_total"])


def _run_agents(http: str, grpc: str, research: str) -> list[str]:
    """AGENTS agent processes at once, half on each protocol, the first calling the
    service; the trace ids they ran."""
    agents = [
        subprocess.Popen(
            [*CLI[:1], "-m", "tests.otlp_agent", "--sessions", str(SESSIONS)]
            + ["--service", f"agent-{n}", "--protocol", "grpc" if n % 2 else "http"]
            + ["--endpoint", grpc if n % 2 else http]
            + (["--research", research] if n == 0 else []),
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for n in range(AGENTS)
    ]
    traces: list[str] = []
    try:
        for agent in agents:
            out, _ = agent.communicate(timeout=120)
            assert agent.returncode == 0
            traces += json.loads(out.splitlines()[-1])["traces"]
    finally:
        for agent in agents:
            if agent.poll() is None:
                agent.kill()
                agent.communicate()
    return traces
