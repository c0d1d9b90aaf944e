"""``otel-prov receive`` as a user runs it, in its own process, and OTLP senders beside it.

:class:`Receivers` starts receivers on ports the operating system picks (read back from
the line the receiver prints when ready), stops them with SIGTERM or SIGKILL, and kills
whatever is left at the end of the test.  :func:`run_agent` runs ``tests.otlp_agent``,
an agent with only the OpenTelemetry SDK, in a process of its own.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import signal
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph

from otel_prov.prov._stream import STREAMED
from tests.cli import CLI, run_cli
from tests.servers import SparqlServer

READY_TIMEOUT = 60.0
_READY = re.compile(r"OTLP/gRPC on ([^,;]+)(?:, OTLP/HTTP on (https?://[^/]+)/v1/traces)?; ready")


@dataclass
class Receiver:
    process: subprocess.Popen[str] = field(repr=False)
    grpc: str
    """``HOST:PORT``."""
    http: str
    """``http://HOST:PORT`` (``https://`` with TLS)."""
    log: Path
    tls: ssl.SSLContext | None = None
    """What :meth:`metrics` reaches a TLS receiver with (the test sets it)."""
    metrics_token: str | None = None
    """The token :meth:`metrics` sends (a tenants file makes ``/metrics`` need one)."""

    def metrics(self) -> dict[str, float]:
        """``/metrics``, the samples by name (with their labels: ``name{tenant="a"}``)."""
        headers = {"Authorization": f"Bearer {self.metrics_token}"} if self.metrics_token else {}
        sent = urllib.request.Request(f"{self.http}/metrics", headers=headers)
        with urllib.request.urlopen(sent, timeout=10, context=self.tls) as response:
            text = response.read().decode()
        samples = (line.rsplit(" ", 1) for line in text.splitlines() if not line.startswith("#"))
        return {name: float(value) for name, value in samples}

    def wait_for(self, name: str, value: float, timeout: float = 60.0) -> None:
        """Until the metric ``name`` reaches ``value``."""
        deadline = time.monotonic() + timeout
        while self.metrics().get(name, 0) < value:
            if time.monotonic() > deadline:
                raise AssertionError(f"{name} < {value} after {timeout}s: {self.metrics()}")
            time.sleep(0.1)

    def stop(self, timeout: float = 60.0) -> int:
        """SIGTERM, and the exit code once it has drained."""
        self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout)

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


class Receivers:
    """Receiver processes of one test; each gets ``--grpc``/``--http`` on free ports."""

    def __init__(self, tmp_path: Path) -> None:
        self._tmp_path = tmp_path
        self._started: list[Receiver] = []

    def start(
        self, *args: str, env: dict[str, str] | None = None, name: str = "receiver"
    ) -> Receiver:
        log = self._tmp_path / f"{name}-{len(self._started)}.log"
        command = [*CLI, "receive", "--grpc", "127.0.0.1:0", "--http", "127.0.0.1:0", *args]
        with log.open("w") as stderr:  # the child has its own copy
            process = subprocess.Popen(
                command,
                stdout=subprocess.PIPE,
                stderr=stderr,
                stdin=subprocess.DEVNULL,
                text=True,
                env={**os.environ, **(env or {})},
                cwd=self._tmp_path,
            )
        receiver = Receiver(process, "", "", log)
        self._started.append(receiver)
        assert process.stdout is not None
        ready, _, _ = select.select([process.stdout], [], [], READY_TIMEOUT)
        line = process.stdout.readline() if ready else ""
        found = _READY.search(line)
        if found is None:
            process.kill()
            raise AssertionError(f"receiver not ready: {line!r}\n{log.read_text()}")
        receiver.grpc, receiver.http = found.group(1), found.group(2) or ""
        return receiver

    def close(self) -> None:
        for receiver in self._started:
            if receiver.process.poll() is None:
                receiver.kill()
            if receiver.process.stdout is not None:
                receiver.process.stdout.close()


ROOT = Path(__file__).resolve().parent.parent


def run_agent(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120.0
) -> dict[str, Any]:
    """``tests.otlp_agent ARGS`` in its own process; its report (the trace ids it ran)."""
    done = subprocess.run(
        [*CLI[:1], "-m", "tests.otlp_agent", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return report


@contextlib.contextmanager
def service(endpoint: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """``tests.otlp_service`` exporting to ``endpoint``: the process and its ``/run`` URL;
    killed on the way out if the test did not stop it."""
    process = subprocess.Popen(
        [*CLI[:1], "-m", "tests.otlp_service", "--endpoint", endpoint],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        yield process, f"http://127.0.0.1:{int(process.stdout.readline())}/run"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stdout is not None:
            process.stdout.close()


def writing_to(server: SparqlServer) -> tuple[str, ...]:
    """``otel-prov receive`` flags that write to ``server`` and read back from it."""
    return ("--endpoint-update", server.update_endpoint, "--endpoint", server.query_endpoint)


def bundles_per_session(query_endpoint: str) -> list[int]:
    """How many bundles over its whole content each stored session has (1: sealed once; a
    streamed run's entries over the steps it added are not counted), read with the CLI."""
    answer = run_cli(
        "query",
        "--endpoint",
        query_endpoint,
        "--format",
        "json",
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "SELECT ?session (COUNT(?bundle) AS ?n) WHERE { ?bundle oprov:bundleOf ?session "
        f'FILTER NOT EXISTS {{ ?bundle oprov:canonicalization "{STREAMED}" }} }} '
        "GROUP BY ?session",
    )
    return [int(row["n"]) for row in json.loads(answer.stdout)]


_CHAIN = ("chainId", "sequenceNumber", "previousEntryHash", "signature", "signedBy", "headHash")


def quads(store: Path) -> set[str]:
    """What an embedded store holds, quad by quad, but the writer's chain (each writer has
    one of its own, by a random id, with its checkpoints)."""
    return {
        str(quad)
        for quad in pyoxigraph.Store.read_only(str(store))
        if not quad.subject.value.startswith("urn:otel-prov:chain:")
        and quad.predicate.value.rsplit("#", 1)[-1] not in _CHAIN
    }


def healthz(receiver: Receiver) -> int:
    try:
        with urllib.request.urlopen(f"{receiver.http}/healthz", timeout=10) as response:
            status: int = response.status
            return status
    except urllib.error.HTTPError as exc:
        return exc.code
