"""``otel-prov verify``: are the stored sessions unchanged since they were sealed, and is
every writer's chain whole?  ``otel-prov keygen``: the key pair writers sign with."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from otel_prov._signing import generate_key_pair
from otel_prov.cli._audit import trusted_keys, verify_package
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import no_session, say
from otel_prov.cli._parser import Command, Where, add_format
from otel_prov.cli._render_report import render_checks
from otel_prov.cli._shared import read_checkpoints, reader

__all__ = ["COMMANDS"]

UNTRUSTED_NOTE = (
    "no --trust key given: the hashes detect accidental change and removed runs, not a "
    "forger who rewrites the store (give --trust signing.pub to check signatures)"
)


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "id", metavar="ID", nargs="?", help="one session (IRI, trace or conversation id)"
    )
    sub.add_argument("--all", action="store_true", help="every session (the default without ID)")
    sub.add_argument(
        "--trust",
        action="append",
        default=[],
        type=Path,
        metavar="PUB",
        help="a public key (signing.pub) whose signature every entry must carry; repeatable",
    )
    sub.add_argument(
        "--checkpoints",
        type=Path,
        metavar="FILE",
        help="a checkpoint file (OTEL_PROV_CHECKPOINT_FILE) the chains must reach",
    )
    sub.add_argument(
        "--package",
        type=Path,
        metavar="FILE",
        help="check an audit package (otel-prov audit-export) instead of a store: no store is read",
    )
    add_format(sub, text="a line per session and the totals", json="one object per session")


def _verify(args: argparse.Namespace) -> ExitCode:
    if args.id is not None and args.all:
        raise UsageError("give an ID or --all, not both")
    trusted = trusted_keys(args.trust)
    if args.package is not None:
        if args.id is not None or args.all or args.checkpoints is not None:
            raise UsageError("--package checks the package alone: no ID, --all or --checkpoints")
        return verify_package(args.package, trusted, args.format)
    checkpoints = read_checkpoints(args.checkpoints)
    checks = reader(args).verify(args.id, trusted=trusted, checkpoints=checkpoints)
    if not checks:
        say("no session to verify" if args.id is None else no_session(args.id))
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_checks(checks, args.format))
    if not trusted:
        say(UNTRUSTED_NOTE)
    return ExitCode.OK if all(c.ok for c in checks) else ExitCode.CHECK_FAILED


def _keygen_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--out",
        type=Path,
        default=Path(".otel-prov"),
        metavar="DIR",
        help="where signing.key (mode 0600) and signing.pub go (default: .otel-prov)",
    )


def _keygen(args: argparse.Namespace) -> ExitCode:
    """A new Ed25519 key pair; an existing key is never replaced."""
    try:
        private, public = generate_key_pair(args.out)
    except FileExistsError as exc:
        raise UsageError(f"{exc} exists: keygen never replaces a key") from exc
    except OSError as exc:
        raise UsageError(f"cannot write the key pair in {args.out}: {exc.strerror or exc}") from exc
    print(f"private key: {private} (keep it secret; OTEL_PROV_SIGNING_KEY={private})")
    print(f"public key:  {public} (for otel-prov verify --trust {public})")
    return ExitCode.OK


COMMANDS = (
    Command(
        "verify",
        "otel-prov verify demo-conversation",
        _verify,
        _arguments,
    ),
    Command(
        "keygen",
        "otel-prov keygen --out .otel-prov",
        _keygen,
        _keygen_arguments,
        where=Where.NOWHERE,
    ),
)
