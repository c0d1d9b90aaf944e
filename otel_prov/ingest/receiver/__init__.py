"""``otel-prov receive``: an OTLP trace receiver that turns whole traces into provenance.

Point an OpenTelemetry Collector's ``otlp`` exporter (or ``loadbalancing`` exporter, see
``deploy/``) at it, or the agents themselves (``OTEL_EXPORTER_OTLP_ENDPOINT``)::

    otel-prov receive --store .otel-prov/store            # embedded store
    otel-prov receive --endpoint-update http://oxigraph:7878/update

It takes OTLP/gRPC on ``--grpc`` (``OTEL_PROV_RECEIVER_GRPC``, default 127.0.0.1:4317)
and OTLP/HTTP on ``--http`` (``OTEL_PROV_RECEIVER_HTTP``, default 127.0.0.1:4318), where
``GET /healthz`` and ``GET /metrics`` (Prometheus) are served too.

* **Accepted means durable.**  A request is appended to the journal under ``--data-dir``
  (``OTEL_PROV_RECEIVER_DIR``, default ``.otel-prov/receiver``) and fsynced
  (``OTEL_PROV_RECEIVER_FSYNC``) before it is acknowledged.  After a crash, the next
  start on the same directory maps whatever was acknowledged and not yet stored, once.
* **Whole traces.**  Spans are buffered by trace id and a trace is mapped when no new
  span of it came for ``--trace-idle`` seconds (``OTEL_PROV_TRACE_IDLE``, default 5), so
  spans from several requests, processes and services are mapped together: a session
  in one service started by a tool call's HTTP request in another becomes a
  sub-session of it.  Spans that come after that revise the stored bundle.
* **Backpressure, never silent loss.**  Bad spans are answered with ``partial_success``;
  when too much waits to be stored, requests are refused with a retry delay and the
  sender keeps them.
* **SIGTERM** stops taking requests, maps everything buffered and exits 0 once the
  destination holds it; what it could not store in time stays journaled for the next
  start.
* An optional bearer token (``--token-file`` or ``OTEL_PROV_RECEIVER_TOKEN``) is
  required of every export request; it is never logged.
* TLS on both transports with ``--tls-cert`` and ``--tls-key``
  (``OTEL_PROV_RECEIVER_TLS_CERT``, ``..._TLS_KEY``); mutual TLS with ``--client-ca``
  (``OTEL_PROV_RECEIVER_CLIENT_CA``).  Beyond the loopback without TLS, it warns.
* Tenants (``--tenants FILE``, ``OTEL_PROV_TENANTS``): the token picks the tenant, and
  each tenant's runs go to its own graph through a receiver of its own
  (:class:`~otel_prov.ingest.receiver._gate.Gate`).
"""

from otel_prov._tokens import BearerToken
from otel_prov.ingest.receiver._gate import Gate
from otel_prov.ingest.receiver._receiver import Accepted, Receiver, RequestRefusedError
from otel_prov.ingest.receiver._serve import Listen, parse_address, serve
from otel_prov.ingest.receiver._settings import (
    DEFAULT_DATA_DIR,
    ReceiverSettings,
    tls_from_settings,
)

__all__ = [
    "DEFAULT_DATA_DIR",
    "Accepted",
    "BearerToken",
    "Gate",
    "Listen",
    "Receiver",
    "ReceiverSettings",
    "RequestRefusedError",
    "parse_address",
    "serve",
    "tls_from_settings",
]
