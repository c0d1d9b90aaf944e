"""Any SPARQL 1.1 store over HTTP (Oxigraph's server, Virtuoso, Fuseki...): the ``sparql``
backend, asked for by setting an update endpoint.

Its writer (``_exporter``: :class:`SparqlUpdateExporter`, which posts through
``_client`` and keeps what the store has not taken in a durable ``_spool``), its reader
(``_reader``: ``RemoteBackend``, paging through answers in a total order) and its
settings (``_settings``: the endpoints, headers and spool directory) live here; this
module only says how to build them, so registering the backend loads none of them (the
HTTP client alone costs 60 ms to import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_SPARQL_UPDATE_ENDPOINT
from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._reading import QueryBackend, StoreUnavailableError
from otel_prov.exporters._registry import Destination, StoreBackend, StoreOptions
from otel_prov.exporters.sparql._settings import query_endpoint_from_settings, sparql_headers

if TYPE_CHECKING:
    from otel_prov.exporters.sparql._exporter import SparqlUpdateExporter

__all__ = ["SparqlStore"]


class SparqlStore(StoreBackend):
    """The SPARQL store at ``sparql_update_endpoint`` (``OTEL_PROV_SPARQL_UPDATE_ENDPOINT``),
    read at ``sparql_query_endpoint`` (``OTEL_PROV_SPARQL_QUERY_ENDPOINT``, else beside
    the update endpoint)."""

    name = "sparql"

    def asked_for(self, options: StoreOptions, *, reading: bool = False) -> bool:
        if not reading:
            return bool(options.sparql_update_endpoint or _update_endpoint())
        return self._query_endpoint(options) is not None

    def writer(self, options: StoreOptions) -> ProvExporter:
        return self._exporter(options)

    def _exporter(self, options: StoreOptions) -> SparqlUpdateExporter:
        from otel_prov.exporters.sparql._exporter import SparqlUpdateExporter

        return SparqlUpdateExporter(
            options.sparql_update_endpoint or _update_endpoint(),
            options.sparql_query_endpoint,
            graph=options.tenant_graph(),
            headers=options.sparql_headers,
            spool_dir=options.spool_dir,
            graph_store_endpoint=options.sparql_graph_store_endpoint,
        )

    def reader(self, options: StoreOptions) -> QueryBackend:
        from otel_prov.exporters.sparql._reader import RemoteBackend

        endpoint = self._query_endpoint(options)
        if endpoint is None:
            raise StoreUnavailableError(
                "no SPARQL query endpoint to read: give one (--endpoint) or set "
                f"{OTEL_PROV_SPARQL_UPDATE_ENDPOINT} or OTEL_PROV_SPARQL_QUERY_ENDPOINT"
            )
        headers = options.sparql_headers
        return RemoteBackend(endpoint, headers=sparql_headers() if headers is None else headers)

    def reader_of(self, writer: ProvExporter) -> tuple[QueryBackend, str] | None:
        from otel_prov.exporters.sparql._exporter import SparqlUpdateExporter
        from otel_prov.exporters.sparql._reader import RemoteBackend

        if not isinstance(writer, SparqlUpdateExporter):
            return None
        return RemoteBackend(writer.query_endpoint, headers=writer.headers), writer.graph

    def destination(self, options: StoreOptions) -> Destination:
        from otel_prov.exporters.sparql._reader import RemoteBackend

        exporter = self._exporter(options)
        reader = RemoteBackend(exporter.query_endpoint, headers=exporter.headers)
        return Destination(exporter, reader, exporter.spool.root)

    @staticmethod
    def _query_endpoint(options: StoreOptions) -> str | None:
        """The one given, else (no embedded store given) the one the settings imply."""
        if options.sparql_query_endpoint:
            return options.sparql_query_endpoint
        if options.store is not None:
            return None
        return query_endpoint_from_settings(options.sparql_update_endpoint or _update_endpoint())


def _update_endpoint() -> str | None:
    return env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)
