"""Three writers at once into one Oxigraph server (issue 27, point 6): an agent process's
``configure()`` (this test's), a second agent process, and a real ``otel-prov receive``
sealing what an OpenTelemetry-only agent sends it.  Each signs, and keeps a checkpoint
file of its own; each must come out with one chain, numbered 1..n without a gap and
anchored by its last checkpoint, and ``verify --all --trust`` must pass over all of them.
(A forked child's chain is tested in tests/test_fork.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.prov._chain import Checkpoint
from tests.cli import CLI, run_cli
from tests.integration.store_queries import GRAPH, select
from tests.receiver import ROOT, Receivers, run_agent, writing_to
from tests.servers import SparqlServer, start_oxigraph

pytestmark = pytest.mark.integration

IN_PROCESS, SECOND_PROCESS, THROUGH_RECEIVER = 3, 4, 2
"""Runs per writer (different, so that a chain's length names its writer too)."""

_SECOND = """
import sys
from pathlib import Path

import otel_prov
from otel_prov.demo import run_demo_agent

update, query, root, runs = sys.argv[1:5]
handle = otel_prov.configure(
    set_global=False,
    sparql_update_endpoint=update,
    sparql_query_endpoint=query,
    spool_dir=Path(root) / "spool-process",
    wal_dir=Path(root) / "wal-process",
    signing_key=Path(root) / "keys" / "signing.key",
    checkpoint_file=Path(root) / "checkpoints-process.jsonl",
)
for index in range(int(runs)):
    run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"process-{index}")
    handle.force_flush()
handle.shutdown()
"""


def _chains(server: SparqlServer) -> dict[str, list[int]]:
    """Each chain stored: its entries' sequence numbers, sorted."""
    rows = select(
        server,
        f"""PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?chain ?sequence WHERE {{ GRAPH <{GRAPH}> {{
          ?b oprov:bundleOf ?s ; oprov:chainId ?chain ; oprov:sequenceNumber ?sequence }} }}""",
    )
    chains: dict[str, list[int]] = {}
    for row in rows:
        chains.setdefault(row["chain"], []).append(int(row["sequence"]))
    return {chain: sorted(numbers) for chain, numbers in chains.items()}


def test_an_agent_a_second_process_and_a_receiver_at_once_give_clean_chains_that_verify(
    receivers: Receivers, tmp_path: Path
) -> None:
    assert run_cli("keygen", "--out", str(tmp_path / "keys")).returncode == 0
    signing = {
        "OTEL_PROV_SIGNING_KEY": str(tmp_path / "keys" / "signing.key"),
        "OTEL_PROV_CHECKPOINT_FILE": str(tmp_path / "checkpoints-receiver.jsonl"),
        "OTEL_PROV_SPOOL_DIR": str(tmp_path / "spool-receiver"),
    }
    server = start_oxigraph(tmp_path)
    second: subprocess.Popen[str] | None = None
    try:
        receiver = receivers.start(
            *writing_to(server),
            "--data-dir",
            str(tmp_path / "receiver"),
            "--trace-idle",
            "1",
            env=signing,
        )
        second = subprocess.Popen(
            [
                sys.executable,
                "-c",
                _SECOND,
                server.update_endpoint,
                server.query_endpoint,
                str(tmp_path),
                str(SECOND_PROCESS),
            ],
            cwd=ROOT,
            stderr=subprocess.PIPE,
            text=True,
        )
        sent: dict[str, Any] = {}
        sender = threading.Thread(
            target=lambda: sent.update(
                run_agent(
                    "--protocol",
                    "grpc",
                    "--endpoint",
                    receiver.grpc,
                    "--service",
                    "via-receiver",
                    "--sessions",
                    str(THROUGH_RECEIVER),
                )
            )
        )
        sender.start()
        handle = otel_prov.configure(
            set_global=False,
            sparql_update_endpoint=server.update_endpoint,
            sparql_query_endpoint=server.query_endpoint,
            spool_dir=tmp_path / "spool-agent",
            wal_dir=tmp_path / "wal-agent",
            signing_key=tmp_path / "keys" / "signing.key",
            checkpoint_file=tmp_path / "checkpoints-agent.jsonl",
        )
        for index in range(IN_PROCESS):
            run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"agent-{index}")
            handle.force_flush()
        handle.shutdown()
        sender.join(180)
        _, errors = second.communicate(timeout=180)
        assert second.returncode == 0, errors
        receiver.wait_for("otel_prov_receiver_sessions_sealed_total", THROUGH_RECEIVER)
        assert receiver.stop() == 0  # its checkpoint at shutdown
        assert sent, "the OTLP agent did not report"

        chains = _chains(server)
        files = {
            name: [
                Checkpoint.from_line(line)
                for line in (tmp_path / f"checkpoints-{name}.jsonl").read_text().splitlines()
            ]
            for name in ("agent", "process", "receiver")
        }
        lengths = {"agent": IN_PROCESS, "process": SECOND_PROCESS, "receiver": THROUGH_RECEIVER}
        for name, checkpoints in files.items():
            (chain,) = {checkpoint.chain for checkpoint in checkpoints}  # one chain a writer
            assert chains[chain] == list(range(1, lengths[name] + 1)), (name, chains)
            assert checkpoints[-1].sequence == lengths[name], name
        assert len(chains) == 3, chains  # nothing else wrote, no chain branched
        trust = str(tmp_path / "keys" / "signing.pub")
        everything = tmp_path / "checkpoints.jsonl"
        everything.write_text(
            "".join((tmp_path / f"checkpoints-{name}.jsonl").read_text() for name in files)
        )
        verified = run_cli(
            "verify",
            "--all",
            "--endpoint",
            server.query_endpoint,
            "--trust",
            trust,
            "--checkpoints",
            str(everything),
            "--format",
            "json",
        )
        assert verified.returncode == 0, verified.stdout + verified.stderr
        checks = json.loads(verified.stdout)
        assert len(checks) == IN_PROCESS + SECOND_PROCESS + THROUGH_RECEIVER
        assert all(check["ok"] for check in checks)
        # The three chains in one audit package, read from the server, checked without it;
        # its manifest signed by the same key.
        package = tmp_path / "audit.zip"
        exported = subprocess.run(
            [
                *CLI,
                "audit-export",
                "--all",
                "--endpoint",
                server.query_endpoint,
                "--checkpoints",
                str(everything),
                "--out",
                str(package),
            ],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env={**os.environ, "OTEL_PROV_SIGNING_KEY": signing["OTEL_PROV_SIGNING_KEY"]},
        )
        assert exported.returncode == 0, exported.stderr
        server.stop()
        checked = run_cli("verify", "--package", str(package), "--trust", trust, "--format", "json")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert len(json.loads(checked.stdout)) == len(checks)
    finally:
        if second is not None and second.poll() is None:
            second.kill()
            second.wait()
        server.stop()
