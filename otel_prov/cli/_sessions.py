"""The commands that read runs: ``sessions`` lists them, ``show`` shows one, ``why`` draws
what an answer rests on, ``diff`` compares two, ``summary`` tells one in sentences."""

from __future__ import annotations

import argparse
import json
import sys

from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._messages import no_session, say
from otel_prov.cli._parser import Command, add_format, at_least_one, moment
from otel_prov.cli._render import render_session_list, render_views
from otel_prov.cli._render_diff import render_diff
from otel_prov.cli._render_rdf import GRAPH_FORMATS, render_graphs
from otel_prov.cli._render_why import render_why
from otel_prov.cli._shared import backend, graph, reader, trace_links
from otel_prov.cli._terminal import printable
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.read._reader import ProvenanceReader
from otel_prov.read._sparql import STATUSES
from otel_prov.setup._destination import parked_batches

__all__ = ["COMMANDS"]


def _sessions_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "--limit", type=at_least_one, default=20, metavar="N", help="at most N sessions (20)"
    )
    sub.add_argument("--agent", metavar="NAME", help="runs of this agent only")
    sub.add_argument("--service", metavar="NAME", help="runs of this service.name only")
    sub.add_argument("--status", choices=STATUSES, help="runs that settled so")
    for bound, meaning in (("since", "at or after"), ("until", "before")):
        sub.add_argument(
            f"--{bound}",
            type=moment,
            metavar="WHEN",
            help=f"runs started {meaning} WHEN (2025-11-30 or 2025-11-30T09:00; UTC "
            "unless it names a zone)",
        )
    sub.add_argument(
        "--search", metavar="TEXT", help="runs whose question or answer holds TEXT (any case)"
    )
    sub.add_argument(
        "--approved-by", metavar="PERSON", help="runs in which PERSON (an id) allowed a call"
    )
    sub.add_argument(
        "--rejected", action="store_true", help="runs in which a person rejected a call"
    )
    sub.add_argument(
        "--cursor",
        metavar="CURSOR",
        help="the page after the one that said to pass this cursor (on stderr)",
    )
    add_format(sub, table="aligned columns", json="one object per session")


def _sessions(args: argparse.Namespace) -> ExitCode:
    read = backend(args)
    try:
        page = ProvenanceReader(read, graph=graph(args)[1:-1]).sessions(
            agent=args.agent,
            service=args.service,
            status=args.status,
            since=args.since,
            until=args.until,
            text=args.search,
            approved_by=args.approved_by,
            rejected=args.rejected,
            limit=args.limit,
            cursor=args.cursor,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    found = list(page.sessions)
    sys.stdout.write(render_session_list(found, args.format, trace_links=trace_links()))
    if page.next_cursor is not None:
        say(f"more runs: add --cursor {page.next_cursor}")
    if isinstance(read, EmbeddedBackend):
        count, where = parked_batches(read.path)
        if count:
            say(f"{count} batch(es) parked in {where}, not in the store yet (otel-prov flush)")
    return ExitCode.OK if found else ExitCode.NOTHING_FOUND


def _show_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", metavar="ID", help="session IRI, trace id or conversation id")
    add_format(
        sub,
        text="for people",
        json="the session as a JSON object (a list, one per match)",
        mermaid="a flowchart (several matches: Markdown, one diagram per session)",
        html="one self-contained page to share",
        turtle="its PROV-O triples",
        jsonld="its triples as expanded JSON-LD",
        **{
            "prov-json": "W3C PROV-JSON (needs otel-prov[prov])",
            "provn": "W3C PROV-N (needs otel-prov[prov]; refuses control characters)",
        },
    )
    sub.add_argument(
        "--full",
        action="store_true",
        help="read values kept in the blob store back in full (checked against their hash)",
    )


def _show(args: argparse.Namespace) -> ExitCode:
    read = reader(args)
    matches = read.find(args.id)
    if not matches:
        say(no_session(args.id))
        return ExitCode.NOTHING_FOUND
    if len(matches) > 1:
        # On stderr, so that the output stays one document of the chosen format.
        say(f"{len(matches)} sessions match {args.id!r}; showing each, oldest first")
    if args.format in GRAPH_FORMATS:
        sys.stdout.write(render_graphs([read.triples(m) for m in matches], args.format))
    else:
        views = [read.session(m, full=args.full) for m in matches]
        why, traces = None, None
        if args.format == "html":
            why = {m: read.why(m).as_json() for m in matches}
            traces = {view.trace_id: read.trace_spans(view.trace_id) for view in views}
        sys.stdout.write(
            render_views(views, args.format, trace_links=trace_links(), why=why, traces=traces)
        )
    return ExitCode.OK


def _why_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument(
        "id",
        metavar="ID",
        help="session IRI, trace id or conversation id (its newest run), or any activity "
        "or entity IRI",
    )
    add_format(
        sub,
        text="a block per node and the nodes it rests on",
        json='{"root", "nodes", "edges"}',
        mermaid="a flowchart",
        dot="a Graphviz digraph (dot -Tsvg)",
    )


def _why(args: argparse.Namespace) -> ExitCode:
    try:
        drawn = reader(args).why(args.id)
    except LookupError:
        say(f"no session, activity or entity {args.id!r}")
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_why(drawn, args.format))
    return ExitCode.OK


def _diff_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("a", metavar="A", help="the first run: session IRI, trace or conversation id")
    sub.add_argument("b", metavar="B", help="the run to compare it with")
    add_format(
        sub,
        text="the first divergence and every change",
        json='{"first_divergence": {"iteration", "field", "a", "b"} or null, ...}',
    )


def _diff(args: argparse.Namespace) -> ExitCode:
    try:
        compared = reader(args).diff(args.a, args.b)
    except LookupError as exc:
        say(str(exc))
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_diff(compared, args.format))
    return ExitCode.OK if compared.same else ExitCode.CHECK_FAILED


def _summary_arguments(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("id", metavar="ID", help="session IRI, trace id or conversation id")
    add_format(
        sub,
        text="one sentence a line",
        json='{"session", "sentences": [{"text", "refs": [the why nodes it names]}]}',
    )


def _summary(args: argparse.Namespace) -> ExitCode:
    try:
        told = reader(args).summary(args.id)
    except LookupError as exc:
        say(str(exc))
        return ExitCode.NOTHING_FOUND
    if args.format == "json":
        print(json.dumps(told.as_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(printable(told.text()))
    return ExitCode.OK


COMMANDS = (
    Command(
        "sessions",
        "otel-prov sessions --status error --since 2025-11-30 --limit 5 --format json",
        _sessions,
        _sessions_arguments,
    ),
    Command(
        "show",
        "otel-prov show demo-conversation --format mermaid",
        _show,
        _show_arguments,
    ),
    Command(
        "why",
        "otel-prov why demo-conversation --format mermaid",
        _why,
        _why_arguments,
    ),
    Command(
        "diff",
        "otel-prov diff RUN_BEFORE RUN_AFTER --format json",
        _diff,
        _diff_arguments,
    ),
    Command(
        "summary",
        "otel-prov summary demo-conversation",
        _summary,
        _summary_arguments,
    ),
)
