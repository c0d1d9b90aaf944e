"""``otel-prov audit-export``: the runs an auditor asks for, with all that proves them, in
one file; and ``verify --package``, which checks that file with no store at all
(``otel_prov.read._package`` builds and checks it)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path

from otel_prov._files import SECRET_MODE, write_file
from otel_prov._signing import SigningKeyError, public_key_id
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import no_session, say
from otel_prov.cli._parser import Command
from otel_prov.cli._render_report import render_checks
from otel_prov.cli._shared import backend, graph, read_checkpoints, signer
from otel_prov.read._listing import find_sessions
from otel_prov.read._package import PackageError, check_package, export_package
from otel_prov.read._verify import verify_rows_query

__all__ = ["COMMANDS", "trusted_keys", "verify_package"]

PACKAGE_UNTRUSTED_NOTE = (
    "no --trust key given: the package's hashes detect accidental change and removed "
    "entries, not a forger who rebuilt it (give --trust signing.pub to check signatures)"
)
MANIFEST_UNSIGNED_NOTE = (
    "the package's manifest is unsigned: whoever holds the file can drop a run from it and "
    "from the manifest unseen (audit-export signs it with OTEL_PROV_SIGNING_KEY)"
)


def trusted_keys(paths: list[Path]) -> list[str]:
    """The key ids of ``--trust`` files; a file that is no public key is a usage error."""
    try:
        return [public_key_id(path) for path in paths]
    except SigningKeyError as exc:
        raise UsageError(str(exc)) from exc


def verify_package(path: Path, trusted: list[str], fmt: str) -> ExitCode:
    """``verify --package FILE``: the package's checks, written as ``verify`` writes a
    store's; nothing but the file is read."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        checked = check_package(data, trusted)
    except PackageError as exc:
        raise UsageError(f"{path}: {exc}") from exc
    checks = checked.checks
    sys.stdout.write(render_checks(checks, fmt))
    if not trusted:
        say(PACKAGE_UNTRUSTED_NOTE)
        if not checked.signed_by:
            say(MANIFEST_UNSIGNED_NOTE)
    return ExitCode.OK if checks and all(c.ok for c in checks) else ExitCode.CHECK_FAILED


def _arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "id",
        metavar="ID",
        nargs="*",
        help="the runs to export (session IRI, trace or conversation id; each may match several)",
    )
    sub.add_argument("--all", action="store_true", help="every run of the graph")
    sub.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE",
        help="the zip to write (mode 0600: it holds the runs' content); never through a "
        "symbolic link",
    )
    sub.add_argument("--force", action="store_true", help="replace FILE if it exists")
    sub.add_argument(
        "--trust",
        action="append",
        default=[],
        type=Path,
        metavar="PUB",
        help="a public key (signing.pub) to put in the package beside those that signed "
        "its entries; repeatable",
    )
    sub.add_argument(
        "--checkpoints",
        type=Path,
        metavar="FILE",
        help="a checkpoint file (OTEL_PROV_CHECKPOINT_FILE) whose checkpoints go in with "
        "the store's",
    )


def _export(args: argparse.Namespace) -> ExitCode:
    if bool(args.id) == args.all:
        raise UsageError("give the IDs of the runs to export, or --all")
    keys = trusted_keys(args.trust)
    kept = read_checkpoints(args.checkpoints)
    exporter = signer()
    where, named = backend(args), graph(args)
    if args.all:
        runs = sorted({row["session"] or "" for row in where.query(verify_rows_query(named)).rows})
    else:
        runs = []
        for ident in args.id:
            found = find_sessions(where, named, ident)
            if not found:
                say(no_session(ident))
                return ExitCode.NOTHING_FOUND
            runs += found
    if not runs:
        say("no run to export")
        return ExitCode.NOTHING_FOUND
    created = datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
    data, counts = export_package(
        where, named, runs, kept=kept, keys=keys, created=created, signer=exporter
    )
    try:
        write_file(args.out, data, mode=SECRET_MODE, replace=args.force)
    except FileExistsError:
        raise UsageError(f"{args.out} exists: give --force to replace it") from None
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(
        f"wrote {args.out}: {counts['runs']} run(s), {counts['entries']} chain entries, "
        f"{counts['checkpoints']} checkpoint(s), {counts['tombstones']} tombstone(s); "
        + (f"manifest signed by {exporter.key_id}" if exporter else "manifest unsigned")
    )
    return ExitCode.OK


COMMANDS = (
    Command(
        "audit-export",
        "otel-prov audit-export demo-conversation --out audit.zip",
        _export,
        _arguments,
    ),
)
