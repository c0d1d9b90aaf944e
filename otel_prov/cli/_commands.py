"""``otel-prov``: run the demo, list sessions, show one, query provenance with SPARQL,
import OTLP JSON trace files, receive OTLP, serve the web view.

This module parses the command line, calls the pipeline and writes what the renderers
(``_render*``) make of the answer.  Each command is a handler in :data:`COMMANDS`; the exit
status is an :class:`~otel_prov.cli._exit.ExitCode`.  Errors are one line on stderr; data
goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from otel_prov._extras import MissingExtraError, needs_extra
from otel_prov._settings import env_str, is_loopback
from otel_prov._version import __version__
from otel_prov.capture import _content
from otel_prov.cli._exit import ExitCode, UsageError
from otel_prov.cli._receive import (
    add_no_content_argument,
    add_receive_arguments,
    content_policy,
    receive,
)
from otel_prov.cli._render import VIEW_FORMATS, render_session_list, render_views
from otel_prov.cli._render_diff import DIFF_FORMATS, render_diff
from otel_prov.cli._render_query import QUERY_FORMATS, render_query_result
from otel_prov.cli._render_rdf import GRAPH_FORMATS, render_graphs
from otel_prov.cli._render_report import render_checks, render_import
from otel_prov.cli._render_why import WHY_FORMATS, render_why
from otel_prov.cli._terminal import printable
from otel_prov.environment_variables import (
    OTEL_PROV_GRAPH,
    OTEL_PROV_JAEGER_URL,
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
    OTEL_PROV_TEMPO_URL,
)
from otel_prov.exporters._base import DEFAULT_GRAPH, ExportResult, graph_term
from otel_prov.ingest._import import import_spans
from otel_prov.processing._price_file import prices_from_settings
from otel_prov.processing._processor import RecordPreparer
from otel_prov.prov._annotation import annotation_record
from otel_prov.prov._otlp_json import parse_otlp_json
from otel_prov.prov._rdf import SPARQL_PREFIXES
from otel_prov.prov._sealer import Sealer
from otel_prov.read._backend import (
    EmbeddedBackend,
    QueryBackend,
    StoreUnavailableError,
)
from otel_prov.read._delivery import delivery_status, render_status
from otel_prov.read._reader import ProvenanceReader, parse_moment
from otel_prov.read._sparql import STATUSES
from otel_prov.read._user_query import run_user_query
from otel_prov.setup._destination import (
    Destination,
    destination_from_settings,
    exporter_from_settings,
    parked_batches,
    reader_from_settings,
    spool_dir_from_settings,
    store_path,
)

__all__ = ["COMMANDS", "main"]

DEMO_QUERY = (
    SPARQL_PREFIXES
    + """
