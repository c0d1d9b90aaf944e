"""``otel-prov verify``: recompute each session's hash from the store and check its bundle.

A session passes when the triples stored for it hash to the value its newest
``prov:Bundle`` recorded (a bundle is revised, ``prov:wasRevisionOf``, when spans of the
session arrive after it was sealed), its bundles' entries in their writers' chains are
intact (``_chains``: linked, numbered without a gap, signed by a trusted key when
``trusted`` keys are given), and PROV-CONSTRAINTS 30 (start <= end),
34 (generation within its activity), 37 (generation before use) and 55 (nothing both
Entity and Activity) hold on it, and every value kept in the blob store is still there,
unchanged.  Times are only ordered on one clock: where 37 compares a generation on one
service with a use on another, and the second clock is behind by no more than
:data:`CLOCK_SKEW_BOUND_S`, the check warns of clock skew and still passes.  A failure
names what changed: the subjects whose triples differ, are missing, or were added.
The agent label readers show is the one sealed with the session; a session sealed
before that fails as not covering it.

An evaluation added after the run (``otel-prov annotate``) has a bundle of its own,
an entry of its writer's chain; it is checked the same way, with the run it judges, and never
changes the run's check.

Gates are checks of what the record says, not of whether it was altered.
``tool_use_verified``: a session whose agent was given tools (``oprov:declaredTool``)
must have at least one tool call that succeeded; an answer given without any tool
result either rests on data never fetched or comes from an agent whose tool
declaration is stale, and an auditor should look at it.  ``plan_followed``: every
step of a plan the run made (``otel_prov.plan``) was executed or explicitly skipped;
otherwise the agent departed from its plan, or the plan changed without the record
saying so.
"""

from __future__ import annotations

import dataclasses
import json
import math
import urllib.parse
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone

from otel_prov.exporters._content import run_content, stored_content
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._blobs import BlobError, read_blob
from otel_prov.prov._bundle import (
    CANONICALIZATIONS,
    agent_of,
    content_hash,
    manifest,
)
from otel_prov.prov._chain import Checkpoint
from otel_prov.prov._rdf import (
    Triple,
    by_predicate,
    instant_order,
    iri,
    literal,
    named,
    parse_literal,
)
from otel_prov.prov._stream import STREAMED, StreamedEntry, delta_problems
from otel_prov.prov._vocab import PP, RDF_TYPE, RDFS_LABEL, O, P
from otel_prov.read._chains import chain_iri, check_chains
from otel_prov.read._graph_lines import GraphLines
from otel_prov.read._listing import find_sessions
from otel_prov.read._retention import unfinished
from otel_prov.read._sparql import SPARQL_PREFIXES, values

__all__ = [
    "CLOCK_SKEW_BOUND_S",
    "CONSTRAINTS",
    "GATES",
    "SessionCheck",
    "constraint_violations",
    "verify_sessions",
]


def verify_rows_query(graph: str, *, sessions: Sequence[str] | None = None) -> str:
    """SELECT each run with its newest bundle and what that one revised.

    Runs are those marked ``oprov:runStartedAt``.  ``sessions``: only these runs
    (checking one run of 10,000 should not read the bundles of all of them).  Unsorted:
    the store sorts by decoding every IRI again and again (a second and a half over
    10,000 runs), where the caller sorts the plain strings in an instant.
    """
    among = f"VALUES ?session {{ {values(sessions)} }}\n  " if sessions is not None else ""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?session ?bundle ?hash ?manifest ?canonicalization ?revised ?revisedManifest
