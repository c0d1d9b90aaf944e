"""``otel-prov``: run the demo, list sessions, show one, query provenance with SPARQL,
import OTLP JSON trace files, receive OTLP, serve the web view.

Each command lives in a module of its own (or of its group), which declares it as a
:class:`~otel_prov.cli._parser.Command`: its flags, its example and its handler, which
parses, calls the pipeline and writes what the renderers (``_render*``) make of the
answer.  This module puts them in one table and dispatches; the exit status is an
:class:`~otel_prov.cli._exit.ExitCode`.  Errors are one line on stderr; data goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from otel_prov._extras import MissingExtraError
from otel_prov.cli import (
    _audit,
    _demo,
    _import,
    _prune,
    _query,
    _receive,
    _review,
    _serve,
    _sessions,
    _status,
    _verify,
)
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._parser import Command, Where, build_parser
from otel_prov.cli._shared import log_one_line, say
from otel_prov.read._backend import StoreUnavailableError

__all__ = ["COMMANDS", "main", "parser"]

COMMANDS: dict[str, Command] = {
    command.name: command
    for module in (
        _demo,
        _sessions,
        _query,
        _import,
        _review,
        _receive,
        _serve,
        _verify,
        _prune,
        _audit,
        _status,
    )
    for command in module.COMMANDS
}
"""Every command by name, in the order ``otel-prov --help`` lists them."""


def parser() -> argparse.ArgumentParser:
    return build_parser(list(COMMANDS.values()))


def main(argv: Sequence[str] | None = None) -> int:
    parsing = parser()
    args = parsing.parse_args(argv)
    if args.command is None:
        parsing.print_help(sys.stderr)
        return ExitCode.USAGE_ERROR
    command = COMMANDS[args.command]
    log = None if command.logs_itself else log_one_line()
    try:
        code = command.run(args)
        writes = command.where in (Where.WRITES, Where.STORE)
        if code is ExitCode.OK and writes and log is not None and log.errors:
            return ExitCode.STORE_ERROR  # the log above says what was not stored
        return code
    except (UsageError, MissingExtraError) as exc:
        say(str(exc))
        return ExitCode.USAGE_ERROR
    except StoreUnavailableError as exc:
        say(str(exc))
        return ExitCode.STORE_ERROR
    except BrokenPipeError:
        return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