# What did the final answer rest on?  Each observation, with the tool call behind it.
SELECT ?tool ?callId ?observation WHERE {{ GRAPH {graph} {{
  ?answer a oprov:Answer ; prov:wasGeneratedBy {session} ; prov:wasDerivedFrom ?obs .
  ?obs a oprov:Observation ; prov:value ?observation ; prov:wasGeneratedBy ?call .
  ?call oprov:toolName ?tool ; prov:startedAtTime ?start .
  OPTIONAL {{ ?call oprov:toolCallId ?callId }}
}} }} ORDER BY ?start"""
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


def _moment(value: str) -> datetime:
    try:
        return parse_moment(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _at_least_one(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of 1 or more, not {value!r}")
    return number


def _finite(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected a number, not {value!r}")
    return number


def _port(value: str) -> int:
    if not value.isdigit() or int(value) > 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 0 to 65535, not {value!r}")
    return int(value)


def _seconds(value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise argparse.ArgumentTypeError(f"expected a number of seconds above 0, not {value!r}")
    return seconds


def _formats(**described: str) -> str:
    """``--format`` help: each choice and what it writes, the first being the default."""
    first, *_ = described
    return "; ".join(
        f"{name}{' (default)' if name == first else ''}: {what}" for name, what in described.items()
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="otel-prov",
        description="Provenance of AI agents from OpenTelemetry spans, as W3C PROV-O.",
        epilog="Exit status: 0 done (found), 1 nothing found or a check failed, 2 usage or "
        "store error. 'otel-prov COMMAND --help' describes each command.",
    )
    parser.add_argument("--version", action="version", version=f"otel-prov {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(
        name: str, help_text: str, example: str, *, reads: bool = True
    ) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help_text,
            description=help_text,
            epilog=f"example: {example}",
        )
        if name == "status":
            return sub
        sub.add_argument(
            "--store",
            metavar="DIR",
            type=_store_directory,
            help="embedded store directory (default: $OTEL_PROV_STORE or .otel-prov/store)",
        )
        if reads:
            sub.add_argument(
                "--endpoint",
                metavar="URL",
                help="SPARQL query endpoint to read instead of a store (default: "
                "$OTEL_PROV_SPARQL_QUERY_ENDPOINT; headers from $OTEL_PROV_SPARQL_HEADERS)",
            )
        sub.add_argument(
            "--graph",
            metavar="IRI",
            type=_graph_iri,
            help=f"provenance graph IRI (default: $OTEL_PROV_GRAPH or {DEFAULT_GRAPH})",
        )
        return sub

    command(
        "demo",
        "run the demo agent, store its provenance and print its trace",
        "otel-prov demo --store /tmp/demo-store",
        reads=False,
    )
    sessions = command(
        "sessions",
        "list agent runs (outermost sessions), newest first; ITER and TOOLS count the "
        "whole run, sub-agent sessions included",
        "otel-prov sessions --status error --since 2025-11-30 --limit 5 --format json",
    )
    sessions.add_argument(
        "--limit", type=_at_least_one, default=20, metavar="N", help="at most N sessions (20)"
    )
    sessions.add_argument("--agent", metavar="NAME", help="runs of this agent only")
    sessions.add_argument("--service", metavar="NAME", help="runs of this service.name only")
    sessions.add_argument("--status", choices=STATUSES, help="runs that settled so")
    for bound, meaning in (("since", "at or after"), ("until", "before")):
        sessions.add_argument(
            f"--{bound}",
            type=_moment,
            metavar="WHEN",
            help=f"runs started {meaning} WHEN (2025-11-30 or 2025-11-30T09:00; UTC "
            "unless it names a zone)",
        )
    sessions.add_argument(
        "--search", metavar="TEXT", help="runs whose question or answer holds TEXT (any case)"
    )
    sessions.add_argument(
        "--cursor",
        metavar="CURSOR",
        help="the page after the one that said to pass this cursor (on stderr)",
    )
    sessions.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        help=_formats(table="aligned columns", json="one object per session"),
    )
    show = command(
        "show",
        "show one session: its question, iterations, tool calls, answer, and the "
        "sub-agent sessions it started, nested where they started",
        "otel-prov show demo-conversation --format mermaid",
    )
    show.add_argument("id", metavar="ID", help="session IRI, trace id or conversation id")
    show.add_argument(
        "--format",
        choices=(*VIEW_FORMATS, *GRAPH_FORMATS),
        default="text",
        help=_formats(
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
        ),
    )
    show.add_argument(
        "--full",
        action="store_true",
        help="read values kept in the blob store back in full (checked against their hash)",
    )
    query = command(
        "query",
        "run a SPARQL query: SELECT, ASK, CONSTRUCT or DESCRIBE, never an update (its "
        "default graph is the provenance graph; prefixes prov:, oprov:, rdf:, rdfs: and "
        "xsd: are predeclared)",
        "otel-prov query 'SELECT ?tool WHERE { ?call oprov:toolName ?tool }'",
    )
    query.add_argument("sparql", metavar="SPARQL", help="the query, or - to read it from stdin")
    _allow_service(query)
    query.add_argument(
        "--format",
        choices=QUERY_FORMATS,
        default="table",
        help=_formats(
            table="aligned columns (Turtle for CONSTRUCT and DESCRIBE)",
            json="one object per row (JSON-LD for CONSTRUCT and DESCRIBE)",
            csv="a header and one line per row (rows only)",
        ),
    )
    why = command(
        "why",
        "the derivation graph behind a run's answer, or behind any activity or entity: "
        "observations, the tool calls behind them (name, call id, arguments, status), the "
        "steps that chose them, retrieved chunks and their sources, the question and the "
        "conversation's earlier turns; failed attempts with their error",
        "otel-prov why demo-conversation --format mermaid",
    )
    why.add_argument(
        "id",
        metavar="ID",
        help="session IRI, trace id or conversation id (its newest run), or any activity "
        "or entity IRI",
    )
    why.add_argument(
        "--format",
        choices=WHY_FORMATS,
        default="text",
        help=_formats(
            text="a block per node and the nodes it rests on",
            json='{"root", "nodes", "edges"}',
            mermaid="a flowchart",
            dot="a Graphviz digraph (dot -Tsvg)",
        ),
    )
    diff = command(
        "diff",
        "compare two runs step by step (action, tool, arguments, status, observation, "
        "answer): the first divergence, tool calls added or missing, changed arguments, "
        "statuses and answers; exit 1 when they differ",
        "otel-prov diff RUN_BEFORE RUN_AFTER --format json",
    )
    diff.add_argument("a", metavar="A", help="the first run: session IRI, trace or conversation id")
    diff.add_argument("b", metavar="B", help="the run to compare it with")
    diff.add_argument(
        "--format",
        choices=DIFF_FORMATS,
        default="text",
        help=_formats(
            text="the first divergence and every change",
            json='{"first_divergence": {"iteration", "field", "a", "b"} or null, ...}',
        ),
    )
    summary = command(
        "summary",
        "a run in plain language, from its provenance alone (no model): what was asked, "
        "each step's action and outcome, failures included, what the answer rests on, "
        "time and tokens",
        "otel-prov summary demo-conversation",
    )
    summary.add_argument("id", metavar="ID", help="session IRI, trace id or conversation id")
    summary.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=_formats(
            text="one sentence a line",
            json='{"session", "sentences": [{"text", "refs": [the why nodes it names]}]}',
        ),
    )
    imports = command(
        "import",
        "OTLP JSON trace files (the Collector's file exporter: one export request per line, "
        "or one JSON document) into provenance; importing a file again adds nothing",
        "otel-prov import traces.jsonl",
    )
    imports.add_argument("files", metavar="FILE", nargs="+", help="a trace file, or - for stdin")
    _writes(imports)
    add_no_content_argument(imports)
    imports.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=_formats(text="one line of counts", json="the counts and the parts skipped"),
    )
    receive = command(
        "receive",
        "an OTLP trace receiver (gRPC and HTTP) that maps whole traces, across services, "
        "into provenance; SIGTERM drains and exits",
        "otel-prov receive --endpoint-update http://localhost:7878/update",
    )
    _writes(receive)
    add_receive_arguments(receive)
    serve = command(
        "serve",
        "a read-only web view: sessions (filtered, paged), each session with its timeline "
        "and RDF downloads, two side by side, and a SPARQL box; prints its URL",
        "otel-prov serve --port 8080",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to listen on (127.0.0.1: this machine only; any other is warned about)",
    )
    serve.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server is reached by, besides the address it listens on "
        "(repeatable); a request naming any other host is refused (DNS rebinding)",
    )
    serve.add_argument(
        "--port", type=_port, default=8080, metavar="N", help="port (8080; 0 picks a free one)"
    )
    serve.add_argument(
        "--query-timeout",
        type=_seconds,
        default=10.0,
        metavar="SECONDS",
        help="stop a query of the SPARQL page after this long (10)",
    )
    serve.add_argument(
        "--max-queries",
        type=_at_least_one,
        default=2,
        metavar="N",
        help="queries of the SPARQL page run at once, at most (2); one more gets 503",
    )
    _allow_service(serve)
    verify = command(
        "verify",
        "check that stored sessions are unchanged since export",
        "otel-prov verify demo-conversation",
    )
    verify.add_argument(
        "id", metavar="ID", nargs="?", help="one session (IRI, trace or conversation id)"
    )
    verify.add_argument("--all", action="store_true", help="every session (the default without ID)")
    verify.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=_formats(text="a line per session and the totals", json="one object per session"),
    )
    annotate = command(
        "annotate",
        "add an evaluation to a stored run, sealed in a bundle of its own (the run's seal "
        "is untouched; verify checks both)",
        "otel-prov annotate demo-conversation --name correctness --score 1 --label pass",
    )
    annotate.add_argument(
        "id", metavar="ID", help="the run (session IRI, trace or conversation id)"
    )
    annotate.add_argument("--name", required=True, help="what is judged (e.g. relevance)")
    annotate.add_argument("--score", type=_finite, metavar="X", help="a number")
    annotate.add_argument("--label", metavar="L", help="the verdict in words (e.g. pass)")
    annotate.add_argument("--explanation", metavar="T", help="why")
    annotate.add_argument(
        "--evaluator",
        default="otel-prov annotate",
        metavar="NAME",
        help="who judged; each evaluator's annotations form one chain (default: otel-prov "
        "annotate)",
    )
    _writes(annotate)
    annotate.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=_formats(text="one line", json="the run, the annotation and its evaluation"),
    )
    command(
        "flush",
        "store what waits on disk: batches parked beside the embedded store by processes "
        "that could not get it, or spooled for the SPARQL store (exit 1 when some still wait)",
        "otel-prov flush --store .otel-prov/store",
        reads=False,
    )
    status = command(
        "status",
        "delivery to the SPARQL store, from the spool directory the exporters write to: "
        "counters, spooled and dead-lettered batches (exit 1 when batches wait in the "
        "spool or were dead-lettered)",
        "otel-prov status --format json",
    )
    status.add_argument(
        "--spool-dir",
        type=Path,
        help="the exporters' spool (default: $OTEL_PROV_SPOOL_DIR or .otel-prov/spool)",
    )
    status.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=_formats(text="for people", json="the exporters' reports and the spool's counts"),
    )
    return parser


def _writes(sub: argparse.ArgumentParser) -> None:
    """The write destination of a command that stores provenance."""
    sub.add_argument(
        "--endpoint-update",
        metavar="URL",
        help="SPARQL update endpoint to write to instead of a store (default: "
        "$OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is then where what is stored is read",
    )


def _allow_service(sub: argparse.ArgumentParser) -> None:
    """A query may name these endpoints in SERVICE; none by default (the store would fetch)."""
    sub.add_argument(
        "--allow-service",
        action="append",
        default=[],
        metavar="URL",
        help="an endpoint a query may call with SERVICE (repeatable; none by default, since "
        "SERVICE makes the store send requests to any host it can reach)",
    )


def _backend(args: argparse.Namespace) -> QueryBackend:
    if args.store is not None and args.endpoint:
        raise UsageError("give --store or --endpoint, not both")
    return reader_from_settings(store=args.store, sparql_query_endpoint=args.endpoint)


def _reader(args: argparse.Namespace) -> ProvenanceReader:
    """The read API over ``--store``/``--endpoint`` and the graph of :func:`_graph`."""
    return ProvenanceReader(_backend(args), graph=_graph(args)[1:-1])


def _graph(args: argparse.Namespace) -> str:
    """The graph of ``--graph`` (checked by the parser), else of ``OTEL_PROV_GRAPH``."""
    try:
        return graph_term(args.graph)
    except ValueError as exc:
        raise UsageError(f"{OTEL_PROV_GRAPH}: {exc}") from exc


def _trace_links() -> dict[str, str]:
    """Backend name -> URL template (``{trace_id}``) of each trace backend configured."""
    links = {"jaeger": env_str(OTEL_PROV_JAEGER_URL), "tempo": env_str(OTEL_PROV_TEMPO_URL)}
    return {name: template for name, template in links.items() if template}


def _say(message: str) -> None:
    print(f"otel-prov: {message}", file=sys.stderr)


def _no_session(ident: str) -> str:
    return f"no session with id, trace id or conversation id {ident!r}"


def _sessions(args: argparse.Namespace) -> ExitCode:
    backend = _backend(args)
    try:
        page = ProvenanceReader(backend, graph=_graph(args)[1:-1]).sessions(
            agent=args.agent,
            service=args.service,
            status=args.status,
            since=args.since,
            until=args.until,
            text=args.search,
            limit=args.limit,
            cursor=args.cursor,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    found = list(page.sessions)
    sys.stdout.write(render_session_list(found, args.format))
    if page.next_cursor is not None:
        _say(f"more runs: add --cursor {page.next_cursor}")
    if isinstance(backend, EmbeddedBackend):
        count, where = parked_batches(backend.path)
        if count:
            _say(f"{count} batch(es) parked in {where}, not in the store yet (otel-prov flush)")
    return ExitCode.OK if found else ExitCode.NOTHING_FOUND


def _show(args: argparse.Namespace) -> ExitCode:
    reader = _reader(args)
    matches = reader.find(args.id)
    if not matches:
        _say(_no_session(args.id))
        return ExitCode.NOTHING_FOUND
    if len(matches) > 1:
        # On stderr, so that the output stays one document of the chosen format.
        _say(f"{len(matches)} sessions match {args.id!r}; showing each, oldest first")
    if args.format in GRAPH_FORMATS:
        sys.stdout.write(render_graphs([reader.triples(m) for m in matches], args.format))
    else:
        views = [reader.session(m, full=args.full) for m in matches]
        why = {m: reader.why(m).as_json() for m in matches} if args.format == "html" else None
        sys.stdout.write(render_views(views, args.format, trace_links=_trace_links(), why=why))
    return ExitCode.OK


def _why(args: argparse.Namespace) -> ExitCode:
    try:
        graph = _reader(args).why(args.id)
    except LookupError:
        _say(f"no session, activity or entity {args.id!r}")
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_why(graph, args.format))
    return ExitCode.OK


def _diff(args: argparse.Namespace) -> ExitCode:
    try:
        compared = _reader(args).diff(args.a, args.b)
    except LookupError as exc:
        _say(str(exc))
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_diff(compared, args.format))
    return ExitCode.OK if compared.same else ExitCode.CHECK_FAILED


def _summary(args: argparse.Namespace) -> ExitCode:
    try:
        told = _reader(args).summary(args.id)
    except LookupError as exc:
        _say(str(exc))
        return ExitCode.NOTHING_FOUND
    if args.format == "json":
        print(json.dumps(told.as_json(), ensure_ascii=False, indent=2))
    else:
        sys.stdout.write(printable(told.text()))
    return ExitCode.OK


def _query(args: argparse.Namespace) -> ExitCode:
    graph = _graph(args)
    backend = _backend(args)
    text = sys.stdin.read() if args.sparql == "-" else args.sparql
    try:
        result = run_user_query(backend, text, graph=graph[1:-1], allow_service=args.allow_service)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    sys.stdout.write(render_query_result(result, args.format))
    empty = (result.kind == "select" and not result.rows) or (
        result.kind == "graph" and not result.triples
    )
    return ExitCode.NOTHING_FOUND if empty or result.boolean is False else ExitCode.OK


def _demo(args: argparse.Namespace) -> ExitCode:
    from otel_prov.demo import run_demo_agent
    from otel_prov.setup._configure import configure

    graph = _graph(args)
    store = store_path(args.store)
    handle = configure(
        store=store, graph=args.graph, set_global=False, otlp=False, service_name="otel-prov-demo"
    )
    sessions: list[str] = []
    try:
        run_demo_agent(
            tracer_provider=handle.tracer_provider,
            on_session=lambda span: sessions.append(f"{span.get_span_context().trace_id:032x}"),
        )
    finally:
        handle.shutdown()
    stats = handle.processor.statistics() if handle.processor is not None else None
    if stats is None or stats.records_failed or not stats.records_exported:
        _say("the demo's provenance was not stored (see the log above)")
        return ExitCode.STORE_ERROR
    found = _stored_session(store, graph, sessions[0])
    if found is None:
        count, where = parked_batches(store)
        _say(
            f"another process holds {store}: the demo's provenance is parked in {where} "
            f"({count} batch(es)) until that process loads it (or run otel-prov flush)"
        )
        return ExitCode.OK
    backend, session = found
    view = ProvenanceReader(backend, graph=graph[1:-1]).session(session)
    print(f"Provenance stored in {store}\n")
    sys.stdout.write(render_views([view], "text", trace_links=_trace_links()))
    query = DEMO_QUERY.format(graph=graph, session=f"<{session}>")
    shown = query.removeprefix(SPARQL_PREFIXES).splitlines()
    print("\nSPARQL:" + "\n".join("  " + line for line in shown) + "\n")
    sys.stdout.write(render_query_result(backend.query(query), "table"))
    return ExitCode.OK


def _stored_session(
    store: Path, graph: str, trace_id: str, wait_s: float = 5.0
) -> tuple[EmbeddedBackend, str] | None:
    """The session of ``trace_id`` once it is in the store: at once when this process held
    the store, within about a second when another process holds it and loads parked
    batches; ``None`` when it has not arrived after ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    while True:
        backend = EmbeddedBackend(store)
        matches = ProvenanceReader(backend, graph=graph[1:-1]).find(trace_id)
        if matches:
            return backend, matches[0]
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.2)


