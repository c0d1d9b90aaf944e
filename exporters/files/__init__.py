"""Provenance appended to a file, its format chosen by the suffix: the ``file`` backend
(``OTEL_PROV_BACKEND=file``, the file named by ``store=`` or ``OTEL_PROV_STORE``).

It writes and is not read back: load the file into a store to read it
(``otel-prov import`` reads OTLP spans, not RDF; a store's own bulk loader reads this).
Its writer is ``_exporter``'s :class:`FileExporter`.
"""

from __future__ import annotations

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_STORE
from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._registry import StoreBackend, StoreOptions

__all__ = ["FileStore"]


class FileStore(StoreBackend):
    """The file at ``store`` (``OTEL_PROV_STORE``): ``.nq``, ``.nt``, ``.trig`` or ``.ttl``."""

    name = "file"

    def writer(self, options: StoreOptions) -> ProvExporter:
        from otel_prov.exporters.files._exporter import FileExporter

        path = options.store or env_str(OTEL_PROV_STORE)
        if not path:
            raise ValueError(
                f"the file backend writes to a file: give store= or set {OTEL_PROV_STORE} "
                "(a .nq, .nt, .trig or .ttl path)"
            )
        return FileExporter(path, graph=options.tenant_graph())
