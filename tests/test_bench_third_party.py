"""The floor ablations of ``benchmarks/bench_third_party.py``: they must measure the run they
say, and leave the mapping as it was."""

from __future__ import annotations

from benchmarks.bench_third_party import (
    THIRD_PARTIES,
    message_reads_free,
    spans_of,
    without_plain_spans,
)
from otel_prov.prov import _conventions
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._span_record import Role
from otel_prov.prov._vocab import RDF_TYPE, O


def test_without_plain_spans_keeps_the_run_and_its_root() -> None:
    spans = list(spans_of(THIRD_PARTIES[0]))
    trimmed = without_plain_spans(spans)
    kept = {span.span_id for span in trimmed}
    assert [s for s in trimmed if s.role is Role.SPAN and s.parent_id is not None] == []
    assert all(s.parent_id is None or s.parent_id in kept for s in trimmed)
    whole, less = map_spans(spans), map_spans(trimmed)
    assert not less.problems and less.root == whole.root
    dropped = len(spans) - len(trimmed)
    assert dropped > 0 and len(less.triples) < len(whole.triples)


def test_message_reads_free_answers_alike_and_restores_the_readers() -> None:
    spans = list(spans_of(THIRD_PARTIES[0]))
    readers = (_conventions.received_messages, _conventions.sent_messages)
    expected = map_spans(spans).triples
    with message_reads_free():
        assert _conventions.received_messages is not readers[0]
        assert map_spans(spans).triples == expected
        assert map_spans(spans).triples == expected  # from the memo
    assert (_conventions.received_messages, _conventions.sent_messages) == readers


def test_every_framework_fixture_is_its_scenario_run_and_maps_without_a_problem() -> None:
    from benchmarks.bench_third_party import FRAMEWORKS
    from benchmarks.record_third_party import SCENARIO_RUNS
    from tests.conformance.test_conformance import SCENARIOS

    assert tuple(SCENARIO_RUNS) == FRAMEWORKS
    assert set(SCENARIO_RUNS.values()) <= {scenario.name for scenario in SCENARIOS}
    for name in FRAMEWORKS:
        record = map_spans(spans_of(name))
        assert not record.problems, (name, record.problems)
        sessions = [t for t in record.triples if t[1:] == (RDF_TYPE, O.AgentSession)]
        assert len(sessions) == 1, name  # one run, the script's
