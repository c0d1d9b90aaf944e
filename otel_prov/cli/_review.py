"""``otel-prov review``: a person revises a goal, hypothesis or decision of a stored run.

The original stays as the run recorded and sealed it; the revision is a new entity,
``prov:wasRevisionOf`` it and attributed to the reviewer, sealed in a bundle of its own
(:mod:`otel_prov.ingest._review`).
"""

from __future__ import annotations

import argparse
import json
import time

from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import no_session, say
from otel_prov.cli._parser import Command, Where, add_format, finite
from otel_prov.cli._shared import chain_writer, destination, graph
from otel_prov.ingest._review import review_node
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.read._decisions import find_reasoning
from otel_prov.read._reader import ProvenanceReader

__all__ = ["COMMANDS"]


def _review_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", metavar="ID", help="the run (session IRI, trace or conversation id)")
    sub.add_argument(
        "--node", required=True, metavar="NODE", help="what is revised: its id in the run, or IRI"
    )
    sub.add_argument("--by", required=True, metavar="PERSON", help="the reviewer's id")
    sub.add_argument("--name", metavar="NAME", help="the reviewer's name")
    sub.add_argument("--text", required=True, metavar="T", help="what it says now")
    sub.add_argument("--confidence", type=finite, metavar="X", help="from 0 to 1")
    sub.add_argument("--reason", metavar="T", help="why the reviewer revised it")
    add_format(sub, text="one line", json="the run, the original and its revision")


def _review(args: argparse.Namespace) -> ExitCode:
    """One revision, written where ``configure()`` would write, the entry of a chain of
    its own (signed with ``OTEL_PROV_SIGNING_KEY``)."""
    if not args.by.strip() or not args.text.strip():
        raise UsageError("--by must name the reviewer and --text say what the node says now")
    chain = chain_writer()  # an unusable signing key is said first, before any lookup
    opened = destination(args)
    try:
        named = graph(args)
        reader = ProvenanceReader(opened.reader, graph=named[1:-1])
        matches = reader.find(args.id)
        if not matches:
            say(no_session(args.id))
            return ExitCode.NOTHING_FOUND
        if len(matches) > 1:
            raise UsageError(
                f"{args.id!r} names {len(matches)} runs; give one session IRI: "
                + ", ".join(matches)
            )
        reviewed = find_reasoning(opened.reader, named, matches[0], args.node)
        if reviewed is None:
            say(f"run {matches[0]} has no goal, hypothesis or decision {args.node!r}")
            return ExitCode.NOTHING_FOUND
        pipeline = WritePipeline.from_settings(
            opened.exporter, chain=chain, graph=named, stream=False
        )
        revised = review_node(
            matches[0],
            reviewed,
            reviewer=args.by,
            reviewer_name=args.name,
            text=args.text,
            confidence=args.confidence,
            reason=args.reason,
            pipeline=pipeline,
            now_ns=time.time_ns(),
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    finally:
        opened.exporter.shutdown()
    if not revised.stored:
        say("the review was not stored (see the log above)")
        return ExitCode.STORE_ERROR
    if args.format == "json":
        fields = ("session", "original", "revision")
        print(json.dumps({name: getattr(revised, name) for name in fields}))
    else:
        print(f"revised {revised.original} in {revised.session} ({revised.revision})")
    return ExitCode.OK


COMMANDS = (
    Command(
        "review",
        'otel-prov review refund-1042 --node d1 --by alice@example.com --text "Refund half"',
        _review,
        _review_arguments,
        where=Where.WRITES,
    ),
)
