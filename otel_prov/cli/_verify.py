"""``otel-prov verify``: are the stored sessions unchanged since they were sealed?"""

from __future__ import annotations

import argparse
import sys

from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._parser import Command, add_format
from otel_prov.cli._render_report import render_checks
from otel_prov.cli._shared import no_session, reader, say

__all__ = ["COMMANDS"]


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "id", metavar="ID", nargs="?", help="one session (IRI, trace or conversation id)"
    )
    sub.add_argument("--all", action="store_true", help="every session (the default without ID)")
    add_format(sub, text="a line per session and the totals", json="one object per session")


def _verify(args: argparse.Namespace) -> ExitCode:
    if args.id is not None and args.all:
        raise UsageError("give an ID or --all, not both")
    checks = reader(args).verify(args.id)
    if not checks:
        say("no session to verify" if args.id is None else no_session(args.id))
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_checks(checks, args.format))
    return ExitCode.OK if all(c.ok for c in checks) else ExitCode.CHECK_FAILED


COMMANDS = (
    Command(
        "verify",
        "check that stored sessions are unchanged since export",
        "otel-prov verify demo-conversation",
        _verify,
        _arguments,
    ),
)
