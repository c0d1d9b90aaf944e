"""Sealing across records: bundle chains per agent, and revisions for spans that come late.

The mapper seals each session it sees in one record (``_bundle``).  Two things need
memory of earlier records, kept here (pure: no threads, clocks or I/O; the processor
passes the time and what the store already holds):

* **Chains.**  Each new bundle points to the previous bundle of the same agent
  (``oprov:previousBundle`` + ``oprov:previousHash``).  A new process starts from the
  chain heads its exporter reads from the store, so chains span restarts.
* **Revisions.**  Spans of a sealed session can arrive later: a child that outlived the
  late-span grace, or the session span itself after the session was exported
  ``incomplete`` on timeout.  Their triples change the session's content, so the
  record gets a new bundle ``<session>:bundle-N`` that ``prov:wasRevisionOf`` the
  previous one and hashes the whole content as it now stands; ``verify`` checks the
  newest.  Sessions are remembered for this up to ``remember`` of them (oldest out);
  spans of a session forgotten by then are exported unsealed, and ``verify`` names them
  as added.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from otel_prov.prov._bundle import (
    agent_of,
    bundle_iri,
    bundle_triples,
    bundles_in,
    chain_triples,
    session_content,
)
from otel_prov.prov._iris import entity_iri
from otel_prov.prov._rdf import SPARQL_PREFIXES, Triple, instant_order, parse_literal
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._vocab import O, P

__all__ = ["Sealer", "chain_heads_from_rows", "chain_heads_query", "heads_in", "newest_heads"]


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


class Sealer:
    """Adds chain links and revision bundles to records, in the order they are exported."""

    def __init__(self, *, remember: int = 1024) -> None:
        self._heads: dict[str, dict[str, str]] = {}
        self._sealed: collections.OrderedDict[str, _Sealed] = collections.OrderedDict()
        self._of_trace: dict[str, set[str]] = {}
        """Trace IRI prefix -> its remembered sessions: a record looks at its own only."""
        self._remember = remember

    def continue_chains(self, heads: Mapping[str, Mapping[str, str]]) -> None:
        """Start each agent's chain from the newest bundle the store holds for it."""
        for agent, head in heads.items():
            self._heads.setdefault(agent, dict(head))

    def continue_session(
        self, session: str, bundle: str, revision: int, content: Iterable[Triple]
    ) -> None:
        """A session the destination already holds sealed: its newest bundle (the
        ``revision``-th, 1 for the first), and its content as stored.

        Sealed again (``otel-prov import`` of a file imported before, or of more spans of
        its trace), the session then gets no second bundle and no second chain link, only
        a revision when the new spans change what is stored.
        """
        self._keep(session, _Sealed(session, bundle, revision, list(content)))

    def seal(self, record: ProvRecord, now_ns: int) -> ProvRecord:
        triples = list(record.triples)
        added: list[Triple] = []
        first_sealed = set()
        for bundle, session, digest in bundles_in(triples):
            if session in self._sealed:
                # Sealed before (exported incomplete): this bundle is replaced by a revision.
                triples = [t for t in triples if t[0] != bundle]
                continue
            agent = agent_of(triples, session)
            added += chain_triples(bundle, self._heads.get(agent))
            if agent:
                self._heads[agent] = {"bundle": bundle, "hash": digest}
            # Never changed in place below (only rebound), so its content can wait.
            self._keep(session, _Sealed(session, bundle, 1, triples, _worked_out=False))
            first_sealed.add(session)
        prefix = f"<urn:otel-prov:{record.trace_id}:"
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
            # A revision takes its place in the agent's chain like a new bundle, so that one
            # added afterwards by someone else forks the chain or hangs outside it.
            agent = agent_of(before + triples, session)
            added += chain_triples(revision, self._heads.get(agent))
            if agent:
                digest = next(o for _, p, o in revised if p == O.contentHash)[1:-1]
                self._heads[agent] = {"bundle": revision, "hash": digest}
            self._keep(session, _Sealed(session, revision, sealed.revision + 1, content))
        if not added and len(triples) == len(record.triples):
            return record
        return dataclasses.replace(record, triples=tuple(triples + added))

    def _keep(self, session: str, sealed: _Sealed) -> None:
        self._sealed[session] = sealed
        self._sealed.move_to_end(session)
        self._of_trace.setdefault(_trace_prefix(session), set()).add(session)
        while len(self._sealed) > self._remember:
            forgotten, _ = self._sealed.popitem(last=False)
            sessions = self._of_trace[_trace_prefix(forgotten)]
            sessions.discard(forgotten)
            if not sessions:
                del self._of_trace[_trace_prefix(forgotten)]


def _trace_prefix(session: str) -> str:
    """``<urn:otel-prov:<trace>:`` of a session IRI term (``...:<trace>:<span>>``)."""
    return session[: session.rindex(":") + 1]


def _renamed(triples: Iterable[Triple], session: str, bundle: str) -> list[Triple]:
    """``bundle_triples`` (written for the session's first bundle IRI) moved to ``bundle``."""
    first = bundle_iri(session)
    return [(bundle if s == first else s, p, o) for s, p, o in triples]


def chain_heads_query(graph: str) -> str:
    """SELECT the first bundle of every stored session (and annotation) with its agent
    (or evaluator), hash and time."""
    return f"""{SPARQL_PREFIXES}
SELECT ?agent ?bundle ?hash ?time WHERE {{ GRAPH {graph} {{
  ?bundle oprov:bundleOf ?session ; oprov:contentHash ?hash ; prov:generatedAtTime ?time .
  FILTER NOT EXISTS {{ ?bundle prov:wasRevisionOf ?earlier }}
  ?session prov:wasAssociatedWith ?agent . ?agent a ?kind .
  FILTER(?kind IN (oprov:AIAgent, oprov:Evaluator))
}} }} ORDER BY DESC(?time)"""


def chain_heads_from_rows(rows: Iterable[Mapping[str, str | None]]) -> dict[str, dict[str, str]]:
    """Agent IRI term -> its newest bundle (``{"bundle", "hash", "time"}``), from the
    query's rows."""
    return newest_heads(
        *(
            {f"<{agent}>": {"bundle": f"<{bundle}>", "hash": digest, "time": time}}
            for agent, bundle, digest, time in (
                (row.get(k) for k in ("agent", "bundle", "hash", "time")) for row in rows
            )
            if agent and bundle and digest and time
        )
    )


def heads_in(triples: Sequence[Triple]) -> dict[str, dict[str, str]]:
    """The chain heads ``triples`` (sealed records) hold, as :func:`chain_heads_query`
    finds them once they are stored: each agent's newest first bundle."""
    revisions = {s for s, p, _ in triples if p == P.wasRevisionOf}
    times = {s: parse_literal(o) for s, p, o in triples if p == P.generatedAtTime}
    return newest_heads(
        *(
            {agent: {"bundle": bundle, "hash": digest, "time": times[bundle]}}
            for bundle, session, digest in bundles_in(triples)
            if bundle not in revisions and bundle in times and (agent := agent_of(triples, session))
        )
    )


def newest_heads(*found: Mapping[str, Mapping[str, str]]) -> dict[str, dict[str, str]]:
    """Per agent, the newest of the heads ``found`` (by ``time``, then bundle IRI)."""
    newest: dict[str, dict[str, str]] = {}
    for heads in found:
        for agent, head in heads.items():
            if agent not in newest or _order(head) > _order(newest[agent]):
                newest[agent] = dict(head)
    return newest


def _order(head: Mapping[str, str]) -> tuple[tuple[str, str], str]:
    return instant_order(head["time"]), head["bundle"]
