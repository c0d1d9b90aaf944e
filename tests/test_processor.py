"""ProvSpanProcessor with a real SDK provider: trees, late children, timeouts, bounds."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

import pytest
from opentelemetry import context, trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import TraceFlags

import otel_prov
from otel_prov import ProvSpanExporter, ProvSpanProcessor
from otel_prov.demo import run_demo_agent
from otel_prov.prov._vocab import RDF_TYPE, O
from tests.recording_exporter import RecordingExporter
from tests.waiting import until


def _provider(
    exporter: RecordingExporter, **options: float
) -> tuple[TracerProvider, ProvSpanProcessor]:
    provider = TracerProvider()
    processor = ProvSpanProcessor(exporter, **options)  # type: ignore[arg-type]
    provider.add_span_processor(processor)
    return provider, processor


def _types(record: otel_prov.ProvRecord, cls: str) -> int:
    return sum(1 for _, p, o in record.triples if p == RDF_TYPE and o == cls)


def test_a_session_is_exported_when_its_span_ends_without_any_flush() -> None:
    exporter = RecordingExporter()
    provider, processor = _provider(exporter)
    run_demo_agent(tracer_provider=provider)
    (record,) = exporter.wait_for(1)
    assert _types(record, O.AgentSession) == 1
    assert _types(record, O.Iteration) == 4
    assert _types(record, O.ToolCall) == 3
    assert _types(record, O.ModelCall) == 4
    # Counted once the exporter has returned, a moment after it holds the record.
    until(lambda: processor.statistics().records_exported == 1, "the record counted")
    provider.shutdown()


def test_child_ending_after_its_session_is_waited_for() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter)
    tracer = provider.get_tracer("t")
    session = tracer.start_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    )

    with trace.use_span(session, end_on_exit=False):
        straggler = tracer.start_span(
            "execute_tool slow",
            attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "slow"},
        )
    session.end()
    time.sleep(0.3)
    assert exporter.records == []  # still waiting for the open child
    straggler.end()
    (record,) = exporter.wait_for(1)
    assert _types(record, O.ToolCall) == 1 and _types(record, O.AgentSession) == 1
    provider.shutdown()


def test_concurrent_sessions_in_threads_stay_apart() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter)
    threads = [
        threading.Thread(
            target=run_demo_agent, kwargs={"tracer_provider": provider, "conversation_id": f"c{i}"}
        )
        for i in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    records = exporter.wait_for(8)
    assert len({record.trace_id for record in records}) == 8
    for record in records:
        assert _types(record, O.AgentSession) == 1
        assert _types(record, O.Iteration) == 4
        assert _types(record, O.ToolCall) == 3
    provider.shutdown()


def test_interleaved_asyncio_sessions_stay_apart() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter)

    async def agent(n: int) -> None:
        async with otel_prov.agent_session(f"a{n}", tracer_provider=provider):
            for step in range(1, 4):
                async with otel_prov.iteration(step, tracer_provider=provider):
                    await asyncio.sleep(0.001 * ((n + step) % 3))
                    async with otel_prov.tool_call("t", tracer_provider=provider):
                        await asyncio.sleep(0)

    async def main() -> None:
        await asyncio.gather(*(agent(n) for n in range(6)))

    asyncio.run(main())
    records = exporter.wait_for(6)
    assert len({record.trace_id for record in records}) == 6
    for record in records:
        assert _types(record, O.Iteration) == 3 and _types(record, O.ToolCall) == 3
    provider.shutdown()


def test_session_that_never_ends_is_flushed_as_incomplete_after_the_timeout() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter, session_timeout=0.2, schedule_delay=0.05)
    tracer = provider.get_tracer("t")
    session = tracer.start_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    )

    with (
        trace.use_span(session, end_on_exit=False),
        otel_prov.tool_call("done", tracer_provider=provider),
    ):
        pass
    (record,) = exporter.wait_for(1)
    assert (record.root, O.status, '"incomplete"') in record.triples
    assert _types(record, O.ToolCall) == 1
    provider.shutdown()


def test_a_session_past_its_timeout_goes_out_once_and_again_only_when_it_ends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A session still open was exported as incomplete at every timeout check (each
    second), mapped and sealed again each time, for as long as the process ran: a
    thousand abandoned sessions kept the worker mapping a thousand sessions a second."""
    from otel_prov.processing import _processor

    monkeypatch.setattr(_processor, "_TIMEOUT_CHECK_INTERVAL_NS", 50_000_000)
    exporter = RecordingExporter()
    provider, processor = _provider(exporter, session_timeout=0.2, schedule_delay=0.02)
    tracer = provider.get_tracer("t")
    session = tracer.start_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    (incomplete,) = exporter.wait_for(1)
    assert (incomplete.root, O.status, '"incomplete"') in incomplete.triples
    time.sleep(0.5)  # ten timeout checks more
    assert len(exporter.records) == 1
    session.end()
    complete = exporter.wait_for(2)[1]
    assert complete.root == incomplete.root
    assert (complete.root, O.status, '"incomplete"') not in complete.triples
    provider.shutdown()
    assert len(exporter.records) == 2
    assert processor.statistics().records_exported == 2


