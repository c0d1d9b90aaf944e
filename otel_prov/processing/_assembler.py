"""Ended spans in, complete span trees out: when is an agent session ready to map?

Kept free of threads and clocks (callers pass ``now_ns``), so the policy is tested
directly and shared by the span processor (which also knows which spans are still
open) and by the span-exporter entry point (which sees ended spans only, in batches).

The rules:

* Spans are buffered per trace.  A session is *ready* when its outermost session span
  has ended and none of its descendants is still open (children may end after their
  parent).  Without knowledge of open spans, it waits ``late_span_grace_ns`` after its
  end for stragglers instead.  A descendant still open after the grace is exported when
  it ends.
* A ready session takes every buffered span of its trace that is not inside another
  session still running: the HTTP or database spans around the agent come along.  After
  that, spans that end in the trace outside a running session go out on their own.
* A session span open for longer than ``session_timeout_ns`` is exported as it stands,
  snapshotted with no end (the mapper marks it ``incomplete``), once: then it is released
  again when it ends, and what ends under it meanwhile goes out on its own.
* A trace with no session, nothing open and nothing new for ``idle_timeout_ns`` is not
  provenance: its spans are discarded (and counted); unless they are the steps of a run
  whose own span did not come (``prov._stream.awaits_run``: fed ended spans alone, the
  session span comes last, and this idle timeout is the session timeout): then they are
  released as far as they go, with stand-ins for the spans that did not come
  (``prov._stream.cut_off_run``), the run ``incomplete``, and counted.
* Streaming (:meth:`SessionAssembler.poll_steps`): for a session still open, the spans
  that ended under it since the last poll are handed out, and they stay buffered: the
  run is released whole when it ends.

A *root* is what a group is released for: an outermost session, or, in a process that
serves another one (an MCP server, a tool service), an agent span whose parent is
remote (:func:`is_remote_root`).  Such a process has no session of its own, yet its tool
call belongs in the provenance of the caller's: it is released like a session, and the
mapper links it to its parent by that parent's deterministic IRI.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from otel_prov.prov._span_record import Role, SpanRecord, is_remote_root
from otel_prov.prov._stream import cut_off_run

__all__ = ["OpenSteps", "SessionAssembler"]


@dataclass
class _Trace:
    spans: dict[int, SpanRecord] = field(default_factory=dict)
    last_seen_ns: int = 0
    exported: bool = False
    """A session of this trace was exported: later spans follow it on their own."""
    timed_out: set[int] = field(default_factory=set)
    """Session spans exported open, past the timeout: again only once they end."""
    unstreamed: list[int] = field(default_factory=list)
    """Spans added since :meth:`SessionAssembler.poll_steps` last looked at the trace."""
    unpolled: list[int] = field(default_factory=list)
    """Spans added since :meth:`SessionAssembler.poll` last looked at the trace."""
    running: int | None = None
    """The one root of the trace, open, that held everything back when the trace was last
    looked at whole; ``None`` when that was not so (see ``_unchanged``)."""


@dataclass(frozen=True)
class OpenSteps:
    """What :meth:`SessionAssembler.poll_steps` hands out for one open run."""

    trace: int
    session: int
    """The span id of the run's outermost session (open)."""
    new: list[int]
    """The ids of its spans that ended since the last poll."""
    ended: dict[int, SpanRecord]
    """The ended spans of its trace buffered now (not a copy: read it before the next add)."""


