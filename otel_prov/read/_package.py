"""An audit package: the runs an auditor asked for, and all that proves them, in one zip
file checked with no store (``otel-prov audit-export``, ``otel-prov verify --package``).

The package holds facts as the bytes that were hashed and signed, never re-encoded, so
that checking it is hashing files: each run's content in its canonical form (the exact
bytes its bundle's content hash covers), each chain entry's canonical form
(``otel_prov.prov._chain``) with its signature beside it, the checkpoints that anchor the
entries, and the public keys.  An entry is linked to its chain by the entries after it up
to the first checkpoint at or past it: those are in the package too, for other runs by
their entry alone (IRIs and hashes; their content stays out).  ``manifest.json`` is an
unsigned index of the files; nothing it says is trusted that the signed bytes do not
say.  docs/verification.md documents the layout for another tool.

Building reads the store (:func:`export_package`); checking (:func:`check_package`) reads
only the package's bytes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import zipfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from otel_prov._signing import public_key_pem
from otel_prov._version import __version__
from otel_prov.prov._bundle import CANONICALIZATIONS, canonical_text
from otel_prov.prov._chain import CHECKPOINT_FORM, ENTRY_FORM, Checkpoint, Entry, _ranges
from otel_prov.read._backend import QueryBackend
from otel_prov.read._chains import (
    _entry,
    _signature_problem,
    _stored_checkpoint,
    chain_iri,
    checkpoints_query,
    entries_query,
)
from otel_prov.read._verify import (
    SessionCheck,
    annotation_rows_query,
    stored_content,
    verify_rows_query,
)

__all__ = ["PACKAGE_FORM", "PackageError", "check_package", "export_package"]

PACKAGE_FORM = "otel-prov-audit-package-1"
"""The layout of a package (named in its manifest)."""
MANIFEST = "manifest.json"
README = "README.md"
_EPOCH = (1980, 1, 1, 0, 0, 0)
"""Every member's time: the same runs give the same bytes (but the manifest's date)."""


class PackageError(ValueError):
    """A file that is not an audit package this otel-prov reads; the message is one line."""


@dataclass(frozen=True)
class _Signed:
    """An entry or a checkpoint as the package holds it: its canonical bytes and
    signature (base64, empty when unsigned) by ``key``."""

    data: bytes
    signature: str
    key: str


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


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
) -> tuple[bytes, dict[str, int]]:
    """The package of ``runs`` (plain IRIs), the evaluations added to them after
    (``annotate``) included, and its counts (runs and annotations, entries, checkpoints).

    ``kept``: a checkpoint file's checkpoints (those of the store are read too); ``keys``:
    key ids whose public keys go in beside those that signed anything in the package;
    ``created``: the time the manifest states.
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
    checkpoints = [
        checkpoint
        for row in backend.query(checkpoints_query(graph)).rows
        if (checkpoint := _stored_checkpoint(row)) is not None
    ]
    sources = [("store", checkpoint) for checkpoint in checkpoints]
    sources += [("file", checkpoint) for checkpoint in kept]
    ours = {entry.bundle for entry in entries if entry.of in newest}
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
    key_files = []
    for key in sorted(signers):
        try:
            pem = public_key_pem(key)
        except ValueError:  # an edited store's signer: the check names it as another key
            continue
        name = f"keys/{key.removeprefix('ed25519:')[:16]}.pub"
        files[name] = pem
        key_files.append({"key": key, "file": name})
    manifest = {
        "package": PACKAGE_FORM,
        "created": created,
        "otel_prov": __version__,
        "graph": graph[1:-1],
        "runs": listed_runs,
        "entries": listed,
        "checkpoints": stated,
        "keys": key_files,
    }
    counts = {"runs": len(listed_runs), "entries": len(listed), "checkpoints": len(stated)}
    return _zip(manifest, listed_runs, listed, files), counts


def _put(
    files: dict[str, bytes], stem: str, data: bytes, signature: str, key: str
) -> dict[str, object]:
    """``stem.json`` (the canonical bytes) and ``stem.sig`` (the raw 64-byte Ed25519
    signature, what ``openssl pkeyutl -verify`` reads), and the manifest's line for them.
    A second one of the same number (a bundle replayed in the store, or checkpoints of
    the store and the file that disagree) is ``stem-2``: both go in, the check tells."""
    name, taken = stem, 1
    while f"{name}.json" in files:
        taken += 1
        name = f"{stem}-{taken}"
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


