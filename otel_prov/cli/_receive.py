"""``otel-prov receive``: its flags, and running the receiver until SIGTERM."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from otel_prov._extras import needs_extra
from otel_prov._settings import env_bool, env_str
from otel_prov._tenants import Tenants, tenant_graph
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._parser import Command, Where, tls_arguments
from otel_prov.cli._shared import (
    chain_writer,
    destination,
    graph,
    tenant,
    tenants_from,
    token_text,
)
from otel_prov.environment_variables import (
    OTEL_PROV_RECEIVER_CLIENT_CA,
    OTEL_PROV_RECEIVER_GRPC,
    OTEL_PROV_RECEIVER_HTTP,
    OTEL_PROV_RECEIVER_METRICS_TOKEN,
    OTEL_PROV_RECEIVER_TLS_CERT,
    OTEL_PROV_RECEIVER_TLS_KEY,
    OTEL_PROV_RECEIVER_TOKEN,
    OTEL_PROV_STREAM,
    OTEL_PROV_STRIP_CONTENT,
    OTEL_PROV_TENANTS,
)
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.setup._destination import Destination

__all__ = ["COMMANDS", "add_no_content_argument", "content_policy"]

DEFAULT_GRPC = "127.0.0.1:4317"
DEFAULT_HTTP = "127.0.0.1:4318"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--grpc",
        metavar="HOST:PORT|off",
        help=f"OTLP/gRPC address (default: ${OTEL_PROV_RECEIVER_GRPC} or {DEFAULT_GRPC})",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT|off",
        help=f"OTLP/HTTP address, also /healthz and /metrics (default: "
        f"${OTEL_PROV_RECEIVER_HTTP} or {DEFAULT_HTTP})",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="journal of accepted requests (default: $OTEL_PROV_RECEIVER_DIR or "
        ".otel-prov/receiver)",
    )
    parser.add_argument(
        "--trace-idle",
        type=float,
        metavar="SECONDS",
        help="map a trace once no span of it came for this long (default: "
        "$OTEL_PROV_TRACE_IDLE or 5)",
    )
    parser.add_argument(
        "--stream",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"record the steps of a run still open as they come, the run shown running; "
        f"--no-stream records a run when it ends (default: ${OTEL_PROV_STREAM}, else on)",
    )
    add_no_content_argument(parser)
    parser.add_argument(
        "--token-file",
        type=Path,
        help=f"require 'Authorization: Bearer <the file's content>' (default: "
        f"${OTEL_PROV_RECEIVER_TOKEN}; unset: no token)",
    )
    parser.add_argument(
        "--tenants",
        type=Path,
        metavar="FILE",
        help=f"a tenants file (JSON): the token (or client certificate) of a request picks "
        f"its tenant, whose runs go to a graph of its own (default: ${OTEL_PROV_TENANTS}; "
        "unset: one graph)",
    )
    parser.add_argument(
        "--metrics-token-file",
        type=Path,
        metavar="FILE",
        help=f"/metrics requires 'Authorization: Bearer <the file's content>' (default: "
        f"${OTEL_PROV_RECEIVER_METRICS_TOKEN}; unset: open, or with --tenants a tenant's "
        "token, showing its own samples)",
    )
    tls_arguments(
        parser,
        f" (default: ${OTEL_PROV_RECEIVER_TLS_CERT}, ${OTEL_PROV_RECEIVER_TLS_KEY}, "
        f"${OTEL_PROV_RECEIVER_CLIENT_CA})",
    )


def add_no_content_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-content``, of ``receive`` and ``import`` (read by :func:`content_policy`)."""
    parser.add_argument(
        "--no-content",
        action="store_true",
        help="store no content of any span (sizes and hashes only), whatever the agents "
        f"sent (default: ${OTEL_PROV_STRIP_CONTENT}, else the capture switches)",
    )


def content_policy(args: argparse.Namespace) -> bool | None:
    """The ``content`` of a ``RecordPreparer``: False (store none) for ``--no-content`` or
    ``OTEL_PROV_STRIP_CONTENT=true``, else None (the capture switches decide)."""
    return False if args.no_content or env_bool(OTEL_PROV_STRIP_CONTENT, False) else None


