"""The services around the agent: what a tool call caused outside it (HTTP client and
server spans, a database call, the called service's session), read back from a real
store and shown under the call by ``show`` (text, JSON, HTML), ``why`` and the timeline."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from otel_prov.prov._span_record import SpanRecord
from otel_prov.read import open_store
from otel_prov.read._views import SessionView, ToolCallView
from otel_prov.view._timeline_svg import timeline_rows, timeline_svg
from tests.builders import TRACE, make_span, store_runs
from tests.cli import run_cli

AGENT, RESEARCH = "agent-service", "research-service"


def _kind(span: SpanRecord, kind: str) -> SpanRecord:
    return dataclasses.replace(span, kind=kind)


def crossing_run() -> list[SpanRecord]:
    """An agent whose first call gets a 404 from a service and whose second asks another
    service, which queries its database and runs an agent of its own."""
    return [
        make_span(
            1, None, name="invoke_agent outer", start_ms=0, end_ms=100,
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name="outer",
            otel_prov__question="What do we know?", otel_prov__answer="Enough.",
        ),
        make_span(2, 1, name="iteration 1", start_ms=1, end_ms=30, otel_prov__iteration__number=1,
                  otel_prov__action="lookup"),
        make_span(3, 2, name="execute_tool lookup", start_ms=2, end_ms=20, status="error",
                  message="not found", gen_ai__operation__name="execute_tool",
                  gen_ai__tool__name="lookup"),
        _kind(make_span(4, 3, name="GET", start_ms=3, end_ms=15,
                        http__request__method="GET", http__response__status_code=404), "client"),
        make_span(5, 1, name="iteration 2", start_ms=31, end_ms=90, otel_prov__iteration__number=2,
                  otel_prov__action="research"),
        make_span(6, 5, name="execute_tool research", start_ms=32, end_ms=80,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="research"),
        _kind(make_span(7, 6, name="POST", start_ms=33, end_ms=79, http__request__method="POST",
                        http__response__status_code=200), "client"),
        _kind(make_span(8, 7, name="POST /run", start_ms=34, end_ms=78, service=RESEARCH,
                        http__response__status_code=200), "server"),
        _kind(make_span(9, 8, name="SELECT papers", start_ms=35, end_ms=37, service=RESEARCH,
                        db__system="postgresql"), "client"),
        make_span(
            10, 8, name="invoke_agent researcher", start_ms=38, end_ms=77, service=RESEARCH,
            gen_ai__operation__name="invoke_agent", gen_ai__agent__name="researcher",
            otel_prov__question="research", otel_prov__answer="found it",
        ),
    ]  # fmt: skip


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return store_runs(tmp_path_factory.mktemp("downstream") / "store", crossing_run())


def _run(store: Path) -> SessionView:
    reader = open_store(store)
    return reader.session(reader.find(f"{TRACE:032x}")[0])


def _calls(view: SessionView) -> dict[str, ToolCallView]:
    return {call.name: call for step in view.iterations for call in step.tool_calls}


def test_a_tool_calls_downstream_spans_are_listed_under_it(store: Path) -> None:
    calls = _calls(_run(store))
    (got,) = calls["lookup"].downstream
    assert (got.name, got.service, got.status, got.error_type) == ("GET", AGENT, "error", "404")
    assert got.error_message == "HTTP status 404" and got.duration_ms == pytest.approx(12)
    shown = [
        (d.depth, d.kind, d.name, d.service, d.status, d.duration_ms)
        for d in calls["research"].downstream
    ]
    assert shown == [
        (1, "span", "POST", AGENT, "ok", pytest.approx(46)),
        (2, "span", "POST /run", RESEARCH, "ok", pytest.approx(44)),
        (3, "span", "SELECT papers", RESEARCH, "ok", pytest.approx(2)),
        (3, "session", "researcher", RESEARCH, "ok", pytest.approx(39)),
    ]
    # The called service's session is still shown whole, nested under the call.
    assert [sub.agent for sub in calls["research"].sub_sessions] == ["researcher"]


def test_show_lists_them_in_text_and_json(store: Path) -> None:
    text = run_cli("show", f"{TRACE:032x}", "--store", str(store))
    assert text.returncode == 0, text.stderr
    lines = [line.strip() for line in text.stdout.splitlines()]
    assert "caused       GET (agent-service) FAILED 404: HTTP status 404, 12 ms" in lines
    assert "caused       POST /run (research-service) ok, 44 ms" in lines
    assert "caused       session researcher (research-service) ok, 39 ms" in lines
    shown = json.loads(
        run_cli("show", f"{TRACE:032x}", "--store", str(store), "--format", "json").stdout
    )
    call = shown[0]["iterations"][1]["tool_calls"][0]
    assert [d["name"] for d in call["downstream"]] == ["POST", "POST /run", "SELECT papers",
                                                       "researcher"]  # fmt: skip
    assert call["downstream"][1] == {
        "id": f"urn:otel-prov:{TRACE:032x}:{8:016x}",
        "kind": "span",
        "name": "POST /run",
        "service": RESEARCH,
        "status": "ok",
        "depth": 2,
        "start": "2025-11-30T00:00:00.034Z",
        "end": "2025-11-30T00:00:00.078Z",
        "duration_ms": pytest.approx(44),
        "error_type": None,
        "error_message": None,
    }


def test_the_session_page_lists_them_under_the_call(store: Path) -> None:
    page = run_cli("show", f"{TRACE:032x}", "--store", str(store), "--format", "html").stdout
    failed = '<p class="caused failed" data-depth="1">caused <code>GET (agent-service) FAILED'
    assert failed in page
    assert (
        '<p class="caused" data-depth="3">caused <code>SELECT papers (research-service) ok' in page
    )
    lookup, research = page.index("<code>lookup</code>"), page.index("<code>research</code>")
    assert lookup < page.index(failed) < research < page.index("POST /run (research-service)")


def test_why_has_them_as_the_calls_supporting_activities(store: Path) -> None:
    graph = open_store(store).why(f"{TRACE:032x}")
    calls = {node.tool: node.id for node in graph.nodes if node.type == "ToolCall"}
    by_label = {node.label: node for node in graph.nodes}
    got = by_label["GET"]
    assert (got.type, got.service, got.status, got.error) == (
        "Span",
        AGENT,
        "error",
        "404: HTTP status 404",
    )
    assert got.duration_ms == pytest.approx(12) and not got.supports_answer  # as its failed call
    post, server, db = by_label["POST"], by_label["POST /run"], by_label["SELECT papers"]
    assert all(n.supports_answer and n.service for n in (post, server, db))
    researcher = by_label["invoke_agent researcher"]
    assert (researcher.type, researcher.service) == ("AgentSession", RESEARCH)
    part_of = {(e.source, e.target) for e in graph.edges if e.relation == "partOf"}
    assert {
        (got.id, calls["lookup"]),
        (post.id, calls["research"]),
        (server.id, post.id),
        (db.id, server.id),
        (researcher.id, server.id),
    } <= part_of
    text = run_cli("why", f"{TRACE:032x}", "--store", str(store)).stdout
    assert "] Span (research-service, 44 ms)  ok  " in text
    assert "] Span (agent-service, 12 ms)  FAILED 404: HTTP status 404 (does not support" in text
    as_json = json.loads(
        run_cli("why", f"{TRACE:032x}", "--store", str(store), "--format", "json").stdout
    )
    node = next(n for n in as_json["nodes"] if n["label"] == "SELECT papers")
    assert node["service"] == RESEARCH and node["duration_ms"] == pytest.approx(2)


def test_the_timeline_draws_the_spans_of_every_service_under_the_call(store: Path) -> None:
    rows = [(r.kind, r.label, r.service) for r in timeline_rows(_run(store))]
    research = rows.index(("tool-call", "tool research", None))
    assert rows[research + 1 : research + 5] == [
        ("span", "POST", AGENT),
        ("span", "POST /run", RESEARCH),
        ("span", "SELECT papers", RESEARCH),
        ("session", "session researcher", None),
    ]
    svg = timeline_svg(_run(store))
    assert "SELECT papers · research-service" in svg and "GET · agent-service" in svg


PHOENIX = "http://localhost:6006/projects/default/traces/{trace_id}"


def test_links_are_named_after_the_backend_configured(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phoenix (or any backend) by URL template and label; Jaeger's variable keeps its name."""
    monkeypatch.setenv("OTEL_PROV_TRACE_URL", PHOENIX)
    monkeypatch.setenv("OTEL_PROV_TRACE_LABEL", "Phoenix")
    url = PHOENIX.replace("{trace_id}", f"{TRACE:032x}")
    text = run_cli("show", f"{TRACE:032x}", "--store", str(store)).stdout
    assert f"Phoenix      {url}" in text.splitlines() and "jaeger" not in text
    page = run_cli("show", f"{TRACE:032x}", "--store", str(store), "--format", "html").stdout
    assert f'<dt>Phoenix</dt><dd><a href="{url}">{url}</a></dd>' in page
    timeline = page[page.index("<h2>Timeline</h2>") :]
    assert f'Open the trace in <a href="{url}">Phoenix</a>' in timeline
    assert "jaeger" not in page.lower()
    monkeypatch.delenv("OTEL_PROV_TRACE_LABEL")
    monkeypatch.setenv("OTEL_PROV_JAEGER_URL", "http://jaeger.local/trace/{trace_id}")
    both = run_cli("show", f"{TRACE:032x}", "--store", str(store)).stdout.splitlines()
    assert f"traces       {url}" in both  # a template without a label
    assert f"jaeger       http://jaeger.local/trace/{TRACE:032x}" in both


