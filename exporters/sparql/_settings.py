"""The SPARQL backend's settings: the endpoints (the query endpoint beside an update
endpoint), the headers, the spool directory, and a URL fit to show.

Light on purpose (no HTTP client): the registry and the CLI read these to tell whether a
SPARQL store is asked for and where, before anything of the backend itself loads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from otel_prov._settings import env_str
from otel_prov.environment_variables import (
    OTEL_PROV_SPARQL_HEADERS,
    OTEL_PROV_SPARQL_QUERY_ENDPOINT,
    OTEL_PROV_SPOOL_DIR,
)

__all__ = [
    "DEFAULT_SPOOL_DIR",
    "default_query_endpoint",
    "query_endpoint_from_settings",
    "redact_url",
    "sparql_headers",
    "spool_dir_from_settings",
]

DEFAULT_SPOOL_DIR = ".otel-prov/spool"
"""Where batches wait for the SPARQL store unless ``spool_dir=`` or ``OTEL_PROV_SPOOL_DIR``
says otherwise."""


def spool_dir_from_settings(spool_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where the SPARQL exporter spools: ``spool_dir``, else ``OTEL_PROV_SPOOL_DIR``, else
    the documented default."""
    return Path(spool_dir or env_str(OTEL_PROV_SPOOL_DIR, DEFAULT_SPOOL_DIR) or ".")


def sparql_headers(value: str | None = None) -> dict[str, str]:
    """Headers from ``OTEL_PROV_SPARQL_HEADERS`` (or ``value``), OTLP syntax."""
    # The OpenTelemetry parser of OTLP headers loads when headers are read (16 ms).
    from opentelemetry.util.re import parse_env_headers

    raw = value if value is not None else env_str(OTEL_PROV_SPARQL_HEADERS, "") or ""
    return dict(parse_env_headers(raw, liberal=True))


_SECRET_NAME = re.compile(
    r"auth|credential|jwt|key|pass|pwd|secret|session|sig|token", re.IGNORECASE
)
"""Query parameter names whose values are kept out of messages: ``access_token``,
``api_key``, ``x-api-key``, ``password``, ``X-Amz-Signature``, ``X-Amz-Credential`` and
whatever else holds one of these (an over-redacted URL in a log costs nothing)."""
_REDACTED = "REDACTED"


_UPDATE_SEGMENT = re.compile(r"/update(?=/|$)")


def default_query_endpoint(update_endpoint: str) -> str:
    """The update endpoint with the last ``/update`` of its path replaced by ``/query``:
    Oxigraph and Fuseki answer queries beside updates (``/ds/update``, ``/ds/query``);
    a URL without one is its own query endpoint (Virtuoso's ``/sparql``)."""
    parts = urlsplit(update_endpoint)
    found = list(_UPDATE_SEGMENT.finditer(parts.path))
    if not found:
        return update_endpoint
    last = found[-1]
    path = f"{parts.path[: last.start()]}/query{parts.path[last.end() :]}"
    return urlunsplit(parts._replace(path=path))


def query_endpoint_from_settings(
    update_endpoint: str | None, query_endpoint: str | None = None
) -> str | None:
    """Where what is written to ``update_endpoint`` is read back: ``query_endpoint``, else
    ``OTEL_PROV_SPARQL_QUERY_ENDPOINT``, else :func:`default_query_endpoint`; ``None``
    when none of them is set.  The one rule, for the exporters as for the CLI."""
    chosen = query_endpoint or env_str(OTEL_PROV_SPARQL_QUERY_ENDPOINT)
    if chosen:
        return chosen
    return default_query_endpoint(update_endpoint) if update_endpoint else None


def redact_url(url: str) -> str:
    """The URL as it may be shown: without user info (``https://user:secret@host`` ->
    ``https://host``), and with the value of every secret-looking query (or fragment)
    parameter replaced by ``REDACTED``, its name kept (``?access_token=REDACTED``)."""
    parts = urlsplit(url)
    redacted = parts._replace(
        query=_redact_parameters(parts.query), fragment=_redact_parameters(parts.fragment)
    )
    if parts.username is not None or parts.password is not None:
        host = parts.hostname or ""
        redacted = redacted._replace(netloc=f"{host}:{parts.port}" if parts.port else host)
    return url if redacted == parts else urlunsplit(redacted)


def _redact_parameters(text: str) -> str:
    """``name=value`` pairs (split at ``&`` and at ``;``, which some servers also take)
    with the values of secret-looking names replaced; the rest byte for byte."""
    pieces = re.split(r"([&;])", text)
    for index in range(0, len(pieces), 2):
        name, equals, _ = pieces[index].partition("=")
        if equals and _SECRET_NAME.search(unquote_plus(name)):
            pieces[index] = f"{name}={_REDACTED}"
    return "".join(pieces)
