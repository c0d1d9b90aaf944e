"""The CLI reads a remote store exactly as it reads the embedded one, and pages past row caps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import requests

from otel_prov import ProvRecord, map_spans
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.exporters.sparql._reader import RemoteBackend
from otel_prov.prov._prices import parse_prices
from otel_prov.prov._span_record import SpanEvent
from tests.builders import T0, TRACE, make_span, records_of
from tests.cli import run_cli
from tests.integration.store_queries import select, store_both
from tests.planned_session import planned_session
from tests.servers import SparqlServer, start_oxigraph
from tests.session_tree import known_session
from tests.test_rdf import HOSTILE
from tests.test_usage import HUGE, huge_usage_spans

pytestmark = pytest.mark.integration


def _demo_record() -> ProvRecord:
    """A real run of the demo agent (microsecond times, model calls, a failure)."""
    (record,) = records_of(lambda provider: run_demo_agent(tracer_provider=provider))
    return record


def _priced_and_judged(
    score: float = 0.75, cost: float = 0.125, conversation: str = "priced", trace_id: int = 77
) -> ProvRecord:
    """A run whose model calls are priced in two currencies and whose tool call and
    session were evaluated: totals and evaluations read back the same from every store."""
    eur = parse_prices('["m"]\ninput = 2.5\noutput = 10\ncurrency = "EUR"\n', name="p.toml")
    judged = SpanEvent(
        "gen_ai.evaluation.result",
        T0 + 3_500_000,
        {"gen_ai.evaluation.name": "grounded", "gen_ai.evaluation.score.value": score},
    )
    spans = [
        make_span(1, None, trace_id=trace_id, end_ms=10, gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="priced", gen_ai__conversation__id=conversation,
                  events=(judged,)),
        make_span(2, 1, trace_id=trace_id, start_ms=1, end_ms=2, gen_ai__operation__name="chat",
                  gen_ai__request__model="m", gen_ai__usage__input_tokens=1200,
                  gen_ai__usage__output_tokens=80, gen_ai__usage__cache_read__input_tokens=200),
        make_span(3, 1, trace_id=trace_id, start_ms=3, end_ms=4,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="look",
                  events=(judged,)),
        make_span(4, 1, trace_id=trace_id, start_ms=5, end_ms=6, gen_ai__operation__name="chat",
                  gen_ai__request__model="n", gen_ai__usage__input_tokens=10,
                  gen_ai__usage__cost__amount=cost, gen_ai__usage__cost__currency="USD"),
    ]  # fmt: skip
    return map_spans(spans, prices=eur)


def _records() -> list[ProvRecord]:
    records = [map_spans(known_session()), _demo_record()]

    for index, text in enumerate(HOSTILE):
        records.append(
            map_spans(
                [
                    make_span(
                        1,
                        None,
                        trace_id=1000 + index,
                        start_ms=index * 1000,
                        end_ms=index * 1000 + 5,
                        gen_ai__operation__name="invoke_agent",
                        gen_ai__agent__name="hostile",
                        gen_ai__conversation__id=f"h{index}",
                        otel_prov__question=text,
                        otel_prov__answer=text,
                    ),
                ]
            )
        )
    return records


def test_sessions_show_and_query_agree_between_store_and_endpoint(
    server: SparqlServer, tmp_path: Path
) -> None:
    records = [*_records(), _priced_and_judged(), map_spans(planned_session())]
    local_args, remote_args = store_both(records, server, tmp_path)
    trace = f"{0x4BF92F3577B34DA6A3CE929D0E0E4736:032x}"
    query = (
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> SELECT ?tool ?status WHERE { "
        "?c oprov:toolName ?tool ; oprov:status ?status ; a oprov:ToolCall } "
        "ORDER BY ?tool ?status"
    )
    for command in (
        ("sessions", "--format", "json", "--limit", "50"),
        ("sessions",),
        ("show", trace, "--format", "json"),
        ("show", trace),
        ("show", "h3", "--format", "json"),
        ("show", "priced", "--format", "json"),
        ("show", "priced"),
        ("show", "planned"),
        ("show", "planned", "--format", "json"),
        ("show", "demo-conversation"),
        ("show", "demo-conversation", "--format", "json"),
        ("show", trace, "--format", "mermaid"),
        ("query", query, "--format", "csv"),
    ):
        local, there = run_cli(*command, *local_args), run_cli(*command, *remote_args)
        assert local.returncode == there.returncode == 0, (command, there.stderr)
        assert there.stdout == local.stdout, command
    counted = "SELECT (COUNT(*) AS ?n) (1.5 AS ?d) WHERE { ?c a oprov:ToolCall }"
    typed = [
        json.loads(run_cli("query", counted, "--format", "json", *args).stdout)
        for args in (local_args, remote_args)
    ]
    assert typed[0] == typed[1] == [{"n": typed[0][0]["n"], "d": 1.5}]
    assert isinstance(typed[0][0]["n"], int)  # a JSON number, from every store
    for index, text in enumerate(HOSTILE):
        (view,) = json.loads(run_cli("show", f"h{index}", "--format", "json", *remote_args).stdout)
        assert view["question"] == text and view["answer"] == text
    (priced,) = json.loads(run_cli("show", "priced", "--format", "json", *remote_args).stdout)
    assert priced["tokens"] == {"input": 1210, "output": 80, "cache_read": 200}
    assert {(c["amount"], c["currency"]) for c in priced["costs"]} == {
        (0.0038, "EUR"),
        (0.125, "USD"),
    }
    assert sorted(e["evaluates"][-4:] for e in priced["evaluations"]) == ["0001", "0003"]
    missing = run_cli("show", "nothing-here", *remote_args)
    assert missing.returncode == 1


def test_unreachable_endpoint_is_exit_2_with_one_line() -> None:
    result = run_cli("sessions", "--endpoint", "http://127.0.0.1:9/sparql")
    assert result.returncode == 2
    assert result.stderr.startswith("otel-prov: cannot reach http://127.0.0.1:9/sparql")
    assert len(result.stderr.strip().splitlines()) == 1


def test_paging_reads_past_the_servers_row_cap(server: SparqlServer, tmp_path: Path) -> None:
    triples = tuple((f"<urn:s:{i:05d}>", "<urn:p>", f'"{i}"') for i in range(12_000))
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    exporter.export([ProvRecord("0" * 32, "<urn:s:0>", triples)])
    assert exporter.force_flush(60_000)
    exporter.shutdown()
    backend = RemoteBackend(server.query_endpoint)
    query = "SELECT ?s ?o WHERE { GRAPH <urn:otel-prov:graph> { ?s <urn:p> ?o } } ORDER BY ?s"
    rows = backend.query(query).rows
    assert len(rows) == 12_000
    assert len({row["s"] for row in rows}) == 12_000
    # Virtuoso's cap is real: unpaged, its answer stops at 10,000; Oxigraph and Fuseki
    # have none (docs/sparql.md, the stores side by side).
    assert len(select(server, query)) == (10_000 if server.name == "virtuoso" else 12_000)


def test_verify_reads_remote_stores_and_catches_an_edit(
    server: SparqlServer, tmp_path: Path
) -> None:
    remote = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    remote.export(_records())
    assert remote.force_flush(30_000)
    remote.shutdown()
    args = ("--endpoint", server.query_endpoint)
    clean = run_cli("verify", *args)
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert clean.stdout.splitlines()[-1] == f"{len(HOSTILE) + 2} verified, 0 failed"
    update = (
        "PREFIX prov: <http://www.w3.org/ns/prov#> "
        "PREFIX oprov: <https://w3id.org/otel-prov/ns#> "
        "DELETE { GRAPH <urn:otel-prov:graph> { ?t prov:value ?v } } "
        'INSERT { GRAPH <urn:otel-prov:graph> { ?t prov:value "I never thought that." } } '
        "WHERE { GRAPH <urn:otel-prov:graph> { ?t a oprov:Thought ; prov:value ?v . "
        'FILTER(?v = "Retry.") } }'
    )
    requests.post(
        server.update_endpoint,
        data=update.encode(),
        headers={"Content-Type": "application/sparql-update"},
        timeout=30,
    ).raise_for_status()
    tampered = run_cli("verify", "--format", "json", *args)
    assert tampered.returncode == 1
    failed = [check for check in json.loads(tampered.stdout) if not check["ok"]]
    assert len(failed) == 1
    assert failed[0]["problems"] == [
        "content changed since export (changed: 0000000000000024:thought)"
    ]


def test_verify_passes_a_run_with_scores_and_costs(server: SparqlServer, tmp_path: Path) -> None:
    """Virtuoso gives numbers back changed (a double as a bare 0.83333333333333337034, read
    as xsd:decimal; a decimal rounded to 15 places; ``0``, a decimal, as an integer): the
    bundle hashes numbers by value, so the run verifies all the same."""
    remote = SparqlUpdateExporter(server.update_endpoint, spool_dir=tmp_path / "spool")
    remote.export(
        [
            _priced_and_judged(),
            _priced_and_judged(0.8333333333333334, 0.1 + 0.2, "thirds", 78),
            _priced_and_judged(1e-20, 0.0, "free", 79),
        ]
    )
    assert remote.force_flush(30_000)
    remote.shutdown()
    result = run_cli("verify", "--all", "--endpoint", server.query_endpoint)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 verified, 0 failed" in result.stdout
    result = run_cli("verify", "thirds", "--endpoint", server.query_endpoint)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "update",
    [
        "DROP ALL",
        "CLEAR DEFAULT",
        "# SELECT * WHERE {}\nDELETE WHERE { GRAPH ?g { ?s ?p ?o } }",
        "PREFIX x: <urn:select#>\nINSERT DATA { <urn:a> <urn:b> <urn:c> }",
    ],
)
def test_query_never_sends_an_update(server: SparqlServer, tmp_path: Path, update: str) -> None:
    """Even to an endpoint that takes updates: SPARQLWrapper would send one as an update."""
    _, remote_args = store_both([map_spans(known_session())], server, tmp_path)
    count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
    before = run_cli("query", count, "--format", "json", *remote_args)
    assert before.returncode == 0, before.stderr
    refused = run_cli("query", update, "--endpoint", server.update_endpoint)
    assert refused.returncode == 2
    assert "an update is never sent" in refused.stderr
    assert run_cli("query", count, "--format", "json", *remote_args).stdout == before.stdout


def test_huge_token_counts_total_exactly_from_an_oxigraph_server(tmp_path: Path) -> None:
    """Oxigraph's integers are 64-bit: its SUM of 10**30 fails, and the total read 0."""
    server = start_oxigraph(tmp_path)
    try:
        local_args, remote_args = store_both([map_spans(huge_usage_spans())], server, tmp_path)
        for args in (local_args, remote_args):
            (row,) = json.loads(run_cli("sessions", "--format", "json", *args).stdout)
            assert row["tokens"] == HUGE, args
            (view,) = json.loads(run_cli("show", "huge", "--format", "json", *args).stdout)
            assert view["tokens"] == HUGE, args
    finally:
        server.stop()