WHERE {{ GRAPH {graph} {{
  {among}?session oprov:runStartedAt ?start .
  OPTIONAL {{
    ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; oprov:manifest ?manifest .
    OPTIONAL {{ ?bundle oprov:canonicalization ?canonicalization }}
    FILTER NOT EXISTS {{ ?newer prov:wasRevisionOf ?bundle }}
    OPTIONAL {{
      ?bundle prov:wasRevisionOf ?revised .
      OPTIONAL {{ ?revised oprov:manifest ?revisedManifest }}
    }}
  }}
}} }}"""


def streamed_entries_query(graph: str, sessions: Sequence[str]) -> str:
    """SELECT ``?s ?b ?h ?m``: the streamed entries of runs still open (``_stream``)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?s ?b ?h ?m WHERE {{ GRAPH {graph} {{
  VALUES ?s {{ {values(sessions)} }}
  ?b oprov:bundleOf ?s ; oprov:canonicalization {literal(STREAMED)} ;
     oprov:contentHash ?h ; oprov:manifest ?m .
}} }} ORDER BY ?s ?b"""


def annotation_rows_query(graph: str) -> str:
    """SELECT each annotation (``?session``, as :func:`verify_rows_query` names what a
    bundle seals), the run its evaluation judges and its bundle."""
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?session ?run ?bundle ?hash ?manifest ?canonicalization
WHERE {{ GRAPH {graph} {{
  ?session a oprov:Annotation .
  OPTIONAL {{ ?evaluation prov:wasGeneratedBy ?session ; oprov:evaluates ?run }}
  OPTIONAL {{
    ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; oprov:manifest ?manifest .
    OPTIONAL {{ ?bundle oprov:canonicalization ?canonicalization }}
  }}
}} }} ORDER BY ?session"""


def bundle_hashes_query(graph: str, bundles: Sequence[str] | None = None) -> str:
    """SELECT ``?b ?h``: every bundle stored (or those of ``bundles``), with its content
    hash; unsorted, as :func:`verify_rows_query`."""
    among = f"VALUES ?b {{ {values(bundles)} }}\n  " if bundles is not None else ""
    return f"""{SPARQL_PREFIXES}
SELECT ?b ?h WHERE {{ GRAPH {graph} {{
  {among}?b oprov:bundleOf ?s ; oprov:contentHash ?h .
}} }}"""


CONSTRAINTS = (
    "30 start precedes end",
    "34 generation within its activity",
    "37 generation precedes usage",
    "55 entity and activity disjoint",
)
"""The PROV-CONSTRAINTS checked on each session's content, by name."""
CLOCK_SKEW_BOUND_S = 300
"""How far (seconds) the clocks of two services may disagree before verify stops calling
it skew.  Time across hosts is not ordered: a tool that ran on a host 5 s behind the
agent's "starts" before the arguments it used were made, with nothing changed.  NTP
keeps hosts within milliseconds; five minutes is the tolerance Kerberos allows, past
which a host's clock is itself a fault worth failing on."""
GATES = ("tool_use_verified", "plan_followed")


@dataclass(frozen=True)
class SessionCheck:
    """What ``verify`` found about one run: ``ok`` when ``problems`` is empty."""

    session: str
    bundle: str | None
    problems: tuple[str, ...] = ()
    gates: Mapping[str, bool | None] = field(default_factory=dict)
    """Gate name -> passed (None: not applicable, e.g. no tools were declared)."""
    revised: tuple[str, ...] = ()
    """What the newest bundle, a revision, changed from the bundle it revised (from the
    two manifests): ``changed: ...``, ``added: ...``, ``removed: ...`` parts."""
    warnings: tuple[str, ...] = ()
    """What is odd but no sign of an edit: clock skew between services within
    :data:`CLOCK_SKEW_BOUND_S`."""
    notes: tuple[str, ...] = ()
    """What a prune's tombstone (the check's ``session``) states: a range of a chain
    pruned by policy, no failure."""

    @property
    def ok(self) -> bool:
        return not self.problems


_REVISION_COLUMNS = ("revised", "revisedManifest")
"""Columns of a run's row that an annotation, never revised, leaves empty."""
_TIMED = (P.startedAtTime, P.endedAtTime, P.generatedAtTime)
_LINKS = (P.wasGeneratedBy, P.used, RDF_TYPE)


def constraint_violations(triples: Iterable[Triple]) -> list[str]:
    """The :data:`CONSTRAINTS` ``triples`` break, one line each naming up to 3 culprits.

    Checked in Python over the session's own triples: ``verify --all`` runs it once per
    run, where a SPARQL store per session cost more than reading the whole graph.
    Times are compared as instants, as SPARQL compares ``xsd:dateTime`` values.
    """
    return _constraints(by_predicate(triples))[0]


