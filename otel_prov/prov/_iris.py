"""Deterministic IRIs: the same OTel ids always give the same IRIs.

That is what makes a retried or replayed export idempotent: inserting the same triples
twice leaves the store as it was.  Activities are named by trace and span id, the
entities an activity produced or read by suffixing its IRI, agents by their (percent
encoded) names, so every IRI written here is valid without further checks.
"""

from __future__ import annotations

import functools
from urllib.parse import quote

from otel_prov.prov._rdf import InvalidIRIError, iri

__all__ = [
    "STEP",
    "activity_iri",
    "agent_iri",
    "entity_iri",
    "evaluator_iri",
    "model_iri",
    "owner_span",
    "service_iri",
    "source_iri",
    "span_hex",
    "tool_iri",
    "trace_hex",
]

_BASE = "urn:otel-prov:"
STEP = "step"
"""The entity kind naming an iteration inferred from a model call: ``<model call IRI>:step``
(the mapper makes it, readers place the model call and its tool calls under it)."""


def trace_hex(trace_id: int) -> str:
    """32 lowercase hex digits, as W3C trace context and Jaeger print it."""
    return f"{trace_id:032x}"


def span_hex(span_id: int) -> str:
    """16 lowercase hex digits."""
    return f"{span_id:016x}"


def activity_iri(trace_id: int, span_id: int) -> str:
    return f"<{_BASE}{trace_id:032x}:{span_id:016x}>"


_OWNED = len(f"<{_BASE}") + 32
"""Where the span id of an activity IRI term (``<urn:otel-prov:<trace>:<span>>``) begins,
less its colon."""


def owner_span(term: str) -> int | None:
    """The span an IRI term belongs to: the span of an activity, or of the activity an
    entity is named after (``<activity>:thought``, ``<model call>:step``); ``None`` for
    what belongs to no span (agents, tools, models, services, sources, chains)."""
    if len(term) < _OWNED + 18 or term[_OWNED] != ":" or not term.startswith(_BASE, 1):
        return None
    end = _OWNED + 17
    if term[end] not in ":>":
        return None
    try:
        int(term[_OWNED - 32 : _OWNED], 16)
        return int(term[_OWNED + 1 : end], 16)
    except ValueError:
        return None


def entity_iri(activity: str, kind: str) -> str:
    """An entity of ``activity`` (an IRI term), e.g. its ``thought`` or ``observation``."""
    return f"{activity[:-1]}:{kind}>"


# Every session names its agents, tools and models again: bench_caches, 1.02x without it.
@functools.lru_cache(maxsize=4096)
def _named(kind: str, name: str) -> str:
    return f"<{_BASE}{kind}:{quote(name, safe='', errors='surrogatepass')}>"


def agent_iri(name: str) -> str:
    return _named("agent", name)


def tool_iri(name: str) -> str:
    return _named("tool", name)


def model_iri(name: str) -> str:
    return _named("model", name)


def evaluator_iri(name: str) -> str:
    return _named("evaluator", name)


def service_iri(name: str) -> str:
    return _named("service", name)


def source_iri(source: str) -> str:
    """The IRI of the document a retrieved chunk was taken from, as a retriever named it.

    An absolute IRI is kept as it is, so that the chunk links to the same node as the
    extraction-time provenance of that document.  Anything else (a file name, a title,
    text that is no valid IRI) gets an IRI minted from it, as agents and tools do: the
    same name always gives the same node.  So does an IRI in our own namespace, which
    could otherwise make one of our activities an entity.
    """
    if not source.startswith(_BASE):
        try:
            return iri(source)
        except InvalidIRIError:
            pass
    return _named("source", source)
