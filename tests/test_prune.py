"""Retention that ``verify`` understands (issue 27 point 4, issue 31 point 5): ``otel-prov
prune`` removes old runs and leaves a signed tombstone per removed range of a chain, and
``verify`` tells a gap so covered ("pruned by policy") from one no tombstone covers
("deleted").  The hostile part: what someone who can write the store does to pass a
deletion off as a prune.  Each on a real embedded store written by ``configure()``;
``prune`` and ``verify`` run as the ``otel-prov`` command.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
from datetime import timedelta
from pathlib import Path

import pyoxigraph
import pytest

import otel_prov
from otel_prov._signing import KeySigner
from otel_prov.cli._prune import duration, iso_duration
from otel_prov.demo import run_demo_agent
from otel_prov.exporters.oxigraph._parked import ParkedBatches
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.prov._chain import (
    TOMBSTONE_FORM,
    Checkpoint,
    Entry,
    Tombstone,
    chain_problems,
    tombstones_for,
)
from otel_prov.prov._rdf import to_nquads
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._vocab import O
from otel_prov.read._chains import tombstone_entry, tombstones_query
from tests.cli import CLI, run_cli
from tests.test_audit_trail import _delete_run, _entries, _runs, _set, _write_runs

GRAPH = "urn:otel-prov:graph"
_NOW = "2099-01-01T00:00:00Z"


def _cli(*args: str, key: Path | None = None) -> tuple[int, str]:
    environment = {
        name: value for name, value in os.environ.items() if not name.startswith("OTEL_PROV_")
    }
    if key is not None:
        environment["OTEL_PROV_SIGNING_KEY"] = str(key / "signing.key")
        environment["OTEL_PROV_CHECKPOINT_FILE"] = str(key.parent / "checkpoints.jsonl")
    result = subprocess.run(
        [*CLI, *args], capture_output=True, text=True, timeout=120, check=False, env=environment
    )
    return result.returncode, result.stdout + result.stderr


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    assert run_cli("keygen", "--out", str(tmp_path / "keys")).returncode == 0
    return tmp_path / "keys"


@pytest.fixture
def signed(tmp_path: Path, keys: Path) -> Path:
    """Five runs of one signing process (chain sequence 1-5), with its checkpoint file."""
    path = tmp_path / "signed"
    _write_runs(
        path, 5, signing_key=keys / "signing.key", checkpoint_file=tmp_path / "checkpoints.jsonl"
    )
    return path


def _started(path: Path, run: str) -> str:
    store = pyoxigraph.Store.read_only(str(path))
    (quad,) = store.quads_for_pattern(
        pyoxigraph.NamedNode(run), pyoxigraph.NamedNode(O.runStartedAt[1:-1]), None
    )
    value = quad.object.value
    del store
    return value


def _cutoff(path: Path) -> str:
    """The start of the third run: runs 1 and 2 ended before it, the others after."""
    return _started(path, _runs(path)[2][0])


def _trust(keys: Path) -> tuple[str, ...]:
    return (
        "--trust",
        str(keys / "signing.pub"),
        "--checkpoints",
        str(keys.parent / "checkpoints.jsonl"),
    )


def _verify(path: Path, *args: str) -> tuple[int, str]:
    return _cli("verify", "--all", "--store", str(path), *args)


def _pruned(path: Path, keys: Path) -> list[tuple[str, str]]:
    """Runs 1 and 2 pruned by a signing ``prune``; the runs that were stored before."""
    runs = _runs(path)
    code, out = _cli("prune", "--before", _cutoff(path), "--store", str(path), key=keys)
    assert code == 0, out
    return runs


def _tombstones(path: Path) -> list[tuple[str, Tombstone]]:
    store = pyoxigraph.Store.read_only(str(path))
    found = [
        (quad.subject.value, Tombstone.from_json(quad.object.value))
        for quad in store.quads_for_pattern(None, pyoxigraph.NamedNode(O.tombstone[1:-1]), None)
    ]
    del store
    return found


def _load(path: Path, triples: list[tuple[str, str, str]], graph: str = GRAPH) -> None:
    store = pyoxigraph.Store(str(path))
    store.load(to_nquads(triples, f"<{graph}>").encode(), pyoxigraph.RdfFormat.N_QUADS)
    store.flush()
    del store


def test_prune_removes_the_old_runs_and_verify_says_pruned_by_policy(
    signed: Path, keys: Path
) -> None:
    runs = _runs(signed)
    chain = _entries(signed)[0].chain
    cutoff = _cutoff(signed)
    code, out = _cli("prune", "--before", cutoff, "--dry-run", "--store", str(signed), key=keys)
    assert code == 0 and "would prune 2 runs" in out, out
    assert _runs(signed) == runs  # a dry run removes nothing
    code, out = _cli(
        "prune", "--before", cutoff, "--format", "json", "--store", str(signed), key=keys
    )
    assert code == 0, out
    report = json.loads(out)
    assert report["runs"] == 2 and report["cutoff"] == cutoff.replace("+00:00", "Z")
    assert [(r["chain"], r["first"], r["last"]) for r in report["ranges"]] == [(chain, 1, 2)]
    assert _runs(signed) == runs[2:]
    dumped = pyoxigraph.Store.read_only(str(signed)).dump(format=pyoxigraph.RdfFormat.N_QUADS)
    for run, _ in runs[:2]:
        assert run.rsplit(":", 1)[0].encode() not in dumped  # nothing of the run is left
    ((_, tombstone),) = _tombstones(signed)
    assert (tombstone.chain, tombstone.first, tombstone.last, tombstone.runs) == (chain, 1, 2, 2)
    assert tombstone.policy == f"before {report['cutoff']}"
    code, out = _verify(signed, *_trust(keys))
    assert code == 0, out
    assert f"pruned by policy: chain {chain} sequence 1-2" in out, out


def test_keep_takes_a_duration_and_bad_input_is_a_usage_error(signed: Path) -> None:
    where = ("--store", str(signed))
    code, out = _cli("prune", "--keep", "P184D", *where)
    assert code == 0 and "nothing to prune" in out, out
    code, out = _cli("prune", "--keep", "30d", "--format", "json", *where)
    assert code == 0 and json.loads(out)["policy"] == "keep P30D", out
    for bad in ("6mo", "P6M", "180", "0d", "-3d", "P", "soon"):
        code, out = _cli("prune", "--keep", bad, *where)
        assert code == 2 and "--keep" in out, (bad, out)
    code, out = _cli("prune", "--before", "last tuesday", *where)
    assert code == 2 and "--before" in out, out
    code, out = _cli("prune", *where)
    assert code == 2 and "--before" in out and "--keep" in out, out
    code, out = _cli("prune", "--before", "2020-01-01", "--keep", "1d", *where)
    assert code == 2, out
    assert len(_runs(signed)) == 5


def test_a_run_deleted_after_a_prune_is_named_deleted(signed: Path, keys: Path) -> None:
    runs = _pruned(signed, keys)
    chain = _entries(signed)[0].chain
    _delete_run(signed, runs[3][0])  # sequence 4: runs 3 and 5 stay
    code, out = _verify(signed, *_trust(keys))
    assert code == 1, out
    assert f"chain {chain}: sequence 4 missing, deleted" in out, out
    assert f"pruned by policy: chain {chain} sequence 1-2" in out, out  # still told apart


def test_a_forged_tombstone_widening_the_range_fails_under_trust(
    signed: Path, keys: Path, tmp_path: Path
) -> None:
    """Run 3 deleted after the prune, then hidden by a tombstone for sequence 3: unsigned,
    signed by another key, or the real tombstone widened to 1-3 (its content hash redone)."""
    runs = _pruned(signed, keys)
    third = next(entry for entry in _entries(signed) if entry.sequence == 3)
    _delete_run(signed, runs[2][0])
    assert run_cli("keygen", "--out", str(tmp_path / "other")).returncode == 0
    other = KeySigner(tmp_path / "other" / "signing.key")
    hiding = Tombstone(third.chain, 3, 3, third.hash, 1, "2099-01-01T00:00:00Z", "keep P1D", _NOW)
    for signer, says in ((None, "is unsigned"), (other, "signed by another key")):
        forger = Sealer(chain=f"forger-{says[:2]}", signer=signer)
        _load(signed, forger.tombstone(hiding))
        code, out = _verify(signed, *_trust(keys))
        assert code == 1, out
        assert says in out and f"chain {third.chain}: sequence 3 missing, deleted" in out, out
        code, out = _verify(signed)  # without --trust a tombstone proves nothing, and it says so
        assert "not a forger" in out, out
    ((node, real),) = [found for found in _tombstones(signed) if "forger" not in found[0]]
    widened = Tombstone(real.chain, 1, 3, third.hash, 3, real.cutoff, real.policy, real.time)
    store = pyoxigraph.Store(str(signed))
    _set(store, node, O.tombstone, widened.canonical().decode())
    _set(store, node, O.contentHash, widened.content)
    store.flush()
    del store
    code, out = _verify(signed, "--trust", str(keys / "signing.pub"))
    assert code == 1 and "bad signature" in out, out
    # Not trusted, the real tombstone covers nothing either: what it pruned shows deleted.
    assert f"chain {third.chain}: sequence 1-3 missing, deleted" in out, out


def test_a_tombstone_edited_and_rehashed_fails(signed: Path, keys: Path) -> None:
    """The tombstone's cutoff moved and every hash over it redone (its content hash, the
    pruner's checkpoint in the store): the signature and the checkpoint file still tell."""
    _pruned(signed, keys)
    ((node, real),) = _tombstones(signed)
    edited = Tombstone(
        real.chain, real.first, real.last, real.head, real.runs, "2099-01-01T00:00:00Z",
        real.policy, real.time,
    )  # fmt: skip
    (entry,) = [e for e in _tombstone_entries(signed) if e.bundle == node]
    rehashed = dataclasses.replace(entry, content=edited.content)
    store = pyoxigraph.Store(str(signed))
    _set(store, node, O.tombstone, edited.canonical().decode())
    _set(store, node, O.contentHash, edited.content)
    for quad in list(store.quads_for_pattern(None, pyoxigraph.NamedNode(O.chainId[1:-1]), None)):
        if quad.object.value == entry.chain and quad.subject.value != node:
            _set(store, quad.subject.value, O.headHash, rehashed.hash)  # its checkpoint
    store.flush()
    del store
    code, out = _verify(signed)
    assert code == 0, out  # every hash agrees again: only a signature or the file can tell
    code, out = _verify(signed, "--trust", str(keys / "signing.pub"))
    assert code == 1 and "bad signature" in out, out
    code, out = _verify(signed, "--checkpoints", str(keys.parent / "checkpoints.jsonl"))
    assert code == 1 and "another head" in out, out


