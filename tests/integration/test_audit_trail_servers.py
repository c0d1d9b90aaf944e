"""The audit trail's hostile tests on real servers (Oxigraph, Virtuoso): the chain entries,
signatures and checkpoints a writer stores there read back to what it signed, and the
tamperings of issue 27 made over SPARQL Update show in ``verify --endpoint``, a prune
included."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import otel_prov
from otel_prov._signing import KeySigner
from otel_prov.demo import run_demo_agent
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.prov._chain import Tombstone
from otel_prov.prov._rdf import literal
from otel_prov.prov._sealer import Sealer
from otel_prov.read._chains import _entry, entries_query
from tests.cli import run_cli
from tests.integration.store_queries import GRAPH, select, update
from tests.servers import SparqlServer
from tests.test_prune import _cli

pytestmark = pytest.mark.integration

OPROV = "https://w3id.org/otel-prov/ns#"
_LINKS = ("previousEntryHash", "previousBundle", "previousHash")


def _runs(server: SparqlServer) -> list[tuple[str, str]]:
    rows = select(
        server,
        f"""PREFIX oprov: <{OPROV}> PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?s ?b WHERE {{ GRAPH <{GRAPH}> {{ ?s oprov:runStartedAt ?t .
          ?b oprov:bundleOf ?s . FILTER NOT EXISTS {{ ?b prov:wasRevisionOf ?x }} }} }}
        ORDER BY ?t""",
    )
    return [(row["s"], row["b"]) for row in rows]


def _links(server: SparqlServer, bundle: str) -> list[tuple[str, str]]:
    rows = select(
        server,
        f"SELECT ?p ?o WHERE {{ GRAPH <{GRAPH}> {{ <{bundle}> ?p ?o . FILTER(?p IN ("
        + ", ".join(f"<{OPROV}{name}>" for name in _LINKS)
        + ")) } }",
    )
    return [(row["p"], row["o"]) for row in rows]


def _set_links(server: SparqlServer, bundle: str, links: list[tuple[str, str]]) -> None:
    old = " ".join(f'<{bundle}> <{p}> "{o}" .' for p, o in _links(server, bundle))
    new = " ".join(f'<{bundle}> <{p}> "{o}" .' for p, o in links)
    update(server, f"DELETE DATA {{ GRAPH <{GRAPH}> {{ {old} }} }}")
    update(server, f"INSERT DATA {{ GRAPH <{GRAPH}> {{ {new} }} }}")


def _delete_run(server: SparqlServer, run: str) -> None:
    prefix = run.rsplit(":", 1)[0] + ":"
    update(
        server,
        f"""DELETE {{ GRAPH <{GRAPH}> {{ ?x ?p ?o }} }} WHERE {{ GRAPH <{GRAPH}> {{ ?x ?p ?o .
        FILTER(STRSTARTS(STR(?x), "{prefix}")) }} }}""",
    )


def test_signed_chains_round_trip_and_every_tampering_shows(
    server: SparqlServer, tmp_path: Path
) -> None:
    keys = _signed_runs(server, tmp_path, 7)
    where = ("--endpoint", server.query_endpoint)
    trust = (
        "--trust",
        str(keys / "signing.pub"),
        "--checkpoints",
        str(tmp_path / "checkpoints.jsonl"),
    )
    clean = run_cli("verify", "--all", *where, *trust)
    assert clean.returncode == 0, clean.stdout  # what was signed reads back as signed
    runs = _runs(server)
    assert len(runs) == 7
    # Runs 2 and 3 (sequence 2, 3) swap links; run 5 goes and run 6 takes its link; run 7
    # (the newest) goes.
    second, third = _links(server, runs[1][1]), _links(server, runs[2][1])
    _set_links(server, runs[1][1], third)
    _set_links(server, runs[2][1], second)
    fifth = _links(server, runs[4][1])
    _delete_run(server, runs[4][0])
    _set_links(server, runs[5][1], fifth)
    _delete_run(server, runs[6][0])
    found = run_cli("verify", "--all", *where, *trust)
    assert found.returncode == 1
    out = found.stdout
    assert "(sequence 2) does not follow" in out and "(sequence 3) does not follow" in out, out
    assert "sequence 5, 7 missing" in out or "sequence 5 missing" in out, out
    assert "truncated" in out and "sequence 7" in out, out
    assert "bad signature" in out, out  # the rewritten links are under the signature


def _tombstone_rows(server: SparqlServer) -> list[dict[str, str]]:
    return select(
        server,
        f"SELECT ?n ?j WHERE {{ GRAPH <{GRAPH}> {{ ?n <{OPROV}tombstone> ?j }} }} ORDER BY ?n",
    )


def test_prune_then_tamper_on_a_server(server: SparqlServer, tmp_path: Path) -> None:
    """Issue 27 point 4 over SPARQL: runs 1-2 pruned (verify says pruned by policy), then
    run 4 deleted (named deleted), a tombstone by another key for it, and the real
    tombstone widened over it with its content hash redone: each fails under --trust."""
    keys = _signed_runs(server, tmp_path, 5)
    runs = _runs(server)
    where = _prune_the_first_two(server, runs, keys)
    assert _runs(server) == runs[2:]
    backend = RemoteBackend(server.query_endpoint)
    entries = {
        entry.sequence: entry
        for row in backend.query(entries_query(f"<{GRAPH}>")).rows
        if (entry := _entry(row)) is not None
    }
    chain = entries[3].chain
    trust = (
        "--trust",
        str(keys / "signing.pub"),
        "--checkpoints",
        str(keys.parent / "checkpoints.jsonl"),
    )
    code, out = _cli("verify", "--all", *where, *trust)
    assert code == 0, out
    assert f"pruned by policy: chain {chain} sequence 1-2" in out, out
    _delete_run(server, runs[3][0])
    code, out = _cli("verify", "--all", *where, *trust)
    assert code == 1 and f"chain {chain}: sequence 4 missing, deleted" in out, out
    assert run_cli("keygen", "--out", str(tmp_path / "other")).returncode == 0
    hiding = Tombstone(
        chain, 4, 4, entries[4].hash, 1, "2099-01-01T00:00:00Z", "keep P1D", "2099-01-01T00:00:00Z"
    )
    forged = Sealer(chain="forger", signer=KeySigner(tmp_path / "other" / "signing.key"))
    lines = " ".join(f"{s} {p} {o} ." for s, p, o in forged.tombstone(hiding))
    update(server, f"INSERT DATA {{ GRAPH <{GRAPH}> {{ {lines} }} }}")
    code, out = _cli("verify", "--all", *where, *trust)
    assert code == 1 and "signed by another key" in out, out
    assert f"chain {chain}: sequence 4 missing, deleted" in out, out
    real = next(row for row in _tombstone_rows(server) if "forger" not in row["n"])
    was = Tombstone.from_json(real["j"])
    widened = dataclasses.replace(was, last=4, head=entries[4].hash, runs=3)
    for predicate, old, new in (
        ("tombstone", real["j"], widened.canonical().decode()),
        ("contentHash", was.content, widened.content),
    ):
        node, prop = f"<{real['n']}>", f"<{OPROV}{predicate}>"
        update(server, f"DELETE DATA {{ GRAPH <{GRAPH}> {{ {node} {prop} {literal(old)} }} }}")
        update(server, f"INSERT DATA {{ GRAPH <{GRAPH}> {{ {node} {prop} {literal(new)} }} }}")
    code, out = _cli("verify", "--all", *where, "--trust", str(keys / "signing.pub"))
    assert code == 1 and "bad signature" in out, out
    assert f"chain {chain}: sequence 1-2, 4 missing, deleted" in out, out


@pytest.mark.parametrize("server", ["oxigraph"], indirect=True)
def test_the_audit_package_of_a_pruned_server_says_pruned_by_policy(
    server: SparqlServer, tmp_path: Path
) -> None:
    """Runs 1-2 pruned over SPARQL, then every run left exported from the server (the
    manifest signed by the writers' key): the package carries the tombstone, and
    ``verify --package`` says of sequence 1-2 what ``verify --endpoint`` says."""
    keys = _signed_runs(server, tmp_path, 4)
    runs = _runs(server)
    where = _prune_the_first_two(server, runs, keys)
    package = tmp_path / "audit.zip"
    checkpoints = ("--checkpoints", str(tmp_path / "checkpoints.jsonl"))
    code, out = _cli("audit-export", "--all", *where, *checkpoints, "--out", str(package), key=keys)
    assert code == 0, out
    exported = out
    backend = RemoteBackend(server.query_endpoint)
    (chain,) = {
        entry.chain
        for row in backend.query(entries_query(f"<{GRAPH}>")).rows
        if (entry := _entry(row)) is not None
    }
    trust = ("--trust", str(keys / "signing.pub"))
    code, out = _cli("verify", "--package", str(package), *trust)
    assert code == 0, out
    said = f"pruned by policy: chain {chain} sequence 1-2 (2 runs that ended before"
    assert said in out, out
    assert "1 tombstone(s); manifest signed by ed25519:" in exported, exported
    code, stored = _cli("verify", "--all", *where, *trust, *checkpoints)
    assert code == 0 and said in stored, stored


def _prune_the_first_two(
    server: SparqlServer, runs: list[tuple[str, str]], keys: Path
) -> tuple[str, str]:
    """Prune over SPARQL every run started before the third of ``runs``; the read flags."""
    (started,) = select(
        server,
        f"SELECT ?t WHERE {{ GRAPH <{GRAPH}> {{ <{runs[2][0]}> <{OPROV}runStartedAt> ?t }} }}",
    )
    where = ("--endpoint", server.query_endpoint)
    code, out = _cli(
        "prune", "--before", started["t"], *where, "--endpoint-update", server.update_endpoint,
        key=keys,
    )  # fmt: skip
    assert code == 0 and "pruned 2 runs" in out, out
    return where


def _signed_runs(server: SparqlServer, tmp_path: Path, count: int) -> Path:
    """``count`` demo runs written to ``server`` by one signing writer, with its checkpoint
    file in ``tmp_path``; the directory of its keys."""
    keys = tmp_path / "keys"
    assert run_cli("keygen", "--out", str(keys)).returncode == 0
    handle = otel_prov.configure(
        set_global=False,
        sparql_update_endpoint=server.update_endpoint,
        sparql_query_endpoint=server.query_endpoint,
        spool_dir=tmp_path / "spool",
        wal_dir=tmp_path / "wal",
        signing_key=keys / "signing.key",
        checkpoint_file=tmp_path / "checkpoints.jsonl",
    )
    for index in range(count):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()
    return keys