def _constraints(index: Mapping[str, list[tuple[str, str]]]) -> tuple[list[str], list[str]]:
    """:func:`constraint_violations` over a run's triples indexed by predicate, and the
    warnings for what 37 would otherwise fail across two services' clocks, within
    :data:`CLOCK_SKEW_BOUND_S`."""
    times: dict[str, dict[str, list[tuple[str, str]]]] = {p: {} for p in _TIMED}
    links: dict[str, dict[str, list[str]]] = {p: {} for p in _LINKS}
    for p in _TIMED:
        for s, o in index.get(p, ()):
            times[p].setdefault(s, []).append(instant_order(parse_literal(o)))
    for p in _LINKS:
        for s, o in index.get(p, ()):
            links[p].setdefault(s, []).append(o)
    started, ended = times[P.startedAtTime], times[P.endedAtTime]
    generated = times[P.generatedAtTime]
    found: dict[str, set[str]] = {name: set() for name in CONSTRAINTS}
    for x, starts in started.items():
        if any(start > end for start in starts for end in ended.get(x, ())):
            found[CONSTRAINTS[0]].add(x)
    for x, activities in links[P.wasGeneratedBy].items():
        for at in generated.get(x, ()):
            for a in activities:
                ends = ended.get(a, ())
                if any(at < start or any(at > end for end in ends) for start in started.get(a, ())):
                    found[CONSTRAINTS[1]].add(x)
    services = dict(index.get(O.serviceName, ()))
    skewed: dict[tuple[str, str], tuple[float, set[str]]] = {}
    for user, used in links[P.used].items():
        for x in used:
            late = [(g, u) for g in generated.get(x, ()) for u in started.get(user, ()) if g > u]
            if not late:
                continue
            clocks = _clocks(links[P.wasGeneratedBy].get(x, ()), user, services)
            seconds = max(_seconds_apart(g, u) for g, u in late)
            if clocks is None or seconds > CLOCK_SKEW_BOUND_S:
                found[CONSTRAINTS[2]].add(x)
            else:
                most, culprits = skewed.get(clocks, (0.0, set()))
                skewed[clocks] = (max(most, seconds), culprits | {x})
    for x, types in links[RDF_TYPE].items():
        if P.Entity in types and P.Activity in types:
            found[CONSTRAINTS[3]].add(x)
    violations = [
        f"PROV constraint {name} violated by {_culprits(xs)}" for name, xs in found.items() if xs
    ]
    warnings = [
        f"clock skew of up to {seconds:.3g} s between services {clocks[0]} and {clocks[1]}: "
        f"PROV constraint {CONSTRAINTS[2]} does not hold across their clocks for "
        f"{_culprits(xs)}; within {CLOCK_SKEW_BOUND_S} s, taken as their hosts' clocks "
        "disagreeing, not as an edit"
        for clocks, (seconds, xs) in sorted(skewed.items())
    ]
    return violations, warnings


def _culprits(subjects: Iterable[str]) -> str:
    """Up to 3 of ``subjects``, named to people, in a stable order."""
    return ", ".join(sorted(named(x) for x in subjects)[:3])


def _clocks(
    generators: Iterable[str], user: str, services: Mapping[str, str]
) -> tuple[str, str] | None:
    """The two services whose clocks timed a generation (by ``generators``) and its use
    (by ``user``); ``None`` when one clock timed both, or a service is not known (then
    nothing says the clocks differ)."""
    theirs = {services.get(a) for a in generators}
    mine = services.get(user)
    if mine is None or None in theirs or len(theirs) != 1 or mine in theirs:
        return None
    return parse_literal(theirs.pop() or ""), parse_literal(mine)


def _seconds_apart(later: tuple[str, str], earlier: tuple[str, str]) -> float:
    """Seconds between two :func:`~otel_prov.prov._rdf.instant_order` keys; infinite
    for a year Python's ``datetime`` cannot hold (only a hand-edited store has one)."""

    def seconds(instant: tuple[str, str]) -> float:
        whole, fraction = instant
        epoch = datetime.fromisoformat(whole).replace(tzinfo=timezone.utc).timestamp()
        return epoch + (int(fraction) / 10 ** len(fraction) if fraction else 0.0)

    try:
        return seconds(later) - seconds(earlier)
    except ValueError:
        return math.inf


