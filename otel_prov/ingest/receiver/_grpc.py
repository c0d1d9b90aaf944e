"""OTLP/gRPC: ``opentelemetry.proto.collector.trace.v1.TraceService/Export`` with grpcio.

The method is registered with the request left as bytes (no deserializer): the receiver
journals the bytes as they came and decodes them once, instead of grpcio decoding a
message that would be encoded again for the journal.  gzip is gRPC's own
(``grpc-encoding``), handled by grpcio.  Under mutual TLS, the client certificate's
subject (grpcio's ``x509_subject``, RFC 2253) may pick the tenant.

Answers as the OTLP/gRPC specification has them: OK with an
``ExportTraceServiceResponse`` (``partial_success`` when spans were left out);
INVALID_ARGUMENT for bytes that are no request; RESOURCE_EXHAUSTED over the size limit
(grpcio's ``max_receive_message_length``); UNAUTHENTICATED without the bearer token;
UNAVAILABLE with a ``RetryInfo`` when the receiver cannot take the request now.
With TLS files the port speaks TLS only (mutual with a client CA); grpcio's core refuses
a failed handshake itself, and logs it on stderr as ``Handshake failed with error
SSL_ERROR_SSL: ... WRONG_VERSION_NUMBER`` (a plaintext client),
``PEER_DID_NOT_RETURN_A_CERTIFICATE`` or ``CERTIFICATE_VERIFY_FAILED``.  The
retry delay goes both in the standard ``grpc-status-details-bin`` (a ``google.rpc.Status``
with the ``RetryInfo`` in its details, which the Collector reads) and in
``google.rpc.retryinfo-bin`` (which the OpenTelemetry Python exporter reads).
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from typing import NoReturn

import grpc
from google.protobuf.duration_pb2 import Duration
from google.rpc.error_details_pb2 import RetryInfo
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)

from otel_prov._tls import TlsFiles, canonical_subject
from otel_prov.ingest.receiver._gate import Gate
from otel_prov.ingest.receiver._receiver import InvalidRequestError, RequestRefusedError

__all__ = ["grpc_server"]

_SERVICE = trace_service_pb2.DESCRIPTOR.services_by_name["TraceService"].full_name


def grpc_server(
    gate: Gate,
    address: str,
    *,
    max_request_bytes: int,
    tls: TlsFiles | None = None,
    workers: int = 8,
) -> tuple[grpc.Server, int]:
    """A started server on ``address`` (``HOST:PORT``, port 0 picks one) and its port;
    ``tls``: TLS only on that port."""

    def export(request: bytes, context: grpc.ServicerContext) -> ExportTraceServiceResponse:
        metadata = {key: value for key, value in context.invocation_metadata()}
        value = metadata.get("authorization")
        subject = _subject(context) if gate.takes_subjects else None
        said = f"OTLP/gRPC refused a request from {context.peer()}"
        receiver = gate.pick(value if isinstance(value, str) else None, subject, said=said)
        if receiver is None:
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "missing or wrong bearer token")
        try:
            accepted = receiver.accept(request, "protobuf", f"request from {context.peer()}")
        except InvalidRequestError as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))
        except RequestRefusedError as exc:
            _unavailable(context, exc)
        response = ExportTraceServiceResponse()
        if accepted.rejected or accepted.message:
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(
                    rejected_spans=accepted.rejected, error_message=accepted.message
                )
            )
        return response

    handler = grpc.method_handlers_generic_handler(
        _SERVICE,
        {
            "Export": grpc.unary_unary_rpc_method_handler(
                export, response_serializer=ExportTraceServiceResponse.SerializeToString
            )
        },
    )
    server = grpc.server(
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="OtelProvGrpc"),
        handlers=[handler],
        options=[
            ("grpc.max_receive_message_length", max_request_bytes),
            ("grpc.so_reuseport", 0),
        ],
    )
    if tls is None:
        port = server.add_insecure_port(address)
    else:
        cert, key, client_ca = tls.read()
        credentials = grpc.ssl_server_credentials(
            [(key, cert)], root_certificates=client_ca, require_client_auth=client_ca is not None
        )
        port = server.add_secure_port(address, credentials)
    server.start()
    return server, port


def _subject(context: grpc.ServicerContext) -> str | None:
    """The subject of the client certificate (mutual TLS), in the one spelling of
    :func:`~otel_prov._tls.canonical_subject`; None without one."""
    # A list of bytes at run time (grpcio's typing says bytes).
    found: object = context.auth_context().get("x509_subject")
    if isinstance(found, list):
        found = found[0] if found else None
    if not isinstance(found, bytes):
        return None
    try:
        return canonical_subject(found.decode("utf-8", "replace"))
    except ValueError:
        return None


def _unavailable(context: grpc.ServicerContext, refused: RequestRefusedError) -> NoReturn:
    seconds = math.ceil(refused.retry_after)
    info = RetryInfo(retry_delay=Duration(seconds=seconds))
    status = Status(code=grpc.StatusCode.UNAVAILABLE.value[0], message=str(refused))
    status.details.add().Pack(info)
    context.set_trailing_metadata(
        (
            ("grpc-status-details-bin", status.SerializeToString()),
            ("google.rpc.retryinfo-bin", info.SerializeToString()),
        )
    )
    context.abort(grpc.StatusCode.UNAVAILABLE, str(refused))
