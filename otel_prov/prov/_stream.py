"""A run recorded step by step while it goes on: what each streamed entry adds, and how
it is sealed and checked.

While a session is open, the writer maps the spans of the run so far (the open ones as
snapshots) every so often.  What the store is given each time is only the *delta*: the
triples of that mapping not written before (:func:`step_delta`).  The delta's content is
sealed in an entry of the writer's chain of its own, a bundle that ``prov:wasRevisionOf``
the run's previous one, so the chain of a run streamed in ``k`` entries holds ``k``
bundles, each over what it added: sealing work grows with the steps, not with their
square.  When the run ends, its final entry hashes the whole content as it then stands
(once, as any run's bundle does), so a finished run is checked like any other.

Nothing written is ever taken back (the store is append-mostly): an open activity is
written with status ``running`` (:data:`RUNNING`), and its settled status (``ok``,
``error``, or ``incomplete`` on a timeout) is added when it ends; readers take the settled
one (``read._sparql.settled_status``).  The run's answer waits for its end (a model's
last words are the answer only once no tool follows them).

A streamed entry's canonical form (:data:`STREAMED`) is that of a bundle
(``otel-prov-nt-sorted-2`` lines, sorted, SHA-256), over the delta's lines only; its
manifest lists the first 16 hex digits of each line's SHA-256, so that a check of a run
still open can tell which stored line belongs to which entry (:func:`delta_problems`)
and then recompute each entry's hash.

Pure: no clock, no I/O; the writer passes the time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass

from otel_prov.prov._bundle import canonical_lines, content_subjects
from otel_prov.prov._iris import entity_iri
from otel_prov.prov._rdf import Triple, datetime_from_ns, literal, named
from otel_prov.prov._span_record import Role, SpanRecord, is_remote_root
from otel_prov.prov._vocab import RDF_TYPE, O, P

__all__ = [
    "RUNNING",
    "STREAMED",
    "StandIn",
    "StreamedEntry",
    "abandoned_view",
    "awaits_run",
    "cut_off_run",
    "delta_bundle_triples",
    "delta_problems",
    "line_manifest",
    "running_view",
    "step_delta",
]

STREAMED = "otel-prov-delta-1"
"""The canonical form named by a streamed entry: its hash covers the lines it added."""
RUNNING = "running"
"""The status of an activity written while it was still open."""

_INCOMPLETE = literal("incomplete")


def running_view(triples: Iterable[Triple], session: str) -> list[Triple]:
    """A mapping of a run so far, as a streamed step writes it: open activities
    ``running`` (the mapper calls an open span ``incomplete``, what a run cut off by a
    timeout or a crash is), and the session's answer and count of failed calls left for
    its end (a window of the run sees only some of its calls, ``_stream_window``).  The
    mapping is made without bundles (``map_spans(unbundled=...)``): the run's end seals."""
    answer = entity_iri(session, "answer")
    running = literal(RUNNING)
    return [
        (s, p, running if p == O.status and o == _INCOMPLETE else o)
        for s, p, o in triples
        if s != answer and o != answer and not (s == session and p == O.failedCalls)
    ]


def abandoned_view(stored: Iterable[Triple]) -> list[Triple]:
    """What a run still open in the store says once its writer is gone (killed, or silent
    past the session timeout): what it holds, every ``running`` status ``incomplete``, as
    the mapper marks what a process never saw end."""
    running = literal(RUNNING)
    return [(s, p, _INCOMPLETE if p == O.status and o == running else o) for s, p, o in stored]


