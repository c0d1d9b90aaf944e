"""The receiver's journal: every accepted request on disk before it is acknowledged.

A directory of segment files (``segment-<first sequence number>.log``), appended to
only, one at a time.  Each record is ``kind (1 byte) | sequence number (8) | payload
length (4) | CRC-32 of all that and the payload (4) | payload``, big-endian.  Kinds:

* ``P`` / ``J``: a request body as received (protobuf / JSON, decompressed);
* ``D``: a *done* marker, ``(trace id (16 bytes), sequence number (8))`` pairs: every
  span of that trace journaled up to that number is in the store (or the exporter's
  spool).  A restart replays only what no marker covers.

**Durability.** :meth:`Journal.append` writes the record; :meth:`Journal.sync` makes it
durable: with ``fsync`` on, an ``fsync`` that covers every record written so far (one
call serves all the requests waiting on it: group commit); off, the record is in the
operating system's hands, which survives the process being killed but not the machine
crashing.  Done markers are not synced: one lost in a crash only means its spans are
mapped again, which the ingest path makes harmless (deterministic IRIs, stored
sessions read back).

**Removal.** A segment is deleted when it is no longer written to, every trace with
spans in it is done up to them, and every older segment is gone: deleting oldest first
keeps a done marker on disk as long as any span it covers.  One trace open for long
holds back the segments after it, up to its ``--trace-idle`` or session timeout.

**A full disk.** A record the disk refuses (``ENOSPC``, or any other write error) is
taken off the segment again, so the next record follows the last whole one; the request
is then refused, never acknowledged.  A done marker the disk refuses is logged (once,
until one is written again) and its traces are released all the same: a marker lost
only means mapping again, as after a crash, and deleting the segments is what gives
the space back.

**Damage.** A record cut short or with a bad checksum (a crash mid-write leaves one,
never acknowledged) is logged and skipped: replay reads on at the next intact record
(its kind, a sequence number above the last one read, its length and its checksum all
hold), so nothing written after it is lost.
"""

from __future__ import annotations

import fcntl
import logging
import os
import re
import struct
import threading
import zlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["DONE", "JSON", "PROTOBUF", "Journal", "JournalRecord"]

_logger = logging.getLogger(__name__)

PROTOBUF, JSON, DONE = b"P", b"J", b"D"
_KINDS = frozenset((PROTOBUF, JSON, DONE))
_KIND_BYTE = re.compile(b"[%s]" % b"".join(sorted(_KINDS)))
"""Where a record may start: replay looks for the next one past damage."""
_HEADER = struct.Struct(">cQII")
"""kind, sequence number, payload length, CRC-32."""
_PAIR = struct.Struct(">16sQ")
_NAME = re.compile(r"segment-(\d{20})\.log")


@dataclass(frozen=True, slots=True)
class JournalRecord:
    kind: bytes
    sequence: int
    payload: bytes


def _crc(kind: bytes, sequence: int, payload: bytes) -> int:
    head = _HEADER.pack(kind, sequence, len(payload), 0)[:-4]
    return zlib.crc32(payload, zlib.crc32(head))


def _encode(kind: bytes, sequence: int, payload: bytes) -> bytes:
    return _HEADER.pack(kind, sequence, len(payload), _crc(kind, sequence, payload)) + payload


def read_segment(path: Path, *, report: bool = True) -> Iterator[JournalRecord]:
    """The intact records of one segment, in order; bytes that are no intact record are
    skipped to the next one that is (and logged when ``report``)."""
    data = path.read_bytes()
    position, last = 0, 0
    while position < len(data):
        record = _record_at(data, position, last)
        if record is None:
            resumed = next(
                (
                    found.start()
                    for found in _KIND_BYTE.finditer(data, position + 1)
                    if _record_at(data, found.start(), last) is not None
                ),
                len(data),
            )
            if report:
                _logger.warning(
                    "journal %s: %d bytes at offset %d that are no intact record left out "
                    "(a record cut off by a crash or a full disk before it was "
                    "acknowledged, or damaged)",
                    path,
                    resumed - position,
                    position,
                )
            position = resumed
            continue
        yield record
        position += _HEADER.size + len(record.payload)
        last = record.sequence


