"""What every exporter shares: the interface (defined in the core) and the graph setting."""

from __future__ import annotations

from otel_prov._export_api import ExportResult, ProvExporter
from otel_prov._rdf import InvalidIRIError, iri
from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_GRAPH

__all__ = ["DEFAULT_GRAPH", "ExportResult", "ProvExporter", "graph_term"]

DEFAULT_GRAPH = "urn:otel-prov:graph"
"""The named graph provenance goes to unless ``graph=`` or ``OTEL_PROV_GRAPH`` says otherwise."""


def graph_term(graph: str | None) -> str:
    """The provenance graph as an IRI term, from the argument, ``OTEL_PROV_GRAPH`` or the default.

    Raises ``ValueError`` naming the bad IRI: a graph name is constructor input, and
    writing to the wrong graph silently would lose the user's data.
    """
    value = graph or env_str(OTEL_PROV_GRAPH, DEFAULT_GRAPH) or DEFAULT_GRAPH
    try:
        return iri(value)
    except InvalidIRIError as exc:
        raise ValueError(
            f"invalid provenance graph IRI ({OTEL_PROV_GRAPH} or graph=): {exc}"
        ) from exc
