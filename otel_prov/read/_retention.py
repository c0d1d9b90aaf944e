"""``otel-prov prune``: old runs removed by a retention policy, a signed tombstone left per
removed range of each writer's chain, so that ``verify`` tells the gap from a deletion.

A run goes when every run of its trace ended before the cutoff (a run's end is its
session's ``prov:endedAtTime``, its start when it has none): a trace's runs and everything
named under the trace (``urn:otel-prov:<trace>:...``: its sessions, activities, entities,
bundles, revisions, annotations and their bundles) go together, so nothing is left that
names what is gone.  The agents, tools and models runs share stay.

The order is what makes an interrupted prune safe: the tombstones are stored first (with
the pruning writer's checkpoint), the runs removed after.  Stopped in between, ``verify``
reports tombstones naming entries still stored, and running the same prune again
finishes it; never runs gone with no tombstone.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

from otel_prov.exporters._base import ExportResult, ProvExporter
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.prov._chain import Entry, Tombstone, tombstones_for
from otel_prov.prov._rdf import canonical_datetime
from otel_prov.prov._record import ProvRecord
from otel_prov.read._backend import QueryBackend
from otel_prov.read._chains import _entry, entries_query
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = [
    "PruneError",
    "PrunePlan",
    "plan_prune",
    "prune",
    "pruned_traces",
    "ranges",
    "runs_query",
    "subjects_query",
    "utc_text",
]

_BASE = "urn:otel-prov:"
_NO_TRACE = "0" * 32


class PruneError(Exception):
    """The prune could not be carried out; the message says what was done and what not."""


def runs_query(graph: str) -> str:
    """SELECT each run with its start and its session's end (unsorted, as
    :func:`subjects_query`)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?session ?start ?end WHERE {{ GRAPH {graph} {{
  ?session oprov:runStartedAt ?start .
  OPTIONAL {{ ?session prov:endedAtTime ?end }}
}} }}"""


def subjects_query(graph: str) -> str:
    """SELECT every subject of the graph (a prune keeps those of the traces it removes).
    Unsorted: a store sorts by decoding every IRI again for each comparison (36 s for
    16,000 subjects where the answer unsorted took 0.6 s), and an endpoint read in pages
    is read in an order of the backend's (``RemoteBackend``)."""
    return f"""SELECT DISTINCT ?x WHERE {{ GRAPH {graph} {{ ?x ?p ?o }} }}"""


def utc_text(moment: datetime) -> str:
    """An instant as the mapper writes ``xsd:dateTime`` (UTC, ``Z``, no trailing zeros)."""
    aware = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return canonical_datetime(aware.astimezone(timezone.utc).isoformat())


@dataclass(frozen=True)
class PrunePlan:
    """What a prune removes and the tombstones it leaves (not yet stored)."""

    cutoff: str
    policy: str
    runs: tuple[str, ...]
    """The runs removed (IRIs), sorted."""
    entries: tuple[Entry, ...]
    """Their chain entries (first bundles, revisions, annotations), removed with them."""
    tombstones: tuple[Tombstone, ...]
    subjects: tuple[str, ...]
    """Every subject removed (IRIs)."""


def _trace(subject: str) -> str:
    """The trace hex of an IRI the mapper names under a trace; ``""`` for any other."""
    parts = subject.split(":")
    return parts[2] if len(parts) > 3 and subject.startswith(_BASE) else ""


def _instant(lexical: str) -> datetime:
    moment = datetime.fromisoformat(canonical_datetime(lexical).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def pruned_traces(
    rows: Iterable[Mapping[str, str | None]], cutoff: datetime
) -> dict[str, list[str]]:
    """Trace hex -> its runs, for each trace whose every run (``runs_query``'s rows) ended
    before ``cutoff``.  A time that cannot be read keeps its trace: prune removes only what
    it knows is old."""
    verdicts: dict[str, bool] = {}
    runs: dict[str, list[str]] = {}
    for row in rows:
        session = row["session"] or ""
        trace = _trace(session)
        ended = row["end"] or row["start"] or ""
        try:
            old = _instant(ended) < cutoff
        except ValueError:
            old = False
        verdicts[trace] = verdicts.get(trace, True) and old and bool(trace)
        runs.setdefault(trace, []).append(session)
    return {trace: sorted(runs[trace]) for trace, old in verdicts.items() if old}


def plan_prune(
    backend: QueryBackend, graph: str, *, cutoff: datetime, policy: str, now: datetime
) -> PrunePlan:
    """What pruning the runs of ``graph`` (an IRI term) that ended before ``cutoff``
    removes, read through ``backend``; ``policy`` and ``now`` go into the tombstones."""
    traces = pruned_traces(backend.query(runs_query(graph)).rows, cutoff)
    runs = sorted(run for found in traces.values() for run in found)
    removed = [
        entry
        for row in backend.query(entries_query(graph)).rows
        if (entry := _entry(row)) is not None and _trace(entry.of) in traces
    ]
    subjects = (
        [
            row["x"] or ""
            for row in backend.query(subjects_query(graph)).rows
            if _trace(row["x"] or "") in traces
        ]
        if traces
        else []
    )
    cut = utc_text(cutoff)
    tombstones = tombstones_for(removed, runs, cutoff=cut, policy=policy, time=utc_text(now))
    return PrunePlan(
        cut,
        policy,
        tuple(runs),
        tuple(sorted(removed, key=lambda e: (e.chain, e.sequence))),
        tuple(tombstones),
        tuple(subjects),
    )


def prune(
    plan: PrunePlan, *, exporter: ProvExporter, chain: ChainWriter, graph: str, now_ns: int
) -> list[str]:
    """Carry ``plan`` out in ``graph`` (an IRI term): its tombstones, entries of ``chain``,
    stored and checkpointed, then its runs removed.  The tombstones' IRIs; raises
    :class:`PruneError` saying how far it got."""
    if not plan.runs:
        return []
    refused = exporter.cannot_remove()
    if refused is not None:
        raise PruneError(f"{refused}; nothing was pruned")
    records = []
    nodes = []
    for tombstone in plan.tombstones:
        triples = chain.sealer.tombstone(tombstone)
        nodes.append(triples[0][0][1:-1])
        records.append(ProvRecord(_NO_TRACE, triples[0][0], tuple(triples), graph=graph))
    stored = not records or (
        exporter.export(records) is ExportResult.SUCCESS
        and chain.checkpoint(exporter, now_ns, graph=graph)
        and exporter.force_flush()
    )
    if not stored:
        raise PruneError("the tombstones were not stored (see the log above); nothing was pruned")
    if not exporter.remove(graph, list(plan.subjects)):
        raise PruneError(
            "the tombstones are stored but the runs were not all removed (see the log above): "
            "run the same prune again to finish it"
        )
    return nodes


def ranges(plan: PrunePlan) -> list[dict[str, object]]:
    """The plan's tombstones as ``prune --format json`` lists them."""
    return [
        {"chain": t.chain, "first": t.first, "last": t.last, "runs": t.runs}
        for t in plan.tombstones
    ]
