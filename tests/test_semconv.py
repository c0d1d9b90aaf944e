"""The semantic conventions: registry YAML, Python constants, ontology, shapes."""

from __future__ import annotations

import importlib

import rdflib
import yaml

from otel_prov import semconv
from otel_prov.prov._vocab import ALL_OPROV_TERMS

OPROV = rdflib.Namespace("https://w3id.org/otel-prov/ns#")
PROV = "http://www.w3.org/ns/prov#"


def _registry() -> dict[str, object]:
    return yaml.safe_load((semconv.REGISTRY_DIR / "otel_prov.yaml").read_text(encoding="utf-8"))


def test_registry_is_weaver_v2_with_development_stability() -> None:
    registry = _registry()
    assert registry["version"] == "2"
    for attribute in registry["attributes"]:  # type: ignore[attr-defined]
        assert {"key", "type", "brief", "stability"} <= attribute.keys()
        assert attribute["stability"] == "development"
    manifest = yaml.safe_load((semconv.REGISTRY_DIR / "registry_manifest.yaml").read_text())
    assert manifest["dependencies"][0]["name"] == "otel"


def test_python_constants_match_the_registry_both_ways() -> None:
    keys = {a["key"] for a in _registry()["attributes"]}  # type: ignore[attr-defined]
    constants = {value for name, value in vars(semconv).items() if name.startswith("OTEL_PROV_")}
    assert constants == keys
    for key in keys:
        assert getattr(semconv, key.upper().replace(".", "_")) == key


def test_official_attributes_we_use_exist_in_the_otel_semconv_package() -> None:
    registry = _registry()
    refs = {
        attribute["ref"]
        for span in registry["spans"]  # type: ignore[attr-defined]
        for attribute in span["attributes"]
        if not attribute["ref"].startswith("otel_prov.")
    }
    constants = {
        value
        for name, value in vars(semconv).items()
        if name.isupper()
        and isinstance(value, str)
        and not name.startswith("OTEL_PROV_")
        and not value.startswith("otel_prov.")  # our own event names
        and value != semconv.PLAN_OPERATION
    }
    official: set[str] = set()
    for module in (
        "gen_ai_attributes",
        "error_attributes",
        "service_attributes",
        "mcp_attributes",
        "user_attributes",
    ):
        package = importlib.import_module(f"opentelemetry.semconv._incubating.attributes.{module}")
        official |= {v for k, v in vars(package).items() if k.isupper() and isinstance(v, str)}
    assert refs - semconv.NOT_YET_UPSTREAM <= official, refs - official
    assert constants - semconv.NOT_YET_UPSTREAM <= official, constants - official
    assert not semconv.NOT_YET_UPSTREAM & official, "now upstream: check their definition"


def _ontology() -> rdflib.Graph:
    return rdflib.Graph().parse(semconv.ONTOLOGY_PATH)


def test_every_term_the_mapper_writes_is_declared_with_label_and_comment() -> None:
    graph = _ontology()
    for term in ALL_OPROV_TERMS:
        subject = OPROV[term]
        assert (subject, rdflib.RDF.type, None) in graph, term
        assert graph.value(subject, rdflib.RDFS.label) is not None, term
        assert graph.value(subject, rdflib.RDFS.comment) is not None, term


def test_classes_and_object_properties_refine_prov_o() -> None:
    graph = _ontology()
    classes = set(graph.subjects(rdflib.RDF.type, rdflib.OWL.Class)) - {
        s for s in graph.subjects(rdflib.RDF.type, rdflib.OWL.Class) if isinstance(s, rdflib.BNode)
    }
    # PruneIntent (a prune's plan) and the reasoning's (Goal, Hypothesis, Decision, Review,
    # SupportingEvidence, ContradictingEvidence, Adoption) the newest.
    assert len(classes) == 32
    for cls in classes:
        parents = [str(p) for p in graph.objects(cls, rdflib.RDFS.subClassOf)]
        assert any(p.startswith(PROV) for p in parents), cls
    for prop in graph.subjects(rdflib.RDF.type, rdflib.OWL.ObjectProperty):
        parents = [str(p) for p in graph.objects(prop, rdflib.RDFS.subPropertyOf)]
        assert any(p.startswith(PROV) for p in parents), prop


def test_datatype_properties_have_a_prov_domain_and_prov_value_only_on_entities() -> None:
    graph = _ontology()
    prov_classes = {
        rdflib.URIRef(PROV + n) for n in ("Activity", "Entity", "Agent", "Bundle", "Influence")
    }
    entity_classes = {rdflib.URIRef(PROV + n) for n in ("Entity", "Bundle")}
    refined = {s for s in graph.subjects(rdflib.RDFS.subClassOf, None)}
    for prop in graph.subjects(rdflib.RDF.type, rdflib.OWL.DatatypeProperty):
        domain = graph.value(prop, rdflib.RDFS.domain)
        assert domain is not None, prop
        members = (
            list(rdflib.collection.Collection(graph, graph.value(domain, rdflib.OWL.unionOf)))
            if isinstance(domain, rdflib.BNode)
            else [domain]
        )
        assert all(m in prov_classes or m in refined for m in members), prop
        if (prop, rdflib.RDFS.subPropertyOf, rdflib.URIRef(PROV + "value")) in graph:
            # prov:value's domain is prov:Entity: on anything else it would make it one.
            assert all(m in entity_classes for m in members), prop


def test_shapes_parse_and_target_our_classes() -> None:
    shapes = rdflib.Graph().parse(semconv.SHAPES_PATH)
    sh = rdflib.Namespace("http://www.w3.org/ns/shacl#")
    targets = set(shapes.objects(None, sh.targetClass))
    assert {OPROV.AgentSession, OPROV.Iteration, OPROV.ToolCall, OPROV.Answer} <= targets
