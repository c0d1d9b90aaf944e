"""TLS for the servers otel-prov runs (``receive``'s OTLP/gRPC and OTLP/HTTP, ``serve``):
the three files a user gives, checked once, and a refused handshake said in the log.

``--tls-cert`` and ``--tls-key`` make a server speak TLS; ``--client-ca`` makes it
mutual: a client must show a certificate that CA signed.  A handshake that fails (a
plaintext client, one without a certificate, one whose certificate another CA signed)
is refused by OpenSSL before any request is read, and asyncio says nothing of it unless
its debug mode is on; :class:`_LoggedHandshake` says it, at WARNING, with OpenSSL's
reason, so that an operator sees why a client gets nowhere.

Under mutual TLS a client's certificate can stand for a tenant (``"subjects"`` of the
tenants file): its subject, a distinguished name in the one spelling of
:func:`canonical_subject` (RFC 4514, as ``openssl x509 -noout -subject -nameopt RFC2253``
prints it).  grpcio gives it in a call's auth context; uvicorn gives an application no
peer certificate (Kludex/uvicorn#745, the ASGI TLS extension is not in it), so
:func:`uvicorn_options` runs uvicorn's own HTTP protocol with the ASGI TLS extension
added (``scope["extensions"]["tls"]["client_cert_name"]``), read by
:func:`client_subject`.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "TlsFiles",
    "canonical_subject",
    "client_subject",
    "handshake_logging",
    "subject_of",
    "uvicorn_options",
]

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

    def uvicorn_options(self, server: str) -> dict[str, Any]:
        """``uvicorn.Config`` options for TLS as ``server``: the context of
        :meth:`server_context`, and with a client CA the HTTP protocol that tells the app
        the client certificate's subject (:func:`client_subject`)."""
        context = self.server_context(server)
        options: dict[str, Any] = {"ssl_context_factory": lambda config, default: context}
        if self.client_ca is not None:
            options["http"] = _peer_protocol()
        return options


def uvicorn_options(tls: TlsFiles | None, server: str) -> dict[str, Any]:
    """:meth:`TlsFiles.uvicorn_options`, none without TLS."""
    return {} if tls is None else tls.uvicorn_options(server)


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


# Attribute types as OpenSSL's RFC 2253 printing names them (grpcio's x509_subject), for
# the long names Python's getpeercert() gives and those a user may write.
_SHORT_TYPES = {
    "commonname": "CN",
    "countryname": "C",
    "localityname": "L",
    "stateorprovincename": "ST",
    "streetaddress": "STREET",
    "organizationname": "O",
    "organizationalunitname": "OU",
    "domaincomponent": "DC",
    "userid": "UID",
    "surname": "SN",
    "givenname": "GN",
}
_SPECIAL = frozenset(',+"\\<>;=')

_Rdn = tuple[tuple[str, str], ...]


def canonical_subject(text: str) -> str:
    """A distinguished name (RFC 4514, most specific first: ``CN=team-a,O=Example``) in
    one spelling: attribute types upper case and short (``commonName`` is ``CN``), no
    spaces around ``=`` and ``,``, escapes as RFC 4514 has them, the values of a
    multi-valued RDN in order.  ``ValueError`` for text that is no distinguished name."""
    rdns: list[_Rdn] = []
    for rdn in _split(text, ","):
        pairs = []
        for pair in _split(rdn, "+"):
            kind, equals, value = pair.partition("=")
            kind = kind.strip()
            if not equals or not kind or not kind.replace("-", "").replace(".", "").isalnum():
                raise ValueError(f"{text!r} is no certificate subject (such as CN=team-a)")
            pairs.append((kind, _unescape(_strip(value))))
        rdns.append(_rdn(pairs))
    if not rdns or any(not value for rdn in rdns for _, value in rdn):
        raise ValueError(f"{text!r} is no certificate subject (such as CN=team-a)")
    return _spelled(rdns)


def subject_of(peercert: Mapping[str, Any]) -> str:
    """The subject of a certificate as ``ssl.SSLObject.getpeercert()`` gives it (its RDNs
    in the certificate's order, root first), in :func:`canonical_subject`'s spelling."""
    rdns = [_rdn(list(rdn)) for rdn in peercert.get("subject", ())]
    return _spelled(list(reversed(rdns)))


def client_subject(scope: Mapping[str, Any]) -> str | None:
    """The subject of the client certificate of an ASGI request (None: none shown)."""
    tls = (scope.get("extensions") or {}).get("tls") or {}
    name = tls.get("client_cert_name")
    return name if isinstance(name, str) else None


def _rdn(pairs: list[tuple[str, str]]) -> _Rdn:
    return tuple(
        sorted((_SHORT_TYPES.get(kind.lower(), kind.upper()), value) for kind, value in pairs)
    )


def _spelled(rdns: list[_Rdn]) -> str:
    return ",".join("+".join(f"{kind}={_escape(value)}" for kind, value in rdn) for rdn in rdns)


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at each ``separator`` not escaped by a backslash."""
    parts, start, index = [], 0, 0
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == separator:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:])
    return parts


def _strip(value: str) -> str:
    """``value`` without the spaces around it, an escaped last space kept."""
    stripped = value.strip()
    if stripped.endswith("\\") and (len(stripped) - len(stripped.rstrip("\\"))) % 2:
        stripped += " "
    return stripped


def _unescape(value: str) -> str:
    out, index = bytearray(), 0
    while index < len(value):
        char = value[index]
        if char != "\\":
            out += char.encode()
            index += 1
            continue
        pair = value[index + 1 : index + 3]
        if len(pair) == 2 and all(c in "0123456789abcdefABCDEF" for c in pair):
            out.append(int(pair, 16))
            index += 3
        elif index + 1 < len(value):
            out += value[index + 1].encode()
            index += 2
        else:
            raise ValueError(f"a subject's value ends in a lone backslash: {value!r}")
    return out.decode("utf-8", "replace")


def _escape(value: str) -> str:
    escaped = "".join(f"\\{c}" if c in _SPECIAL else c for c in value)
    if escaped.startswith(("#", " ")):
        escaped = "\\" + escaped
    if escaped.endswith(" "):
        escaped = escaped[:-1] + "\\ "
    return escaped


class _ClientCertificate:
    """An ASGI app with the ASGI TLS extension of its connection's client certificate."""

    def __init__(self, app: Any, tls: Mapping[str, Any]) -> None:
        self.app = app
        self.tls = tls

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        scope["extensions"] = {**(scope.get("extensions") or {}), "tls": self.tls}
        await self.app(scope, receive, send)


def _peer_protocol() -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol (httptools or h11, as uvicorn picks), whose connections
    give their app the client certificate: read once per connection, after the
    handshake that verified it."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    class PeerCertificateProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
        app: Any  # uvicorn's, set in its __init__

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            ssl_object = transport.get_extra_info("ssl_object")
            peercert = None if ssl_object is None else ssl_object.getpeercert()
            if peercert:
                der = ssl_object.getpeercert(binary_form=True)
                self.app = _ClientCertificate(
                    self.app,
                    {
                        "server_cert": None,
                        "client_cert_chain": [ssl.DER_cert_to_PEM_cert(der)],
                        "client_cert_name": subject_of(peercert),
                        "client_cert_error": None,
                        "tls_version": None,
                        "cipher_suite": None,
                    },
                )

    return PeerCertificateProtocol