def _tool_use_verified(
    index: Mapping[str, list[tuple[str, str]]], session: str
) -> tuple[bool | None, str]:
    """The ``tool_use_verified`` gate over a run's triples by predicate: passed (None: no
    tools declared) and why not.

    Only calls of the declared tools count: a handoff or an undeclared helper that
    succeeded says nothing about whether the declared data was fetched.
    """
    declared = sorted(
        urllib.parse.unquote(o[1:-1].rsplit(":", 1)[1])
        for s, o in index.get(O.declaredTool, ())
        if s == session
    )
    if not declared:
        return None, ""
    calls = {s for s, o in index.get(RDF_TYPE, ()) if o == O.ToolCall}
    of_declared = {
        s for s, o in index.get(O.toolName, ()) if s in calls and parse_literal(o) in declared
    }
    if any(s in of_declared and o == literal("ok") for s, o in index.get(O.status, ())):
        return True, ""
    tried = (
        f"{len(of_declared)} call(s) of them, none succeeded" if of_declared else "no call of them"
    )
    return False, (
        f"gate tool_use_verified failed: the agent declared {', '.join(declared)} and made "
        f"{tried}; either the data was not fetched (the answer rests on no tool result) "
        "or the declaration is stale (the agent no longer needs these tools)"
    )


def _plan_followed(index: Mapping[str, list[tuple[str, str]]]) -> tuple[bool | None, str]:
    """The ``plan_followed`` gate over a run's triples by predicate: passed (None: the run
    made no plan) and why not.

    Every step of every plan must have been executed or explicitly skipped; a step that
    failed, was rolled back or has no outcome leaves the plan unfollowed.
    """
    steps = {s for s, _ in index.get(PP.isStepOfPlan, ())}
    if not steps:
        return None, ""

    def of_steps(predicate: str) -> dict[str, str]:
        return {s: parse_literal(o) for s, o in index.get(predicate, ()) if s in steps}

    labels, outcomes = of_steps(RDFS_LABEL), of_steps(O.stepOutcome)
    numbers = {s: int(n) for s, n in of_steps(O.stepNumber).items()}
    unfollowed = sorted(
        (numbers.get(step, 0), labels.get(step, ""), outcomes.get(step, "no outcome"))
        for step in steps
        if outcomes.get(step) not in ("executed", "skipped")
    )
    if not unfollowed:
        return True, ""
    listed = "; ".join(f"step {n} {label!r}: {outcome}" for n, label, outcome in unfollowed)
    return False, (
        f"gate plan_followed failed: {listed}; either the agent departed from its plan "
        "(the answer rests on steps not carried out) or the plan changed and the record "
        "says so nowhere (mark such steps skipped)"
    )


def _unsealed_agent_labels(
    content: list[Triple], index: Mapping[str, list[tuple[str, str]]]
) -> list[str]:
    """Sessions sealed before their agent's label was (``oprov:agentLabel``): readers show
    the shared agent's ``rdfs:label`` for them, which anyone could have changed."""
    sessions = {s for s, o in index.get(RDF_TYPE, ()) if o == O.AgentSession}
    labelled = {s for s, _ in index.get(O.agentLabel, ())}
    return [
        f"the agent label shown for {session[1:-1]} is not sealed (the session was sealed "
        "before labels were): it is the shared agent's, which no bundle covers"
        for session in sorted(sessions - labelled)
        if agent_of(content, session)
    ]


def _blob_problems(index: Mapping[str, list[tuple[str, str]]]) -> list[str]:
    """Values kept in the blob store must still be there and match their recorded hash."""
    locations = index.get(O.contentLocation, ())
    if not locations:
        return []
    hashes = {s: parse_literal(o) for s, o in index.get(O.contentHash, ())}
    problems = []
    for s, o in locations:
        try:
            read_blob(o[1:-1], hashes.get(s))
        except BlobError as exc:
            problems.append(f"{exc} (the value of {named(s)})")
    return problems


def _diff(recorded: dict[str, str], now: dict[str, str]) -> list[str]:
    changed = sorted(k for k in recorded.keys() & now.keys() if recorded[k] != now[k])
    missing = sorted(recorded.keys() - now.keys())
    added = sorted(now.keys() - recorded.keys())
    parts = [
        f"changed: {', '.join(changed)}" if changed else "",
        f"missing: {', '.join(missing)}" if missing else "",
        f"added: {', '.join(added)}" if added else "",
    ]
    return [part for part in parts if part]


