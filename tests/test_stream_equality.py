"""A run streamed step by step ends up as the same run sealed at its end (issue 39.2):
the triples a store holds after its final entry are those of the run mapped whole, apart
from the bundles of its streamed revisions, whatever the cycles saw of it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.bench_third_party import OURS, THIRD_PARTIES, spans_of
from benchmarks.streaming_run import run_spans
from otel_prov.prov._bundle import content_hash, session_content
from otel_prov.prov._iris import activity_iri
from otel_prov.prov._rdf import literal
from otel_prov.prov._sealer import Sealer
from otel_prov.prov._span_record import SpanRecord
from otel_prov.prov._stream import RUNNING
from otel_prov.prov._vocab import O, P
from tests.streamed_runs import sealed_at_end, streamed, without_bundles

RUNS = (OURS, *THIRD_PARTIES)


def _runs() -> dict[str, list[SpanRecord]]:
    found = {name: list(spans_of(name)) for name in RUNS}
    found["ours-6-steps"] = run_spans(6)
    return found


@pytest.mark.parametrize("name", [*RUNS, "ours-6-steps"])
def test_a_run_streamed_a_span_at_a_time_ends_as_sealed_at_its_end(
    name: str, tmp_path: Path
) -> None:
    spans = _runs()[name]
    at_end = without_bundles(sealed_at_end(spans, str(tmp_path)).triples)
    store = streamed(spans, str(tmp_path))
    assert without_bundles(store.triples) == at_end
    assert store.retracted, "nothing was streamed that the end took back: no step streamed?"
    # What the cycles wrote and the end took back is what a run still open is not yet sure
    # of; never what was the same at the end.
    assert not set(store.retracted) & at_end


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([*RUNS, "ours-6-steps"]), data=st.data())
def test_a_run_streamed_in_cycles_of_any_size_ends_as_sealed_at_its_end(
    name: str, data: st.DataObject, tmp_path: Path
) -> None:
    spans = _runs()[name]
    cycles = data.draw(st.lists(st.integers(1, 5), min_size=1, max_size=len(spans)))
    at_end = without_bundles(sealed_at_end(spans, str(tmp_path)).triples)
    assert without_bundles(streamed(spans, str(tmp_path), cycles).triples) == at_end


def test_a_streamed_run_keeps_one_start_and_no_running_status(tmp_path: Path) -> None:
    store = streamed(run_spans(3), str(tmp_path))
    assert len([t for t in store.triples if t[1] == O.runStartedAt]) == 1
    assert not [t for t in store.triples if t[1] == O.status and t[2] == '"running"']


def test_a_run_left_open_by_a_dead_writer_is_sealed_incomplete_by_the_next(tmp_path: Path) -> None:
    """What the store holds of a run whose writer died mid-way (steps streamed, no end),
    sealed by another writer: every step kept, nothing ``running``, the run ``incomplete``,
    its final bundle over what is now stored, revising the dead writer's last entry."""
    spans = run_spans(4)
    session = next(s for s in spans if s.parent_id is None)
    cut = sorted(s.end_ns or 0 for s in spans)[len(spans) // 2]
    kept = [s for s in spans if (s.end_ns or 0) <= cut or s is session]
    stored = streamed(kept, str(tmp_path), end=False)
    running = literal(RUNNING)
    assert any(t[2] == running for t in stored.triples)
    entries = [b for b, p, _ in stored.triples if p == O.bundleOf]
    newest = next(b for b in entries if b.endswith(f"bundle-{len(entries)}>"))
    record = Sealer(chain="next").seal_abandoned(
        activity_iri(session.trace_id, session.span_id),
        newest,
        len(entries),
        sorted(stored.triples),
        cut,
    )
    stored.export([record])
    after = stored.triples
    assert not [t for t in after if t[2] == running]
    assert {t for t in stored.retracted} == {t for t in record.retracted}
    assert all(t[2] == running for t in record.retracted)
    run = activity_iri(session.trace_id, session.span_id)
    assert (run, O.status, literal("incomplete")) in after
    final = next(b for b, p, o in record.triples if p == P.wasRevisionOf and o == newest)
    (digest,) = {o for s, p, o in after if s == final and p == O.contentHash}
    assert digest == literal(content_hash(session_content(after, run)))


def test_a_sub_agent_streamed_as_if_it_were_the_run_leaves_nothing_behind(
    tmp_path: Path,
) -> None:
    """A receiver streams a run's steps under the parent they share before the run's span
    comes; when that parent was a sub-agent's session (called as a tool), what its stream
    wrote and the trace sealed whole does not say is taken back."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    import otel_prov
    from otel_prov.processing._pipeline import OpenRun
    from otel_prov.prov._span_record import Role, record_from_span
    from tests.streamed_runs import MemoryStore, pipeline_for

    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    with otel_prov.agent_session("planner", question="plan?", tracer_provider=provider):
        step = otel_prov.iteration(1, thought="ask the helper", tracer_provider=provider)
        call = otel_prov.tool_call("helper", arguments={"q": 1}, tracer_provider=provider)
        with step, call:
            with otel_prov.agent_session("helper", question="q", tracer_provider=provider):
                for number in (1, 2):
                    with otel_prov.iteration(number, thought="t", tracer_provider=provider):
                        pass
            otel_prov.set_observation("helped")
        otel_prov.set_answer("planned")
    spans = [record_from_span(s) for s in memory.get_finished_spans()]
    inner = next(s for s in spans if s.role is Role.SESSION and s.name.endswith("helper"))
    store = MemoryStore()
    pipeline = pipeline_for(store, str(tmp_path))
    known = {s.span_id: s for s in spans if s.parent_id == inner.span_id}
    known[inner.span_id] = dataclasses.replace(inner, end_ns=None)  # still open
    run = OpenRun(inner.span_id, [s for s in known if s != inner.span_id], known)
    store.export(pipeline.stream([run], 0))
    assert store.triples, "the sub-agent was not streamed"
    store.export(pipeline.seal([spans], 0))
    at_end = without_bundles(sealed_at_end(spans, str(tmp_path)).triples)
    assert without_bundles(store.triples) - at_end == set()
