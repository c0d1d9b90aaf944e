"""PROV validity of what the demo stores: the prov package, SHACL, PROV-CONSTRAINTS."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pyoxigraph
import pyshacl
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st
from prov.model import ProvDocument

import otel_prov
from otel_prov.demo import run_demo_agent
from otel_prov.prov._rdf import PREFIXES, SPARQL_PREFIXES, datetime_from_ns
from otel_prov.read import open_store
from otel_prov.read._verify import constraint_violations
from otel_prov.semconv import SHAPES_PATH
from tests.cli import run_cli
from tests.refund_run import review_refund, run_refund_agent
from tests.retrieval_agent import rag_agent
from tests.session_tree import known_session

PREFIX_LINES = SPARQL_PREFIXES

# PROV-CONSTRAINTS as SPARQL, each query listing violations: the oracle that verify's
# checks (``constraint_violations``) are held to.
CONSTRAINTS = {
    "30 start precedes end": """
        SELECT ?x WHERE { ?x prov:startedAtTime ?s ; prov:endedAtTime ?e . FILTER(?s > ?e) }""",
    "34 generation within its activity": """
        SELECT ?x WHERE {
          ?x prov:wasGeneratedBy ?a ; prov:generatedAtTime ?t . ?a prov:startedAtTime ?s .
          OPTIONAL { ?a prov:endedAtTime ?end }
          FILTER(?t < ?s || (BOUND(?end) && ?t > ?end)) }""",
    "37 generation precedes usage": """
        SELECT ?x WHERE {
          ?x prov:generatedAtTime ?g . ?user prov:used ?x ; prov:startedAtTime ?u .
          FILTER(?g > ?u) }""",
    "55 entity and activity disjoint": """
        SELECT ?x WHERE { ?x a prov:Entity , prov:Activity }""",
}


@pytest.fixture(scope="module")
def demo_turtle(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    store = tmp_path_factory.mktemp("demo") / "store"
    handle = otel_prov.configure(store=store, set_global=False, service_name="validity")
    run_demo_agent(tracer_provider=handle.tracer_provider)
    run_demo_agent(tracer_provider=handle.tracer_provider, conversation_id="second")
    handle.shutdown()
    triples = _triples(store)
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES)
    yield (data or b"").decode()


def _triples(store: Path) -> list[pyoxigraph.Triple]:
    """Every triple of the store, its iterator dropped here: pyoxigraph's iterators must be
    freed on the thread that made them, and one left in a fixture's frame could be collected
    later on a processor's worker thread (an unraisable error in an unrelated test)."""
    quads = pyoxigraph.Store.read_only(str(store)).quads_for_pattern(None, None, None)
    return [pyoxigraph.Triple(q.subject, q.predicate, q.object) for q in quads]


def _graph(turtle: str) -> rdflib.Graph:
    return rdflib.Graph().parse(data=turtle, format="turtle")


def test_prov_package_loads_every_activity_and_entity(demo_turtle: str) -> None:
    graph = _graph(demo_turtle)
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    activities = {str(s) for s in graph.subjects(rdflib.RDF.type, prov.Activity)}
    entities = {str(s) for s in graph.subjects(rdflib.RDF.type, prov.Entity)}
    assert len(activities) == 2 * 12 and len(entities) > 2 * 10
    document = ProvDocument.deserialize(content=demo_turtle, format="rdf", rdf_format="turtle")
    loaded_activities = {
        r.identifier.uri
        for r in document.get_records()
        if r.is_element() and r.get_type().localpart == "Activity"
    }
    loaded_entities = {
        r.identifier.uri
        for r in document.get_records()
        if r.is_element() and r.get_type().localpart == "Entity"
    }
    assert loaded_activities == activities
    assert loaded_entities == entities


def _shacl(graph: rdflib.Graph) -> tuple[bool, str]:
    shapes = rdflib.Graph().parse(SHAPES_PATH)
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes, advanced=True)
    return bool(conforms), str(text)


def test_shacl_shapes_pass_on_the_demo(demo_turtle: str) -> None:
    conforms, report = _shacl(_graph(demo_turtle))
    assert conforms, report


def test_shacl_shapes_catch_an_observation_from_a_failed_call(demo_turtle: str) -> None:
    graph = _graph(demo_turtle)
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    failed = next(graph.subjects(oprov.status, rdflib.Literal("error")))
    fake = rdflib.URIRef(f"{failed}:observation")
    graph.add((fake, rdflib.RDF.type, oprov.Observation))
    graph.add((fake, rdflib.RDF.type, prov.Entity))
    graph.add((fake, prov.wasGeneratedBy, failed))
    graph.add(
        (
            fake,
            prov.generatedAtTime,
            rdflib.Literal("2026-01-01T00:00:00Z", datatype=rdflib.XSD.dateTime),
        )
    )
    conforms, report = _shacl(graph)
    assert not conforms
    assert "must not generate an Observation" in report


