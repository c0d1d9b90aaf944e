"""What a reader may see: the graph its read API reads, and the dataset of each query it
runs for someone (``otel-prov query``, the SPARQL page of ``otel-prov serve``, the
``sparql`` tool of an MCP server).

A reader is built for the provenance graph and, maybe, a tenant; its
:class:`Confinement`, built once from those (:meth:`Confinement.of`), is then all any of
them consults.  A tenant's reader reads the tenant's graph (``<graph>/tenants/NAME``),
and a query it runs has that graph as its whole
:class:`~otel_prov.exporters._reading.Dataset`: its default graph and its only named
graph, so ``GRAPH ?g``, ``FROM``, ``FROM NAMED`` and a guessed graph IRI
see nothing else.  The store enforces it: pyoxigraph's ``default_graph`` and
``named_graphs``, the SPARQL protocol's ``default-graph-uri`` and ``named-graph-uri``,
which override what the query says.  A reader without a tenant reads the provenance
graph by default and may name any other.

The dataset goes with each query (``QueryBackend.query(..., dataset=...)``) and never
onto a backend: one backend serves many readers at once (the request threads of
``serve``), and a dataset one request left on it is the one another's next page would
have been read with.
"""

from __future__ import annotations

from dataclasses import dataclass

from otel_prov._tenants import tenant_graph
from otel_prov.exporters._reading import Dataset

__all__ = ["Confinement"]


@dataclass(frozen=True)
class Confinement:
    """One reader's view of the store: build it with :meth:`of`."""

    graph: str
    """The graph (an IRI) the reader reads: the provenance graph, or its tenant's."""
    tenant: str | None = None
    """The tenant the reader is confined to; ``None``: none."""

    @classmethod
    def of(cls, graph: str, tenant: str | None = None) -> Confinement:
        """The reader of the provenance graph ``graph`` (an IRI) and of ``tenant``'s
        graph under it when ``tenant`` is given (``ValueError`` for a name that is no
        tenant's)."""
        return cls(graph if tenant is None else tenant_graph(graph, tenant), tenant)

    @property
    def dataset(self) -> Dataset:
        """The dataset of a query this reader runs: a tenant's graph alone, or the
        provenance graph as the default graph and every graph by name."""
        if self.tenant is None:
            return Dataset((self.graph,))
        return Dataset((self.graph,), (self.graph,))
