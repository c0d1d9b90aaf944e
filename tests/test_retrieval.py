"""Retrieval provenance: the manual API, OpenInference and GenAI retrieval spans, into PROV-O.

A retrieval is an ``oprov:Retrieval`` that used its Query and generated one
``oprov:Document`` per document returned (id, rank, score, hash, size, preview, primary
source); what followed it (the tool call's observation, the next thought, the answer)
derives from those documents.
"""

from __future__ import annotations

import hashlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov.capture import _content
from otel_prov.processing._blobs import BlobStore, externalize, read_blob
from otel_prov.prov._rdf import SPARQL_PREFIXES, Triple, double, parse_literal
from otel_prov.prov._vocab import RDF_TYPE, RDFS_LABEL, O, P
from otel_prov.read import open_store
from tests.builders import CountingIds, make_span
from tests.retrieval_agent import HOURS, PRICES, rag_agent


def _sha256(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def _spans(run: Any) -> list[otel_prov.SpanRecord]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=CountingIds())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run(provider)
    provider.shutdown()
    return [otel_prov.record_from_span(span) for span in exporter.get_finished_spans()]


def _objects(triples: list[Triple], subject: str, predicate: str) -> list[str]:
    return sorted(o for s, p, o in triples if s == subject and p == predicate)


def _subjects(triples: list[Triple], cls: str) -> list[str]:
    return sorted(s for s, p, o in triples if p == RDF_TYPE and o == cls)


def test_manual_retrieval_maps_to_a_retrieval_with_its_query_and_documents() -> None:
    record = otel_prov.map_spans(_spans(rag_agent))
    triples = list(record.triples)
    assert record.problems == ()
    [retrieval] = _subjects(triples, O.Retrieval)
    assert _objects(triples, retrieval, O.dataSourceId) == ['"museum-faq"']
    [query] = _objects(triples, retrieval, P.used)
    assert _objects(triples, query, RDF_TYPE) == sorted([O.Query, P.Entity])
    assert _objects(triples, query, P.value) == ['"louvre hours"']

    documents = _subjects(triples, O.Document)
    assert len(documents) == 3
    by_rank = {int(parse_literal(_objects(triples, d, O.rank)[0])): d for d in documents}
    first, second, third = by_rank[1], by_rank[2], by_rank[3]
    for document in documents:
        assert _objects(triples, document, P.wasGeneratedBy) == [retrieval]
        assert P.Entity in _objects(triples, document, RDF_TYPE)
    assert _objects(triples, first, O.documentId) == ['"faq#3"']
    assert _objects(triples, first, P.value) == [f'"{HOURS}"']
    assert _objects(triples, first, O.contentHash) == [f'"{_sha256(HOURS)}"']
    assert parse_literal(_objects(triples, first, O.byteSize)[0]) == str(len(HOURS))
    [score] = _objects(triples, first, O.retrievalScore)
    assert score.endswith("#double>") and float(parse_literal(score)) == 0.91
    assert json.loads(parse_literal(_objects(triples, first, O.documentMetadata)[0])) == {"page": 3}
    # Primary sources: given, from the metadata's url, and minted from a plain name.
    assert _objects(triples, first, P.hadPrimarySource) == [
        "<https://www.louvre.fr/en/visit/hours>"
    ]
    assert _objects(triples, second, P.hadPrimarySource) == ["<https://www.louvre.fr/en/tickets>"]
    [minted] = _objects(triples, third, P.hadPrimarySource)
    assert minted == "<urn:otel-prov:source:guide%20book.pdf>"
    assert _objects(triples, minted, RDFS_LABEL) == ['"guide book.pdf"']
    assert _objects(triples, minted, RDF_TYPE) == [P.Entity]
    assert _objects(triples, third, O.documentId) == ['"7"']
    assert _objects(triples, third, O.retrievalScore) == []

    # The observation of the tool call it ran in rests on every document.
    [observation] = _subjects(triples, O.Observation)
    assert set(documents) <= set(_objects(triples, observation, P.wasDerivedFrom))
    [answer] = _subjects(triples, O.Answer)
    assert observation in _objects(triples, answer, P.wasDerivedFrom)


