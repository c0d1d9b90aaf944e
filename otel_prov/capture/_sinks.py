"""Whether anything in this process turns the spans we record into provenance.

An instrumentor on its own records spans and nothing more: without a
:class:`~otel_prov.ProvSpanProcessor` (``configure()``, or added to a ``TracerProvider``)
the agent runs, nothing is stored, and ``otel-prov sessions`` later says to "run an
instrumented agent first", which the user just did.  Processors register here when they
are made; the first agent session recorded with none alive logs one warning saying what
is missing, unless ``OTEL_PROV_PROVENANCE=false`` says that none is wanted here (an agent
that only exports OTLP to a Collector-side ``otel-prov receive``).
"""

from __future__ import annotations

import logging
import threading
import weakref

from otel_prov._settings import env_bool
from otel_prov.environment_variables import OTEL_PROV_PROVENANCE

__all__ = ["register_provenance_sink", "warn_if_nothing_records"]

_logger = logging.getLogger("otel_prov")
_sinks: weakref.WeakSet[object] = weakref.WeakSet()
_lock = threading.Lock()
_warned = False


def register_provenance_sink(sink: object) -> None:
    """Called by every provenance processor when it is made."""
    with _lock:
        _sinks.add(sink)


def warn_if_nothing_records(what: str) -> None:
    """Once per process: ``what`` (an agent session) was recorded with no processor alive."""
    global _warned
    if _warned or _sinks or not env_bool(OTEL_PROV_PROVENANCE, True):
        return
    with _lock:
        if _warned or _sinks:
            return
        _warned = True
    _logger.warning(
        "%s was recorded, but no otel_prov.ProvSpanProcessor exists in this process, so no "
        "provenance is stored: call otel_prov.configure() at start-up, or add "
        "ProvSpanProcessor(OxigraphStoreExporter()) to your TracerProvider (or run under "
        "opentelemetry-instrument with OTEL_TRACES_EXPORTER=otlp,prov); if an otel-prov "
        "receive behind your Collector stores it, set OTEL_PROV_PROVENANCE=false",
        what,
    )
