"""``otel-prov receive`` and a run whose first steps come long before its own span.

OTLP sends a span when it ends, so an agent's session span comes last: minutes after the
run's first steps when a tool call takes long or waits for a person.  The receiver keeps
(and journals) such steps until their run's span comes, whatever else it stores meanwhile
and across its own restarts; when the session timeout says the span will not come, it
stores the run as far as it goes, ``incomplete``.  Real processes throughout: the receiver,
and ``tests.otlp_agent`` held before its last step (``--hold``) over OTLP/gRPC and HTTP.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli import CLI, run_cli
from tests.otlp_agent import spans_per_session
from tests.receiver import ROOT, Receiver, Receivers, run_agent
from tests.test_receive import bundles, sessions

STEPS = 3
IDLE_AND_MORE = 1.5
"""Seconds to wait past ``--trace-idle`` (0.3): the receiver has asked what the held
run's steps are (before the fix: mapped them, and left them out)."""
EARLY = spans_per_session(STEPS) - 3
"""What a held run has sent: every span but its last iteration, model call and session."""


class HeldAgent:
    """``tests.otlp_agent --hold``: one run, stopped before its last step."""

    def __init__(self, tmp_path: Path, protocol: str, endpoint: str) -> None:
        self.release_file = tmp_path / f"release-{protocol}"
        self.process = subprocess.Popen(
            [
                *(*CLI[:1], "-m", "tests.otlp_agent", "--protocol", protocol),
                *("--endpoint", endpoint, "--steps", str(STEPS), "--hold", str(self.release_file)),
            ],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line, "the agent ended before its run was held"
        self.trace: str = json.loads(line)["held"]

    def release(self) -> dict[str, Any]:
        """Let the run end; the agent's report."""
        self.release_file.touch()
        out, _ = self.process.communicate(timeout=120)
        assert self.process.returncode == 0
        report: dict[str, Any] = json.loads(out.splitlines()[-1])
        return report

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def held(tmp_path: Path) -> Iterator[list[HeldAgent]]:
    agents: list[HeldAgent] = []
    yield agents
    for agent in agents:
        if agent.process.poll() is None:
            agent.kill()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def endpoint(receiver: Receiver, protocol: str) -> str:
    return receiver.grpc if protocol == "grpc" else receiver.http


def the_run(store: Path, trace: str) -> dict[str, Any]:
    found = [row for row in sessions(store) if row["trace_id"] == trace]
    assert len(found) == 1, sessions(store)
    return found[0]


@pytest.mark.parametrize("protocol", ["grpc", "http"])
def test_steps_that_came_long_before_their_run_are_stored_with_it(
    receivers: Receivers, held: list[HeldAgent], tmp_path: Path, protocol: str
) -> None:
    """The steps wait while other runs come and go, past what the receiver keeps of
    traces it mapped (``OTEL_PROV_MAX_PENDING_SPANS`` spans: before the fix they were
    mapped, left out for want of a session, then forgotten)."""
    store = tmp_path / "store"
    receiver = receivers.start(
        *("--store", str(store), "--data-dir", str(tmp_path / "data"), "--trace-idle", "0.3"),
        env={"OTEL_PROV_MAX_PENDING_SPANS": "40"},
    )
    agent = HeldAgent(tmp_path, protocol, endpoint(receiver, protocol))
    held.append(agent)
    receiver.wait_for("otel_prov_receiver_spans_received_total", EARLY)
    time.sleep(IDLE_AND_MORE)
    waiting = receiver.metrics().get("otel_prov_receiver_awaited_traces")
    others = run_agent(
        "--protocol",
        protocol,
        "--endpoint",
        endpoint(receiver, protocol),
        "--sessions",
        "6",
        "--service",
        "other",
    )["traces"]
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 6)
    report = agent.release()
    assert report["traces"] == [agent.trace]
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 7)
    metrics = receiver.metrics()
    assert receiver.stop() == 0
    run = the_run(store, agent.trace)
    assert (run["iterations"], run["tool_calls"], run["status"]) == (STEPS, STEPS - 1, "ok")
    assert sorted(row["trace_id"] for row in sessions(store)) == sorted([*others, agent.trace])
    assert waiting == 1
    assert metrics["otel_prov_receiver_spans_received_total"] == 7 * spans_per_session(STEPS)
    assert metrics["otel_prov_receiver_traces_awaited_total"] == 1
    assert metrics["otel_prov_receiver_awaited_traces"] == 0
    assert metrics["otel_prov_receiver_runs_cut_off_total"] == 0
    assert set(bundles(store).values()) == {1}
    assert run_cli("verify", "--store", str(store)).returncode == 0
    assert "went idle before the span of their run came" in receiver.log_text()


