"""``why`` over a LangChain agent with a retriever tool: a scripted model, a real
``langchain-core`` retriever, recorded by our instrumentor and by OpenInference's
(RETRIEVER spans), stored in a real embedded store and read back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from otel_prov.instrumentation.langchain import LangChainInstrumentor
from otel_prov.read import open_store
from otel_prov.setup._configure import configure
from tests.instrumentation.test_langchain import ask, faq_agent
from tests.instrumentation.test_third_party import _openinference

HOURS = "The Louvre is open from 9:00 to 18:00, closed on Tuesdays."


@pytest.mark.parametrize(
    "make", [_openinference, LangChainInstrumentor], ids=["openinference", "ours"]
)
def test_the_answer_rests_on_the_retrieved_chunks_and_their_sources(
    tmp_path: Path, make: Callable[[], Any]
) -> None:
    handle = configure(store=tmp_path / "s", set_global=False, otlp=False, service_name="rag")
    instrumentor = make()
    instrumentor.instrument(tracer_provider=handle.tracer_provider)
    try:
        ask(faq_agent(), "When is the Louvre open?")
    finally:
        instrumentor.uninstrument()
        handle.shutdown()
    reader = open_store(tmp_path / "s")
    (run,) = reader.sessions().sessions
    graph = reader.why(run.id)
    assert graph.node(graph.root).type == "Answer"
    chunks = [node for node in graph.nodes if node.type == "Document"]
    assert {chunk.label for chunk in chunks} == {HOURS, "A ticket costs 22 euros."}
    sources = {
        graph.node(edge.target).id
        for chunk in chunks
        for edge in graph.outgoing(chunk.id)
        if edge.relation == "hadPrimarySource"
    }
    assert sources == {
        "https://www.louvre.fr/en/visit/hours",
        "urn:otel-prov:source:faq%2Ftickets.md",
    }
    (call,) = [node for node in graph.nodes if node.type == "ToolCall"]
    assert call.tool == "search_faq" and call.supports_answer
    told = reader.summary(run.id)
    rests = next(s for s in told.sentences if s.text.startswith("The answer rests on"))
    assert "search_faq" in rests.text and "https://www.louvre.fr/en/visit/hours" in rests.text
    assert {chunk.id for chunk in chunks} <= set(rests.refs)