def _import(args: argparse.Namespace) -> ExitCode:
    """Read every file first (a missing one is a usage error and nothing is imported), then
    import what parsed; a part that did not is one line on stderr and a usage error."""
    graph = _graph(args)
    try:
        patterns = _content.patterns_from_environment()
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    if patterns:  # as the zero-code configurator does: the files may hold secrets too
        _content.set_redaction(None, patterns)
    parsed = [parse_otlp_json(_read_text(name), name) for name in args.files]
    problems = [problem for result in parsed for problem in result.problems]
    for problem in problems:
        _say(problem)
    destination = _destination(args)
    exporter = destination.exporter
    try:
        summary = import_spans(
            (span for result in parsed for span in result.spans),
            exporter=exporter,
            backend=destination.reader,
            graph=graph,
            prepare=RecordPreparer.from_settings(content=content_policy(args)),
            prices=prices_from_settings(),
            now_ns=time.time_ns(),
        )
        delivered = exporter.force_flush()
    finally:
        exporter.shutdown()
    for warning in summary.warnings:
        _say(f"warning: {warning}")
    sys.stdout.write(render_import(summary, problems, args.files, args.format))
    if summary.not_stored or not delivered:
        kept = (
            f"what was not waits in the spool {destination.spool} (otel-prov status)"
            if destination.spool is not None
            else "see the log above"
        )
        _say(f"not all provenance was stored; {kept}")
        return ExitCode.STORE_ERROR
    if not summary.traces:
        _say("no agent session in the spans read: nothing imported")
    if problems:
        return ExitCode.USAGE_ERROR
    return ExitCode.OK if summary.traces else ExitCode.NOTHING_FOUND


