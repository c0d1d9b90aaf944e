"""TLS for the servers otel-prov runs (``receive``'s OTLP/gRPC and OTLP/HTTP, ``serve``):
the three files a user gives, checked once, and a refused handshake said in the log.

``--tls-cert`` and ``--tls-key`` make a server speak TLS; ``--client-ca`` makes it
mutual: a client must show a certificate that CA signed.  A handshake that fails (a
plaintext client, one without a certificate, one whose certificate another CA signed)
is refused by OpenSSL before any request is read, and asyncio says nothing of it unless
its debug mode is on; :class:`_LoggedHandshake` says it, at WARNING, with OpenSSL's
reason, so that an operator sees why a client gets nowhere.
"""

from __future__ import annotations

import logging
import ssl
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TlsFiles", "handshake_logging"]

_logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TlsFiles:
    """A server's certificate chain and key (PEM), and the CA its clients' certificates
    must come from (None: no client certificate asked for)."""

    cert: Path
    key: Path
    client_ca: Path | None = None

    @classmethod
    def of(
        cls, cert: str | Path | None, key: str | Path | None, client_ca: str | Path | None
    ) -> TlsFiles | None:
        """From the flags (or variables): None without a certificate; ``ValueError``
        naming what is missing or unreadable, so that a server never starts plaintext
        when TLS was meant."""
        if not cert and not key:
            if client_ca:
                raise ValueError("--client-ca needs --tls-cert and --tls-key (TLS) too")
            return None
        if not cert or not key:
            raise ValueError("--tls-cert and --tls-key go together: give both")
        files = cls(Path(cert), Path(key), Path(client_ca) if client_ca else None)
        for what, path in (("--tls-cert", files.cert), ("--tls-key", files.key)):
            if not path.is_file():
                raise ValueError(f"{what} {path} is not a readable file")
        if files.client_ca is not None and not files.client_ca.is_file():
            raise ValueError(f"--client-ca {files.client_ca} is not a readable file")
        return files

    def read(self) -> tuple[bytes, bytes, bytes | None]:
        """The certificate chain, the key and the client CA, as bytes (for grpcio)."""
        return (
            self.cert.read_bytes(),
            self.key.read_bytes(),
            None if self.client_ca is None else self.client_ca.read_bytes(),
        )

    def server_context(self, server: str) -> ssl.SSLContext:
        """A server context (TLS 1.2 and up) whose refused handshakes ``server`` logs."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
            if self.client_ca is not None:
                context.load_verify_locations(cafile=self.client_ca)
                context.verify_mode = ssl.CERT_REQUIRED
        except (ssl.SSLError, OSError) as exc:
            raise ValueError(f"cannot use the TLS files of {server}: {exc}") from exc
        return handshake_logging(context, server)


def handshake_logging(context: ssl.SSLContext, server: str) -> ssl.SSLContext:
    """``context``, whose connections log a refused handshake as ``server``'s."""
    context.sslobject_class = type("_LoggedHandshake", (_LoggedHandshake,), {"server": server})
    return context


_REASONS = {
    "HTTP_REQUEST": "the client spoke plaintext HTTP to a TLS port",
    "WRONG_VERSION_NUMBER": "the client did not speak TLS",
    "PEER_DID_NOT_RETURN_A_CERTIFICATE": "the client showed no certificate (--client-ca)",
    "CERTIFICATE_VERIFY_FAILED": "the client's certificate is not signed by --client-ca",
    "TLSV1_ALERT_UNKNOWN_CA": "the client does not trust the CA of this server's certificate",
}


class _LoggedHandshake(ssl.SSLObject):
    """An ``SSLObject`` (what asyncio's TLS runs on) that logs why a handshake failed."""

    server = "server"

    def do_handshake(self) -> None:
        try:
            super().do_handshake()
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise
        except ssl.SSLError as exc:
            reason = exc.reason or ""
            said = _REASONS.get(reason, "the TLS handshake failed")
            _logger.warning("%s refused a connection: %s (%s)", self.server, said, exc)
            raise
