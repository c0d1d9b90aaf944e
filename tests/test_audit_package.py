"""Audit packages (issue 27, point 5): ``otel-prov audit-export`` writes runs, their chain
entries, signatures, checkpoints and public keys into one zip, and ``verify --package``
checks it with no store and no network.

The package is written from a real embedded store by one signing writer (four runs, one
chain), and every tampering is made on the zip itself, as someone who holds only the
file would make it.  The last tests check a package with a checker written here from the
text of docs/verification.md alone (hashlib and ``cryptography``), and by hand with
``sha256sum`` and ``openssl`` as the package's README says.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

import otel_prov
from otel_prov.demo import run_demo_agent
from tests.cli import CLI, run_cli


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Keys, a store of four runs by one signing writer and an evaluation of the second
    added by ``annotate`` (a writer of its own), and their checkpoint file."""
    root = tmp_path_factory.mktemp("audit")
    assert run_cli("keygen", "--out", str(root / "keys")).returncode == 0
    assert run_cli("keygen", "--out", str(root / "other")).returncode == 0
    handle = otel_prov.configure(
        store=root / "store",
        set_global=False,
        wal_dir=root / "wal",
        signing_key=root / "keys" / "signing.key",
        checkpoint_file=root / "checkpoints.jsonl",
    )
    for index in range(4):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()
    annotated = subprocess.run(
        [
            *CLI,
            "annotate",
            _runs(root / "store")[1],
            "--name",
            "helpful",
            "--score",
            "4",
            "--store",
            str(root / "store"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            **os.environ,
            "OTEL_PROV_SIGNING_KEY": str(root / "keys" / "signing.key"),
            "OTEL_PROV_CHECKPOINT_FILE": str(root / "checkpoints.jsonl"),
        },
    )
    assert annotated.returncode == 0, annotated.stderr
    return root


def _runs(store: Path) -> list[str]:
    """Every stored run, oldest first."""
    db = pyoxigraph.Store.read_only(str(store))
    rows = db.query(
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> SELECT ?s WHERE { GRAPH ?g "
        "{ ?s oprov:runStartedAt ?t } } ORDER BY ?t"
    )
    return [row["s"].value for row in rows]  # type: ignore[index,union-attr]


def _signing_cli(written: Path, *args: str, checkpoints: Path | None = None) -> str:
    """``otel-prov ARGS`` with the writers' key as ``OTEL_PROV_SIGNING_KEY`` (and
    ``checkpoints`` as the checkpoint file); it must succeed: its output."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_PROV_")}
    environment["OTEL_PROV_SIGNING_KEY"] = str(written / "keys" / "signing.key")
    if checkpoints is not None:
        environment["OTEL_PROV_CHECKPOINT_FILE"] = str(checkpoints)
    result = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=120, check=False, env=environment
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _export(written: Path, store: Path, checkpoints: Path, out: Path, *ids: str) -> Path:
    """``audit-export`` of ``ids`` (``--all`` when none) by the holder of the writers' key."""
    _signing_cli(
        written,
        "audit-export",
        *(ids or ("--all",)),
        "--store",
        str(store),
        "--checkpoints",
        str(checkpoints),
        "--out",
        str(out),
    )
    return out


@pytest.fixture(scope="module")
def package(written: Path) -> Path:
    """The package of the second run, with the checkpoint file's checkpoints."""
    second = _runs(written / "store")[1]
    return _export(
        written, written / "store", written / "checkpoints.jsonl", written / "audit.zip", second
    )


@pytest.fixture(scope="module")
def everything(written: Path) -> Path:
    """The package of every run (four, and the evaluation of the second)."""
    return _export(written, written / "store", written / "checkpoints.jsonl", written / "all.zip")


_OLD_NS = 1_577_836_800_000_000_000
"""2020-01-01T00:00:00Z: a run that ended then is pruned by ``--before 2021-01-01``."""


def _old_run(handle: otel_prov.ProvHandle) -> None:
    """A run that started and ended in 2020 (an agent span with its own times): sealed now,
    as the next entry of the writer's chain, between runs of today."""
    span = handle.tracer_provider.get_tracer("old").start_span(
        "invoke_agent old-agent",
        start_time=_OLD_NS,
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "old-agent"},
    )
    span.end(end_time=_OLD_NS + 1_000_000_000)


@pytest.fixture(scope="module")
def pruned(written: Path) -> Path:
    """Five runs of one signing writer, the first and the third of 2020 (chain sequence 1
    and 3), pruned by a signing ``prune`` (two tombstones: 1 and 3); the package of every
    run left, with the checkpoint file's checkpoints."""
    root = written / "pruned"
    checkpoints = root / "checkpoints.jsonl"
    handle = otel_prov.configure(
        store=root / "store",
        set_global=False,
        wal_dir=root / "wal",
        signing_key=written / "keys" / "signing.key",
        checkpoint_file=checkpoints,
    )
    for index in range(5):
        if index in (0, 2):
            _old_run(handle)
        else:
            run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"p{index}")
        handle.force_flush()
    handle.shutdown()
    where = ("--store", str(root / "store"))
    said = _signing_cli(written, "prune", "--before", "2021-01-01", *where, checkpoints=checkpoints)
    assert "pruned 2 runs" in said and "2 ranges" in said, said
    return _export(written, root / "store", checkpoints, root / "audit.zip")


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as package:
        return {name: package.read(name) for name in package.namelist()}