def test_the_spans_around_a_run_read_alike_from_store_and_endpoint(
    server: SparqlServer, tmp_path: Path
) -> None:
    """The timeline's one query over the whole trace, on Oxigraph and Virtuoso."""
    from otel_prov.read import open_endpoint, open_store
    from tests.test_downstream import FRONTEND, framed_run

    local_args, remote_args = store_both([map_spans(framed_run())], server, tmp_path)
    trace = f"{0x4BF92F3577B34DA6A3CE929D0E0E4736:032x}"
    local = open_store(local_args[1]).trace_spans(trace)
    assert len(local) == 15 and local == open_endpoint(remote_args[1]).trace_spans(trace)
    assert {span.service for span in local} == {"agent-service", "research-service", FRONTEND}


@pytest.mark.parametrize("run", ["crossing_run", "framed_run"])
def test_a_run_crossing_services_reads_alike_from_store_and_endpoint(
    server: SparqlServer, tmp_path: Path, run: str
) -> None:
    """The session the called service ran, nested under the call, and the run's question,
    on Oxigraph and Virtuoso (whose planner once refused the sub-session query as too
    slow, and dropped the question of a run under a server span)."""
    import tests.test_downstream
    from otel_prov.read import open_endpoint, open_store

    spans = getattr(tests.test_downstream, run)()
    local_args, remote_args = store_both([map_spans(spans)], server, tmp_path)
    readers = open_store(local_args[1]), open_endpoint(remote_args[1])
    (local, remote) = (reader.session(reader.find(f"{TRACE:032x}")[0]) for reader in readers)
    assert local.question == "What do we know?" and local.answer == "Enough."
    assert [sub.agent for sub in local.nested_sessions()] == ["researcher"]
    assert remote == local
