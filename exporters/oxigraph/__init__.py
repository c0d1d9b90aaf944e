"""The embedded store: provenance in a pyoxigraph (RocksDB) database on local disk, no
server needed; the default backend (``embedded``, also ``oxigraph``).

Its writer (``_exporter``: :class:`OxigraphStoreExporter`, with the batches parked for it
by processes that cannot write it, ``_parked``), its reader (``_reader``:
``EmbeddedBackend``), the one rule RocksDB imposes on forked processes (``_rocksdb``)
and its settings (``_settings``) live here; this module only says how to build them, so
registering the backend loads none of them.
"""

from __future__ import annotations

from pathlib import Path

from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters._registry import StoreBackend, StoreOptions
from otel_prov.exporters.oxigraph._settings import store_path

__all__ = ["EmbeddedStore"]


class EmbeddedStore(StoreBackend):
    """The embedded store at ``store`` (``OTEL_PROV_STORE``, default ``.otel-prov/store``)."""

    name = "embedded"

    def asked_for(self, options: StoreOptions, *, reading: bool = False) -> bool:
        return True  # the store of every setting that names no other

    def writer(self, options: StoreOptions) -> ProvExporter:
        from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter

        store = options.store
        return OxigraphStoreExporter(
            Path(store) if store is not None else None, graph=options.tenant_graph()
        )

    def reader(self, options: StoreOptions) -> QueryBackend:
        from otel_prov.exporters.oxigraph._reader import EmbeddedBackend

        return EmbeddedBackend(store_path(options.store))

    def reader_of(self, writer: ProvExporter) -> tuple[QueryBackend, str] | None:
        from otel_prov.exporters.oxigraph._exporter import OxigraphStoreExporter
        from otel_prov.exporters.oxigraph._reader import EmbeddedBackend

        if not isinstance(writer, OxigraphStoreExporter):
            return None
        return EmbeddedBackend(writer.path, writer=writer.held_store), writer.graph
