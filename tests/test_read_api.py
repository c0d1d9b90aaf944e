"""``otel_prov.read``: the read API on a real embedded store, while its writer holds it.

Listings are checked against what was written (runs with known agents, services,
statuses and start times), page by page, on stores written by this version, by the
version before the run mark, and by both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
import rdflib
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import otel_prov.read
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import OxigraphStoreExporter
from otel_prov.exporters._stored import StoreReads
from otel_prov.exporters.oxigraph._reader import EmbeddedBackend
from otel_prov.ingest._import import import_spans
from otel_prov.processing._pipeline import WritePipeline
from otel_prov.prov._bundle import bundle_triples, bundles_in, session_content
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import OPROV
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._vocab import O, P
from otel_prov.read import ProvenanceReader, _listing, open_store
from otel_prov.read._reader import decode_cursor, encode_cursor
from otel_prov.setup._configure import configure
from tests.builders import T0, make_span, store_runs
from tests.cli import run_cli

GRAPH = pyoxigraph.NamedNode("urn:otel-prov:graph")


def test_all_is_sorted_and_names_every_public_name() -> None:
    public = {name for name in vars(otel_prov.read) if not name.startswith("_")}
    assert otel_prov.read.__all__ == sorted(otel_prov.read.__all__)
    assert set(otel_prov.read.__all__) == public - {"annotations"}


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The demo's run, with the writer still open (its lock held) while tests read."""
    path = tmp_path_factory.mktemp("read") / "store"
    handle = configure(store=path, set_global=False, otlp=False, service_name="demo-svc")
    run_demo_agent(tracer_provider=handle.tracer_provider)
    assert handle.force_flush()
    yield path
    handle.shutdown()


def test_a_run_read_while_the_agent_process_holds_the_store(demo_store: Path) -> None:
    reader = open_store(demo_store)
    page = reader.sessions()
    (run,) = page.sessions
    assert page.next_cursor is None
    assert (run.agent, run.iterations, run.tool_calls) == ("weather-assistant", 4, 3)
    assert (run.status, run.failed_calls) == ("ok", 1)
    assert reader.find(run.trace_id) == reader.find("demo-conversation") == [run.id]
    view = reader.session(run.id)
    assert view.agent == run.agent and view.question == run.question
    assert [step.number for step in view.iterations] == [1, 2, 3, 4]
    calls = [call for step in view.iterations for call in step.tool_calls]
    assert [call.status for call in calls].count("error") == 1
    assert "18 °C" in (view.answer or "")
    with pytest.raises(LookupError):
        reader.session(run.id + "-missing")
    (check,) = reader.verify()
    assert check.ok and check.session == run.id


def test_the_graph_is_the_runs_triples_as_rdflib_reads_them(demo_store: Path) -> None:
    reader = open_store(demo_store)
    (run,) = reader.sessions().sessions
    graph = reader.graph(run.id)
    turtle = pyoxigraph.serialize(reader.triples(run.id), format=pyoxigraph.RdfFormat.TURTLE)
    assert len(graph) > 50 and set(graph) == set(rdflib.Graph().parse(data=turtle, format="turtle"))
    session = rdflib.URIRef(run.id)
    assert (session, rdflib.RDF.type, rdflib.URIRef(OPROV + "AgentSession")) in graph
    tools = {str(row[0]) for row in graph.query("SELECT ?t WHERE { ?c oprov:toolName ?t }")}
    assert "get_weather" in tools


def test_the_docs_sample_runs(demo_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "reading.md").read_text(encoding="utf-8")
    section = page.split("## Reading provenance in Python", 1)[1]
    sample = section.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(demo_store.parent.parent)
    (demo_store.parent.parent / ".otel-prov").mkdir(exist_ok=True)
    link = demo_store.parent.parent / ".otel-prov" / "store"
    if not link.exists():
        link.symlink_to(demo_store)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(sample, "docs/reading.md", "exec"), {})
    reader = open_store(demo_store)
    view = reader.session(reader.sessions().sessions[0].id)
    tools = sorted({call.name for step in view.iterations for call in step.tool_calls})
    printed = out.getvalue().splitlines()
    assert printed[: len(view.iterations)] == [
        f"{step.number} {step.action} {[call.name for call in step.tool_calls]}"
        for step in view.iterations
    ]
    assert printed[-1] == f"{tools} True"


def _run(
    index: int, *, agent: str, service: str, status: str = "unset", ended: bool = True
) -> list[SpanRecord]:
    """A run of one iteration and one tool call, starting ``index`` minutes after T0."""
    at = index * 60_000.0
    return [
        make_span(
            1,
            None,
            trace_id=index + 1,
            start_ms=at,
            end_ms=at + 10 if ended else None,
            status=status,
            service=service,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name=agent,
            otel_prov__question=f"question {index}",
        ),
        make_span(
            2, 1, trace_id=index + 1, start_ms=at + 1, end_ms=at + 9, otel_prov__iteration__number=1
        ),
        make_span(
            3,
            2,
            trace_id=index + 1,
            start_ms=at + 2,
            end_ms=at + 8,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="search",
        ),
    ]