class SessionAssembler:
    """Buffers spans per trace and releases the groups that are ready to map."""

    def __init__(
        self,
        *,
        session_timeout_ns: int,
        late_span_grace_ns: int,
        idle_timeout_ns: int,
        knows_open_spans: bool,
    ) -> None:
        self._session_timeout_ns = session_timeout_ns
        self._grace_ns = late_span_grace_ns
        self._idle_ns = idle_timeout_ns
        self._knows_open = knows_open_spans
        self._traces: dict[int, _Trace] = {}
        self.pending = 0
        """Spans buffered now."""
        self.discarded = 0
        """Spans of traces that turned out to hold no agent session."""
        self.cut_off = 0
        """Runs released without their own span, which did not come (stand-ins instead)."""
        self._discarded_ids: list[int] = []

    def take_discarded(self) -> list[int]:
        """The ids of the spans discarded since the last call: a caller that logged them
        (the write-ahead log) settles them too."""
        taken, self._discarded_ids = self._discarded_ids, []
        return taken

    def add(self, span: SpanRecord, now_ns: int) -> None:
        trace = self._traces.get(span.trace_id)
        if trace is None:
            trace = self._traces[span.trace_id] = _Trace()
        if span.span_id not in trace.spans:
            self.pending += 1
        trace.spans[span.span_id] = span
        trace.unstreamed.append(span.span_id)
        trace.unpolled.append(span.span_id)
        trace.last_seen_ns = now_ns

    def poll_steps(self, open_spans: Iterable[SpanRecord]) -> list[OpenSteps]:
        """For each open outermost session with spans ended under it since the last call:
        those spans (left buffered) and what else is buffered of its trace.  Call after
        :meth:`poll`, which releases the runs that ended.  The work grows with the spans
        that ended, not with the runs' length (``bench_streaming``)."""
        open_by_trace: dict[int, dict[int, SpanRecord]] = {}
        for span in open_spans:
            open_by_trace.setdefault(span.trace_id, {})[span.span_id] = span
        steps: list[OpenSteps] = []
        for trace_id, trace in self._traces.items():
            if not trace.unstreamed:
                continue
            new, trace.unstreamed = trace.unstreamed, []
            running = open_by_trace.get(trace_id)
            if not running:
                continue
            known = ChainMap(running, trace.spans)
            by_root: dict[int, list[int]] = {}
            for span_id in dict.fromkeys(new):
                ended = trace.spans.get(span_id)
                top = _outermost_session(ended, known) if ended is not None else None
                if (
                    top is not None
                    and top.span_id in running
                    and top.span_id not in trace.timed_out
                ):
                    by_root.setdefault(top.span_id, []).append(span_id)
            steps.extend(
                OpenSteps(trace_id, root, ids, trace.spans) for root, ids in by_root.items()
            )
        return steps

    def poll(
        self,
        now_ns: int,
        open_spans: Iterable[SpanRecord] = (),
        *,
        flush: bool = False,
        final: bool = False,
    ) -> list[list[SpanRecord]]:
        """Groups of spans ready to map, each from one trace.

        ``open_spans`` are snapshots of spans that started and have not ended.  ``flush``
        releases every ended session without waiting for its stragglers (force_flush);
        ``final`` also releases sessions still open, as incomplete snapshots (shutdown).
        """
        flush = flush or final
        open_by_trace: dict[int, list[SpanRecord]] = {}
        for span in open_spans:
            open_by_trace.setdefault(span.trace_id, []).append(span)
        ready: list[list[SpanRecord]] = []
        for trace_id in [*self._traces, *(t for t in open_by_trace if t not in self._traces)]:
            trace = self._traces.get(trace_id) or _Trace(last_seen_ns=now_ns)
            running = open_by_trace.get(trace_id, [])
            if not flush and self._unchanged(trace, running, now_ns):
                continue
            trace.unpolled = []
            group = self._release(trace, running, now_ns, flush, final)
            if group:
                ready.append(group)
            if trace.spans or (trace.exported and open_by_trace.get(trace_id)):
                self._traces[trace_id] = trace
            else:
                self._traces.pop(trace_id, None)
        return ready

    def _unchanged(self, trace: _Trace, open_spans: Sequence[SpanRecord], now_ns: int) -> bool:
        """Whether looking at ``trace`` whole could release nothing now: it was held back by
        one root still open, before its timeout, and every span added since lies under it.
        A long run streamed step by step is then not gone through at every cycle: the work
        grows with the spans that end, not with the run's length (``bench_streaming``)."""
        root_id = trace.running
        if root_id is None:
            return False
        root = next((span for span in open_spans if span.span_id == root_id), None)
        if root is None or now_ns - root.start_ns >= self._session_timeout_ns:
            return False
        known = ChainMap({span.span_id: span for span in open_spans}, trace.spans)
        for span_id in trace.unpolled:
            if not _under(trace.spans.get(span_id), root_id, known):
                return False
        trace.unpolled = []
        return True

    def _release(
        self,
        trace: _Trace,
        open_spans: Sequence[SpanRecord],
        now_ns: int,
        flush: bool,
        final: bool,
    ) -> list[SpanRecord]:
        known = {span.span_id: span for span in open_spans}
        known.update(trace.spans)
        open_ids = {span.span_id for span in open_spans}

        memo: dict[int, SpanRecord | None] = {}

        def outermost_root(span: SpanRecord) -> SpanRecord | None:
            if span.span_id in memo:
                return memo[span.span_id]
            found = None
            seen: set[int] = set()
            current: SpanRecord | None = span
            while current is not None and current.span_id not in seen:
                if current.role is Role.SESSION or is_remote_root(current):
                    found = current
                seen.add(current.span_id)
                current = known.get(current.parent_id) if current.parent_id is not None else None
            memo[span.span_id] = found
            return found

        def open_below(root: SpanRecord) -> bool:
            return any(
                span.span_id != root.span_id and outermost_root(span) is root for span in open_spans
            )

        blocked: set[int] = set()
        released_roots = False
        timed_out: list[SpanRecord] = []
        for span in known.values():
            if outermost_root(span) is not span:
                continue
            if span.span_id in open_ids:
                if span.span_id in trace.timed_out and not final:
                    continue  # what ends under it goes out on its own, as after any export
                if final or now_ns - span.start_ns >= self._session_timeout_ns:
                    timed_out.append(span)
                    released_roots = True
                else:
                    blocked.add(span.span_id)
                continue
            trace.timed_out.discard(span.span_id)  # ended at last: released as it stands
            end_ns = span.end_ns if span.end_ns is not None else span.start_ns
            settled = not open_below(span) if self._knows_open else False
            if flush or settled or now_ns - end_ns >= self._grace_ns:
                released_roots = True
            else:
                blocked.add(span.span_id)

        def in_blocked(span: SpanRecord) -> bool:
            root = outermost_root(span)
            return root is not None and root.span_id in blocked

        open_blocked = blocked & open_ids
        trace.running = (
            next(iter(open_blocked))
            if len(open_blocked) == 1 and not released_roots and blocked == open_blocked
            else None
        )

        if not (released_roots or trace.exported):
            idle = now_ns - trace.last_seen_ns >= self._idle_ns
            no_root = not any(outermost_root(s) for s in trace.spans.values())
            if (final or (not open_spans and idle)) and not blocked and no_root:
                spans = list(trace.spans.values())
                stand_ins = cut_off_run(spans)
                if stand_ins:
                    self.cut_off += 1
                    self.pending -= len(spans)
                    trace.spans.clear()
                    trace.exported = True
                    return [*spans, *stand_ins]
                self.discarded += len(trace.spans)
                self.pending -= len(trace.spans)
                self._discarded_ids.extend(trace.spans)
                trace.spans.clear()
            return []

        group = [span for span in trace.spans.values() if not in_blocked(span)]
        for span in group:
            del trace.spans[span.span_id]
        self.pending -= len(group)
        if final:
            # The process is ending: whatever still runs in this trace never will end.
            group.extend(open_spans)
        elif timed_out:
            timed_out_ids = {root.span_id for root in timed_out}
            trace.timed_out |= timed_out_ids
            group.extend(
                span
                for span in open_spans
                if (root := outermost_root(span)) is not None and root.span_id in timed_out_ids
            )
        if group:
            trace.exported = True
        return group


def _under(span: SpanRecord | None, root: int, known: Mapping[int, SpanRecord]) -> bool:
    """Whether ``span`` lies under the span ``root`` (through spans among ``known``)."""
    seen: set[int] = set()
    current = span
    while current is not None and current.span_id not in seen:
        if current.parent_id == root:
            return True
        seen.add(current.span_id)
        current = known.get(current.parent_id) if current.parent_id is not None else None
    return False


def _outermost_session(span: SpanRecord, known: Mapping[int, SpanRecord]) -> SpanRecord | None:
    """The outermost session span above ``span`` (itself included) among ``known``."""
    found = None
    seen: set[int] = set()
    current: SpanRecord | None = span
    while current is not None and current.span_id not in seen:
        if current.role is Role.SESSION:
            found = current
        seen.add(current.span_id)
        current = known.get(current.parent_id) if current.parent_id is not None else None
    return found