def test_a_failed_retrieval_generates_no_documents() -> None:
    def run(tp: TracerProvider) -> None:
        with otel_prov.agent_session("guide", tracer_provider=tp):
            with (
                pytest.raises(TimeoutError),
                otel_prov.retrieval("q", tracer_provider=tp) as found,
            ):
                found.add_document("a", content="partial")
                raise TimeoutError("index down")
            otel_prov.set_answer("sorry")

    triples = list(otel_prov.map_spans(_spans(run)).triples)
    [retrieval] = _subjects(triples, O.Retrieval)
    assert _objects(triples, retrieval, O.status) == ['"error"']
    assert _subjects(triples, O.Document) == []
    assert len(_objects(triples, retrieval, P.used)) == 1  # its query


def test_bad_scores_and_metadata_are_refused_with_the_problem_named() -> None:
    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval("q", tracer_provider=tp) as found:
            with pytest.raises(TypeError, match="score must be a number, not 'high'"):
                found.add_document("a", score="high")  # type: ignore[arg-type]
            with pytest.raises(TypeError, match="metadata must be a mapping"):
                found.add_document("a", metadata=["not", "a", "mapping"])  # type: ignore[arg-type]
            found.add_document("b", score=1)
        with pytest.raises(RuntimeError, match="has ended: add its documents inside"):
            found.add_document("late")

    [span] = _spans(run)
    assert span.attributes["otel_prov.retrieval.document.id.0"] == "b"
    assert "otel_prov.retrieval.document.id.1" not in span.attributes


def test_retrieve_then_generate_derives_the_next_thought_and_the_answer_from_the_chunks() -> None:
    """OpenInference: an agent run with a RETRIEVER and then an LLM span, no step spans."""
    documents = {
        "retrieval.documents.0.document.id": "doc-1",
        "retrieval.documents.0.document.content": HOURS,
        "retrieval.documents.0.document.score": 0.8,
        "retrieval.documents.0.document.metadata": json.dumps(
            {"source": "https://www.louvre.fr/en/visit/hours", "page": 1}
        ),
        "retrieval.documents.1.document.id": "doc-2",
        "retrieval.documents.1.document.content": PRICES,
        "retrieval.documents.1.document.score": "0.25",  # a string: converted
        "retrieval.documents.1.document.metadata": "not json",
    }
    spans = [
        make_span(
            1,
            name="RetrievalQA",
            end_ms=10,
            openinference__span__kind="AGENT",
            input__value="When is the Louvre open?",
            output__value="9 to 18.",
        ),
        make_span(
            2,
            1,
            name="retriever",
            start_ms=1,
            end_ms=2,
            openinference__span__kind="RETRIEVER",
            input__value="louvre hours",
            **{key.replace(".", "__"): value for key, value in documents.items()},
        ),
        make_span(
            3,
            1,
            name="ChatOpenAI",
            start_ms=3,
            end_ms=9,
            openinference__span__kind="LLM",
            llm__model_name="gpt-4o",
            **{"llm__output_messages__0__message__content": "It opens at 9."},
        ),
    ]
    record = otel_prov.map_spans(spans)
    triples = list(record.triples)
    [retrieval] = _subjects(triples, O.Retrieval)
    [query] = _objects(triples, retrieval, P.used)
    assert _objects(triples, query, P.value) == ['"louvre hours"']
    chunks = _subjects(triples, O.Document)
    assert len(chunks) == 2
    first = next(c for c in chunks if _objects(triples, c, O.documentId) == ['"doc-1"'])
    second = next(c for c in chunks if c != first)
    assert _objects(triples, first, P.hadPrimarySource) == [
        "<https://www.louvre.fr/en/visit/hours>"
    ]
    assert float(parse_literal(_objects(triples, second, O.retrievalScore)[0])) == 0.25
    assert _objects(triples, second, O.documentMetadata) == ['"not json"']
    assert any("metadata is not a JSON object" in p for p in record.problems)
    [thought] = _subjects(triples, O.Thought)
    [answer] = _subjects(triples, O.Answer)
    for chunk in chunks:
        assert chunk in _objects(triples, thought, P.wasDerivedFrom)
        assert chunk in _objects(triples, answer, P.wasDerivedFrom)