def _tombstone_entries(path: Path) -> list[Entry]:
    rows = EmbeddedBackend(path).query(tombstones_query(f"<{GRAPH}>")).rows
    return [found[0] for row in rows if (found := tombstone_entry(row)) is not None]


def test_a_tombstone_naming_an_entry_still_stored_fails(signed: Path) -> None:
    fourth = next(entry for entry in _entries(signed) if entry.sequence == 4)
    claim = Tombstone(fourth.chain, 4, 4, fourth.hash, 1, "2099-01-01T00:00:00Z", "keep P1D", _NOW)
    _load(signed, Sealer(chain="liar").tombstone(claim))
    code, out = _verify(signed)
    assert code == 1, out
    assert f"sequence 4 of chain {fourth.chain}" in out and "still stored" in out, out


def test_prune_of_a_tenant_touches_nothing_of_another(tmp_path: Path, keys: Path) -> None:
    store = tmp_path / "store"
    for tenant in ("team-a", "team-b"):
        handle = otel_prov.configure(
            store=store,
            set_global=False,
            wal_dir=tmp_path / f"wal-{tenant}",
            tenant=tenant,
            signing_key=keys / "signing.key",
        )
        for index in range(3):
            run_demo_agent(
                tracer_provider=handle.tracer_provider, conversation_id=f"{tenant}{index}"
            )
            handle.force_flush()
        handle.shutdown()
    b_graph = pyoxigraph.NamedNode(f"{GRAPH}/tenants/team-b")

    def of_b() -> set[pyoxigraph.Quad]:
        db = pyoxigraph.Store.read_only(str(store))
        found = set(db.quads_for_pattern(None, None, None, b_graph))
        del db
        return found

    before = of_b()
    code, out = _cli(
        "prune", "--keep", "P1D", "--tenant", "team-b", "--dry-run", "--store", str(store)
    )
    assert code == 0 and "nothing to prune" in out, out
    code, out = _cli(
        "prune", "--before", "2099-01-01", "--tenant", "team-a", "--store", str(store), key=keys
    )
    assert code == 0 and "pruned 3 runs" in out, out
    assert of_b() == before  # not a triple of team-b's graph changed
    trusted = str(keys / "signing.pub")
    for tenant, says in (("team-a", "pruned by policy"), ("team-b", "0 failed")):
        code, out = _verify(store, "--tenant", tenant, "--trust", trusted)
        assert code == 0 and says in out, (tenant, out)
    for tenant, left in (("team-a", 0), ("team-b", 3)):
        code, out = _cli("sessions", "--format", "json", "--tenant", tenant, "--store", str(store))
        assert len(json.loads(out or "[]")) == left, (tenant, out)
    db = pyoxigraph.Store.read_only(str(store))
    of_a = db.dump(
        format=pyoxigraph.RdfFormat.N_TRIPLES,
        from_graph=pyoxigraph.NamedNode(f"{GRAPH}/tenants/team-a"),
    )
    del db
    assert TOMBSTONE_FORM.encode() in of_a  # the tombstone went to team-a's graph


