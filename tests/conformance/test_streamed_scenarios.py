"""Every scenario's run, streamed step by step, ends up as the same run sealed at its end
(issue 39.2): the spans the agent sent its receiver (``tee``), mapped both ways through the
write pipeline, leave the same triples, apart from the bundles of the streamed entries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from otel_prov.prov._otlp_json import parse_otlp_json_body
from otel_prov.prov._otlp_proto import parse_otlp_proto
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._span_tree import SpanTree
from tests.conformance.test_conformance import SCENARIOS, Scenario, Stores
from tests.streamed_runs import sealed_at_end, streamed, without_bundles


def sent_spans(stores: Stores) -> dict[int, list[SpanRecord]]:
    """The spans of every trace request the agent sent, by trace."""
    traces: dict[int, dict[int, SpanRecord]] = {}
    for path, kind, body in stores.sent:
        if not path.endswith("/v1/traces"):
            continue
        parse = parse_otlp_json_body if "json" in kind else parse_otlp_proto
        for span in parse(body, path).spans:
            traces.setdefault(span.trace_id, {})[span.span_id] = span
    return {trace: list(spans.values()) for trace, spans in traces.items()}


@pytest.mark.integration
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_a_scenario_streamed_step_by_step_ends_as_sealed_at_its_end(
    scenario: Scenario, stores_of: Callable[[Scenario], Stores], tmp_path: Path
) -> None:
    runs = [
        spans
        for spans in sent_spans(stores_of(scenario)).values()
        if (root := SpanTree(spans).root) is not None and root.role is Role.SESSION
    ]
    assert runs, "the agent sent no run"
    for spans in runs:
        at_end = without_bundles(sealed_at_end(spans, str(tmp_path)).triples)
        assert without_bundles(streamed(spans, str(tmp_path)).triples) == at_end