def test_genai_retrieval_span_with_its_document_list() -> None:
    listed = [
        {"id": "a", "score": 0.9, "content": "alpha", "metadata": {"url": "https://x.example/a"}},
        {"id": "b", "score": 0.1},
        "not an object",
    ]
    spans = [
        make_span(
            1,
            name="invoke_agent helper",
            end_ms=10,
            gen_ai__operation__name="invoke_agent",
            otel_prov__answer="alpha",
        ),
        make_span(
            2,
            1,
            name="retrieval kb",
            start_ms=1,
            end_ms=2,
            gen_ai__operation__name="retrieval",
            gen_ai__data_source__id="kb",
            gen_ai__retrieval__query__text="first letter",
            gen_ai__retrieval__documents=json.dumps(listed),
        ),
    ]
    triples = list(otel_prov.map_spans(spans).triples)
    [retrieval] = _subjects(triples, O.Retrieval)
    assert _objects(triples, retrieval, O.dataSourceId) == ['"kb"']
    chunks = _subjects(triples, O.Document)
    assert len(chunks) == 2
    assert sorted(o for c in chunks for o in _objects(triples, c, O.documentId)) == ['"a"', '"b"']
    assert ['"alpha"'] in [_objects(triples, c, P.value) for c in chunks]
    assert ["<https://x.example/a>"] in [_objects(triples, c, P.hadPrimarySource) for c in chunks]


def test_an_iri_in_our_own_namespace_is_not_taken_as_a_source() -> None:
    """Else a document's "source" could make one of the session's activities an entity."""

    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval("q", tracer_provider=tp) as found:
            found.add_document("a", source=f"urn:otel-prov:{1:032x}:{1:016x}")

    triples = list(otel_prov.map_spans(_spans(run)).triples)
    [document] = _subjects(triples, O.Document)
    [source] = _objects(triples, document, P.hadPrimarySource)
    assert source.startswith("<urn:otel-prov:source:")


_HOSTILE = st.one_of(
    st.text(),
    st.sampled_from(["\ud800", "a\u2028b", '"', ">", "<x>", "\\", "a b", "\x00", "%zz", "é"]),
    st.text(alphabet=st.sampled_from('"<>\\\u2028\ud83d\n{} '), min_size=1),
    st.just("x" * 70_000),
)
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | _HOSTILE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_HOSTILE, inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    identifier=_HOSTILE,
    content=_HOSTILE,
    source=_HOSTILE,
    metadata=st.dictionaries(_HOSTILE, _JSON_VALUES, max_size=3),
)
def test_hostile_documents_make_valid_rdf_and_keep_their_values(
    identifier: str, content: str, source: str, metadata: dict[str, Any]
) -> None:
    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval(content, tracer_provider=tp) as found:
            found.add_document(
                identifier, content=content, score=0.5, source=source or None, metadata=metadata
            )

    record = otel_prov.map_spans(_spans(run))
    text = "".join(f"{s} {p} {o} .\n" for s, p, o in record.triples)
    store = pyoxigraph.Store()
    store.load(text.encode(), pyoxigraph.RdfFormat.N_TRIPLES)  # raises on an invalid term
    triples = list(record.triples)
    [document] = _subjects(triples, O.Document)
    cleaned = identifier.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    [stored_id] = _objects(triples, document, O.documentId)
    assert len(parse_literal(stored_id)) == len(cleaned)
    [size] = _objects(triples, document, O.byteSize)
    assert int(parse_literal(size)) == len(
        parse_literal(_objects(triples, document, P.value)[0]).encode()
    )
    [stored] = _objects(triples, document, O.documentMetadata)
    assert isinstance(json.loads(parse_literal(stored)), dict)
    sources = _objects(triples, document, P.hadPrimarySource)
    assert len(sources) == (1 if source else 0)
    for primary in sources:
        assert _objects(triples, primary, RDF_TYPE) == [P.Entity]
    query = f"""{SPARQL_PREFIXES}ASK {{ ?d a oprov:Document ; prov:wasGeneratedBy ?r .
        ?r a oprov:Retrieval ; prov:used ?q . ?q a oprov:Query }}"""
    assert store.query(query)


