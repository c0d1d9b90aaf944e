"""``otel-prov query``: the user's own SPARQL, checked (no updates) and run on the store."""

from __future__ import annotations

import argparse
import sys

from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._parser import Command, add_format, allow_service
from otel_prov.cli._render_query import render_query_result
from otel_prov.cli._shared import backend, confinement
from otel_prov.read._user_query import run_user_query

__all__ = ["COMMANDS"]


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("sparql", metavar="SPARQL", help="the query, or - to read it from stdin")
    allow_service(sub)
    add_format(
        sub,
        table="aligned columns (Turtle for CONSTRUCT and DESCRIBE)",
        json="one object per row (JSON-LD for CONSTRUCT and DESCRIBE)",
        csv="a header and one line per row (rows only)",
    )


def _query(args: argparse.Namespace) -> ExitCode:
    reads = confinement(args)
    read = backend(args)
    text = sys.stdin.read() if args.sparql == "-" else args.sparql
    try:
        result = run_user_query(read, text, confinement=reads, allow_service=args.allow_service)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(render_query_result(result, args.format))
    empty = (result.kind == "select" and not result.rows) or (
        result.kind == "graph" and not result.triples
    )
    return ExitCode.NOTHING_FOUND if empty or result.boolean is False else ExitCode.OK


COMMANDS = (
    Command(
        "query",
        "otel-prov query 'SELECT ?tool WHERE { ?call a oprov:ToolCall ; oprov:toolName ?tool }'",
        _query,
        _arguments,
    ),
)