def _read_text(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{name} is not UTF-8 text (byte {exc.start})") from exc


def _destination(args: argparse.Namespace) -> Destination:
    """Where ``configure()`` would write (a SPARQL update endpoint when one is set, else the
    embedded store), flags first."""
    if args.store is not None and (args.endpoint or args.endpoint_update):
        raise UsageError("give --store or --endpoint-update/--endpoint, not both")
    if args.endpoint and not (args.endpoint_update or env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)):
        raise UsageError(
            f"{args.command} writes: give the update endpoint with --endpoint-update "
            "(or OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is where it reads"
        )
    try:
        return destination_from_settings(
            store=args.store,
            sparql_update_endpoint=args.endpoint_update,
            sparql_query_endpoint=args.endpoint,
            graph=args.graph,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise StoreUnavailableError(str(exc)) from exc


def _receive(args: argparse.Namespace) -> ExitCode:
    try:
        return receive(args, _graph(args), lambda: _destination(args))
    except (ValueError, OSError) as exc:  # a bad flag; a port or data directory in use
        raise UsageError(str(exc)) from exc


def _serve(args: argparse.Namespace) -> ExitCode:
    """Open the store (or endpoint) first, so that one that cannot be read fails at once."""
    with needs_extra("serve", "serve"):
        from otel_prov.view._app import create_app
        from otel_prov.view._server import serve
    graph = _graph(args)[1:-1]
    _backend(args)  # --store and --endpoint together are refused before anything opens
    app = create_app(
        lambda: _backend(args),
        graph=graph,
        trace_links=_trace_links(),
        query_timeout_s=args.query_timeout,
        allow_service=args.allow_service,
        bound_host=args.host,
        allowed_hosts=args.allowed_host,
        max_queries=args.max_queries,
    )
    if not is_loopback(args.host):
        _say(
            f"warning: listening on {args.host}, not this machine only: anyone who can reach "
            "it reads all the provenance in the store (there is no login)"
        )

    def announce(url: str) -> None:
        print(f"otel-prov serve: {url}", flush=True)

    try:
        serve(app, args.host, args.port, announce=announce)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}"
        ) from exc
    return ExitCode.OK


