"""The receiver's optional bearer token: compared in constant time, never shown.

It comes from ``--token-file`` or ``OTEL_PROV_RECEIVER_TOKEN``; the Collector's OTLP
exporters send it with ``headers: {authorization: "Bearer <token>"}``, the SDK's with
``OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20<token>``.
"""

from __future__ import annotations

import hmac

__all__ = ["BearerToken"]


class BearerToken:
    """Checks ``Authorization`` values; its ``repr`` and ``str`` hide the token."""

    __slots__ = ("_expected",)

    def __init__(self, token: str) -> None:
        token = token.strip()
        if not token or any(c.isspace() for c in token):
            raise ValueError("the receiver's bearer token must be one word, not empty")
        self._expected = f"Bearer {token}".encode()

    def matches(self, authorization: str | None) -> bool:
        """Is ``authorization`` (the header or metadata value) ``Bearer <token>``?"""
        given = (authorization or "").strip().encode("utf-8", "replace")
        return hmac.compare_digest(given, self._expected)

    def __repr__(self) -> str:
        return "BearerToken(<hidden>)"

    __str__ = __repr__