RUNS: list[dict[str, Any]] = [
    {"agent": ("alpha", "beta")[i % 2], "service": ("svc-a", "svc-b")[i % 3 == 0]}
    | ({"status": "error"} if i % 4 == 1 else {})
    | ({"ended": False} if i == 6 else {})
    for i in range(11)
]


def _store(path: Path) -> ProvenanceReader:
    """RUNS written by the exporter."""
    return open_store(store_runs(path, *(_run(index, **run) for index, run in enumerate(RUNS))))


def _utc(moment: Any) -> datetime:
    """As the API takes it: a naive datetime is UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _expected(**where: object) -> list[str]:
    """Run indexes (as questions) newest first, filtered as ``sessions`` should."""
    chosen = []
    for index, run in reversed(list(enumerate(RUNS))):
        status = "incomplete" if run.get("ended") is False else run.get("status", "ok")
        status = "ok" if status == "unset" else status
        start = datetime.fromtimestamp(T0 / 1e9, tz=timezone.utc) + timedelta(minutes=index)
        if all(
            (
                where.get("agent") in (None, run["agent"]),
                where.get("service") in (None, run["service"]),
                where.get("status") in (None, status),
                where.get("since") is None or start >= _utc(where["since"]),
                where.get("until") is None or start < _utc(where["until"]),
                str(where.get("text", "")).lower() in f"question {index}",
            )
        ):
            chosen.append(f"question {index}")
    return chosen


def _all_pages(reader: ProvenanceReader, limit: int, **where: object) -> list[str]:
    questions: list[str] = []
    cursor = None
    while True:
        page = reader.sessions(limit=limit, cursor=cursor, **where)  # type: ignore[arg-type]
        assert len(page.sessions) <= limit
        questions += [run.question or "" for run in page.sessions]
        if page.next_cursor is None:
            return questions
        cursor = page.next_cursor


FILTERS: list[dict[str, object]] = [
    {},
    {"agent": "alpha"},
    {"service": "svc-b"},
    {"status": "error"},
    {"status": "ok"},
    {"status": "incomplete"},
    {"agent": "beta", "status": "ok"},
    {"since": datetime(2025, 11, 30, 0, 3, tzinfo=timezone.utc)},
    {"since": datetime(2025, 11, 30, 0, 2), "until": datetime(2025, 11, 30, 0, 7)},
    {"text": "QUESTION 1"},
    {"text": "question", "agent": "beta"},
    {"text": "stion 1", "since": datetime(2025, 11, 30, 0, 5)},
    {"text": "no such words"},
]


def test_filters_and_pages_list_what_was_written(tmp_path: Path) -> None:
    reader = _store(tmp_path / "store")
    for where in FILTERS:
        expected = _expected(**where)
        assert _all_pages(reader, 3, **where) == expected, where
        assert _all_pages(reader, 20, **where) == expected, where
    (first,) = reader.sessions(limit=1).sessions
    assert (first.iterations, first.tool_calls, first.agent) == (1, 1, "alpha")
    assert first.trace_id == f"{len(RUNS):032x}"


def _before_the_mark(record: ProvRecord) -> ProvRecord:
    """The record as versions before ``oprov:runStartedAt`` wrote it: no mark, and a
    bundle hashing the content without it."""
    kept = [t for t in record.triples if t[1] != O.runStartedAt]
    ((bundle, session, _),) = bundles_in(kept)
    content = [t for t in kept if t[0] != bundle]
    generated = [t for t in kept if t[0] == bundle and t[1] == P.generatedAtTime]
    sealed = bundle_triples(session, None, session_content(content, session))
    return dataclasses.replace(record, triples=tuple(content + sealed + generated))


def test_runs_stored_before_the_mark_are_listed_and_verify_once_imported_again(
    tmp_path: Path,
) -> None:
    """What CHANGELOG.md tells the owner of an old store: runs without the mark are not
    listed; importing their spans again seals a revision with the mark, which verifies."""
    path = tmp_path / "store"
    runs = [_run(index, **run) for index, run in enumerate(RUNS)]
    exporter = OxigraphStoreExporter(path)
    exporter.export([_before_the_mark(map_spans(spans)) for spans in runs])
    exporter.shutdown()
    assert open_store(path).sessions().sessions == ()
    exporter = OxigraphStoreExporter(path)
    summary = import_spans(
        (span for spans in runs for span in spans),
        pipeline=WritePipeline.from_settings(exporter, graph="<urn:otel-prov:graph>"),
        stored=StoreReads(EmbeddedBackend(path), "<urn:otel-prov:graph>"),
        now_ns=T0,
        prepared=True,
    )
    exporter.shutdown()
    assert (summary.already_stored, summary.revised) == (len(RUNS), len(RUNS))
    reader = open_store(path)
    assert _all_pages(reader, 3) == _expected()
    checks = reader.verify()
    assert len(checks) == len(RUNS) and all(check.ok for check in checks)


@pytest.mark.parametrize("most_batched", [1000, 4], ids=["batches", "then-the-rest"])
def test_filtered_pages_read_a_batch_of_runs_at_a_time_and_still_list_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, most_batched: int
) -> None:
    """A filter on the runs (agent, service, status, text) is checked on the newest runs
    a batch at a time (then, past a size, on the rest at once): with batches of two, a
    page spans several batches, and no run is listed twice or left out."""
    monkeypatch.setattr(_listing, "_CANDIDATES", 2)
    monkeypatch.setattr(_listing, "_MOST_BATCHED", most_batched)
    reader = _store(tmp_path / "store")
    for where in FILTERS:
        expected = _expected(**where)
        assert _all_pages(reader, 3, **where) == expected, where
        assert _all_pages(reader, 20, **where) == expected, where


def test_bad_arguments_say_what_is_wrong(demo_store: Path) -> None:
    reader = open_store(demo_store)
    with pytest.raises(ValueError, match="status must be one of"):
        reader.sessions(status="failed")
    with pytest.raises(ValueError, match="limit"):
        reader.sessions(limit=-1)
    with pytest.raises(ValueError, match="not a cursor"):
        reader.sessions(cursor="bm90IGEgY3Vyc29y")
    with pytest.raises(otel_prov.read.StoreUnavailableError, match="no provenance store"):
        open_store(demo_store.parent / "missing")


_IRIS = st.from_regex(re.compile(r"urn:otel-prov:[0-9a-f]{32}:[0-9a-f]{16}"), fullmatch=True)
_MOMENTS = st.datetimes(
    min_value=datetime(1970, 1, 2), max_value=datetime(9999, 1, 1), timezones=st.just(timezone.utc)
)


@given(moment=_MOMENTS, session=_IRIS)
def test_a_cursor_gives_back_where_the_page_ended(moment: datetime, session: str) -> None:
    stamp = moment.isoformat().replace("+00:00", "Z")
    assert decode_cursor(encode_cursor(stamp, session)) == (moment, session)


@given(text=st.text())
def test_any_other_text_is_refused_as_a_cursor(text: str) -> None:
    with contextlib.suppress(ValueError):  # anything else raised fails the test
        moment, session = decode_cursor(text)
        assert decode_cursor(encode_cursor(moment.isoformat(), session)) == (moment, session)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(question=st.text(min_size=1))
def test_any_question_comes_back_exactly_in_the_rdflib_graph(
    tmp_path_factory: pytest.TempPathFactory, question: str
) -> None:
    path = tmp_path_factory.mktemp("graph") / "store"
    exporter = OxigraphStoreExporter(path)
    span = make_span(1, None, gen_ai__operation__name="invoke_agent", otel_prov__question=question)
    exporter.export([map_spans([span])])
    reader = open_store(path)
    (run,) = reader.sessions().sessions
    graph = reader.graph(run.id)
    values = set(graph.objects(None, rdflib.URIRef("http://www.w3.org/ns/prov#value")))
    exporter.shutdown()
    expected = question.translate({c: "\ufffd" for c in range(0xD800, 0xE000)})
    assert {str(value) for value in values} == {expected}


def _cli_flags(where: dict[str, object]) -> list[str]:
    flags = []
    for name, value in where.items():
        text = value.isoformat() if isinstance(value, datetime) else str(value)
        flags += ["--" + ("search" if name == "text" else name), text]
    return flags


def test_the_sessions_command_filters_and_pages_as_the_api(tmp_path: Path) -> None:
    _store(tmp_path / "store")
    for where in FILTERS:
        questions: list[str] = []
        cursor: list[str] = []
        while True:
            listed = run_cli(
                "sessions", "--store", str(tmp_path / "store"), "--limit", "3",
                "--format", "json", *_cli_flags(where), *cursor,
            )  # fmt: skip
            assert listed.returncode == (0 if listed.stdout != "[]\n" else 1), listed.stderr
            questions += [run["question"] for run in json.loads(listed.stdout)]
            more = re.search(r"--cursor (\S+)", listed.stderr)
            if more is None:
                break
            cursor = ["--cursor", more.group(1)]
        assert questions == _expected(**where), where


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--status", "finished"], "argument --status: invalid choice: 'finished'"),
        (["--since", "yesterday"], "argument --since: 'yesterday' is not a date and time"),
        (["--until", "2025-13-01"], "argument --until: '2025-13-01' is not a date and time"),
        (["--cursor", "not-a-cursor"], "not a cursor"),
    ],
)
def test_the_sessions_command_names_a_bad_filter(
    demo_store: Path, flags: list[str], named: str
) -> None:
    listed = run_cli("sessions", "--store", str(demo_store), *flags)
    assert listed.returncode == 2 and named in listed.stderr and "Traceback" not in listed.stderr
