"""Big payloads out of the graph: written once, content-addressed, a preview left behind.

A 50 MB observation in a ``prov:value`` makes every SPARQL answer that touches it 50 MB,
and some stores refuse such literals.  Any string attribute larger than the threshold
(``OTEL_PROV_BLOB_THRESHOLD``, 64 KiB by default) is written to a directory
(``OTEL_PROV_BLOB_DIR``) under its SHA-256, and the span record keeps the first
:data:`PREVIEW_CHARS` characters plus a :class:`~otel_prov.prov._span_record.BlobRef`; the
mapper turns that into ``oprov:contentHash``, ``oprov:byteSize``, ``oprov:mediaType``
and ``oprov:contentLocation``.  ``otel-prov show --full`` reads the blob back and checks
its hash.

This is the imperative shell (files); the mapper only sees the records it returns.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import tempfile
from pathlib import Path

from otel_prov._settings import env_str
from otel_prov.environment_variables import OTEL_PROV_BLOB_DIR
from otel_prov.prov._messages import loads
from otel_prov.prov._span_record import BlobRef, SpanRecord

__all__ = [
    "DEFAULT_BLOB_DIR",
    "DEFAULT_THRESHOLD",
    "PREVIEW_CHARS",
    "BlobError",
    "BlobStore",
    "blob_directory",
    "externalize",
    "read_blob",
]

_logger = logging.getLogger(__name__)

DEFAULT_BLOB_DIR = ".otel-prov/blobs"
"""Where values over the threshold go unless ``blob_dir`` or ``OTEL_PROV_BLOB_DIR`` says."""
DEFAULT_THRESHOLD = 64 * 1024
"""Bytes (UTF-8) above which a value goes to the blob store."""
PREVIEW_CHARS = 1024
"""Characters of a moved value kept in the graph."""
_SHA256 = re.compile(r"sha256:[0-9a-f]{64}")
_JSON = "application/json"
_TEXT = "text/plain; charset=utf-8"


class BlobError(Exception):
    """A blob is missing, unreadable or no longer matches its recorded hash."""


class BlobStore:
    """A directory of blobs named by their SHA-256 (``sha256/ab/abcd...``).

    Writing the same value twice writes it once.  A blob is renamed into place only
    when complete and synced, so a reader never sees half of one.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory).resolve()

    def path_of(self, digest: str) -> Path:
        """Where the blob of ``digest`` (hex, without ``sha256:``) is kept."""
        return self.directory / "sha256" / digest[:2] / digest

    def put(self, data: bytes) -> tuple[str, str]:
        """Store ``data``; return its ``sha256:<hex>`` and its ``file:`` URI."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.path_of(digest)
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    out.flush()
                    os.fsync(out.fileno())
                Path(temporary).replace(path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
        return f"sha256:{digest}", path.as_uri()


def _media_type(text: str) -> str:
    """JSON for an object or array that parses (one that nests too deep to parse is
    text: a tool result fetched from a hostile page can be one)."""
    return _JSON if text.lstrip()[:1] in ("{", "[") and loads(text) is not None else _TEXT


def externalize(record: SpanRecord, store: BlobStore, threshold: int) -> SpanRecord:
    """``record`` with every string attribute above ``threshold`` bytes moved to ``store``.

    If a blob cannot be written (full disk, no permission), or anything else goes wrong
    with one value, that value stays inline and the failure is logged: a big literal in
    the graph is better than a lost one, and one value never costs the others.
    """
    moved: dict[str, tuple[str, BlobRef]] = {}
    for key, value in record.attributes.items():
        # len() counts characters; a character is at most 4 bytes in UTF-8.
        if not isinstance(value, str) or len(value) * 4 <= threshold:
            continue
        try:
            found = _moved(value, store, threshold)
        except Exception as exc:  # noqa: BLE001 - the value stays inline, logged
            _logger.warning(
                "cannot write a %d-character value of %s to the blob store %s (%s: %s); "
                "kept inline",
                len(value),
                key,
                store.directory,
                type(exc).__name__,
                getattr(exc, "strerror", None) or exc,
            )
            continue
        if found is not None:
            moved[key] = found
    if not moved:
        return record
    attributes = dict(record.attributes)
    blobs = dict(record.blobs)
    for key, (preview, blob) in moved.items():
        attributes[key] = preview
        blobs[key] = blob
    return dataclasses.replace(record, attributes=attributes, blobs=blobs)


def _moved(value: str, store: BlobStore, threshold: int) -> tuple[str, BlobRef] | None:
    """``value`` written to ``store``: its preview and reference; None when it is small."""
    data = value.encode()
    if len(data) <= threshold:
        return None
    digest, location = store.put(data)
    blob = BlobRef(sha256=digest, size=len(data), media_type=_media_type(value), location=location)
    return value[:PREVIEW_CHARS], blob


def blob_directory(directory: str | os.PathLike[str] | None = None) -> Path:
    """The blob directory: the argument, else ``OTEL_PROV_BLOB_DIR``, else the default."""
    return Path(directory or env_str(OTEL_PROV_BLOB_DIR) or DEFAULT_BLOB_DIR)


def read_blob(
    location: str, sha256: str | None, *, directory: str | os.PathLike[str] | None = None
) -> str:
    """The whole value recorded with hash ``sha256``, read from the blob directory
    (``directory``, else :func:`blob_directory`) and checked against the hash.

    The recorded ``location`` only names the blob: a store may be shared, and a ``file:``
    URI in it could point anywhere on the reader's machine, so nothing is read from a path
    the graph gives.  A blob is found by its hash in our directory, or not at all.
    """
    if sha256 is None or _SHA256.fullmatch(sha256) is None:
        raise BlobError(f"cannot read blob {location}: no sha256 recorded for it")
    digest = sha256.removeprefix("sha256:")
    path = BlobStore(blob_directory(directory)).path_of(digest)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BlobError(
            f"cannot read blob {location}: not in the blob directory {path.parent.parent.parent} "
            f"({exc.strerror or exc}; set OTEL_PROV_BLOB_DIR to where the agent kept its blobs)"
        ) from exc
    if f"sha256:{hashlib.sha256(data).hexdigest()}" != sha256:
        raise BlobError(f"blob {location} does not match its recorded hash {sha256}")
    return data.decode()
