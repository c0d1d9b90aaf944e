"""Reading instrumentors' spans and their provenance in tests."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

import otel_prov
from otel_prov.prov._rdf import parse_literal
from otel_prov.prov._vocab import RDF_TYPE

Triples = set[tuple[str, str, str]]


def by_name(spans: list[ReadableSpan], prefix: str) -> list[ReadableSpan]:
    return sorted((s for s in spans if s.name.startswith(prefix)), key=lambda s: s.start_time or 0)


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def prov(spans: list[ReadableSpan]) -> Triples:
    """The mapped provenance of ``spans``, which must convert without problems."""
    record = otel_prov.map_spans([otel_prov.record_from_span(s) for s in spans])
    assert record.problems == ()
    return set(record.triples)


def subjects(triples: Triples, cls: str) -> list[str]:
    return sorted(s for s, p, o in triples if p == RDF_TYPE and o == cls)


def value(triples: Triples, subject: str, predicate: str) -> str | None:
    found = [o for s, p, o in triples if s == subject and p == predicate]
    return parse_literal(found[0]) if found else None


def genai_messages(session: ReadableSpan) -> tuple[Any, Any, Any]:
    """What a GenAI-only backend reads of an agent span: its input and output messages
    (the JSON of ``gen_ai.input.messages`` / ``gen_ai.output.messages``, None when off)
    and ``gen_ai.provider.name``."""
    found = attrs(session)

    def messages(key: str) -> Any:
        return json.loads(found[key]) if key in found else None

    return (
        messages("gen_ai.input.messages"),
        messages("gen_ai.output.messages"),
        found.get("gen_ai.provider.name"),
    )


def said(question: str, answer: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The GenAI conventions' input and output messages of a session: the user's question,
    the agent's answer."""
    return (
        [{"role": "user", "parts": [{"type": "text", "content": question}]}],
        [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": answer}],
                "finish_reason": "stop",
            }
        ],
    )
