"""``otel-prov receive`` on a disk that fills and empties: the real receiver process, its
journal on a small tmpfs, the OpenTelemetry SDK's OTLP exporters as clients.

While the journal cannot be written, a request is refused as the OTLP specification
has it for a transient failure (HTTP 503 with ``Retry-After``, gRPC UNAVAILABLE), which
the exporters retry; a refused write leaves the journal as it was, so that everything
acknowledged once the space is back survives a SIGKILL and a restart.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import grpc
import pytest
from opentelemetry.proto.trace.v1.trace_pb2 import Span

from tests.cli import CLI, run_cli
from tests.otlp_agent import spans_per_session
from tests.receiver import ROOT, Receivers, run_agent
from tests.small_disk import fill, small_tmpfs
from tests.test_otlp_proto import GOOD
from tests.test_receive import grpc_export, post, request
from tests.waiting import until

SPANS = spans_per_session(3)
AFTER = 400
"""Sessions sent once the space is back, as in the review that found the loss."""


def _session_with(size: int) -> bytes:
    """A request of one session span carrying ``size`` bytes."""
    span = Span()
    span.CopyFrom(GOOD)
    span.attributes.add(key="gen_ai.operation.name").value.string_value = "invoke_agent"
    span.attributes.add(key="padding").value.string_value = "x" * size
    return request(span)


def test_a_full_disk_is_refused_for_a_retry_and_nothing_acknowledged_is_lost(
    receivers: Receivers, tmp_path: Path
) -> None:
    store = tmp_path / "store"  # on the real disk: only the journal fills
    with small_tmpfs(tmp_path / "disk", "8m") as disk:
        where = ("--store", str(store), "--data-dir", str(disk / "data"))
        first = receivers.start(*where, "--trace-idle", "600")  # nothing stored before the kill
        filler = fill(disk)
        status, headers, _ = post(first, _session_with(100))
        assert status == 503 and int(headers["retry-after"]) >= 1
        # An SDK exporter refused the same way waits as told and sends again.
        agent = subprocess.Popen(
            [*CLI[:1], "-m", "tests.otlp_agent", "--protocol", "http", "--endpoint", first.http],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "OTEL_EXPORTER_OTLP_TIMEOUT": "60"},
        )
        until(
            lambda: first.metrics()["otel_prov_receiver_spans_refused_total"] >= 1 + SPANS,
            "the agent's export refused",
        )
        # Room for part of a record: the write is refused halfway.
        os.truncate(filler, filler.stat().st_size - (16 << 10))
        with pytest.raises(grpc.RpcError) as refused:
            grpc_export(first, _session_with(64 << 10))
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        filler.unlink()
        out, err = agent.communicate(timeout=120)
        assert agent.returncode == 0, err
        sent = json.loads(out.splitlines()[-1])["traces"]
        sent += run_agent(
            "--protocol",
            "grpc",
            "--endpoint",
            first.grpc,
            "--sessions",
            str(AFTER),
            env={"OTEL_BSP_MAX_QUEUE_SIZE": str(2 * AFTER * SPANS)},  # none dropped in the agent
        )["traces"]
        received = first.metrics()["otel_prov_receiver_spans_received_total"]
        assert received == SPANS + AFTER * SPANS  # all acknowledged
        first.kill()
        second = receivers.start(*where, "--trace-idle", "0.5")
        second.wait_for("otel_prov_receiver_sessions_sealed_total", 1 + AFTER, timeout=180)
        assert second.stop(timeout=120) == 0
        logs = first.log_text() + second.log_text()
        assert "left out" not in logs and "Traceback" not in logs
    listed = run_cli("sessions", "--store", str(store), "--format", "json", "--limit", "1000")
    stored = {row["trace_id"] for row in json.loads(listed.stdout)}
    assert stored == set(sent)
