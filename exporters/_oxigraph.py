"""The embedded store: provenance in a pyoxigraph database on local disk, no server needed."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph
from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_STORE
from otel_prov.prov._rdf import to_nquads
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._sealer import chain_heads_from_rows, chain_heads_query

__all__ = ["DEFAULT_STORE", "OxigraphStoreExporter", "default_store_path"]

_logger = logging.getLogger(__name__)

DEFAULT_STORE = ".otel-prov/store"
"""Where the embedded store lives unless ``path=`` or ``OTEL_PROV_STORE`` says otherwise."""


def default_store_path() -> Path:
    return Path(env_str(OTEL_PROV_STORE, DEFAULT_STORE) or DEFAULT_STORE)


class OxigraphStoreExporter(ProvExporter):
    """Writes provenance into an on-disk pyoxigraph store (one writer process at a time).

    The store is opened in the constructor, so a locked or unreadable directory fails
    at set-up with the path in the message, not later in a background thread.  Batches
    are bulk-loaded as N-Quads: the fastest ingest pyoxigraph offers, and idempotent
    because the mapper's IRIs are deterministic.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, graph: str | None = None):
        self.path = Path(path) if path is not None else default_store_path()
        self._graph = graph_term(graph)
        self.path.mkdir(parents=True, exist_ok=True)
        try:
            self._store: pyoxigraph.Store | None = pyoxigraph.Store(str(self.path))
        except OSError as exc:
            raise OSError(
                f"cannot open the embedded provenance store at {self.path}: {exc} "
                "(is another process writing to it?)"
            ) from exc
        self._lock = threading.Lock()

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        text = "".join(to_nquads(record.triples, self._graph) for record in records)
        with self._lock:
            if self._store is None:
                _logger.warning("export after shutdown: %d records not stored", len(records))
                return ExportResult.FAILURE
            try:
                # Lenient: the text is ours, valid by construction (escaping and IRIs are
                # property-tested against the strict parser), and skipping the re-check
                # is what brings ingest level with a raw bulk_extend.
                self._store.bulk_load(text.encode(), pyoxigraph.RdfFormat.N_QUADS, lenient=True)
            except (OSError, SyntaxError, ValueError):
                _logger.exception("could not write %d records to %s", len(records), self.path)
                return ExportResult.FAILURE
        return ExportResult.SUCCESS

    def chain_heads(self) -> dict[str, dict[str, str]]:
        with self._lock:
            if self._store is None:
                return {}
            answer = self._store.query(chain_heads_query(self._graph))
            assert isinstance(answer, pyoxigraph.QuerySolutions)
            names = [variable.value for variable in answer.variables]
            rows = [
                {name: (term.value if (term := row[name]) is not None else None) for name in names}
                for row in answer
            ]
        return chain_heads_from_rows(rows)

    def describe(self) -> str:
        return f"the embedded store at {self.path.resolve()}"

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        with self._lock:
            if self._store is not None:
                self._store.flush()
        return True

    def shutdown(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.flush()
                # Dropping the last reference closes the database and releases its lock.
                self._store = None
