"""``otel-prov receive --stream`` into each kind of SPARQL server: a run whose steps came
before its own span is recorded from a stand-in first, and once the span came it holds
the span's start alone (the stand-in's is retracted through the spool), and verifies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.receiver import Receivers, writing_to
from tests.servers import SparqlServer
from tests.test_streaming import one_start, run_starts, stream_a_run_before_its_span

pytestmark = pytest.mark.integration


def test_a_streamed_run_has_one_start_in_a_sparql_store(
    server: SparqlServer, receivers: Receivers, tmp_path: Path
) -> None:
    where = ("--endpoint", server.query_endpoint)
    receiver = receivers.start(
        *writing_to(server), "--stream", env={"OTEL_PROV_SPOOL_DIR": str(tmp_path / "spool")}
    )

    def running() -> bool:
        listed = run_cli("sessions", *where, "--status", "running", "--format", "json")
        return bool(json.loads(listed.stdout or "[]"))

    started_ns = stream_a_run_before_its_span(receiver, running)
    assert receiver.stop() == 0
    (run,) = json.loads(run_cli("sessions", *where, "--format", "json").stdout)
    assert run["status"] == "ok"
    assert run_starts(where, run["id"]) == one_start(started_ns)
    result = run_cli("verify", *where, "--all")
    assert result.returncode == 0, result.stdout + result.stderr