def _chain_of(name: str, count: int) -> list[Entry]:
    """``count`` entries of chain ``name``, linked as a writer links them."""
    entries: list[Entry] = []
    for sequence in range(1, count + 1):
        previous = entries[-1].hash if entries else ""
        entries.append(
            Entry(name, sequence, previous, f"urn:b{sequence}", f"urn:r{sequence}", "sha256:0", "f")
        )
    return entries


def test_a_tombstone_per_range_of_consecutive_entries_of_each_chain() -> None:
    a, b = _chain_of("a", 6), _chain_of("b", 2)
    removed = [a[0], a[1], a[3], b[0], b[1], a[4]]
    runs = ["urn:r1", "urn:r2", "urn:r4", "urn:r5"]
    found = tombstones_for(removed, runs, cutoff="c", policy="p", time="t")
    assert [(t.chain, t.first, t.last, t.head, t.runs) for t in found] == [
        ("a", 1, 2, a[1].hash, 2),
        ("a", 4, 5, a[4].hash, 2),
        ("b", 1, 2, b[1].hash, 2),
    ]
    assert Tombstone.from_json(found[0].canonical().decode()) == found[0]


def test_gaps_are_pruned_when_a_tombstone_covers_them_and_deleted_when_none_does() -> None:
    entries = _chain_of("a", 6)
    kept = [entries[2], entries[4], entries[5]]  # 1-2 pruned, 4 deleted
    pruned = {"urn:t": Tombstone("a", 1, 2, entries[1].hash, 2, "c", "p", "t")}
    of_bundle, of_chain = chain_problems("a", kept, [], pruned)
    assert of_bundle == {} and len(of_chain) == 1 and "sequence 4 missing, deleted" in of_chain[0]
    lying = {"urn:t": Tombstone("a", 1, 3, entries[1].hash, 2, "c", "p", "t")}
    of_bundle, _ = chain_problems("a", kept, [], lying)
    assert "sequence 3 of chain a was pruned, and it is still stored" in of_bundle["urn:t"][0]
    other = {"urn:t": Tombstone("a", 1, 2, "sha256:other", 2, "c", "p", "t")}
    (problem,) = chain_problems("a", kept, [], other)[0]["urn:t"]
    assert "another hash for sequence 2 of chain a than the next entry urn:b3" in problem
    # The head a checkpoint states for the last entry pruned must be the tombstone's.
    stated = [Checkpoint("a", 2, entries[0].hash, "t"), Checkpoint("a", 6, entries[5].hash, "t")]
    of_bundle, of_chain = chain_problems("a", kept, stated, pruned)
    assert "names another head for sequence 2" in of_bundle["urn:t"][0], of_bundle
    # Everything pruned, the checkpoint of the last entry still anchors the head.
    everything = {"urn:t": Tombstone("a", 1, 6, entries[5].hash, 6, "c", "p", "t")}
    assert chain_problems("a", [], stated[1:], everything) == ({}, [])
    assert "truncated" in chain_problems("a", [], [Checkpoint("a", 7, "x", "t")], everything)[1][0]