def test_memory_is_bounded_and_every_drop_is_counted_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = RecordingExporter()
    provider, processor = _provider(exporter, max_pending_spans=10, schedule_delay=0.02)
    tracer = provider.get_tracer("t")
    caplog.set_level(logging.WARNING, logger="otel_prov.processing._processor")
    with otel_prov.agent_session("busy", tracer_provider=provider):
        for i in range(50):
            tracer.start_span(f"child {i}").end()
            if i % 10 == 0:
                time.sleep(0.05)  # let the worker run between bursts
        time.sleep(0.1)
        assert processor.statistics().pending_spans <= 10
    (record,) = exporter.wait_for(1)  # the session itself is never dropped
    provider.shutdown()
    kept = _types(record, O.Span)
    dropped = processor.statistics().spans_dropped
    assert kept <= 10 and dropped >= 40
    assert kept + dropped == 50  # every child is either stored or counted
    drop_logs = [r.getMessage() for r in caplog.records if "dropped" in r.getMessage()]
    assert 1 <= len(drop_logs) <= 2  # once per interval, the rest at shutdown
    assert sum(int(m.split()[1]) for m in drop_logs) == dropped


def test_a_span_whose_end_is_still_being_delivered_is_not_counted_as_dropped() -> None:
    """The queue drops silently, so the worker counts a span as pushed out when it is
    ended, uncollected and still open in two sweeps running: the first sweep can meet a
    span whose ``on_end`` is under way on another thread."""
    exporter = RecordingExporter()
    provider, processor = _provider(exporter, schedule_delay=3600)
    span = provider.get_tracer("t").start_span("child")
    span._end_time = time.time_ns()  # type: ignore[attr-defined]  # end() half done
    processor._cycle(flush=False, final=False)  # the first sweep sees it ended and open
    processor.on_end(span)  # type: ignore[arg-type]  # its on_end arrives
    processor._cycle(flush=False, final=False)
    assert processor.statistics().spans_dropped == 0
    assert processor.statistics().spans_received == 1
    provider.shutdown()


def test_agent_never_waits_for_a_blocked_exporter() -> None:
    gate = threading.Event()
    exporter = RecordingExporter(gate=gate)
    provider, processor = _provider(exporter)
    for i in range(5):
        run_demo_agent(tracer_provider=provider, conversation_id=str(i))
    # all five sessions ran to the end while the exporter was still stuck
    assert not gate.is_set() and exporter.records == []
    gate.set()
    assert len(exporter.wait_for(5)) == 5
    provider.shutdown()
    assert processor.statistics().records_exported == 5


