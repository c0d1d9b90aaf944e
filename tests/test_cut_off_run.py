"""A run whose own span never came, stored as far as it goes: the stand-ins of
``prov._stream.cut_off_run`` and what the mapper makes of them.

The run is the known session (``tests.session_tree``) stopped at any moment: the spans
that had ended by then came, those still open never will, and the rest never began.
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from otel_prov.prov._bundle import bundles_in, content_subjects
from otel_prov.prov._iris import activity_iri
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import literal
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._stream import awaits_run, cut_off_run
from otel_prov.prov._vocab import RDFS_LABEL, O
from tests.session_tree import known_session

SESSION = 0x20
KNOWN = known_session()
START = min(span.start_ns for span in KNOWN)


def stopped_at(offset_ms: float) -> list[SpanRecord]:
    """What a receiver has of the known run when its process stops ``offset_ms`` in."""
    at = START + int(offset_ms * 1_000_000)
    return [span for span in KNOWN if span.end_ns is not None and span.end_ns <= at]


@given(st.floats(0.0, 89.9), st.randoms(use_true_random=False))
def test_every_step_that_came_is_in_the_seal_of_one_incomplete_run(
    offset_ms: float, order: random.Random
) -> None:
    came = [span for span in stopped_at(offset_ms) if span.span_id != 0x10]
    steps = [span for span in came if span.role is not Role.SPAN]
    assert awaits_run(came) == bool(steps)
    stand_ins = cut_off_run(came)
    assert bool(stand_ins) == bool(steps)
    if not steps:
        return
    shuffled = [*came, *stand_ins]
    order.shuffle(shuffled)
    record = map_spans(shuffled)
    assert record.triples == map_spans([*came, *stand_ins]).triples  # deterministic
    ((_, session, _),) = bundles_in(record.triples)
    if any(span.role is Role.ITERATION for span in came):
        assert session == activity_iri(KNOWN[0].trace_id, SESSION)
    inside = content_subjects(record.triples, session)
    assert {activity_iri(span.trace_id, span.span_id) for span in steps} <= inside
    assert (session, O.status, literal("incomplete")) in record.triples
    unnamed = {activity_iri(span.trace_id, span.span_id) for span in stand_ins}
    assert not [t for t in record.triples if t[1] == RDFS_LABEL and t[0] in unnamed]
    assert {span.span_id for span in stand_ins}.isdisjoint(span.span_id for span in came)


def test_a_run_whose_span_came_needs_no_stand_in() -> None:
    assert not awaits_run(KNOWN) and cut_off_run(KNOWN) == []
    without_web = [span for span in KNOWN if span.span_id != 0x10]
    assert not awaits_run(without_web) and cut_off_run(without_web) == []
