"""When the OTel HTTP conventions make a span an error: its response status code.

An HTTP span whose instrumentation left its status unset is still an error under those
conventions when its response failed; the mapper asks :func:`failed_http_status`.  Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["HTTP_STATUS_KEYS", "failed_http_status"]


HTTP_STATUS_KEYS = ("http.response.status_code", "http.status_code")
"""The OTel HTTP conventions' response status code: the current key, then the older one."""


def failed_http_status(kind: str, attributes: Mapping[str, Any]) -> int | None:
    """The HTTP status code that makes a span an error under the OTel HTTP conventions,
    else None: 5xx on a server span (a 4xx is the client's mistake, not the server's), 4xx
    or 5xx on a client span."""
    if kind not in ("client", "server"):
        return None
    value = next((attributes[k] for k in HTTP_STATUS_KEYS if attributes.get(k) is not None), None)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if (500 if kind == "server" else 400) <= value <= 599 else None
