"""Hostile tests of the audit trail: what someone who can write the store (and has read the
code) does to hide a run or change one, and what ``verify`` must say about it.

Each tampering is made on a real embedded store written by ``configure()``, as an agent
writes it; ``verify`` runs as the ``otel-prov`` command.  Issue 27, point 6.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path

import pyoxigraph
import pytest

import otel_prov
from benchmarks.workload import session_spans
from otel_prov.demo import run_demo_agent
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.processing._chain_writer import ChainWriter
from otel_prov.prov._bundle import bundle_triples, session_content
from otel_prov.prov._chain import Checkpoint, Entry
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import integer, literal, to_nquads
from otel_prov.prov._vocab import O, P
from otel_prov.read._chains import _entry, entries_query
from tests.builders import T0
from tests.cli import CLI, run_cli
from tests.recording_exporter import RecordingExporter

DATA = Path(__file__).parent / "data"

_PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> "
    "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
    "PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> "
)
_LINKS = (
    "https://w3id.org/otel-prov/ns#previousBundle",
    "https://w3id.org/otel-prov/ns#previousHash",
    "https://w3id.org/otel-prov/ns#previousEntryHash",
)
"""Every predicate that links a bundle to the one before it, in any version's chain."""


def _write_runs(path: Path, runs: int, **options: object) -> None:
    handle = otel_prov.configure(
        store=path, set_global=False, wal_dir=path.parent / "wal", **options
    )
    for index in range(runs):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """Four runs of one agent, written by one process, unsigned."""
    path = tmp_path / "store"
    _write_runs(path, 4)
    return path


def _runs(path: Path) -> list[tuple[str, str]]:
    """(run, its first bundle) of every stored run, oldest first."""
    store = pyoxigraph.Store(str(path))
    rows = store.query(
        _PREFIXES + "SELECT ?s ?b WHERE { GRAPH ?g { ?s oprov:runStartedAt ?t . "
        "?b oprov:bundleOf ?s . FILTER NOT EXISTS { ?b prov:wasRevisionOf ?x } } } ORDER BY ?t"
    )
    found = [(row["s"].value, row["b"].value) for row in rows]  # type: ignore[union-attr]
    del store
    return found


def _update(path: Path, sparql: str) -> None:
    store = pyoxigraph.Store(str(path))
    store.update(_PREFIXES + sparql)
    store.flush()
    del store


def _links(path: Path, bundle: str) -> list[pyoxigraph.Quad]:
    store = pyoxigraph.Store(str(path))
    found = _links_in(store, bundle)
    del store
    return found


def _links_in(store: pyoxigraph.Store, bundle: str) -> list[pyoxigraph.Quad]:
    return [
        quad
        for predicate in _LINKS
        for quad in store.quads_for_pattern(
            pyoxigraph.NamedNode(bundle), pyoxigraph.NamedNode(predicate), None
        )
    ]


def _set_links(path: Path, bundle: str, links: list[pyoxigraph.Quad]) -> None:
    """Give ``bundle`` the chain links ``links`` (taken from another bundle), its own gone."""
    store = pyoxigraph.Store(str(path))
    for quad in _links_in(store, bundle):
        store.remove(quad)
    subject = pyoxigraph.NamedNode(bundle)
    for quad in links:
        store.add(pyoxigraph.Quad(subject, quad.predicate, quad.object, quad.graph_name))
    store.flush()
    del store


def _delete_run(path: Path, run: str) -> None:
    """Every triple of the run's trace, its bundles included."""
    prefix = run.rsplit(":", 1)[0] + ":"
    _update(
        path,
        f"""DELETE {{ GRAPH ?g {{ ?x ?p ?o }} }} WHERE {{ GRAPH ?g {{ ?x ?p ?o .
        FILTER(STRSTARTS(STR(?x), "{prefix}")) }} }}""",
    )


def _verify(path: Path, *args: str) -> tuple[int, str]:
    result = run_cli("verify", "--all", "--store", str(path), *args)
    return result.returncode, result.stdout + result.stderr


def test_untouched_runs_verify(store: Path) -> None:
    code, out = _verify(store)
    assert code == 0, out


def test_deleting_the_newest_run_is_caught(store: Path) -> None:
    """Nothing points to the newest run: the writer's checkpoint at shutdown anchors it."""
    newest, _ = _runs(store)[-1]
    _delete_run(store, newest)
    code, out = _verify(store)
    assert code == 1, out
    assert "sequence 4" in out and "truncated" in out, out


