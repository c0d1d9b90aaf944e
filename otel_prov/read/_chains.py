"""``verify``'s view of the writers' chains: every entry and checkpoint stored, checked.

Each bundle is an entry of its writer's chain (``otel_prov.prov._chain``).  The entries
are read from the store in one query and rebuilt, and their canonical form hashed again:
so a changed content hash, chain id, sequence number or link shows in the next entry's
link; a number missing shows a removed entry; two entries with one number a replayed
one.  Checkpoints, those stored and those of a checkpoint file kept elsewhere, anchor
the head: entries removed after the last one stored show as a truncated tail.

What the hashes cannot show is an attacker who rebuilds every entry after the one they
change, and the stored checkpoints as well: only a signature (``--trust``) or a
checkpoint kept out of their reach (``--checkpoints``) shows that.

A prune's tombstones (``oprov:Tombstone``) are entries of the pruning writer's chain,
checked as entries are, and also against their own canonical form; those that hold (and,
under ``--trust``, are signed by a trusted key) turn the gaps they cover from deleted
into pruned by policy.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from otel_prov._signing import signature_valid
from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._bundle import CANONICALIZATIONS
from otel_prov.prov._chain import (
    TOMBSTONE_FORM,
    Checkpoint,
    Entry,
    Tombstone,
    chain_problems,
    entries_by_chain,
)
from otel_prov.prov._rdf import canonical_datetime
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = [
    "ChainFindings",
    "LinkedChains",
    "chain_iri",
    "check_chains",
    "linked_chains",
    "read_checkpoint_file",
    "tombstone_entry",
    "tombstones_query",
]


def entries_query(graph: str) -> str:
    """SELECT every bundle with the fields of its chain entry (unset for bundles sealed
    before chains) and its signature."""
    return f"""{SPARQL_PREFIXES}
SELECT ?bundle ?of ?hash ?form ?revises ?time ?chain ?sequence ?previous ?signature ?key
WHERE {{ GRAPH {graph} {{
  ?bundle oprov:bundleOf ?of ; oprov:contentHash ?hash .
  OPTIONAL {{ ?bundle oprov:canonicalization ?form }}
  OPTIONAL {{ ?bundle prov:wasRevisionOf ?revises }}
  OPTIONAL {{ ?bundle prov:generatedAtTime ?time }}
  OPTIONAL {{ ?bundle oprov:chainId ?chain ; oprov:sequenceNumber ?sequence }}
  OPTIONAL {{ ?bundle oprov:previousEntryHash ?previous }}
  OPTIONAL {{ ?bundle oprov:signature ?signature ; oprov:signedBy ?key }}
}} }}"""


def tombstones_query(graph: str) -> str:
    """SELECT every tombstone with its canonical form and the fields of its chain entry."""
    return f"""{SPARQL_PREFIXES}
SELECT ?node ?json ?hash ?form ?time ?chain ?sequence ?previous ?signature ?key
WHERE {{ GRAPH {graph} {{
  ?node a oprov:Tombstone ; oprov:tombstone ?json ; oprov:contentHash ?hash .
  OPTIONAL {{ ?node oprov:canonicalization ?form }}
  OPTIONAL {{ ?node prov:generatedAtTime ?time }}
  OPTIONAL {{ ?node oprov:chainId ?chain ; oprov:sequenceNumber ?sequence }}
  OPTIONAL {{ ?node oprov:previousEntryHash ?previous }}
  OPTIONAL {{ ?node oprov:signature ?signature ; oprov:signedBy ?key }}
}} }} ORDER BY ?node"""


def tombstone_entry(row: Mapping[str, str | None]) -> tuple[Entry, Tombstone | None] | None:
    """A tombstone's entry in its writer's chain and what it states (``None`` when its
    canonical form cannot be read); ``None`` for one in no chain."""
    entry = _entry(
        {
            **row,
            "bundle": row["node"],
            "of": row["node"],
            "revises": None,
            "form": row["form"] or TOMBSTONE_FORM,
        }
    )
    if entry is None:
        return None
    try:
        return entry, Tombstone.from_json(row["json"] or "")
    except ValueError:
        return entry, None


def checkpoints_query(graph: str) -> str:
    return f"""{SPARQL_PREFIXES}
