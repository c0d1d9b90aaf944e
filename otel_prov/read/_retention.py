"""``otel-prov prune``: old runs removed by a retention policy, a signed tombstone left per
removed range of each writer's chain, so that ``verify`` tells the gap from a deletion.

A run goes when every run of its trace ended before the cutoff (a run's end is its
session's ``prov:endedAtTime``, its start when it has none): a trace's runs and everything
named under the trace (``urn:otel-prov:<trace>:...``: its sessions, activities, entities,
bundles, revisions, annotations and their bundles) go together, so nothing is left that
names what is gone.  The agents, tools and models runs share stay.

The order is what makes an interrupted prune safe: the tombstones are stored first (with
the pruning writer's checkpoint), and in the same write a prune intent
(``oprov:PruneIntent``: every trace the prune removes); the runs are removed after, the
intent last.  Removal goes subject by subject in the store's order, so a prune killed
half way may have removed a run's session (the ``oprov:runStartedAt`` a plan finds runs
by) and left its bundle and steps: no plan would find them again.  The intent still names
their trace, so the next ``prune``, from any process or machine, finishes it
(:func:`finish`) before it plans anything, and ``verify`` names the intent until then.
Never runs gone with no tombstone, nor a half-removed run that nothing finishes.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._reading import QueryBackend
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._chain import Entry, Tombstone, tombstones_for
from otel_prov.prov._rdf import (
    RDF_TYPE,
    Triple,
    canonical_datetime,
    datetime_literal,
    instant,
    literal,
)
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._vocab import RDFS_LABEL, O, P
from otel_prov.read._chains import _entry, entries_query
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = [
    "PruneError",
    "PrunePlan",
    "Unfinished",
    "finish",
    "plan_prune",
    "prune",
    "pruned_traces",
    "ranges",
    "runs_query",
    "subjects_query",
    "unfinished",
    "unfinished_query",
    "utc_text",
]

_BASE = "urn:otel-prov:"
_NO_TRACE = "0" * 32
_INTENT = "urn:otel-prov:prune:"
"""Where prune intents are named: ``prune`` is no trace, so a plan never removes one."""


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


def unfinished_query(graph: str) -> str:
    """SELECT every prune intent still stored, with its traces, time and policy."""
    return f"""{SPARQL_PREFIXES}
SELECT ?node ?trace ?time ?policy WHERE {{ GRAPH {graph} {{
  ?node a oprov:PruneIntent ; prov:generatedAtTime ?time .
  OPTIONAL {{ ?node oprov:prunesTrace ?trace }}
  OPTIONAL {{ ?node rdfs:label ?policy }}
}} }}"""


@dataclass(frozen=True)
class Unfinished:
    """A prune whose tombstones are stored and whose removal did not (all) happen."""

    node: str
    """Its intent (plain IRI)."""
    traces: tuple[str, ...]
    """The traces it removes (hex), sorted."""
    time: str
    """When it ran (``xsd:dateTime``, UTC)."""
    policy: str

    def says(self) -> str:
        """What ``verify`` reports of it."""
        return (
            f"a prune ({self.policy}, at {self.time}) stopped before it removed all of the "
            f"{len(self.traces)} trace{'' if len(self.traces) == 1 else 's'} it had "
            "tombstones stored for: removal in progress, finish it with otel-prov prune "
            "(any cutoff: an unfinished prune is finished first)"
        )


def unfinished(backend: QueryBackend, graph: str) -> list[Unfinished]:
    """The prunes of ``graph`` (an IRI term) whose removal is still to finish, oldest first."""
    traces: dict[str, set[str]] = {}
    about: dict[str, tuple[str, str]] = {}
    for row in backend.query(unfinished_query(graph)).rows:
        node = row["node"] or ""
        traces.setdefault(node, set()).update([row["trace"]] if row["trace"] else [])
        about[node] = (row["time"] or "", row["policy"] or "")
    return sorted(
        (Unfinished(node, tuple(sorted(traces[node])), *about[node]) for node in traces),
        key=lambda found: (found.time, found.node),
    )


def _subjects_of(backend: QueryBackend, graph: str, traces: Iterable[str]) -> list[str]:
    """Every subject of ``graph`` named under one of ``traces`` (hex)."""
    wanted = set(traces)
    if not wanted:
        return []
    return [
        row["x"] or ""
        for row in backend.query(subjects_query(graph)).rows
        if _trace(row["x"] or "") in wanted
    ]


def finish(
    found: Sequence[Unfinished], *, backend: QueryBackend, exporter: ProvExporter, graph: str
) -> int:
    """Remove what the prunes ``found`` (:func:`unfinished`) did not: every subject still
    stored under their traces, each intent last.  The subjects removed; raises
    :class:`PruneError`."""
    if not found:
        return 0
    refused = exporter.cannot_remove()
    if refused is not None:
        raise PruneError(f"{refused}; an unfinished prune is still to finish")
    subjects = _subjects_of(backend, graph, (t for each in found for t in each.traces))
    if not exporter.remove(graph, [*subjects, *(each.node for each in found)]):
        raise PruneError(
            "an unfinished prune could not be finished (see the log above): run prune again"
        )
    return len(subjects)


def _intent(traces: Iterable[str], policy: str, time: str) -> ProvRecord:
    """The record of a prune's intent: a new node naming every trace it removes."""
    node = f"<{_INTENT}{uuid.uuid4().hex}>"
    triples: list[Triple] = [
        (node, RDF_TYPE, O.PruneIntent),
        (node, RDF_TYPE, P.Plan),
        (node, RDFS_LABEL, literal(policy)),
        (node, P.generatedAtTime, datetime_literal(time)),
    ]
    triples += [(node, O.prunesTrace, literal(trace)) for trace in sorted(set(traces))]
    return ProvRecord(_NO_TRACE, node, tuple(triples))


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
    time: str
    """When it was planned (``xsd:dateTime``, UTC), the time its tombstones state."""


