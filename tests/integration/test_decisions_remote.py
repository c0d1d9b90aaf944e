"""Decisions read the same from Oxigraph's and Virtuoso's SPARQL endpoints as from the
embedded store: ``why`` (with its evidence, adoptions and revision, of the run and of the
decision alone), what ``summary`` says of the decision, ``diff`` and the three decision
recipes, on the refund example's run and its review.

``summary`` is compared on its decision's sentences only: read from Virtuoso, the
session view loses the arguments of this run's tool calls (a defect of the session
view, there before decisions were: ``show --format json`` gives them as null)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph
import pytest

from otel_prov import ProvRecord
from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.read._recipes import RECIPES
from tests.cli import run_cli
from tests.refund_run import CONVERSATION, review_refund, run_refund_agent
from tests.servers import SparqlServer

pytestmark = pytest.mark.integration


def _copy_to(store: Path, server: SparqlServer, tmp_path: Path) -> None:
    """Every triple of the embedded store (the run, its seal, the review) onto ``server``."""
    reading = pyoxigraph.Store.read_only(str(store))
    triples = tuple(
        (str(q.subject), str(q.predicate), str(q.object))
        for q in reading.quads_for_pattern(None, None, None)
    )
    del reading
    remote = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    remote.export([ProvRecord(trace_id="0" * 32, root="", triples=triples)])
    assert remote.force_flush(30_000)
    remote.shutdown()


def test_decisions_read_alike_from_the_store_and_the_endpoint(
    server: SparqlServer, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    run_refund_agent(store, cwd=tmp_path)
    review_refund(store)
    _copy_to(store, server, tmp_path)
    local, remote = ("--store", str(store)), ("--endpoint", server.query_endpoint)
    decision = json.loads(run_cli("why", CONVERSATION, "--format", "json", *local).stdout)
    (d1,) = [n["id"] for n in decision["nodes"] if n["type"] == "Decision" and n.get("confidence")]
    run = run_cli("sessions", "--format", "json", *local)
    (session,) = [row["id"] for row in json.loads(run.stdout)]
    commands = [
        ("why", CONVERSATION),
        ("why", CONVERSATION, "--format", "json"),
        ("why", CONVERSATION, "--format", "mermaid"),
        ("why", d1, "--format", "json"),
        ("summary", CONVERSATION, "--format", "json"),
        ("diff", session, session, "--format", "json"),
        *(("query", recipe.sparql, "--format", "json") for recipe in RECIPES[-3:]),
    ]
    for command in commands:
        here, there = run_cli(*command, *local), run_cli(*command, *remote)
        assert here.returncode == there.returncode == 0, (command, there.stderr)
        if command[0] == "summary":
            told = [json.loads(answer.stdout)["sentences"] for answer in (here, there)]
            decided = [
                [s for s in said if s["text"].startswith(("Decided", "Decision"))] for said in told
            ]
            assert len(decided[0]) == 2 and decided[0] == decided[1]
        elif command[0] == "query":
            rows = [sorted(row.items()) for row in json.loads(here.stdout)]
            assert rows and sorted(rows) == sorted(
                sorted(row.items()) for row in json.loads(there.stdout)
            ), command
        else:
            assert there.stdout == here.stdout, command
    assert "contradictedBy" in run_cli("why", CONVERSATION, "--format", "json", *remote).stdout
