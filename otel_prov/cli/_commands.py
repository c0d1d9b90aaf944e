"""``otel-prov``: run the demo, list sessions, show one, query provenance with SPARQL,
import OTLP JSON trace files.

Exit status: 0 success, 1 nothing found (or an empty query answer), 2 usage or store
errors.  Errors are one line on stderr; data goes to stdout.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph

from otel_prov._settings import env_str
from otel_prov._version import __version__
from otel_prov.capture import _content
from otel_prov.cli._render import (
    render_html,
    render_json,
    render_mermaid,
    render_sessions_table,
    render_text,
)
from otel_prov.environment_variables import (
    OTEL_PROV_JAEGER_URL,
    OTEL_PROV_SPARQL_QUERY_ENDPOINT,
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
    OTEL_PROV_SPOOL_DIR,
    OTEL_PROV_TEMPO_URL,
)
from otel_prov.exporters._base import ProvExporter, graph_term
from otel_prov.exporters._oxigraph import OxigraphStoreExporter, default_store_path
from otel_prov.exporters._sparql import DEFAULT_SPOOL_DIR, SparqlUpdateExporter, sparql_headers
from otel_prov.ingest._import import ImportSummary, import_spans
from otel_prov.processing._processor import RecordPreparer
from otel_prov.prov._otlp_json import parse_otlp_json
from otel_prov.prov._rdf import PREFIXES
from otel_prov.read._backend import (
    EmbeddedBackend,
    QueryBackend,
    QueryResult,
    RemoteBackend,
    StoreUnavailableError,
)
from otel_prov.read._delivery import delivery_status, render_status
from otel_prov.read._session_view import (
    PREFIXES as SPARQL_PREFIXES,
)
from otel_prov.read._session_view import (
    find_sessions,
    list_sessions,
    load_session,
    session_construct_query,
)
from otel_prov.read._verify import verify_sessions

__all__ = ["main"]

EXIT_OK, EXIT_NOT_FOUND, EXIT_ERROR = 0, 1, 2

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


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="otel-prov",
        description="Provenance of AI agents from OpenTelemetry spans, as W3C PROV-O.",
    )
    parser.add_argument("--version", action="version", version=f"otel-prov {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def command(name: str, help_text: str, *, reads: bool = True) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=help_text, description=help_text)
        sub.add_argument(
            "--store",
            type=Path,
            help="embedded store directory (default: $OTEL_PROV_STORE or .otel-prov/store)",
        )
        if reads:
            sub.add_argument(
                "--endpoint",
                metavar="URL",
                help="SPARQL query endpoint to read instead of a store (default: "
                "$OTEL_PROV_SPARQL_QUERY_ENDPOINT; headers from $OTEL_PROV_SPARQL_HEADERS)",
            )
        sub.add_argument("--graph", help="provenance graph IRI (default: $OTEL_PROV_GRAPH)")
        return sub

    command("demo", "run the demo agent, store its provenance and print its trace", reads=False)
    sessions = command(
        "sessions",
        "list agent runs (outermost sessions), newest first; ITER and TOOLS count the "
        "whole run, sub-agent sessions included",
    )
    sessions.add_argument("--limit", type=int, default=20, help="at most N sessions (20)")
    sessions.add_argument("--format", choices=("table", "json"), default="table")
    show = command(
        "show",
        "show one session: its question, iterations, tool calls, answer, and the "
        "sub-agent sessions it started, nested where they started",
    )
    show.add_argument("id", metavar="ID", help="session IRI, trace id or conversation id")
    show.add_argument(
        "--format", choices=("text", "json", "turtle", "mermaid", "html"), default="text"
    )
    show.add_argument(
        "--full",
        action="store_true",
        help="read values kept in the blob store back in full (checked against their hash)",
    )
    query = command("query", "run a SPARQL query (its default graph is the provenance graph)")
    query.add_argument("sparql", metavar="SPARQL", help="the query, or - to read it from stdin")
    query.add_argument("--format", choices=("table", "json", "csv"), default="table")
    imports = command(
        "import",
        "OTLP JSON trace files (the Collector's file exporter: one export request per line, "
        "or one JSON document) into provenance; importing a file again adds nothing",
    )
    imports.add_argument("files", metavar="FILE", nargs="+", help="a trace file, or - for stdin")
    imports.add_argument(
        "--endpoint-update",
        metavar="URL",
        help="SPARQL update endpoint to write to instead of a store (default: "
        "$OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is then where what is stored is read",
    )
    imports.add_argument("--format", choices=("text", "json"), default="text")
    verify = command("verify", "check that stored sessions are unchanged since export")
    verify.add_argument(
        "id", metavar="ID", nargs="?", help="one session (IRI, trace or conversation id)"
    )
    verify.add_argument("--all", action="store_true", help="every session (the default without ID)")
    verify.add_argument("--format", choices=("text", "json"), default="text")
    status = commands.add_parser(
        "status",
        help="delivery to the SPARQL store: counters, spooled and dead-lettered batches",
        description="Delivery to the SPARQL store, from the spool directory the exporters "
        "write to. Exit 1 when batches wait in the spool or were dead-lettered.",
    )
    status.add_argument(
        "--spool-dir",
        type=Path,
        help="the exporters' spool (default: $OTEL_PROV_SPOOL_DIR or .otel-prov/spool)",
    )
    status.add_argument("--format", choices=("text", "json"), default="text")
    return parser


def _backend(args: argparse.Namespace) -> QueryBackend:
    if args.store is not None and args.endpoint:
        raise _UsageError("give --store or --endpoint, not both")
    endpoint = args.endpoint or (
        None if args.store is not None else env_str(OTEL_PROV_SPARQL_QUERY_ENDPOINT)
    )
    if endpoint:
        return RemoteBackend(endpoint, headers=sparql_headers())
    return EmbeddedBackend(args.store or default_store_path())


def _graph(args: argparse.Namespace) -> str:
    try:
        return graph_term(args.graph)
    except ValueError as exc:
        raise _UsageError(str(exc)) from exc


def _write_table(result: QueryResult, fmt: str) -> None:
    if result.kind == "ask":
        print(json.dumps(result.boolean) if fmt == "json" else str(result.boolean).lower())
        return
    if result.kind == "graph":
        data = pyoxigraph.serialize(
            result.triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES
        )
        sys.stdout.write((data or b"").decode())
        return
    if fmt == "json":
        print(json.dumps(result.rows, ensure_ascii=False, indent=2))
    elif fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(result.variables), lineterminator="\n")
        writer.writeheader()
        writer.writerows(result.rows)
        sys.stdout.write(buffer.getvalue())
    else:
        header = list(result.variables)
        cells = [[(row[name] or "").replace("\n", "\\n") for name in header] for row in result.rows]
        widths = [max(len(r[i]) for r in [header, *cells]) for i in range(len(header))]
        for row in [header, *cells]:
            print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _show(backend: QueryBackend, graph: str, session: str, fmt: str, full: bool) -> str:
    if fmt == "turtle":
        triples = backend.query(session_construct_query(graph, session)).triples
        data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
        return (data or b"").decode()
    view = load_session(backend, graph, session, full=full)
    if fmt == "mermaid":
        return render_mermaid(view)
    return render_text(view, trace_links=_trace_links())


def _trace_links() -> dict[str, str]:
    """Backend name -> URL template (``{trace_id}``) of each trace backend configured."""
    links = {"jaeger": env_str(OTEL_PROV_JAEGER_URL), "tempo": env_str(OTEL_PROV_TEMPO_URL)}
    return {name: template for name, template in links.items() if template}


def _run(args: argparse.Namespace) -> int:
    if args.command == "status":
        return _status(args)
    graph = _graph(args)
    if args.command == "demo":
        return _demo(args, graph)
    if args.command == "import":
        return _import(args, graph)
    backend = _backend(args)
    if args.command == "sessions":
        found = list_sessions(backend, graph, args.limit)
        print(render_json(found) if args.format == "json" else render_sessions_table(found))
        return EXIT_OK if found else EXIT_NOT_FOUND
    if args.command == "show":
        matches = find_sessions(backend, graph, args.id)
        if not matches:
            print(
                f"otel-prov: no session with id, trace id or conversation id {args.id!r}",
                file=sys.stderr,
            )
            return EXIT_NOT_FOUND
        if args.format in ("json", "html"):
            views = [load_session(backend, graph, m, full=args.full) for m in matches]
            if args.format == "json":
                print(render_json(views))
            else:
                print(render_html(views, trace_links=_trace_links()), end="")
        else:
            shown = [_show(backend, graph, m, args.format, args.full) for m in matches]
            print("\n\n".join(text.rstrip("\n") for text in shown))
        return EXIT_OK
    if args.command == "verify":
        return _verify(backend, graph, args)
    text = sys.stdin.read() if args.sparql == "-" else args.sparql
    try:
        result = backend.query(text, default_graph=graph[1:-1])
    except ValueError as exc:
        raise _UsageError(str(exc).splitlines()[0]) from exc
    _write_table(result, args.format)
    empty = (result.kind == "select" and not result.rows) or (
        result.kind == "graph" and not result.triples
    )
    return EXIT_NOT_FOUND if empty or result.boolean is False else EXIT_OK


def _demo(args: argparse.Namespace, graph: str) -> int:
    from otel_prov.demo import run_demo_agent
    from otel_prov.setup._configure import configure

    store = args.store or default_store_path()
    handle = configure(
        store=store, graph=args.graph, set_global=False, otlp=False, service_name="otel-prov-demo"
    )
    try:
        run_demo_agent(tracer_provider=handle.tracer_provider)
    finally:
        handle.shutdown()
    stats = handle.processor.statistics() if handle.processor is not None else None
    if stats is None or stats.records_failed or not stats.records_exported:
        print(
            "otel-prov: the demo's provenance was not stored (see the log above)", file=sys.stderr
        )
        return EXIT_ERROR
    backend = EmbeddedBackend(store)
    session = list_sessions(backend, graph, 1)[0].id
    print(f"Provenance stored in {store}\n")
    print(_show(backend, graph, session, "text", False))
    query = DEMO_QUERY.format(graph=graph, session=f"<{session}>")
    print("\nSPARQL:" + "\n".join("  " + line for line in query.splitlines()[3:]) + "\n")
    _write_table(backend.query(query), "table")
    return EXIT_OK


def _import(args: argparse.Namespace, graph: str) -> int:
    """Read every file first (a missing one is a usage error and nothing is imported), then
    import what parsed; a part that did not is one line on stderr and makes the exit 1."""
    try:
        patterns = _content.patterns_from_environment()
    except ValueError as exc:
        raise _UsageError(str(exc)) from exc
    if patterns:  # as the zero-code configurator does: the files may hold secrets too
        _content.set_redaction(None, patterns)
    parsed = [parse_otlp_json(_read_text(name), name) for name in args.files]
    problems = [problem for result in parsed for problem in result.problems]
    for problem in problems:
        print(f"otel-prov: {problem}", file=sys.stderr)
    exporter, backend = _import_destination(args)
    try:
        summary = import_spans(
            (span for result in parsed for span in result.spans),
            exporter=exporter,
            backend=backend,
            graph=graph,
            prepare=RecordPreparer.from_settings(),
            now_ns=time.time_ns(),
        )
        delivered = exporter.force_flush()
    finally:
        exporter.shutdown()
    for warning in summary.warnings:
        print(f"otel-prov: warning: {warning}", file=sys.stderr)
    if args.format == "json":
        report = {**dataclasses.asdict(summary), "problems": problems, "files": args.files}
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(_import_line(summary, len(problems)))
    if summary.not_stored or not delivered:
        kept = (
            f"what was not waits in the spool {exporter.spool.root} (otel-prov status)"
            if isinstance(exporter, SparqlUpdateExporter)
            else "see the log above"
        )
        print(f"otel-prov: not all provenance was stored; {kept}", file=sys.stderr)
        return EXIT_ERROR
    if not summary.traces:
        print("otel-prov: no agent session in the spans read: nothing imported", file=sys.stderr)
        return EXIT_NOT_FOUND
    return EXIT_NOT_FOUND if problems else EXIT_OK


def _read_text(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    try:
        return Path(name).read_text(encoding="utf-8")
    except OSError as exc:
        raise _UsageError(f"cannot read {name}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise _UsageError(f"{name} is not UTF-8 text (byte {exc.start})") from exc


def _import_destination(args: argparse.Namespace) -> tuple[ProvExporter, QueryBackend]:
    """The exporter as ``configure()`` chooses it (a SPARQL update endpoint when one is set,
    else the embedded store), flags first, and a reader of the same destination."""
    if args.store is not None and (args.endpoint or args.endpoint_update):
        raise _UsageError("give --store or --endpoint-update/--endpoint, not both")
    update = args.endpoint_update or (
        None if args.store is not None else env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)
    )
    if args.endpoint and not update:
        raise _UsageError(
            "import writes: give the update endpoint with --endpoint-update "
            "(or OTEL_PROV_SPARQL_UPDATE_ENDPOINT); --endpoint is where it reads"
        )
    if update:
        try:
            sparql = SparqlUpdateExporter(update, args.endpoint, graph=args.graph)
        except ValueError as exc:
            raise _UsageError(str(exc)) from exc
        return sparql, RemoteBackend(sparql.query_endpoint, headers=sparql.headers)
    try:
        store = OxigraphStoreExporter(args.store, graph=args.graph)
    except OSError as exc:
        raise StoreUnavailableError(str(exc)) from exc
    return store, EmbeddedBackend(store.path)


def _import_line(summary: ImportSummary, problems: int) -> str:
    line = (
        f"imported {summary.spans} spans from {summary.traces} traces: {summary.sessions} sessions"
    )
    notes = [
        f"{summary.already_stored} already stored, {summary.revised} of them revised"
        if summary.already_stored
        else "",
        f"{summary.left_out_spans} spans of {summary.left_out_traces} traces without an "
        "agent session left out"
        if summary.left_out_traces
        else "",
        f"{problems} unreadable parts skipped, listed above" if problems else "",
    ]
    notes = [note for note in notes if note]
    return f"{line} ({'; '.join(notes)})" if notes else line


def _verify(backend: QueryBackend, graph: str, args: argparse.Namespace) -> int:
    if args.id is not None and args.all:
        raise _UsageError("give an ID or --all, not both")
    checks = verify_sessions(backend, graph, args.id)
    if not checks:
        print("otel-prov: no session to verify", file=sys.stderr)
        return EXIT_NOT_FOUND
    if args.format == "json":
        print(
            json.dumps(
                [
                    {
                        "session": c.session,
                        "bundle": c.bundle,
                        "ok": c.ok,
                        "gates": c.gates,
                        "problems": c.problems,
                    }
                    for c in checks
                ],
                indent=2,
            )
        )
    else:
        for check in checks:
            print(f"{'ok' if check.ok else 'FAILED'}  {check.session}")
            for problem in check.problems:
                print(f"    {problem}")
        failed = sum(not c.ok for c in checks)
        print(f"{len(checks) - failed} verified, {failed} failed")
    return EXIT_OK if all(c.ok for c in checks) else EXIT_NOT_FOUND


def _status(args: argparse.Namespace) -> int:
    spool = args.spool_dir or Path(env_str(OTEL_PROV_SPOOL_DIR, DEFAULT_SPOOL_DIR) or ".")
    if not spool.is_dir():
        print(f"otel-prov: no spool at {spool}: no SPARQL exporter has run here", file=sys.stderr)
        return EXIT_NOT_FOUND
    report = delivery_status(spool)
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        print(render_status(report))
    return EXIT_NOT_FOUND if report["spooled_batches"] or report["dead_letters"] else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except (_UsageError, StoreUnavailableError) as exc:
        print(f"otel-prov: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
