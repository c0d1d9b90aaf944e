"""Ed25519 keys: made by ``otel-prov keygen``, used by every writer to sign, and by
``verify --trust`` to check.

The cryptography is the ``cryptography`` package's (``otel-prov[sign]``); nothing here
does any of its own.  A key is named by its public half, ``ed25519:<64 hex digits>`` (the
raw public key): what a bundle records in ``oprov:signedBy``, and what ``--trust`` compares.
The private key never leaves :class:`KeySigner`: no message, log line or ``repr`` holds it.
"""

from __future__ import annotations

import base64
import binascii
import logging
import os
import stat
import threading
from pathlib import Path

from otel_prov._extras import needs_extra
from otel_prov._files import SECRET_MODE, refuse_link, write_file

__all__ = [
    "KEY_FILE",
    "PUBLIC_FILE",
    "PUBLIC_MODE",
    "KeySigner",
    "SigningKeyError",
    "generate_key_pair",
    "public_key_id",
    "public_key_pem",
    "signature_valid",
]

KEY_FILE = "signing.key"
PUBLIC_FILE = "signing.pub"
PUBLIC_MODE = 0o644
_PREFIX = "ed25519:"

_logger = logging.getLogger(__name__)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def _warn_if_others_read(path: Path, mode: int) -> None:
    """A private key group or others may read is no secret any more: said once a file (as
    ssh does, which refuses it; a writer must not stop the agent for it, so it warns)."""
    if not mode & (stat.S_IRWXG | stat.S_IRWXO):
        return
    with _warned_lock:
        if str(path) in _warned:
            return
        _warned.add(str(path))
    _logger.warning(
        "the signing key %s can be read by others (mode %s): anyone who reads it can sign "
        "as this writer; make it the owner's alone: chmod 600 %s",
        path,
        oct(stat.S_IMODE(mode))[2:].zfill(4),
        path,
    )


class SigningKeyError(ValueError):
    """A key that cannot be used; the message (one line) says which file and why, never
    what it holds."""


def generate_key_pair(directory: Path) -> tuple[Path, Path]:
    """Write a new key pair into ``directory``: ``signing.key`` (PKCS #8 PEM, mode 0600,
    created so: never readable by others, not even for an instant) and ``signing.pub``
    (SubjectPublicKeyInfo PEM, mode 0644: it is for everyone), each written whole or not
    at all.  Refuses to replace a key (``FileExistsError``) and to write through a
    symbolic link (``OSError``)."""
    with needs_extra("sign", "otel-prov keygen"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    key = Ed25519PrivateKey.generate()
    directory.mkdir(parents=True, exist_ok=True)
    private = directory / KEY_FILE
    public = directory / PUBLIC_FILE
    for path in (private, public):
        refuse_link(path)
        if os.path.lexists(path):
            raise FileExistsError(str(path))
    secret = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        write_file(private, secret, mode=SECRET_MODE)
        write_file(
            public,
            key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            ),
            mode=PUBLIC_MODE,
        )
    except FileExistsError as exc:
        raise FileExistsError(exc.filename or str(private)) from None
    return private, public


def _key_id(raw: bytes) -> str:
    return _PREFIX + raw.hex()


class KeySigner:
    """Signs with the Ed25519 private key read from a file (see ``_chain.Signer``)."""

    def __init__(self, path: Path) -> None:
        """Raises :class:`SigningKeyError` for a file missing, unreadable, or not an
        unencrypted Ed25519 private key; :class:`~otel_prov._extras.MissingExtraError`
        without ``cryptography``."""
        with needs_extra("sign", "signing (OTEL_PROV_SIGNING_KEY)"):
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
        try:
            with path.open("rb") as source:
                data = source.read()
                mode = os.fstat(source.fileno()).st_mode
        except OSError as exc:
            raise SigningKeyError(
                f"cannot read the signing key {path}: {exc.strerror or type(exc).__name__}"
            ) from None
        _warn_if_others_read(path, mode)
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            raise SigningKeyError(
                f"the signing key {path} is not an unencrypted PEM private key "
                "(otel-prov keygen writes one)"
            ) from None
        if not isinstance(key, Ed25519PrivateKey):
            raise SigningKeyError(f"the signing key {path} is not an Ed25519 key")
        self._key = key
        raw = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )
        self._key_id = _key_id(raw)

    @property
    def key_id(self) -> str:
        return self._key_id

    def sign(self, data: bytes) -> str:
        return base64.b64encode(self._key.sign(data)).decode()

    def __repr__(self) -> str:
        return f"KeySigner({self._key_id})"


def public_key_id(path: Path) -> str:
    """The key id of the public key in ``path`` (``signing.pub``, PEM); raises
    :class:`SigningKeyError`."""
    with needs_extra("sign", "checking signatures (--trust)"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as exc:
        raise SigningKeyError(
            f"cannot read the public key {path}: {exc.strerror or type(exc).__name__}"
        ) from None
    except ValueError:
        raise SigningKeyError(f"{path} is not a PEM public key (signing.pub)") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(f"{path} is not an Ed25519 public key")
    return _key_id(key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw))


def public_key_pem(key_id: str) -> bytes:
    """The public key ``key_id`` names as ``signing.pub`` holds it (SubjectPublicKeyInfo
    PEM): a key id is the raw public key, so the two say the same.  Raises ``ValueError``
    for an id that is not an Ed25519 key's."""
    with needs_extra("sign", "writing public keys"):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    if not key_id.startswith(_PREFIX):
        raise ValueError(f"not an Ed25519 key id: {key_id!r}")
    key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_id.removeprefix(_PREFIX)))
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def signature_valid(key_id: str, data: bytes, signature: str) -> bool:
    """Whether ``signature`` (base64) is the Ed25519 signature of ``data`` by ``key_id``."""
    with needs_extra("sign", "checking signatures (--trust)"):
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    try:
        key = Ed25519PublicKey.from_public_bytes(bytes.fromhex(key_id.removeprefix(_PREFIX)))
        key.verify(base64.b64decode(signature, validate=True), data)
    except (InvalidSignature, ValueError, binascii.Error):
        return False
    return True
