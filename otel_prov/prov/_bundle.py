"""Tamper evidence: each session's provenance as a ``prov:Bundle`` with a content hash.

The content of a session is every triple whose subject is the session, an activity
``oprov:partOf`` it (transitively), an entity one of those generated or used, or the
qualified start of a sub-session among them.  An activity marked ``oprov:remoteParent``
(recorded by another process, an MCP server say, after or before the session was
sealed) and what lies under it are not: the session's process never saw them.  Agent
descriptions are shared between sessions and left out; the links to them are in.

Canonical form (``otel-prov-nt-sorted-1``): each triple as one N-Triples line written by
``otel_prov.prov._rdf`` (the mapper never writes blank nodes, literals are escaped one way,
dateTimes and integers are canonical), duplicates removed, lines sorted by code point,
each ended by ``\\n``, UTF-8.  The hash is SHA-256 over that text.  The bundle also keeps
a manifest (one short hash per subject) so that a check can name what changed, and may
point to the previous bundle of the same agent with its hash: a chain in which a deleted
or rewritten session shows.

Everything here is pure: the same triples give the same bundle.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence

from otel_prov._version import __version__
from otel_prov.prov._iris import agent_iri, entity_iri
from otel_prov.prov._rdf import Triple, datetime_from_ns, literal
from otel_prov.prov._vocab import RDF_TYPE, O, P

__all__ = [
    "CANONICALIZATION",
    "agent_of",
    "bundle_iri",
    "bundle_triples",
    "bundles_in",
    "canonical_text",
    "chain_triples",
    "content_hash",
    "manifest",
    "session_content",
]

CANONICALIZATION = "otel-prov-nt-sorted-1"


def bundle_iri(session: str) -> str:
    return entity_iri(session, "bundle")


def session_content(triples: Iterable[Triple], session: str) -> list[Triple]:
    """The triples that make up a session (see the module documentation)."""
    triples = list(triples)
    parents: dict[str, str] = {s: o for s, p, o in triples if p == O.partOf}
    apart = {s for s, p, _ in triples if p == O.remoteParent}

    def inside(activity: str) -> bool:
        seen = set()
        while activity not in seen:
            if activity == session:
                return True
            if activity in apart:
                return False
            seen.add(activity)
            parent = parents.get(activity)
            if parent is None:
                return False
            activity = parent
        return False

    activities = {s for s in {session, *parents} if inside(s)}
    entities = {s for s, p, o in triples if p == P.wasGeneratedBy and o in activities}
    entities |= {o for s, p, o in triples if p == P.used and s in activities}
    starts = {o for s, p, o in triples if p == P.qualifiedStart and s in activities}
    subjects = activities | entities | starts
    bundle = bundle_iri(session)
    return [t for t in triples if t[0] in subjects and t[0] != bundle]


def _lines(triples: Iterable[Triple]) -> list[str]:
    """The canonical N-Triples lines, deduplicated and sorted by code point.

    Every line of a subject starts with ``<subject> ``, and no such prefix is a prefix of
    another subject's, so in this order each subject's lines stand together.
    """
    return sorted({f"{s} {p} {o} .\n" for s, p, o in triples})


def _digest(lines: Iterable[str]) -> str:
    return "sha256:" + hashlib.sha256("".join(lines).encode()).hexdigest()


def canonical_text(triples: Iterable[Triple]) -> str:
    return "".join(_lines(triples))


def content_hash(triples: Iterable[Triple]) -> str:
    return _digest(_lines(triples))


def _manifest(lines: list[str], session: str) -> dict[str, str]:
    prefix = session[1:].rsplit(":", 1)[0] + ":"
    found: dict[str, str] = {}
    for subject, group in itertools.groupby(lines, key=lambda line: line[: line.index(" ")]):
        found[subject[1:-1].removeprefix(prefix)] = _digest(group)[7:23]
    return dict(sorted(found.items()))


def manifest(triples: Iterable[Triple], session: str) -> dict[str, str]:
    """Subject -> the first 16 hex digits of the hash of its triples.

    Subjects are written relative to the session's trace (``urn:otel-prov:<trace>:``).
    """
    return _manifest(_lines(triples), session)


def bundle_triples(
    session: str, generated_ns: int | None, content: Sequence[Triple]
) -> list[Triple]:
    """The bundle that describes ``session``: hash, manifest, canonical form, version."""
    bundle = bundle_iri(session)
    lines = _lines(content)
    triples = [
        (bundle, RDF_TYPE, P.Bundle),
        (bundle, RDF_TYPE, P.Entity),
        (bundle, O.bundleOf, session),
        (bundle, O.contentHash, literal(_digest(lines))),
        (bundle, O.canonicalization, literal(CANONICALIZATION)),
        (
            bundle,
            O.manifest,
            literal(json.dumps(_manifest(lines, session), separators=(",", ":"))),
        ),
        (bundle, O.exporterVersion, literal(f"otel-prov {__version__}")),
    ]
    if generated_ns is not None:
        triples.append((bundle, P.generatedAtTime, datetime_from_ns(generated_ns)))
    return triples


def chain_triples(bundle: str, previous: Mapping[str, str] | None) -> list[Triple]:
    """Link ``bundle`` to the previous bundle of the same agent (``{"bundle", "hash"}``)."""
    if not previous:
        return []
    return [
        (bundle, O.previousBundle, previous["bundle"]),
        (bundle, O.previousHash, literal(previous["hash"])),
    ]


def bundles_in(triples: Sequence[Triple]) -> list[tuple[str, str, str]]:
    """(bundle, session, content hash) of every bundle among ``triples``."""
    sessions = {s: o for s, p, o in triples if p == O.bundleOf}
    hashes = {s: o for s, p, o in triples if p == O.contentHash}
    return [
        (bundle, session, hashes[bundle][1:-1])
        for bundle, session in sessions.items()
        if bundle in hashes
    ]


def agent_of(triples: Sequence[Triple], session: str) -> str:
    """The session's AI agent (its IRI term), or ``""`` when it has none.

    The agent is known by its type where ``triples`` hold it, else by its IRI family
    (a session's stored content, or a record of late spans, need not hold the type)."""
    agents = {s for s, p, o in triples if p == RDF_TYPE and o == O.AIAgent}
    for s, p, o in triples:
        if s == session and p == P.wasAssociatedWith and (o in agents or o.startswith(_AGENTS)):
            return o
    return ""


_AGENTS = agent_iri("")[:-1]
"""The IRI prefix of every AI agent's IRI (``<urn:otel-prov:agent:``)."""