class StandIn:
    """The run a receiver's spans of one trace are steps of, while the run's own span has
    not come (OTLP sends a span when it ends, so a run's own span comes last).

    Its span id is a guess from the parents the spans point to and that have not come,
    and a wrong guess streams a run that is none (a model call's parent is an iteration
    still running; a sub-agent's steps hang under its session): the parent of an
    iteration that came is taken, and only when there is one such parent, since an
    iteration's parent is its session by the model (``_span_tree``).  Until one comes a
    run is not streamed.  The guess's start, the first of the iterations under it, is
    the run's until its own span says otherwise (its end takes the guess back).
    Kept per trace, fed what comes, each span once."""

    def __init__(self) -> None:
        self._present: set[int] = set()
        self._orphans: dict[int, list[SpanRecord]] = {}
        """A parent that has not come -> the spans that came under it."""

    def add(self, spans: Iterable[SpanRecord]) -> None:
        spans = [span for span in spans if span.span_id not in self._present]
        self._present.update(span.span_id for span in spans)
        for span in spans:
            self._orphans.pop(span.span_id, None)
            parent = span.parent_id
            if parent is not None and parent not in self._present:
                self._orphans.setdefault(parent, []).append(span)

    def run(self) -> SpanRecord | None:
        """A snapshot standing for the run, open and unnamed; ``None`` while no one parent
        of an iteration is missing."""
        parents = [
            parent
            for parent, under in self._orphans.items()
            if any(span.role is Role.ITERATION for span in under)
        ]
        if len(parents) != 1:
            return None
        under = self._orphans[parents[0]]
        first = min(
            (span for span in under if span.role is Role.ITERATION), key=lambda s: s.start_ns
        )
        return SpanRecord(
            trace_id=first.trace_id,
            span_id=parents[0],
            parent_id=None,
            name="",
            start_ns=first.start_ns,
            end_ns=None,
            service_name=first.service_name,
            role=Role.SESSION,
        )


def _orphan_steps(spans: Iterable[SpanRecord]) -> list[SpanRecord]:
    """The agent spans (iterations, tool and model calls) among ``spans`` whose parent is
    not among them, earliest first; none when a session (or a server's half of a tool
    call) is among them: that is the run, and spans outside it are its trace's own."""
    spans = list(spans)
    if any(span.role is Role.SESSION or is_remote_root(span) for span in spans):
        return []
    ids = {span.span_id for span in spans}
    return sorted(
        (
            span
            for span in spans
            if span.role is not Role.SPAN
            and span.parent_id is not None
            and span.parent_id not in ids
        ),
        key=lambda span: (span.start_ns, span.span_id),
    )


def awaits_run(spans: Iterable[SpanRecord]) -> bool:
    """Are the spans of one trace the steps of a run whose own span has not come?  No
    session among them, and an agent span points to a parent that is not there: OTLP
    sends a span when it ends, so a run's span comes last, minutes after its first steps
    when a tool call takes long or waits for a person's approval.  A trace of agent spans
    whose parents all came (model calls under a web request, say) holds no run: nothing
    more is coming for it."""
    return bool(_orphan_steps(spans))


def cut_off_run(spans: Iterable[SpanRecord]) -> list[SpanRecord]:
    """Stand-ins for what the steps of a run (:func:`awaits_run`) point to, once the
    session timeout says its own span will not come (its process died, say): the run,
    open (the mapper calls it ``incomplete``), started with its first step; and each
    other parent that did not come (the iteration a long tool call runs in) an open plain
    span inside it, so that every step received is in the run's seal.  Empty when no run
    is missing.  The stand-ins bear the ids of the spans they stand for, so that a span
    that comes after all stands for itself; which of them is the run is a guess: the
    parent of the earliest iteration among them (iterations are a run's own steps), else
    of the earliest step (the parents still open when the run stopped are nested, and a
    run's first step hangs from the run itself, unless the run stopped in its first
    iteration: then that iteration stands for the run)."""
    orphans = _orphan_steps(spans := list(spans))
    if not orphans:
        return []
    run = next((span for span in orphans if span.role is Role.ITERATION), orphans[0])
    first = min((span for span in spans if span.role is not Role.SPAN), key=lambda s: s.start_ns)
    missing: dict[int, SpanRecord] = {}
    for span in orphans:
        assert span.parent_id is not None
        missing.setdefault(span.parent_id, span)
    return [
        SpanRecord(
            trace_id=run.trace_id,
            span_id=parent,
            parent_id=None if parent == run.parent_id else run.parent_id,
            name="",
            start_ns=first.start_ns if parent == run.parent_id else step.start_ns,
            end_ns=None,
            service_name=step.service_name,
            role=Role.SESSION if parent == run.parent_id else Role.SPAN,
        )
        for parent, step in missing.items()
    ]