def test_swapping_two_bundles_links_is_caught(store: Path) -> None:
    _, (_, second), (_, third), _ = _runs(store)
    second_links, third_links = _links(store, second), _links(store, third)
    assert second_links and third_links
    _set_links(store, second, third_links)
    _set_links(store, third, second_links)
    code, out = _verify(store)
    assert code == 1, out
    assert "does not follow" in out, out


def test_deleting_a_middle_run_and_repointing_the_next_is_caught(store: Path) -> None:
    """Run 2 deleted, run 3's link given run 2's own (which pointed to run 1)."""
    _, (second_run, second), (_, third), _ = _runs(store)
    links = _links(store, second)
    _delete_run(store, second_run)
    _set_links(store, third, links)
    code, out = _verify(store)
    assert code == 1, out
    assert "sequence 2" in out and "missing" in out, out


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    result = run_cli("keygen", "--out", str(tmp_path / "keys"))
    assert result.returncode == 0, result.stderr
    return tmp_path / "keys"


@pytest.fixture
def signed(tmp_path: Path, keys: Path) -> Path:
    """Four runs written by one process that signs and keeps a checkpoint file."""
    path = tmp_path / "signed"
    _write_runs(
        path,
        4,
        signing_key=keys / "signing.key",
        checkpoint_file=tmp_path / "checkpoints.jsonl",
    )
    return path


def _entries(path: Path) -> list[Entry]:
    """Every chain entry stored, as verify rebuilds it."""
    backend = EmbeddedBackend(path)
    rows = backend.query(entries_query("<urn:otel-prov:graph>")).rows
    found = [entry for row in rows if (entry := _entry(row)) is not None]
    return sorted(found, key=lambda entry: entry.sequence)


def _set(store: pyoxigraph.Store, subject: str, predicate: str, value: str) -> None:
    node, prop = pyoxigraph.NamedNode(subject), pyoxigraph.NamedNode(predicate[1:-1])
    graph = pyoxigraph.NamedNode("urn:otel-prov:graph")
    for quad in list(store.quads_for_pattern(node, prop, None)):
        store.remove(quad)
    store.add(pyoxigraph.Quad(node, prop, pyoxigraph.Literal(value), graph))


def _edit_and_rehash(path: Path) -> None:
    """Edit an observation of the oldest run, then recompute with the project's own code
    every hash that covers it: its bundle's content hash and manifest, every later entry's
    link, and the head in every stored checkpoint.  Only a signature, or a checkpoint kept
    out of the store, can tell."""
    entries = _entries(path)
    run = entries[0].of
    prefix = run.rsplit(":", 1)[0] + ":"
    _update(
        path,
        f"""DELETE {{ GRAPH ?g {{ ?o prov:value ?v }} }}
        INSERT {{ GRAPH ?g {{ ?o prov:value "sunny" }} }}
        WHERE {{ GRAPH ?g {{ ?o a oprov:Observation ; prov:value ?v .
          FILTER(STRSTARTS(STR(?o), "{prefix}")) }} }}""",
    )
    store = pyoxigraph.Store(str(path))
    everything = [
        (str(q.subject), str(q.predicate), str(q.object))
        for q in store.quads_for_pattern(None, None, None)
    ]
    first = f"<{entries[0].bundle}>"
    content = [t for t in session_content(everything, f"<{run}>") if t[0] != first]
    forged = bundle_triples(f"<{run}>", None, content)
    new_hash = next(o for _, p, o in forged if p == O.contentHash)[1:-1]
    new_manifest = next(o for _, p, o in forged if p == O.manifest)
    _set(store, entries[0].bundle, O.contentHash, new_hash)
    _set(store, entries[0].bundle, O.manifest, json.loads(new_manifest))
    previous = ""
    heads = {}
    for entry in entries:
        rebuilt = dataclasses.replace(
            entry,
            previous=previous,
            content=new_hash if entry.bundle == entries[0].bundle else entry.content,
        )
        if previous:
            _set(store, entry.bundle, O.previousEntryHash, previous)
        previous = heads[entry.sequence] = rebuilt.hash
    for quad in list(store.quads_for_pattern(None, pyoxigraph.NamedNode(O.headHash[1:-1]), None)):
        sequence = int(
            next(
                store.quads_for_pattern(
                    quad.subject, pyoxigraph.NamedNode(O.sequenceNumber[1:-1]), None
                )
            ).object.value
        )
        _set(store, quad.subject.value, O.headHash, heads[sequence])
    store.flush()
    del store


