"""Provenance appended to a file, the format chosen by its suffix."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Sequence
from pathlib import Path

import pyoxigraph

from otel_prov.exporters._base import ExportResult, ProvExporter, graph_term
from otel_prov.prov._rdf import PREFIXES, to_nquads, to_ntriples
from otel_prov.prov._record import ProvRecord

__all__ = ["FileExporter"]

_logger = logging.getLogger(__name__)

_FORMATS = {
    ".nq": pyoxigraph.RdfFormat.N_QUADS,
    ".nt": pyoxigraph.RdfFormat.N_TRIPLES,
    ".trig": pyoxigraph.RdfFormat.TRIG,
    ".ttl": pyoxigraph.RdfFormat.TURTLE,
}


class FileExporter(ProvExporter):
    """Appends each batch to ``path``, in the format its suffix names.

    ``.nq`` N-Quads, ``.nt`` N-Triples, ``.trig`` TriG, ``.ttl`` Turtle.

    Every batch is a complete document (Turtle and TriG repeat their prefixes), so the
    file stays parseable however many batches it holds and however a run ends.
    Formats without graphs (``.nt``, ``.ttl``) drop the graph name.
    """

    def __init__(self, path: str | os.PathLike[str], *, graph: str | None = None) -> None:
        self.path = Path(path)
        suffix = self.path.suffix.lower()
        if suffix not in _FORMATS:
            raise ValueError(
                f"cannot tell the RDF format of {self.path}: use one of "
                f"{', '.join(sorted(_FORMATS))}"
            )
        self._format = _FORMATS[suffix]
        self.graph = graph_term(graph)
        """The graph records go to unless they name one (an IRI term)."""
        self._lock = threading.Lock()
        self._closed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)

    def _render(self, records: Sequence[ProvRecord]) -> bytes:
        triples = [triple for record in records for triple in record.triples]
        quads = "".join(to_nquads(r.triples, r.graph or self.graph) for r in records)
        if self._format == pyoxigraph.RdfFormat.N_QUADS:
            return quads.encode()
        if self._format == pyoxigraph.RdfFormat.N_TRIPLES:
            return to_ntriples(triples).encode()
        if self._format == pyoxigraph.RdfFormat.TRIG:
            parsed = pyoxigraph.parse(quads, pyoxigraph.RdfFormat.N_QUADS)
        else:
            parsed = pyoxigraph.parse(to_ntriples(triples), pyoxigraph.RdfFormat.N_TRIPLES)
        return pyoxigraph.serialize(parsed, format=self._format, prefixes=PREFIXES) or b""

    def describe(self) -> str:
        return f"the file {self.path.resolve()}"

    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        try:
            data = self._render(records)
            with self._lock:
                if self._closed:
                    _logger.warning("export after shutdown: %d records not written", len(records))
                    return ExportResult.FAILURE
                with self.path.open("ab") as file:
                    file.write(data)
        except (OSError, SyntaxError, ValueError):
            _logger.exception("could not write %d records to %s", len(records), self.path)
            return ExportResult.FAILURE
        return ExportResult.SUCCESS

    def shutdown(self) -> None:
        with self._lock:
            self._closed = True
