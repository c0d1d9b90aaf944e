"""What the mapper hands to an exporter: the triples of one span tree and what went wrong."""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov.prov._rdf import Triple

__all__ = ["ProvRecord"]


@dataclass(frozen=True, slots=True)
class ProvRecord:
    """The provenance of one agent session (or of spans that joined a trace later).

    ``triples`` are in N-Triples syntax and carry no graph: the exporter decides where
    they go, unless ``graph`` names one (a tenant's, set by the receiver for the
    tenant whose token sent the spans).  ``problems`` lists what the mapper could not
    convert as-is; the triples still hold everything that could be.
    """

    trace_id: str
    """32 lowercase hex digits."""
    root: str
    """IRI term of the outermost activity (the session, when there is one)."""
    triples: tuple[Triple, ...]
    problems: tuple[str, ...] = ()
    span_count: int = 0
    graph: str | None = None
    """IRI term (``<...>``) of the graph these triples go to; None: the exporter's own."""
    retracted: tuple[Triple, ...] = ()
    """Triples the store must no longer hold, taken out before ``triples`` go in: what the
    streamed entries of a run wrote and its end does not say (an activity's ``running``
    status, what a window of the run got wrong; see ``_stream``).  Only an exporter that
    ``can_retract`` is handed a record with any."""
