"""An audit package's zip read as the hostile file it may be (``verify --package``).

A package comes from elsewhere, and whoever made it may have made it to hurt the checker:
a member that inflates a thousand times (a zip bomb), a damaged deflate stream, a
manifest nested a million levels deep, a million members.  So sizes are bounded from
what the zip declares before anything is inflated, and again as each member is read, in
chunks: a member larger than :data:`HELD_BYTES` (a run's content: only its hash is
checked) is hashed as it streams by and never held whole.  JSON is parsed only after its
depth is counted.  Whatever is wrong raises :class:`PackageError`, one line naming it.
"""

from __future__ import annotations

import hashlib
import io
import json
import lzma
import re
import zipfile
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = [
    "CHUNK",
    "HELD_BYTES",
    "MAX_DIRECTORY_BYTES",
    "MAX_HELD_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "MAX_RATIO",
    "MAX_TOTAL_BYTES",
    "RATIO_FLOOR",
    "Hashed",
    "Member",
    "PackageError",
    "digest_of",
    "held_bytes",
    "json_depth",
    "load_json",
    "read_members",
]

MAX_MEMBERS = 500_000
"""Files in one package: 100,000 runs with their entries and signatures fit."""
MAX_MEMBER_BYTES = 1 << 30
"""Bytes of one file, inflated (1 GiB: a run's content is hashed as it streams)."""
MAX_TOTAL_BYTES = 4 << 30
"""Bytes of all files, inflated (4 GiB)."""
MAX_RATIO = 200
"""How many times a file (or the whole package) may inflate: JSON and N-Triples of runs
deflate 3 to 20 times; a zip bomb of zeros a thousand."""
RATIO_FLOOR = 64 << 10
"""Files (and packages) smaller than this inflated are not held to :data:`MAX_RATIO`."""
HELD_BYTES = 1 << 20
"""Files up to this size are kept to be read (entries, signatures, checkpoints,
tombstones); larger ones are only hashed."""
MAX_HELD_BYTES = 256 << 20
"""Bytes of the files kept, the manifest's included (256 MiB; 100,000 runs' entries,
signatures and manifest come to about 150 MB)."""
MAX_JSON_DEPTH = 64
"""Nesting of any JSON read from a package (a manifest is 4 deep)."""
CHUNK = 1 << 20
"""Bytes inflated at a time."""

_BROKEN = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    zlib.error,
    lzma.LZMAError,
    EOFError,
    OSError,
    NotImplementedError,  # a compression method zipfile does not know
    RuntimeError,  # an encrypted member
    ValueError,
)


class PackageError(ValueError):
    """A file that is not an audit package this otel-prov reads; the message is one line."""


@dataclass(frozen=True)
class Hashed:
    """A file too large to keep: its hash (``sha256:<hex>``) and size, taken as it was read."""

    digest: str
    size: int


Member = bytes | Hashed


def digest_of(member: Member) -> str:
    """A file's ``sha256:<hex>``, as the manifest states it."""
    if isinstance(member, Hashed):
        return member.digest
    return "sha256:" + hashlib.sha256(member).hexdigest()


def held_bytes(members: Mapping[str, Member], name: object) -> bytes | None:
    """The bytes of the file ``name``: ``None`` when the package has none by that name,
    and ``b""`` for one too large to be what is read (which then fails as what it is
    not: an entry, a signature, a tombstone)."""
    found = members.get(str(name))
    if found is None:
        return None
    return b"" if isinstance(found, Hashed) else found


MAX_DIRECTORY_BYTES = 128 << 20
"""Bytes of the zip's central directory (its list of files): ``zipfile`` makes an object of
each entry, some ten times its size, before any other bound can be checked."""


def _directory(data: bytes) -> None:
    """Refuse a zip whose end record declares more files, or a longer central directory,
    than the bounds, before ``zipfile`` reads that directory (a zip it cannot read at all
    is left to it to say so)."""
    end = data.rfind(b"PK\x05\x06", max(0, len(data) - (1 << 16) - 22))
    if end < 0 or end + 22 > len(data):
        return
    count = int.from_bytes(data[end + 10 : end + 12], "little")
    size = int.from_bytes(data[end + 12 : end + 16], "little")
    locator = end - 20
    if (count == 0xFFFF or size == 0xFFFFFFFF) and data[locator : locator + 4] == b"PK\x06\x07":
        at = int.from_bytes(data[locator + 8 : locator + 16], "little")
        if data[at : at + 4] == b"PK\x06\x06":
            count = int.from_bytes(data[at + 32 : at + 40], "little")
            size = int.from_bytes(data[at + 40 : at + 48], "little")
    if count > MAX_MEMBERS:
        raise PackageError(
            f"not an audit package: it holds {count:,} files, more than {MAX_MEMBERS:,}"
        )
    if size > MAX_DIRECTORY_BYTES:
        raise PackageError(
            f"not an audit package: its list of files takes {size:,} bytes, more than "
            f"{MAX_DIRECTORY_BYTES:,}"
        )


