"""SparqlUpdateExporter against real Oxigraph, Virtuoso and Fuseki servers: nothing lost,
nothing twice."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov import ProvRecord, ProvSpanProcessor, map_spans, record_from_span
from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.prov._sealer import Sealer
from tests.cli import CLI, run_cli
from tests.fault_proxy import FaultProxy
from tests.forking import run_forking_agent
from tests.integration.store_queries import (
    count,
    run_triple_count,
    select,
    triple_count,
    update,
)
from tests.servers import SparqlServer
from tests.session_tree import known_session
from tests.test_rdf import HOSTILE
from tests.waiting import until

pytestmark = pytest.mark.integration

PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#>"
)
FAST_RETRY = {"retry_initial_delay": 0.05, "retry_max_delay": 0.3}


class Pipeline:
    """A provider whose spans go to the SPARQL exporter and to memory (to compute the truth)."""

    def __init__(self, exporter: SparqlUpdateExporter) -> None:
        self.exporter = exporter
        self.memory = InMemorySpanExporter()
        self.provider = TracerProvider()
        self.provider.add_span_processor(SimpleSpanProcessor(self.memory))
        # Runs sealed at their end only: the count below is that of runs sealed at their
        # end, and a run a worker cycle happened to stream keeps the bundles of its
        # revisions too (about ten triples more), which is no duplicate. Streamed delivery
        # is test_streamed_runs_in_store's.
        self.processor = ProvSpanProcessor(exporter, schedule_delay=0.05, stream=False)
        self.provider.add_span_processor(self.processor)

    def session(self, index: int, text: str = "") -> None:
        tp = self.provider
        question = f"question {index} {text}"
        with otel_prov.agent_session(
            "agent", question=question, conversation_id=f"c{index}", tracer_provider=tp
        ) as session:
            with (
                otel_prov.iteration(
                    1, thought=f"thought {text}", action="lookup", tracer_provider=tp
                ),
                otel_prov.tool_call(
                    "lookup",
                    arguments=f'{{"i": {index}}}',
                    call_id=f"call-{index}",
                    tracer_provider=tp,
                ),
            ):
                otel_prov.set_observation(f"observation {index} {text}")
            otel_prov.set_answer(f"answer {index} {text}", span=session)

    def expected_triples(self) -> int:
        by_trace: dict[int, list] = {}
        for span in self.memory.get_finished_spans():
            by_trace.setdefault(span.context.trace_id, []).append(record_from_span(span))
        # Sealed as the processor seals them: each an entry of one writer's chain.
        sealer = Sealer(chain="expected")
        sealed = [sealer.seal(map_spans(spans), 0) for spans in by_trace.values()]
        return len({t for record in sealed for t in record.triples})

    def close(self) -> None:
        self.provider.shutdown()


@pytest.fixture
def spool(tmp_path: Path) -> Path:
    return tmp_path / "spool"


def _pipeline(
    server: SparqlServer, spool: Path, endpoint: str | None = None, **options: object
) -> Pipeline:
    exporter = SparqlUpdateExporter(
        endpoint or server.update_endpoint,
        server.query_endpoint,
        spool_dir=spool,
        **{**FAST_RETRY, **options},
    )  # type: ignore[arg-type]
    return Pipeline(exporter)


def _values(server: SparqlServer, cls: str) -> list[str]:
    """The values of the stored entities of class ``oprov:{cls}``, sorted."""
    rows = select(
        server,
        PREFIXES
        + f"""
        SELECT ?v WHERE {{ GRAPH <urn:otel-prov:graph> {{
          ?e a oprov:{cls} ; prov:value ?v }} }}""",
    )
    return sorted(row["v"] for row in rows)


def _answers(server: SparqlServer) -> list[str]:
    """The values of the answers the stored sessions generated, sorted."""
    rows = select(
        server,
        PREFIXES
        + """
        SELECT ?a WHERE { GRAPH <urn:otel-prov:graph> {
          ?s a oprov:AgentSession .
          ?e a oprov:Answer ; prov:wasGeneratedBy ?s ; prov:value ?a } }""",
    )
    return sorted(row["a"] for row in rows)


def test_round_trip_keeps_every_string_byte_exact(server: SparqlServer, spool: Path) -> None:
    pipeline = _pipeline(server, spool)
    for index, text in enumerate(HOSTILE):
        pipeline.session(index, text)
    pipeline.processor.force_flush()
    assert pipeline.exporter.force_flush(20_000)
    assert _values(server, "Question") == sorted(
        f"question {i} {text}" for i, text in enumerate(HOSTILE)
    )
    assert set(_values(server, "Observation")) == {
        f"observation {i} {text}" for i, text in enumerate(HOSTILE)
    }
    assert run_triple_count(server) == pipeline.expected_triples()
    pipeline.close()


def test_outage_mid_run_loses_nothing_and_duplicates_nothing(
    server: SparqlServer, spool: Path
) -> None:
    pipeline = _pipeline(server, spool)
    for index in range(100):
        pipeline.session(index)
    pipeline.processor.force_flush()
    server.stop()
    for index in range(100, 200):
        pipeline.session(index)
    pipeline.processor.force_flush(timeout_millis=100)  # hands over; the store is down
    assert not pipeline.exporter.force_flush(500)  # the store is down: kept, not lost
    assert len(pipeline.exporter.spool) > 0
    server.start()
    assert pipeline.exporter.force_flush(60_000)
    assert count(server, "?s a <https://w3id.org/otel-prov/ns#AgentSession>") == 200
    assert run_triple_count(server) == pipeline.expected_triples()
    assert pipeline.exporter.counts["spooled"] >= 1
    assert pipeline.exporter.counts["dropped"] == 0
    pipeline.close()


@pytest.mark.parametrize("fault", ["slow", "http500"])
def test_slow_or_failing_server_is_retried_then_delivered(
    server: SparqlServer, spool: Path, fault: str
) -> None:
    upstream = server.update_endpoint.rsplit("/", 1)
    with FaultProxy(upstream[0]) as proxy:
        pipeline = _pipeline(server, spool, f"{proxy.url}/{upstream[1]}", read_timeout=0.5)
        if fault == "slow":
            proxy.delay_next(1, 2.0)
        else:
            proxy.fail_next(3, 500, "boom")
        for index in range(5):
            pipeline.session(index)
        pipeline.processor.force_flush()
        assert pipeline.exporter.force_flush(30_000)
        assert run_triple_count(server) == pipeline.expected_triples()
        assert pipeline.exporter.counts["spooled"] >= 1
        statuses = [r.status for r in proxy.requests]
        assert statuses[-1] in (200, 204)
        if fault == "http500":
            assert statuses[:3] == [500, 500, 500]
        pipeline.close()


def test_bad_batch_is_dead_lettered_with_the_reason(server: SparqlServer, spool: Path) -> None:
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
    bad = ProvRecord("0" * 32, "<urn:x>", (("<urn:x>", "<urn:p>", '"unterminated'),))
    exporter.export([bad])
    exporter.force_flush(10_000)
    good = map_spans(known_session())
    exporter.export([good])
    assert exporter.force_flush(10_000)
    (reason_file,) = (spool / "dead-letter").glob("*.reason")
    reason = reason_file.read_text()
    assert reason.startswith("HTTP 400")
    assert "unterminated" in reason_file.with_suffix(".nq").read_text()
    assert exporter.counts["dead_lettered"] == 1 and exporter.counts["exported"] == 1
    assert triple_count(server) == len(good.triples)
    exporter.shutdown()


def test_a_flush_returns_once_what_it_delivered_and_set_aside_is_counted(
    server: SparqlServer, spool: Path
) -> None:
    """The sender takes a batch out of the spool, then counts it; a busy machine may switch
    threads in between (the directory's fsync alone can take that long), and a flush that
    saw the spool empty then returned before the count (a flake of the test above)."""
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
    count_now = exporter._count

    def count_late(outcome: str) -> None:  # the thread switch, made certain
        if outcome != "spooled":
            time.sleep(0.5)
        count_now(outcome)

    exporter._count = count_late  # type: ignore[method-assign]
    bad = ProvRecord("0" * 32, "<urn:x>", (("<urn:x>", "<urn:p>", '"unterminated'),))
    exporter.export([bad])
    assert exporter.force_flush(10_000)
    assert exporter.counts["dead_lettered"] == 1
    exporter.export([map_spans(known_session())])
    assert exporter.force_flush(10_000)
    assert exporter.counts["exported"] == 1
    exporter.shutdown()


@pytest.fixture
def all_logs(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    caplog.set_level(logging.DEBUG)  # every logger, urllib3 and requests included
    yield caplog


def test_auth_failure_is_one_clear_error_and_never_logs_the_secret(
    server: SparqlServer, spool: Path, all_logs: pytest.LogCaptureFixture
) -> None:
    secret = "s3cr3t-Token-4711"
    if server.name == "virtuoso":
        assert server.auth_update_endpoint is not None
        exporter = SparqlUpdateExporter(
            server.auth_update_endpoint, spool_dir=spool, digest_auth=("dba", secret), **FAST_RETRY
        )  # type: ignore[arg-type]
        proxy = None
    else:
        upstream = server.update_endpoint.rsplit("/", 1)
        proxy = FaultProxy(upstream[0])
        proxy.start()
        proxy.fail_next(1000, 401, "unauthorized")
        exporter = SparqlUpdateExporter(
            f"{proxy.url}/{upstream[1]}",
            spool_dir=spool,
            headers={"Authorization": f"Bearer {secret}"},
            **FAST_RETRY,
        )  # type: ignore[arg-type]
    try:
        exporter.export([map_spans(known_session())])
        assert not exporter.force_flush(1500)
        errors = [r for r in all_logs.records if r.levelno >= logging.ERROR]
        assert len(errors) == 1 and "refused the credentials" in errors[0].getMessage()
        assert exporter.counts["dead_lettered"] == 0 and len(exporter.spool) >= 1
        exporter.shutdown()
        for record in all_logs.records:
            assert secret not in record.getMessage()
            assert secret not in str(record.args)
        status = subprocess.run(
            [
                sys.executable,
                "-m",
                "otel_prov",
                "status",
                "--spool-dir",
                str(spool),
                "--format",
                "json",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert status.returncode == 1 and secret not in status.stdout + status.stderr
        assert '"spooled_batches": 1' in status.stdout
    finally:
        if proxy is not None:
            proxy.stop()


def test_a_token_in_the_endpoint_query_string_is_never_shown(
    server: SparqlServer, spool: Path, all_logs: pytest.LogCaptureFixture
) -> None:
    """A store that takes its token in the URL (``?access_token=``) is down: the token
    appears in no log record, no status file and no ``otel-prov status`` output."""
    secret = "tok-8f3a9c2e71"
    server.stop()
    endpoint = f"{server.update_endpoint}?graph=x&access_token={secret}"
    handle = otel_prov.configure(
        sparql_update_endpoint=endpoint,
        spool_dir=spool,
        wal_dir=spool.parent / "wal",
        set_global=False,
        otlp=False,
    )
    with otel_prov.agent_session("agent", question="q", tracer_provider=handle.tracer_provider):
        pass
    assert not handle.force_flush(1500)
    handle.shutdown()
    messages = [f"{r.getMessage()} {r.args} {r.exc_text}" for r in all_logs.records]
    assert any("access_token=REDACTED" in message for message in messages)
    assert not [message for message in messages if secret in message]
    (status_file,) = spool.glob("status-*.json")
    assert secret not in status_file.read_text()
    for form in ("json", "text"):
        status = run_cli("status", "--spool-dir", str(spool), "--format", form)
        assert status.returncode == 1, status.stderr
        assert "access_token=REDACTED" in status.stdout
        assert secret not in status.stdout + status.stderr


def test_a_new_process_replays_the_spool_left_by_the_old_one(
    server: SparqlServer, spool: Path
) -> None:
    server.stop()
    script = textwrap.dedent(f"""
        from otel_prov import map_spans
        from otel_prov.exporters import SparqlUpdateExporter
        from tests.session_tree import known_session
        exporter = SparqlUpdateExporter({server.update_endpoint!r}, spool_dir={str(spool)!r},
                                        retry_initial_delay=0.05)
        exporter.export([map_spans(known_session())])
        exporter.shutdown(timeout_millis=2000)
    """)
    subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
        env={**os.environ},
    )
    assert len(list(spool.glob("*.nq"))) >= 1
    server.start()
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
    assert exporter.force_flush(30_000)
    expected = map_spans(known_session())
    assert triple_count(server) == len(expected.triples)
    assert list(spool.glob("*.nq")) == []
    exporter.shutdown()


def test_replaying_the_same_batches_never_duplicates(server: SparqlServer, spool: Path) -> None:
    record = map_spans(known_session())
    exporter = SparqlUpdateExporter(server.update_endpoint, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
    for _ in range(3):
        exporter.export([record])
        assert exporter.force_flush(10_000)
    exporter.spool.write(
        ["".join(f"{s} {p} {o} <urn:otel-prov:graph> .\n" for s, p, o in record.triples)]
    )
    assert exporter.force_flush(10_000)
    assert triple_count(server) == len(record.triples)
    exporter.shutdown()


def test_batches_the_store_finds_too_large_are_split(server: SparqlServer, spool: Path) -> None:
    pipeline = _pipeline(server, spool, max_batch_triples=20_000)
    for index in range(120):
        pipeline.session(index)
    pipeline.processor.force_flush()
    assert pipeline.exporter.force_flush(60_000)
    assert run_triple_count(server) == pipeline.expected_triples()
    if server.name == "virtuoso":  # Virtuoso fails above about 1,000 triples per update
        assert pipeline.exporter.batch_size <= 5000
    else:  # Oxigraph and Fuseki take the batches whole
        assert pipeline.exporter.batch_size == 20_000
    assert pipeline.exporter.counts["dead_lettered"] == 0
    pipeline.close()


def test_spooled_batches_with_line_separators_are_delivered_and_bad_ones_set_aside(
    server: SparqlServer, spool: Path
) -> None:
    breakers = ["\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
    server.stop()  # everything goes through the spool
    pipeline = _pipeline(server, spool)
    for index, char in enumerate(breakers):
        pipeline.session(index, f"a{char}b")
    pipeline.processor.force_flush(timeout_millis=100)
    assert not pipeline.exporter.force_flush(500)
    (spool / "00000000000000000000-0-000000.nq").write_bytes(b"\xff\xfe not UTF-8 .\n")
    (spool / "00000000000000000000-0-000001.nq").write_text("garbage without a graph\n")
    server.start()
    assert pipeline.exporter.force_flush(60_000)
    assert _values(server, "Observation") == sorted(
        f"observation {i} a{char}b" for i, char in enumerate(breakers)
    )
    assert run_triple_count(server) == pipeline.expected_triples()
    reasons = sorted(path.read_text() for path in (spool / "dead-letter").glob("*.reason"))
    assert len(reasons) == 2 and all("unreadable spooled batch" in r for r in reasons)
    assert pipeline.exporter.counts["dead_lettered"] == 2
    pipeline.close()


def test_sessions_handed_to_a_slow_store_survive_sigkill(server: SparqlServer, spool: Path) -> None:
    """The store takes 25 s to accept; the agent is killed while the first request waits on
    it; the restart stores both."""
    wal = spool.parent / "wal"
    upstream = server.update_endpoint.rsplit("/", 1)
    script = textwrap.dedent(f"""
        import time
        import otel_prov
        handle = otel_prov.configure(
            sparql_update_endpoint={{endpoint!r}}, sparql_query_endpoint={server.query_endpoint!r},
            spool_dir={str(spool)!r}, wal_dir={str(wal)!r}, set_global=False, otlp=False)
        tp = handle.tracer_provider
        for i in range(2):
            with otel_prov.agent_session("agent", question=f"q{{{{i}}}}", tracer_provider=tp) as s:
                with otel_prov.iteration(1, tracer_provider=tp):
                    with otel_prov.tool_call("lookup", arguments="{{{{}}}}", call_id=f"c{{{{i}}}}",
                                             tracer_provider=tp):
                        otel_prov.set_observation(f"observation {{{{i}}}}")
                otel_prov.set_answer(f"answer {{{{i}}}}", span=s)
        print("ran", flush=True)
        time.sleep(60)
    """)
    with FaultProxy(upstream[0]) as proxy:
        proxy.stall_next(100, 25.0)
        agent = subprocess.Popen(
            [sys.executable, "-c", script.format(endpoint=f"{proxy.url}/{upstream[1]}")],
            cwd=Path(__file__).resolve().parents[2],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ},
        )
        try:
            assert agent.stdout is not None and agent.stdout.readline() == "ran\n"
            until(lambda: proxy.requests, "the sessions handed to the (slow) store")
        finally:
            agent.kill()
            agent.wait(timeout=30)
    assert count(server, "?s a <https://w3id.org/otel-prov/ns#AgentSession>") == 0
    handle = otel_prov.configure(  # the restart, with the store answering again
        sparql_update_endpoint=server.update_endpoint,
        sparql_query_endpoint=server.query_endpoint,
        spool_dir=spool,
        wal_dir=wal,
        set_global=False,
        otlp=False,
    )
    assert handle.force_flush(30_000)
    handle.shutdown()
    assert _answers(server) == ["answer 0", "answer 1"]


@pytest.mark.parametrize("how", ["os.fork", "multiprocessing"])
def test_forked_children_deliver_through_spools_of_their_own(
    server: SparqlServer, spool: Path, how: str
) -> None:
    run = run_forking_agent(
        how,
        3,
        OTEL_PROV_SPARQL_UPDATE_ENDPOINT=server.update_endpoint,
        OTEL_PROV_SPARQL_QUERY_ENDPOINT=server.query_endpoint,
        OTEL_PROV_SPOOL_DIR=str(spool),
        OTEL_PROV_WAL_DIR=str(spool.parent / "wal"),
    )
    assert run.returncode == 0, run.stderr
    assert _answers(server) == sorted(
        ["answer of parent-before", "answer of parent-after"]
        + [f"answer of child-{i}" for i in range(3)]
    )
    assert not list(spool.rglob("*.nq"))  # nothing left waiting in any spool


_SHARING_AGENT = textwrap.dedent("""
    import sys
    import otel_prov
    name, hold = sys.argv[1], sys.argv[2] == "hold"
    handle = otel_prov.configure(set_global=False, otlp=False, service_name=name)
    tp = handle.tracer_provider
    with otel_prov.agent_session("shared", question=name, conversation_id=name,
                                 tracer_provider=tp) as s:
        otel_prov.set_answer(f"answer of {name}", span=s)
    handle.force_flush(timeout_millis=500)  # the store is down: the session is spooled
    if hold:  # keep the spool's lock until told to go
        print("spooled", flush=True)
        sys.stdin.readline()
    handle.shutdown()
""")


def test_a_spool_two_processes_shared_is_taken_whole_by_the_next(
    server: SparqlServer, spool: Path
) -> None:
    """The second of two agents on one spool (the store down) spools into ``pid-<n>/``
    the next agent takes both in, and ``flush`` delivers every session once the store is
    back, each in its place in its writer's chain."""
    server.stop()
    environment = {
        **os.environ,
        "OTEL_PROV_SPARQL_UPDATE_ENDPOINT": server.update_endpoint,
        "OTEL_PROV_SPARQL_QUERY_ENDPOINT": server.query_endpoint,
        "OTEL_PROV_SPOOL_DIR": str(spool),
        "OTEL_PROV_WAL_DIR": str(spool.parent / "wal"),
    }

    def agent(name: str, how: str = "exit", **options: Any) -> Any:
        command = [sys.executable, "-c", _SHARING_AGENT, name, how]
        if how == "hold":
            return subprocess.Popen(command, env=environment, text=True, **options)
        return subprocess.run(
            command, env=environment, text=True, capture_output=True, timeout=60, check=False
        )

    first = agent("first", "hold", stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert first.stdout.readline() == "spooled\n"
        second = agent("second")
        assert second.returncode == 0 and "Traceback" not in second.stderr, second.stderr
        (apart,) = spool.glob("pid-*")
        names = {path.name for path in apart.iterdir()}
        assert ".lock" in names and any(name.endswith(".nq") for name in names), names
    finally:
        first.communicate("go\n", timeout=60)
    assert first.returncode == 0
    third = agent("third")  # takes the second's spool in, in configure()
    assert third.returncode == 0 and "Traceback" not in third.stderr, third.stderr
    assert not list(spool.glob("pid-*"))
    server.start()
    flushed = subprocess.run(
        [*CLI, "flush"], env=environment, text=True, capture_output=True, timeout=120, check=False
    )
    assert flushed.returncode == 0 and flushed.stdout.endswith(" 0 waiting\n"), flushed
    assert not list(spool.rglob("*.nq"))
    assert _answers(server) == [f"answer of {name}" for name in ("first", "second", "third")]
    verified = run_cli("verify", "--all", "--endpoint", server.query_endpoint)
    assert verified.stdout.endswith("3 verified, 0 failed\n"), verified.stdout


def test_a_run_during_an_outage_is_sealed_in_its_own_chain_and_missed_when_deleted(
    server: SparqlServer, spool: Path
) -> None:
    """Run 2 starts with the store down and spools its session; run 3 seals its own before
    run 2's lands.  Neither asks the store anything to seal: each process has a chain of
    its own, so deleting run 2's session leaves its chain short of its checkpoint, which
    ``verify`` reports."""
    first = _pipeline(server, spool)
    for index in range(2):
        first.session(index)
    first.close()
    base, update_path = server.update_endpoint.rsplit("/", 1)
    query_path = server.query_endpoint.rsplit("/", 1)[1]
    with FaultProxy(base) as updates, FaultProxy(base) as queries:
        updates.refuse(True)
        queries.refuse(True)
        endpoints = (f"{updates.url}/{update_path}", f"{queries.url}/{query_path}")
        second = Pipeline(
            SparqlUpdateExporter(*endpoints, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
        )
        second.session(2)
        second.processor.force_flush(timeout_millis=100)
        second.close()
        assert list(spool.glob("*.nq"))  # the session waits in the spool
        queries.refuse(False)  # the store is back; run 3 reads it before the replay lands
        third = Pipeline(
            SparqlUpdateExporter(*endpoints, spool_dir=spool, **FAST_RETRY)  # type: ignore[arg-type]
        )
        third.session(3)
        third.processor.force_flush(timeout_millis=100)
        updates.refuse(False)
        assert third.exporter.force_flush(30_000)
        third.close()
    where = ("--endpoint", server.query_endpoint)
    verified = run_cli("verify", "--all", *where)
    assert verified.stdout.endswith("4 verified, 0 failed\n"), verified.stdout
    (spooled,) = select(
        server,
        PREFIXES
        + """ SELECT ?trace WHERE { GRAPH <urn:otel-prov:graph> {
          ?s oprov:sessionId "c2" ; oprov:traceId ?trace } }""",
    )
    update(
        server,
        f"""DELETE {{ GRAPH <urn:otel-prov:graph> {{ ?x ?p ?o }} }}
        WHERE {{ GRAPH <urn:otel-prov:graph> {{ ?x ?p ?o .
          FILTER(STRSTARTS(STR(?x), "urn:otel-prov:{spooled["trace"]}:")) }} }}""",
    )
    verified = run_cli("verify", "--all", *where)
    assert verified.returncode == 1, verified.stdout
    assert "truncated" in verified.stdout, verified.stdout
    assert verified.stdout.endswith("3 verified, 1 failed\n")  # three runs, run 2's chain