SELECT ?chain ?sequence ?head ?time ?signature ?key WHERE {{ GRAPH {graph} {{
  ?c a oprov:Checkpoint ; oprov:chainId ?chain ; oprov:sequenceNumber ?sequence ;
     oprov:headHash ?head ; prov:generatedAtTime ?time .
  OPTIONAL {{ ?c oprov:signature ?signature ; oprov:signedBy ?key }}
}} }}"""


def chain_iri(chain: str) -> str:
    """What a chain is named by in ``verify``'s report (plain IRI)."""
    return f"urn:otel-prov:chain:{chain}"


def read_checkpoint_file(text: str, name: str) -> list[Checkpoint]:
    """The checkpoints of a checkpoint file; raises ``ValueError`` naming the line that is
    not one (a file that cannot be read is no evidence of anything)."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            found.append(Checkpoint.from_line(line))
        except ValueError as exc:
            raise ValueError(f"{name} line {number}: {exc}") from None
    return found


@dataclass
class ChainFindings:
    """What the chains say: per checked run (or annotation) IRI its problems and
    warnings, and per chain the problems of the chain itself."""

    problems: dict[str, list[str]] = field(default_factory=dict)
    warnings: dict[str, list[str]] = field(default_factory=dict)
    chains: dict[str, list[str]] = field(default_factory=dict)
    tombstones: dict[str, list[str]] = field(default_factory=dict)
    """Per tombstone read (all of them, when every run is checked): what it states, when
    it holds; its problems are in ``problems``."""


def _signature_problem(
    what: str, signature: str, key: str, data: bytes, trusted: Sequence[str]
) -> str | None:
    """Unsigned, signed by a key not trusted, or a signature that does not verify: which."""
    if not signature:
        return f"{what} is unsigned"
    if key not in trusted:
        return f"{what} is signed by another key ({key}), not one given with --trust"
    if not signature_valid(key, data, signature):
        return f"{what} has a bad signature (by {key}): it was changed after signing"
    return None


def _entry(row: Mapping[str, str | None]) -> Entry | None:
    if not row["chain"] or not row["sequence"]:
        return None
    try:
        sequence = int(row["sequence"])
    except ValueError:
        return None
    time = row["time"]
    return Entry(
        chain=row["chain"],
        sequence=sequence,
        previous=row["previous"] or "",
        bundle=row["bundle"] or "",
        of=row["of"] or "",
        content=row["hash"] or "",
        canonicalization=row["form"] or CANONICALIZATIONS[0],
        revises=row["revises"] or "",
        time=canonical_datetime(time) if time else "",
    )


def _stored_checkpoint(row: Mapping[str, str | None]) -> Checkpoint | None:
    try:
        return Checkpoint(
            row["chain"] or "",
            int(row["sequence"] or ""),
            row["head"] or "",
            canonical_datetime(row["time"] or ""),
            row["key"] or "",
            row["signature"] or "",
        )
    except ValueError:
        return None


@dataclass(frozen=True)
class LinkedChains:
    """What the chains say of their entries once checked together (:func:`linked_chains`)."""

    of_entry: dict[str, list[str]]
    """Per entry (a bundle's IRI, or a tombstone's): its problems."""
    of_chain: dict[str, list[str]]
    """Per chain id: the chain's own problems (entries deleted, a truncated tail)."""
    pruned: dict[str, str]
    """Per tombstone that holds (its IRI): what it states (:meth:`Tombstone.says`)."""


def linked_chains(
    entries: Iterable[Entry],
    checkpoints: Mapping[str, Sequence[Checkpoint]],
    tombstones: Mapping[str, tuple[Entry, Tombstone | None]],
    *,
    untrusted: Collection[str] = (),
    starts: Mapping[str, int] | None = None,
) -> LinkedChains:
    """The links of every chain, a prune's tombstones judged with them: what a store's
    verify and an audit package's check both say, from the same facts.

    ``entries``: every entry, the tombstones' own included; ``checkpoints``: per chain,
    those that count (their signatures already checked); ``tombstones``: by IRI, each
    one's entry and what it states (``None``: unreadable).  A tombstone covers the gap it
    names when its canonical form hashes to its entry's content and it is not in
    ``untrusted`` (its signature failed ``--trust``); it holds, stating what it pruned,
    when no entry and no checkpoint contradicts it either.  ``starts``: per chain the
    first sequence number there should be (1 when not given)."""
    of_entry: dict[str, list[str]] = {}
    covering: dict[str, dict[str, Tombstone]] = {}
    for node, (entry, tombstone) in tombstones.items():
        if tombstone is None:
            of_entry.setdefault(node, []).append(
                f"tombstone {node} is not a {TOMBSTONE_FORM} tombstone"
            )
        elif tombstone.content != entry.content:
            of_entry.setdefault(node, []).append(
                f"tombstone {node} was changed: its {TOMBSTONE_FORM} form does not hash to "
                "the content its chain entry sealed"
            )
        elif node not in untrusted:
            covering.setdefault(tombstone.chain, {})[node] = tombstone
    chains = entries_by_chain(entries)
    of_chain: dict[str, list[str]] = {}
    for chain in sorted(chains.keys() | checkpoints.keys() | covering.keys()):
        per_entry, problems = chain_problems(
            chain,
            chains.get(chain, []),
            checkpoints.get(chain, []),
            covering.get(chain),
            first=(starts or {}).get(chain, 1),
        )
        for bundle, found in per_entry.items():
            of_entry.setdefault(bundle, []).extend(found)
        if problems:
            of_chain[chain] = problems
    pruned = {
        node: tombstone.says()
        for chain in covering.values()
        for node, tombstone in chain.items()
        if not of_entry.get(node)
    }
    return LinkedChains(of_entry, of_chain, pruned)


