"""Two teams, one service, run as ``deploy/`` writes it: otelcol-prov runs
``deploy/otel-collector-tenants.yaml`` (a pipeline per team, each exporting by trace id
over mutual TLS with the team's client certificate) in front of two ``otel-prov
receive`` replicas started with the command and environment of
``deploy/docker-compose.tenants.yaml``, the tenants file ``deploy/tenants/tenants.json`` and
the certificates ``deploy/tenants/make-certificates.sh`` makes, writing to one Oxigraph
server as the Compose stack does.  Team A's runs land in team A's graph only, team B's in
team B's, and each team's reader sees its own.

Only what must differ here differs: the addresses (loopback ports through the variables
the Collector file reads, the receivers' flags and the store's endpoints), the
certificates' folder and the receivers' directories.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.engine_servers import DEPLOY, resolver, start_collector
from tests.integration.store_queries import select
from tests.receiver import Receivers, run_agent
from tests.servers import free_port, start_oxigraph
from tests.test_deploy import _environment, _load, _services
from tests.waiting import until

pytestmark = pytest.mark.integration

COMPOSE = DEPLOY / "docker-compose.tenants.yaml"
COLLECTOR = DEPLOY / "otel-collector-tenants.yaml"
TENANTS = DEPLOY / "tenants" / "tenants.json"
SCRIPT = DEPLOY / "tenants" / "make-certificates.sh"
TEAMS = ("team-a", "team-b")
RUNS = 6


def _receiver_command(certs: Path, grpc: str, http: str, update: str, query: str) -> list[str]:
    """The Compose file's receiver command, its addresses and files where the test has
    them."""
    command = [str(part) for part in _services(_load(COMPOSE))["prov-receiver"]["command"]]
    given = {"--grpc": grpc, "--http": http, "--endpoint-update": update, "--endpoint": query}
    args = command[2:]  # otel-prov receive
    for flag, value in given.items():
        args[args.index(flag) + 1] = value
    return [
        arg.replace("/certs/", f"{certs}/").replace("/etc/otel-prov/tenants.json", str(TENANTS))
        for arg in args
    ]


def _receiver_env(directory: Path) -> dict[str, str]:
    """The Compose file's receiver environment, its directories under ``directory``."""
    env = _environment(_services(_load(COMPOSE))["prov-receiver"])
    return {
        name: value.replace("/home/agent", str(directory)) if value.startswith("/") else value
        for name, value in env.items()
    }


def test_each_team_pipeline_lands_in_its_team_graph_only(
    receivers: Receivers, tmp_path: Path
) -> None:
    certs = tmp_path / "certs"
    made = subprocess.run(["sh", str(SCRIPT), str(certs)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    store = start_oxigraph(tmp_path)
    collector = None
    try:
        replicas = []
        for n in range(2):
            grpc = f"127.0.0.1:{free_port()}"
            command = _receiver_command(
                certs, grpc, f"127.0.0.1:{free_port()}", store.update_endpoint, store.query_endpoint
            )
            replicas.append(receivers.start(*command, env=_receiver_env(tmp_path / f"replica-{n}")))
        ports = {team: (f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}") for team in TEAMS}
        collector = start_collector(
            tmp_path,
            COLLECTOR,
            {
                "TEAM_A_OTLP_GRPC_ENDPOINT": ports["team-a"][0],
                "TEAM_A_OTLP_HTTP_ENDPOINT": ports["team-a"][1],
                "TEAM_B_OTLP_GRPC_ENDPOINT": ports["team-b"][0],
                "TEAM_B_OTLP_HTTP_ENDPOINT": ports["team-b"][1],
                "PROV_CERTS_DIR": str(certs),
                "PROV_RECEIVERS_RESOLVER": resolver(*(replica.grpc for replica in replicas)),
            },
        )
        sent = {
            team: run_agent(
                *("--protocol", "http", "--endpoint", f"http://{ports[team][1]}"),
                *("--service", f"{team}-agent", "--sessions", str(RUNS)),
            )["traces"]
            for team in TEAMS
        }
        for team in TEAMS:  # the receivers map a trace 5 s after its last span
            until(
                lambda team=team: _listed(store.query_endpoint, team) >= set(sent[team]),
                f"{team}'s reader lists its {RUNS} runs",
                timeout=120,
            )
        assert _listed(store.query_endpoint, "team-a") == set(sent["team-a"])
        assert _listed(store.query_endpoint, "team-b") == set(sent["team-b"])
        # Nowhere else: no other graph of the store holds a run of either team.
        everything = select(
            store,
            "PREFIX oprov: <https://w3id.org/otel-prov/ns#> SELECT DISTINCT ?g ?trace "
            "WHERE { GRAPH ?g { ?s a oprov:AgentSession ; oprov:traceId ?trace } }",
        )
        graphs = {row["trace"]: row["g"] for row in everything}
        for team in TEAMS:
            assert {graphs[t] for t in sent[team]} == {f"urn:otel-prov:graph/tenants/{team}"}
        assert len(graphs) == RUNS * len(TEAMS)
        assert [replica.stop() for replica in replicas] == [0, 0]
    finally:
        if collector is not None:
            collector.stop()
        store.stop()


def _listed(query_endpoint: str, team: str) -> set[str]:
    """The trace ids ``otel-prov sessions --tenant TEAM`` lists: what the team reads."""
    listed = run_cli(
        *("sessions", "--endpoint", query_endpoint, "--tenant", team),
        *("--format", "json", "--limit", "1000"),
    )
    if listed.returncode == 1:  # nothing yet
        return set()
    assert listed.returncode == 0, listed.stderr
    return {row["trace_id"] for row in json.loads(listed.stdout)}
