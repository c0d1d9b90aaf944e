"""Which exporter the settings ask for: a SPARQL endpoint if one is set, else the embedded store.

One place for the choice, shared by ``configure()``, the ``prov`` traces exporter and the
zero-code configurator, so that every way of turning otel-prov on reads the same
variables the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_SPARQL_UPDATE_ENDPOINT
from otel_prov.exporters._base import ProvExporter
from otel_prov.exporters._oxigraph import OxigraphStoreExporter
from otel_prov.exporters._sparql import SparqlUpdateExporter

__all__ = ["exporter_from_settings"]


def exporter_from_settings(
    *,
    store: str | os.PathLike[str] | None = None,
    sparql_update_endpoint: str | None = None,
    sparql_query_endpoint: str | None = None,
    sparql_headers: Mapping[str, str] | None = None,
    spool_dir: str | os.PathLike[str] | None = None,
    graph: str | None = None,
) -> ProvExporter:
    """The SPARQL exporter when an update endpoint is given or set, else the embedded store."""
    endpoint = sparql_update_endpoint or env_str(OTEL_PROV_SPARQL_UPDATE_ENDPOINT)
    if endpoint:
        return SparqlUpdateExporter(
            endpoint,
            sparql_query_endpoint,
            graph=graph,
            headers=sparql_headers,
            spool_dir=spool_dir,
        )
    return OxigraphStoreExporter(Path(store) if store is not None else None, graph=graph)