def _zip(
    manifest: Mapping[str, object],
    runs: Sequence[Mapping[str, object]],
    entries: Sequence[Mapping[str, object]],
    files: Mapping[str, bytes],
) -> bytes:
    out = io.BytesIO()
    members = {
        MANIFEST: (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode(),
        **dict(sorted(files.items())),
    }
    members = {README: _readme(manifest, runs, entries).encode(), **members}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            package.writestr(zipfile.ZipInfo(name, _EPOCH), data, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def _readme(
    manifest: Mapping[str, object],
    runs: Sequence[Mapping[str, object]],
    entries: Sequence[Mapping[str, object]],
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
        else "\nNothing in this package is signed.\n"
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
{sig}
Entries of other runs are here by their entry alone (IRIs and hashes), to show that the
chain goes on unbroken from the exported runs to a checkpoint; their content is not.
What this proves, and what it does not: docs/verification.md of otel-prov.
"""


def _unzip(data: bytes) -> dict[str, bytes]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return {name: package.read(name) for name in package.namelist()}
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError) as exc:
        raise PackageError(f"not an audit package (a zip file): {exc}") from None


def _manifest(files: Mapping[str, bytes]) -> dict[str, list[dict[str, object]]]:
    try:
        manifest = json.loads(files[MANIFEST])
        if manifest.get("package") != PACKAGE_FORM:
            raise PackageError(
                f"not a {PACKAGE_FORM} package (its manifest says {manifest.get('package')!r})"
            )
        parts = {part: list(manifest[part]) for part in ("runs", "entries", "checkpoints")}
        if not all(isinstance(item, dict) for items in parts.values() for item in items):
            raise PackageError("not an audit package: its manifest lists something not an object")
        return parts
    except KeyError as exc:
        raise PackageError(f"not an audit package: no {exc} in it") from None
    except (ValueError, TypeError, AttributeError) as exc:
        if isinstance(exc, PackageError):
            raise
        raise PackageError(f"not an audit package: its manifest is unreadable ({exc})") from None


def _signed(files: Mapping[str, bytes], item: Mapping[str, object]) -> _Signed | None:
    """The bytes a manifest line names, with their signature (re-encoded in base64, as
    the store keeps it); ``None`` when the file is not in the package."""
    data = files.get(str(item.get("file")))
    if data is None:
        return None
    signature = files.get(str(item.get("signature"))) if item.get("signature") else None
    return _Signed(
        data,
        base64.b64encode(signature).decode() if signature is not None else "",
        str(item.get("key") or ""),
    )


def _parsed_entry(data: bytes) -> Entry | None:
    try:
        fields = json.loads(data)
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
    """Problems by what they are about: a run (IRI), a chain (id), or the package."""

    runs: dict[str, list[str]]
    chains: dict[str, list[str]]
    package: list[str]

    def of_chain(self, chain: str, problem: str) -> None:
        self.chains.setdefault(chain, []).append(f"chain {chain}: {problem}")


def check_package(data: bytes, trusted: Sequence[str] = ()) -> list[SessionCheck]:
    """Check a package's bytes: each run's content against its entry, the chain links
    among the entries held, the checkpoints that anchor them (each run's entry must be
    covered by one) and, with ``trusted`` key ids, every signature.  A check per run, one
    per chain whose own links fail, one for the package's files; raises
    :class:`PackageError` for bytes that are not a package."""
    files = _unzip(data)
    manifest = _manifest(files)
    found = _Findings({}, {}, [])
    exported = {str(item.get("run")) for item in manifest["runs"]}
    entries: dict[str, list[tuple[Entry, str]]] = {}
    for item in manifest["entries"]:
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
            if problem and entry.of in exported:
                found.runs.setdefault(entry.of, []).append(problem)
            elif problem:  # an entry of another run, held to link the chain
                found.of_chain(entry.chain, problem)
        entries.setdefault(entry.chain, []).append((entry, _digest(signed.data)))
    anchors = _anchors(files, manifest["checkpoints"], trusted, found)
    for chain in sorted(entries.keys() | anchors.keys()):
        _check_window(chain, entries.get(chain, []), anchors.get(chain, {}), found)
    held = _Held.of(entries)
    checks = [
        _run_check(item, files, held, anchors, found)
        for item in sorted(manifest["runs"], key=lambda item: str(item.get("run")))
    ]
    checks += [
        SessionCheck(chain_iri(chain), None, tuple(problems))
        for chain, problems in sorted(found.chains.items())
    ]
    if found.package:
        checks.append(SessionCheck(MANIFEST, None, tuple(found.package)))
    return checks


def _anchors(
    files: Mapping[str, bytes],
    items: Sequence[Mapping[str, object]],
    trusted: Sequence[str],
    found: _Findings,
) -> dict[str, dict[int, list[str]]]:
    """Each chain's checkpoints that count (signed by a trusted key, when keys are
    given): sequence -> the heads they name."""
    anchors: dict[str, dict[int, list[str]]] = {}
    for item in items:
        signed = _signed(files, item)
        if signed is None:
            found.package.append(f"{item.get('file')} is listed in the manifest, not held")
            continue
        try:
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
        anchors.setdefault(checkpoint.chain, {}).setdefault(checkpoint.sequence, []).append(
            checkpoint.head
        )
    return anchors


def _check_window(
    chain: str,
    held: Sequence[tuple[Entry, str]],
    anchors: Mapping[int, Sequence[str]],
    found: _Findings,
) -> None:
    """The links among a chain's entries held, from the first to the last checkpoint:
    no number missing or doubled, each entry naming the hash of the one before, each
    checkpoint's head the hash of the entry it names."""
    by_number: dict[int, tuple[Entry, str]] = {}
    for entry, digest in held:
        if entry.sequence in by_number:
            found.of_chain(chain, f"two entries have sequence {entry.sequence}")
        by_number[entry.sequence] = (entry, digest)
    if not by_number:
        found.of_chain(chain, "the package holds checkpoints of it and no entry")
        return
    first = min(by_number)
    last = max([*by_number, *anchors])
    missing = [n for n in range(first, last + 1) if n not in by_number]
    if missing:
        found.of_chain(chain, f"sequence {_ranges(missing)} missing from the package")
    for number, (entry, _) in sorted(by_number.items()):
        before = by_number.get(number - 1)
        if number == 1 and entry.previous:
            found.of_chain(chain, f"entry {entry.bundle} is sequence 1 yet names a previous entry")
        elif before is not None and entry.previous != before[1]:
            found.of_chain(
                chain,
                f"entry {entry.bundle} (sequence {number}) does not follow sequence "
                f"{number - 1}: its previous-entry hash differs",
            )
    for number, heads in sorted(anchors.items()):
        held_entry = by_number.get(number)
        if held_entry is not None and any(head != held_entry[1] for head in heads):
            found.of_chain(
                chain, f"a checkpoint names another head for sequence {number} than its entry"
            )


@dataclass(frozen=True)
class _Held:
    """The entries held, indexed once for the runs' checks (a package may hold thousands)."""

    by_bundle: Mapping[str, Entry]
    of_run: Mapping[str, Sequence[Entry]]
    revised_by: Mapping[str, Sequence[str]]

    @classmethod
    def of(cls, entries: Mapping[str, Sequence[tuple[Entry, str]]]) -> _Held:
        by_bundle: dict[str, Entry] = {}
        of_run: dict[str, list[Entry]] = {}
        revised_by: dict[str, list[str]] = {}
        for chain in entries.values():
            for entry, _ in chain:
                by_bundle[entry.bundle] = entry
                of_run.setdefault(entry.of, []).append(entry)
                if entry.revises:
                    revised_by.setdefault(entry.revises, []).append(entry.bundle)
        return cls(by_bundle, of_run, revised_by)


def _run_check(
    item: Mapping[str, object],
    files: Mapping[str, bytes],
    held: _Held,
    anchors: Mapping[str, Mapping[int, Sequence[str]]],
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
    elif _digest(content) != newest.content:
        problems.append(
            f"content edited: {item.get('content')} hashes to {_digest(content)}, the entry "
            f"of {bundle} says {newest.content}"
        )
    if not any(n >= newest.sequence for n in anchors.get(newest.chain, {})):
        problems.append(
            f"no checkpoint in the package covers its entry (chain {newest.chain}, sequence "
            f"{newest.sequence}): nothing shows that entries after it were not removed"
        )
    if newest.chain in found.chains:
        problems.append(f"its chain is broken: see {chain_iri(newest.chain)}")
    return SessionCheck(run, bundle, tuple(problems))
