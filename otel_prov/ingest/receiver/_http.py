"""OTLP/HTTP: ``POST /v1/traces`` (protobuf or JSON, gzip or deflate), ``GET /healthz``,
``GET /metrics``, as a Starlette application (served by uvicorn).

Answers as the OTLP/HTTP specification has them: 200 with an ``ExportTraceServiceResponse``
(``partial_success`` when spans were left out) in the request's encoding; 400 with a
``google.rpc.Status`` for a body that cannot be decoded; 401 without the bearer token
(when one is required); 413 over the size limit (before or after decompression); 415
for another content type; 429 (backlog) or 503 (starting, draining, disk) with
``Retry-After``, which the OpenTelemetry exporters and the Collector retry.  ``/healthz``
answers 200 once the journal is replayed and requests are taken, 503 before and while
draining, and needs no token.  ``/metrics`` needs the metrics token when one is given,
and with tenants (whose names it shows) that or a tenant's own, which shows that tenant's
samples only (:meth:`~otel_prov.ingest.receiver._gate.Gate.metrics_for`).
"""

from __future__ import annotations

import math
import zlib

from google.protobuf.json_format import MessageToJson
from google.protobuf.message import Message
from google.rpc.status_pb2 import Status
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceResponse,
)
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from otel_prov._tls import client_subject
from otel_prov.ingest.receiver._gate import Gate
from otel_prov.ingest.receiver._metrics import CONTENT_TYPE
from otel_prov.ingest.receiver._receiver import (
    Encoding,
    InvalidRequestError,
    RequestRefusedError,
)

__all__ = ["http_app"]

_PROTOBUF = "application/x-protobuf"
_JSON = "application/json"
_ENCODINGS: dict[str, Encoding] = {_PROTOBUF: "protobuf", _JSON: "json"}
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}
# grpc.StatusCode values for the google.rpc.Status of an error body.
_INVALID_ARGUMENT, _UNAUTHENTICATED, _RESOURCE_EXHAUSTED, _UNAVAILABLE = 3, 16, 8, 14


class _TooLargeError(Exception):
    pass


def http_app(gate: Gate, *, max_request_bytes: int) -> Starlette:
    async def traces(request: Request) -> Response:
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        encoding = _ENCODINGS.get(media)
        answer_as = media if encoding is not None else _PROTOBUF
        client = request.client.host if request.client else "unknown"
        receiver = gate.pick(
            request.headers.get("authorization"),
            client_subject(request.scope),
            said=f"OTLP/HTTP refused a request from {client}",
        )
        if receiver is None:
            return _error(401, _UNAUTHENTICATED, "missing or wrong bearer token", answer_as)
        if encoding is None:
            return _error(
                415,
                _INVALID_ARGUMENT,
                f"content type {media!r} is not {_PROTOBUF} or {_JSON}",
                answer_as,
            )
        try:
            body = await _body(request, max_request_bytes)
        except _TooLargeError:
            return _error(
                413, _RESOURCE_EXHAUSTED, f"request over {max_request_bytes} bytes", answer_as
            )
        except (zlib.error, ValueError) as exc:
            return _error(400, _INVALID_ARGUMENT, f"cannot decompress the body: {exc}", answer_as)
        source = f"request from {client}"
        try:
            accepted = await run_in_threadpool(receiver.accept, body, encoding, source)
        except InvalidRequestError as exc:
            return _error(400, _INVALID_ARGUMENT, str(exc), answer_as)
        except RequestRefusedError as exc:
            status = 429 if exc.overloaded else 503
            headers = {"Retry-After": str(math.ceil(exc.retry_after))}
            return _error(status, _UNAVAILABLE, str(exc), answer_as, headers)
        response = ExportTraceServiceResponse()
        if accepted.rejected or accepted.message:
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(
                    rejected_spans=accepted.rejected, error_message=accepted.message
                )
            )
        return _message(200, response, answer_as)

    async def healthz(request: Request) -> Response:
        ready = gate.ready
        return PlainTextResponse("ok\n" if ready else "not ready\n", 200 if ready else 503)

    async def metrics(request: Request) -> Response:
        text = await run_in_threadpool(
            gate.metrics_for, request.headers.get("authorization"), client_subject(request.scope)
        )
        if text is None:
            return PlainTextResponse(
                "/metrics needs the metrics token (--metrics-token-file) or a tenant's: "
                "send 'Authorization: Bearer <token>'\n",
                401,
                headers={"www-authenticate": 'Bearer realm="otel-prov metrics"'},
            )
        return Response(text, media_type=CONTENT_TYPE)

    return Starlette(
        routes=[
            Route("/v1/traces", traces, methods=["POST"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ]
    )


async def _body(request: Request, limit: int) -> bytes:
    """The body, decompressed, at most ``limit`` bytes either way (a small gzip body can
    unpack to gigabytes)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _TooLargeError
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _TooLargeError
        chunks.append(chunk)
    body = b"".join(chunks)
    coding = request.headers.get("content-encoding", "identity").strip().lower()
    if coding in ("", "identity"):
        return body
    if coding not in _WBITS:
        raise ValueError(f"unsupported content encoding {coding!r} (gzip, deflate)")
    return _inflate(body, _WBITS[coding], limit, members=coding == "gzip")


def _inflate(body: bytes, wbits: int, limit: int, *, members: bool) -> bytes:
    """``body`` decompressed, every gzip member of it (RFC 1952: a gzip file is a series
    of members, as a sender that compresses while it streams writes it); at most
    ``limit`` bytes in all."""
    parts: list[bytes] = []
    size = 0
    rest = body
    while True:
        inflater = zlib.decompressobj(wbits)
        part = inflater.decompress(rest, limit + 1 - size)
        size += len(part)
        if size > limit:
            raise _TooLargeError
        if not inflater.eof:
            raise ValueError("the compressed body is cut short")
        parts.append(part)
        rest = inflater.unused_data
        if not members or not rest:
            return b"".join(parts)


def _message(
    status: int, message: Message, media: str, headers: dict[str, str] | None = None
) -> Response:
    if media == _JSON:
        return Response(MessageToJson(message, indent=None), status, headers, media_type=_JSON)
    return Response(message.SerializeToString(), status, headers, media_type=_PROTOBUF)


def _error(
    status: int, code: int, text: str, media: str, headers: dict[str, str] | None = None
) -> Response:
    return _message(status, Status(code=code, message=text), media, headers)
