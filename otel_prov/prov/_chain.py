"""A writer's chain: every bundle it seals is the next entry of a chain of its own.

A bundle's content hash (``_bundle``) shows an edit of the run it seals; it does not show
a run removed, links rewritten or a run put back in another place.  So each writer (a
process's ``ProvSpanProcessor``, a ``receive``, an ``import``, an ``annotate``) keeps a
chain: an id of its own, a sequence number that counts its entries from 1, and in each
entry the hash of the entry before.  All three are inside what is hashed and signed, so a
gap in the numbers, a link that does not match, or two entries with one number, each
shows which entry is gone or was moved.  Nothing is read back from the store: a writer
that starts begins a new chain (``new_chain_id`` is the shell's: it needs randomness).

An entry is one sealed unit: a run's first bundle, a revision of it (late spans: the
same chain, the next number, ``revises`` naming the bundle it replaces), an annotation's
bundle.  Its canonical form, what is hashed and signed (:meth:`Entry.canonical`), is the
JSON object of its fields with keys sorted, no whitespace, UTF-8 (``ensure_ascii`` off)::

    {"bundle":"<bundle IRI>","canonicalization":"otel-prov-nt-sorted-2","chain":"<id>",
     "content":"sha256:<hex>","entry":"otel-prov-entry-1","of":"<run IRI>",
     "previous":"sha256:<hex>"|"","revises":"<bundle IRI>"|"","sequence":<n>,
     "time":"<xsd:dateTime>"|""}

The entry hash is ``sha256:`` + the hex SHA-256 of those bytes; an Ed25519 signature is
over the same bytes.  A checkpoint (:class:`Checkpoint`) states a chain's head at a time,
signed the same way, so that entries removed after the last one stored show too.

Entries removed by a retention policy (``otel-prov prune``) leave a :class:`Tombstone`
per removed range of a chain: the chain, the first and last sequence numbers, the last
one's entry hash, the runs, the cutoff, the policy and the time, in a canonical form of
its own whose hash is the content of an entry of the pruning writer's chain (so it is
linked and signed as any entry is).  :func:`chain_problems` then tells a gap a valid
tombstone covers (pruned) from one none covers (deleted).

Everything here is pure: a signer is handed in (``Signer``); no clocks, no I/O.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from otel_prov.prov._rdf import Triple, datetime_from_ns, integer, literal, parse_literal
from otel_prov.prov._vocab import RDF_TYPE, O, P

__all__ = [
    "CHECKPOINT_FORM",
    "ENTRY_FORM",
    "TOMBSTONE_FORM",
    "Checkpoint",
    "Entry",
    "Signer",
    "Tombstone",
    "checkpoint_iri",
    "entry_triples",
    "tombstone_iri",
    "tombstones_for",
]

ENTRY_FORM = "otel-prov-entry-1"
"""The canonical form of a chain entry (named inside it)."""
CHECKPOINT_FORM = "otel-prov-checkpoint-1"
"""The canonical form of a checkpoint (named inside it)."""
TOMBSTONE_FORM = "otel-prov-tombstone-1"
"""The canonical form of a tombstone (named inside it, and the entry's canonicalization)."""


class Signer(Protocol):
    """Signs entries and checkpoints: the key itself stays with the shell that holds it."""

    @property
    def key_id(self) -> str:
        """``ed25519:<hex of the raw public key>``: who signed, as ``verify --trust`` names keys."""

    def sign(self, data: bytes) -> str:
        """The signature of ``data``, base64."""


def _canonical(fields: Mapping[str, object]) -> bytes:
    return json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One sealed unit in a writer's chain; IRIs plain (no angle brackets)."""

    chain: str
    sequence: int
    previous: str
    """The hash of entry ``sequence - 1`` of the chain; ``""`` for the first."""
    bundle: str
    of: str
    """What the bundle seals: a run (session) or an annotation."""
    content: str
    canonicalization: str
    revises: str = ""
    time: str = ""
    """The bundle's ``prov:generatedAtTime`` (lexical form), ``""`` when it has none."""

    def canonical(self) -> bytes:
        """What is hashed and signed (see the module documentation)."""
        return _canonical(
            {
                "entry": ENTRY_FORM,
                "chain": self.chain,
                "sequence": self.sequence,
                "previous": self.previous,
                "bundle": self.bundle,
                "of": self.of,
                "content": self.content,
                "canonicalization": self.canonicalization,
                "revises": self.revises,
                "time": self.time,
            }
        )

    @property
    def hash(self) -> str:
        return _digest(self.canonical())


def entry_triples(entry: Entry, signer: Signer | None) -> list[Triple]:
    """The chain's part of the bundle's description: chain id, sequence number, previous
    entry's hash and, with a ``signer``, the signature and the key that made it."""
    bundle = f"<{entry.bundle}>"
    triples = [
        (bundle, O.chainId, literal(entry.chain)),
        (bundle, O.sequenceNumber, integer(entry.sequence)),
    ]
    if entry.previous:
        triples.append((bundle, O.previousEntryHash, literal(entry.previous)))
    if signer is not None:
        triples += [
            (bundle, O.signature, literal(signer.sign(entry.canonical()))),
            (bundle, O.signedBy, literal(signer.key_id)),
        ]
    return triples


def checkpoint_iri(chain: str, sequence: int) -> str:
    return f"<urn:otel-prov:chain:{chain}:checkpoint:{sequence}>"


@dataclass(frozen=True)
class Checkpoint:
    """A chain's head at a time: its last entry's number and hash, signed."""

    chain: str
    sequence: int
    head: str
    time: str
    key: str = ""
    signature: str = ""

    def canonical(self) -> bytes:
        """What is signed: the JSON object of the four facts (as :meth:`Entry.canonical`)."""
        return _canonical(
            {
                "checkpoint": CHECKPOINT_FORM,
                "chain": self.chain,
                "sequence": self.sequence,
                "head": self.head,
                "time": self.time,
            }
        )

    @classmethod
    def made(
        cls, chain: str, sequence: int, head: str, now_ns: int, signer: Signer | None
    ) -> Checkpoint:
        time = parse_literal(datetime_from_ns(now_ns))
        unsigned = cls(chain, sequence, head, time)
        if signer is None:
            return unsigned
        return cls(chain, sequence, head, time, signer.key_id, signer.sign(unsigned.canonical()))

    def line(self) -> str:
        """One line of a checkpoint file: the signed fields plus key and signature."""
        fields = json.loads(self.canonical())
        return json.dumps({**fields, "key": self.key, "signature": self.signature}) + "\n"

    @classmethod
    def from_line(cls, text: str) -> Checkpoint:
        """Raises ``ValueError`` for a line that is not a checkpoint."""
        try:
            fields = json.loads(text)
            if fields.get("checkpoint") != CHECKPOINT_FORM:
                raise ValueError(f"not a {CHECKPOINT_FORM} checkpoint")
            found = cls(
                str(fields["chain"]),
                int(fields["sequence"]),
                str(fields["head"]),
                str(fields["time"]),
                str(fields.get("key", "")),
                str(fields.get("signature", "")),
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"not a checkpoint: {exc}") from exc
        return found

    def triples(self) -> list[Triple]:
        node = checkpoint_iri(self.chain, self.sequence)
        triples = [
            (node, RDF_TYPE, O.Checkpoint),
            (node, RDF_TYPE, P.Entity),
            (node, O.chainId, literal(self.chain)),
            (node, O.sequenceNumber, integer(self.sequence)),
            (node, O.headHash, literal(self.head)),
            (
                node,
                P.generatedAtTime,
                f"{literal(self.time)}^^<http://www.w3.org/2001/XMLSchema#dateTime>",
            ),
        ]
        if self.signature:
            triples += [
                (node, O.signature, literal(self.signature)),
                (node, O.signedBy, literal(self.key)),
            ]
        return triples


def tombstone_iri(chain: str, sequence: int) -> str:
    """The tombstone that is entry ``sequence`` of the pruning writer's chain ``chain``."""
    return f"<urn:otel-prov:chain:{chain}:tombstone:{sequence}>"


@dataclass(frozen=True)
class Tombstone:
    """Entries ``first`` to ``last`` of chain ``chain`` removed by a retention policy.

    ``head`` is the entry hash of entry ``last``: the entry after the range (if still
    stored) names it as its previous, and a checkpoint of ``last`` as its head, so the
    tombstone is checked against what it claims was there, not only by its numbers."""

    chain: str
    first: int
    last: int
    head: str
    runs: int
    """The runs with an entry in the range (their revisions and annotations are entries too)."""
    cutoff: str
    """Runs that ended before this instant (``xsd:dateTime``, UTC) were removed."""
    policy: str
    """``before <cutoff>`` (``prune --before``) or ``keep <ISO 8601 duration>`` (``--keep``)."""
    time: str
    """When the prune ran (``xsd:dateTime``, UTC)."""

    def canonical(self) -> bytes:
        """What its entry's content hash covers: the JSON object of its fields (keys sorted,
        no whitespace, UTF-8), as :meth:`Entry.canonical`."""
        return _canonical(
            {
                "tombstone": TOMBSTONE_FORM,
                "chain": self.chain,
                "first": self.first,
                "last": self.last,
                "head": self.head,
                "runs": self.runs,
                "cutoff": self.cutoff,
                "policy": self.policy,
                "time": self.time,
            }
        )

    @property
    def content(self) -> str:
        return _digest(self.canonical())

    @classmethod
    def from_json(cls, text: str) -> Tombstone:
        """Raises ``ValueError`` for text that is not a tombstone."""
        try:
            fields = json.loads(text)
            if fields.get("tombstone") != TOMBSTONE_FORM:
                raise ValueError(f"not a {TOMBSTONE_FORM} tombstone")
            found = cls(
                str(fields["chain"]),
                _whole(fields["first"]),
                _whole(fields["last"]),
                str(fields["head"]),
                _whole(fields["runs"]),
                str(fields["cutoff"]),
                str(fields["policy"]),
                str(fields["time"]),
            )
        except (AttributeError, KeyError, TypeError) as exc:
            raise ValueError(f"not a tombstone: {exc}") from exc
        if not 1 <= found.first <= found.last:
            raise ValueError(f"not a tombstone: sequence {found.first}-{found.last}")
        return found

    def triples(self, node: str) -> list[Triple]:
        """Its description as the entry ``node`` (an IRI term): the canonical form itself,
        its hash as the entry's content, the time; :func:`entry_triples` adds the chain."""
        return [
            (node, RDF_TYPE, O.Tombstone),
            (node, RDF_TYPE, P.Entity),
            (node, O.tombstone, literal(self.canonical().decode())),
            (node, O.contentHash, literal(self.content)),
            (node, O.canonicalization, literal(TOMBSTONE_FORM)),
            (node, P.generatedAtTime, f"{literal(self.time)}{_XSD_DATETIME}"),
        ]

    def says(self) -> str:
        """What it states, for ``verify``'s report."""
        numbers = f"{self.first}" if self.first == self.last else f"{self.first}-{self.last}"
        return (
            f"pruned by policy: chain {self.chain} sequence {numbers} "
            f"({self.runs} run{'' if self.runs == 1 else 's'} that ended before {self.cutoff}; "
            f"policy {self.policy}; "
            f"pruned at {self.time})"
        )


_XSD_DATETIME = "^^<http://www.w3.org/2001/XMLSchema#dateTime>"


def _whole(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not a whole number")
    return value


def tombstones_for(
    removed: Iterable[Entry], runs: Iterable[str], *, cutoff: str, policy: str, time: str
) -> list[Tombstone]:
    """A tombstone per range of consecutive sequence numbers of a chain among the entries
    ``removed`` (by chain, then number); ``runs``: the IRIs of the runs removed, counted in
    each range their entries fall in."""
    of_run = set(runs)
    found: list[Tombstone] = []
    for chain, entries in sorted(entries_by_chain(removed).items()):
        ranges: list[list[Entry]] = []
        for entry in entries:
            if ranges and entry.sequence <= ranges[-1][-1].sequence + 1:
                if entry.sequence == ranges[-1][-1].sequence + 1:
                    ranges[-1].append(entry)
                continue
            ranges.append([entry])
        for span in ranges:
            found.append(
                Tombstone(
                    chain,
                    span[0].sequence,
                    span[-1].sequence,
                    span[-1].hash,
                    len({entry.of for entry in span if entry.of in of_run}),
                    cutoff,
                    policy,
                    time,
                )
            )
    return found


def entries_by_chain(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Each chain's entries, by sequence number."""
    chains: dict[str, list[Entry]] = {}
    for entry in entries:
        chains.setdefault(entry.chain, []).append(entry)
    return {chain: sorted(found, key=lambda e: e.sequence) for chain, found in chains.items()}


def chain_problems(
    chain: str,
    entries: Sequence[Entry],
    checkpoints: Sequence[Checkpoint],
    pruned: Mapping[str, Tombstone] | None = None,
    *,
    first: int = 1,
) -> tuple[dict[str, list[str]], list[str]]:
    """What breaks chain ``chain``: per bundle (IRI) the problems of its entry, and those of
    the chain itself (entries missing from its middle, or after the last stored, as
    ``checkpoints`` of it say).  ``entries`` sorted by sequence (:func:`entries_by_chain`).
    ``first``: the first sequence number there should be (an audit package holds a chain
    from its first exported entry on, not the entries before).

    ``pruned``: the valid tombstones of this chain, by their IRI (plain).  A missing entry
    one of them covers was pruned by policy; one none covers was deleted.  A tombstone is
    wrong (its problems filed under its IRI) when an entry it covers is still stored, or
    when the entry after its range, or a checkpoint of its last entry, names another hash
    for that entry than its ``head``.
    """
    of_bundle: dict[str, list[str]] = {}
    of_chain: list[str] = []
    by_number: dict[int, Entry] = {}
    for entry in entries:
        if entry.sequence in by_number:
            of_bundle.setdefault(entry.bundle, []).append(
                f"chain {chain}: two entries have sequence {entry.sequence} "
                f"({by_number[entry.sequence].bundle} and {entry.bundle}): one was replayed "
                "or copied in"
            )
            continue
        by_number[entry.sequence] = entry
    tombstones = pruned or {}
    covered = {n for t in tombstones.values() for n in range(t.first, t.last + 1)}
    last = max(by_number.keys() | covered, default=0)
    deleted = [n for n in range(first, last + 1) if n not in by_number and n not in covered]
    if deleted:
        of_chain.append(
            f"chain {chain}: sequence {_ranges(deleted)} missing, deleted: no tombstone of a "
            "prune covers it (a removed run or annotation; the entries around it are still "
            "linked by hash)"
        )
    for node, tombstone in tombstones.items():
        of_bundle.setdefault(node, []).extend(_tombstone_problems(node, tombstone, by_number))
    for number, entry in by_number.items():
        before = by_number.get(number - 1)
        if number == 1 and entry.previous:
            of_bundle.setdefault(entry.bundle, []).append(
                f"chain {chain}: entry {entry.bundle} is sequence 1 yet names a previous entry"
            )
        elif before is not None and entry.previous != before.hash:
            of_bundle.setdefault(entry.bundle, []).append(
                f"chain {chain}: entry {entry.bundle} (sequence {number}) does not follow "
                f"sequence {number - 1} ({before.bundle}): its previous-entry hash differs, "
                "the links were rewritten or an entry was changed"
            )
    for checkpoint in checkpoints:
        held = by_number.get(checkpoint.sequence)
        if checkpoint.sequence > last:
            of_chain.append(
                f"chain {chain}: truncated: the checkpoint of {checkpoint.time} names "
                f"sequence {checkpoint.sequence}, the last stored is {last}: sequence "
                f"{_ranges(list(range(last + 1, checkpoint.sequence + 1)))} removed"
            )
        elif held is not None and held.hash != checkpoint.head:
            of_chain.append(
                f"chain {chain}: the checkpoint of {checkpoint.time} names another head "
                f"for sequence {checkpoint.sequence} than the stored entry {held.bundle}"
            )
        for node, tombstone in tombstones.items():
            if checkpoint.sequence == tombstone.last and checkpoint.head != tombstone.head:
                of_bundle[node].append(
                    f"the checkpoint of {checkpoint.time} names another head for sequence "
                    f"{tombstone.last} of chain {chain} than tombstone {node}: it names "
                    "entries that were not those removed"
                )
    return {bundle: found for bundle, found in of_bundle.items() if found}, of_chain


def _tombstone_problems(
    node: str, tombstone: Tombstone, by_number: Mapping[int, Entry]
) -> list[str]:
    """How the entries still stored contradict ``tombstone`` (see :func:`chain_problems`)."""
    problems = []
    numbers = range(tombstone.first, tombstone.last + 1)
    still = [n for n in numbers if n in by_number]
    if still:
        problems.append(
            f"tombstone {node} says sequence {_ranges(still)} of chain {tombstone.chain} "
            "was pruned, and it is still stored (a prune that stopped half way: run it "
            "again; or a tombstone made to cover a deletion)"
        )
    after = by_number.get(tombstone.last + 1)
    if after is not None and after.previous != tombstone.head:
        problems.append(
            f"tombstone {node} names another hash for sequence {tombstone.last} of chain "
            f"{tombstone.chain} than the next entry {after.bundle} links to: it names "
            "entries that were not those removed"
        )
    return problems


def _ranges(numbers: Sequence[int]) -> str:
    """``3``, ``3-5``, ``2, 7-9``: sorted numbers as ranges."""
    parts: list[str] = []
    start = previous = numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == previous + 1:
            previous = n
            continue
        parts.append(str(start) if start == previous else f"{start}-{previous}")
        if n is not None:
            start = previous = n
    return ", ".join(parts)