def test_an_edit_with_every_hash_recomputed_is_caught_by_the_signature(
    signed: Path, keys: Path, tmp_path: Path
) -> None:
    code, out = _verify(signed, "--trust", str(keys / "signing.pub"))
    assert code == 0, out
    _edit_and_rehash(signed)
    code, out = _verify(signed)  # the hashes agree again: they cannot tell, and say so
    assert code == 0, out
    assert "not a forger" in out
    code, out = _verify(signed, "--trust", str(keys / "signing.pub"))
    assert code == 1, out
    assert "bad signature" in out, out
    code, out = _verify(signed, "--checkpoints", str(tmp_path / "checkpoints.jsonl"))
    assert code == 1, out
    assert "another head for sequence 4" in out, out


def test_another_key_and_an_unsigned_forged_revision_are_named(
    signed: Path, keys: Path, tmp_path: Path
) -> None:
    other = run_cli("keygen", "--out", str(tmp_path / "other"))
    assert other.returncode == 0
    code, out = _verify(signed, "--trust", str(tmp_path / "other" / "signing.pub"))
    assert code == 1 and "signed by another key" in out, out
    # A revision forged as the chain's next entry, rightly linked, but not signed.
    entries = _entries(signed)
    head = entries[-1]
    run = entries[1].of
    store = pyoxigraph.Store(str(signed))
    everything = [
        (str(q.subject), str(q.predicate), str(q.object))
        for q in store.quads_for_pattern(None, None, None)
    ]
    content = [t for t in session_content(everything, f"<{run}>") if not t[0].endswith(":bundle>")]
    revision = f"<{run}:bundle-2>"
    first = f"<{run}:bundle>"
    forged = [
        (revision if s == first else s, p, o)
        for s, p, o in bundle_triples(f"<{run}>", 1_900_000_000_000_000_000, content)
    ]
    forged += [
        (revision, P.wasRevisionOf, first),
        (revision, O.chainId, literal(head.chain)),
        (revision, O.sequenceNumber, integer(head.sequence + 1)),
        (revision, O.previousEntryHash, literal(head.hash)),
    ]
    store.load(to_nquads(forged, "<urn:otel-prov:graph>").encode(), pyoxigraph.RdfFormat.N_QUADS)
    store.flush()
    del store
    code, out = _verify(signed, "--trust", str(keys / "signing.pub"))
    assert code == 1 and f"entry {revision[1:-1]} is unsigned" in out, out


def test_an_old_bundle_replayed_as_new_is_caught(store: Path) -> None:
    """Run 2's entry copied in as a revision of run 3: two entries with one number."""
    _, (second_run, _), (third_run, _), _ = _runs(store)
    db = pyoxigraph.Store(str(store))
    graph = pyoxigraph.NamedNode("urn:otel-prov:graph")
    copy = pyoxigraph.NamedNode(f"{third_run}:bundle-2")
    for quad in list(
        db.quads_for_pattern(pyoxigraph.NamedNode(f"{second_run}:bundle"), None, None)
    ):
        target = pyoxigraph.NamedNode(third_run) if quad.object.value == second_run else quad.object
        db.add(pyoxigraph.Quad(copy, quad.predicate, target, graph))
    db.add(
        pyoxigraph.Quad(
            copy,
            pyoxigraph.NamedNode(P.wasRevisionOf[1:-1]),
            pyoxigraph.NamedNode(f"{third_run}:bundle"),
            graph,
        )
    )
    db.flush()
    del db
    code, out = _verify(store)
    assert code == 1 and "two entries have sequence 2" in out, out


def test_keygen_writes_a_private_key_only_its_owner_reads(keys: Path) -> None:
    assert (keys / "signing.key").stat().st_mode & 0o777 == 0o600
    assert b"PUBLIC KEY" in (keys / "signing.pub").read_bytes()
    again = run_cli("keygen", "--out", str(keys))
    assert again.returncode == 2 and "never replaces a key" in again.stderr


