"""Spans in by request, whole traces out: when has a trace been seen whole?

A receiver gets a trace in pieces: each process of each service exports its own spans
in its own batches, in any order.  So spans are buffered by trace id and a trace is
*due* (to be mapped whole) when:

* no new span of it came for ``trace_idle`` (``--trace-idle``): the usual case, unless
  its spans are the steps of a run whose own span has not come (``prov._stream.awaits_run``:
  a run's span ends last, maybe minutes after its first steps, when a tool call takes long
  or waits for a person).  Such a trace is *awaited*: kept, and its journal records with
  it, until its run's span comes, or until the session timeout says it never will: then
  it is mapped as far as it goes, with stand-ins for what did not come
  (``prov._stream.cut_off_run``), the run ``incomplete``;
* it has been open for ``session_timeout`` even though spans keep coming (the session timeout),
  so that no trace holds memory and journal for ever;
* it reached ``max_spans_per_trace`` spans: it is mapped as far as it got, its spans are
  not kept, and later ones are mapped on their own (the bundle is revised);
* more than ``max_open_traces`` traces are open: the least recently active ones are
  mapped early.  The caller logs every limit hit.  An awaited trace mapped by a limit,
  like one past the session timeout, gets stand-ins (its ``Due.stand_ins``).

Draining (shutdown) maps every open trace but the awaited ones: their spans stay in the
journal, and the next start on the same directory awaits their run again.  The limits are the
:class:`~otel_prov.ingest.receiver._settings.ReceiverSettings`' fields of those names.

A mapped trace's spans are *retained* for ``retain`` seconds (within ``max_pending_spans``,
oldest first out): a span of it that comes later (a service that exports late, a
session span whose children came first) is mapped together with them, so the trace is
still mapped whole and the sub-sessions nest; the ingest path revises the stored
bundle.  A span that comes after that is mapped on its own, as the live processor maps
late spans.

Pure: no threads, no clock (callers pass monotonic seconds), so every rule is tested
directly.  Not thread-safe: the receiver locks around it.
"""

from __future__ import annotations

import collections
import enum
from collections.abc import Iterable
from dataclasses import dataclass, field

from otel_prov.ingest.receiver._settings import ReceiverSettings
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._stream import awaits_run, cut_off_run

__all__ = ["Due", "Reason", "TraceBuffer"]


class Reason(enum.Enum):
    """Why a trace is mapped now."""

    IDLE = "idle"
    AGE = "open longer than the session timeout"
    SPANS = "spans per trace limit"
    OPEN_TRACES = "open traces limit"
    DRAIN = "shutdown"


@dataclass(frozen=True, slots=True)
class Due:
    trace_id: int
    spans: list[SpanRecord]
    """Every span known of the trace: the new ones and those retained from earlier."""
    sequence: int
    """The highest journal sequence number among them: what the journal may release."""
    reason: Reason
    stand_ins: tuple[SpanRecord, ...] = ()
    """For spans that never came, mapped with ``spans`` when the trace is awaited
    (:func:`~otel_prov.prov._stream.cut_off_run`): the run and the parents of its steps."""


@dataclass(slots=True)
class _Trace:
    spans: dict[int, SpanRecord] = field(default_factory=dict)
    fresh: int = 0
    """Spans not mapped yet; 0 for a trace that is only retained."""
    opened: float = 0.0
    last_seen: float = 0.0
    sequence: int = 0
    unstreamed: list[int] = field(default_factory=list)
    """Spans that came (new or changed) since :meth:`TraceBuffer.changed` last looked."""
    """Spans came since :meth:`TraceBuffer.changed` last handed the trace out."""
    awaited: bool | None = None
    """Steps of a run whose own span has not come (``None``: not asked since spans came)."""
    counted: bool = False
    """Counted in :attr:`TraceBuffer.traces_awaited` already."""