def _model_run() -> list[SpanRecord]:
    """One step whose model call's HTTP request to the model's API got a 429."""
    return [
        make_span(1, None, name="invoke_agent a", end_ms=20, gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="a"),
        make_span(2, 1, name="iteration 1", start_ms=1, end_ms=19, otel_prov__iteration__number=1),
        make_span(3, 2, name="chat m", start_ms=2, end_ms=18, gen_ai__operation__name="chat",
                  gen_ai__request__model="m"),
        _kind(make_span(4, 3, name="POST", start_ms=3, end_ms=17, service="llm-gateway",
                        http__response__status_code=429), "client"),
    ]  # fmt: skip


def test_a_model_calls_request_to_its_api_is_drawn_under_it(tmp_path: Path) -> None:
    view = _run(store_runs(tmp_path / "store", _model_run()))
    (model,) = view.iterations[0].model_calls
    assert [(d.name, d.service, d.status, d.error_type) for d in model.downstream] == [
        ("POST", "llm-gateway", "error", "429")
    ]
    rows = [(r.depth, r.kind, r.label, r.service) for r in timeline_rows(view)]
    assert rows[-2:] == [(2, "model-call", "model m", None), (3, "span", "POST", "llm-gateway")]


def test_show_lists_a_model_calls_downstream_spans_as_it_lists_a_tool_calls(
    tmp_path: Path,
) -> None:
    store = str(store_runs(tmp_path / "store", _model_run()))
    text = run_cli("show", f"{TRACE:032x}", "--store", store).stdout.splitlines()
    model = next(i for i, line in enumerate(text) if line.strip().startswith("model call"))
    assert text[model + 1].strip() == (
        "caused       POST (llm-gateway) FAILED 429: HTTP status 429, 14 ms"
    )
    assert text[model + 1].index("caused") > text[model].index("model call")  # under the call
    shown = json.loads(
        run_cli("show", f"{TRACE:032x}", "--store", store, "--format", "json").stdout
    )
    (caused,) = shown[0]["iterations"][0]["model_calls"][0]["downstream"]
    assert (caused["name"], caused["service"], caused["error_type"]) == (
        "POST",
        "llm-gateway",
        "429",
    )
    page = run_cli("show", f"{TRACE:032x}", "--store", store, "--format", "html").stdout
    listed = '<p class="caused failed" data-depth="1">caused <code>POST (llm-gateway) FAILED 429'
    assert page.index("model call <code>m</code>") < page.index(listed)


