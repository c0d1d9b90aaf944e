"""Approvals and delegation on record (issue 30.2): the manual API, spans to PROV, and the
``prov`` package and SHACL shapes on the result."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

import pyshacl
import pytest
import rdflib
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from prov.model import ProvDocument

import otel_prov
from otel_prov import semconv as sc
from otel_prov.prov._rdf import PREFIXES
from otel_prov.prov._vocab import RDF_TYPE, O, P
from otel_prov.read import open_store
from otel_prov.semconv import SHAPES_PATH
from tests.builders import store_runs
from tests.cli import run_cli
from tests.instrumentation.span_helpers import prov, subjects, value
from tests.test_import import OtlpJsonFileExporter

Provider = tuple[TracerProvider, InMemorySpanExporter]


def _supervised_run(provider: TracerProvider) -> None:
    """A run on behalf of user u-7: alice approves one mail after 42 s, bob rejects another."""
    with otel_prov.agent_session(
        "mailer", question="Mail the report", user_id="u-7", tracer_provider=provider
    ):
        with (
            otel_prov.iteration(1, action="send_email", tracer_provider=provider),
            otel_prov.tool_call(
                "send_email", call_id="call_1", arguments={"to": "carol"}, tracer_provider=provider
            ) as span,
        ):
            otel_prov.record_approval(
                "approved", "alice", approver_name="Alice A.", waited=42.0, span=span
            )
            otel_prov.set_observation("sent", span=span)
        with otel_prov.iteration(
            2, thought="The board wants it too.", action="send_email", tracer_provider=provider
        ) as step:
            otel_prov.record_approval(
                "rejected",
                "bob",
                reason="not to the board",
                tool_name="send_email",
                tool_call_id="call_2",
                waited=3.5,
                span=step,
            )
        otel_prov.set_answer("Sent to carol; the board mail was refused.")


@pytest.fixture
def spans(memory_provider: Provider) -> list[ReadableSpan]:
    provider, exporter = memory_provider
    _supervised_run(provider)
    return list(exporter.get_finished_spans())


def _time(text: str | None) -> datetime:
    assert text is not None
    return datetime.fromisoformat(text)


def _person(person_id: str) -> str:
    return f"<urn:otel-prov:person:{hashlib.sha256(person_id.encode()).hexdigest()}>"


def test_record_approval_puts_an_event_with_who_what_and_how_long(
    spans: list[ReadableSpan],
) -> None:
    (tool,) = [s for s in spans if s.name == "execute_tool send_email"]
    (event,) = [e for e in tool.events if e.name == sc.APPROVAL_EVENT]
    attributes = dict(event.attributes or {})
    assert attributes[sc.OTEL_PROV_APPROVAL_DECISION] == "approved"
    assert attributes[sc.OTEL_PROV_APPROVAL_APPROVER_ID] == "alice"
    assert attributes[sc.OTEL_PROV_APPROVAL_APPROVER_NAME] == "Alice A."
    assert attributes[sc.OTEL_PROV_APPROVAL_WAIT] == 42.0
    assert dict(tool.attributes or {})[sc.OTEL_PROV_APPROVAL_REQUIRED] is True
    (session,) = [s for s in spans if s.name.startswith("invoke_agent")]
    assert dict(session.attributes or {})[sc.USER_ID] == "u-7"


def test_a_decision_is_checked_before_anything_is_recorded() -> None:
    with pytest.raises(ValueError, match="approved, rejected or modified"):
        otel_prov.record_approval("maybe", "alice")
    with pytest.raises(ValueError, match="approver"):
        otel_prov.record_approval("approved", "")


def test_the_approved_call_was_informed_by_a_decision_of_a_person(
    spans: list[ReadableSpan],
) -> None:
    triples = prov(spans)
    decisions = subjects(triples, O.Approval)
    assert len(decisions) == 2
    by_decision = {value(triples, d, O.decision): d for d in decisions}
    approved, rejected = by_decision["approved"], by_decision["rejected"]
    (call,) = subjects(triples, O.ToolCall)
    assert (call, P.wasInformedBy, approved) in triples
    assert (approved, RDF_TYPE, P.Activity) in triples
    alice = _person("alice")
    assert (approved, P.wasAssociatedWith, alice) in triples
    assert (alice, RDF_TYPE, P.Person) in triples
    assert value(triples, alice, O.personName) == "Alice A."
    assert float(value(triples, approved, O.waitSeconds) or "nan") == 42.0
    assert value(triples, approved, O.callRan) == "true"
    started = _time(value(triples, approved, P.startedAtTime))
    ended = _time(value(triples, approved, P.endedAtTime))
    assert (ended - started).total_seconds() == pytest.approx(42.0)
    assert value(triples, call, O.approvalRequired) == "true"

    # The rejected call never ran: no tool call, the decision says so, with the reason.
    assert value(triples, rejected, O.callRan) == "false"
    assert value(triples, rejected, O.reason) == "not to the board"
    assert value(triples, rejected, O.toolName) == "send_email"
    assert value(triples, rejected, O.toolCallId) == "call_2"
    assert (rejected, P.wasAssociatedWith, _person("bob")) in triples


def test_the_agent_acted_on_behalf_of_the_user_in_that_session(
    spans: list[ReadableSpan],
) -> None:
    triples = prov(spans)
    (session,) = subjects(triples, O.AgentSession)
    associated = [o for s, p, o in triples if s == session and p == P.wasAssociatedWith]
    (agent,) = [o for o in associated if "agent:" in o]
    user = _person("u-7")
    assert (agent, P.actedOnBehalfOf, user) in triples
    (delegation,) = [o for s, p, o in triples if s == agent and p == P.qualifiedDelegation]
    assert (delegation, P.agent, user) in triples
    assert (delegation, P.hadActivity, session) in triples
    assert value(triples, user, O.personId) == "u-7"


def test_without_content_people_are_pseudonyms_and_reasons_are_left_off(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    provider, exporter = memory_provider
    _supervised_run(provider)
    spans = list(exporter.get_finished_spans())
    recorded = [dict(e.attributes or {}) for s in spans for e in s.events]
    assert all("alice" not in str(a) and "Alice" not in str(a) for a in recorded)
    assert all(sc.OTEL_PROV_APPROVAL_REASON not in a for a in recorded)
    triples = prov(spans)
    # The same person nodes as with content: runs still group by user and approver.
    assert (_person("alice"), RDF_TYPE, P.Person) in triples
    assert value(triples, _person("u-7"), O.personId) is None
    assert not [t for t in triples if t[1] in (O.personName, O.reason)]


def _turtle(spans: list[ReadableSpan]) -> str:
    graph = rdflib.Graph()
    record = otel_prov.map_spans([otel_prov.record_from_span(s) for s in spans])
    lines = "".join(f"{s} {p} {o} .\n" for s, p, o in record.triples)
    graph.parse(data=lines, format="nt")
    for prefix, namespace in PREFIXES.items():
        graph.bind(prefix, namespace)
    return graph.serialize(format="turtle")


def test_the_prov_package_reads_the_people_and_decisions(spans: list[ReadableSpan]) -> None:
    document = ProvDocument.deserialize(content=_turtle(spans), format="rdf", rdf_format="turtle")
    kinds = {
        (r.identifier.uri, r.get_type().localpart)
        for r in document.get_records()
        if r.is_element() and r.get_type() is not None
    }
    person = _person("alice")[1:-1]
    assert (person, "Person") in kinds or (person, "Agent") in kinds
    relations = {type(r).__name__ for r in document.get_records() if r.is_relation()}
    assert {"ProvDelegation", "ProvCommunication", "ProvAssociation"} <= relations


def test_shacl_shapes_pass_on_a_supervised_run(spans: list[ReadableSpan]) -> None:
    graph = rdflib.Graph().parse(data=_turtle(spans), format="turtle")
    shapes = rdflib.Graph().parse(SHAPES_PATH)
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes, advanced=True)
    assert conforms, text
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    decision = next(graph.subjects(oprov.decision, rdflib.Literal("approved")))
    graph.set((decision, oprov.decision, rdflib.Literal("perhaps")))
    assert not pyshacl.validate(graph, shacl_graph=shapes, advanced=True)[0]


# --- the readers (issue 30.3) ---------------------------------------------------------
def store_session(store: Path) -> str:
    (page,) = open_store(store).sessions().sessions
    return page.id


@pytest.fixture
def store(spans: list[ReadableSpan], tmp_path: Path) -> Path:
    return store_runs(tmp_path / "store", [otel_prov.record_from_span(s) for s in spans])


def test_why_shows_the_decision_behind_the_call_and_the_rejected_one(store: Path) -> None:
    graph = open_store(store).why(str(store_session(store)))
    approvals = {node.label: node for node in graph.nodes if node.type == "Approval"}
    assert set(approvals) == {
        "approved by Alice A. after 42 s",
        "rejected by bob after 3.5 s: not to the board",
    }
    approved = approvals["approved by Alice A. after 42 s"]
    (call,) = [node for node in graph.nodes if node.type == "ToolCall"]
    assert any(
        edge.target == approved.id and edge.relation == "wasInformedBy"
        for edge in graph.outgoing(call.id)
    )
    rejected = approvals["rejected by bob after 3.5 s: not to the board"]
    assert rejected.tool == "send_email" and rejected.call_id == "call_2"
    assert not rejected.supports_answer


def test_summary_says_who_approved_and_after_how_long(store: Path) -> None:
    text = open_store(store).summary(str(store_session(store))).text()
    assert "send_email [call_1] with" in text
    assert "approved by Alice A. after 42 s" in text
    assert "send_email [call_2] was not run: rejected by bob after 3.5 s: not to the board" in text


def _unsupervised(provider: TracerProvider) -> None:
    with otel_prov.agent_session("mailer", question="Mail the minutes", tracer_provider=provider):
        otel_prov.set_answer("Sent.")


def test_sessions_filter_on_who_approved_and_on_rejections(
    memory_provider: Provider, tmp_path: Path
) -> None:
    provider, exporter = memory_provider
    _supervised_run(provider)
    _unsupervised(provider)
    spans = list(exporter.get_finished_spans())
    runs = {s.context.trace_id for s in spans}
    store = store_runs(
        tmp_path / "store",
        *([otel_prov.record_from_span(s) for s in spans if s.context.trace_id == t] for t in runs),
    )
    reader = open_store(store)
    assert len(reader.sessions().sessions) == 2
    (approved,) = reader.sessions(approved_by="alice").sessions
    assert approved.question == "Mail the report"
    assert reader.sessions(approved_by="bob").sessions == ()  # bob only rejected
    (rejected,) = reader.sessions(rejected=True).sessions
    assert rejected.id == approved.id
    listed = run_cli(
        "sessions", "--store", str(store), "--approved-by", "alice", "--format", "json"
    )
    assert listed.returncode == 0, listed.stderr
    assert [row["question"] for row in json.loads(listed.stdout)] == ["Mail the report"]
    listed = run_cli("sessions", "--store", str(store), "--rejected", "--format", "json")
    assert [row["question"] for row in json.loads(listed.stdout)] == ["Mail the report"]
    assert run_cli("sessions", "--store", str(store), "--approved-by", "carol").returncode == 1


def test_show_marks_the_approved_call_and_the_rejected_one(store: Path) -> None:
    session = store_session(store)
    view = open_store(store).session(session)
    by_decision = {approval.decision: approval for approval in view.approvals}
    (call,) = [call for step in view.iterations for call in step.tool_calls]
    assert by_decision["approved"].allowed == call.id
    assert by_decision["rejected"].allowed is None
    assert by_decision["rejected"].call_id == "call_2"
    shown = run_cli("show", session, "--store", str(store))
    assert shown.returncode == 0, shown.stderr
    assert "send_email [call_1] ok, approved by Alice A. after 42 s" in shown.stdout
    assert "send_email [call_2]: rejected by bob after 3.5 s: not to the board" in shown.stdout
    as_json = json.loads(run_cli("show", session, "--store", str(store), "--format", "json").stdout)
    decisions = [
        a["decision"] for a in (as_json[0] if isinstance(as_json, list) else as_json)["approvals"]
    ]
    assert sorted(decisions) == ["approved", "rejected"]


def test_the_web_page_marks_the_approved_call_and_the_rejected_one(store: Path) -> None:
    page = run_cli("show", store_session(store), "--store", str(store), "--format", "html")
    assert page.returncode == 0, page.stderr
    html = page.stdout
    assert '<span class="badge approved">approved by Alice A. after 42 s</span>' in html
    assert '<span class="badge rejected">REJECTED</span>' in html
    assert "rejected by bob after 3.5 s: not to the board" in html


def test_approvals_come_through_an_otlp_json_import(
    memory_provider: Provider, tmp_path: Path
) -> None:
    """The path ``receive`` shares: spans as the Collector's file exporter writes them."""
    provider, _ = memory_provider
    traces = tmp_path / "traces.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(OtlpJsonFileExporter(traces)))
    _supervised_run(provider)
    store = tmp_path / "store"
    imported = run_cli("import", str(traces), "--store", str(store))
    assert imported.returncode == 0, imported.stderr
    text = open_store(store).summary(store_session(store)).text()
    assert "approved by Alice A. after 42 s" in text
    assert "send_email [call_2] was not run: rejected by bob" in text
    (run,) = open_store(store).sessions(approved_by="alice").sessions
    assert open_store(store).verify(run.id)[0].ok
