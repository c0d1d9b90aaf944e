"""Recorded at dispatch: a tool call whose process is killed inside the tool is still stored."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from otel_prov import ProvSpanProcessor, map_spans
from otel_prov.demo import run_demo_agent
from otel_prov.exporters import ExportResult, FileExporter
from otel_prov.processing._wal import IntentLog, recover_intents
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import Role, SpanRecord, clean_record, clean_text
from otel_prov.prov._vocab import O
from tests.cli import run_cli
from tests.recording_exporter import RecordingExporter
from tests.test_sparql_parts import LINE_BREAKERS, TEXT_WITH_LINE_BREAKERS

ROOT = Path(__file__).resolve().parents[1]


_KILLED_INSIDE_A_TOOL = """
import os, signal, sys
import otel_prov
store, wal, first = sys.argv[1], sys.argv[2], sys.argv[3] == "first"
handle = otel_prov.configure(store=store, wal_dir=wal, set_global=False, service_name="doomed")
tp = handle.tracer_provider
if first:  # a run that ends, so the crashed one has a bundle before it in the chain
    with otel_prov.agent_session("doomed", question="Ready?", tracer_provider=tp) as s:
        otel_prov.set_answer("yes", span=s)
    handle.force_flush()
with otel_prov.agent_session("doomed", question="Clean up the disk?", tracer_provider=tp):
    with otel_prov.iteration(1, thought="Delete it all.", tracer_provider=tp):
        with otel_prov.tool_call("rm_rf", arguments='{"path": "/"}', call_id="call-9",
                                 tracer_provider=tp):
            os.kill(os.getpid(), signal.SIGKILL)
