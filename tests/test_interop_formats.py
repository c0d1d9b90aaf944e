"""``show --format jsonld|prov-json|provn``: the same triples come back, whatever the text.

JSON-LD is read back with pyoxigraph's parser; PROV-JSON with the ``prov`` package's
reader, written as RDF by its serializer and compared with the session's graph as RDF
(isomorphic, since ``prov`` qualifies relations with blank nodes).  ``prov`` has no PROV-N
reader, so for PROV-N the checks are what can be checked honestly: the same ``prov``
document round-trips through PROV-JSON, the PROV-N text names every activity and
entity, and a value PROV-N cannot carry is refused rather than written raw.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pyoxigraph
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st
from prov.model import ProvDocument
from rdflib.compare import isomorphic

import otel_prov
from otel_prov import map_spans
from otel_prov.cli._exit import UsageError
from otel_prov.cli._render_rdf import prov_document, render_graphs, unwritable_in_provn
from otel_prov.prov._rdf import to_ntriples
from tests.builders import make_span
from tests.cli import run_cli

PROV = "http://www.w3.org/ns/prov#"
RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"


def session_triples(text: str, name: str = "agent") -> list[pyoxigraph.Triple]:
    """A mapped session with ``text`` in every content value and ``name`` in the IRIs."""
    spans = [
        make_span(
            0x20,
            None,
            name=f"invoke_agent {name}",
            end_ms=9,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name=name,
            otel_prov__question=text,
            otel_prov__answer=text,
        ),
        make_span(
            0x21,
            0x20,
            name="iteration 1",
            start_ms=1,
            end_ms=8,
            otel_prov__iteration__number=1,
            otel_prov__thought=text,
            otel_prov__action=name,
        ),
        make_span(
            0x22,
            0x21,
            name=f"execute_tool {name}",
            start_ms=2,
            end_ms=7,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name=name,
            otel_prov__arguments=json.dumps({"text": text}),
            otel_prov__observation=text,
        ),
    ]
    record = map_spans(spans)
    assert not record.problems
    return list(pyoxigraph.parse(to_ntriples(record.triples), pyoxigraph.RdfFormat.N_TRIPLES))


def as_rdflib(triples: list[pyoxigraph.Triple]) -> rdflib.Graph:
    data = pyoxigraph.serialize(triples, format=pyoxigraph.RdfFormat.N_TRIPLES) or b""
    return rdflib.Graph().parse(data=data.decode(), format="nt")


def prov_json_back(text: str) -> rdflib.Graph:
    """PROV-JSON read by ``prov`` and written by its RDF serializer, as a graph."""
    document = ProvDocument.deserialize(content=text, format="json")
    return rdflib.Graph().parse(data=document.serialize(format="rdf", rdf_format="ttl"))


def named_in_provn(text: str) -> set[str]:
    """The IRIs of the ``activity(...)`` and ``entity(...)`` records of a PROV-N document."""
    prefixes = dict(re.findall(r"^\s*prefix (\S+) <([^>]*)>$", text, re.M))
    names = set()
    for prefix, local in re.findall(
        r"^\s*(?:activity|entity)\(([^:\s]+):((?:\\.|[^,)\s])*)", text, re.M
    ):
        names.add(prefixes[prefix] + re.sub(r"\\(.)", r"\1", local))
    return names


def typed(triples: list[pyoxigraph.Triple], kind: str) -> set[str]:
    return {
        t.subject.value
        for t in triples
        if t.predicate.value == RDF_TYPE and t.object.value == PROV + kind
    }


# Every code point a pyoxigraph string can hold: all but the surrogates.
hostile = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
names = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(text=hostile, name=names)
def test_jsonld_gives_back_the_same_triples(text: str, name: str) -> None:
    triples = session_triples(text, name)
    back = pyoxigraph.parse(render_graphs([triples], "jsonld"), pyoxigraph.RdfFormat.JSON_LD)
    assert set(back) == set(triples)


@settings(max_examples=60, deadline=None)
@given(text=hostile, name=names)
def test_prov_json_gives_back_the_same_graph(text: str, name: str) -> None:
    triples = session_triples(text, name)
    assert isomorphic(prov_json_back(render_graphs([triples], "prov-json")), as_rdflib(triples))


@settings(max_examples=60, deadline=None)
@given(text=hostile, name=names)
def test_provn_names_every_activity_and_entity_or_refuses_the_value(text: str, name: str) -> None:
    triples = session_triples(text, name)
    problem = unwritable_in_provn(triples)
    if re.search("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]", text + name):
        assert problem is not None and "U+" in problem
        with pytest.raises(UsageError, match="PROV-N cannot carry the value of <"):
            render_graphs([triples], "provn")
        return
    assert problem is None
    provn = render_graphs([triples], "provn")
    assert named_in_provn(provn) == typed(triples, "Activity") | typed(triples, "Entity")
    # The document PROV-N is written from is the one PROV-JSON carries in full.
    document = prov_document(triples)
    assert isomorphic(prov_json_back(document.serialize(format="json")), as_rdflib(triples))


def test_a_lone_surrogate_never_reaches_a_graph_format() -> None:
    """Stores hand out pyoxigraph terms, and pyoxigraph refuses a lone surrogate."""
    with pytest.raises(ValueError):
        pyoxigraph.Literal("\ud83d")


def test_a_missing_prov_package_is_named_with_its_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "prov.model", None)
    with pytest.raises(UsageError, match=r"pip install 'otel-prov\[prov\]'"):
        render_graphs([session_triples("x")], "prov-json")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A session whose thought holds an ANSI escape, and a plain one."""
    path = tmp_path_factory.mktemp("interop") / "store"
    handle = otel_prov.configure(store=path, set_global=False, otlp=False)
    p = handle.tracer_provider
    for conversation, thought in (("escaped", "\x1b[31mred\x1b[0m"), ("plain", "Easy.")):
        with otel_prov.agent_session(
            "solo", question="2+2?", conversation_id=conversation, tracer_provider=p
        ):
            with otel_prov.iteration(1, thought=thought, action="final_answer", tracer_provider=p):
                pass
            otel_prov.set_answer("4")
        handle.force_flush()
    handle.shutdown()
    return path