@pytest.mark.parametrize(
    ("text", "days", "iso"),
    [
        ("184d", 184, "P184D"),
        ("P184D", 184, "P184D"),
        ("26w", 182, "P182D"),
        ("PT36H", 1.5, "P1DT12H"),
    ],
)
def test_durations(text: str, days: float, iso: str) -> None:
    length = duration(text)
    assert length == timedelta(days=days) and iso_duration(length) == iso


@pytest.mark.parametrize(
    ("text", "says"),
    [("6mo", "months and years"), ("P6M", "months and years"), ("1y", "months and years"),
     ("180", "180d or P180D"), ("P", "180d or P180D"), ("PT", "180d or P180D"),
     ("0d", "above zero"), ("99999999d", "no cutoff")],
)  # fmt: skip
def test_bad_durations_say_why(text: str, says: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        duration(text)


def test_prune_of_a_store_another_process_writes_is_refused_before_anything_is_written(
    signed: Path, keys: Path
) -> None:
    handle = otel_prov.configure(store=signed, set_global=False, wal_dir=signed.parent / "wal2")
    try:
        code, out = _cli("prune", "--before", "2099-01-01", "--store", str(signed), key=keys)
    finally:
        handle.shutdown()
    assert code == 2 and "another process writes" in out and "nothing was pruned" in out, out
    assert len(_runs(signed)) == 5 and not _tombstones(signed)
    assert len(ParkedBatches(signed)) == 0  # no tombstone left waiting for the store either