def step_delta(
    view: Sequence[Triple], session: str, written: Collection[Triple]
) -> tuple[list[Triple], list[Triple]]:
    """(content, rest): the triples of ``view`` (:func:`running_view`) not in
    ``written``, split into the run's content, which the entry seals, and what is not
    (descriptions of agents and tools shared between runs)."""
    subjects = content_subjects(view, session)
    content: list[Triple] = []
    rest: list[Triple] = []
    for triple in dict.fromkeys(view):
        if triple not in written:
            (content if triple[0] in subjects else rest).append(triple)
    return content, rest


def _line_hash(line: str) -> str:
    return hashlib.sha256(line.encode()).hexdigest()[:16]


def line_manifest(lines: Iterable[str]) -> str:
    """The manifest of a streamed entry: the short hash of each canonical line, sorted,
    as a JSON array."""
    return json.dumps(sorted(_line_hash(line) for line in lines), separators=(",", ":"))


def delta_bundle_triples(
    bundle: str, session: str, generated_ns: int, delta: Sequence[Triple], revises: str
) -> list[Triple]:
    """The description of a streamed entry's bundle: what it seals, the hash and
    manifest of its delta, when, and the bundle it follows (``""``: the run's first)."""
    lines = canonical_lines(delta)
    digest = "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()
    triples = [
        (bundle, RDF_TYPE, P.Bundle),
        (bundle, O.bundleOf, session),
        (bundle, O.contentHash, literal(digest)),
        (bundle, O.canonicalization, literal(STREAMED)),
        (bundle, O.manifest, literal(line_manifest(lines))),
        (bundle, P.generatedAtTime, datetime_from_ns(generated_ns)),
    ]
    if revises:
        triples.append((bundle, P.wasRevisionOf, revises))
    return triples


@dataclass(frozen=True)
class StreamedEntry:
    """A streamed entry as stored: its bundle (plain IRI), hash and manifest."""

    bundle: str
    content_hash: str
    manifest: str


def delta_problems(content: Iterable[Triple], entries: Sequence[StreamedEntry]) -> list[str]:
    """What breaks the streamed entries of a run still open: each stored line of its
    ``content`` is given to the entry whose manifest lists it, each entry's lines must
    hash to its hash, and no line may belong to none."""
    owner: dict[str, int] = {}
    for number, entry in enumerate(entries):
        try:
            listed = json.loads(entry.manifest)
        except ValueError:
            listed = None
        if not isinstance(listed, list):
            return [f"streamed entry {entry.bundle} has no readable manifest"]
        for short in listed:
            owner.setdefault(str(short), number)
    lines: list[list[str]] = [[] for _ in entries]
    added: set[str] = set()
    for line in canonical_lines(content):
        found = owner.get(_line_hash(line))
        if found is None:
            added.add(named(line[: line.index(" ")]))
        else:
            lines[found].append(line)
    problems = []
    for entry, held in zip(entries, lines, strict=True):
        digest = "sha256:" + hashlib.sha256("".join(held).encode()).hexdigest()
        if digest != entry.content_hash:
            problems.append(
                f"content changed since streamed entry {entry.bundle} was sealed "
                "(a line it added was edited or removed)"
            )
    if added:
        problems.append(f"content changed since streamed (added: {', '.join(sorted(added)[:5])})")
    return problems
