"""An audit package: the runs an auditor asked for, and all that proves them, in one zip
file checked with no store (``otel-prov audit-export``, ``otel-prov verify --package``).

The package holds facts as the bytes that were hashed and signed, never re-encoded, so
that checking it is hashing files: each run's content in its canonical form (the exact
bytes its bundle's content hash covers), each chain entry's canonical form
(``otel_prov.prov._chain``) with its signature beside it, the checkpoints that anchor the
entries, and the public keys.  An entry is linked to its chain by the entries after it up
to the first checkpoint at or past it: those are in the package too, for other runs by
their entry alone (IRIs and hashes; their content stays out).  A prune's tombstones of
the chains held go in too, as a store holds them, with their entries: a gap one covers
is pruned by policy, as ``verify`` of the store says (both judge the chains with
``_chains.linked_chains``).  ``manifest.json`` indexes every file with its hash and,
signed by the exporter's key (``manifest.sig``), shows that no run was dropped from the
package with its line.  docs/verification.md documents the layout for another tool.

Building reads the store (:func:`export_package`); checking (:func:`check_package`) reads
only the package's bytes.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from otel_prov._signing import public_key_pem
from otel_prov._version import __version__
from otel_prov.exporters._content import stored_content
from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._bundle import CANONICALIZATIONS, canonical_text
from otel_prov.prov._chain import (
    CHECKPOINT_FORM,
    ENTRY_FORM,
    Checkpoint,
    Entry,
    Signer,
    Tombstone,
)
from otel_prov.read._chains import (
    _entry,
    _signature_problem,
    _stored_checkpoint,
    chain_iri,
    checkpoints_query,
    entries_query,
    linked_chains,
    tombstone_entry,
    tombstones_query,
)
from otel_prov.read._package_zip import (
    MAX_JSON_DEPTH,
    Member,
    PackageError,
    digest_of,
    held_bytes,
    json_depth,
    load_json,
    read_members,
)
from otel_prov.read._verify import SessionCheck, annotation_rows_query, verify_rows_query

__all__ = ["PACKAGE_FORM", "CheckedPackage", "PackageError", "check_package", "export_package"]

PACKAGE_FORM = "otel-prov-audit-package-1"
"""The layout of a package (named in its manifest)."""
MANIFEST = "manifest.json"
MANIFEST_SIGNATURE = "manifest.sig"
README = "README.md"
_EPOCH = (1980, 1, 1, 0, 0, 0)
"""Every member's time: the same runs give the same bytes (but the manifest's date)."""


@dataclass(frozen=True)
class _Signed:
    """An entry or a checkpoint as the package holds it: its canonical bytes and
    signature (base64, empty when unsigned) by ``key``."""

    data: bytes
    signature: str
    key: str


def _window(
    entries: Sequence[Entry], ours: set[str], anchors: Iterable[int]
) -> tuple[int, int] | None:
    """The sequence numbers of a chain the package holds: from its first entry of an
    exported run to the first checkpoint at or past the last one (the chain's last entry
    stored, if no checkpoint reaches it); ``None``: no exported run is in this chain."""
    mine = [entry.sequence for entry in entries if entry.bundle in ours]
    if not mine:
        return None
    later = [n for n in anchors if n >= max(mine)]
    return min(mine), min(later) if later else max(entry.sequence for entry in entries)


def export_package(
    backend: QueryBackend,
    graph: str,
    runs: Sequence[str],
    *,
    kept: Sequence[Checkpoint] = (),
    keys: Iterable[str] = (),
    created: str,
    signer: Signer | None = None,
) -> tuple[bytes, dict[str, int]]:
    """The package of ``runs`` (plain IRIs), the evaluations added to them after
    (``annotate``) included, and its counts (runs and annotations, entries, checkpoints,
    tombstones).

    ``kept``: a checkpoint file's checkpoints (those of the store are read too); ``keys``:
    key ids whose public keys go in beside those that signed anything in the package;
    ``created``: the time the manifest states; ``signer``: the exporter's key, which signs
    the manifest (unsigned without one).
    """
    asked = set(runs)
    newest: dict[str, Mapping[str, str | None]] = {}
    # An evaluation added after a run (``annotate``) goes in with the run it judges.
    judged = [
        row for row in backend.query(annotation_rows_query(graph)).rows if row["run"] in asked
    ]
    for row in sorted(
        [*backend.query(verify_rows_query(graph, sessions=sorted(asked))).rows, *judged],
        key=lambda row: (row["session"] or "", row["bundle"] or ""),
    ):
        newest.setdefault(row["session"] or "", row)
    wanted = sorted(asked) + sorted(newest.keys() - asked)
    entries: list[Entry] = []
    signed: dict[str, tuple[str, str]] = {}
    for row in backend.query(entries_query(graph)).rows:
        entry = _entry(row)
        if entry is not None:
            entries.append(entry)
            signed[entry.bundle] = (row["signature"] or "", row["key"] or "")
    stated_by: dict[str, tuple[Tombstone, str]] = {}
    for row in backend.query(tombstones_query(graph)).rows:
        read = tombstone_entry(row)
        if read is None:
            continue
        entry, tombstone = read
        entries.append(entry)
        signed[entry.bundle] = (row["signature"] or "", row["key"] or "")
        if tombstone is not None:  # one unreadable names no chain: it covers nothing
            stated_by[entry.bundle] = (tombstone, row["json"] or "")
    checkpoints = [
        checkpoint
        for row in backend.query(checkpoints_query(graph)).rows
        if (checkpoint := _stored_checkpoint(row)) is not None
    ]
    sources = [("store", checkpoint) for checkpoint in checkpoints]
    sources += [("file", checkpoint) for checkpoint in kept]
    ours = {entry.bundle for entry in entries if entry.of in newest}
    held = {entry.chain for entry in entries if entry.bundle in ours}
    # The tombstones of the chains held, linked into the pruner's chain as a run's entry is.
    carried = {node: text for node, (t, text) in stated_by.items() if t.chain in held}
    ours |= carried.keys()
    by_chain: dict[str, list[Entry]] = {}
    for entry in entries:
        by_chain.setdefault(entry.chain, []).append(entry)
    files: dict[str, bytes] = {}
    listed: list[dict[str, object]] = []
    anchors: dict[tuple[str, bytes, str, str], list[str]] = {}
    for chain, found in sorted(by_chain.items()):
        window = _window(found, ours, (c.sequence for _, c in sources if c.chain == chain))
        if window is None:
            continue
        first, last = window
        for entry in sorted(found, key=lambda e: e.sequence):
            if first <= entry.sequence <= last:
                signature, key = signed[entry.bundle]
                listed.append(
                    _put(
                        files, f"chains/{chain}/{entry.sequence}", entry.canonical(), signature, key
                    )
                )
        for source, checkpoint in sources:
            if checkpoint.chain == chain and first <= checkpoint.sequence <= last:
                unique = (chain, checkpoint.canonical(), checkpoint.signature, checkpoint.key)
                anchors.setdefault(unique, []).append(source)
    stated = [
        {
            **_put(
                files, f"checkpoints/{chain}/{json.loads(data)['sequence']}", data, signature, key
            ),
            "from": sorted(set(found_in)),
        }
        for (chain, data, signature, key), found_in in anchors.items()
    ]
    by_bundle = {entry.bundle: entry for entry in entries}
    listed_tombstones: list[dict[str, object]] = []
    for node, text in sorted(carried.items()):
        entry = by_bundle[node]
        name = _free(files, f"tombstones/{entry.chain}/{entry.sequence}") + ".json"
        files[name] = text.encode()  # as stored: what its entry's content hash covers
        listed_tombstones.append({"tombstone": node, "content": name})
    listed_runs: list[dict[str, object]] = []
    for number, run in enumerate(wanted, 1):
        sealed = newest.get(run)
        bundle = sealed["bundle"] if sealed is not None else None
        if sealed is None or bundle is None:
            listed_runs.append({"run": run, "bundle": None, "content": None})
            continue
        form = sealed["canonicalization"] or CANONICALIZATIONS[0]
        content = stored_content(backend, graph, run, bundle)
        files[f"runs/{number}.nt"] = canonical_text(content, form).encode()
        listed_runs.append({"run": run, "bundle": bundle, "content": f"runs/{number}.nt"})
    signers = {str(item["key"]) for item in [*listed, *stated] if item["key"]} | set(keys)
    if signer is not None:
        signers.add(signer.key_id)
    key_files = []
    for key in sorted(signers):
        try:
            pem = public_key_pem(key)
        except ValueError:  # an edited store's signer: the check names it as another key
            continue
        name = f"keys/{key.removeprefix('ed25519:')[:16]}.pub"
        files[name] = pem
        key_files.append({"key": key, "file": name})
    about = {"package": PACKAGE_FORM, "created": created, "otel_prov": __version__}
    about["graph"] = graph[1:-1]
    files[README] = _readme(about, listed_runs, listed, signed=signer is not None).encode()
    manifest = {
        **about,
        "runs": listed_runs,
        "entries": listed,
        "checkpoints": stated,
        "tombstones": listed_tombstones,
        "keys": key_files,
        "files": {name: digest_of(data) for name, data in sorted(files.items())},
        "key": signer.key_id if signer is not None else None,
    }
    index = (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode()
    members = {README: files.pop(README), MANIFEST: index}
    if signer is not None:
        members[MANIFEST_SIGNATURE] = base64.b64decode(signer.sign(index))
    counts = {
        "runs": len(listed_runs),
        "entries": len(listed),
        "checkpoints": len(stated),
        "tombstones": len(listed_tombstones),
    }
    return _zip({**members, **dict(sorted(files.items()))}), counts


def _free(files: Mapping[str, bytes], stem: str) -> str:
    """``stem``, or ``stem-2`` (``-3``...) when a member of that name is taken: a second
    entry, checkpoint or tombstone of the same number (a bundle replayed in the store, or
    checkpoints of the store and the file that disagree) goes in too, and the check tells."""
    name, taken = stem, 1
    while f"{name}.json" in files:
        taken += 1
        name = f"{stem}-{taken}"
    return name


def _put(
    files: dict[str, bytes], stem: str, data: bytes, signature: str, key: str
) -> dict[str, object]:
    """``stem.json`` (the canonical bytes) and ``stem.sig`` (the raw 64-byte Ed25519
    signature, what ``openssl pkeyutl -verify`` reads), and the manifest's line for them;
    ``stem-2`` when taken (:func:`_free`)."""
    name = _free(files, stem)
    files[f"{name}.json"] = data
    if signature:
        try:
            files[f"{name}.sig"] = base64.b64decode(signature, validate=True)
        except binascii.Error:  # an edited store's: kept as it is, checking tells
            files[f"{name}.sig"] = signature.encode()
    return {
        "file": f"{name}.json",
        "signature": f"{name}.sig" if signature else None,
        "key": key or None,
    }


def _zip(members: Mapping[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(zipfile.ZipInfo(name, _EPOCH), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _readme(
    manifest: Mapping[str, object],
    runs: Sequence[Mapping[str, object]],
    entries: Sequence[Mapping[str, object]],
    *,
    signed: bool,
) -> str:
    """How to check the package by hand and with otel-prov, with its own file names."""
    run = next((r for r in runs if r["content"]), {"content": "runs/1.nt"})
    entry = next((e for e in entries if e["signature"]), None)
    sig = (
        f"""