def test_shacl_shapes_catch_a_bad_trace_id(demo_turtle: str) -> None:
    graph = _graph(demo_turtle)
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    subject, trace_id = next(iter(graph.subject_objects(oprov.traceId)))
    graph.remove((subject, oprov.traceId, trace_id))
    graph.add((subject, oprov.traceId, rdflib.Literal("XYZ")))
    assert not _shacl(graph)[0]


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_prov_constraints_hold_on_the_demo(demo_turtle: str, name: str) -> None:
    store = pyoxigraph.Store()
    store.load(demo_turtle.encode(), pyoxigraph.RdfFormat.TURTLE)
    violations = list(store.query(PREFIX_LINES + CONSTRAINTS[name]))
    assert violations == [], f"PROV-CONSTRAINT {name} violated by {violations}"


@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_constraint_queries_can_fail(name: str) -> None:
    """Each check finds its violation in a graph built to break it."""
    day1, day2 = '"2026-01-01T00:00:00Z"^^xsd:dateTime', '"2026-01-02T00:00:00Z"^^xsd:dateTime'
    broken = {
        "30 start precedes end": f"<urn:a> prov:startedAtTime {day2} ; prov:endedAtTime {day1} .",
        "34 generation within its activity": f"<urn:e> prov:wasGeneratedBy <urn:a> ;"
        f" prov:generatedAtTime {day1} . <urn:a> prov:startedAtTime {day2} .",
        "37 generation precedes usage": f"<urn:e> prov:generatedAtTime {day2} ."
        f" <urn:a> prov:used <urn:e> ; prov:startedAtTime {day1} .",
        "55 entity and activity disjoint": "<urn:x> a prov:Entity , prov:Activity .",
    }[name]
    store = pyoxigraph.Store()
    turtle = "\n".join(f"@prefix {k}: <{v}> ." for k, v in PREFIXES.items()) + "\n" + broken
    store.load(turtle.encode(), pyoxigraph.RdfFormat.TURTLE)
    assert list(store.query(PREFIX_LINES + CONSTRAINTS[name]))


def test_known_session_also_passes_shacl(tmp_path: Path) -> None:
    record = otel_prov.map_spans(known_session())
    graph = rdflib.Graph().parse(
        data="".join(f"{s} {p} {o} .\n" for s, p, o in record.triples), format="nt"
    )
    conforms, report = _shacl(graph)
    assert conforms, report


