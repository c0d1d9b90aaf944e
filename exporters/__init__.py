"""Provenance exporters: where the PROV-O triples of finished sessions go.

* :class:`OxigraphStoreExporter` - an embedded on-disk store (the default).
* :class:`FileExporter` - N-Quads, N-Triples, TriG or Turtle files, by suffix.
* :class:`SparqlUpdateExporter` - any SPARQL 1.1 store over HTTP, with a durable spool.

All implement :class:`ProvExporter`; write your own by subclassing it.  Each store is a
backend of its own (``oxigraph/``, ``sparql/``, ``files/``: its writer, its reader and
its settings), found by name (``_registry``: ``embedded``, ``sparql``, ``file``, and any
an installed package registers under the entry point group ``otel_prov.backends``).

The interface loads with this package; each concrete exporter loads on first use
(PEP 562), so what needs only the interface pays for no store and no HTTP client.
"""

import importlib
import typing

from otel_prov.exporters._base import DEFAULT_GRAPH, ExportResult, ProvExporter

if typing.TYPE_CHECKING:
    from otel_prov.exporters.files._exporter import FileExporter
    from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter
    from otel_prov.exporters.oxigraph._settings import DEFAULT_STORE
    from otel_prov.exporters.sparql._exporter import SparqlUpdateExporter
    from otel_prov.exporters.sparql._settings import DEFAULT_SPOOL_DIR

_HOMES: dict[str, tuple[str, ...]] = {
    "otel_prov.exporters.files._exporter": ("FileExporter",),
    "otel_prov.exporters.oxigraph._exporter": ("OxigraphStoreExporter",),
    "otel_prov.exporters.oxigraph._settings": ("DEFAULT_STORE",),
    "otel_prov.exporters.sparql._exporter": ("SparqlUpdateExporter",),
    "otel_prov.exporters.sparql._settings": ("DEFAULT_SPOOL_DIR",),
}
"""Where each name that loads on first use lives."""
_HOME_OF = {name: home for home, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> object:
    """Import a concrete exporter's module on first use and keep the name here (PEP 562)."""
    home = _HOME_OF.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(home), name)
    globals()[name] = value  # the next lookup finds it without this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
