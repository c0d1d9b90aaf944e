"""``otel-prov mcp``: the provenance to any LLM client, as a Model Context Protocol server,
over stdio (the client starts it) or streamable HTTP (``--http HOST:PORT``)."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from otel_prov._extras import needs_extra
from otel_prov._settings import is_loopback
from otel_prov._tls import TlsFiles
from otel_prov._tokens import BearerToken, token_digest
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import say
from otel_prov.cli._parser import Command, allow_service, at_least_one, port, seconds, tls_arguments
from otel_prov.cli._shared import (
    backend,
    base_graph,
    reload_on_hangup,
    tenant,
    tenants_from,
    token_text,
)

__all__ = ["COMMANDS", "listen_address"]

_HTTP_ONLY = (
    "token_file", "tenants", "tls_cert", "tls_key", "client_ca", "allowed_host", "allowed_origin"
)  # fmt: skip


def listen_address(value: str) -> tuple[str, int]:
    """``--http``: ``HOST:PORT`` (``[::1]:PORT`` for IPv6; port 0 picks a free one)."""
    host, colon, number = value.rpartition(":")
    host = host.strip("[]")
    if not colon or not host:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (127.0.0.1:8765), not {value!r}")
    return host, port(number)


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--http",
        type=listen_address,
        metavar="HOST:PORT",
        help="serve streamable HTTP at http://HOST:PORT/mcp instead of stdio (127.0.0.1: "
        "this machine only; any other address is warned about)",
    )
    sub.add_argument(
        "--query-timeout",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="stop a query of the sparql tool after this long (10)",
    )
    sub.add_argument(
        "--max-calls",
        type=at_least_one,
        default=4,
        metavar="N",
        help="tool calls answered at once, at most (4); one more is told to try again",
    )
    allow_service(sub)
    sub.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="--http: a host name the server is reached by, besides the address it listens "
        "on (repeatable); a request naming any other host is refused (DNS rebinding)",
    )
    sub.add_argument(
        "--allowed-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="--http: an origin (https://app.example) whose pages may call the server, for "
        "a client running in a browser (repeatable); other pages are refused",
    )
    tls_arguments(sub)
    readers = sub.add_mutually_exclusive_group()
    readers.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="--http: every request needs the token the file holds ('Authorization: Bearer "
        "<token>')",
    )
    readers.add_argument(
        "--tenants",
        type=Path,
        metavar="FILE",
        help="--http: a tenants file (JSON): its tokens (or client certificates) are the "
        "readers, and each reads its own tenant only, on every tool (default: "
        "$OTEL_PROV_TENANTS over --http)",
    )


def _mcp(args: argparse.Namespace) -> ExitCode:
    """Open the store (or endpoint) first, so that one that cannot be read fails at once;
    then serve until the client closes stdin (stdio) or the process is stopped (HTTP)."""
    with needs_extra("mcp", "mcp"):
        from otel_prov.mcp_server._http import confinements, http_app
        from otel_prov.mcp_server._server import build_server
        from otel_prov.mcp_server._tools import Tools
        from otel_prov.view._reading import FreshBackend, TextIndexes
    given = [f"--{name.replace('_', '-')}" for name in _HTTP_ONLY if getattr(args, name)]
    if args.http is None and given:
        raise UsageError(f"{', '.join(given)} secure the HTTP server: give --http HOST:PORT")
    try:
        tls = TlsFiles.of(args.tls_cert, args.tls_key, args.client_ca)
        token = token_text(args.token_file)
        if token is not None:
            BearerToken(token)  # one word, not empty
        tenants = tenants_from(args.tenants) if args.http is not None else None
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if tenants is not None and tenant(args) is not None:
        raise UsageError("--tenants names the readers' tenants: no --tenant")
    graph = base_graph(args)[1:-1]
    _log_to_stderr()
    fresh = FreshBackend(lambda: backend(args), refresh_s=2.0)
    tools = Tools(
        backend=fresh.get,
        indexes=TextIndexes(fresh).of,
        query_timeout_s=args.query_timeout,
        allow_service=tuple(args.allow_service),
    )
    server = build_server(
        tools, confinements(graph, tenant(args), tenants), max_calls=args.max_calls
    )
    if args.http is None:
        server.run("stdio")
        return ExitCode.OK
    host, number = args.http
    _warn_open(host, token is not None or tenants is not None, tls is not None)
    app = http_app(
        server,
        bound_host=host,
        allowed_hosts=args.allowed_host,
        allowed_origins=args.allowed_origin,
        reader_tokens=None if token is None else {token_digest(token): "token"},
        tenants=tenants,
    )
    if tenants is not None:
        reload_on_hangup(tenants)
    from otel_prov.view._server import serve

    try:
        serve(
            app,
            host,
            number,
            announce=lambda url: print(f"otel-prov mcp: {url}mcp", flush=True),
            tls=tls,
            name="mcp",
            lifespan=True,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{number}: {exc.strerror or exc}") from exc
    return ExitCode.OK


def _log_to_stderr() -> None:
    """Every log line on stderr, one each (over stdio, stdout is the protocol's alone);
    set before the SDK's server, whose own set-up is then left out."""
    logging.basicConfig(
        level=logging.WARNING, stream=sys.stderr, format="otel-prov mcp: %(name)s: %(message)s"
    )


def _warn_open(host: str, readers: bool, tls: bool) -> None:
    if is_loopback(host):
        return
    if not readers:
        say(
            f"warning: listening on {host}, not this machine only: anyone who can reach it "
            "reads all the provenance in the store (give --token-file or --tenants)"
        )
    if not tls:
        say(
            f"warning: listening on {host} without TLS: whoever is on the network path reads "
            "the answers as they pass (give --tls-cert and --tls-key)"
        )


COMMANDS = (
    Command(
        "mcp",
        "otel-prov mcp --store .otel-prov/store",
        _mcp,
        _arguments,
        logs_itself=True,
    ),
)