def _receive(args: argparse.Namespace) -> ExitCode:
    """Run until SIGTERM; OK then, even when part of what was acknowledged stays journaled
    for the next start (the log says so)."""
    try:
        tenants = tenants_from(args.tenants)
        if tenants is not None and tenant(args) is not None:
            raise ValueError("--tenants picks the tenant by token: no --tenant with it")
        return _run(args, graph(args), tenants, lambda: destination(args))
    except (ValueError, OSError) as exc:  # a bad flag; a port or data directory in use
        raise UsageError(str(exc)) from exc


def _run(
    args: argparse.Namespace,
    graph: str,
    tenants: Tenants | None,
    destination: Callable[[], Destination],
) -> ExitCode:
    """As :func:`_receive`: ``ValueError`` for a bad flag, ``OSError`` for a port or data
    directory in use; ``destination`` opens the exporter once the flags are checked."""
    with needs_extra("receive", "receive"):
        from otel_prov.ingest.receiver import (
            BearerToken,
            Gate,
            Listen,
            Receiver,
            ReceiverSettings,
            parse_address,
            serve,
            tls_from_settings,
        )
    token = token_text(args.token_file, OTEL_PROV_RECEIVER_TOKEN)
    metrics_text = token_text(
        args.metrics_token_file, OTEL_PROV_RECEIVER_METRICS_TOKEN, "--metrics-token-file"
    )
    metrics_token = None if metrics_text is None else BearerToken(metrics_text)
    if tenants is not None and token is not None:
        raise ValueError("--tenants names the tokens: no --token-file with it")
    listen = Listen(
        grpc=parse_address(
            args.grpc or env_str(OTEL_PROV_RECEIVER_GRPC, DEFAULT_GRPC) or "", "--grpc"
        ),
        http=parse_address(
            args.http or env_str(OTEL_PROV_RECEIVER_HTTP, DEFAULT_HTTP) or "", "--http"
        ),
        tls=tls_from_settings(args.tls_cert, args.tls_key, args.client_ca),
    )
    if args.trace_idle is not None and args.trace_idle <= 0:
        raise ValueError(
            f"--trace-idle must be a positive number of seconds, not {args.trace_idle}"
        )
    settings = ReceiverSettings.from_settings(
        data_dir=args.data_dir, trace_idle=args.trace_idle, stream=args.stream
    )
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    chain = chain_writer()
    opened = destination()
    try:

        def receiver(settings: ReceiverSettings, graph: str, chain: ChainWriter) -> Receiver:
            pipeline = WritePipeline.from_settings(
                opened.exporter,
                chain=chain,
                graph=graph,
                stream=settings.stream,
                content=content_policy(args),
            )
            return Receiver(
                settings,
                pipeline=pipeline,
                reader=_reader(opened.reader),
                spool_bytes=None
                if opened.spool is None
                else functools.partial(_directory_bytes, opened.spool),
            )

        if tenants is None:
            gate = Gate.single(
                receiver(settings, graph, chain),
                None if token is None else BearerToken(token),
                metrics_token,
            )
        else:
            base = graph[1:-1]
            gate = Gate(
                {
                    name: receiver(
                        dataclasses.replace(
                            settings, data_dir=settings.data_dir / "tenants" / name
                        ),
                        f"<{tenant_graph(base, name)}>",
                        ChainWriter(signer=chain.signer),  # a chain per tenant's graph
                    )
                    for name in tenants.tenants
                },
                tenants=tenants,
                metrics_token=metrics_token,
            )
        serve(gate, listen, announce=functools.partial(print, flush=True))
    finally:
        opened.exporter.shutdown()
    return ExitCode.OK


def _reader(backend: QueryBackend) -> Callable[[], QueryBackend]:
    """A reader of what is stored now: the embedded store's read-only view is a snapshot
    taken when it opens, so each call opens a new one (unless it reads through this
    process's writer, which sees everything)."""
    if isinstance(backend, EmbeddedBackend):
        path, writer = backend.path, backend.writer
        return lambda: EmbeddedBackend(path, writer=writer)
    return lambda: backend


def _directory_bytes(directory: Path) -> int:
    """Bytes in the files under ``directory`` (those deleted meanwhile count nothing)."""
    total = 0
    for path in directory.rglob("*"):
        try:
            total += path.stat().st_size if path.is_file() else 0
        except OSError:
            continue
    return total


COMMANDS = (
    Command(
        "receive",
        "otel-prov receive --endpoint-update http://localhost:7878/update",
        _receive,
        _arguments,
        where=Where.WRITES,
        logs_itself=True,
    ),
)
