"""Recorded at dispatch: a tool call whose process is killed inside the tool is still stored."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pyoxigraph
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.processing._wal import IntentLog, recover_intents
from tests.test_sparql_parts import LINE_BREAKERS, TEXT_WITH_LINE_BREAKERS

ROOT = Path(__file__).resolve().parents[1]


def test_a_tool_killed_by_sigkill_is_stored_incomplete_with_its_arguments(tmp_path: Path) -> None:
    store, wal = tmp_path / "store", tmp_path / "wal"
    script = textwrap.dedent(f"""
        import os, signal
        import otel_prov
        handle = otel_prov.configure(store={str(store)!r}, wal_dir={str(wal)!r},
                                     set_global=False, service_name="doomed")
        tp = handle.tracer_provider
        with otel_prov.agent_session("doomed", question="q", tracer_provider=tp):
            with otel_prov.iteration(1, tracer_provider=tp):
                with otel_prov.tool_call("rm_rf", arguments='{{"path": "/"}}', call_id="call-9",
                                         tracer_provider=tp):
                    os.kill(os.getpid(), signal.SIGKILL)
    """)
    child = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ},
    )
    assert child.returncode == -signal.SIGKILL
    (log,) = wal.glob("wal-*.jsonl")
    assert json.loads(log.read_text().splitlines()[0])["attributes"]["gen_ai.tool.name"] == "rm_rf"

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


def test_finished_tool_calls_leave_nothing_to_recover(tmp_path: Path) -> None:
    handle = otel_prov.configure(
        store=tmp_path / "store", wal_dir=tmp_path / "wal", set_global=False
    )
    run_demo_agent(tracer_provider=handle.tracer_provider)
    handle.force_flush()
    (log,) = (tmp_path / "wal").glob("wal-*.jsonl")
    assert log.read_text() == ""  # every intent settled once exported
    handle.shutdown()


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