def _verify(args: argparse.Namespace) -> ExitCode:
    if args.id is not None and args.all:
        raise UsageError("give an ID or --all, not both")
    checks = _reader(args).verify(args.id)
    if not checks:
        _say("no session to verify" if args.id is None else _no_session(args.id))
        return ExitCode.NOTHING_FOUND
    sys.stdout.write(render_checks(checks, args.format))
    return ExitCode.OK if all(c.ok for c in checks) else ExitCode.CHECK_FAILED


def _status(args: argparse.Namespace) -> ExitCode:
    spool = spool_dir_from_settings(args.spool_dir)
    parked, parked_dir = parked_batches()
    if parked:
        _say(f"{parked} batch(es) parked in {parked_dir}, not in the embedded store yet")
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


def _annotate(args: argparse.Namespace) -> ExitCode:
    """One evaluation of one run, written where ``configure()`` would write and chained
    after the evaluator's previous annotation."""
    if not args.name.strip():
        raise UsageError("--name must name what is judged (e.g. relevance)")
    destination = _destination(args)
    exporter = destination.exporter
    try:
        reader = ProvenanceReader(destination.reader, graph=_graph(args)[1:-1])
        matches = reader.find(args.id)
        if not matches:
            _say(_no_session(args.id))
            return ExitCode.NOTHING_FOUND
        if len(matches) > 1:
            raise UsageError(
                f"{args.id!r} names {len(matches)} runs; give one session IRI: "
                + ", ".join(matches)
            )
        view = reader.session(matches[0])
        answered = view.answered_by or view.id
        record = annotation_record(
            f"<{view.id}>",
            name=args.name,
            score=args.score,
            label=args.label,
            explanation=args.explanation,
            evaluator=args.evaluator,
            answer=f"<{answered}:answer>" if view.answer is not None else None,
            now_ns=time.time_ns(),
        )
        sealer = Sealer()
        sealer.continue_chains(exporter.chain_heads())
        sealed = sealer.seal(record, time.time_ns())
        stored = exporter.export([sealed]) is ExportResult.SUCCESS and exporter.force_flush()
    finally:
        exporter.shutdown()
    if not stored:
        _say("the annotation was not stored (see the log above)")
        return ExitCode.STORE_ERROR
    annotation = record.root[1:-1]
    if args.format == "json":
        print(json.dumps({"session": view.id, "annotation": annotation, "name": args.name}))
    else:
        print(f"annotated {view.id} with {args.name} ({annotation})")
    return ExitCode.OK


