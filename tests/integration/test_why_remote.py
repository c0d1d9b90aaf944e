"""``why``, ``diff`` and ``summary`` read the same from Oxigraph's and Virtuoso's SPARQL
endpoints as from the embedded store: the property paths run on the servers, and the
number of queries does not grow with the run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_prov import ProvRecord
from otel_prov.demo import run_demo_agent
from otel_prov.read import open_endpoint
from tests.builders import records_of
from tests.cli import run_cli
from tests.integration.store_queries import store_both
from tests.retrieval_agent import rag_agent
from tests.servers import SparqlServer
from tests.test_diff import ReliableWeather
from tests.why_runs import raises_after_steps

pytestmark = pytest.mark.integration


def _records() -> list[ProvRecord]:
    return records_of(
        lambda provider: run_demo_agent(conversation_id="flaky", tracer_provider=provider),
        lambda provider: run_demo_agent(
            conversation_id="reliable", tracer_provider=provider, tools=ReliableWeather()
        ),
        rag_agent,
        raises_after_steps,
    )


def test_why_diff_and_summary_agree_between_store_and_endpoint(
    server: SparqlServer, tmp_path: Path
) -> None:
    records = _records()
    local_args, remote_args = store_both(records, server, tmp_path)
    rag = next(r for r in records if any("guide" in str(t) for t in r.triples))
    rag_run = run_cli("sessions", "--format", "json", *local_args)
    runs = {row["agent"]: row["id"] for row in json.loads(rag_run.stdout)}
    assert rag is not None and "guide" in runs
    for command in (
        ("why", "flaky", "--format", "json"),
        ("why", "quota", "--format", "json"),
        ("why", "flaky"),
        ("why", "flaky", "--format", "mermaid"),
        ("why", "flaky", "--format", "dot"),
        ("why", runs["guide"], "--format", "json"),
        ("diff", "flaky", "reliable", "--format", "json"),
        ("summary", "flaky"),
        ("summary", runs["guide"]),
    ):
        local, there = run_cli(*command, *local_args), run_cli(*command, *remote_args)
        assert local.returncode == there.returncode, (command, there.stderr)
        assert local.returncode in (0, 1) and local.stdout, (command, local.stderr)
        assert there.stdout == local.stdout, command
    graph = open_endpoint(server.query_endpoint).why("flaky")
    failed = [node for node in graph.nodes if not node.supports_answer]
    assert [(node.tool, node.call_id) for node in failed] == [("get_weather", "call_1")]
    unknown = run_cli("why", "urn:otel-prov:none:none", *remote_args)
    assert unknown.returncode == 1 and unknown.stderr.count("\n") == 1
