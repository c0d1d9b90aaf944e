"""``otel-prov status`` and ``flush``: what waits on disk for a store, and storing it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.cli._exit import ExitCode
from otel_prov.cli._messages import say
from otel_prov.cli._parser import Command, Where, add_format
from otel_prov.cli._shared import open_destination
from otel_prov.environment_variables import OTEL_PROV_SPARQL_UPDATE_ENDPOINT
from otel_prov.read._delivery import delivery_status, render_status
from otel_prov.setup._destination import (
    parked_batches,
    spool_dir_from_settings,
    store_path,
    update_endpoint_from_settings,
)

__all__ = ["COMMANDS"]


def _status_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--spool-dir",
        type=Path,
        help="the exporters' spool (default: $OTEL_PROV_SPOOL_DIR or .otel-prov/spool)",
    )
    add_format(sub, text="for people", json="the exporters' reports and the spool's counts")


def _status(args: argparse.Namespace) -> ExitCode:
    spool = spool_dir_from_settings(args.spool_dir)
    parked, parked_dir = parked_batches()
    if parked:
        say(f"{parked} batch(es) parked in {parked_dir}, not in the embedded store yet")
    if not spool.is_dir():
        # Nothing waits for a SPARQL store: the embedded store takes batches directly
        # (or they are parked beside it, said above); a SPARQL exporter makes its spool
        # when it starts.
        endpoint = env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)
        print(
            f"no spool at {spool}: nothing waits for delivery to a SPARQL store ("
            + (
                "the SPARQL exporter has not run here"
                if endpoint
                else "provenance goes to the embedded store directly, with no spool"
            )
            + ")"
        )
        return ExitCode.CHECK_FAILED if parked else ExitCode.OK
    report = {**delivery_status(spool), "parked_batches": parked}
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(render_status(report))
    waiting = report["spooled_batches"] or report["dead_letters"] or parked
    return ExitCode.CHECK_FAILED if waiting else ExitCode.OK


def _flush(args: argparse.Namespace) -> ExitCode:
    """Have the exporter ``configure()`` would build store what waits on disk: what waits
    beside the embedded store, or in the spool (a spool another process holds included:
    that process sends it).  An embedded store that is not there, with nothing parked for
    it, is not made."""
    if (
        update_endpoint_from_settings(store=args.store) is None
        and not store_path(args.store).is_dir()
        and not parked_batches(args.store)[0]
    ):
        print("0 batch(es) stored, 0 waiting")
        return ExitCode.OK
    opened = open_destination(store=args.store, graph=args.graph)
    spool = opened.spool

    def waiting() -> int:
        if spool is None:
            return opened.exporter.waiting()
        return int(delivery_status(spool)["spooled_batches"])

    try:
        before = waiting()
        opened.exporter.force_flush()
    finally:
        opened.exporter.shutdown()
    left = waiting()
    print(f"{max(before - left, 0)} batch(es) stored, {left} waiting")
    if left:
        say(
            "some batches still wait: another process holds the store or the spool (it "
            "stores them itself), or the store does not accept them (otel-prov status)"
        )
        return ExitCode.CHECK_FAILED
    return ExitCode.OK


COMMANDS = (
    Command(
        "status",
        "otel-prov status --format json",
        _status,
        _status_arguments,
        where=Where.NOWHERE,
    ),
    Command(
        "flush",
        "otel-prov flush --store .otel-prov/store",
        _flush,
        where=Where.STORE,
    ),
)
