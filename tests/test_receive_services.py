"""Whole traces across services: an agent calls a service over HTTP, the service runs an
agent of its own, each exports to the receiver on its own (gRPC and HTTP/protobuf), and
the receiver maps the trace as one graph: the service's session is a sub-session
started by the tool call that sent the request."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pyoxigraph

from otel_prov.prov._rdf import PREFIXES
from tests.cli import run_cli
from tests.receiver import Receivers, run_agent, service

QUERY = (
    "".join(f"PREFIX {k}: <{v}>\n" for k, v in PREFIXES.items())
    + """
SELECT ?outer ?tool ?toolName ?client ?server ?inner ?innerService ?outerService WHERE {
  ?outer a oprov:AgentSession ; prov:wasAssociatedWith ?outerService .
  ?outerService a oprov:Service, prov:SoftwareAgent .
  FILTER NOT EXISTS { ?outer oprov:partOf ?anything }
  ?tool a oprov:ToolCall ; oprov:toolName ?toolName ; oprov:partOf+ ?outer .
  ?client oprov:partOf ?tool .
  ?server oprov:partOf ?client .
  ?inner a oprov:AgentSession ; oprov:partOf ?server ;
         prov:qualifiedStart [ a prov:Start ; prov:hadActivity ?tool ] ;
         prov:wasInformedBy ?tool ;
         prov:wasAssociatedWith ?innerService .
  ?innerService a oprov:Service .
}"""
)


def test_a_session_in_a_called_service_is_a_sub_session_of_the_calling_tool(
    receivers: Receivers, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    receiver = receivers.start("--store", str(store), "--trace-idle", "2")
    with service(receiver.http) as (process, research):
        sent = run_agent(
            "--protocol",
            "grpc",
            "--endpoint",
            receiver.grpc,
            "--service",
            "agent-service",
            "--research",
            research,
        )
        process.send_signal(signal.SIGTERM)  # flushes what it has not exported yet
        assert process.wait(30) == 0
    receiver.wait_for("otel_prov_receiver_sessions_sealed_total", 1)
    assert receiver.stop() == 0

    (trace,) = sent["traces"]
    answer = pyoxigraph.Store.read_only(str(store)).query(QUERY, use_default_graph_as_union=True)
    rows = list(answer)  # type: ignore[arg-type]
    assert len(rows) == 1, "the sub-session link through the HTTP spans is missing"
    (row,) = rows
    assert row["toolName"].value == "fetch"  # the first step's tool asked the service
    assert row["outerService"].value.endswith(":service:agent-service")
    assert row["innerService"].value.endswith(":service:research-service")
    assert all(trace in row[name].value for name in ("outer", "client", "server", "inner"))
    # One run, in one bundle: the service's session is nested, not a run of its own.
    listed = json.loads(run_cli("sessions", "--store", str(store), "--format", "json").stdout)
    assert [row["trace_id"] for row in listed] == [trace]
    shown = run_cli("show", trace, "--store", str(store))
    assert shown.returncode == 0 and "researcher" in shown.stdout
    # What each call caused, in both services, over OTLP (the span kinds came along).
    (view,) = json.loads(run_cli("show", trace, "--store", str(store), "--format", "json").stdout)
    fetch, calculator = (step["tool_calls"][0] for step in view["iterations"][:2])
    assert [
        (d["depth"], d["kind"], d["name"], d["service"], d["status"]) for d in fetch["downstream"]
    ] == [
        (1, "span", "POST", "agent-service", "ok"),
        (2, "span", "POST /run", "research-service", "ok"),
        (3, "session", "researcher", "research-service", "ok"),
    ]
    assert all(d["duration_ms"] > 0 for d in fetch["downstream"])
    # The 404: the client span is an error with its status code, the server's is not.
    assert [
        (d["name"], d["service"], d["status"], d["error_type"]) for d in calculator["downstream"]
    ] == [
        ("POST", "agent-service", "error", "404"),
        ("POST /missing", "research-service", "ok", None),
    ]
    assert "caused       POST (agent-service) FAILED 404: HTTP status 404" in shown.stdout
    why = json.loads(run_cli("why", trace, "--store", str(store), "--format", "json").stdout)
    services = {(n["label"], n.get("service")) for n in why["nodes"] if n["type"] == "Span"}
    assert ("POST /run", "research-service") in services
    assert run_cli("verify", "--store", str(store)).returncode == 0
