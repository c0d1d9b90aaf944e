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
    "Checkpoint",
    "Entry",
    "Signer",
    "checkpoint_iri",
    "entry_triples",
]

ENTRY_FORM = "otel-prov-entry-1"
"""The canonical form of a chain entry (named inside it)."""
CHECKPOINT_FORM = "otel-prov-checkpoint-1"
"""The canonical form of a checkpoint (named inside it)."""


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


def entries_by_chain(entries: Iterable[Entry]) -> dict[str, list[Entry]]:
    """Each chain's entries, by sequence number."""
    chains: dict[str, list[Entry]] = {}
    for entry in entries:
        chains.setdefault(entry.chain, []).append(entry)
    return {chain: sorted(found, key=lambda e: e.sequence) for chain, found in chains.items()}


def chain_problems(
    chain: str, entries: Sequence[Entry], checkpoints: Sequence[Checkpoint]
) -> tuple[dict[str, list[str]], list[str]]:
    """What breaks chain ``chain``: per bundle (IRI) the problems of its entry, and those of
    the chain itself (entries missing from its middle, or after the last stored, as
    ``checkpoints`` of it say).  ``entries`` sorted by sequence (:func:`entries_by_chain`).
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
    last = max(by_number, default=0)
    missing = [n for n in range(1, last + 1) if n not in by_number]
    if missing:
        of_chain.append(
            f"chain {chain}: sequence {_ranges(missing)} missing (a removed run or "
            "annotation; the entries around it are still linked by hash)"
        )
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
    return of_bundle, of_chain


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
