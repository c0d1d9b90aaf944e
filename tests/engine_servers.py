"""Jaeger and the OpenTelemetry Collector, built from the Go module proxy
(``tests/engine_builds.py``), run for real beside otel-prov.

:func:`start_jaeger` and :func:`start_collector` run the configuration files of
``deploy/`` themselves, their addresses set through the environment variables those
files read, on free loopback ports, with a log under the test's directory; each is
stopped by the test (or at exit).  :func:`validate` checks a file with the engine's own
``validate`` command.
"""

from __future__ import annotations

import atexit
import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.engine_builds import built
from tests.servers import free_port

__all__ = [
    "DEPLOY",
    "Collector",
    "EngineProcess",
    "Jaeger",
    "collector_env",
    "resolver",
    "start_collector",
    "start_jaeger",
    "validate",
]

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
READY_TIMEOUT = 60.0


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


@dataclass
class EngineProcess:
    """A process of an engine, started (and started again, with the same command and
    environment) by the test; ready when ``health`` answers 200."""

    name: str
    command: list[str]
    env: dict[str, str] = field(repr=False)
    health: str
    log: Path = field(repr=False)
    _process: subprocess.Popen[bytes] | None = field(default=None, init=False, repr=False)

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError(f"{self.name} is not running")
        return self._process.pid

    def start(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        begin = time.monotonic()
        with self.log.open("ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} start: {self.command}\n".encode())
            log.flush()
            self._process = subprocess.Popen(
                self.command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env={**os.environ, **self.env},
                cwd=self.log.parent,
            )
        while not _answers(self.health):
            code = self._process.poll()
            if code is not None or time.monotonic() - begin > READY_TIMEOUT:
                self.stop()
                why = f"exited with code {code}" if code is not None else "timed out"
                raise RuntimeError(
                    f"{self.name} {why} before {self.health} answered; its log ends:\n"
                    + self.log_text()[-20_000:]
                )
            time.sleep(0.1)

    def stop(self) -> int | None:
        """SIGTERM (then SIGKILL after 30 s); the exit code."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")


def _launch(engine: EngineProcess) -> None:
    engine.start()
    atexit.register(engine.stop)


@dataclass
class Jaeger(EngineProcess):
    otlp_grpc: str = ""
    """``127.0.0.1:PORT``"""
    ui: str = ""
    """``http://127.0.0.1:PORT``: the UI and the query APIs (``/api/``, ``/api/v3/``)."""

    def trace(self, trace_id: str) -> list[dict[str, Any]]:
        """Every span Jaeger holds of the trace, from its API v3 (``GET
        /api/v3/traces/{id}``: OTLP JSON), each with its resource's ``service.name``
        added as ``service``; none when Jaeger has no such trace (404)."""
        try:
            with urllib.request.urlopen(f"{self.ui}/api/v3/traces/{trace_id}", timeout=10) as r:
                answer = json.load(r)
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return []
            raise
        spans = []
        for resource in answer["result"]["resourceSpans"]:
            attributes = {a["key"]: a["value"] for a in resource["resource"]["attributes"]}
            service = attributes["service.name"]["stringValue"]
            for scope in resource["scopeSpans"]:
                spans += [{**span, "service": service} for span in scope["spans"]]
        return spans


def start_jaeger(tmp_dir: Path, config: Path = DEPLOY / "jaeger.yaml") -> Jaeger:
    """Jaeger v2 with ``deploy/jaeger.yaml``, every port a free one on 127.0.0.1."""
    ports = {name: free_port() for name in ("grpc", "http", "ui", "query", "health", "metrics")}
    env = {
        "JAEGER_OTLP_GRPC_ENDPOINT": f"127.0.0.1:{ports['grpc']}",
        "JAEGER_OTLP_HTTP_ENDPOINT": f"127.0.0.1:{ports['http']}",
        "JAEGER_QUERY_HTTP_ENDPOINT": f"127.0.0.1:{ports['ui']}",
        "JAEGER_QUERY_GRPC_ENDPOINT": f"127.0.0.1:{ports['query']}",
        "JAEGER_HEALTH_ENDPOINT": f"127.0.0.1:{ports['health']}",
        "JAEGER_METRICS_HOST": "127.0.0.1",
        "JAEGER_METRICS_PORT": str(ports["metrics"]),
    }
    jaeger = Jaeger(
        name="jaeger",
        command=[str(built("jaeger")), "--config", str(config)],
        env=env,
        health=f"http://127.0.0.1:{ports['health']}/status",
        log=Path(tmp_dir) / "jaeger.log",
        otlp_grpc=env["JAEGER_OTLP_GRPC_ENDPOINT"],
        ui=f"http://{env['JAEGER_QUERY_HTTP_ENDPOINT']}",
    )
    _launch(jaeger)
    return jaeger


@dataclass
class Collector(EngineProcess):
    """otelcol-prov with one of ``deploy/``'s Collector configurations."""


def collector_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables every Collector configuration of ``deploy/`` reads for its health
    check and its own metrics, on free loopback ports, with ``env`` over them."""
    return {
        "OTELCOL_HEALTH_ENDPOINT": f"127.0.0.1:{free_port()}",
        "OTELCOL_METRICS_HOST": "127.0.0.1",
        "OTELCOL_METRICS_PORT": str(free_port()),
        **(env or {}),
    }


def start_collector(tmp_dir: Path, config: Path, env: Mapping[str, str]) -> Collector:
    """``otelcol-prov --config CONFIG`` (a file of ``deploy/``) with the variables it reads
    in ``env`` and :func:`collector_env`'s."""
    full = collector_env(env)
    collector = Collector(
        name=f"collector ({config.name})",
        command=[str(built("otelcol")), "--config", str(config)],
        env=full,
        health=f"http://{full['OTELCOL_HEALTH_ENDPOINT']}/",
        log=Path(tmp_dir) / f"collector-{config.stem}.log",
    )
    _launch(collector)
    return collector


def validate(engine: str, config: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """``ENGINE validate --config CONFIG``, as the engine's own binary checks a file."""
    return subprocess.run(
        [str(built(engine)), "validate", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
    )


def resolver(*grpc: str) -> str:
    """``PROV_RECEIVERS_RESOLVER`` for receivers at ``grpc`` (``HOST:PORT`` each)."""
    return json.dumps({"static": {"hostnames": list(grpc)}})