"""


def _killed_inside_a_tool(store: Path, wal: Path, *, first: bool = False) -> None:
    """An agent process (a run ended first, if ``first``) killed inside a tool call."""
    child = subprocess.run(
        [
            sys.executable,
            "-c",
            _KILLED_INSIDE_A_TOOL,
            str(store),
            str(wal),
            "first" if first else "only",
        ],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr


def test_a_tool_killed_by_sigkill_is_stored_incomplete_with_its_arguments(tmp_path: Path) -> None:
    store, wal = tmp_path / "store", tmp_path / "wal"
    _killed_inside_a_tool(store, wal)
    (log,) = wal.glob("wal-*.jsonl")
    assert json.loads(log.read_text().splitlines()[-1])["attributes"]["gen_ai.tool.name"] == "rm_rf"

    handle = otel_prov.configure(store=store, wal_dir=wal, set_global=False)  # the restart
    handle.shutdown()
    rows = list(
        pyoxigraph.Store.read_only(str(store)).query(
            """
        PREFIX prov: <http://www.w3.org/ns/prov#> PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?status ?args ?id ?service WHERE {
          ?call a oprov:ToolCall ; oprov:toolName "rm_rf" ; oprov:status ?status ;
                oprov:toolCallId ?id ; oprov:serviceName ?service ; prov:used ?a .
          ?a prov:value ?args .
          FILTER NOT EXISTS { ?o prov:wasGeneratedBy ?call } }""",
            use_default_graph_as_union=True,
        )
    )
    assert [
        (r["status"].value, r["args"].value, r["id"].value, r["service"].value) for r in rows
    ] == [("incomplete", '{"path": "/"}', "call-9", "doomed")]
    assert list(wal.glob("wal-*.jsonl")) == []  # recovered logs are gone; our own was empty


def test_a_run_killed_inside_a_tool_call_is_listed_shown_and_verified(tmp_path: Path) -> None:
    store, wal = tmp_path / "store", tmp_path / "wal"
    _killed_inside_a_tool(store, wal, first=True)
    (log,) = wal.glob("wal-*.jsonl")
    logged = [json.loads(line) for line in log.read_text().splitlines()]
    assert [entry["name"] for entry in logged] == [
        "invoke_agent doomed",
        "iteration 1",
        "execute_tool rm_rf",
    ]  # the ended first run was settled (the log emptied); the crashed run is all there

    recovery = subprocess.run(  # the next process on the same directories
        [sys.executable, "-c", _RESTART, str(store), str(wal)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert recovery.returncode == 0, recovery.stderr
    assert "recorded 1 run(s) left unfinished by a process that died" in recovery.stderr

    listed = run_cli("sessions", "--store", str(store), "--format", "json")
    runs = {run["question"]: run for run in json.loads(listed.stdout)}
    crashed = runs["Clean up the disk?"]
    assert (crashed["agent"], crashed["status"], crashed["tool_calls"]) == (
        "doomed",
        "incomplete",
        1,
    )
    assert runs["Ready?"]["status"] == "ok"

    shown = run_cli("show", crashed["id"], "--store", str(store))
    assert shown.returncode == 0, shown.stderr
    assert "question     Clean up the disk?" in shown.stdout
    assert "thought      Delete it all." in shown.stdout
    assert "rm_rf [call-9] incomplete" in shown.stdout
    assert '{"path": "/"}' in shown.stdout
    (view,) = json.loads(
        run_cli("show", crashed["id"], "--store", str(store), "--format", "json").stdout
    )
    (call,) = view["iterations"][0]["tool_calls"]
    assert (call["name"], call["status"], call["arguments"]) == (
        "rm_rf",
        "incomplete",
        '{"path": "/"}',
    )

    verified = run_cli("verify", "--store", str(store))
    assert verified.returncode == 0, verified.stdout
    assert verified.stdout.endswith("2 verified, 0 failed\n")
    # Sealed by the process that recovered it, as an entry of that process's chain.
    assert _chain_of(store, crashed["id"]) != _chain_of(store, runs["Ready?"]["id"])


_RESTART = """
import sys, otel_prov
otel_prov.configure(store=sys.argv[1], wal_dir=sys.argv[2], set_global=False).shutdown()
"""


def _chain_of(store: Path, session: str) -> str:
    (row,) = pyoxigraph.Store.read_only(str(store)).query(
        f"""PREFIX oprov: <https://w3id.org/otel-prov/ns#>
        SELECT ?chain WHERE {{ <{session}:bundle> oprov:chainId ?chain }}""",
        use_default_graph_as_union=True,
    )
    return str(row["chain"].value)


def test_a_tool_call_logs_the_run_around_it_once(tmp_path: Path) -> None:
    """Session and step are logged at the first tool call under them, not again."""
    provider = TracerProvider()
    processor = ProvSpanProcessor(FileExporter(tmp_path / "out.nq"), wal_dir=tmp_path / "wal")
    provider.add_span_processor(processor)
    with otel_prov.agent_session("a", question="q", tracer_provider=provider):
        for number, tools in ((1, ["t1", "t2"]), (2, []), (3, ["t3"])):
            with otel_prov.iteration(number, tracer_provider=provider):
                for tool in tools:
                    with otel_prov.tool_call(tool, arguments="{}", tracer_provider=provider):
                        pass
        (log,) = (tmp_path / "wal").glob("wal-*.jsonl")
        logged = [json.loads(line)["name"] for line in log.read_text().splitlines()]
    assert logged == [
        "invoke_agent a",
        "iteration 1",
        "execute_tool t1",
        "execute_tool t2",
        "iteration 3",
        "execute_tool t3",
    ]
    provider.shutdown()
    assert not log.exists()  # all settled once the run was stored


def test_finished_tool_calls_leave_nothing_to_recover(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        store=tmp_path / "store", wal_dir=tmp_path / "wal", set_global=False
    )
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.force_flush()
    (log,) = (tmp_path / "wal").glob("wal-*.jsonl")
    assert log.read_text() == ""  # every intent settled once exported
    handle.shutdown()


def test_tool_calls_outside_any_session_leave_nothing_to_recover(tmp_path: Path) -> None:
    """A tool call outside any agent session is logged at dispatch like any other, and its
    trace is then discarded (not provenance).  Its intent stayed pending: the log grew
    with every such call, outlived a clean exit, and the next process stored each call as
    a run left unfinished by a process that died."""
    provider = TracerProvider()
    provider.add_span_processor(
        ProvSpanProcessor(RecordingExporter(), wal_dir=tmp_path / "wal", schedule_delay=0.02)
    )
    for value in range(20):
        with otel_prov.tool_call("lookup", arguments={"q": value}, tracer_provider=provider):
            pass
    (log,) = (tmp_path / "wal").glob("wal-*.jsonl")
    assert log.read_text()  # logged at dispatch
    provider.force_flush()  # the traces are discarded when idle: nothing new, nothing open
    provider.shutdown()
    assert not log.exists()
    recovered, logs = recover_intents(tmp_path / "wal")
    assert recovered == [] and logs == []


def _recovered_arguments(directory: Path, values: list[str]) -> list[str]:
    """Tool calls with these arguments logged at dispatch, recovered from a copy of the log
    (the copy's lock is free, as a dead process's is)."""
    tracer = TracerProvider().get_tracer("test")
    log = IntentLog(directory / "live")
    for value in values:
        span = tracer.start_span(
            "execute_tool t",
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "t",
                "gen_ai.tool.call.arguments": value,
            },
        )
        log.intent(span, "svc")
    (directory / "dead").mkdir()
    shutil.copy(log.path, directory / "dead")
    log.close()
    records, _ = recover_intents(directory / "dead")
    return [r.attributes["gen_ai.tool.call.arguments"] for r in records]  # in log order


def test_every_line_breaking_code_point_survives_the_log(tmp_path: Path) -> None:
    values = [f'{{"path": "a{char}b"}}' for char in LINE_BREAKERS]
    assert _recovered_arguments(tmp_path, values) == values


@given(st.lists(st.text(alphabet=TEXT_WITH_LINE_BREAKERS), max_size=4))
def test_any_arguments_survive_the_log(values: list[str]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        assert _recovered_arguments(Path(directory), values) == values


_KILLED_WITH_THESE_TEXTS = """
import json, os, signal, sys
import otel_prov
store, wal, texts = sys.argv[1], sys.argv[2], json.loads(open(sys.argv[3]).read())
handle = otel_prov.configure(store=store, wal_dir=wal, set_global=False, otlp=False,
                             service_name=texts["service"])