The signature of an entry is Ed25519 over the entry file's bytes, by the key its
manifest line names (keys/ holds each key as signing.pub does; check it against the key
you were given, never trust the package's own):

    openssl pkeyutl -verify -pubin -inkey signing.pub -rawin \\
      -in {entry["file"]} -sigfile {entry["signature"]}
"""
        if entry is not None
        else "\nNo entry in this package is signed.\n"
    )
    index = (
        """
manifest.json states the SHA-256 of every other file (its "files"); manifest.sig is the
exporter's signature of manifest.json, by the key its "key" names, checked the same way
(-in manifest.json -sigfile manifest.sig): it shows that no run was dropped from the
package and from the manifest with it.
"""
        if signed
        else """
manifest.json states the SHA-256 of every other file (its "files"). It is not signed
(the exporter gave no key): anyone who holds this file can drop a run from it and from
the manifest.
"""
    )
    return f"""# Audit package ({PACKAGE_FORM})

Provenance of {len(runs)} run(s) from the graph {manifest["graph"]}, exported by otel-prov
{manifest["otel_prov"]} on {manifest["created"]}.  manifest.json lists the files.

Check it with otel-prov (no store needed):

    otel-prov verify --package THIS.zip --trust signing.pub

By hand, with standard tools (unzip it first):

    sha256sum {run["content"]}     # the run's content, in its canonical form

equals the "content" of the run's entry (chains/<chain>/<sequence>.json, the entry
whose "bundle" the manifest names for the run).  The SHA-256 of each entry file
(`sha256sum chains/<chain>/<n>.json`) is the "previous" of entry n+1 of its chain, and
the "head" of a checkpoint (checkpoints/<chain>/<n>.json) of sequence n.
{sig}{index}
Entries of other runs are here by their entry alone (IRIs and hashes), to show that the
chain goes on unbroken from the exported runs to a checkpoint; their content is not.
A gap in a chain is pruned by policy when a tombstone (tombstones/<chain>/<n>.json, the
content of the pruning writer's entry <n>) covers it, deleted otherwise.
What this proves, and what it does not: docs/verification.md of otel-prov.
"""


def _unzip(data: bytes) -> dict[str, Member]:
    return read_members(data, keep=(MANIFEST, MANIFEST_SIGNATURE))


@dataclass(frozen=True)
class _Manifest:
    """What ``manifest.json`` lists; ``key``: the exporter's key it names (``""``: none)."""

    runs: list[dict[str, object]]
    entries: list[dict[str, object]]
    checkpoints: list[dict[str, object]]
    tombstones: list[dict[str, object]]
    files: dict[str, str]
    key: str


def _manifest(files: Mapping[str, Member]) -> _Manifest:
    try:
        data = held_bytes(files, MANIFEST)
        if data is None:
            raise KeyError(MANIFEST)
        manifest = load_json(data)
        if manifest.get("package") != PACKAGE_FORM:
            raise PackageError(
                f"not a {PACKAGE_FORM} package (its manifest says {manifest.get('package')!r})"
            )
        parts = {
            part: list(manifest[part]) for part in ("runs", "entries", "checkpoints", "tombstones")
        }
        if not all(isinstance(item, dict) for items in parts.values() for item in items):
            raise PackageError("not an audit package: its manifest lists something not an object")
        hashes = dict(manifest["files"])
        if not all(isinstance(v, str) for v in hashes.values()):
            raise PackageError("not an audit package: its manifest's files are not hashes")
        return _Manifest(**parts, files=hashes, key=str(manifest.get("key") or ""))
    except KeyError as exc:
        raise PackageError(f"not an audit package: no {exc} in it") from None
    except (ValueError, TypeError, AttributeError) as exc:
        if isinstance(exc, PackageError):
            raise
        raise PackageError(f"not an audit package: its manifest is unreadable ({exc})") from None


def _signed(files: Mapping[str, Member], item: Mapping[str, object]) -> _Signed | None:
    """The bytes a manifest line names, with their signature (re-encoded in base64, as
    the store keeps it); ``None`` when the file is not in the package."""
    data = held_bytes(files, item.get("file"))
    if data is None:
        return None
    signature = held_bytes(files, item.get("signature")) if item.get("signature") else None
    return _Signed(
        data,
        base64.b64encode(signature).decode() if signature is not None else "",
        str(item.get("key") or ""),
    )


def _parsed_entry(data: bytes) -> Entry | None:
    try:
        fields = load_json(data)
        if fields.get("entry") != ENTRY_FORM:
            return None
        return Entry(
            chain=str(fields["chain"]),
            sequence=int(fields["sequence"]),
            previous=str(fields["previous"]),
            bundle=str(fields["bundle"]),
            of=str(fields["of"]),
            content=str(fields["content"]),
            canonicalization=str(fields["canonicalization"]),
            revises=str(fields["revises"]),
            time=str(fields["time"]),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


@dataclass
class _Findings:
    """Problems by what they are about: a run (IRI), a chain (id), a tombstone (IRI), or
    the package's files."""

    runs: dict[str, list[str]] = field(default_factory=dict)
    chains: dict[str, list[str]] = field(default_factory=dict)
    tombstones: dict[str, list[str]] = field(default_factory=dict)
    package: list[str] = field(default_factory=list)

    def of_chain(self, chain: str, problem: str) -> None:
        self.chains.setdefault(chain, []).append(f"chain {chain}: {problem}")


@dataclass(frozen=True)
class CheckedPackage:
    """What :func:`check_package` found: a check per run, per tombstone, per chain whose
    own links fail and one for the package's files; and the key the manifest says signed
    it (``""``: unsigned, which ``verify`` without ``--trust`` says)."""

    checks: list[SessionCheck]
    signed_by: str


def check_package(data: bytes, trusted: Sequence[str] = ()) -> CheckedPackage:
    """Check a package's bytes: every file against the manifest's hashes, each run's
    content against its entry, the chains' links among the entries held with the
    tombstones that cover their gaps (as ``verify`` of a store judges them:
    ``linked_chains``), the checkpoints that anchor them (each run's entry must be covered
    by one) and, with ``trusted`` key ids, every signature, the manifest's included.
    Raises :class:`PackageError` for bytes that are not a package."""
    files = _unzip(data)
    manifest = _manifest(files)
    found = _Findings()
    _check_files(files, manifest, trusted, found)
    exported = {str(item.get("run")) for item in manifest.runs}
    pruning = {str(item.get("tombstone")) for item in manifest.tombstones}
    entries: list[Entry] = []
    untrusted: set[str] = set()
    for item in manifest.entries:
        signed = _signed(files, item)
        if signed is None:
            found.package.append(f"{item.get('file')} is listed in the manifest, not held")
            continue
        entry = _parsed_entry(signed.data)
        if entry is None:
            found.package.append(f"{item.get('file')} is not an {ENTRY_FORM} chain entry")
            continue
        if entry.canonical() != signed.data:
            found.of_chain(entry.chain, f"{item.get('file')} is not in canonical form (edited)")
        if trusted:
            problem = _signature_problem(
                f"entry {entry.bundle}", signed.signature, signed.key, signed.data, trusted
            )
            if problem and entry.bundle in pruning:
                untrusted.add(entry.bundle)  # a tombstone not trusted covers nothing
            if problem:
                _file(found, entry, problem, exported, pruning)
        entries.append(entry)
    anchors = _anchors(files, manifest.checkpoints, trusted, found)
    held = _Held.of(entries)
    stated = _tombstones(files, manifest.tombstones, held, found)
    starts: dict[str, int] = {}
    for entry in entries:
        starts[entry.chain] = min(starts.get(entry.chain, entry.sequence), entry.sequence)
    linked = linked_chains(entries, anchors, stated, untrusted=untrusted, starts=starts)
    for bundle, problems in linked.of_entry.items():
        for problem in problems:
            _file(found, held.by_bundle[bundle], problem, exported, pruning, prefixed=True)
    for chain, problems in linked.of_chain.items():
        found.chains.setdefault(chain, []).extend(problems)
    checks = [
        _run_check(item, files, held, anchors, found)
        for item in sorted(manifest.runs, key=lambda item: str(item.get("run")))
    ]
    checks += [
        SessionCheck(chain_iri(chain), None, tuple(problems))
        for chain, problems in sorted(found.chains.items())
    ]
    for node in sorted(pruning):
        faults = tuple(found.tombstones.get(node, ()))
        says = (linked.pruned[node],) if node in linked.pruned and not faults else ()
        checks.append(SessionCheck(node, None, faults, notes=says))
    if found.package:
        checks.append(SessionCheck(MANIFEST, None, tuple(dict.fromkeys(found.package))))
    return CheckedPackage(checks, manifest.key if MANIFEST_SIGNATURE in files else "")


def _file(
    found: _Findings,
    entry: Entry,
    problem: str,
    exported: set[str],
    pruning: set[str],
    *,
    prefixed: bool = False,
) -> None:
    """File an entry's problem under what it is about: the run exported it seals, the
    tombstone it is, else its chain (an entry of another run, held to link the chain).
    ``prefixed``: the problem already names the chain."""
    if entry.bundle in pruning:
        found.tombstones.setdefault(entry.bundle, []).append(problem)
    elif entry.of in exported:
        found.runs.setdefault(entry.of, []).append(problem)
    elif prefixed:
        found.chains.setdefault(entry.chain, []).append(problem)
    else:
        found.of_chain(entry.chain, problem)


def _check_files(
    files: Mapping[str, Member], manifest: _Manifest, trusted: Sequence[str], found: _Findings
) -> None:
    """Every member but the manifest's own two is listed in its ``files`` with its hash,
    every one listed is held, and under ``trusted`` the manifest is signed by one of them:
    so a run dropped from the package and from the manifest shows."""
    if trusted:
        signature = held_bytes(files, MANIFEST_SIGNATURE)
        problem = _signature_problem(
            "the manifest",
            base64.b64encode(signature).decode() if signature is not None else "",
            manifest.key,
            held_bytes(files, MANIFEST) or b"",
            trusted,
        )
        if problem:
            found.package.append(problem)
    for name, data in sorted(files.items()):
        said = manifest.files.get(name)
        if name in (MANIFEST, MANIFEST_SIGNATURE):
            continue
        if said is None:
            found.package.append(f"{name} is in the package, not in its manifest")
        elif said != digest_of(data):
            found.package.append(
                f"{name} does not match the manifest: it hashes to {digest_of(data)}, the "
                f"manifest says {said}"
            )
    for name in sorted(manifest.files.keys() - files.keys()):
        found.package.append(f"{name} is listed in the manifest, not held")


def _tombstones(
    files: Mapping[str, Member],
    items: Sequence[Mapping[str, object]],
    held: _Held,
    found: _Findings,
) -> dict[str, tuple[Entry, Tombstone | None]]:
    """Each tombstone the manifest lists with its entry (held among the entries) and what
    it states (``None``: unreadable, which ``linked_chains`` names)."""
    stated: dict[str, tuple[Entry, Tombstone | None]] = {}
    for item in items:
        node = str(item.get("tombstone"))
        entry = held.by_bundle.get(node)
        data = held_bytes(files, item.get("content"))
        if entry is None:
            found.tombstones.setdefault(node, []).append(
                f"the entry of tombstone {node} is missing from the package"
            )
            continue
        if data is None:
            found.tombstones.setdefault(node, []).append(
                f"its content ({item.get('content')}) is missing from the package"
            )
            continue
        try:
            if json_depth(data) > MAX_JSON_DEPTH:
                raise ValueError("nested too deep")
            stated[node] = (entry, Tombstone.from_json(data.decode()))
        except (ValueError, UnicodeDecodeError):
            stated[node] = (entry, None)
    return stated


def _anchors(
    files: Mapping[str, Member],
    items: Sequence[Mapping[str, object]],
    trusted: Sequence[str],
    found: _Findings,
) -> dict[str, list[Checkpoint]]:
    """Each chain's checkpoints that count (signed by a trusted key, when keys are given)."""
    anchors: dict[str, list[Checkpoint]] = {}
    for item in items:
        signed = _signed(files, item)
        if signed is None:
            found.package.append(f"{item.get('file')} is listed in the manifest, not held")
            continue
        try:
            if json_depth(signed.data) > MAX_JSON_DEPTH:
                raise ValueError("nested too deep")
            checkpoint = Checkpoint.from_line(signed.data.decode())
        except (ValueError, UnicodeDecodeError):
            found.package.append(f"{item.get('file')} is not an {CHECKPOINT_FORM} checkpoint")
            continue
        what = f"the checkpoint of sequence {checkpoint.sequence}"
        problem = (
            _signature_problem(what, signed.signature, signed.key, signed.data, trusted)
            if trusted
            else None
        )
        if checkpoint.canonical() != signed.data:
            problem = f"{item.get('file')} is not in canonical form (edited)"
        if problem:
            found.of_chain(checkpoint.chain, problem)
            continue
        anchors.setdefault(checkpoint.chain, []).append(checkpoint)
    return anchors


@dataclass(frozen=True)
class _Held:
    """The entries held, indexed once for the runs' checks (a package may hold thousands)."""

    by_bundle: Mapping[str, Entry]
    of_run: Mapping[str, Sequence[Entry]]
    revised_by: Mapping[str, Sequence[str]]

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> _Held:
        by_bundle: dict[str, Entry] = {}
        of_run: dict[str, list[Entry]] = {}
        revised_by: dict[str, list[str]] = {}
        for entry in entries:
            by_bundle[entry.bundle] = entry
            of_run.setdefault(entry.of, []).append(entry)
            if entry.revises:
                revised_by.setdefault(entry.revises, []).append(entry.bundle)
        return cls(by_bundle, of_run, revised_by)


def _run_check(
    item: Mapping[str, object],
    files: Mapping[str, Member],
    held: _Held,
    anchors: Mapping[str, Sequence[Checkpoint]],
    found: _Findings,
) -> SessionCheck:
    """One exported run: its content against its newest entry, its revisions held, a
    checkpoint at or past its entry, its chain's window whole."""
    run, bundle = str(item.get("run")), str(item.get("bundle") or "")
    problems = list(found.runs.get(run, ()))
    if not bundle:
        problems.append("no bundle: the run's record was removed or never sealed")
        return SessionCheck(run, None, tuple(problems))
    newest = held.by_bundle.get(bundle)
    for entry in held.of_run.get(run, ()):
        if entry.revises and entry.revises not in held.by_bundle:
            problems.append(f"revision chain broken: the entry of {entry.revises} is missing")
    for later in held.revised_by.get(bundle, ()):
        problems.append(f"{bundle} was revised by {later}: its content is superseded")
    if newest is None:
        problems.append(
            f"the entry of {bundle} is missing from the package (removed, or the bundle was "
            "sealed before chains)"
        )
        return SessionCheck(run, bundle, tuple(problems))
    content = files.get(str(item.get("content")))
    if content is None:
        problems.append(f"the run's content ({item.get('content')}) is missing from the package")
    elif digest_of(content) != newest.content:
        problems.append(
            f"content edited: {item.get('content')} hashes to {digest_of(content)}, the entry "
            f"of {bundle} says {newest.content}"
        )
    if not any(c.sequence >= newest.sequence for c in anchors.get(newest.chain, ())):
        problems.append(
            f"no checkpoint in the package covers its entry (chain {newest.chain}, sequence "
            f"{newest.sequence}): nothing shows that entries after it were not removed"
        )
    if newest.chain in found.chains:
        problems.append(f"its chain is broken: see {chain_iri(newest.chain)}")
    return SessionCheck(run, bundle, tuple(problems))
