"""The audit trail's hostile tests on real servers (Oxigraph, Virtuoso): the chain entries,
signatures and checkpoints a writer stores there read back to what it signed, and the
tamperings of issue 27 made over SPARQL Update show in ``verify --endpoint``."""

from __future__ import annotations

from pathlib import Path

import pytest

import otel_prov
from otel_prov.demo import run_demo_agent
from tests.cli import run_cli
from tests.integration.store_queries import GRAPH, select, update
from tests.servers import SparqlServer

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
    for index in range(7):
        run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id=f"c{index}")
        handle.force_flush()
    handle.shutdown()
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
