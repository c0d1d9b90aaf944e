"""``otel-prov demo``: the demo agent run into a store, its trace shown and queried."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from otel_prov.cli._exit import ExitCode
from otel_prov.cli._messages import say
from otel_prov.cli._parser import Command, Where
from otel_prov.cli._render import render_views
from otel_prov.cli._render_query import render_query_result
from otel_prov.cli._shared import graph, tenant, trace_links
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.prov._rdf import SPARQL_PREFIXES
from otel_prov.read._reader import ProvenanceReader
from otel_prov.setup._destination import parked_batches, store_path

__all__ = ["COMMANDS"]

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


def _demo(args: argparse.Namespace) -> ExitCode:
    from otel_prov.demo import run_demo_agent
    from otel_prov.setup._configure import configure

    named = graph(args)
    store = store_path(args.store)
    handle = configure(
        store=store,
        graph=args.graph,
        tenant=tenant(args),
        set_global=False,
        otlp=False,
        service_name="otel-prov-demo",
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
        say("the demo's provenance was not stored (see the log above)")
        return ExitCode.STORE_ERROR
    found = _stored_session(store, named, sessions[0])
    if found is None:
        count, where = parked_batches(store)
        say(
            f"another process holds {store}: the demo's provenance is parked in {where} "
            f"({count} batch(es)) until that process loads it (or run otel-prov flush)"
        )
        return ExitCode.OK
    backend, session = found
    view = ProvenanceReader(backend, graph=named[1:-1]).session(session)
    print(f"Provenance stored in {store}\n")
    sys.stdout.write(render_views([view], "text", trace_links=trace_links()))
    query = DEMO_QUERY.format(graph=named, session=f"<{session}>")
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


COMMANDS = (
    Command(
        "demo",
        "otel-prov demo --store /tmp/demo-store",
        _demo,
        where=Where.STORE,
    ),
)