def test_the_store_holds_the_retrieval(tmp_path: Path) -> None:
    store = tmp_path / "store"
    handle = otel_prov.configure(store=store, set_global=False, service_name="guide")
    rag_agent(handle.tracer_provider)
    handle.shutdown()
    query = f"""{SPARQL_PREFIXES}
    SELECT ?id ?score ?source WHERE {{
      ?answer a oprov:Answer ; prov:wasDerivedFrom+ ?chunk .
      ?chunk a oprov:Document ; oprov:documentId ?id ; oprov:rank ?rank ;
             prov:wasGeneratedBy [ a oprov:Retrieval ; oprov:dataSourceId "museum-faq" ] .
      OPTIONAL {{ ?chunk oprov:retrievalScore ?score }}
      OPTIONAL {{ ?chunk prov:hadPrimarySource ?source }}
    }} ORDER BY ?rank"""
    rows = [
        tuple(None if term is None else term.value for term in row)
        for row in pyoxigraph.Store.read_only(str(store)).query(
            query, use_default_graph_as_union=True
        )
    ]
    reader = open_store(store)
    [run] = reader.sessions().sessions
    assert all(check.ok for check in reader.verify(run.id)), reader.verify(run.id)
    assert rows == [
        ("faq#3", "0.91", "https://www.louvre.fr/en/visit/hours"),
        ("faq#7", "0.42", "https://www.louvre.fr/en/tickets"),
        ("7", None, "urn:otel-prov:source:guide%20book.pdf"),
    ]


def test_capture_off_keeps_hashes_and_sizes_of_the_documents() -> None:
    _content.set_override(False)
    triples = list(otel_prov.map_spans(_spans(rag_agent)).triples)
    documents = _subjects(triples, O.Document)
    assert len(documents) == 3
    assert not any(p == P.value for s, p, o in triples if s in documents)
    hashes = {o for s, p, o in triples if s in documents and p == O.contentHash}
    assert hashes == {f'"{_sha256(t)}"' for t in (HOURS, PRICES, "x")}


@given(st.floats())
def test_scores_are_xsd_doubles_that_round_trip(value: float) -> None:
    term = double(value)
    store = pyoxigraph.Store()
    store.load(f"<urn:d> <urn:score> {term} .".encode(), pyoxigraph.RdfFormat.N_TRIPLES)
    [quad] = list(store)
    assert quad.object.datatype.value == "http://www.w3.org/2001/XMLSchema#double"
    parsed = float(quad.object.value.replace("INF", "inf"))
    assert parsed == value or (math.isnan(parsed) and math.isnan(value))


