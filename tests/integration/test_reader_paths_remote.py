"""Runs whose reader output comes through an ``oprov:partOf*`` path read alike from the
embedded store and from Oxigraph's and Virtuoso's endpoints: plans and postconditions
made in sub-sessions, evaluations and their evaluators in them, a why-graph answered by a
sub-session, the facts ``sessions`` lists.

Virtuoso's answers hang on what the whole server holds: joined with other patterns,
``partOf*`` lost rows with one run stored, or only once a few were.  So each run sits in
its own graph of one server per module, stored when a test first reads it, in the order
the failures were seen.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from otel_prov import ProvRecord
from otel_prov.exporters import OxigraphStoreExporter, SparqlUpdateExporter
from otel_prov.prov._mapper import map_spans
from otel_prov.read import ProvenanceReader, open_endpoint, open_store
from tests.builders import records_of
from tests.integration.conftest import SERVERS
from tests.planned_session import planned_session
from tests.test_show_nested import deep_run, flat_run, handoff_run

pytestmark = pytest.mark.integration


def delegated_plan_run(provider: TracerProvider) -> None:
    """A lead whose plan delegates to a booker, whose own plan's steps check
    postconditions and whose session is judged twice."""
    p = provider
    with otel_prov.agent_session(
        "lead", question="Book it", conversation_id="delegated-plan", tracer_provider=p
    ) as lead:
        top = otel_prov.plan(steps=["delegate", "report"], tracer_provider=p)
        with otel_prov.tool_call("ask_booker", step=top.steps[0], tracer_provider=p):
            with otel_prov.agent_session("booker", question="Book AF123", tracer_provider=p) as b:
                plan = otel_prov.plan(steps=["search", "book", "pay", "mail"], tracer_provider=p)
                with plan.steps[0], otel_prov.tool_call("search", tracer_provider=p):
                    otel_prov.set_observation("AF123")
                with otel_prov.tool_call("book", step=plan.steps[1], tracer_provider=p):
                    otel_prov.postcondition("seat held", True, detail="12A")
                    otel_prov.postcondition("price kept", True)
                otel_prov.postcondition("booked", True)
                otel_prov.postcondition("paid", False)
                otel_prov.record_evaluation("grounded", 0.5, span=b)
                otel_prov.record_evaluation("polite", 0.9, span=b)
                otel_prov.set_answer("Booked AF123", span=b)
            otel_prov.set_observation("Booked AF123")
        otel_prov.postcondition("done", True)
        otel_prov.record_evaluation("helpful", 1.0, span=lead)


def judged_handoff_run(provider: TracerProvider) -> None:
    """Triage hands off to two specialists; the first's tool call and session are judged
    twice each, the handoff once; the second answers last."""
    p = provider
    with (
        otel_prov.agent_session(
            "triage", question="Where is it?", conversation_id="judged", tracer_provider=p
        ),
        otel_prov.tool_call("ask", tracer_provider=p) as call,
    ):
        with otel_prov.agent_session("billing", question="Where?", tracer_provider=p) as b:
            with otel_prov.tool_call("look", tracer_provider=p):
                otel_prov.record_evaluation("relevant", 0.1)
                otel_prov.record_evaluation("fast", 0.2)
            otel_prov.record_evaluation("grounded", 0.3, span=b)
            otel_prov.record_evaluation("polite", 0.4, span=b)
            otel_prov.set_answer("Shipped.", span=b)
        with otel_prov.agent_session("shipping", question="Where?", tracer_provider=p) as s:
            otel_prov.set_answer("In Lyon.", span=s)
        otel_prov.record_evaluation("routed", 0.5, span=call)


RUNS: dict[str, Callable[[], list[ProvRecord]]] = {
    "planned": lambda: [map_spans(planned_session())],
    "delegated-plan": lambda: records_of(delegated_plan_run),
    "judged": lambda: records_of(judged_handoff_run),
    "delegated": lambda: records_of(handoff_run),
    "deep": lambda: records_of(deep_run),
    "deep-twice": lambda: records_of(deep_run, deep_run),
    "delegated-twice": lambda: records_of(handoff_run, handoff_run),
    "flat": lambda: records_of(flat_run),
    "judged-twice": lambda: records_of(judged_handoff_run, judged_handoff_run),
}
"""Each run's conversation id -> its records."""


Readers = Callable[[str], tuple[ProvenanceReader, ProvenanceReader]]
"""A run's name -> (embedded store, endpoint) readers of it."""