class TraceBuffer:
    """See the module documentation; times are monotonic seconds."""

    def __init__(self, settings: ReceiverSettings) -> None:
        self._limits = settings
        self._traces: dict[int, _Trace] = {}
        self._retained: collections.OrderedDict[int, float] = collections.OrderedDict()
        """Mapped traces whose spans are kept -> when mapped, oldest first."""
        self.pending_spans = 0
        """Spans not mapped yet (what backpressure bounds)."""
        self.retained_spans = 0
        self.traces_awaited = 0
        """Traces found awaited (idle, their run's span not come) since the start."""

    @property
    def open_traces(self) -> int:
        return len(self._traces) - len(self._retained)

    def add(self, spans: Iterable[SpanRecord], sequence: int, now: float) -> None:
        """Spans of one request (journaled as ``sequence``).  A span seen before counts as
        new only when it changed: a retried request adds nothing to map, and does not keep
        its trace from going idle.  But the journal holds its record until a due trace
        carries its number, so it still raises the trace's ``sequence``; and a trace
        already mapped is opened again (mapped once more, its stored sessions read back
        unchanged) rather than keep that record for ever."""
        for span in spans:
            trace = self._traces.get(span.trace_id)
            if trace is None:
                trace = self._traces[span.trace_id] = _Trace(opened=now)
            if span.trace_id in self._retained:
                del self._retained[span.trace_id]
                self.retained_spans -= len(trace.spans)
                self.pending_spans += len(trace.spans)
                trace.fresh, trace.opened = len(trace.spans), now
            trace.sequence = max(trace.sequence, sequence)
            known = trace.spans.get(span.span_id)
            if known == span or (known is not None and known.end_ns and not span.end_ns):
                continue  # the same again, or a snapshot of a span that has since ended
            trace.spans[span.span_id] = span
            trace.fresh += 1
            trace.awaited = None
            trace.unstreamed.append(span.span_id)
            self.pending_spans += known is None
            trace.last_seen = now

    def changed(self) -> list[tuple[int, list[int], dict[int, SpanRecord]]]:
        """(trace id, spans that came since the last call, every span buffered of it) of
        each open trace that got spans (streaming); they stay buffered.  The buffered
        spans are the trace's own, not a copy: read them before the next ``add``."""
        found: list[tuple[int, list[int], dict[int, SpanRecord]]] = []
        for trace_id, trace in self._traces.items():
            if trace.unstreamed and trace.fresh:
                new, trace.unstreamed = list(dict.fromkeys(trace.unstreamed)), []
                found.append((trace_id, new, trace.spans))
        return found

    def due(self, now: float, *, drain: bool = False) -> list[Due]:
        """The traces to map now, taken out of the open set (retained, unless too big)."""
        found: list[tuple[int, Reason]] = []
        waiting: list[int] = []
        for trace_id, trace in self._traces.items():
            if not trace.fresh:
                continue
            if drain:
                if not self._awaited(trace):  # else it stays journaled for the next start
                    found.append((trace_id, Reason.DRAIN))
            elif len(trace.spans) >= self._limits.max_spans_per_trace:
                found.append((trace_id, Reason.SPANS))
            elif now - trace.last_seen >= self._limits.trace_idle and not self._awaited(trace):
                found.append((trace_id, Reason.IDLE))
            elif now - trace.opened >= self._limits.session_timeout:
                found.append((trace_id, Reason.AGE))
            else:
                waiting.append(trace_id)
        if len(waiting) > self._limits.max_open_traces:
            waiting.sort(key=lambda t: self._traces[t].last_seen)
            extra = waiting[: len(waiting) - self._limits.max_open_traces]
            found.extend((trace_id, Reason.OPEN_TRACES) for trace_id in extra)
        return [self._take(trace_id, reason, now) for trace_id, reason in found]

    def awaited(self) -> tuple[int, int]:
        """(traces, spans) known to be awaited: idle, their run's span not come."""
        waiting = [len(t.spans) for t in self._traces.values() if t.fresh and t.awaited]
        return len(waiting), sum(waiting)

    def _take(self, trace_id: int, reason: Reason, now: float) -> Due:
        trace = self._traces[trace_id]
        spans = list(trace.spans.values())
        stand_ins = tuple(cut_off_run(spans)) if self._awaited(trace) else ()
        due = Due(trace_id, spans, trace.sequence, reason, stand_ins)
        self.pending_spans -= len(trace.spans)
        if reason is Reason.SPANS:
            del self._traces[trace_id]
        else:
            trace.fresh = 0
            self._retained[trace_id] = now
            self.retained_spans += len(trace.spans)
        return due

    def restore(self, due: Due, now: float) -> None:
        """A trace whose mapping failed: open again, to be retried when next due."""
        self.add(due.spans, due.sequence, now)  # opens it again if it was only retained
        trace = self._traces[due.trace_id]
        trace.last_seen = now - self._limits.trace_idle
        if due.stand_ins:  # cut off: its session timeout is not started again
            trace.opened = now - self._limits.session_timeout

    def expire(self, now: float) -> int:
        """Forget mapped traces retained long enough (or past the bound); how many."""
        forgotten = 0
        while self._retained:
            trace_id, mapped = next(iter(self._retained.items()))
            limits = self._limits
            if now - mapped < limits.retain and self.retained_spans <= limits.max_pending_spans:
                break
            del self._retained[trace_id]
            self.retained_spans -= len(self._traces.pop(trace_id).spans)
            forgotten += 1
        return forgotten

    def _awaited(self, trace: _Trace) -> bool:
        """:attr:`_Trace.awaited`, asked once after spans came."""
        if trace.awaited is None:
            trace.awaited = awaits_run(trace.spans.values())
            if trace.awaited and not trace.counted:
                trace.counted = True
                self.traces_awaited += 1
        return trace.awaited
