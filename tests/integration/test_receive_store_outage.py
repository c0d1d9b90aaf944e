"""A store outage under ``otel-prov receive``: requests are still acknowledged (the
journal has them), the batches the store does not take go back and are retried, and
once it is back every session is stored once and verifies."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.cli import run_cli
from tests.receiver import Receivers, bundles_per_session, run_agent, writing_to
from tests.servers import start_oxigraph

pytestmark = pytest.mark.integration


def test_sessions_acknowledged_while_the_store_is_down_land_once_it_is_back(
    receivers: Receivers, tmp_path: Path
) -> None:
    server = start_oxigraph(tmp_path)
    try:
        receiver = receivers.start(
            *writing_to(server),
            "--trace-idle",
            "0.5",
            env={"OTEL_PROV_SPOOL_DIR": str(tmp_path / "spool")},
        )
        server.stop()
        sent = run_agent("--protocol", "http", "--endpoint", receiver.http, "--sessions", "3")
        receiver.wait_for("otel_prov_receiver_export_failures_total", 1)
        assert receiver.metrics()["otel_prov_receiver_sessions_sealed_total"] == 0
        time.sleep(1)
        server.start()
        receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 3)
        assert receiver.stop() == 0
        where = ("--endpoint", server.query_endpoint)
        listed = json.loads(run_cli("sessions", *where, "--format", "json").stdout)
        assert sorted(row["trace_id"] for row in listed) == sorted(sent["traces"])
        assert set(bundles_per_session(server.query_endpoint)) == {1}
        assert run_cli("verify", *where, "--all").returncode == 0
    finally:
        server.stop()