def _sizes(infos: list[zipfile.ZipInfo]) -> None:
    """Refuse, from what the zip declares and before inflating anything, a package over
    the bounds."""
    if len(infos) > MAX_MEMBERS:
        raise PackageError(
            f"not an audit package: it holds {len(infos):,} files, more than {MAX_MEMBERS:,}"
        )
    total = compressed = 0
    for info in infos:
        if info.file_size > MAX_MEMBER_BYTES:
            raise PackageError(
                f"not an audit package: {info.filename} inflates to {info.file_size:,} bytes, "
                f"more than {MAX_MEMBER_BYTES:,}"
            )
        _ratio(info.filename, info.file_size, info.compress_size)
        total += info.file_size
        compressed += info.compress_size
    if total > MAX_TOTAL_BYTES:
        raise PackageError(
            f"not an audit package: its files inflate to {total:,} bytes, more than "
            f"{MAX_TOTAL_BYTES:,}"
        )
    _ratio("the package", total, compressed)


def _ratio(what: str, size: int, compressed: int) -> None:
    if size > RATIO_FLOOR and size > MAX_RATIO * max(compressed, 1):
        raise PackageError(
            f"not an audit package: {what} inflates {size // max(compressed, 1):,} times "
            f"({compressed:,} bytes to {size:,}), more than {MAX_RATIO} (a zip bomb)"
        )


def _read(package: zipfile.ZipFile, info: zipfile.ZipInfo, keep: bool) -> Member:
    digest = hashlib.sha256()
    parts: list[bytes] = []
    size = 0
    with package.open(info) as member:
        while chunk := member.read(CHUNK):
            size += len(chunk)
            if size > info.file_size or size > MAX_MEMBER_BYTES:
                raise PackageError(
                    f"not an audit package: {info.filename} inflates past the "
                    f"{info.file_size:,} bytes it declares"
                )
            _ratio(info.filename, size, info.compress_size)
            digest.update(chunk)
            if keep:
                parts.append(chunk)
    return b"".join(parts) if keep else Hashed("sha256:" + digest.hexdigest(), size)


def read_members(data: bytes, *, keep: Collection[str] = ()) -> dict[str, Member]:
    """Every file of the zip ``data``: its bytes when at most :data:`HELD_BYTES` or named
    in ``keep`` (the manifest), else its hash.  Raises :class:`PackageError`."""
    _directory(data)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            infos = package.infolist()
            _sizes(infos)
            members: dict[str, Member] = {}
            kept = 0
            for info in infos:
                if info.filename in members:
                    raise PackageError(
                        f"not an audit package: {info.filename} is in it twice (which one "
                        "would be checked?)"
                    )
                keeping = info.filename in keep or info.file_size <= HELD_BYTES
                kept += info.file_size if keeping else 0
                if kept > MAX_HELD_BYTES:
                    raise PackageError(
                        f"not an audit package: its entries and manifest come to more than "
                        f"{MAX_HELD_BYTES:,} bytes"
                    )
                members[info.filename] = _read(package, info, keeping)
            return members
    except PackageError:
        raise
    except _BROKEN as exc:
        raise PackageError(f"not an audit package (a zip file): {_one_line(exc)}") from None


_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OTHER_BYTES = bytes(set(range(256)) - set(b"[]{}"))
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def json_depth(data: bytes) -> int:
    """How deep the arrays and objects of JSON ``data`` nest (strings skipped), counted
    without parsing it: Python's parser recurses once a level."""
    skeleton = _STRINGS.sub(b"", data).translate(None, _OTHER_BYTES)
    return max(accumulate(_STEP[byte] for byte in skeleton), default=0)


def load_json(data: bytes) -> Any:
    """``json.loads`` of ``data`` nested at most :data:`MAX_JSON_DEPTH` deep; raises
    ``ValueError`` (one line) for anything else."""
    depth = json_depth(data)
    if depth > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested {depth:,} deep, more than {MAX_JSON_DEPTH}")
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} deep") from None


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__