def test_force_flush_exports_without_waiting_for_stragglers_and_shutdown_flushes_open() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter, late_span_grace=60)
    tracer = provider.get_tracer("t")

    first = tracer.start_span(
        "invoke_agent a", attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    with trace.use_span(first, end_on_exit=False):
        straggler = tracer.start_span("straggler")  # never ends
    first.end()
    assert provider.force_flush()
    assert len(exporter.records) == 1
    second = tracer.start_span(
        "invoke_agent b", attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    provider.shutdown()
    assert exporter.shut_down
    # at shutdown, what still runs goes out as incomplete: the straggler and session b
    by_root = {record.root: record for record in exporter.records[1:]}
    for span in (straggler, second):
        root = f"<urn:otel-prov:{span.get_span_context().trace_id:032x}:"
        root += f"{span.get_span_context().span_id:016x}>"
        assert (root, O.status, '"incomplete"') in by_root[root].triples
    assert len(exporter.records) == 3


def test_sits_beside_a_batch_processor_with_the_same_ids() -> None:
    memory = InMemorySpanExporter()
    exporter = RecordingExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(memory))
    provider.add_span_processor(ProvSpanProcessor(exporter))
    run_demo_agent(tracer_provider=provider)
    (record,) = exporter.wait_for(1)
    provider.force_flush()
    spans = memory.get_finished_spans()
    assert {f"{s.context.trace_id:032x}" for s in spans} == {record.trace_id}
    span_ids = {f'"{s.context.span_id:016x}"' for s in spans}
    assert span_ids == {o for _, p, o in record.triples if p == O.spanId}
    provider.shutdown()


def test_a_raising_exporter_is_counted_and_the_worker_survives(
    caplog: pytest.LogCaptureFixture,
) -> None:
    exporter = RecordingExporter(fail=True)
    provider, processor = _provider(exporter)
    run_demo_agent(tracer_provider=provider)
    provider.force_flush()
    assert processor.statistics().records_failed == 1
    exporter._fail = False
    run_demo_agent(tracer_provider=provider)
    assert len(exporter.wait_for(1)) == 1
    assert any("exporter raised" in r.getMessage() for r in caplog.records)
    provider.shutdown()


def test_traces_without_agent_sessions_are_discarded_and_counted() -> None:
    exporter = RecordingExporter()
    provider, processor = _provider(exporter, schedule_delay=0.05)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("GET /health"):
        tracer.start_span("db").end()
    deadline = time.monotonic() + 5
    while processor.statistics().spans_discarded < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processor.statistics().spans_discarded == 2
    assert processor.statistics().pending_spans == 0
    assert exporter.records == []
    provider.shutdown()


def test_spans_around_the_session_come_along_and_later_ones_follow() -> None:
    exporter = RecordingExporter()
    provider, _ = _provider(exporter, schedule_delay=0.05)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("POST /ask") as http:
        tracer.start_span("auth").end()
        with otel_prov.agent_session("a", tracer_provider=provider):
            pass
        first = exporter.wait_for(1)[0]
    second = exporter.wait_for(2)[1]
    http_iri = f":{http.get_span_context().span_id:016x}>"
    assert _types(first, O.Span) == 1  # "auth", which ended before the session
    assert any(s.endswith(http_iri) and o == O.Span for s, _, o in second.triples)
    provider.shutdown()


def test_constructor_rejects_a_span_exporter() -> None:
    with pytest.raises(TypeError, match="ProvExporter"):
        ProvSpanProcessor(InMemorySpanExporter())  # type: ignore[arg-type]


def test_a_tool_call_for_a_caller_in_another_process_is_kept_without_a_session() -> None:
    """A server process (MCP, a tool service) runs no session: its tool call, whose parent
    is remote, is stored, partOf the caller's activity; a plain span under a remote
    parent (a health check) is not provenance."""
    exporter = RecordingExporter()
    provider, processor = _provider(exporter, schedule_delay=0.05)
    tracer = provider.get_tracer("t")

    def remote(trace_id: int) -> Context:
        caller = trace.SpanContext(trace_id, 0x123, is_remote=True, trace_flags=TraceFlags(1))
        return trace.set_span_in_context(trace.NonRecordingSpan(caller))

    with tracer.start_as_current_span("GET /health", context=remote(0xDEF)):
        pass
    token = context.attach(remote(0xABC))
    try:
        with otel_prov.tool_call("lookup", arguments="{}", tracer_provider=provider):
            tracer.start_span("db").end()
    finally:
        context.detach(token)
    (record,) = exporter.wait_for(1)
    (tool,) = [s for s, p, o in record.triples if p == RDF_TYPE and o == O.ToolCall]
    assert (tool, O.partOf, f"<urn:otel-prov:{0xABC:032x}:{0x123:016x}>") in record.triples
    assert _types(record, O.Span) == 1  # "db", inside the tool call
    deadline = time.monotonic() + 5
    while processor.statistics().spans_discarded < 1 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert processor.statistics().spans_discarded == 1
    provider.shutdown()


class _RefusingOnce(RecordingExporter):
    """Refuses the first batch (a full disk, say) and reports nothing waiting afterwards,
    as the embedded store does once it has reopened: its ``force_flush`` says True."""

    def __init__(self) -> None:
        super().__init__()
        self.refusals = 1

    def export(self, records):  # type: ignore[no-untyped-def]
        if self.refusals:
            self.refusals -= 1
            return otel_prov.exporters.ExportResult.FAILURE
        return super().export(records)


_AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"}


def test_force_flush_says_false_when_a_batch_since_the_last_one_was_refused() -> None:
    """The hostile review's full disk: force_flush() said True for a session whose export
    had failed, so the agent took it for stored."""
    exporter = _RefusingOnce()
    provider, processor = _provider(exporter)
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent a", attributes=_AGENT):
        pass
    assert processor.force_flush() is False
    with tracer.start_as_current_span("invoke_agent b", attributes=_AGENT):
        pass
    assert processor.force_flush() is True
    assert len(exporter.records) == 1
    assert processor.statistics().records_failed == 1
    provider.shutdown()


def _steps_then_wait(provider: TracerProvider, wait_s: float, *, end: bool) -> trace.Span:
    """A run's two first steps, then a long wait (a tool call, a person's approval); its
    session span ended at last when ``end``, else left open (the process dies in it)."""
    tracer = provider.get_tracer("t")
    session = tracer.start_span(
        "invoke_agent slow", attributes={"gen_ai.operation.name": "invoke_agent"}
    )
    with trace.use_span(session, end_on_exit=False):
        for number in (1, 2):
            with (
                otel_prov.iteration(number, tracer_provider=provider),
                otel_prov.tool_call("t", call_id=f"call-{number}", tracer_provider=provider),
            ):
                pass
    time.sleep(wait_s)
    if end:
        session.end()
    return session


def _fed(
    exporter: RecordingExporter, knows_open_spans: bool
) -> tuple[TracerProvider, ProvSpanProcessor | ProvSpanExporter]:
    """A provider recording provenance as a processor (open spans known) or through the
    ``prov`` span exporter (ended spans alone, in batches)."""
    if knows_open_spans:
        return _provider(exporter, schedule_delay=0.02, late_span_grace=0.1)
    provider = TracerProvider()
    prov = ProvSpanExporter(exporter, late_span_grace=0.1)
    provider.add_span_processor(BatchSpanProcessor(prov, schedule_delay_millis=20))
    return provider, prov


@pytest.mark.parametrize("knows_open_spans", [True, False])
def test_a_long_wait_between_steps_and_the_end_of_a_run_loses_no_step(
    knows_open_spans: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Within the session timeout the run is stored whole, whether the processor sees its
    open session span (on_start) or, as the ``prov`` span exporter, ended spans alone."""
    monkeypatch.setenv("OTEL_PROV_SESSION_TIMEOUT", "30")
    exporter = RecordingExporter()
    provider, prov = _fed(exporter, knows_open_spans)
    _steps_then_wait(provider, 1.5, end=True)
    (record,) = exporter.wait_for(1)
    assert (_types(record, O.Iteration), _types(record, O.ToolCall)) == (2, 2)
    statistics = prov.statistics()
    assert statistics is not None and statistics.spans_discarded == 0
    provider.shutdown()


def test_fed_ended_spans_a_run_whose_span_never_comes_is_stored_incomplete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The ``prov`` span exporter (no open span known): the steps wait for their session
    span as long as the session timeout, then are stored, the run ``incomplete``, rather
    than discarded."""
    monkeypatch.setenv("OTEL_PROV_SESSION_TIMEOUT", "1")
    exporter = RecordingExporter()
    provider, prov = _fed(exporter, knows_open_spans=False)
    session = _steps_then_wait(provider, 0.0, end=False)
    (record,) = exporter.wait_for(1)
    run = f"<urn:otel-prov:{session.get_span_context().trace_id:032x}:"
    run += f"{session.get_span_context().span_id:016x}>"
    assert (run, O.status, '"incomplete"') in record.triples
    assert (_types(record, O.Iteration), _types(record, O.ToolCall)) == (2, 2)
    statistics = prov.statistics()
    assert statistics is not None
    assert (statistics.runs_cut_off, statistics.spans_discarded) == (1, 0)
    provider.shutdown()