def _record_at(data: bytes, position: int, after: int) -> JournalRecord | None:
    """The record that starts at ``position``, if one intact does, numbered above ``after``
    (numbers only grow within a segment: that makes a false match after damage rarer
    still than the checksum alone does)."""
    end = position + _HEADER.size
    if end > len(data):
        return None
    kind, sequence, length, crc = _HEADER.unpack_from(data, position)
    if kind not in _KINDS or sequence <= after or end + length > len(data):
        return None
    payload = data[end : end + length]
    return JournalRecord(kind, sequence, payload) if _crc(kind, sequence, payload) == crc else None


def _lock(directory: Path) -> int:
    """Hold ``directory`` for this process: two receivers on one journal would number
    their records alike and delete each other's segments.  The lock goes with the
    process, however it ends."""
    fd = os.open(directory / "LOCK", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        raise OSError(
            f"the journal {directory} is in use by another receiver: give each receiver "
            "its own --data-dir"
        ) from exc
    return fd


def done_pairs(payload: bytes) -> Iterator[tuple[int, int]]:
    """(trace id, sequence number) of each trace a done marker covers."""
    for trace, sequence in _PAIR.iter_unpack(payload):
        yield int.from_bytes(trace, "big"), sequence


class Journal:
    """Append-only segments in ``directory``; see the module documentation.

    Thread-safe: requests append from several threads, the receiver's worker marks
    traces done.
    """

    def __init__(self, directory: Path, *, fsync: bool, segment_bytes: int = 16 << 20) -> None:
        self.directory = directory
        self._fsync = fsync
        self._segment_bytes = segment_bytes
        directory.mkdir(parents=True, exist_ok=True)
        self._lock_fd = _lock(directory)
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._segments: dict[int, Path] = {}
        """First sequence number -> file, oldest first; the last one is written to."""
        self._holds: dict[int, dict[int, int]] = {}
        """Segment -> trace id -> the trace's highest sequence number in it."""
        self._sizes: dict[int, int] = {}
        for path in sorted(directory.iterdir()):
            match = _NAME.fullmatch(path.name)
            if match:
                first = int(match.group(1))
                self._segments[first] = path
                self._holds[first] = {}
                self._sizes[first] = path.stat().st_size
        self._next = 1
        self._marker_failing = False
        self._fd = -1
        self._current = 0
        self._written = 0
        self._synced = 0

    # --- start-up ------------------------------------------------------------------------
    def replay(self) -> tuple[Mapping[int, int], Iterator[JournalRecord]]:
        """What a restart maps again: trace id -> the sequence number its spans are done
        up to (skip a span of a record numbered no higher), and the request records still
        on disk, oldest first, read as they are iterated.  Call once, before the first
        append; then :meth:`hold` the traces mapped from each record, so that its segment
        stays until they are done.
        """
        done: dict[int, int] = {}
        for path in self._segments.values():
            for record in read_segment(path):
                self._next = max(self._next, record.sequence + 1)
                if record.kind == DONE:
                    for trace, sequence in done_pairs(record.payload):
                        done[trace] = max(done.get(trace, 0), sequence)
        paths = list(self._segments.values())
        requests = (r for path in paths for r in read_segment(path, report=False) if r.kind != DONE)
        return done, requests

    # --- requests --------------------------------------------------------------------------
    def append(self, kind: bytes, payload: bytes, traces: Iterable[int]) -> int:
        """Write a request record holding spans of ``traces``; its sequence number.

        Not durable until :meth:`sync` with that number returns.  Raises ``OSError`` when
        the disk refuses (full, say), leaving the journal as it was: the request must then
        be refused.
        """
        with self._lock:
            sequence = self._next
            self._next += 1
            self._write(_encode(kind, sequence, payload), sequence)
            holds = self._holds[self._current]
            for trace in traces:
                holds[trace] = sequence
            return sequence

    def hold(self, sequence: int, traces: Iterable[int]) -> None:
        """Replayed spans of ``traces`` from the record ``sequence`` keep its segment."""
        with self._lock:
            segment = max(first for first in self._segments if first <= sequence)
            holds = self._holds[segment]
            for trace in traces:
                holds[trace] = max(holds.get(trace, 0), sequence)

    def sync(self, sequence: int) -> None:
        """Return once the record ``sequence`` is durable (per the fsync policy).

        Raises ``OSError`` when the disk refuses: the request must then not be
        acknowledged.
        """
        if not self._fsync or self._synced >= sequence:
            return
        with self._sync_lock:
            if self._synced >= sequence:
                return  # another request's fsync covered this one
            with self._lock:  # a copy: a new segment may close the original meanwhile
                fd, written = os.dup(self._fd), self._written
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            self._synced = max(self._synced, written)

    def done(self, traces: Iterable[tuple[int, int]]) -> None:
        """Traces mapped and stored, each up to a sequence number: their marker, and the
        segments nothing holds any more deleted.  Never raises for a disk that refuses
        the marker (see the module documentation)."""
        pairs = list(traces)
        if not pairs:
            return
        payload = b"".join(_PAIR.pack(trace.to_bytes(16, "big"), seq) for trace, seq in pairs)
        with self._lock:
            sequence = self._next
            self._next += 1
            try:
                self._write(_encode(DONE, sequence, payload), sequence)
            except OSError as exc:
                if not self._marker_failing:
                    _logger.warning(
                        "journal %s: cannot write a done marker (%s); releasing its traces "
                        "all the same (after a crash they would be mapped again, which "
                        "stores nothing twice)",
                        self.directory,
                        exc.strerror or exc,
                    )
                self._marker_failing = True
            else:
                self._marker_failing = False
            for trace, upto in pairs:
                for holds in self._holds.values():
                    if holds.get(trace, upto + 1) <= upto:
                        del holds[trace]
            if self._fd >= 0 and not self._holds[self._current]:
                try:
                    self._close_segment()  # all done: the next request starts a new one
                except OSError:
                    _logger.exception("journal %s: cannot close a segment", self.directory)
            self._delete_released()

    @property
    def size_bytes(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def close(self) -> None:
        with self._lock:
            self._close_segment()
            if self._lock_fd >= 0:
                os.close(self._lock_fd)  # releases the directory for the next receiver
                self._lock_fd = -1

    # --- under the lock ----------------------------------------------------------------------
    def _write(self, data: bytes, sequence: int) -> None:
        """Append one record, or raise ``OSError`` with the segment as it was."""
        if self._fd < 0 or self._sizes[self._current] >= self._segment_bytes:
            self._open_segment(sequence)
        size = self._sizes[self._current]
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:
            self._cut_back(size)
            raise
        self._sizes[self._current] += len(data)
        self._written = sequence

    def _cut_back(self, size: int) -> None:
        """Take a record the disk refused halfway off again (shrinking a file needs no
        space).  Should even that fail, the segment is closed: the next record starts a
        new one, and replay skips the torn end."""
        try:
            os.ftruncate(self._fd, size)
        except OSError:
            _logger.exception("journal %s: cannot cut a torn record off", self.directory)
            fd, self._fd = self._fd, -1
            os.close(fd)

    def _close_segment(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            try:
                if self._fsync:
                    os.fsync(fd)
                    self._synced = self._written
            finally:
                os.close(fd)

    def _open_segment(self, first: int) -> None:
        """Start a new segment (never append to one a crash may have cut short)."""
        self._close_segment()
        path = self.directory / f"segment-{first:020d}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        if self._fsync:  # the new name must survive a crash too
            try:
                directory = os.open(self.directory, os.O_RDONLY)
                try:
                    os.fsync(directory)
                finally:
                    os.close(directory)
            except OSError:
                os.close(fd)
                raise
        self._fd = fd
        self._current = first
        self._segments[first] = path
        self._holds[first] = {}
        self._sizes[first] = 0
        self._delete_released()

    def _delete_released(self) -> None:
        for first in list(self._segments):
            if first == self._current and self._fd >= 0:
                return
            if self._holds[first]:
                return
            self._segments.pop(first).unlink(missing_ok=True)
            del self._holds[first], self._sizes[first]