def test_sub_sessions_blobs_and_withheld_content_stay_valid_prov(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The shapes this session added: a qualified start, blob pointers, hash-only content."""
    store = tmp_path / "store"
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))
    handle = otel_prov.configure(store=store, set_global=False, service_name="validity")
    provider = handle.tracer_provider
    with (
        otel_prov.agent_session("lead", question="Q?", tracer_provider=provider),
        otel_prov.iteration(1, thought="delegate", action="ask_helper", tracer_provider=provider),
        otel_prov.tool_call("ask_helper", arguments="{}", tracer_provider=provider),
        otel_prov.agent_session("helper", question="sub", tracer_provider=provider) as sub,
        otel_prov.tool_call("fetch", arguments="{}", tracer_provider=provider),
    ):
        otel_prov.set_observation("x" * 100_000)  # to the blob store
        otel_prov.set_answer("done", span=sub)
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    with otel_prov.agent_session("quiet", question="secret", tracer_provider=provider):
        pass
    handle.shutdown()
    graph = _assert_valid_prov(store)
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    assert len(set(graph.subjects(rdflib.RDF.type, prov.Start))) == 1


def test_usage_cost_evaluations_and_plans_stay_valid_prov(tmp_path: Path) -> None:
    prices = tmp_path / "prices.toml"
    prices.write_text('["m"]\ninput = 1\noutput = 2\n', encoding="utf-8")
    handle = otel_prov.configure(store=tmp_path / "store", set_global=False, prices=prices)
    provider = handle.tracer_provider
    with otel_prov.agent_session("a", question="Q?", tracer_provider=provider):
        with otel_prov.model_call("m", tracer_provider=provider):
            otel_prov.set_usage(
                input_tokens=9,
                output_tokens=4,
                cache_read_tokens=3,
                cache_write_tokens=2,
                reasoning_tokens=1,
            )
        with otel_prov.model_call("n", tracer_provider=provider):
            otel_prov.set_usage(input_tokens=1, cost=0.125, currency="EUR")
        otel_prov.record_evaluation("relevance", score=0.5, label="ok", explanation="fine")
        plan = otel_prov.plan(steps=["look", "answer"], tracer_provider=provider)
        with plan.steps[0], otel_prov.tool_call("look", tracer_provider=provider):
            otel_prov.postcondition("found", True, detail="it")
        with otel_prov.iteration(1, step=plan.steps[1], tracer_provider=provider):
            pass
    handle.shutdown()
    (run,) = open_store(tmp_path / "store").sessions().sessions
    annotated = run_cli("annotate", run.id, "--store", str(tmp_path / "store"), "--name", "n")
    assert annotated.returncode == 0, annotated.stderr
    graph = _assert_valid_prov(tmp_path / "store")
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Evaluation))) == 2
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Annotation))) == 1
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    assert len(set(graph.subjects(rdflib.RDF.type, prov.Association))) == 2
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Postcondition))) == 1
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    assert {o.toPython() for o in graph.objects(None, oprov.costSource)} == {"local", "provider"}
    assert len(set(graph.objects(None, oprov.costAmount))) == 2


def _assert_valid_prov(store: Path) -> rdflib.Graph:
    """The store's graph loads whole in the prov package, passes the SHACL shapes and the
    PROV constraint queries; returned for further checks."""
    triples = _triples(store)
    turtle = (
        pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES) or b""
    ).decode()
    graph = _graph(turtle)
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    document = ProvDocument.deserialize(content=turtle, format="rdf", rdf_format="turtle")
    loaded = {r.identifier.uri for r in document.get_records() if r.is_element()}
    expected = {
        str(s) for cls in (prov.Activity, prov.Entity) for s in graph.subjects(rdflib.RDF.type, cls)
    }
    assert expected <= loaded
    conforms, report = _shacl(graph)
    assert conforms, report
    for name in CONSTRAINTS:
        memory = pyoxigraph.Store()
        memory.load(turtle.encode(), pyoxigraph.RdfFormat.TURTLE)
        assert not list(memory.query(PREFIX_LINES + CONSTRAINTS[name])), name
    return graph


@pytest.fixture(scope="module")
def retrieval_turtle(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A session whose tool retrieved documents, as the store holds it."""
    store = tmp_path_factory.mktemp("retrieval") / "store"
    handle = otel_prov.configure(store=store, set_global=False, service_name="validity")
    rag_agent(handle.tracer_provider)
    handle.shutdown()
    data = pyoxigraph.serialize(
        _triples(store), format=pyoxigraph.RdfFormat.TURTLE, prefixes=PREFIXES
    )
    return (data or b"").decode()


def test_retrieved_documents_are_valid_prov(retrieval_turtle: str) -> None:
    graph = _graph(retrieval_turtle)
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    documents = set(graph.subjects(rdflib.RDF.type, oprov.Document))
    assert len(documents) == 3
    sources = {o for d in documents for o in graph.objects(d, prov.hadPrimarySource)}
    assert len(sources) == 3
    document = ProvDocument.deserialize(content=retrieval_turtle, format="rdf", rdf_format="turtle")
    loaded = {r.identifier.uri for r in document.get_records() if r.is_element()}
    assert {str(s) for s in documents | sources} <= loaded
    expected = {
        str(s) for cls in (prov.Activity, prov.Entity) for s in graph.subjects(rdflib.RDF.type, cls)
    }
    assert expected <= loaded
    conforms, report = _shacl(graph)
    assert conforms, report
    memory = pyoxigraph.Store()
    memory.load(retrieval_turtle.encode(), pyoxigraph.RdfFormat.TURTLE)
    for name, query in CONSTRAINTS.items():
        assert not list(memory.query(PREFIX_LINES + query)), name


def test_shacl_shapes_catch_a_document_without_a_rank_or_from_a_failed_retrieval(
    retrieval_turtle: str,
) -> None:
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    graph = _graph(retrieval_turtle)
    chunk = next(graph.subjects(rdflib.RDF.type, oprov.Document))
    graph.remove((chunk, oprov.rank, None))
    assert not _shacl(graph)[0]
    graph = _graph(retrieval_turtle)
    retrieval = next(graph.subjects(rdflib.RDF.type, oprov.Retrieval))
    graph.set((retrieval, oprov.status, rdflib.Literal("error")))
    conforms, report = _shacl(graph)
    assert not conforms
    assert "must not generate a Document" in report


_NODES = [f"<urn:n{i}>" for i in range(4)]
_TIMES = [datetime_from_ns(ns) for ns in (0, 500_000_000, 1_000_000_000, 1_000_000_000, 2**40)]
_TRIPLES = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(_NODES),
            st.sampled_from(["prov:startedAtTime", "prov:endedAtTime", "prov:generatedAtTime"]),
            st.sampled_from(_TIMES),
        ),
        st.tuples(
            st.sampled_from(_NODES),
            st.sampled_from(["prov:wasGeneratedBy", "prov:used"]),
            st.sampled_from(_NODES),
        ),
        st.tuples(
            st.sampled_from(_NODES),
            st.just("rdf:type"),
            st.sampled_from(["prov:Entity", "prov:Activity"]),
        ),
    ),
    max_size=14,
)


