"""The interface every provenance exporter implements.

It mirrors OpenTelemetry's ``SpanExporter``: ``export`` takes a batch and returns
success or failure and never raises into the caller; ``force_flush`` and ``shutdown``
behave as the SDK's do.  The processor calls it from its worker thread only, never
from the agent's.  It lives in the core (re-exported by ``otel_prov.exporters``) because
the processor depends on it and the exporters depend on the processor's package.
"""

from __future__ import annotations

import abc
import enum
from collections.abc import Sequence

from otel_prov._record import ProvRecord

__all__ = ["ExportResult", "ProvExporter"]


class ExportResult(enum.Enum):
    SUCCESS = 0
    FAILURE = 1


class ProvExporter(abc.ABC):
    """Receives the PROV-O triples of finished agent sessions and stores them."""

    @abc.abstractmethod
    def export(self, records: Sequence[ProvRecord]) -> ExportResult:
        """Store ``records``.  Must not raise; report failure through the result."""

    def chain_heads(self) -> dict[str, dict[str, str]]:
        """The newest bundle of each agent already stored, so that a new process continues
        the agents' bundle chains: agent IRI term -> ``{"bundle": IRI term, "hash": ...}``.
        Destinations that cannot be read back return nothing (chains start afresh)."""
        return {}

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """Deliver anything buffered; ``True`` when it all went out within the timeout."""
        return True

    def shutdown(self) -> None:  # noqa: B027 - optional hook, as in SpanExporter
        """Flush and release resources; later exports fail."""
