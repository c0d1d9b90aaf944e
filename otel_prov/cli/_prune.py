"""``otel-prov prune``: remove the runs that ended before a cutoff (``--before DATE``, or
``--keep DURATION`` back from now), leaving a signed tombstone per removed range of each
writer's chain, so that ``verify`` reports the gap as pruned by policy, not deleted."""

from __future__ import annotations

import argparse
import re
import sys
import time
from datetime import datetime, timedelta, timezone

from otel_prov.cli._exit import ExitCode
from otel_prov.cli._messages import say
from otel_prov.cli._parser import Command, Where, add_format, moment
from otel_prov.cli._render_report import render_prune
from otel_prov.cli._shared import chain_writer, destination, graph
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.read._retention import (
    PruneError,
    finish,
    plan_prune,
    prune,
    unfinished,
    utc_text,
)

__all__ = ["COMMANDS", "duration"]

_SHORT = re.compile(r"(\d+)([wdhms])")
_ISO = re.compile(r"P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?")
_MONTHS = re.compile(r"\d\s*(mo|mon|months?|y|yr|years?)$|^p[^t]*[ym]", re.IGNORECASE)
_UNITS = {"w": "weeks", "d": "days", "h": "hours", "m": "minutes", "s": "seconds"}


def duration(value: str) -> timedelta:
    """``--keep``: ``180d`` (``w``, ``d``, ``h``, ``m``, ``s``: one number and unit), or an
    ISO 8601 duration of weeks, days and time (``P180D``, ``P26W``, ``PT12H``).  Months
    and years are refused: their length varies, and a retention duty must not shrink by a
    day in February."""
    text = value.strip()
    short = _SHORT.fullmatch(text.lower())
    iso = _ISO.fullmatch(text.upper()) if text.upper() not in ("P", "PT") else None
    try:
        if short is not None:
            length = timedelta(**{_UNITS[short.group(2)]: int(short.group(1))})
        elif iso is not None and not text.upper().endswith("T"):
            weeks, days, hours, minutes, seconds = (int(part or 0) for part in iso.groups())
            length = timedelta(
                weeks=weeks, days=days, hours=hours, minutes=minutes, seconds=seconds
            )
        else:
            length = None
        if length is not None:
            datetime.now(timezone.utc) - length  # a cutoff before year 1 is no cutoff
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{value!r}: a duration that long is no cutoff") from None
    if length is None:
        hint = (
            "months and years vary in length: give days (six months at least: 184d)"
            if _MONTHS.search(text)
            else "write it as 180d or P180D (weeks, days, hours, minutes, seconds)"
        )
        raise argparse.ArgumentTypeError(f"{value!r} is not a duration: {hint}")
    if length <= timedelta(0):
        raise argparse.ArgumentTypeError(f"{value!r}: a duration to keep must be above zero")
    return length


def iso_duration(length: timedelta) -> str:
    """``length`` as an ISO 8601 duration of days and time (``P184D``, ``P1DT12H``)."""
    hours, rest = divmod(length.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    clock = "".join(
        f"{number}{unit}"
        for number, unit in ((hours, "H"), (minutes, "M"), (seconds, "S"))
        if number
    )
    return f"P{f'{length.days}D' if length.days else ''}{f'T{clock}' if clock else ''}"


def _arguments(sub: argparse.ArgumentParser) -> None:
    when = sub.add_mutually_exclusive_group(required=True)
    when.add_argument(
        "--before",
        type=moment,
        metavar="DATE",
        help="remove the runs that ended before this instant (2025-11-30, "
        "2025-11-30T09:00; UTC unless it names a zone)",
    )
    when.add_argument(
        "--keep",
        type=duration,
        metavar="DURATION",
        help="remove the runs that ended more than this long ago: 184d or P184D (EU AI "
        "Act Art. 19's six months at least); weeks, days, hours, minutes, seconds",
    )
    sub.add_argument(
        "--dry-run", action="store_true", help="say what would be removed, remove nothing"
    )
    add_format(sub, text="one line of what was pruned", json="the cutoff, runs and ranges")


def _prune(args: argparse.Namespace) -> ExitCode:
    """Finish what an interrupted prune left, plan from the store, then (unless
    ``--dry-run``) tombstones and intent first, runs after."""
    now = datetime.now(timezone.utc)
    if args.keep is not None:
        cutoff, policy = now - args.keep, f"keep {iso_duration(args.keep)}"
    else:
        cutoff, policy = args.before, f"before {utc_text(args.before)}"
    named = graph(args)
    chain = None if args.dry_run else chain_writer()
    opened = destination(args)
    try:
        left = unfinished(opened.reader, named)
        if chain is not None:
            finish(left, backend=opened.reader, exporter=opened.exporter, graph=named)
        plan = plan_prune(opened.reader, named, cutoff=cutoff, policy=policy, now=now)
        if chain is None or not plan.runs:
            tombstones: list[str] = []
        else:
            pipeline = WritePipeline.from_settings(
                opened.exporter, chain=chain, graph=named, stream=False
            )
            tombstones = prune(plan, pipeline=pipeline, now_ns=time.time_ns())
    except PruneError as exc:
        say(str(exc))
        return ExitCode.STORE_ERROR
    finally:
        opened.exporter.shutdown()
    sys.stdout.write(render_prune(plan, tombstones, args.dry_run, args.format, left))
    return ExitCode.OK


COMMANDS = (
    Command(
        "prune",
        "otel-prov prune --keep 184d --dry-run",
        _prune,
        _arguments,
        where=Where.WRITES,
    ),
)