def framed_run() -> list[SpanRecord]:
    """:func:`crossing_run` as a request from a web front end started it: the front end's
    span and its HTTP client span, the agent service's server span around the run, a
    cache read directly under the first step (no call), and the front end's work after."""
    outer, *rest = crossing_run()
    return [
        make_span(20, None, name="GET /ask", start_ms=-6, end_ms=110, service=FRONTEND),
        _kind(make_span(21, 20, name="POST /agent", start_ms=-4, end_ms=103, service=FRONTEND,
                        http__request__method="POST", http__response__status_code=502), "client"),
        _kind(make_span(22, 21, name="POST /agent", start_ms=-2, end_ms=102,
                        http__request__method="POST", http__response__status_code=503), "server"),
        dataclasses.replace(outer, parent_id=22),
        *rest,
        _kind(make_span(23, 2, name="GET cache", start_ms=1.5, end_ms=1.9, db__system="redis"),
              "client"),
        make_span(24, 20, name="render answer", start_ms=104, end_ms=109, service=FRONTEND),
    ]  # fmt: skip


FRONTEND = "web-frontend"


def test_the_timeline_draws_every_span_of_the_trace_around_the_run(tmp_path: Path) -> None:
    """Read back from a real store: the spans around the run are drawn where they sit in
    the trace, the run's own rows under the server span that holds it, each once."""
    store = store_runs(tmp_path / "store", framed_run())
    reader = open_store(store)
    (run,) = reader.find(f"{TRACE:032x}")
    view, trace = reader.session(run), reader.trace_spans(f"{TRACE:032x}")
    assert len(trace) == 15 and len({span.id for span in trace}) == 15
    server = next(span for span in trace if span.service == AGENT and span.name == "POST /agent")
    assert (server.kind, server.status, server.error) == ("Span", "error", "503: HTTP status 503")
    rows = [(r.depth, r.kind, r.label, r.service) for r in timeline_rows(view, trace)]
    assert rows[:6] == [
        (0, "span", "GET /ask", FRONTEND),
        (1, "span", "POST /agent", FRONTEND),
        (2, "span", "POST /agent", AGENT),
        (3, "session", "session outer", None),
        (4, "iteration", "iteration 1", None),
        (5, "span", "GET cache", AGENT),
    ]
    assert rows[-1] == (1, "span", "render answer", FRONTEND)
    assert len(rows) == len(list(timeline_rows(view))) + 5  # spans 20 to 24
    assert [label for _, _, label, _ in rows].count("SELECT papers") == 1
    page = run_cli("show", f"{TRACE:032x}", "--store", str(store), "--format", "html").stdout
    assert "POST /agent · web-frontend" in page and "render answer · web-frontend" in page
