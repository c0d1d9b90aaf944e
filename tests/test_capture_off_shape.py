"""With content capture off the provenance graph keeps its shape: only the values go.

``OTEL_PROV_CAPTURE_CONTENT=false`` leaves the text off the spans but records each value's
size and hash, so every entity, every ``prov:used`` and every ``prov:wasDerivedFrom`` is
still there: "which observation did the answer rest on" has the same answer either way.
"""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov.capture import _content
from otel_prov.prov._rdf import Triple
from otel_prov.prov._vocab import O, P
from tests.builders import CountingIds

PROV_VALUE = P.value


def _run(capture: bool) -> list[Triple]:
    _content.set_override(capture)
    exporter = InMemorySpanExporter()
    provider = TracerProvider(id_generator=CountingIds())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tp = provider
    with otel_prov.agent_session("weather", question="Warmer in Oslo or Rome?", tracer_provider=tp):
        step = otel_prov.iteration(1, thought="Look up Oslo.", action="weather", tracer_provider=tp)
        call = otel_prov.tool_call("weather", arguments={"city": "Oslo"}, tracer_provider=tp)
        with step, call:
            otel_prov.set_observation("4 C")
        with otel_prov.iteration(
            2, thought="Now Rome.", action="weather", arguments={"city": "Rome"}, tracer_provider=tp
        ):
            with otel_prov.retrieval("Rome climate", data_source="wiki", tracer_provider=tp) as kb:
                kb.add_document("rome#1", content="Mild.", score=0.7, source="https://x.example")
                kb.add_document("rome#2", content="Sunny.", metadata={"url": "https://y.example"})
            otel_prov.set_observation("17 C")
        otel_prov.set_answer("Rome")
    provider.shutdown()
    spans = [otel_prov.record_from_span(span) for span in exporter.get_finished_spans()]
    return list(otel_prov.map_spans(spans).triples)


def _is_literal(term: str) -> bool:
    return term.startswith('"')


def _shape(triples: list[Triple]) -> set[tuple[str, str, str]]:
    """Every triple but the content values; literals reduced to their predicate's place
    (times and bundle hashes differ between two runs, and the values must)."""
    return {(s, p, "literal" if _is_literal(o) else o) for s, p, o in triples if p != PROV_VALUE}


def test_the_graph_has_the_same_shape_with_capture_on_and_off() -> None:
    on, off = _run(True), _run(False)
    assert any(p == PROV_VALUE for _, p, _ in on)
    assert not any(p == PROV_VALUE for _, p, _ in off)
    missing = _shape(on) - _shape(off)
    extra = _shape(off) - _shape(on)
    assert (sorted(missing), sorted(extra)) == ([], [])


def test_hashes_and_sizes_are_the_same_with_capture_on_and_off() -> None:
    def digests(triples: list[Triple]) -> set[tuple[str, str, str]]:
        # A bundle's hash covers the values, so it must differ; the contents' must not.
        return {
            t
            for t in triples
            if t[1] in (O.contentHash, O.byteSize) and not t[0].endswith(":bundle>")
        }

    on, off = digests(_run(True)), digests(_run(False))
    # question, two thoughts, two arguments, two observations, a query, two documents, answer
    assert len(on) >= 2 * 11
    assert on == off
