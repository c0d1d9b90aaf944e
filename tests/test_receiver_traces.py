"""The receiver's trace buffer: when a trace has been seen whole, and what is kept after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from otel_prov.ingest.receiver._settings import ReceiverSettings
from otel_prov.ingest.receiver._traces import Due, Reason, TraceBuffer
from otel_prov.prov._span_record import Role, SpanRecord
from tests.builders import make_span

A, B, C = 0xA1, 0xB2, 0xC3


def buffer(
    *,
    idle_s: float = 5.0,
    max_age_s: float = 600.0,
    retain_s: float = 60.0,
    max_open_traces: int = 100,
    max_spans_per_trace: int = 100,
) -> TraceBuffer:
    return TraceBuffer(
        ReceiverSettings(
            Path("unused"),
            trace_idle=idle_s,
            session_timeout=max_age_s,
            retain=retain_s,
            max_open_traces=max_open_traces,
            max_spans_per_trace=max_spans_per_trace,
            max_pending_spans=1000,
        )
    )


def ids(due: Due) -> list[int]:
    return sorted(span.span_id for span in due.spans)


def test_a_trace_in_several_requests_is_due_once_whole_after_idle() -> None:
    traces = buffer()
    traces.add([make_span(1, trace_id=A), make_span(2, 1, trace_id=A)], 1, now=0.0)
    traces.add([make_span(3, 1, trace_id=A)], 2, now=3.0)
    assert traces.due(7.9) == []  # 4.9 s after its last span
    (due,) = traces.due(8.0)
    assert (due.trace_id, ids(due), due.sequence, due.reason) == (A, [1, 2, 3], 2, Reason.IDLE)
    assert traces.due(100.0) == [] and traces.pending_spans == 0 and traces.open_traces == 0


def test_a_retried_request_adds_no_span_but_its_journal_record_goes_with_the_trace() -> None:
    """The sender did not get our answer and sent the request again: its spans are known,
    but the journal holds the second record too until a due trace covers its number."""
    traces = buffer()
    spans = [make_span(1, trace_id=A), make_span(2, 1, trace_id=A)]
    traces.add(spans, 1, now=0.0)
    traces.add(spans, 2, now=1.0)  # before the trace is mapped
    assert traces.pending_spans == 2
    (due,) = traces.due(5.0)  # idle since its spans came, not since the retry
    assert (ids(due), due.sequence) == ([1, 2], 2)
    traces.add(spans, 3, now=6.0)  # after: mapped again, nothing new, so that 3 is released
    (again,) = traces.due(6.0)
    assert (ids(again), again.sequence) == ([1, 2], 3)
    assert traces.due(20.0) == [] and traces.open_traces == 0


def test_a_late_span_is_mapped_with_the_retained_ones_then_alone_after_retention() -> None:
    traces = buffer(retain_s=60.0)
    traces.add([make_span(1, trace_id=A), make_span(2, 1, trace_id=A)], 1, now=0.0)
    traces.due(5.0)
    traces.add([make_span(3, 2, trace_id=A)], 2, now=30.0)
    (due,) = traces.due(35.0)
    assert ids(due) == [1, 2, 3] and due.sequence == 2
    assert traces.expire(94.9) == 0
    assert traces.expire(95.0) == 1 and traces.retained_spans == 0
    traces.add([make_span(4, 2, trace_id=A)], 3, now=100.0)
    (due,) = traces.due(105.0)
    assert ids(due) == [4]


def test_the_spans_per_trace_limit_maps_it_now_and_keeps_nothing() -> None:
    traces = buffer(max_spans_per_trace=3)
    traces.add([make_span(i, trace_id=A) for i in (1, 2)], 1, now=0.0)
    traces.add([make_span(9, trace_id=B)], 2, now=0.0)
    assert traces.due(0.1) == []
    traces.add([make_span(3, trace_id=A)], 3, now=0.2)
    (due,) = traces.due(0.3)
    assert (due.trace_id, due.reason, ids(due)) == (A, Reason.SPANS, [1, 2, 3])
    assert traces.retained_spans == 0 and traces.pending_spans == 1


def test_past_the_open_traces_limit_the_least_recently_active_are_mapped_early() -> None:
    traces = buffer(max_open_traces=2)
    for at, trace in enumerate((A, B, C)):
        traces.add([make_span(1, trace_id=trace)], at + 1, now=float(at))
    due = traces.due(2.5)
    assert [(d.trace_id, d.reason) for d in due] == [(A, Reason.OPEN_TRACES)]
    assert traces.open_traces == 2


def test_a_trace_open_past_the_session_timeout_is_mapped_as_it_stands() -> None:
    traces = buffer(idle_s=5.0, max_age_s=20.0)
    for second in range(0, 25, 2):  # a span every 2 s: never idle
        traces.add([make_span(second + 1, trace_id=A)], second + 1, now=float(second))
        found = traces.due(float(second) + 0.5)
        if found:
            assert second >= 20 and found[0].reason is Reason.AGE
            return
    raise AssertionError("never mapped")


def test_a_failed_trace_is_restored_whole_and_due_at_once() -> None:
    traces = buffer()
    traces.add([make_span(1, trace_id=A), make_span(2, 1, trace_id=A)], 1, now=0.0)
    (due,) = traces.due(5.0)
    traces.add([make_span(3, 1, trace_id=A)], 2, now=5.5)  # came while it was being stored
    traces.restore(due, now=6.0)
    (again,) = traces.due(6.0)
    assert ids(again) == [1, 2, 3] and again.sequence == 2
    assert traces.pending_spans == 0 and traces.retained_spans == 3


def test_draining_maps_every_open_trace() -> None:
    traces = buffer()
    traces.add([make_span(1, trace_id=A), make_span(1, trace_id=B)], 1, now=0.0)
    assert {(d.trace_id, d.reason) for d in traces.due(0.1, drain=True)} == {
        (A, Reason.DRAIN),
        (B, Reason.DRAIN),
    }


# --- every span is mapped, the counts always add up -----------------------------------

_operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.sampled_from([A, B, C]), st.integers(1, 6)),
        st.tuples(st.just("retry"), st.sampled_from([A, B, C]), st.integers(1, 6)),
        st.tuples(st.just("wait"), st.floats(0.0, 30.0)),
        st.tuples(st.just("due"), st.booleans()),
        st.tuples(st.just("expire")),
    ),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(_operations)
def test_every_span_added_is_mapped_every_record_released_and_the_counts_add_up(
    operations: list[tuple[Any, ...]],
) -> None:
    """``add`` sends a new version of a span; ``retry`` sends the last one again, as an
    exporter does that got no answer.  In the end every version is mapped, and the
    journal may release every record: a due trace came after it with its number."""
    traces = buffer(max_spans_per_trace=4, max_open_traces=2, retain_s=10.0)
    now, sequence = 0.0, 0
    unmapped: set[tuple[int, int, str]] = set()
    sent: dict[tuple[int, int], SpanRecord] = {}
    journaled: dict[int, int] = {}
    released: dict[int, int] = {}

    def stored(due: Due) -> None:
        nonlocal unmapped
        unmapped -= {(due.trace_id, span.span_id, span.name) for span in due.spans}
        released[due.trace_id] = max(released.get(due.trace_id, 0), due.sequence)

    for operation in operations:
        if operation[0] in ("add", "retry"):
            key = (operation[1], operation[2])
            if operation[0] == "retry" and key not in sent:
                continue
            sequence += 1
            if operation[0] == "add":
                sent[key] = make_span(operation[2], trace_id=operation[1], name=f"v{sequence}")
                unmapped = {u for u in unmapped if u[:2] != key}
                unmapped.add((*key, sent[key].name))  # replaces what it was
            traces.add([sent[key]], sequence, now)
            journaled[operation[1]] = sequence
        elif operation[0] == "wait":
            now += operation[1]
        elif operation[0] == "due":
            for due in traces.due(now):
                if operation[1]:  # the destination failed: back it goes
                    traces.restore(due, now)
                else:
                    stored(due)
        else:
            traces.expire(now)
        _check_counts(traces)
    for due in traces.due(now, drain=True):
        stored(due)
    assert unmapped == set()
    assert all(released.get(trace, 0) >= upto for trace, upto in journaled.items())


def _check_counts(traces: TraceBuffer) -> None:
    internal = traces._traces
    retained = set(traces._retained)
    assert traces.retained_spans == sum(len(internal[t].spans) for t in retained)
    assert traces.pending_spans == sum(
        len(trace.spans) for t, trace in internal.items() if t not in retained
    )
    assert all(trace.fresh for t, trace in internal.items() if t not in retained)
    assert traces.open_traces == len(internal) - len(retained)


# --- a run whose own span has not come ------------------------------------------------

RUN, STEP, CALL = 0x50, 0x51, 0x52


def early_steps(trace_id: int = A) -> list[SpanRecord]:
    """An iteration and its model call, ended; the run they belong to still going."""
    return [
        make_span(STEP, RUN, trace_id=trace_id, name="iteration 1", otel_prov__iteration__number=1),
        make_span(
            STEP + 0x10, STEP, trace_id=trace_id, name="chat", gen_ai__operation__name="chat"
        ),
    ]


def test_steps_of_a_run_not_come_are_kept_past_idle_until_it_comes() -> None:
    traces = buffer(idle_s=5.0, max_age_s=600.0)
    traces.add(early_steps(), 1, now=0.0)
    assert traces.due(300.0) == []
    assert traces.awaited() == (1, 2) and traces.traces_awaited == 1
    assert traces.pending_spans == 2  # acknowledged, not stored: backpressure counts them
    session = make_span(
        RUN, None, trace_id=A, name="invoke_agent a", gen_ai__operation__name="invoke_agent"
    )
    traces.add([session], 2, now=301.0)
    (due,) = traces.due(306.0)
    assert (ids(due), due.sequence, due.reason, due.stand_ins) == (
        [RUN, STEP, STEP + 0x10],
        2,
        Reason.IDLE,
        (),
    )
    assert traces.awaited() == (0, 0) and traces.traces_awaited == 1


def test_past_the_session_timeout_a_run_not_come_is_mapped_with_stand_ins() -> None:
    traces = buffer(idle_s=5.0, max_age_s=600.0)
    steps = early_steps()
    # A second iteration still open, its model call ended: two parents have not come.
    steps.append(
        make_span(CALL, 0x60, trace_id=A, start_ms=50, name="chat", gen_ai__operation__name="chat")
    )
    traces.add(steps, 1, now=0.0)
    assert traces.due(599.9) == []
    (due,) = traces.due(600.0)
    assert due.reason is Reason.AGE and ids(due) == [STEP, CALL, STEP + 0x10]
    run, iteration = sorted(due.stand_ins, key=lambda s: s.parent_id is not None)
    assert (run.span_id, run.parent_id, run.role, run.end_ns, run.name) == (
        RUN,
        None,
        Role.SESSION,
        None,
        "",
    )
    assert (iteration.span_id, iteration.parent_id, iteration.role, iteration.end_ns) == (
        0x60,
        RUN,
        Role.SPAN,
        None,
    )


def test_a_cut_off_run_that_fails_to_store_is_due_again_at_once() -> None:
    traces = buffer(idle_s=5.0, max_age_s=60.0)
    traces.add(early_steps(), 1, now=0.0)
    (due,) = traces.due(60.0)
    traces.restore(due, now=61.0)
    (again,) = traces.due(61.0)
    assert again.stand_ins == due.stand_ins and again.reason is Reason.AGE


def test_draining_leaves_a_run_not_come_in_the_journal() -> None:
    traces = buffer()
    traces.add(early_steps(A), 1, now=0.0)
    traces.add([make_span(1, trace_id=B)], 2, now=0.0)
    assert [(d.trace_id, d.reason) for d in traces.due(0.1, drain=True)] == [(B, Reason.DRAIN)]
    assert traces.awaited() == (1, 2)


def test_agent_spans_whose_parents_all_came_are_mapped_when_idle() -> None:
    """Model calls under a web request that runs no agent: nothing more is coming."""
    traces = buffer(idle_s=5.0)
    web = make_span(1, None, trace_id=A, name="GET /")
    call = make_span(2, 1, trace_id=A, name="chat", gen_ai__operation__name="chat")
    top = make_span(3, None, trace_id=A, name="chat", gen_ai__operation__name="chat")
    traces.add([web, call, top], 1, now=0.0)
    (due,) = traces.due(5.0)
    assert due.reason is Reason.IDLE and due.stand_ins == () and traces.traces_awaited == 0
