"""``otel-prov serve``: the read-only web view, until interrupted."""

from __future__ import annotations

import argparse
from pathlib import Path

from otel_prov._extras import needs_extra
from otel_prov._settings import is_loopback
from otel_prov._tls import TlsFiles
from otel_prov._tokens import BearerToken, token_digest
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import say
from otel_prov.cli._parser import (
    Command,
    allow_service,
    at_least_one,
    port,
    seconds,
    tls_arguments,
)
from otel_prov.cli._shared import (
    backend,
    base_graph,
    reload_on_hangup,
    tenant,
    tenants_from,
    token_text,
    trace_links,
)
from otel_prov.exporters._reading import StoreUnavailableError
from otel_prov.setup._destination import store_path

__all__ = ["COMMANDS"]


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (127.0.0.1: this machine only; any other is warned about)",
    )
    sub.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server is reached by, besides the address it listens on "
        "(repeatable); a request naming any other host is refused (DNS rebinding)",
    )
    sub.add_argument(
        "--port", type=port, default=8080, metavar="N", help="port (8080; 0 picks a free one)"
    )
    sub.add_argument(
        "--query-timeout",
        type=seconds,
        default=10.0,
        metavar="SECONDS",
        help="stop a query of the SPARQL page after this long (10)",
    )
    sub.add_argument(
        "--max-queries",
        type=at_least_one,
        default=2,
        metavar="N",
        help="queries of the SPARQL page run at once, at most (2); one more gets 503",
    )
    allow_service(sub)
    tls_arguments(sub)
    sub.add_argument(
        "--tenants",
        type=Path,
        metavar="FILE",
        help="a tenants file (JSON): its tokens (or proxy users) are the readers, and each "
        "reads only the tenants it may (default: $OTEL_PROV_TENANTS; unset: one graph)",
    )
    readers = sub.add_mutually_exclusive_group()
    readers.add_argument(
        "--token-file",
        type=Path,
        metavar="FILE",
        help="every page and endpoint needs the token the file holds: 'Authorization: "
        "Bearer <token>', or typed once into /login (which sets a Secure, HttpOnly cookie)",
    )
    readers.add_argument(
        "--trusted-proxy-header",
        metavar="NAME",
        help="the reader is who an authenticating proxy (oauth2-proxy) names in this header; "
        "a request without it is refused (only the proxy may reach this server then)",
    )


def _serve(args: argparse.Namespace) -> ExitCode:
    """Open the store (or endpoint) first, so that one that cannot be read fails at once;
    an embedded store that does not exist yet is waited for."""
    with needs_extra("serve", "serve"):
        from otel_prov.view._app import create_app
        from otel_prov.view._server import serve
    try:
        tls = TlsFiles.of(args.tls_cert, args.tls_key, args.client_ca)
        token = token_text(args.token_file)
        if token is not None:
            BearerToken(token)  # one word, not empty
        tenants = tenants_from(args.tenants)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if tenants is not None and (token is not None or tenant(args) is not None):
        raise UsageError("--tenants names the readers' tokens: no --token-file or --tenant")
    awaited = _awaited_store(args)
    app = create_app(
        lambda: backend(args),
        graph=base_graph(args)[1:-1],
        tenant=tenant(args),
        trace_links=trace_links(),
        query_timeout_s=args.query_timeout,
        allow_service=args.allow_service,
        bound_host=args.host,
        allowed_hosts=args.allowed_host,
        max_queries=args.max_queries,
        reader_tokens=None if token is None else {token_digest(token): "token"},
        proxy_header=args.trusted_proxy_header,
        tenants=tenants,
        awaited_store=awaited,
    )
    if awaited is not None:
        say(f"no store at {awaited} yet: its runs show once an agent has written it")
    if not is_loopback(args.host):
        if token is None and tenants is None and args.trusted_proxy_header is None:
            say(
                f"warning: listening on {args.host}, not this machine only: anyone who can "
                "reach it reads all the provenance in the store (there is no login: give "
                "--token-file or --trusted-proxy-header)"
            )
        if tls is None:
            say(
                f"warning: listening on {args.host} without TLS: whoever is on the network "
                "path reads the pages as they pass (give --tls-cert and --tls-key)"
            )

    def announce(url: str) -> None:
        print(f"otel-prov serve: {url}", flush=True)

    if tenants is not None:
        reload_on_hangup(tenants)

    try:
        serve(app, args.host, args.port, announce=announce, tls=tls)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from exc
    return ExitCode.OK


def _awaited_store(args: argparse.Namespace) -> Path | None:
    """The embedded store to wait for, when it does not exist yet (``serve`` started
    before any agent ran); None when the store (or the endpoint) is there to read.  A
    store that is there but cannot be read fails here, as ``--store`` and ``--endpoint``
    together do."""
    try:
        backend(args)
    except StoreUnavailableError:
        awaited = store_path(args.store)
        if awaited.exists():
            raise
        return awaited
    return None


COMMANDS = (
    Command(
        "serve",
        "otel-prov serve --port 8080",
        _serve,
        _arguments,
    ),
)
