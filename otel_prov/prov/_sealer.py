"""Sealing across records: a writer's chain, and revisions for spans that come late.

The mapper seals each session it sees in one record (``_bundle``).  Two things need
memory of earlier records, kept here (pure: no threads, clocks or I/O; the writer passes
the time, its chain id and its signer):

* **The chain.**  Every bundle sealed here is the next entry of the writer's chain
  (``_chain``): chain id, sequence number and the previous entry's hash, signed with the
  writer's key when it has one.  Nothing is read from the store: a new writer starts a
  new chain, so writers never branch each other's chains.  :meth:`Sealer.checkpoint`
  states the head, for the writer to store and append to its checkpoint file.
* **Revisions.**  Spans of a sealed session can arrive later: a child that outlived the
  late-span grace, or the session span itself after the session was exported
  ``incomplete`` on timeout.  Their triples change the session's content, so the
  record gets a new bundle ``<session>:bundle-N`` that ``prov:wasRevisionOf`` the
  previous one and hashes the whole content as it now stands, the next entry of the
  same chain; ``verify`` checks the newest.  Only sessions sealed while a span of their
  trace was still open are remembered for this (``seal(whole=False)``), up to
  ``remember`` of them (oldest out): a run whose every span had ended gets no late span
  of its own process.  Spans of a session forgotten by then are exported unsealed, and
  ``verify`` names them as added.
* **Streamed steps.**  A run still open can be sealed step by step (:meth:`Sealer.seal_step`,
  ``_stream``): each entry seals only the triples it adds, and the run's record when it
  ends (:meth:`Sealer.seal`) is its final entry, over its whole content.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from otel_prov.prov._bundle import (
    CANONICALIZATION,
    bundle_iri,
    bundle_triples,
    bundles_in,
    session_content,
)
from otel_prov.prov._chain import Checkpoint, Entry, Signer, Tombstone, entry_triples, tombstone_iri
from otel_prov.prov._iris import entity_iri, owner_span
from otel_prov.prov._rdf import Triple, canonical_datetime, parse_literal
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._stream import (
    abandoned_view,
    delta_bundle_triples,
    running_view,
    step_delta,
)
from otel_prov.prov._vocab import O, P

__all__ = ["Sealer"]


@dataclass
class _Sealed:
    """A sealed session: its newest bundle, and its content, worked out only when a
    revision needs it (most sessions never get one)."""

    session: str
    bundle: str
    revision: int
    _triples: list[Triple]
    """The content, or the sealed triples it is taken from (see ``_worked_out``); never
    changed in place."""
    _worked_out: bool = True

    @property
    def content(self) -> list[Triple]:
        if not self._worked_out:
            self._triples = session_content(self._triples, self.session)
            self._worked_out = True
        return self._triples


@dataclass
class _Streamed:
    """A run open and streamed: its newest bundle and every triple written for it."""

    bundle: str
    revision: int
    written: set[Triple]


class Sealer:
    """Makes each bundle an entry of the writer's chain and adds revision bundles to
    records, in the order they are exported."""

    def __init__(self, *, chain: str, signer: Signer | None = None, remember: int = 1024) -> None:
        self.chain = chain
        self._signer = signer
        self.sequence = 0
        """The number of the last entry sealed (0: none yet)."""
        self.head = ""
        """The hash of the last entry sealed."""
        self._sealed: collections.OrderedDict[str, _Sealed] = collections.OrderedDict()
        self._of_trace: dict[str, set[str]] = {}
        """Trace IRI prefix -> its remembered sessions: a record looks at its own only."""
        self._remember = remember
        self._streamed: dict[str, _Streamed] = {}
        """Session IRI term -> the run streamed so far, until its record at the end."""

    def continue_session(
        self, session: str, bundle: str, revision: int, content: Iterable[Triple]
    ) -> None:
        """A session the destination already holds sealed: its newest bundle (the
        ``revision``-th, 1 for the first), and its content as stored.

        Sealed again (``otel-prov import`` of a file imported before, or of more spans of
        its trace), the session then gets no second bundle and no second chain entry, only
        a revision when the new spans change what is stored.
        """
        self._keep(session, _Sealed(session, bundle, revision, list(content)))

    def checkpoint(self, now_ns: int) -> Checkpoint | None:
        """The chain's head now, signed; ``None`` before the first entry."""
        if not self.sequence:
            return None
        return Checkpoint.made(self.chain, self.sequence, self.head, now_ns, self._signer)

    def tombstone(self, tombstone: Tombstone) -> list[Triple]:
        """``tombstone`` as the chain's next entry (``otel-prov prune``): its triples,
        linked and signed as a bundle's entry is; the entry seals the tombstone itself
        (``bundle`` and ``of`` are its IRI, ``content`` the hash of its canonical form)."""
        node = tombstone_iri(self.chain, self.sequence + 1)
        triples = tombstone.triples(node)
        return triples + self._enter(node, node, triples)

    def _enter(
        self, bundle: str, of: str, triples: Sequence[Triple], revises: str = ""
    ) -> list[Triple]:
        """The next entry of the chain, for ``bundle`` (described in ``triples``)."""
        described = {p: o for s, p, o in triples if s == bundle}
        time = described.get(P.generatedAtTime)
        form = described.get(O.canonicalization)
        entry = Entry(
            chain=self.chain,
            sequence=self.sequence + 1,
            previous=self.head,
            bundle=bundle[1:-1],
            of=of[1:-1],
            content=parse_literal(described[O.contentHash]),
            canonicalization=parse_literal(form) if form else CANONICALIZATION,
            revises=revises[1:-1],
            time=canonical_datetime(parse_literal(time)) if time else "",
        )
        self.sequence, self.head = entry.sequence, entry.hash
        return entry_triples(entry, self._signer)

    def continue_stream(
        self, session: str, bundle: str, revision: int, stored: Iterable[Triple]
    ) -> None:
        """A run still open that the destination holds streamed (by a process that stopped:
        a receiver restarted on its journal, a dead agent's write-ahead log): its newest
        entry (``bundle``, the ``revision``-th) and every triple stored of it.  Its next
        entries follow that one, and its end takes back what those wrote and it does not."""
        self._streamed[session] = _Streamed(bundle, revision, set(stored))

    def seal_abandoned(
        self,
        session: str,
        bundle: str,
        revision: int,
        stored: Sequence[Triple],
        now_ns: int,
        *,
        known: Sequence[Triple] = (),
    ) -> ProvRecord:
        """The final entry, in this writer's chain, of a streamed run whose writer is gone:
        ``stored`` is what the store holds of it, its newest entry ``bundle`` (the
        ``revision``-th), ``known`` what else is known of it (a dead process's log: the
        tool call it died in).  The run ends as far as both go, ``incomplete`` where it
        said ``running`` (``_stream.abandoned_view``), the ``running`` statuses taken back."""
        self.continue_stream(session, bundle, revision, stored)
        whole = list(dict.fromkeys([*stored, *known]))
        triples, retracted = self._end_stream(session, abandoned_view(whole), now_ns)
        return ProvRecord(
            trace_id=session[len("<urn:otel-prov:") : len("<urn:otel-prov:") + 32],
            root=session,
            triples=tuple(triples),
            retracted=tuple(retracted),
        )

    def seal_step(self, record: ProvRecord, now_ns: int) -> ProvRecord | None:
        """The next streamed entry of the run still open ``record.root``, from ``record``,
        the mapping of a window of it (``_stream_window``: its open spans as snapshots, no
        bundle): only what was not written before, sealed (see ``_stream``); ``None`` when
        it adds nothing, or when the run was sealed whole already (a timeout)."""
        session = record.root
        if not session or session in self._sealed:
            return None
        streamed = self._streamed.get(session)
        written = streamed.written if streamed is not None else set[Triple]()
        content, rest = step_delta(running_view(record.triples, session), session, written)
        if not content:
            return None
        revision = streamed.revision + 1 if streamed is not None else 1
        bundle = entity_iri(session, f"bundle-{revision}") if streamed else bundle_iri(session)
        revises = streamed.bundle if streamed is not None else ""
        described = delta_bundle_triples(bundle, session, now_ns, content, revises)
        entry = self._enter(bundle, session, described, revises=revises)
        written.update(content)
        written.update(rest)
        self._streamed[session] = _Streamed(bundle, revision, written)
        return dataclasses.replace(record, triples=(*content, *rest, *described, *entry))

    def _end_stream(
        self, session: str, triples: list[Triple], now_ns: int
    ) -> tuple[list[Triple], list[Triple]]:
        """(added, retracted): the final entry of a streamed run, from its whole record now
        (``triples``, the mapper's bundle left out): what it adds, a bundle over its whole
        content as the record says it, and what the streamed entries wrote of the run's
        spans that the record does not say (a ``running`` status, what a window got
        wrong), to be taken back.  What belongs to no span (agents, tools) stays."""
        streamed = self._streamed.pop(session)
        final = dict.fromkeys(triples)
        new = [t for t in final if t not in streamed.written]
        retracted = sorted(
            t for t in streamed.written if t not in final and owner_span(t[0]) is not None
        )
        content = session_content(final, session)
        bundle = entity_iri(session, f"bundle-{streamed.revision + 1}")
        described = _renamed(bundle_triples(session, now_ns, content), session, bundle)
        described.append((bundle, P.wasRevisionOf, streamed.bundle))
        entry = self._enter(bundle, session, described, revises=streamed.bundle)
        self._keep(session, _Sealed(session, bundle, streamed.revision + 1, content))
        return [*new, *described, *entry], retracted

    def knows(self, session: str) -> bool:
        """Whether this sealer sealed or streamed ``session`` (an IRI term), as far as it
        remembers."""
        return session in self._sealed or session in self._streamed

    def streams(self, session: str) -> bool:
        """Whether ``session`` (an IRI term) is a run streamed so far: its record at the end
        may come without the mapper's bundle (``map_spans(unbundled=...)``), since its
        final entry hashes its content itself."""
        return session in self._streamed

    def seal(self, record: ProvRecord, now_ns: int, *, whole: bool = False) -> ProvRecord:
        """``record`` sealed: each bundle an entry, late spans a revision.  ``whole``: no
        span of the record's trace was still open, so nothing can come late to revise
        its sessions, which are then not remembered (see the module documentation)."""
        triples = list(record.triples)
        added: list[Triple] = []
        retracted: list[Triple] = []
        first_sealed = set()
        sealed_here: list[tuple[str | None, str]] = [(b, s) for b, s, _ in bundles_in(triples)]
        if record.root in self._streamed and all(s != record.root for _, s in sealed_here):
            sealed_here.append((None, record.root))  # mapped without its bundle: see seal_step
        for bundle, session in sealed_here:
            if session in self._streamed:
                # Its steps were streamed: this record is the run's final entry.
                triples, taken_back = self._end_stream(
                    session, [t for t in triples if t[0] != bundle], now_ns
                )
                retracted += taken_back
                first_sealed.add(session)
                if whole:
                    self._forget(session)
                continue
            if session in self._sealed:
                # Sealed before (exported incomplete): this bundle is replaced by a revision.
                triples = [t for t in triples if t[0] != bundle]
                continue
            assert bundle is not None  # only a streamed run's record comes without one
            added += self._enter(bundle, session, triples)
            first_sealed.add(session)
            if not whole:
                # Never changed in place below (only rebound), so its content can wait.
                self._keep(session, _Sealed(session, bundle, 1, triples, _worked_out=False))
        prefix = f"<urn:otel-prov:{record.trace_id}:"
        retracted += self._end_mistaken_streams(prefix, first_sealed, record.triples)
        for session in sorted(self._of_trace.get(prefix, set()) - first_sealed):
            sealed = self._sealed[session]
            before = sealed.content
            content = session_content(before + triples, session)
            if set(content) == set(before):
                continue
            revision = entity_iri(session, f"bundle-{sealed.revision + 1}")
            revised = _renamed(bundle_triples(session, now_ns, content), session, revision)
            added += revised
            added.append((revision, P.wasRevisionOf, sealed.bundle))
            # A revision is the chain's next entry, as a new bundle is.
            added += self._enter(revision, session, revised, revises=sealed.bundle)
            self._keep(session, _Sealed(session, revision, sealed.revision + 1, content))
            if whole:
                self._forget(session)
        if not added and not retracted and len(triples) == len(record.triples):
            return record
        return dataclasses.replace(
            record, triples=tuple(triples + added), retracted=(*record.retracted, *retracted)
        )

    def _end_mistaken_streams(
        self, prefix: str, runs: set[str], record: Sequence[Triple]
    ) -> list[Triple]:
        """What to take back of the streams of a trace's record that its runs (``runs``)
        are not: a receiver streams the steps of a run before the run's own span comes,
        under the parent they share, and that may have been a sub-agent's session, not
        the run.  What such a stream wrote that the record does not say goes (the run's
        mark, its start); its entries stay in the chain, over what they added."""
        streams = [s for s in self._streamed if s.startswith(prefix) and s not in runs]
        if not streams:
            return []
        final = set(record)
        subjects = {t[0] for t in final}
        mistaken = [s for s in streams if s in subjects]  # another run may still be open
        taken_back: list[Triple] = []
        for session in mistaken:
            written = self._streamed.pop(session).written
            taken_back += sorted(
                t for t in written if t not in final and owner_span(t[0]) is not None
            )
        return taken_back

    def _keep(self, session: str, sealed: _Sealed) -> None:
        self._sealed[session] = sealed
        self._sealed.move_to_end(session)
        self._of_trace.setdefault(_trace_prefix(session), set()).add(session)
        while len(self._sealed) > self._remember:
            self._forget(next(iter(self._sealed)))

    def _forget(self, session: str) -> None:
        del self._sealed[session]
        sessions = self._of_trace[_trace_prefix(session)]
        sessions.discard(session)
        if not sessions:
            del self._of_trace[_trace_prefix(session)]


def _trace_prefix(session: str) -> str:
    """``<urn:otel-prov:<trace>:`` of a session IRI term (``...:<trace>:<span>>``)."""
    return session[: session.rindex(":") + 1]


def _renamed(triples: Iterable[Triple], session: str, bundle: str) -> list[Triple]:
    """``bundle_triples`` (written for the session's first bundle IRI) moved to ``bundle``."""
    first = bundle_iri(session)
    return [(bundle if s == first else s, p, o) for s, p, o in triples]