@pytest.fixture(scope="module", params=sorted(SERVERS))
def readers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Readers]:
    """One server of each kind for the module.  Each run is stored when a test first
    asks for it, in its own graph there and in an embedded store of its own: the server
    grows as the tests run, and each query meets it as small as it was when Virtuoso
    failed."""
    tmp = tmp_path_factory.mktemp(request.param)
    server = SERVERS[request.param](tmp)
    stored: dict[str, tuple[ProvenanceReader, ProvenanceReader]] = {}

    def read(name: str) -> tuple[ProvenanceReader, ProvenanceReader]:
        if name not in stored:
            records, graph = RUNS[name](), f"urn:otel-prov:test:{name}"
            store = OxigraphStoreExporter(tmp / name, graph=graph)
            store.export(records)
            store.shutdown()
            remote = SparqlUpdateExporter(
                server.update_endpoint, graph=graph, spool_dir=tmp / f"spool-{name}"
            )
            remote.export(records)
            assert remote.force_flush(30_000)
            remote.shutdown()
            local = open_store(tmp / name, graph=graph)
            stored[name] = (local, open_endpoint(server.query_endpoint, graph=graph))
        return stored[name]

    try:
        yield read
    finally:
        server.stop()


def _sessions(reader: ProvenanceReader, name: str) -> list[str]:
    """Every session of the runs ``name`` names (their conversation id, ``-twice`` off),
    sub-sessions included."""
    runs = reader.find(name.removesuffix("-twice"))
    assert runs
    return [*runs, *(sub.id for run in runs for sub in reader.session(run).nested_sessions())]


@pytest.mark.parametrize("name", ["planned", "delegated-plan"])
def test_plans_and_postconditions_read_alike(readers: Readers, name: str) -> None:
    """Every plan step and postcondition of the run and of its sub-sessions (Virtuoso
    once gave 1 of the 6 steps of ``planned``, and none of the booker's)."""
    local, remote = readers(name)
    for session in _sessions(local, name):
        view = local.session(session)
        assert (remote.session(session).plans, remote.session(session).postconditions) == (
            view.plans,
            view.postconditions,
        )
    (run,) = local.find(name)
    assert sum(len(plan.steps) for plan in local.session(run).plans) == 6


_EVALUATORS_LOST = (
    "Virtuoso 7.2 still loses some evaluators of a run's members and evaluations, in one "
    "full-suite run of two (which rows depends on what the server held and ran before): "
    "an open defect, not yet read alike"
)


def _unless_virtuoso_loses_evaluators(request: pytest.FixtureRequest) -> None:
    if request.node.callspec.params["readers"] == "virtuoso":
        pytest.skip(_EVALUATORS_LOST)


@pytest.mark.parametrize("name", ["delegated-plan", "judged"])
def test_a_runs_members_read_alike(
    readers: Readers, name: str, request: pytest.FixtureRequest
) -> None:
    """The subjects of ``show --format turtle`` (the run's members, with its agents and
    evaluators), of the run and each sub-session (Virtuoso once lost the evaluators of
    what a sub-session did)."""
    _unless_virtuoso_loses_evaluators(request)
    local, remote = readers(name)
    for session in _sessions(local, name):
        subjects = {str(triple.subject) for triple in local.triples(session)}
        assert {str(triple.subject) for triple in remote.triples(session)} == subjects
    (run,) = local.find(name)
    evaluators = {s for s in map(str, (t.subject for t in local.triples(run))) if "evaluator" in s}
    assert len(evaluators) >= 3


@pytest.mark.parametrize(
    "name", ["judged", "delegated", "deep", "deep-twice", "delegated-twice", "flat", "judged-twice"]
)
def test_why_of_each_session_reads_alike(readers: Readers, name: str) -> None:
    """The why-graph of each session of a run (``answers_query``: the answers given in
    it, sub-sessions included, and in the conversation's earlier turns)."""
    local, remote = readers(name)
    for ident in [name.removesuffix("-twice"), *_sessions(local, name)]:
        graph = local.why(ident)
        assert graph.node(graph.root).type == "Answer"
        assert remote.why(ident) == graph, ident


@pytest.mark.parametrize("name", ["delegated-plan", "judged"])
def test_session_facts_read_alike(
    readers: Readers, name: str, request: pytest.FixtureRequest
) -> None:
    """The evaluations ``show`` and ``sessions`` give of the run and of each sub-session,
    theirs included (``evaluated_query``)."""
    _unless_virtuoso_loses_evaluators(request)
    local, remote = readers(name)
    listed = [(run.id, run.evaluations, run.usage) for run in local.sessions().sessions]
    assert [(run.id, run.evaluations, run.usage) for run in remote.sessions().sessions] == listed
    for session in _sessions(local, name):
        assert remote.session(session).evaluations == local.session(session).evaluations
    (run,) = local.find(name)
    assert local.session(run).evaluations
