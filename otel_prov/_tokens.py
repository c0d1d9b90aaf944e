"""Bearer tokens of the servers (``receive``, ``serve``): compared in constant time, never
shown.

The receiver's comes from ``--token-file`` or ``OTEL_PROV_RECEIVER_TOKEN``; the
Collector's OTLP exporters send it with ``headers: {authorization: "Bearer <token>"}``,
the SDK's with ``OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20<token>``.  A reader
of ``serve`` sends its own, or types it into the login form once.
"""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["BearerToken", "token_digest"]


def token_digest(token: str) -> bytes:
    """The SHA-256 a token is kept as where several are looked up (a reader's, a
    tenant's): the digest of a guess says nothing of how near it came."""
    return hashlib.sha256(token.strip().encode("utf-8", "replace")).digest()


class BearerToken:
    """Checks ``Authorization`` values; its ``repr`` and ``str`` hide the token."""

    __slots__ = ("_expected",)

    def __init__(self, token: str) -> None:
        token = token.strip()
        if not token or any(c.isspace() for c in token):
            raise ValueError("a bearer token must be one word, not empty")
        self._expected = f"Bearer {token}".encode()

    def matches(self, authorization: str | None) -> bool:
        """Is ``authorization`` (the header or metadata value) ``Bearer <token>``?"""
        given = (authorization or "").strip().encode("utf-8", "replace")
        return hmac.compare_digest(given, self._expected)

    def is_token(self, token: str) -> bool:
        """Is ``token`` (as typed into a form) this token?"""
        return self.matches(f"Bearer {token.strip()}")

    def __repr__(self) -> str:
        return "BearerToken(<hidden>)"

    __str__ = __repr__