def verify_sessions(
    backend: QueryBackend,
    graph: str,
    ident: str | None,
    *,
    trusted: Sequence[str] = (),
    checkpoints: Sequence[Checkpoint] = (),
) -> list[SessionCheck]:
    """Check every outermost session (or those ``ident`` names), and the writers' chains
    their bundles are entries of (``_chains``): ``trusted`` key ids (``ed25519:...``) make a
    signature by one of them required; ``checkpoints`` (a checkpoint file's) anchor the
    chains' heads.  A chain's own problems (entries missing from it) are reported, with
    every run, as a check named by the chain (``urn:otel-prov:chain:<id>``), and each
    prune's tombstone, with every run, as a check named by it, its ``notes`` saying what
    it covers; a prune stopped before it removed all it planned (its intent still
    stored) fails as a check named by its intent until a ``prune`` finishes it.

    Every run of an embedded store is checked from one read of the whole graph (as
    N-Triples, written by the store itself): one query per run would read the same
    triples through ten thousand small queries.  The store writes the graph out in parts
    on every core (it lets go of the interpreter meanwhile), each part filed by trace as
    it comes, while the bundles are read in a thread beside.  Runs named by ``ident`` are
    checked from their own triples and bundles only, however many runs the store holds.
    """
    wanted = find_sessions(backend, graph, ident) if ident is not None else None
    whole = backend if ident is None and isinstance(backend, EmbeddedBackend) else None
    with ThreadPoolExecutor(max_workers=1) as pool:
        read = pool.submit(_bundle_rows, backend, graph, wanted)
        graph_lines = GraphLines(whole.ntriples(graph[1:-1])) if whole is not None else None
        rows, stored_hashes = read.result()
    streamed = _streamed_entries(backend, graph, rows)
    checks: dict[str, SessionCheck] = {}
    for row in rows:
        session = row["session"] or ""
        if session in checks:
            continue
        if row["bundle"] is None:
            problem = "no bundle: the session's record was removed or never sealed"
            checks[session] = SessionCheck(session, None, (problem,))
            continue
        if graph_lines is not None:
            candidates = graph_lines.of_trace(session.split(":")[2]) + graph_lines.others
            content = run_content(candidates, session, row["bundle"])
        else:
            content = stored_content(backend, graph, session, row["bundle"])
        checks[session] = _check(session, row, content, stored_hashes, streamed.get(session))
    findings = check_chains(
        backend, graph, checks, whole=ident is None, trusted=trusted, kept=checkpoints
    )
    found = [
        dataclasses.replace(
            check,
            problems=check.problems + tuple(findings.problems.get(session, ())),
            warnings=check.warnings + tuple(findings.warnings.get(session, ())),
        )
        for session, check in checks.items()
    ]
    found += [
        SessionCheck(chain_iri(chain), None, tuple(problems))
        for chain, problems in sorted(findings.chains.items())
    ]
    found += [
        SessionCheck(node, None, tuple(findings.problems.get(node, ())), notes=tuple(says))
        for node, says in sorted(findings.tombstones.items())
    ]
    if ident is None:
        found += [
            SessionCheck(each.node, None, (each.says(),)) for each in unfinished(backend, graph)
        ]
    return found


def _streamed_entries(
    backend: QueryBackend, graph: str, rows: Sequence[Mapping[str, str | None]]
) -> dict[str, list[StreamedEntry]]:
    """Run -> its streamed entries, for the runs whose newest bundle is one (still open)."""
    running = sorted(
        {row["session"] or "" for row in rows if row.get("canonicalization") == STREAMED}
    )
    found: dict[str, list[StreamedEntry]] = {}
    if running:
        for row in backend.query(streamed_entries_query(graph, running)).rows:
            entry = StreamedEntry(row["b"] or "", row["h"] or "", row["m"] or "")
            found.setdefault(row["s"] or "", []).append(entry)
    return found


_LINKED_BUNDLES = ("revised",)
"""Columns of a row naming another bundle, whose stored hash the check compares."""


