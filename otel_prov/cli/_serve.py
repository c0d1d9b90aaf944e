"""``otel-prov serve``: the read-only web view, until interrupted."""

from __future__ import annotations

import argparse

from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._parser import Command, port, seconds
from otel_prov.cli._shared import backend, graph, say, trace_links
from otel_prov.view import create_app
from otel_prov.view._server import is_loopback, serve

__all__ = ["COMMANDS"]


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (127.0.0.1: this machine only; any other is warned about)",
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


def _serve(args: argparse.Namespace) -> ExitCode:
    """Open the store (or endpoint) first, so that one that cannot be read fails at once."""
    named = graph(args)[1:-1]
    backend(args)  # --store and --endpoint together are refused before anything opens
    app = create_app(
        lambda: backend(args),
        graph=named,
        trace_links=trace_links(),
        query_timeout_s=args.query_timeout,
    )
    if not is_loopback(args.host):
        say(
            f"warning: listening on {args.host}, not this machine only: anyone who can reach "
            "it reads all the provenance in the store (there is no login)"
        )

    def announce(url: str) -> None:
        print(f"otel-prov serve: {url}", flush=True)

    try:
        serve(app, args.host, args.port, announce=announce)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from exc
    return ExitCode.OK


COMMANDS = (
    Command(
        "serve",
        "a read-only web view: sessions (filtered, paged), each session with its timeline "
        "and RDF downloads, two side by side, and a SPARQL box; prints its URL",
        "otel-prov serve --port 8080",
        _serve,
        _arguments,
    ),
)
