"""Provenance exporters: where the PROV-O triples of finished sessions go.

* :class:`OxigraphStoreExporter` - an embedded on-disk store (the default).
* :class:`FileExporter` - N-Quads, N-Triples, TriG or Turtle files, by suffix.
* :class:`SparqlUpdateExporter` - any SPARQL 1.1 store over HTTP, with a durable spool.

All implement :class:`ProvExporter`; write your own by subclassing it.
"""

from otel_prov.exporters._base import DEFAULT_GRAPH, ExportResult, ProvExporter
from otel_prov.exporters._file import FileExporter
from otel_prov.exporters._oxigraph import DEFAULT_STORE, OxigraphStoreExporter
from otel_prov.exporters._sparql import DEFAULT_SPOOL_DIR, SparqlUpdateExporter

__all__ = [
    "DEFAULT_GRAPH",
    "DEFAULT_SPOOL_DIR",
    "DEFAULT_STORE",
    "ExportResult",
    "FileExporter",
    "OxigraphStoreExporter",
    "ProvExporter",
    "SparqlUpdateExporter",
]
