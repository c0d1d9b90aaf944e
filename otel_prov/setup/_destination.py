"""Which store the settings ask for, through the registry of store backends.

One place for the choice, shared by ``configure()``, the ``prov`` traces exporter, the
zero-code configurator and the CLI, so that every way of turning otel-prov on reads the
same variables the same way; and where the CLI learns where provenance is read back from
and where undelivered batches wait.  Each backend (``otel_prov.exporters``: ``oxigraph/``,
``sparql/``, ``files/``, or an installed package's) builds its own writer and reader
from the settings; this module only says which one is asked for.
"""

from __future__ import annotations

import os
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_SPARQL_UPDATE_ENDPOINT, OTEL_PROV_TENANT
from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._reading import QueryBackend
from otel_prov.exporters._registry import Destination, StoreOptions, chosen, reader_of
from otel_prov.exporters._stored import StoredRuns, StoreReads
from otel_prov.exporters.oxigraph._parked import ParkedBatches
from otel_prov.exporters.oxigraph._settings import store_path
from otel_prov.exporters.sparql._settings import spool_dir_from_settings

__all__ = [
    "Destination",
    "StoreOptions",
    "destination_from_settings",
    "exporter_from_settings",
    "parked_batches",
    "reader_from_settings",
    "spool_dir_from_settings",
    "store_path",
    "stored_runs",
    "update_endpoint_from_settings",
]


def exporter_from_settings(options: StoreOptions | None = None) -> ProvExporter:
    """The writer of the backend ``options`` name or ask for (:func:`~otel_prov.exporters.
    _registry.chosen`: the SPARQL store when an update endpoint is given or set, else the
    embedded store); without ``options``, all from the variables (``OTEL_PROV_TENANT``
    too)."""
    options = options or StoreOptions(tenant=env_str(OTEL_PROV_TENANT))
    return chosen(options).writer(options)


def stored_runs(exporter: ProvExporter) -> StoredRuns | None:
    """The store's answers to a writer that goes on from it, read by the reader of the
    exporter's backend (``None`` for an exporter no backend reads back: its runs are not
    continued from the store)."""
    found = reader_of(exporter)
    return None if found is None else StoreReads(*found)


def destination_from_settings(
    *,
    store: str | os.PathLike[str] | None = None,
    sparql_update_endpoint: str | None = None,
    sparql_query_endpoint: str | None = None,
    graph: str | None = None,
) -> Destination:
    """As :func:`exporter_from_settings`, except that a ``store`` given outranks an update
    endpoint set in the environment (the CLI's ``--store``, chosen for this command).

    Raises ``ValueError`` for an unusable endpoint (or backend name), ``OSError`` for a
    store that cannot be opened for writing (another process holds it, say) and
    ``StoreUnavailableError`` for a backend that cannot read back what it writes.
    """
    options = StoreOptions(
        backend="embedded" if store is not None and not sparql_update_endpoint else None,
        store=store,
        sparql_update_endpoint=sparql_update_endpoint,
        sparql_query_endpoint=sparql_query_endpoint,
        graph=graph,
    )
    return chosen(options).destination(options)


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
    headers of ``OTEL_PROV_SPARQL_HEADERS``; else the embedded store, read-only (or the
    backend ``OTEL_PROV_BACKEND`` names, when neither is given).

    Raises :class:`~otel_prov.exporters._reading.StoreUnavailableError` when there is no
    store, ``ValueError`` for a backend name that is none.
    """
    named = "sparql" if sparql_query_endpoint else ("embedded" if store is not None else None)
    options = StoreOptions(backend=named, store=store, sparql_query_endpoint=sparql_query_endpoint)
    return chosen(options, reading=True).reader(options)


def parked_batches(store: str | os.PathLike[str] | None = None) -> tuple[int, Path]:
    """How many batches wait beside the embedded store for the process that holds it, and
    where (processes that could not get the store park them; ``otel-prov flush`` loads)."""
    parked = ParkedBatches(store_path(store))
    return len(parked), parked.directory
