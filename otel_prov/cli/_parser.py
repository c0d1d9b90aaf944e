"""The parser pieces every ``otel-prov`` command shares, and the parser made of them.

The table of commands (``_commands``) lists each one as :class:`Listed`: its name, its
one-sentence help and the module that declares it.  That module describes the command as
a :class:`Command`: an example (the epilog), the destination flags it takes
(:class:`Where`), a function adding its own flags, and its handler.
:func:`build_parser` turns them into one ``argparse`` parser, so that every command says
the same things the same way: where it reads or writes, the graph, ``--format`` with
each choice described.  Only the commands it is given in full get their flags: the
others are listed by their help alone, so that ``otel-prov --help`` (and any one
command) loads no module but its own.

Light on purpose, as ``otel-prov --help`` loads it.
"""

from __future__ import annotations

import argparse
import enum
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from otel_prov._version import __version__
from otel_prov.cli._exit import ExitCode
from otel_prov.exporters._base import DEFAULT_GRAPH, graph_term

__all__ = [
    "Command",
    "Handler",
    "Listed",
    "Where",
    "add_format",
    "at_least_one",
    "build_parser",
    "finite",
    "moment",
    "port",
    "seconds",
]

Handler = Callable[[argparse.Namespace], ExitCode]
"""Runs a command on its parsed flags; errors it cannot handle are ``UsageError`` or
``StoreUnavailableError`` (one line on stderr, exit 2)."""


class Where(enum.Enum):
    """The destination flags a command takes."""

    NOWHERE = "nowhere"
    """None: the command reads what the exporters leave on disk (``status``)."""
    STORE = "store"
    """``--store`` and ``--graph``: the embedded store, unless the settings name a SPARQL
    store (``demo``, ``flush``)."""
    READS = "reads"
    """``--store`` or ``--endpoint`` (a query endpoint), and ``--graph``."""
    WRITES = "writes"
    """As ``READS``, and ``--endpoint-update``: where it writes, ``--endpoint`` being where
    what is stored is read back."""


@dataclass(frozen=True)
class Listed:
    """One ``otel-prov`` command as the table lists it, without loading its module."""

    name: str
    help: str
    """One sentence: the command's help in the list and its description."""
    module: str
    """The module of ``otel_prov.cli`` that declares it (its ``COMMANDS``)."""


@dataclass(frozen=True)
class Command:
    """One ``otel-prov`` command, as its module declares it."""

    name: str
    example: str
    """A command line that works, shown as the epilog."""
    run: Handler
    arguments: Callable[[argparse.ArgumentParser], None] | None = None
    """Adds the command's own flags (``--format`` described with :func:`formats`)."""
    where: Where = Where.READS
    logs_itself: bool = False
    """The command sets up logging of its own (``receive``: a service's log); the others
    show what the pipeline logs one line each (:func:`~otel_prov.cli._messages.log_one_line`)."""


def build_parser(
    listed: Sequence[Listed], commands: Mapping[str, Command]
) -> argparse.ArgumentParser:
    """Every command of ``listed``, those of ``commands`` (by name) with their flags."""
    parser = argparse.ArgumentParser(
        prog="otel-prov",
        description="Provenance of AI agents from OpenTelemetry spans, as W3C PROV-O.",
        epilog="Exit status: 0 done (found), 1 nothing found or a check failed, 2 usage or "
        "store error. 'otel-prov COMMAND --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"otel-prov {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for entry in listed:
        command = commands.get(entry.name)
        if command is None:
            subparsers.add_parser(entry.name, help=entry.help, description=entry.help)
            continue
        sub = subparsers.add_parser(
            entry.name,
            help=entry.help,
            description=entry.help,
            epilog=f"example: {command.example}",
        )
        _add_destination(sub, command.where)
        if command.arguments is not None:
            command.arguments(sub)
    return parser


def _add_destination(sub: argparse.ArgumentParser, where: Where) -> None:
    if where is Where.NOWHERE:
        return
    sub.add_argument(
        "--store",
        metavar="DIR",
        type=_store_directory,
        help="embedded store directory (default: $OTEL_PROV_STORE or .otel-prov/store)",
    )
    if where in (Where.READS, Where.WRITES):
        sub.add_argument(
            "--endpoint",
            metavar="URL",
            help="SPARQL query endpoint to read instead of a store (default: "
            "$OTEL_PROV_SPARQL_QUERY_ENDPOINT, else $OTEL_PROV_SPARQL_UPDATE_ENDPOINT with "
            "its last /update replaced by /query; headers from $OTEL_PROV_SPARQL_HEADERS; "
            "user:password@ in the URL is sent as basic auth)",
        )
    if where is Where.WRITES:
        sub.add_argument(
            "--endpoint-update",
            metavar="URL",
            help="SPARQL update endpoint to write to instead of a store (default: "
            "$OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is then where what is stored "
            "is read",
        )
    sub.add_argument(
        "--graph",
        metavar="IRI",
        type=_graph_iri,
        help=f"provenance graph IRI (default: $OTEL_PROV_GRAPH or {DEFAULT_GRAPH})",
    )
    sub.add_argument(
        "--tenant",
        metavar="NAME",
        help="the tenant whose graph (GRAPH/tenants/NAME) is written or read, and nothing "
        "else: a query sees that graph only (default: $OTEL_PROV_TENANT; unset: GRAPH)",
    )


def allow_service(sub: argparse.ArgumentParser) -> None:
    """A query may name these endpoints in SERVICE; none by default (the store would fetch)."""
    sub.add_argument(
        "--allow-service",
        action="append",
        default=[],
        metavar="URL",
        help="an endpoint a query may call with SERVICE (repeatable; none by default, since "
        "SERVICE makes the store send requests to any host it can reach)",
    )


def tls_arguments(sub: argparse.ArgumentParser, defaults: str = "") -> None:
    """``--tls-cert``, ``--tls-key`` and ``--client-ca`` of ``receive`` and ``serve``
    (read by :meth:`otel_prov._tls.TlsFiles.of`); ``defaults`` says where else they come
    from."""
    sub.add_argument(
        "--tls-cert",
        type=Path,
        metavar="FILE",
        help=f"PEM certificate (chain) to serve TLS with, only TLS then{defaults}",
    )
    sub.add_argument(
        "--tls-key", type=Path, metavar="FILE", help=f"PEM key of --tls-cert{defaults}"
    )
    sub.add_argument(
        "--client-ca",
        type=Path,
        metavar="FILE",
        help=f"mutual TLS: refuse clients without a certificate this CA signed{defaults}",
    )


def add_format(sub: argparse.ArgumentParser, /, **described: str) -> None:
    """``--format``: each choice and what it writes, the first being the default."""
    first, *_ = described
    sub.add_argument(
        "--format",
        choices=tuple(described),
        default=first,
        help="; ".join(
            f"{name}{' (default)' if name == first else ''}: {what}"
            for name, what in described.items()
        ),
    )


def _store_directory(value: str) -> Path:
    """``--store``: a directory, or a path where one can be made; a file is not a store."""
    path = Path(value)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{value} is a file, not a provenance store directory")
    return path


def _graph_iri(value: str) -> str:
    """``--graph``: checked here, so that the message names the flag."""
    try:
        graph_term(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc
    return value


def moment(value: str) -> datetime:
    # The read API (and all it loads) comes with a command that reads, not with the parser.
    from otel_prov.read._reader import parse_moment

    try:
        return parse_moment(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {value!r}")
    return number


def finite(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected a number, not {value!r}")
    return number


def port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, not {value!r}")
    return int(value)


def seconds(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = 0.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {value!r}")
    return number