def check_chains(
    backend: QueryBackend,
    graph: str,
    checked: Iterable[str],
    *,
    whole: bool,
    trusted: Sequence[str] = (),
    kept: Sequence[Checkpoint] = (),
) -> ChainFindings:
    """The chain findings for the runs (and annotations) ``checked``; ``whole``: every run
    is checked, so the chains' own problems (gaps, truncation) are reported too.
    ``trusted``: key ids whose signatures are required; ``kept``: checkpoints from a file."""
    wanted = set(checked)
    findings = ChainFindings()
    entries: list[Entry] = []
    signatures: dict[str, tuple[str, str]] = {}
    for row in backend.query(entries_query(graph)).rows:
        entry = _entry(row)
        of = row["of"] or ""
        if entry is None:
            if of in wanted:
                note = (
                    f"bundle {row['bundle']} is in no writer's chain (sealed by an otel-prov "
                    "before chains, or added by hand): nothing shows a run removed beside it"
                )
                (findings.problems if trusted else findings.warnings).setdefault(of, []).append(
                    note
                )
            continue
        entries.append(entry)
        signatures[entry.bundle] = (row["signature"] or "", row["key"] or "")
    pruned: dict[str, tuple[Entry, Tombstone | None]] = {}
    for row in backend.query(tombstones_query(graph)).rows:
        read = tombstone_entry(row)
        if read is not None:
            pruned[read[0].bundle] = read
            signatures[read[0].bundle] = (row["signature"] or "", row["key"] or "")
    for entry, _ in pruned.values():
        entries.append(entry)
        if whole:
            wanted.add(entry.of)
    stored = [
        checkpoint
        for row in backend.query(checkpoints_query(graph)).rows
        if (checkpoint := _stored_checkpoint(row)) is not None
    ]
    of_bundle = {entry.bundle: entry.of for entry in entries}
    untrusted: set[str] = set()
    if trusted:
        for entry in entries:
            if entry.of not in wanted and entry.bundle not in pruned:
                continue
            signature, key = signatures[entry.bundle]
            problem = _signature_problem(
                f"entry {entry.bundle}", signature, key, entry.canonical(), trusted
            )
            if problem and entry.bundle in pruned:
                untrusted.add(entry.bundle)  # a tombstone not trusted covers nothing
            if problem and entry.of in wanted:
                findings.problems.setdefault(entry.of, []).append(problem)
    anchors: dict[str, list[Checkpoint]] = {}
    for source, checkpoints in (("stored", stored), ("kept", kept)):
        for checkpoint in checkpoints:
            problem = (
                _signature_problem(
                    f"the {source} checkpoint of sequence {checkpoint.sequence}",
                    checkpoint.signature,
                    checkpoint.key,
                    checkpoint.canonical(),
                    trusted,
                )
                if trusted
                else None
            )
            if problem:
                findings.chains.setdefault(checkpoint.chain, []).append(
                    f"chain {checkpoint.chain}: {problem}"
                )
                continue
            anchors.setdefault(checkpoint.chain, []).append(checkpoint)
    linked = linked_chains(entries, anchors, pruned, untrusted=untrusted)
    for bundle, problems in linked.of_entry.items():
        if of_bundle[bundle] in wanted:
            findings.problems.setdefault(of_bundle[bundle], []).extend(problems)
    if whole:
        for chain, problems in linked.of_chain.items():
            findings.chains.setdefault(chain, []).extend(problems)
        for node in pruned:
            findings.tombstones[node] = [linked.pruned[node]] if node in linked.pruned else []
    return findings
