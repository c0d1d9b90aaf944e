"""Which exporter the settings ask for: a SPARQL endpoint if one is set, else the embedded store.

One place for the choice, shared by ``configure()``, the ``prov`` traces exporter, the
zero-code configurator and the CLI, so that every way of turning otel-prov on reads the
same variables the same way; and where the CLI learns where provenance is read back from
and where undelivered batches wait, without knowing the concrete exporters itself.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov._tenants import tenant_graph
from otel_prov.environment_variables import (
    OTEL_PROV_SPARQL_UPDATE_ENDPOINT,
    OTEL_PROV_SPOOL_DIR,
    OTEL_PROV_TENANT,
)
from otel_prov.exporters._base import ProvExporter, graph_term
from otel_prov.exporters._oxigraph import OxigraphStoreExporter, default_store_path
from otel_prov.exporters._parked import ParkedBatches
from otel_prov.exporters._sparql import DEFAULT_SPOOL_DIR, SparqlUpdateExporter, sparql_headers
from otel_prov.exporters._sparql_client import query_endpoint_from_settings
from otel_prov.processing._stored import StoredRuns
from otel_prov.read._backend import EmbeddedBackend, QueryBackend, RemoteBackend
from otel_prov.read._sealed import StoreReads

__all__ = [
    "Destination",
    "DestinationSettings",
    "destination_from_settings",
    "exporter_from_settings",
    "parked_batches",
    "reader_from_settings",
    "spool_dir_from_settings",
    "store_path",
    "stored_runs",
    "update_endpoint_from_settings",
]


@dataclass(frozen=True)
class DestinationSettings:
    """Where ``configure()`` and the zero-code paths send provenance, as given in code; a
    field left ``None`` falls back to its ``OTEL_PROV_*`` variable, then to its default."""

    store: str | os.PathLike[str] | None = None
    sparql_update_endpoint: str | None = None
    sparql_query_endpoint: str | None = None
    sparql_headers: Mapping[str, str] | None = None
    spool_dir: str | os.PathLike[str] | None = None
    graph: str | None = None
    sparql_graph_store_endpoint: str | None = None
    tenant: str | None = None
    """The tenant whose graph (``<graph>/tenants/<tenant>``) is written; None: ``graph``."""

    def tenant_graph(self) -> str | None:
        """The graph written to: ``graph``, or the tenant's under it."""
        if self.tenant is None:
            return self.graph
        return tenant_graph(graph_term(self.graph)[1:-1], self.tenant)


def exporter_from_settings(
    settings: DestinationSettings | None = None,
) -> ProvExporter:
    """The SPARQL exporter when an update endpoint is given or set, else the embedded store;
    without ``settings``, all from the variables (``OTEL_PROV_TENANT`` too)."""
    settings = settings or DestinationSettings(tenant=env_str(OTEL_PROV_TENANT))
    return _exporter(
        settings.sparql_update_endpoint or env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT), settings
    )


def _exporter(
    update_endpoint: str | None, settings: DestinationSettings
) -> SparqlUpdateExporter | OxigraphStoreExporter:
    if update_endpoint:
        return SparqlUpdateExporter(
            update_endpoint,
            settings.sparql_query_endpoint,
            graph=settings.tenant_graph(),
            headers=settings.sparql_headers,
            spool_dir=settings.spool_dir,
            graph_store_endpoint=settings.sparql_graph_store_endpoint,
        )
    store = settings.store
    return OxigraphStoreExporter(
        Path(store) if store is not None else None, graph=settings.tenant_graph()
    )


@dataclass(frozen=True)
class Destination:
    """Where provenance goes, and how to read back what is there."""

    exporter: ProvExporter
    reader: QueryBackend
    """Reads what ``exporter`` writes (the embedded store read-only, or the query endpoint)."""
    spool: Path | None
    """Where batches the SPARQL store did not take wait; ``None`` for the embedded store."""


def stored_runs(exporter: ProvExporter) -> StoredRuns | None:
    """The store's answers to a writer that goes on from it, for the exporters setup
    builds (``None`` for another: its runs are not continued from the store)."""
    if isinstance(exporter, SparqlUpdateExporter):
        remote = RemoteBackend(exporter.query_endpoint, headers=exporter.headers)
        return StoreReads(remote, exporter.graph)
    if isinstance(exporter, OxigraphStoreExporter):
        return StoreReads(
            EmbeddedBackend(exporter.path, writer=exporter.held_store), exporter.graph
        )
    return None


def destination_from_settings(
    *,
    store: str | os.PathLike[str] | None = None,
    sparql_update_endpoint: str | None = None,
    sparql_query_endpoint: str | None = None,
    graph: str | None = None,
) -> Destination:
    """As :func:`exporter_from_settings`, except that a ``store`` given outranks an update
    endpoint set in the environment (the CLI's ``--store``, chosen for this command).

    Raises ``ValueError`` for an unusable endpoint and ``OSError`` for a store that cannot
    be opened for writing (another process holds it, say).
    """
    exporter = _exporter(
        update_endpoint_from_settings(sparql_update_endpoint, store=store),
        DestinationSettings(store=store, sparql_query_endpoint=sparql_query_endpoint, graph=graph),
    )
    if isinstance(exporter, SparqlUpdateExporter):
        reader = RemoteBackend(exporter.query_endpoint, headers=exporter.headers)
        return Destination(exporter, reader, exporter.spool.root)
    return Destination(exporter, EmbeddedBackend(exporter.path, writer=exporter.held_store), None)


def update_endpoint_from_settings(
    update_endpoint: str | None = None, *, store: str | os.PathLike[str] | None = None
) -> str | None:
    """The SPARQL update endpoint :func:`destination_from_settings` writes to: the one
    given, else (no ``store`` given) ``OTEL_PROV_SPARQL_UPDATE_ENDPOINT``; ``None`` for
    the embedded store."""
    if update_endpoint:
        return update_endpoint
    return None if store is not None else env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)


def reader_from_settings(
    *, store: str | os.PathLike[str] | None = None, sparql_query_endpoint: str | None = None
) -> QueryBackend:
    """The SPARQL query endpoint when one is given, or set (or implied by the update
    endpoint set, as the exporter reads it back) and no ``store`` is given, with the
    headers of ``OTEL_PROV_SPARQL_HEADERS``; else the embedded store, read-only.

    Raises :class:`~otel_prov.read._backend.StoreUnavailableError` when there is no store.
    """
    endpoint = sparql_query_endpoint or (
        None
        if store is not None
        else query_endpoint_from_settings(env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT))
    )
    if endpoint:
        return RemoteBackend(endpoint, headers=sparql_headers())
    return EmbeddedBackend(store_path(store))


def store_path(store: str | os.PathLike[str] | None = None) -> Path:
    """``store``, else ``OTEL_PROV_STORE``, else the documented default directory."""
    return Path(store) if store is not None else default_store_path()


def spool_dir_from_settings(spool_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the SPARQL exporter spools: ``spool_dir``, else ``OTEL_PROV_SPOOL_DIR``, else
    the documented default."""
    return Path(spool_dir or env_str(OTEL_PROV_SPOOL_DIR, DEFAULT_SPOOL_DIR) or ".")


def parked_batches(store: str | os.PathLike[str] | None = None) -> tuple[int, Path]:
    """How many batches wait beside the embedded store for the process that holds it, and
    where (processes that could not get the store park them; ``otel-prov flush`` loads)."""
    parked = ParkedBatches(store_path(store))
    return len(parked), parked.directory