def test_the_key_is_never_stored_nor_logged(
    signed: Path, keys: Path, caplog: pytest.LogCaptureFixture
) -> None:
    secret = (keys / "signing.key").read_text()
    body = "".join(line for line in secret.splitlines() if "-----" not in line)
    store = pyoxigraph.Store.read_only(str(signed))
    dumped = store.dump(format=pyoxigraph.RdfFormat.N_QUADS).decode()
    assert body not in dumped and "BEGIN PRIVATE" not in dumped
    assert body not in caplog.text


def test_a_key_that_cannot_be_read_is_a_clear_error_at_start_never_in_the_agent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    missing = tmp_path / "nowhere" / "signing.key"
    with caplog.at_level("ERROR"):
        handle = otel_prov.configure(
            store=tmp_path / "store", set_global=False, signing_key=missing
        )
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id="c")
        handle.shutdown()
    assert f"cannot read the signing key {missing}" in caplog.text
    assert "UNSIGNED" in caplog.text
    (tmp_path / "bad.key").write_text("not a key")
    result = subprocess.run(
        [*CLI, "annotate", "x", "--name", "n", "--store", str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "OTEL_PROV_SIGNING_KEY": str(tmp_path / "bad.key")},
    )
    assert result.returncode == 2
    assert "is not an unencrypted PEM private key" in result.stderr


def test_deleting_the_newest_run_and_the_stored_checkpoints_is_caught_by_the_file(
    signed: Path, tmp_path: Path
) -> None:
    newest, _ = _runs(signed)[-1]
    _delete_run(signed, newest)
    _update(signed, "DELETE WHERE { GRAPH ?g { ?c a oprov:Checkpoint ; ?p ?o } }")
    code, out = _verify(signed)
    assert code == 0, out  # nothing in the store says the chain was longer
    code, out = _verify(signed, "--checkpoints", str(tmp_path / "checkpoints.jsonl"))
    assert code == 1, out
    assert "truncated" in out and "sequence 4 removed" in out, out


def test_a_writer_checkpoints_every_n_entries_every_t_seconds_and_at_the_end(
    tmp_path: Path,
) -> None:
    exporter = RecordingExporter()
    file = tmp_path / "checkpoints.jsonl"
    chain = ChainWriter(signer=None, checkpoint_file=file, every=2, interval_s=3600)
    for trace in range(1, 6):
        chain.sealer.seal(map_spans(session_spans(trace, iterations=1)), T0)
        chain.sealed(exporter, T0)
    chain.checkpoint(exporter, T0)  # at shutdown
    chain.checkpoint(exporter, T0)  # nothing new since: nothing stated again
    lines = [Checkpoint.from_line(line) for line in file.read_text().splitlines()]
    assert [c.sequence for c in lines] == [2, 4, 5]
    assert lines[-1].head == chain.sealer.head
    assert [list(r.triples) for r in exporter.checkpoints] == [c.triples() for c in lines]
    hurried = ChainWriter(signer=None, checkpoint_file=file, every=100, interval_s=1e-9)
    hurried.sealer.seal(map_spans(session_spans(9, iterations=1)), T0)
    hurried.sealed(exporter, T0)  # one entry, but the interval has passed
    assert Checkpoint.from_line(file.read_text().splitlines()[-1]).chain == hurried.sealer.chain


def test_import_and_annotate_sign_what_they_seal(tmp_path: Path, keys: Path) -> None:
    store = tmp_path / "imported"
    environment = {
        **os.environ,
        "OTEL_PROV_SIGNING_KEY": str(keys / "signing.key"),
        "OTEL_PROV_CHECKPOINT_FILE": str(tmp_path / "checkpoints.jsonl"),
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args], capture_output=True, text=True, timeout=120, check=False, env=environment
        )

    imported = cli("import", str(DATA / "traces.jsonl"), "--store", str(store))
    assert imported.returncode == 0, imported.stderr
    (run, *_) = _runs(store)
    annotated = cli("annotate", run[0], "--name", "helpful", "--score", "4", "--store", str(store))
    assert annotated.returncode == 0, annotated.stderr
    code, out = _verify(
        store,
        "--trust",
        str(keys / "signing.pub"),
        "--checkpoints",
        str(tmp_path / "checkpoints.jsonl"),
    )
    assert code == 0, out
    assert len((tmp_path / "checkpoints.jsonl").read_text().splitlines()) == 2  # two writers