tp = handle.tracer_provider
with otel_prov.agent_session(texts["agent"], question=texts["question"],
                             conversation_id=texts["conversation"], agent_id=texts["agent_id"],
                             tracer_provider=tp):
    with otel_prov.iteration(1, thought=texts["thought"], action=texts["action"],
                             tracer_provider=tp):
        with otel_prov.tool_call(texts["tool"], arguments=texts["arguments"],
                                 call_id=texts["call_id"], tool_type=texts["tool_type"],
                                 tracer_provider=tp):
            os.kill(os.getpid(), signal.SIGKILL)
"""
TEXT_FIELDS = ("service", "agent", "question", "conversation", "agent_id", "thought", "action")
TOOL_FIELDS = ("tool", "arguments", "call_id", "tool_type")
# Any code point, lone surrogates drawn often (they are what no UTF-8 encoder takes).
ANY_TEXT = st.lists(
    st.one_of(
        st.sampled_from(["\ud800", "\udbff", "\udc80", "\udfff", "\ud83d", "\ude00"]),
        st.characters(exclude_categories=()),
    ),
    min_size=1,
    max_size=8,
).map("".join)
"""Any code point, lone surrogates drawn often (they are what no UTF-8 encoder takes): a
list, for ``st.text`` merges its alphabet into one range where surrogates are rare."""


def _encodable(record: SpanRecord) -> bool:
    """Every string of ``record`` encodes as UTF-8 (cleaning it changes nothing)."""
    return clean_record(record) == record


@settings(max_examples=15)
@given(st.fixed_dictionaries(dict.fromkeys(TEXT_FIELDS + TOOL_FIELDS, ANY_TEXT)))
def test_any_text_in_any_field_of_a_tool_call_survives_a_crash_inside_it(
    texts: dict[str, str],
) -> None:
    """An agent killed by SIGKILL inside a tool call, with any text in every field it names:
    the log is UTF-8 JSON, and recovery rebuilds the call, encodable, inside its run."""
    with tempfile.TemporaryDirectory() as directory:
        store, wal, given_texts = (Path(directory) / name for name in ("store", "wal", "in.json"))
        given_texts.write_text(json.dumps(texts))  # ASCII: lone surrogates as \\u escapes
        child = subprocess.run(
            [
                sys.executable,
                "-c",
                _KILLED_WITH_THESE_TEXTS,
                str(store),
                str(wal),
                str(given_texts),
            ],
            cwd=ROOT,
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert child.returncode == -signal.SIGKILL, child.stderr
        (log,) = wal.glob("wal-*.jsonl")
        for line in log.read_bytes().decode("utf-8").split("\n")[:-1]:
            json.loads(line)
        records, _ = recover_intents(wal)
    assert all(_encodable(record) for record in records)
    calls = [record for record in records if record.role is Role.TOOL_CALL]
    assert [call.attributes.get("gen_ai.tool.name") for call in calls] == [
        clean_text(texts["tool"])
    ]
    assert calls[0].attributes["gen_ai.tool.call.id"] == clean_text(texts["call_id"])
    assert calls[0].attributes["otel_prov.arguments"] == clean_text(texts["arguments"])
    assert {record.service_name for record in records} == {clean_text(texts["service"])}
    assert [record.role for record in records] == [Role.SESSION, Role.ITERATION, Role.TOOL_CALL]
    record = map_spans(records)
    "".join(f"{s} {p} {o} .\n" for s, p, o in record.triples).encode()  # storable


class _RefusesFirst(RecordingExporter):
    """A store that is down for the first export and up afterwards."""

    def __init__(self) -> None:
        super().__init__()
        self.attempts = 0

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        self.attempts += 1
        if self.attempts == 1:
            raise ConnectionError("store unreachable")
        return super().export(records)


def test_a_recovered_run_the_store_refused_is_sent_again_sealed_once(tmp_path: Path) -> None:
    provider = TracerProvider()
    provider.add_span_processor(
        ProvSpanProcessor(FileExporter(tmp_path / "out.nq"), wal_dir=tmp_path / "live")
    )
    with (
        otel_prov.agent_session("a", question="q", tracer_provider=provider),
        otel_prov.iteration(1, tracer_provider=provider),
        otel_prov.tool_call("t", arguments="{}", tracer_provider=provider),
    ):
        (log,) = (tmp_path / "live").glob("wal-*.jsonl")
        (tmp_path / "dead").mkdir()
        shutil.copy(log, tmp_path / "dead")  # as a killed process leaves it (lock free)
    provider.shutdown()

    exporter = _RefusesFirst()
    processor = ProvSpanProcessor(exporter, wal_dir=tmp_path / "dead", schedule_delay=0.05)
    (record,) = exporter.wait_for(1)
    processor.shutdown()
    assert exporter.attempts == 3  # the run refused, the run, the checkpoint at shutdown
    sealed = [(s, o) for s, p, o in record.triples if p == O.bundleOf]
    assert [o for _, o in sealed] == [record.root]  # the retry still carries the seal
    assert (record.root, O.status, '"incomplete"') in record.triples
    assert list((tmp_path / "dead").glob("wal-*.jsonl")) == []


_KILLED_INSIDE_A_THIRD_PARTY_TOOL = """
import os, signal, sys
from opentelemetry.sdk.trace import TracerProvider
from otel_prov import ProvSpanProcessor
from otel_prov.exporters import FileExporter
store, wal = sys.argv[1], sys.argv[2]
provider = TracerProvider()
provider.add_span_processor(ProvSpanProcessor(FileExporter(store), wal_dir=wal))
tracer = provider.get_tracer("openinference-like")
with tracer.start_as_current_span(
    "weather", attributes={"openinference.span.kind": "AGENT", "agent.name": "weather",
                           "input.value": "SECRET-QUESTION"}):
    with tracer.start_as_current_span(
        "get_weather", attributes={"openinference.span.kind": "TOOL",
                                   "tool.name": "get_weather",
                                   "input.value": '{"city": "SECRET-ARGUMENT"}'}):
        os.kill(os.getpid(), signal.SIGKILL)
"""


def test_with_content_capture_off_the_log_holds_no_third_party_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under ``OTEL_PROV_CAPTURE_CONTENT=false`` the store keeps no text, and neither may the
    log on disk: a third-party instrumentation sets its question and arguments on the span
    whatever our switches say, and the log wrote them as they were."""
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    store, wal = tmp_path / "out.nq", tmp_path / "wal"
    child = subprocess.run(
        [sys.executable, "-c", _KILLED_INSIDE_A_THIRD_PARTY_TOOL, str(store), str(wal)],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    (log,) = wal.glob("wal-*.jsonl")
    text = log.read_text()
    assert "get_weather" in text and "SECRET" not in text

    recovered, _ = recover_intents(wal)
    roles = {record.name: record.role for record in recovered}
    assert roles == {"weather": Role.SESSION, "get_weather": Role.TOOL_CALL}
    triples = map_spans(recovered).triples
    assert not any("SECRET" in str(term) for triple in triples for term in triple)
    assert any("get_weather" in str(term) for triple in triples for term in triple)
