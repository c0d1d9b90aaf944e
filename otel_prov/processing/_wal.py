"""A write-ahead log of tool calls at dispatch: a run that crashed the process still shows.

When a tool-call span starts, one JSON line (tool, call id, arguments, ids, start time)
is appended to ``wal-<pid>.jsonl`` before the tool runs, after a line for each open span
above it (its iteration, its session, the request around them) not yet in the log.
Those are what make a crashed run findable: a tool call alone has a parent that no
store holds, so no session would list it.  Each ancestor is written once while it is
pending, with all its attributes as they stand at the call (the question, the agent,
the step's thought), at the first tool call under it: a run that calls no tool costs
the log nothing, and one that calls many writes its session once.

When the worker has exported a session, it appends a ``done`` line for each of its
spans in the log, and so it does for the spans of a trace it discards (no session in
it: nothing to recover); when nothing is pending the file is emptied.  A log whose
process is gone (its ``flock`` is free) is recovered by the next processor that starts
on the same directory: every intent without ``done`` becomes an activity with
``oprov:status "incomplete"`` (the tool call with its arguments and no observation,
inside its iteration and session), which that processor seals and stores like any run.

With content withheld (``OTEL_PROV_CAPTURE_CONTENT=false``, ``--no-content``) a line keeps
only what says which span it is (:data:`IDENTITY_KEYS`: kind, names, ids, model) and
the role read from all of it: a third-party instrumentation sets its question and
arguments on the span whatever our switches say, and the store is not the only copy
that must go without them.

``fsync`` (``OTEL_PROV_WAL_FSYNC``): ``always`` syncs every intent before the tool runs
(survives a machine crash, costs a disk flush per tool call); ``never`` (default) leaves
it to the OS, which survives the process being killed, the case this log is for.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from otel_prov.capture._redaction import redact_attributes
from otel_prov.prov._conventions import IDENTITY_KEYS, TOOL_CALL_KEYS, starts_as_tool_call
from otel_prov.prov._span_record import Role, SpanRecord, classify, clean_attributes

__all__ = ["IntentLog", "recover_intents"]

_logger = logging.getLogger(__name__)


class IntentLog:
    """This process's log; ``intent`` runs on the agent's thread, so it only appends.

    Written through the descriptor itself, no buffer: a forked child that closes its copy
    leaves nothing half written behind (see :meth:`in_child`), and a write the disk
    refuses is cut back off the file, so the lines after it are whole.
    """

    def __init__(self, directory: Path, *, fsync: bool = False, content: bool = True) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"wal-{os.getpid()}-{time.time_ns()}.jsonl"
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        self._size = 0
        """Bytes of whole lines in the file."""
        self._fsync = fsync
        self._content = content
        """Keep what spans say (questions, arguments)?  False: only what they are."""
        self._lock = threading.Lock()
        self._pending: set[int] = set()
        self._settled: list[int] = []
        """Intents settled whose ``done`` lines a full disk refused: written with the next."""

    def _write(self, entries: Iterable[dict[str, Any]]) -> None:
        """Append one line per entry (after the ``done`` lines still owed), all or none;
        the caller holds the lock.  Raises ``OSError`` when the disk refuses them."""
        owed = [{"done": f"{span_id:016x}"} for span_id in self._settled]
        data = "".join(_encode(entry) + "\n" for entry in (*owed, *entries)).encode()
        try:
            written = 0
            while written < len(data):
                written += os.write(self._fd, data[written:])
            if self._fsync:
                os.fsync(self._fd)
        except OSError:
            os.ftruncate(self._fd, self._size)  # no torn line for the next to follow
            raise
        self._size += len(data)
        self._settled.clear()

    def intent(self, span: Any, service: str | None, ancestors: Sequence[Any] = ()) -> None:
        """Record a tool call as it is dispatched (``span`` is the live SDK span), after
        the open spans above it (``ancestors``, nearest first) that the log does not hold.
        Raises ``OSError`` when the disk refuses it (nothing of it is then in the log)."""
        attributes = span.attributes or {}
        # Built outside the lock: two calls racing may both write an ancestor, which
        # recovery reads as one.
        entries = [
            self._entry(above, service, above.attributes or {})
            for above in reversed(ancestors)
            if above.context.span_id not in self._pending
        ]
        entries.append(
            self._entry(
                span, service, {k: attributes[k] for k in TOOL_CALL_KEYS if k in attributes}
            )
        )
        with self._lock:
            self._write(entries)
            self._pending.update(s.context.span_id for s in (*ancestors, span))

    def _entry(self, span: Any, service: str | None, attributes: Any) -> dict[str, Any]:
        """:func:`_entry`, with content withheld when the policy says so (the role is then
        read before the text goes, and kept: some conventions tell a run by its metadata)."""
        if self._content:
            return _entry(span, service, attributes)
        name = span.name
        role = (
            Role.TOOL_CALL
            if starts_as_tool_call(name, attributes)
            else classify(attributes, root=span.parent is None)
        )
        kept = {key: value for key, value in attributes.items() if key in IDENTITY_KEYS}
        return {**_entry(span, service, kept), "role": role.value}

    def done(self, span_ids: Iterable[int]) -> None:
        """The worker exported the sessions these spans belong to, or found that they
        belong to none: their intents are settled (ids the log does not hold are ignored).
        Raises ``OSError`` when the disk refuses the lines; they go with the next write."""
        with self._lock:
            settled = [span_id for span_id in span_ids if span_id in self._pending]
            if not settled:
                return
            self._pending.difference_update(settled)
            self._settled += settled
            if not self._pending:
                os.ftruncate(self._fd, 0)  # nothing pending: start the log afresh
                self._size = 0
                self._settled.clear()
                return
            self._write(())

    def in_child(self) -> IntentLog:
        """A forked child's own log.  The parent keeps its file, its lock and its pending
        intents; the child only closes its copy of the descriptor (its lock may be held by
        a thread that is not in the child: it is not taken)."""
        os.close(self._fd)
        return IntentLog(self.path.parent, fsync=self._fsync, content=self._content)

    def close(self) -> None:
        """Close; a log with nothing pending is removed (there is nothing to recover)."""
        with self._lock:
            if self._pending and self._settled:
                try:
                    self._write(())  # the done lines owed, if the disk takes them now
                except OSError:
                    _logger.warning("%s: some stored runs stay pending in the log", self.path)
            os.close(self._fd)
            if not self._pending:
                self.path.unlink(missing_ok=True)


_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""``json.dumps`` with these options, without building an encoder per line: an intent with
its session and iteration 38.3 instead of 50.4 us of the agent's CPU (side by side, edf777c).
"""