@settings(max_examples=300, deadline=None)
@given(triples=_TRIPLES)
def test_verifys_constraint_checks_agree_with_the_sparql_queries(
    triples: list[tuple[str, str, str]],
) -> None:
    expanded = [
        tuple(
            f"<{PREFIXES[term.split(':')[0]]}{term.split(':')[1]}>"
            if term[:5] in ("prov:", "rdf:t")
            else term
            for term in triple
        )
        for triple in triples
    ]
    store = pyoxigraph.Store()
    store.load(
        "".join(f"{s} {p} {o} .\n" for s, p, o in expanded).encode(), pyoxigraph.RdfFormat.N_TRIPLES
    )
    expected = []
    for name, query in CONSTRAINTS.items():
        found = sorted({row["x"].value for row in store.query(PREFIX_LINES + query)})
        if found:
            expected.append(f"PROV constraint {name} violated by {', '.join(found[:3])}")
    assert constraint_violations(expanded) == expected


@pytest.fixture(scope="module")
def refund_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The refund example's run (goals, hypotheses, evidence, a decision) and its review."""
    where = tmp_path_factory.mktemp("refund")
    run_refund_agent(where / "store", cwd=where)
    review_refund(where / "store")
    return where / "store"


def test_reasoning_and_its_review_are_valid_prov(refund_store: Path) -> None:
    """Loaded whole by the prov package (the qualified derivations and influences among its
    relations), SHACL-valid, PROV constraints holding."""
    graph = _assert_valid_prov(refund_store)
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Hypothesis))) == 3
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Decision))) == 2  # and its revision
    assert len(set(graph.subjects(rdflib.RDF.type, oprov.Review))) == 1
    assert set(graph.subjects(rdflib.RDF.type, oprov.Goal)) <= set(
        graph.subjects(rdflib.RDF.type, prov.Plan)
    )
    turtle = graph.serialize(format="turtle")
    document = ProvDocument.deserialize(content=turtle, format="rdf", rdf_format="turtle")
    kinds = {type(r).__name__ for r in document.get_records() if r.is_relation()}
    assert {"ProvDerivation", "ProvInfluence", "ProvAttribution"} <= kinds


def _evidence_node(graph: rdflib.Graph, kind: str) -> tuple[rdflib.term.Node, rdflib.term.Node]:
    """(claim, qualifying node) of the first evidence qualified by ``kind``."""
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    claim, node = next(iter(graph.subject_objects(prov[kind])))
    return claim, node


def test_shacl_shapes_catch_evidence_derived_from_what_came_later(refund_store: Path) -> None:
    """A derivation from an entity generated after the claim (PROV's ordering), and a
    qualified derivation without the plain one beside it, are both caught."""
    prov = rdflib.Namespace("http://www.w3.org/ns/prov#")
    graph = _assert_valid_prov(refund_store)
    claim, node = _evidence_node(graph, "qualifiedInfluence")  # evidence that came later
    graph.remove((claim, prov.qualifiedInfluence, node))
    graph.add((claim, prov.qualifiedDerivation, node))
    graph.add((node, rdflib.RDF.type, prov.Derivation))
    conforms, report = _shacl(graph)
    assert not conforms and "derived only from what was generated before it" in report
    assert "must keep the plain relation beside it" in report


def test_shacl_shapes_catch_a_weight_out_of_range(refund_store: Path) -> None:
    oprov = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
    graph = _assert_valid_prov(refund_store)
    node, weight = next(iter(graph.subject_objects(oprov.weight)))
    graph.remove((node, oprov.weight, weight))
    graph.add((node, oprov.weight, rdflib.Literal(1.5)))
    assert not _shacl(graph)[0]
