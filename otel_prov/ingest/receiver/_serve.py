"""Running a receiver: both transports up, SIGTERM down, nothing acknowledged lost.

:func:`serve` replays the journal, starts OTLP/gRPC (grpcio's thread pool) and OTLP/HTTP
(uvicorn on a thread of its own), says where it listens, and waits for SIGTERM or
SIGINT.  Then it stops taking requests (both servers close; requests in flight finish),
drains (every buffered trace is mapped now and the destination's acknowledgement
awaited) and returns.  Whatever the destination did not take within
``drain_timeout`` stays in the journal, and the next start on the same data directory
maps it; the log says so.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import FrameType

import grpc as grpc_module
import uvicorn

from otel_prov._settings import is_loopback
from otel_prov._tls import TlsFiles, uvicorn_options
from otel_prov.environment_variables import OTEL_PROV_RECEIVER_TLS_CERT, OTEL_PROV_RECEIVER_TOKEN
from otel_prov.ingest.receiver._gate import Gate
from otel_prov.ingest.receiver._grpc import grpc_server
from otel_prov.ingest.receiver._http import http_app

__all__ = ["Listen", "parse_address", "serve"]

_logger = logging.getLogger(__name__)

_HTTP_START_TIMEOUT_S = 30.0
_GRACE_S = 5.0


@dataclass(frozen=True)
class Listen:
    """Where to listen; ``None`` is ``off``."""

    grpc: tuple[str, int] | None
    http: tuple[str, int] | None
    max_request_bytes: int = 32 << 20
    tls: TlsFiles | None = None
    """Both transports speak TLS only (mutual TLS when it names a client CA)."""


def parse_address(value: str, what: str) -> tuple[str, int] | None:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) or ``off``; ``ValueError`` says how to fix it."""
    if value.strip().lower() == "off":
        return None
    host, _, port = value.strip().rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host or not port.isdigit() or int(port) > 65535:
        raise ValueError(f"{what} must be HOST:PORT or off, not {value!r}")
    return host, int(port)


def serve(
    gate: Gate,
    listen: Listen,
    *,
    drain_timeout: float = 30.0,
    announce: Callable[[str], None] = print,
) -> bool:
    """Run until SIGTERM/SIGINT (call from the main thread); ``True`` when everything
    acknowledged was stored by the time it returns.  SIGHUP reads the tenants file again."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    def on_hangup(signum: int, frame: FrameType | None) -> None:
        threading.Thread(target=gate.reload, name="OtelProvTenantsReload", daemon=True).start()

    _warn_if_open(listen, gate)
    previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGTERM, signal.SIGINT)}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, on_hangup)  # reload, never stop
    grpc: grpc_module.Server | None = None
    http: _HttpServer | None = None
    try:
        gate.start()
        where = []
        if listen.grpc is not None:
            host, port = listen.grpc
            try:
                grpc, port = grpc_server(
                    gate,
                    f"[{host}]:{port}" if ":" in host else f"{host}:{port}",
                    max_request_bytes=listen.max_request_bytes,
                    tls=listen.tls,
                )
            except RuntimeError as exc:  # grpcio's "Failed to bind to address", no reason
                raise _cannot_listen("OTLP/gRPC", "--grpc", host, port) from exc
            where.append(f"OTLP/gRPC on {host}:{port}")
        if listen.http is not None:
            http = _HttpServer(gate, listen, *listen.http)
            scheme = "http" if listen.tls is None else "https"
            where.append(f"OTLP/HTTP on {scheme}://{listen.http[0]}:{http.port}/v1/traces")
        announce(f"otel-prov receive: {', '.join(where) or 'no transport (both off)'}; ready")
        stop.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        _logger.info("stopping: no new requests; draining")
        if http is not None:
            http.stop()
        if grpc is not None:
            grpc.stop(_GRACE_S).wait()
        # Failed to start: what the journal holds waits for the next start.
        stored = gate.drain(drain_timeout if stop.is_set() else 0.0)
    if not stored:
        _logger.warning(
            "not everything acknowledged is stored yet: it stays in the journal under %s and "
            "is mapped at the next start there",
            ", ".join(gate.data_dirs()),
        )
    return stored


def _warn_if_open(listen: Listen, gate: Gate) -> None:
    """Beyond the loopback, without a token anyone who can reach a port can have sessions
    of their making sealed, and they verify; without TLS, whoever is on the path reads
    the spans and the token: say so (``serve`` warns alike)."""
    for transport, address in (("OTLP/gRPC", listen.grpc), ("OTLP/HTTP", listen.http)):
        if address is None or is_loopback(address[0]):
            continue
        if not gate.requires_token and (listen.tls is None or listen.tls.client_ca is None):
            _logger.warning(
                "%s listens on %s, beyond this machine, without a token: anyone who can "
                "reach it can have sessions of their making sealed as provenance (require "
                "one with --token-file or $%s, or client certificates with --client-ca)",
                transport,
                address[0],
                OTEL_PROV_RECEIVER_TOKEN,
            )
        if listen.tls is None:
            _logger.warning(
                "%s listens on %s, beyond this machine, without TLS: whoever is on the "
                "network path reads the spans (and any token) as they pass (give "
                "--tls-cert and --tls-key, or $%s)",
                transport,
                address[0],
                OTEL_PROV_RECEIVER_TLS_CERT,
            )


def _cannot_listen(transport: str, flag: str, host: str, port: int) -> OSError:
    """One line for a port the transport cannot listen on: why (neither grpcio nor uvicorn
    raises the reason, so a socket of ours tries the same address) and what to do, since
    the usual cause is another OTLP receiver, such as a Collector or Phoenix, on 4317/4318."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, port))
        reason = "see the log above"  # free again, or a failure other than binding
    except OSError as exc:
        reason = exc.strerror or str(exc)
    return OSError(
        f"{transport} cannot listen on {host}:{port}: {reason}; if another program holds "
        f"the port (a Collector or Phoenix takes 4317 and 4318), stop it or listen "
        f"elsewhere with {flag} HOST:PORT (or {flag} off)"
    )


class _HttpServer:
    """uvicorn on a thread of its own (so it installs no signal handlers of its own)."""

    def __init__(self, gate: Gate, listen: Listen, host: str, port: int) -> None:
        app = http_app(gate, max_request_bytes=listen.max_request_bytes)
        config = uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            **uvicorn_options(listen.tls, "OTLP/HTTP"),
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(name="OtelProvHttp", target=self._server.run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + _HTTP_START_TIMEOUT_S
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise _cannot_listen("OTLP/HTTP", "--http", host, port)
            time.sleep(0.01)
        self.port: int = self._server.servers[0].sockets[0].getsockname()[1]

    def stop(self) -> None:
        """Close the socket and let requests in flight finish."""
        self._server.should_exit = True
        self._thread.join(_GRACE_S)