def _rewritten(path: Path, members: dict[str, bytes]) -> Path:
    """A copy of the package holding ``members`` (the manifest as the dict says)."""
    out = path.parent / f"tampered-{len(list(path.parent.glob('tampered-*')))}.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        for name, data in members.items():
            package.writestr(name, data)
    out.write_bytes(buffer.getvalue())
    return out


def _manifest(members: dict[str, bytes]) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = json.loads(members["manifest.json"])
    return found


def _with_manifest(members: dict[str, bytes], manifest: object) -> dict[str, bytes]:
    return {**members, "manifest.json": json.dumps(manifest).encode()}


def _verify_package(
    path: Path, *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``verify --package`` with no store configured and nowhere to reach: the settings
    name an endpoint no one listens on and a store that does not exist, and the command
    runs in an empty directory (no ``.otel-prov/store`` to fall back on)."""
    where = cwd or path.parent / "elsewhere"
    where.mkdir(exist_ok=True)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    environment |= {
        "OTEL_PROV_STORE": str(where / "no-store"),
        "OTEL_PROV_SPARQL_QUERY_ENDPOINT": "http://127.0.0.1:9/query",
    }
    return subprocess.run(
        [*CLI, "verify", "--package", str(path), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=where,
        env=environment,
    )


def _trust(written: Path, name: str = "keys") -> tuple[str, str]:
    return ("--trust", str(written / name / "signing.pub"))


def _entry_of(members: dict[str, bytes], run: str) -> dict[str, object]:
    """The manifest line of the run's entry."""
    manifest = _manifest(members)
    return next(
        item for item in manifest["entries"] if json.loads(members[str(item["file"])])["of"] == run
    )


def test_a_package_holds_the_run_asked_for_and_of_the_others_their_entries_alone(
    written: Path, package: Path
) -> None:
    first, second, third, fourth = _runs(written / "store")
    members = _members(package)
    manifest = _manifest(members)
    (run, annotation) = manifest["runs"]
    assert run["run"] == second and ":annotation-" in str(annotation["run"])
    assert [name for name in members if name.startswith("runs/")] == ["runs/1.nt", "runs/2.nt"]
    held = [json.loads(members[str(e["file"])]) for e in manifest["entries"]]
    by_chain: dict[str, list[int]] = {}
    for entry in held:
        by_chain.setdefault(entry["chain"], []).append(entry["sequence"])
    # From the run's entry to the checkpoint at shutdown; the annotation's chain of one.
    assert sorted(by_chain.values()) == [[1], [2, 3, 4]]
    assert {tuple(c["from"]) for c in manifest["checkpoints"]} == {("file", "store")}
    assert any(name.startswith("keys/") for name in members)
    trace = {run: run.split(":")[2] for run in (first, third, fourth)}
    for name, data in members.items():
        assert trace[first].encode() not in data, name  # before the run: not needed
        if not name.startswith("chains/"):
            assert trace[third].encode() not in data and trace[fourth].encode() not in data, name
    assert b"README" not in members["runs/1.nt"]
    assert b"otel-prov verify --package" in members["README.md"]


def test_a_package_verifies_with_no_store_and_no_network(written: Path, package: Path) -> None:
    result = _verify_package(package, *_trust(written), "--format", "json")
    assert result.returncode == 0, result.stdout + result.stderr
    checks = json.loads(result.stdout)
    assert [check["ok"] for check in checks] == [True, True]
    assert _runs(written / "store")[1] in {check["session"] for check in checks}
    assert not (package.parent / "elsewhere" / "no-store").exists()
    assert not (package.parent / "elsewhere" / ".otel-prov").exists()
    untrusted = _verify_package(package)
    assert untrusted.returncode == 0 and "not a forger" in untrusted.stderr


def test_an_edited_run_in_the_package_is_named(written: Path, package: Path) -> None:
    members = _members(package)
    content = members["runs/1.nt"].decode()
    assert "Paris" in content
    edited = _rewritten(
        package, {**members, "runs/1.nt": content.replace("Paris", "Rome").encode()}
    )
    result = _verify_package(edited, *_trust(written))
    assert result.returncode == 1, result.stdout
    assert "content edited: runs/1.nt hashes to" in result.stdout, result.stdout


def test_a_dropped_entry_is_named(written: Path, package: Path) -> None:
    members = _members(package)
    manifest = _manifest(members)
    second, third, fourth = _runs(written / "store")[1:4]
    for run, said in (
        (third, "sequence 3 missing, deleted"),
        (fourth, "truncated"),  # the checkpoint's head
        (second, "is missing from the package (removed, or"),
    ):
        line = _entry_of(members, run)
        left = {
            name: data
            for name, data in members.items()
            if not name.startswith(str(line["file"]).removesuffix(".json"))
        }
        dropped = {**manifest, "entries": [e for e in manifest["entries"] if e != line]}
        result = _verify_package(
            _rewritten(package, _with_manifest(left, dropped)), *_trust(written)
        )
        assert result.returncode == 1, result.stdout
        assert said in result.stdout, result.stdout


def test_a_run_no_checkpoint_covers_fails(written: Path, package: Path) -> None:
    """Without a checkpoint at or past its entry nothing shows the entries after it whole."""
    members = _members(package)
    manifest = _manifest(members)
    kept = {name: data for name, data in members.items() if not name.startswith("checkpoints/")}
    result = _verify_package(
        _rewritten(package, _with_manifest(kept, {**manifest, "checkpoints": []})),
        *_trust(written),
    )
    assert result.returncode == 1, result.stdout
    assert "no checkpoint in the package covers its entry" in result.stdout, result.stdout


def test_a_file_that_is_no_package_and_a_run_not_stored_are_told(
    written: Path, package: Path
) -> None:
    result = _verify_package(written / "checkpoints.jsonl", *_trust(written))
    assert result.returncode == 2 and "not an audit package" in result.stderr, result.stderr
    mixed = run_cli("verify", "--package", str(package), "--all")
    assert mixed.returncode == 2 and "checks the package alone" in mixed.stderr
    where = ("--store", str(written / "store"), "--out", str(written / "none.zip"))
    missing = run_cli("audit-export", "no-such-run", *where)
    assert missing.returncode == 1 and "no-such-run" in missing.stderr, missing.stderr
    assert run_cli("audit-export", *where).returncode == 2  # no ID and no --all
    assert not (written / "none.zip").exists()


def _sign_all(members: dict[str, bytes], key: Ed25519PrivateKey) -> dict[str, bytes]:
    """Every entry and checkpoint signed again by ``key``, the package's keys replaced by
    its public key: a package rebuilt by whoever holds another key."""
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    key_id = "ed25519:" + raw.hex()
    manifest = _manifest(members)
    out = {name: data for name, data in members.items() if not name.startswith("keys/")}
    for item in [*manifest["entries"], *manifest["checkpoints"]]:
        out[str(item["signature"])] = key.sign(members[str(item["file"])])
        item["key"] = key_id
    out["keys/forged.pub"] = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    manifest["keys"] = [{"key": key_id, "file": "keys/forged.pub"}]
    return _reindexed(out, manifest, key)


def _key_id(key: Ed25519PrivateKey) -> str:
    raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + raw.hex()


def _reindexed(
    members: dict[str, bytes], manifest: dict[str, object], key: Ed25519PrivateKey | None
) -> dict[str, bytes]:
    """``members`` with ``manifest`` made to agree with them, as whoever rewrites a package
    makes it: every member's hash in its ``files``, signed by ``key`` (``None``: unsigned)."""
    out = {n: d for n, d in members.items() if n not in ("manifest.json", "manifest.sig")}
    manifest = {
        **manifest,
        "files": {name: "sha256:" + hashlib.sha256(data).hexdigest() for name, data in out.items()},
        "key": _key_id(key) if key is not None else None,
    }
    out["manifest.json"] = json.dumps(manifest, indent=2).encode()
    if key is not None:
        out["manifest.sig"] = key.sign(out["manifest.json"])
    return out


def _other_key(written: Path) -> Ed25519PrivateKey:
    other = serialization.load_pem_private_key(
        (written / "other" / "signing.key").read_bytes(), password=None
    )
    assert isinstance(other, Ed25519PrivateKey)
    return other


def test_a_swapped_key_is_named(written: Path, package: Path) -> None:
    swapped = _rewritten(package, _sign_all(_members(package), _other_key(written)))
    result = _verify_package(swapped, *_trust(written))
    assert result.returncode == 1, result.stdout
    assert "is signed by another key" in result.stdout, result.stdout
    assert "the checkpoint of sequence 4 is signed by another key" in result.stdout
    assert "the manifest is signed by another key" in result.stdout, result.stdout
    # The package's own keys are never trusted: under the other key it checks.
    assert _verify_package(swapped, *_trust(written, "other")).returncode == 0


def test_a_stripped_or_broken_signature_is_named(written: Path, package: Path) -> None:
    members = _members(package)
    manifest = _manifest(members)
    line = _entry_of(members, _runs(written / "store")[1])
    signature = str(line["signature"])
    stripped = {name: data for name, data in members.items() if name != signature}
    manifest["entries"] = [
        {**item, "signature": None, "key": None} if item == line else item
        for item in manifest["entries"]
    ]
    result = _verify_package(
        _rewritten(package, _with_manifest(stripped, manifest)), *_trust(written)
    )
    assert result.returncode == 1, result.stdout
    assert "is unsigned" in result.stdout, result.stdout
    broken = bytes([members[signature][0] ^ 1]) + members[signature][1:]
    result = _verify_package(_rewritten(package, {**members, signature: broken}), *_trust(written))
    assert result.returncode == 1, result.stdout
    assert "has a bad signature" in result.stdout, result.stdout


def _checks(result: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """``verify --format json``'s checks by what each is about."""
    return {str(check["session"]): check for check in json.loads(result.stdout)}


def _said_pruned(result: subprocess.CompletedProcess[str]) -> dict[str, list[str]]:
    """What each tombstone's check says (``notes``), by the tombstone's IRI."""
    checks = _checks(result).items()
    return {name: list(check["notes"]) for name, check in checks if ":tombstone:" in name}


def test_a_package_after_a_prune_says_pruned_by_policy_as_verify_of_the_store_does(
    written: Path, pruned: Path
) -> None:
    """The package carries the tombstones of the chains it holds: the gap one covers
    between two runs exported (sequence 3) and the range before the first entry held (1)
    are pruned by policy, in the words verify of the store uses."""
    result = _verify_package(pruned, *_trust(written), "--format", "json")
    assert result.returncode == 0, result.stdout
    members = _members(pruned)
    manifest = _manifest(members)
    first = manifest["runs"][0]
    chain = json.loads(members[str(_entry_of(members, str(first["run"]))["file"])])["chain"]
    assert len(manifest["tombstones"]) == 2, manifest["tombstones"]
    assert all(str(t["content"]).startswith("tombstones/") for t in manifest["tombstones"])
    store = written / "pruned" / "store"
    stored = run_cli("verify", "--all", "--store", str(store), *_trust(written), "--format", "json")
    assert stored.returncode == 0, stored.stdout
    assert _said_pruned(result) == _said_pruned(stored)
    said = sorted(note for notes in _said_pruned(result).values() for note in notes)
    assert [note.split(" (")[0] for note in said] == [
        f"pruned by policy: chain {chain} sequence 1",
        f"pruned by policy: chain {chain} sequence 3",
    ], said
    text = _verify_package(pruned, *_trust(written))
    assert text.returncode == 0 and "deleted" not in text.stdout, text.stdout
    assert f"pruned by policy: chain {chain} sequence 3 (1 run that ended before" in text.stdout


def _writers_key(written: Path) -> Ed25519PrivateKey:
    key = serialization.load_pem_private_key(
        (written / "keys" / "signing.key").read_bytes(), password=None
    )
    assert isinstance(key, Ed25519PrivateKey)
    return key


def test_an_edited_or_forged_tombstone_in_a_package_covers_nothing(
    written: Path, pruned: Path
) -> None:
    """The tombstone of sequence 3 edited (its cutoff moved), its entry unsigned, or signed
    by another key: it fails, and the gap it claimed shows as deleted.  The manifest is
    signed again by the writers' key each time, so that nothing but the tombstone fails."""
    members = _members(pruned)
    manifest = _manifest(members)
    (item,) = [
        t for t in manifest["tombstones"] if json.loads(members[str(t["content"])])["first"] == 3
    ]
    (entry,) = [
        e
        for e in manifest["entries"]
        if json.loads(members[str(e["file"])])["bundle"] == item["tombstone"]
    ]
    fields = json.loads(members[str(item["content"])])
    edited = json.dumps(
        {**fields, "cutoff": "2099-01-01T00:00:00Z"}, sort_keys=True, separators=(",", ":")
    ).encode()
    other = _other_key(written)
    signature = str(entry["signature"])

    def lines(changed: dict[str, object]) -> list[dict[str, object]]:
        return [{**e, **changed} if e == entry else e for e in manifest["entries"]]

    without = {name: data for name, data in members.items() if name != signature}
    tamperings = (
        ({**members, str(item["content"]): edited}, lines({}), "was changed: its otel-prov-"),
        (without, lines({"signature": None, "key": None}), "is unsigned"),
        (
            {**members, signature: other.sign(members[str(entry["file"])])},
            lines({"key": _key_id(other)}),
            "signed by another key",
        ),
    )
    for left, entries, says in tamperings:
        forged = _reindexed(left, {**manifest, "entries": entries}, _writers_key(written))
        result = _verify_package(_rewritten(pruned, forged), *_trust(written))
        assert result.returncode == 1, (says, result.stdout)
        assert says in result.stdout, (says, result.stdout)
        assert "sequence 3 missing, deleted" in result.stdout, (says, result.stdout)
        assert "manifest" not in result.stdout, (says, result.stdout)


def test_a_run_dropped_from_a_package_and_from_its_manifest_fails_under_trust(
    written: Path, everything: Path
) -> None:
    """The third run's content and its line of the manifest removed, the manifest's
    hashes made to agree (its entry stays, as another run's would): the chains still hold,
    only the manifest's signature tells: unsigned, signed by another key, or left as it
    was (a bad signature)."""
    members = _members(everything)
    manifest = _manifest(members)
    third = _runs(written / "store")[2]
    (line,) = [run for run in manifest["runs"] if run["run"] == third]
    left = {name: data for name, data in members.items() if name != line["content"]}
    dropped = {**manifest, "runs": [run for run in manifest["runs"] if run != line]}
    stale = _reindexed(left, dropped, None)  # then given the exporter's key and signature
    restated = {**json.loads(stale["manifest.json"]), "key": manifest.get("key")}
    stale["manifest.json"] = json.dumps(restated, indent=2).encode()
    stale["manifest.sig"] = members.get("manifest.sig", b"")
    for forged, says in (
        (_reindexed(left, dropped, None), "the manifest is unsigned"),
        (_reindexed(left, dropped, _other_key(written)), "the manifest is signed by another key"),
        (stale, "the manifest has a bad signature"),
    ):
        result = _verify_package(_rewritten(everything, forged), *_trust(written))
        assert result.returncode == 1, (says, result.stdout)
        assert says in result.stdout, (says, result.stdout)
    assert _verify_package(everything, *_trust(written)).returncode == 0
    # Without --trust nothing can tell, and verify says the manifest is unsigned.
    unsigned = _verify_package(_rewritten(everything, _reindexed(left, dropped, None)))
    assert unsigned.returncode == 0, unsigned.stdout
    assert "the package's manifest is unsigned" in unsigned.stderr, unsigned.stderr
    signed = _verify_package(everything)
    assert "unsigned" not in signed.stderr and "not a forger" in signed.stderr, signed.stderr


def test_an_export_with_no_key_leaves_the_manifest_unsigned_and_says_so(
    written: Path, package: Path
) -> None:
    out = written / "unsigned.zip"
    second = _runs(written / "store")[1]
    exported = run_cli("audit-export", second, "--store", str(written / "store"), "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    assert "manifest.sig" not in _members(out) and "manifest.sig" in _members(package)
    result = _verify_package(out, *_trust(written))
    assert result.returncode == 1 and "the manifest is unsigned" in result.stdout, result.stdout
    result = _verify_package(out)
    assert result.returncode == 0 and "the package's manifest is unsigned" in result.stderr


def test_files_that_do_not_match_the_manifest_are_named(written: Path, everything: Path) -> None:
    """A member put in, or one changed, that nothing else would tell (the README): the
    manifest's hashes name it, with --trust or without."""
    members = _members(everything)
    extra = _rewritten(everything, {**members, "runs/9.nt": b"<urn:a> <urn:b> <urn:c> .\n"})
    result = _verify_package(extra)
    assert result.returncode == 1, result.stdout
    assert "runs/9.nt is in the package, not in its manifest" in result.stdout, result.stdout
    readme = {**members, "README.md": members["README.md"] + b"\nNo need to check this.\n"}
    result = _verify_package(_rewritten(everything, readme), *_trust(written))
    assert result.returncode == 1, result.stdout
    assert "README.md does not match the manifest" in result.stdout, result.stdout


def _independent_check(package: Path, pub: Path) -> list[str]:
    """A checker of an audit package written from docs/verification.md ("The audit
    package") alone: the standard library, and ``cryptography`` for Ed25519."""
    problems: list[str] = []
    key = serialization.load_pem_public_key(pub.read_bytes())
    assert isinstance(key, Ed25519PublicKey)
    key_id = (
        "ed25519:"
        + key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw).hex()
    )

    def sha256(data: bytes) -> str:
        return "sha256:" + hashlib.sha256(data).hexdigest()

    def signed(item: dict[str, object], data: bytes) -> None:
        if not item["signature"] or item["key"] != key_id:
            problems.append(f"{item['file']} is not signed by the trusted key")
            return
        try:
            key.verify(files[str(item["signature"])], data)
        except InvalidSignature:
            problems.append(f"{item['file']}: bad signature")

    def canonical(fields: dict[str, object]) -> bytes:
        return json.dumps(
            fields, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode()

    with zipfile.ZipFile(package) as opened:
        files = {name: opened.read(name) for name in opened.namelist()}
    manifest = json.loads(files["manifest.json"])
    assert manifest["package"] == "otel-prov-audit-package-1"
    index = "manifest.json", "manifest.sig"
    signed(
        {"file": index[0], "signature": index[1] in files and index[1], "key": manifest["key"]},
        files[index[0]],
    )
    for name, data in files.items():
        if name not in index and manifest["files"].get(name) != sha256(data):
            problems.append(f"{name} does not match the manifest")
    for name in manifest["files"]:
        if name not in files:
            problems.append(f"{name} is missing")
    entries: dict[tuple[str, int], tuple[dict[str, object], str]] = {}
    for item in manifest["entries"]:
        data = files[item["file"]]
        fields = json.loads(data)
        if canonical(fields) != data:
            problems.append(f"{item['file']} is not canonical")
        signed(item, data)
        entries[(str(fields["chain"]), int(fields["sequence"]))] = (fields, sha256(data))
    for (chain, number), (fields, _) in entries.items():
        before = entries.get((chain, number - 1))
        if before is not None and fields["previous"] != before[1]:
            problems.append(f"chain {chain}: {number} does not follow {number - 1}")
    covered: dict[str, int] = {}
    heads: dict[tuple[str, int], object] = {}
    for item in manifest["checkpoints"]:
        data = files[item["file"]]
        fields = json.loads(data)
        signed(item, data)
        chain, number = str(fields["chain"]), int(fields["sequence"])
        heads[(chain, number)] = fields["head"]
        if (chain, number) in entries and entries[(chain, number)][1] != fields["head"]:
            problems.append(f"chain {chain}: checkpoint {number} names another head")
        covered[chain] = max(covered.get(chain, 0), number)
    pruned: set[tuple[str, int]] = set()
    for item in manifest["tombstones"]:
        stated = json.loads(files[item["content"]])
        entry = next(
            (fields for fields, _ in entries.values() if fields["bundle"] == item["tombstone"]),
            None,
        )
        if entry is None or sha256(canonical(stated)) != entry["content"]:
            problems.append(f"tombstone {item['tombstone']}: not what its entry sealed")
            continue
        chain, last = str(stated["chain"]), int(stated["last"])
        numbers = range(int(stated["first"]), last + 1)
        after = entries.get((chain, last + 1))
        if (
            any((chain, n) in entries for n in numbers)
            or (after is not None and after[0]["previous"] != stated["head"])
            or heads.get((chain, last), stated["head"]) != stated["head"]
        ):
            problems.append(f"tombstone {item['tombstone']}: the chain contradicts it")
            continue
        pruned |= {(chain, n) for n in numbers}
    for chain in {chain for chain, _ in entries}:
        held = [number for c, number in entries if c == chain]
        wanted = set(range(min(held), covered.get(chain, 0) + 1))
        if wanted - set(held) - {n for c, n in pruned if c == chain}:
            problems.append(f"chain {chain}: an entry is missing")
    for run in manifest["runs"]:
        entry = next(
            (
                (fields, c, n)
                for (c, n), (fields, _) in entries.items()
                if fields["bundle"] == run["bundle"]
            ),
            None,
        )
        if entry is None:
            problems.append(f"{run['run']}: no entry")
            continue
        fields, chain, number = entry
        if sha256(files[run["content"]]) != fields["content"]:
            problems.append(f"{run['run']}: content edited")
        if covered.get(chain, 0) < number:
            problems.append(f"{run['run']}: no checkpoint covers it")
    return problems


def test_another_tool_checks_a_package_from_the_documentation_alone(
    written: Path, package: Path, pruned: Path
) -> None:
    pub = written / "keys" / "signing.pub"
    assert _independent_check(package, pub) == []
    assert _independent_check(pruned, pub) == []  # its gaps covered by its tombstones
    members = _members(package)
    edited = _rewritten(
        package, {**members, "runs/1.nt": members["runs/1.nt"] + b"<a> <b> <c> .\n"}
    )
    assert any("content edited" in p for p in _independent_check(edited, pub))
    swapped = _rewritten(package, _sign_all(members, _other_key(written)))
    assert any("not signed by the trusted key" in p for p in _independent_check(swapped, pub))
    # A run dropped with its line, the manifest's hashes redone but not its signature.
    manifest = _manifest(members)
    line = manifest["runs"][0]
    left = {name: data for name, data in members.items() if name != line["content"]}
    dropped = _reindexed(left, {**manifest, "runs": manifest["runs"][1:]}, None)
    found = _independent_check(_rewritten(package, dropped), pub)
    assert found == ["manifest.json is not signed by the trusted key"], found
    # A tombstone edited: what it covered is missing.
    members = _members(pruned)
    manifest = _manifest(members)
    for item in manifest["tombstones"]:
        name = str(item["content"])
        edited = {**json.loads(members[name]), "policy": "keep P1D"}
        members[name] = json.dumps(edited, sort_keys=True, separators=(",", ":")).encode()
    found = _independent_check(
        _rewritten(pruned, _reindexed(members, manifest, _writers_key(written))), pub
    )
    assert any("not what its entry sealed" in p for p in found), found
    assert any("an entry is missing" in p for p in found), found


@pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command here")
def test_the_readme_checks_a_package_by_hand_with_sha256sum_and_openssl(
    written: Path, package: Path, tmp_path: Path
) -> None:
    with zipfile.ZipFile(package) as opened:
        opened.extractall(tmp_path)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    readme = (tmp_path / "README.md").read_text()
    (line,) = [item for item in manifest["entries"] if item["file"] in readme]
    run = manifest["runs"][0]
    for item in manifest["entries"]:
        entry = json.loads((tmp_path / item["file"]).read_text())
        if entry["bundle"] == run["bundle"]:
            break
    digest = subprocess.run(
        ["sha256sum", run["content"]], cwd=tmp_path, capture_output=True, text=True, check=True
    )
    assert entry["content"] == "sha256:" + digest.stdout.split()[0]
    command = next(part for part in readme.split("\n\n") if "openssl pkeyutl" in part)
    shell = command.replace("signing.pub", str(written / "keys" / "signing.pub"))
    checked = subprocess.run(
        shell, shell=True, cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert "Signature Verified Successfully" in checked.stdout, checked.stdout + checked.stderr
    assert len((tmp_path / line["signature"]).read_bytes()) == 64  # raw, as openssl reads it
