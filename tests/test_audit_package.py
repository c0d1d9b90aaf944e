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


@pytest.fixture(scope="module")
def package(written: Path) -> Path:
    """The package of the second run, with the checkpoint file's checkpoints."""
    out = written / "audit.zip"
    second = _runs(written / "store")[1]
    result = run_cli(
        "audit-export",
        second,
        "--store",
        str(written / "store"),
        "--checkpoints",
        str(written / "checkpoints.jsonl"),
        "--out",
        str(out),
    )
    assert result.returncode == 0, result.stderr
    return out


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
        (third, "sequence 3 missing from the package"),
        (fourth, "sequence 4 missing from the package"),  # the checkpoint's head
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
    return _with_manifest(out, manifest)


def test_a_swapped_key_is_named(written: Path, package: Path) -> None:
    other = serialization.load_pem_private_key(
        (written / "other" / "signing.key").read_bytes(), password=None
    )
    assert isinstance(other, Ed25519PrivateKey)
    swapped = _rewritten(package, _sign_all(_members(package), other))
    result = _verify_package(swapped, *_trust(written))
    assert result.returncode == 1, result.stdout
    assert "is signed by another key" in result.stdout, result.stdout
    assert "the checkpoint of sequence 4 is signed by another key" in result.stdout
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
    for item in manifest["checkpoints"]:
        data = files[item["file"]]
        fields = json.loads(data)
        signed(item, data)
        chain, number = str(fields["chain"]), int(fields["sequence"])
        if entries.get((chain, number), ({}, ""))[1] != fields["head"]:
            problems.append(f"chain {chain}: checkpoint {number} names another head")
        covered[chain] = max(covered.get(chain, 0), number)
    for chain in {chain for chain, _ in entries}:
        held = [number for c, number in entries if c == chain]
        if set(range(min(held), covered.get(chain, 0) + 1)) - set(held):
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
    written: Path, package: Path
) -> None:
    pub = written / "keys" / "signing.pub"
    assert _independent_check(package, pub) == []
    members = _members(package)
    edited = _rewritten(
        package, {**members, "runs/1.nt": members["runs/1.nt"] + b"<a> <b> <c> .\n"}
    )
    assert any("content edited" in p for p in _independent_check(edited, pub))
    other = serialization.load_pem_private_key(
        (written / "other" / "signing.key").read_bytes(), password=None
    )
    assert isinstance(other, Ed25519PrivateKey)
    swapped = _rewritten(package, _sign_all(members, other))
    assert any("not signed by the trusted key" in p for p in _independent_check(swapped, pub))


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