def _flush(args: argparse.Namespace) -> ExitCode:
    """Have the exporter ``configure()`` would build store what waits on disk."""
    try:
        exporter = exporter_from_settings(store=args.store, graph=args.graph)
    except ValueError as exc:
        raise UsageError(str(exc)) from exc
    except OSError as exc:
        raise StoreUnavailableError(str(exc)) from exc
    try:
        before = exporter.waiting()
        exporter.force_flush()
    finally:
        exporter.shutdown()
    left = exporter.waiting()
    print(f"{before - left} batch(es) stored, {left} waiting")
    if left:
        _say(
            "some batches still wait: another process holds the store (it loads them "
            "itself), or the store does not accept them (otel-prov status)"
        )
        return ExitCode.CHECK_FAILED
    return ExitCode.OK


COMMANDS: dict[str, Callable[[argparse.Namespace], ExitCode]] = {
    "demo": _demo,
    "sessions": _sessions,
    "show": _show,
    "query": _query,
    "why": _why,
    "diff": _diff,
    "summary": _summary,
    "import": _import,
    "receive": _receive,
    "serve": _serve,
    "verify": _verify,
    "annotate": _annotate,
    "status": _status,
    "flush": _flush,
}
"""Each command's handler, by name; the parser offers exactly these."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        return COMMANDS[args.command](args)
    except (UsageError, MissingExtraError) as exc:
        _say(str(exc))
        return ExitCode.USAGE_ERROR
    except StoreUnavailableError as exc:
        _say(str(exc))
        return ExitCode.STORE_ERROR
    except BrokenPipeError:
        return ExitCode.OK


if __name__ == "__main__":
    sys.exit(main())
