"""The writer's interface every store backend implements, and the graph setting.

The interface mirrors OpenTelemetry's ``SpanExporter``: ``export`` takes a batch and returns
success or failure and never raises into the caller; ``force_flush`` and ``shutdown``
behave as the SDK's do.  The processor calls it from its worker thread only, never
from the agent's.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_GRAPH

if TYPE_CHECKING:
    from otel_prov.prov._record import ProvRecord

__all__ = ["DEFAULT_GRAPH", "ExportResult", "ProvExporter", "graph_term"]


class ExportResult(enum.Enum):
    SUCCESS = 0
    FAILURE = 1


class ProvExporter(abc.ABC):
    """Receives the PROV-O triples of finished agent sessions and stores them."""

    delivers_in_background: bool = False
    """``export`` only keeps the records durably and a thread of the exporter's own stores
    them (``force_flush`` waits for it): a caller with many records may hand them over as
    they are made, so that storing starts at once.  ``False``: ``export`` stores them
    itself, and one large call may cost less than many small ones."""

    can_retract: bool = False
    """``export`` takes back each record's ``retracted`` triples before it adds the record's
    own (see ``ProvRecord.retracted``).  Only such an exporter is given the steps of runs
    still open (streaming): the end of a run may take back what they wrote."""

    @property
    def writers_directory(self) -> Path | None:
        """Where the writers of this destination on this machine keep their lock files
        (``processing._liveness``), so that the next writer can tell a run left open by
        a writer that is gone; ``None``: not known here (such runs wait for the session
        timeout)."""
        return None

    @abc.abstractmethod
    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        """Store ``records``.  Must not raise; report failure through the result."""

    def describe(self) -> str:
        """Where the provenance goes, for people (no credentials)."""
        return type(self).__name__

    def tick(self) -> None:  # noqa: B027 - optional hook
        """Work that does not come through ``export``; the processor's worker calls it at
        every cycle, on its own thread, so an exporter needs no thread for it (the
        embedded store loads what other processes parked).  Must not raise, and should
        return at once when there is nothing to do."""

    def waiting(self) -> int:
        """Batches kept on disk that the store has not taken yet (spooled or parked)."""
        return 0

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Deliver anything buffered; ``True`` when it all went out within the timeout."""
        return True

    def shutdown(self) -> None:  # noqa: B027 - optional hook, as in SpanExporter
        """Flush and release resources; later exports fail."""

    def cannot_remove(self) -> str | None:
        """Why :meth:`remove` cannot work here, for people; ``None`` when it can.  Asked
        before anything is written that a removal must follow (a prune's tombstones)."""
        return f"{self.describe()} cannot remove what it stored"

    def remove(self, graph: str, subjects: Sequence[str]) -> bool:
        """Remove every triple of ``subjects`` (plain IRIs) in ``graph`` (an IRI term) at
        once, nothing spooled or parked (``otel-prov prune``).  ``False`` when it could not
        (logged); never raises."""
        return False


DEFAULT_GRAPH = "urn:otel-prov:graph"
"""The named graph provenance goes to unless ``graph=`` or ``OTEL_PROV_GRAPH`` says otherwise."""


def graph_term(graph: str | None) -> str:
    """The provenance graph as an IRI term, from the argument, ``OTEL_PROV_GRAPH`` or the default.

    Raises ``ValueError`` naming the bad IRI: a graph name is constructor input, and
    writing to the wrong graph silently would lose the user's data.
    """
    # The IRI rules (and pyoxigraph under them) load with the first graph named, not with
    # the interface: ``import otel_prov.exporters`` stays cheap (docs/design.md).
    from otel_prov.prov._rdf import InvalidIRIError, iri

    value = graph or env_str(OTEL_PROV_GRAPH, DEFAULT_GRAPH) or DEFAULT_GRAPH
    try:
        return iri(value)
    except InvalidIRIError as exc:
        raise ValueError(
            f"invalid provenance graph IRI ({OTEL_PROV_GRAPH} or graph=): {exc}"
        ) from exc