@pytest.mark.parametrize("stop", ["SIGKILL", "SIGTERM"])
def test_awaited_steps_outlive_a_stop_of_the_receiver(
    receivers: Receivers, held: list[HeldAgent], tmp_path: Path, stop: str
) -> None:
    """Killed, or drained, while a run waits for its end: the steps stay in the journal
    and the next receiver on the directory stores them with the rest of the run."""
    store, data = tmp_path / "store", tmp_path / "data"
    ports = ("--grpc", f"127.0.0.1:{free_port()}", "--http", f"127.0.0.1:{free_port()}")
    where = ("--store", str(store), "--data-dir", str(data), "--trace-idle", "0.3", *ports)
    first = receivers.start(*where)
    agent = HeldAgent(tmp_path, "grpc", first.grpc)
    held.append(agent)
    first.wait_for("otel_prov_receiver_spans_received_total", EARLY)
    time.sleep(IDLE_AND_MORE)
    if stop == "SIGKILL":
        first.kill()
    else:
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(60) == 0
    # Streamed (the default): the steps so far are stored, the run running, unnamed till
    # its own span comes; not sealed.
    assert [(row["trace_id"], row["status"]) for row in sessions(store)] in (
        [],
        [(agent.trace, "running")],
    )
    second = receivers.start(*where)
    assert "acknowledged before the last stop" in second.log_text()
    agent.release()
    second.wait_for("otel_prov_receiver_sessions_sealed_total", 1)
    assert second.stop() == 0
    run = the_run(store, agent.trace)
    assert (run["iterations"], run["tool_calls"], run["status"]) == (STEPS, STEPS - 1, "ok")
    assert set(bundles(store).values()) == {1}
    assert run_cli("verify", "--store", str(store)).returncode == 0
    assert list((data / "journal").glob("segment-*")) == []
    if stop == "SIGTERM":
        assert "stay in the journal" in first.log_text()


def test_a_run_whose_span_never_comes_is_stored_incomplete_at_the_session_timeout(
    receivers: Receivers, held: list[HeldAgent], tmp_path: Path
) -> None:
    """The agent dies inside its run: once the session timeout passes, the steps it sent
    are stored, the run ``incomplete``, with a warning and a count."""
    store, data = tmp_path / "store", tmp_path / "data"
    receiver = receivers.start(
        *("--store", str(store), "--data-dir", str(data), "--trace-idle", "0.3"),
        env={"OTEL_PROV_SESSION_TIMEOUT": "3"},
    )
    agent = HeldAgent(tmp_path, "http", receiver.http)
    held.append(agent)
    receiver.wait_for("otel_prov_receiver_spans_received_total", EARLY)
    agent.kill()
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 1, timeout=30)
    metrics = receiver.metrics()
    assert receiver.stop() == 0
    run = the_run(store, agent.trace)
    assert (run["iterations"], run["tool_calls"], run["status"]) == (
        STEPS - 1,
        STEPS - 1,
        "incomplete",
    )
    assert run_cli("verify", "--store", str(store)).returncode == 0
    assert "marked incomplete" in receiver.log_text()
    assert metrics["otel_prov_receiver_runs_cut_off_total"] == 1
    assert list((data / "journal").glob("segment-*")) == []
