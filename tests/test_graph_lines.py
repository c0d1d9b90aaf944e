"""The graph as ``verify --all`` reads it: a store's lines, each trace's found apart."""

from __future__ import annotations

from otel_prov.read._graph_lines import GraphLines

_DT = "^^<http://www.w3.org/2001/XMLSchema#dateTime>"
_TRACE = "0af7651916cd43dd8448eb211c80319c"


def _run(suffix: str) -> str:
    return f"<urn:otel-prov:{_TRACE}:{suffix}>"


def test_datetimes_come_out_as_the_mapper_writes_them_and_nothing_else_changes() -> None:
    stored = [
        f'{_run("a")} <urn:p:start> "2025-01-01T01:00:00.500+01:00"{_DT} .',  # an offset
        f'{_run("a")} <urn:p:end> "2025-01-01T00:00:01.250Z"{_DT} .',  # a trailing zero
        f'{_run("a")} <urn:p:seen> "2025-01-01T00:00:02.5Z"{_DT} .',  # as the mapper writes
        f'{_run("a")} <urn:p:note> "ends like one \\"2025-01-01T00:00:00+01:00\\"" .',
        f'{_run("b")} <urn:p:odd> "not a \\"time+01:00"{_DT} .',  # ill-typed: kept as it is
        '<urn:otel-prov:agent:x> <urn:p:end> "2025-01-01T00:00:00.10Z"' + _DT + " .",
    ]
    lines = GraphLines(["\n".join(reversed(stored)) + "\n"])
    assert sorted(lines.of_trace(_TRACE)) == sorted(
        [
            (_run("a"), "<urn:p:start>", f'"2025-01-01T00:00:00.5Z"{_DT}'),
            (_run("a"), "<urn:p:end>", f'"2025-01-01T00:00:01.25Z"{_DT}'),
            (_run("a"), "<urn:p:seen>", f'"2025-01-01T00:00:02.5Z"{_DT}'),
            (_run("a"), "<urn:p:note>", '"ends like one \\"2025-01-01T00:00:00+01:00\\""'),
            (_run("b"), "<urn:p:odd>", f'"not a \\"time+01:00"{_DT}'),
        ]
    )
    assert lines.others == [
        ("<urn:otel-prov:agent:x>", "<urn:p:end>", f'"2025-01-01T00:00:00.1Z"{_DT}')
    ]
    assert lines.of_trace("0" * 32) == [] and lines.of_trace("short") == []