def _trace(subject: str) -> str:
    """The trace hex of an IRI the mapper names under a trace; ``""`` for any other."""
    parts = subject.split(":")
    return parts[2] if len(parts) > 3 and subject.startswith(_BASE) else ""


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
            old = instant(ended) < cutoff
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
    subjects = _subjects_of(backend, graph, traces)
    cut, at = utc_text(cutoff), utc_text(now)
    tombstones = tombstones_for(removed, runs, cutoff=cut, policy=policy, time=at)
    return PrunePlan(
        cut,
        policy,
        tuple(runs),
        tuple(sorted(removed, key=lambda e: (e.chain, e.sequence))),
        tuple(tombstones),
        tuple(subjects),
        at,
    )


def prune(plan: PrunePlan, *, pipeline: WritePipeline, now_ns: int) -> list[str]:
    """Carry ``plan`` out in the pipeline's graph: its tombstones, entries of the
    pipeline's chain, stored with its intent and checkpointed, then its runs removed, the
    intent last.  The tombstones' IRIs; raises :class:`PruneError` saying how far it got."""
    if not plan.runs:
        return []
    exporter, graph = pipeline.exporter, pipeline.graph or ""
    refused = exporter.cannot_remove()
    if refused is not None:
        raise PruneError(f"{refused}; nothing was pruned")
    records = pipeline.seal_tombstones(plan.tombstones)
    nodes = [record.root[1:-1] for record in records]
    # After the tombstones, in the same write (a transaction of the embedded store, the
    # same ordered spool of a server's): stored, it means they are too.
    intent = _intent((_trace(run) for run in plan.runs), plan.policy, plan.time)
    records.append(dataclasses.replace(intent, graph=graph))
    stored = pipeline.store(records, now_ns)
    if not stored:
        raise PruneError("the tombstones were not stored (see the log above); nothing was pruned")
    if not exporter.remove(graph, [*plan.subjects, intent.root[1:-1]]):
        raise PruneError(
            "the tombstones are stored but the runs were not all removed (see the log above): "
            "run prune again to finish it"
        )
    return nodes


def ranges(plan: PrunePlan) -> list[dict[str, object]]:
    """The plan's tombstones as ``prune --format json`` lists them."""
    return [
        {"chain": t.chain, "first": t.first, "last": t.last, "runs": t.runs}
        for t in plan.tombstones
    ]
