"""``configure()``: one call that sets up tracing with provenance (and OTLP when asked)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from opentelemetry import trace
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

from otel_prov._settings import env_bool, env_str
from otel_prov.capture import _content
from otel_prov.capture._redaction import RedactingSpanExporter
from otel_prov.capture._sinks import register_provenance_sink
from otel_prov.environment_variables import (
    OTEL_PROV_BACKEND,
    OTEL_PROV_PROVENANCE,
    OTEL_PROV_STORE,
    OTEL_PROV_TENANT,
    OTEL_PROV_WAL_DIR,
)
from otel_prov.exporters import ProvExporter
from otel_prov.exporters._registry import UnknownBackendError
from otel_prov.processing._processor import ProvSpanProcessor
from otel_prov.setup._destination import StoreOptions, exporter_from_settings, stored_runs

_logger = logging.getLogger("otel_prov")

__all__ = ["DEFAULT_WAL_DIR", "ProvHandle", "configure"]

DEFAULT_WAL_DIR = ".otel-prov/wal"
"""Where configure() keeps the write-ahead log of tool calls (``OTEL_PROV_WAL_DIR``)."""


_OTLP_ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")


@dataclass(frozen=True)
class ProvHandle:
    """What :func:`configure` built; flush or shut it all down through it."""

    tracer_provider: TracerProvider
    processor: ProvSpanProcessor | None
    """None with ``provenance=False``: OTLP only."""
    exporter: ProvExporter | None
    unrecorded: bool = False
    """Provenance was asked for and its store could not be opened (logged at start)."""

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        """True once every finished span is exported, provenance included: never while
        the provenance that was asked for is not being recorded."""
        return self.tracer_provider.force_flush(timeout_millis) and not self.unrecorded

    def shutdown(self) -> None:
        self.tracer_provider.shutdown()


def _otlp_processor() -> SpanProcessor:
    """OTLP export, its spans redacted on the way out when redaction is configured."""
    exporter = _otlp_exporter()
    if _content.redaction_active():
        exporter = RedactingSpanExporter(exporter)
    return BatchSpanProcessor(exporter)


def _otlp_exporter() -> SpanExporter:
    protocol = (
        env_str("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        or env_str("OTEL_EXPORTER_OTLP_PROTOCOL")
        or "http/protobuf"
    )
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
            OTLPSpanExporter as GrpcExporter,
        )

        return GrpcExporter()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    return OTLPSpanExporter()


def _exporter_or_none(settings: StoreOptions) -> ProvExporter | None:
    """The exporter the settings ask for.  A store that cannot be opened (a file where its
    directory should be, no permission), or a backend name that is none, is the caller's
    mistake when given as ``store=`` or ``backend=`` (``ValueError``); set in the
    environment, it is logged and the process records no provenance, for telemetry must
    not stop the agent from starting."""
    try:
        return exporter_from_settings(settings)
    except UnknownBackendError as exc:
        if settings.backend is not None:
            raise
        _logger.error(
            "no provenance is recorded in this process, and force_flush() says so: %s (%s=%s)",
            exc,
            OTEL_PROV_BACKEND,
            env_str(OTEL_PROV_BACKEND),
        )
        return None
    except OSError as exc:
        if settings.store is not None:
            raise ValueError(
                f"store={str(settings.store)!r} cannot be opened as a store: {exc}"
            ) from exc
        # The exporter's error names the path; the variable, if set, is what to change.
        where = env_str(OTEL_PROV_STORE)
        _logger.error(
            "no provenance is recorded in this process, and force_flush() says so: %s%s",
            exc,
            f" ({OTEL_PROV_STORE}={where})" if where else "",
        )
        return None


def configure(
    *,
    service_name: str | None = None,
    backend: str | None = None,
    store: str | os.PathLike[str] | None = None,
    sparql_update_endpoint: str | None = None,
    sparql_query_endpoint: str | None = None,
    sparql_headers: Mapping[str, str] | None = None,
    spool_dir: str | os.PathLike[str] | None = None,
    graph: str | None = None,
    sparql_graph_store_endpoint: str | None = None,
    tenant: str | None = None,
    exporter: ProvExporter | None = None,
    otlp: bool | None = None,
    capture_content: bool | None = None,
    session_timeout: float | None = None,
    max_pending_spans: int | None = None,
    wal_dir: str | os.PathLike[str] | None = None,
    wal_fsync: bool | None = None,
    blob_dir: str | os.PathLike[str] | None = None,
    blob_threshold: int | None = None,
    prices: str | os.PathLike[str] | None = None,
    signing_key: str | os.PathLike[str] | None = None,
    checkpoint_file: str | os.PathLike[str] | None = None,
    stream: bool | None = None,
    provenance: bool | None = None,
    redact: Callable[[str], str] | None = None,
    redact_patterns: Sequence[str] = (),
    set_global: bool = True,
) -> ProvHandle:
    """Build a ``TracerProvider`` that records provenance, install it, and return a handle.

    Provenance goes to ``exporter`` if given; else to the store backend ``backend`` names
    (``OTEL_PROV_BACKEND``: ``embedded``, ``sparql``, ``file``, or one an installed package
    registers, see :mod:`otel_prov.exporters._registry`); else to the SPARQL store at
    ``sparql_update_endpoint`` (``OTEL_PROV_SPARQL_UPDATE_ENDPOINT``; with
    ``sparql_query_endpoint``, ``sparql_headers``, ``spool_dir``,
    ``sparql_graph_store_endpoint`` and their variables) through
    a :class:`~otel_prov.exporters.SparqlUpdateExporter`; else to the embedded store at
    ``store`` (``OTEL_PROV_STORE``, default ``.otel-prov/store``); into ``graph``
    (``OTEL_PROV_GRAPH``), or with ``tenant`` (``OTEL_PROV_TENANT``) into that tenant's
    graph under it, which only that tenant's readers read.  Regular OTLP export is added
    when ``otlp=True``, or when ``otlp`` is left unset and ``OTEL_EXPORTER_OTLP_ENDPOINT``
    (or its ``_TRACES_`` form) is set; ``OTEL_EXPORTER_OTLP_PROTOCOL`` picks
    ``http/protobuf`` (default) or ``grpc``.  The resource comes from ``service_name``,
    ``OTEL_SERVICE_NAME`` and ``OTEL_RESOURCE_ATTRIBUTES``.  ``capture_content`` overrides
    ``OTEL_PROV_CAPTURE_CONTENT``.  ``redact_patterns`` (regular expressions, matches become
    ``[REDACTED]``; default ``OTEL_PROV_REDACT_PATTERNS``) and ``redact`` (text -> text,
    must be idempotent) clean every content
    value where it is set on a span, and every string attribute, event attribute and status
    message of every span (third-party instrumentations' included) on its way to the OTLP
    exporter and to the provenance, so neither ever holds the original.
    ``wal_dir``, ``wal_fsync``, ``blob_dir``, ``blob_threshold``, ``prices``,
    ``signing_key``, ``checkpoint_file`` and ``stream`` (and their ``OTEL_PROV_*``
    variables) are the :class:`~otel_prov.ProvSpanProcessor`'s.
    ``provenance=False`` (``OTEL_PROV_PROVENANCE=false``) records no provenance here, only
    OTLP: for agents behind a Collector whose ``otel-prov receive`` maps their traces.
    ``set_global=False`` leaves the global provider alone.
    """
    if capture_content is not None:
        _content.set_override(capture_content)
    redact_patterns = list(redact_patterns) or _content.patterns_from_environment()
    if redact is not None or redact_patterns:
        _content.set_redaction(redact, redact_patterns)
    resource = Resource.create({SERVICE_NAME: service_name} if service_name else {})
    provider = TracerProvider(resource=resource)
    if otlp or (otlp is None and any(env_str(name) for name in _OTLP_ENDPOINT_VARIABLES)):
        provider.add_span_processor(_otlp_processor())
    processor = None
    wanted = provenance if provenance is not None else env_bool(OTEL_PROV_PROVENANCE, True)
    if wanted and exporter is None:
        exporter = _exporter_or_none(
            StoreOptions(
                backend=backend,
                store=store,
                sparql_update_endpoint=sparql_update_endpoint,
                sparql_query_endpoint=sparql_query_endpoint,
                sparql_headers=sparql_headers,
                spool_dir=spool_dir,
                graph=graph,
                sparql_graph_store_endpoint=sparql_graph_store_endpoint,
                tenant=tenant or env_str(OTEL_PROV_TENANT),
            )
        )
    if wanted and exporter is not None:
        processor = ProvSpanProcessor(
            exporter,
            session_timeout=session_timeout,
            max_pending_spans=max_pending_spans,
            wal_dir=wal_dir or env_str(OTEL_PROV_WAL_DIR, DEFAULT_WAL_DIR),
            wal_fsync=wal_fsync,
            blob_dir=blob_dir,
            blob_threshold=blob_threshold,
            prices=prices,
            signing_key=signing_key,
            checkpoint_file=checkpoint_file,
            stream=stream,
            stored=stored_runs(exporter),
        )
        provider.add_span_processor(processor)
    else:
        # OTLP only: on purpose (a Collector-side receiver makes the provenance), or
        # because the store cannot be opened, which was logged.
        register_provenance_sink(provider)
    if set_global:
        trace.set_tracer_provider(provider)
    return ProvHandle(provider, processor, exporter, unrecorded=wanted and exporter is None)