def _bundle_rows(
    backend: QueryBackend, graph: str, wanted: list[str] | None
) -> tuple[list[dict[str, str | None]], dict[str | None, str | None]]:
    """The rows to check (each run's, then each annotation's; all, or those of the runs
    ``wanted``) and the stored hash of every bundle they link to.

    Rows come sorted by run from Python: the embedded store sorts by decoding each IRI
    again for every comparison, which cost more than the rest of reading the bundles.
    """
    query = verify_rows_query(graph, sessions=wanted)
    rows = sorted(backend.query(query).rows, key=lambda row: row["session"] or "")
    runs = set(wanted) if wanted is not None else {row["session"] for row in rows}
    for row in backend.query(annotation_rows_query(graph)).rows:
        # An annotation is checked with the run it judges (and left out of --all if that
        # run is gone: the run's own check says so).
        if row["run"] in runs:
            rows.append({**row, **dict.fromkeys(_REVISION_COLUMNS)})
    linked = (
        sorted({row[name] or "" for row in rows for name in _LINKED_BUNDLES if row.get(name)})
        if wanted is not None
        else None
    )
    hashes = backend.query(bundle_hashes_query(graph, linked)).rows
    return rows, {row["b"]: row["h"] for row in hashes}


def _check(
    session: str,
    row: Mapping[str, str | None],
    content: list[Triple],
    stored_hashes: Mapping[str | None, str | None],
    streamed: Sequence[StreamedEntry] | None = None,
) -> SessionCheck:
    """One run's check against its newest bundle (``row``) and the bundles stored; a run
    still open (its newest bundle a streamed entry) against its ``streamed`` entries."""
    problems = []
    if row["revised"] and row["revised"] not in stored_hashes:
        problems.append(f"revision chain broken: {row['revised']} is missing")
    form = row.get("canonicalization") or CANONICALIZATIONS[0]
    running = form == STREAMED
    if running:
        problems.extend(delta_problems(content, streamed or ()))
    elif form not in CANONICALIZATIONS:
        problems.append(
            f"sealed in canonical form {form!r}, which this otel-prov does not know "
            f"(it knows {', '.join(CANONICALIZATIONS)}): a newer otel-prov can check it"
        )
    elif content_hash(content, form) != row["hash"]:
        recorded = json.loads(row["manifest"] or "{}")
        changes = "; ".join(_diff(recorded, manifest(content, iri(session), form)))
        problems.append(f"content changed since export ({changes})")
    # Manifests are read only for a revision: most runs have none, and parsing two
    # JSON objects per run was a tenth of verify --all.
    # A streamed entry's manifest lists lines, not subjects: nothing to compare by subject.
    before = _subject_manifest(row["revisedManifest"]) if row["revised"] else {}
    after = _subject_manifest(row["manifest"]) if row["revised"] else {}
    revised = _diff(before, after)
    rewritten = _rewritten_content(before, after)
    if row["revised"] and rewritten:
        problems.append(
            f"revision {row['bundle']} changed content recorded before, which is written "
            f"once ({', '.join(rewritten)}): late spans add to a session, they never edit it"
        )
    index = by_predicate(content)
    problems.extend(_unsealed_agent_labels(content, index))
    violations, warnings = _constraints(index)
    problems.extend(violations)
    problems.extend(_blob_problems(index))
    gates: dict[str, tuple[bool | None, str]] = {
        # A run still open has not yet done what it will: its gates wait for its end.
        "tool_use_verified": (None, "") if running else _tool_use_verified(index, iri(session)),
        "plan_followed": (None, "") if running else _plan_followed(index),
    }
    problems.extend(why for passed, why in gates.values() if passed is False)
    return SessionCheck(
        session,
        row["bundle"],
        tuple(problems),
        {name: passed for name, (passed, _) in gates.items()},
        tuple(revised) if row["revised"] else (),
        tuple(warnings),
    )


def _subject_manifest(text: str | None) -> dict[str, str]:
    """A bundle's manifest by subject; ``{}`` for a streamed entry's (a list of lines)."""
    found = json.loads(text or "{}")
    return found if isinstance(found, dict) else {}


_WRITTEN_ONCE = (":question", ":thought", ":arguments", ":observation", ":answer")
"""Manifest subjects of content entities: a value, once recorded, is never re-recorded
(spans that arrive late add activities and entities, or finish an activity)."""


def _rewritten_content(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    return sorted(
        subject
        for subject in before.keys() & after.keys()
        if before[subject] != after[subject] and subject.endswith(_WRITTEN_ONCE)
    )