def _entry(span: Any, service: str | None, attributes: Any) -> dict[str, Any]:
    """One span's line: its ids, name, start and ``attributes``.

    Every field is made encodable, whatever it holds (a span name, a service name, an
    attribute key or value): a lone surrogate left in one fails the whole write, and the
    call loses its crash record.  The attributes are then redacted (third-party
    instrumentations set theirs unredacted), after cleaning as on the way to the store,
    so that the patterns see the same text.
    """
    context = span.context
    entry = clean_attributes(
        {
            "trace": f"{context.trace_id:032x}",
            "span": f"{context.span_id:016x}",
            "parent": f"{span.parent.span_id:016x}" if span.parent is not None else None,
            "name": span.name,
            "start": span.start_time,
            "service": service,
            "attributes": attributes,
        }
    )
    entry["attributes"] = redact_attributes(entry["attributes"])
    return entry


def _orphaned(directory: Path) -> list[Path]:
    logs = []
    for path in sorted(directory.glob("wal-*.jsonl")):
        with path.open("a") as probe:
            try:
                fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its process is alive
            fcntl.flock(probe, fcntl.LOCK_UN)
        logs.append(path)
    return logs


def recover_intents(directory: Path) -> tuple[list[SpanRecord], list[Path]]:
    """Spans left unfinished by dead processes (tool calls in flight and the runs around
    them), as incomplete span records."""
    if not directory.is_dir():
        return [], []
    records: list[SpanRecord] = []
    logs = _orphaned(directory)
    for path in logs:
        intents: dict[str, dict[str, Any]] = {}
        # "\n" only: JSON escapes it in strings but keeps U+2028 and the other characters
        # str.splitlines also breaks at.
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if not line:
                continue
            try:
                entry = clean_attributes(json.loads(line))  # "\\ud800" is valid JSON
            except (ValueError, AttributeError):
                _logger.warning("%s:%d is not a complete entry (cut by the crash?)", path, number)
                continue
            if "done" in entry:
                intents.pop(entry["done"], None)
            else:
                intents[entry["span"]] = entry
        for entry in intents.values():
            attributes = entry.get("attributes", {})
            name = entry.get("name", "execute_tool")
            parent = entry.get("parent")
            records.append(
                SpanRecord(
                    trace_id=int(entry["trace"], 16),
                    span_id=int(entry["span"], 16),
                    parent_id=int(parent, 16) if parent else None,
                    name=name,
                    start_ns=int(entry["start"]),
                    end_ns=None,
                    attributes=attributes,
                    service_name=entry.get("service"),
                    role=_role(entry, name, attributes),
                )
            )
    return records, logs


def _role(entry: dict[str, Any], name: str, attributes: dict[str, Any]) -> Role:
    """The role the line was written with (content withheld), else read from it."""
    written = entry.get("role")
    if isinstance(written, str) and written in _ROLES:
        return Role(written)
    # A tool call may be known by its name alone (logged before its instrumentation set
    # attributes); the spans above it by theirs.
    if starts_as_tool_call(name, attributes):
        return Role.TOOL_CALL
    return classify(attributes, root=not entry.get("parent"))


_ROLES = frozenset(role.value for role in Role)