@pytest.mark.parametrize("fmt", ["jsonld", "prov-json", "provn"])
def test_show_writes_each_format_of_the_stored_triples(store: Path, fmt: str) -> None:
    turtle = run_cli("show", "plain", "--store", str(store), "--format", "turtle")
    triples = list(pyoxigraph.parse(turtle.stdout, pyoxigraph.RdfFormat.TURTLE))
    result = run_cli("show", "plain", "--store", str(store), "--format", fmt)
    assert result.returncode == 0, result.stderr
    if fmt == "jsonld":
        assert set(pyoxigraph.parse(result.stdout, pyoxigraph.RdfFormat.JSON_LD)) == set(triples)
        assert json.loads(result.stdout)[0]["@id"].startswith("urn:otel-prov:")
    elif fmt == "prov-json":
        assert isomorphic(prov_json_back(result.stdout), as_rdflib(triples))
    else:
        assert result.stdout.startswith("document\n") and result.stdout.endswith("endDocument\n")
        assert named_in_provn(result.stdout) == typed(triples, "Activity") | typed(
            triples, "Entity"
        )


def test_provn_refuses_a_control_character_and_writes_nothing(store: Path) -> None:
    result = run_cli("show", "escaped", "--store", str(store), "--format", "provn")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("otel-prov: PROV-N cannot carry the value of <")
    assert ":thought>: it holds U+001B at character 0" in result.stderr
    carried = run_cli("show", "escaped", "--store", str(store), "--format", "prov-json")
    assert carried.returncode == 0 and "\\u001b[31mred" in carried.stdout


def test_construct_as_json_is_json_ld_and_as_csv_refused(store: Path) -> None:
    construct = "CONSTRUCT { ?s <urn:p> ?o } WHERE { ?s <http://www.w3.org/ns/prov#value> ?o }"
    result = run_cli("query", construct, "--store", str(store), "--format", "json")
    assert result.returncode == 0, result.stderr
    back = set(pyoxigraph.parse(result.stdout, pyoxigraph.RdfFormat.JSON_LD))
    table = run_cli("query", construct, "--store", str(store))
    assert back == set(pyoxigraph.parse(table.stdout, pyoxigraph.RdfFormat.TURTLE)) and back
    refused = run_cli("query", construct, "--store", str(store), "--format", "csv")
    assert refused.returncode == 2 and refused.stdout == ""
    assert "graph, not rows" in refused.stderr