def test_the_docs_example_runs_and_its_query_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page = Path(__file__).resolve().parents[1] / "docs" / "provenance-model.md"
    section = page.read_text(encoding="utf-8").split("## Retrieval (RAG) provenance", 1)[1]
    sample = section.split("```python\n", 1)[1].split("```", 1)[0]
    query = section.split("otel-prov query '", 1)[1].split("'\n", 1)[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    monkeypatch.setenv("OTEL_PROV_STORE", str(tmp_path / "store"))
    exec(compile(sample, "docs/provenance-model.md", "exec"), {})
    answered = subprocess.run(
        [sys.executable, "-m", "otel_prov", "query", query, "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert json.loads(answered.stdout) == [
        {"id": "faq#3", "score": 0.91, "source": "https://www.louvre.fr/en/visit/hours"}
    ]


def test_a_retrieval_in_a_step_informs_its_observation_and_the_thought_decided_after_it() -> None:
    """No tool call: the chunks are the step's own evidence.  The step's thought, decided
    when it ends, and its observation derive from them; the first step's thought, decided
    before the retrieval ran, does not."""

    def run(tp: TracerProvider) -> None:
        with otel_prov.agent_session("guide", question="Open on Tuesday?", tracer_provider=tp):
            with otel_prov.iteration(1, thought="Plan: look it up.", tracer_provider=tp):
                otel_prov.set_action("search")
            with otel_prov.iteration(2, tracer_provider=tp):
                with otel_prov.retrieval("louvre tuesday", tracer_provider=tp) as found:
                    found.add_document("faq#3", content=HOURS)
                otel_prov.set_thought("The FAQ says it is closed.")
                otel_prov.set_observation(HOURS)
            otel_prov.set_answer("No, closed on Tuesdays.")

    triples = list(otel_prov.map_spans(_spans(run)).triples)
    [chunk] = _subjects(triples, O.Document)
    derived = {s for s, p, o in triples if p == P.wasDerivedFrom and o == chunk}
    kinds = {o for s, p, o in triples if s in derived and p == RDF_TYPE and o != P.Entity}
    assert kinds == {O.Thought, O.Observation, O.Answer}
    [first_thought] = [s for s, p, o in triples if p == P.value and o == '"Plan: look it up."']
    assert first_thought not in derived


def test_a_big_document_goes_to_the_blob_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As every content entity's: a preview in the graph, the whole value in the blob."""
    big = "b" * 70_000
    monkeypatch.setenv("OTEL_PROV_BLOB_DIR", str(tmp_path / "blobs"))
    store = tmp_path / "store"
    handle = otel_prov.configure(store=store, set_global=False, service_name="guide")
    with (
        otel_prov.agent_session("guide", tracer_provider=handle.tracer_provider),
        otel_prov.retrieval("q", tracer_provider=handle.tracer_provider) as found,
    ):
        found.add_document("big", content=big)
    handle.shutdown()
    query = f"""{SPARQL_PREFIXES}
    SELECT ?size ?hash ?location (STRLEN(?value) AS ?kept) WHERE {{
      ?chunk a oprov:Document ; oprov:byteSize ?size ; oprov:contentHash ?hash ;
             prov:value ?value ; oprov:contentLocation ?location .
    }}"""
    [row] = pyoxigraph.Store.read_only(str(store)).query(query, use_default_graph_as_union=True)
    assert (int(row["size"].value), int(row["kept"].value)) == (70_000, 1024)
    assert row["hash"].value == _sha256(big)
    assert read_blob(row["location"].value, row["hash"].value, directory=tmp_path / "blobs") == big


def test_a_document_cut_by_the_attribute_length_limit_says_so(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole = "The Louvre is open from 9:00 to 18:00." * 3
    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "80")

    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval("q", tracer_provider=tp) as found:
            found.add_document("faq", content=whole)

    triples = list(otel_prov.map_spans(_spans(run)).triples)
    [chunk] = _subjects(triples, O.Document)
    assert _objects(triples, chunk, O.truncated) == [
        '"true"^^<http://www.w3.org/2001/XMLSchema#boolean>'
    ]
    assert _objects(triples, chunk, O.contentHash) == [f'"{_sha256(whole)}"']
    assert int(parse_literal(_objects(triples, chunk, O.byteSize)[0])) == len(whole)
    assert parse_literal(_objects(triples, chunk, P.value)[0]) == whole[:80]


def test_metadata_too_big_for_the_graph_is_reported_and_kept_in_its_blob(
    tmp_path: Path,
) -> None:
    store = BlobStore(tmp_path / "blobs")

    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval("q", tracer_provider=tp) as found:
            found.add_document("a", content="short", metadata={"summary": "s" * 70_000})

    [span] = [externalize(record, store, 65_536) for record in _spans(run)]
    record = otel_prov.map_spans([span])
    [chunk] = _subjects(list(record.triples), O.Document)
    assert _objects(list(record.triples), chunk, O.documentMetadata) == []
    [problem] = record.problems
    assert "metadata is 70015 bytes" in problem and "file:" in problem


def test_metadata_nested_too_deep_to_parse_is_kept_as_text() -> None:
    deep = "[" * 100_000
    spans = [
        make_span(
            2,
            name="retriever",
            openinference__span__kind="RETRIEVER",
            **{
                "retrieval.documents.0.document.id".replace(".", "__"): "a",
                "retrieval.documents.0.document.metadata".replace(".", "__"): deep,
            },
        ),
        make_span(
            3,
            name="retrieval",
            gen_ai__operation__name="retrieval",
            gen_ai__retrieval__documents=deep,
        ),
    ]
    record = otel_prov.map_spans(spans)
    triples = list(record.triples)
    assert len(_subjects(triples, O.Retrieval)) == 2
    [chunk] = _subjects(triples, O.Document)
    assert _objects(triples, chunk, O.documentMetadata) == [f'"{deep}"']
    assert _objects(triples, chunk, P.hadPrimarySource) == []
    assert not any("could not be converted" in problem for problem in record.problems)


@pytest.mark.parametrize("ours", [True, False])
def test_the_query_has_its_genai_twin_when_the_genai_opt_in_allows(
    ours: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", str(ours).lower())

    def run(tp: TracerProvider) -> None:
        with otel_prov.retrieval("louvre hours", tracer_provider=tp):
            pass

    [span] = _spans(run)
    assert span.attributes["gen_ai.retrieval.query.text"] == "louvre hours"
    assert ("otel_prov.retrieval.query" in span.attributes) is ours
    triples = list(otel_prov.map_spans([span]).triples)
    [retrieval] = _subjects(triples, O.Retrieval)
    [query] = _objects(triples, retrieval, P.used)
    assert _objects(triples, query, P.value) == ['"louvre hours"']
    assert _objects(triples, query, O.contentHash) == [f'"{_sha256("louvre hours")}"']


def test_openllmetry_retriever_spans_are_retrievals_with_their_json_payloads() -> None:
    """As OpenLLMetry's LangChain instrumentation records a retriever run (its attributes
    copied from a real run): a ``vector_db_retrieve`` task with JSON input and output."""
    output = {
        "documents": [
            {"page_content": HOURS, "metadata": {"source": "https://www.louvre.fr/en/visit/hours"}},
            {"page_content": PRICES, "metadata": {"source": "faq/tickets.md", "lang": "en"}},
        ],
        "count": 2,
    }
    spans = [
        make_span(
            1,
            name="execute_tool search_faq",
            end_ms=10,
            traceloop__span__kind="tool",
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="search_faq",
        ),
        make_span(
            2,
            1,
            name="vector_db_retrieve KeywordRetriever",
            start_ms=1,
            end_ms=2,
            traceloop__span__kind="task",
            gen_ai__operation__name="vector_db_retrieve",
            traceloop__entity__name="KeywordRetriever",
            traceloop__entity__input=json.dumps({"query": "louvre hours", "tags": []}),
            traceloop__entity__output=json.dumps(output),
        ),
    ]
    record = otel_prov.map_spans(spans)
    triples = list(record.triples)
    [retrieval] = _subjects(triples, O.Retrieval)
    [query] = _objects(triples, retrieval, P.used)
    assert _objects(triples, query, P.value) == ['"louvre hours"']
    chunks = _subjects(triples, O.Document)
    assert sorted(o for c in chunks for o in _objects(triples, c, P.value)) == sorted(
        [f'"{PRICES}"', f'"{HOURS}"']
    )
    assert {o for c in chunks for o in _objects(triples, c, P.hadPrimarySource)} == {
        "<https://www.louvre.fr/en/visit/hours>",
        "<urn:otel-prov:source:faq%2Ftickets.md>",
    }
    [observation] = _subjects(triples, O.Observation)
    assert set(chunks) <= set(_objects(triples, observation, P.wasDerivedFrom))
