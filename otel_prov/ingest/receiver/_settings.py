"""What the receiver is given: its directory, and the limits of its journal and trace buffer.

Apart from :mod:`~otel_prov.ingest.receiver._receiver` so that the trace buffer reads its
limits here too, rather than have them copied into it one by one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from otel_prov._settings import env_bool, env_float, env_int, env_str
from otel_prov._tls import TlsFiles
from otel_prov.environment_variables import (
    OTEL_PROV_MAX_PENDING_SPANS,
    OTEL_PROV_RECEIVER_CLIENT_CA,
    OTEL_PROV_RECEIVER_DIR,
    OTEL_PROV_RECEIVER_FSYNC,
    OTEL_PROV_RECEIVER_TLS_CERT,
    OTEL_PROV_RECEIVER_TLS_KEY,
    OTEL_PROV_SESSION_TIMEOUT,
    OTEL_PROV_STREAM,
    OTEL_PROV_TRACE_IDLE,
)
from otel_prov.processing._pipeline import STREAM_DEFAULT

__all__ = ["DEFAULT_DATA_DIR", "DEFAULT_TRACE_IDLE", "ReceiverSettings", "tls_from_settings"]

DEFAULT_DATA_DIR = ".otel-prov/receiver"
DEFAULT_TRACE_IDLE = 5.0
_DEFAULT_SESSION_TIMEOUT = 600.0
_DEFAULT_MAX_PENDING = 500_000


@dataclass(frozen=True)
class ReceiverSettings:
    """What the receiver is given; :meth:`from_settings` fills it the SDK way."""

    data_dir: Path
    trace_idle: float = DEFAULT_TRACE_IDLE
    """Seconds without a new span of a trace before it is mapped."""
    fsync: bool = True
    """Make each request durable on disk before acknowledging it (else: in the OS cache,
    which survives the process, not the machine)."""
    session_timeout: float = _DEFAULT_SESSION_TIMEOUT
    """A trace open this long (spans still coming) is mapped as it stands."""
    retain: float = 120.0
    """Seconds a mapped trace's spans are kept for spans of it that come late."""
    max_pending_spans: int = _DEFAULT_MAX_PENDING
    """Spans buffered and not yet stored past which requests are refused (429)."""
    max_open_traces: int = 50_000
    max_spans_per_trace: int = 20_000
    max_journal_bytes: int = 4 << 30
    stream: bool = True
    """Record the steps of a trace still open as they come (``prov._stream``)."""

    @classmethod
    def from_settings(
        cls,
        *,
        data_dir: str | os.PathLike[str] | None = None,
        trace_idle: float | None = None,
        fsync: bool | None = None,
        stream: bool | None = None,
    ) -> ReceiverSettings:
        """Arguments first, else ``OTEL_PROV_RECEIVER_DIR``, ``OTEL_PROV_TRACE_IDLE``,
        ``OTEL_PROV_RECEIVER_FSYNC``, ``OTEL_PROV_SESSION_TIMEOUT`` and
        ``OTEL_PROV_MAX_PENDING_SPANS`` and ``OTEL_PROV_STREAM``, else the defaults."""
        directory = data_dir or env_str(OTEL_PROV_RECEIVER_DIR, DEFAULT_DATA_DIR)
        return cls(
            data_dir=Path(directory or DEFAULT_DATA_DIR),
            trace_idle=trace_idle or env_float(OTEL_PROV_TRACE_IDLE, DEFAULT_TRACE_IDLE),
            fsync=fsync if fsync is not None else env_bool(OTEL_PROV_RECEIVER_FSYNC, True),
            session_timeout=env_float(OTEL_PROV_SESSION_TIMEOUT, _DEFAULT_SESSION_TIMEOUT),
            max_pending_spans=env_int(OTEL_PROV_MAX_PENDING_SPANS, _DEFAULT_MAX_PENDING),
            stream=stream if stream is not None else env_bool(OTEL_PROV_STREAM, STREAM_DEFAULT),
        )


def tls_from_settings(
    cert: Path | None = None, key: Path | None = None, client_ca: Path | None = None
) -> TlsFiles | None:
    """The receiver's TLS files: each argument (a flag) first, else
    ``OTEL_PROV_RECEIVER_TLS_CERT``, ``..._TLS_KEY``, ``..._CLIENT_CA``; None: plaintext.
    ``ValueError`` for a half-given pair or a file that is not there."""
    return TlsFiles.of(
        cert or env_str(OTEL_PROV_RECEIVER_TLS_CERT),
        key or env_str(OTEL_PROV_RECEIVER_TLS_KEY),
        client_ca or env_str(OTEL_PROV_RECEIVER_CLIENT_CA),
    )
