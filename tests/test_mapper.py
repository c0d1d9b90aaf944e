"""The mapper: golden output for a known tree, determinism, PROV shape, and bad input."""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import random
from pathlib import Path

import pytest

from otel_prov.prov._bundle import content_hash, session_content
from otel_prov.prov._mapper import map_spans
from otel_prov.prov._rdf import boolean, parse_literal, to_ntriples
from otel_prov.prov._record import ProvRecord
from otel_prov.prov._span_record import SpanEvent
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.builders import TRACE, make_span
from tests.session_tree import known_session

GOLDEN = Path(__file__).parent / "golden" / "known_session.nt"


def _act(span_id: int) -> str:
    return f"<urn:otel-prov:{TRACE:032x}:{span_id:016x}>"


def _ent(span_id: int, kind: str) -> str:
    return f"<urn:otel-prov:{TRACE:032x}:{span_id:016x}:{kind}>"


def test_known_session_matches_golden_file() -> None:
    text = "".join(sorted(to_ntriples(map_spans(known_session()).triples).splitlines(True)))
    if os.environ.get("OTEL_PROV_UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    expected = GOLDEN.read_text(encoding="utf-8")
    diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True)))
    assert text == expected, f"mapper output changed (OTEL_PROV_UPDATE_GOLDEN=1 to accept):\n{diff}"


def test_same_spans_in_any_order_give_the_same_triples() -> None:
    spans = known_session()
    first = map_spans(spans)
    for seed in range(5):
        shuffled = spans[:]
        random.Random(seed).shuffle(shuffled)
        again = map_spans(shuffled)
        assert again.triples == first.triples
    assert first.root == _act(0x20)
    assert first.trace_id == f"{TRACE:032x}"


def test_iterations_chain_and_parallel_observations_form_a_dag() -> None:
    triples = set(map_spans(known_session()).triples)
    assert (_act(0x24), P.wasInformedBy, _act(0x21)) in triples
    assert (_act(0x26), P.wasInformedBy, _act(0x24)) in triples
    assert (_act(0x29), P.wasInformedBy, _act(0x26)) in triples
    # iteration 4 used both observations of the two parallel calls of iteration 3
    assert (_act(0x29), P.used, _ent(0x27, "observation")) in triples
    assert (_act(0x29), P.used, _ent(0x28, "observation")) in triples
    answer = _ent(0x20, "answer")
    derived = {o for s, p, o in triples if s == answer and p == P.wasDerivedFrom}
    assert {
        _ent(0x25, "observation"),
        _ent(0x27, "observation"),
        _ent(0x28, "observation"),
    } <= derived


def test_failed_tool_call_has_error_and_no_observation() -> None:
    triples = set(map_spans(known_session()).triples)
    failed = _act(0x23)
    assert (failed, O.status, '"error"') in triples
    assert (failed, O.errorType, '"TimeoutError"') in triples
    assert (failed, O.errorMessage, '"timed out"') in triples
    assert not any(p == P.wasGeneratedBy and o == failed for _, p, o in triples)
    # the failure informs the next step, but nothing of it is used as a result
    assert not any(s == _act(0x24) and p == P.used for s, p, _ in triples)


@pytest.mark.parametrize(
    ("kind", "attributes", "failed"),
    [
        ("client", {"http.response.status_code": 404}, "404"),
        ("client", {"http.status_code": 503}, "503"),  # the older key
        ("client", {"http.response.status_code": "500"}, "500"),
        ("server", {"http.response.status_code": 503}, "503"),
        ("server", {"http.response.status_code": 404}, None),  # the client's mistake
        ("client", {"http.response.status_code": 302}, None),
        ("internal", {"http.response.status_code": 500}, None),  # neither side of HTTP
    ],
)
def test_http_status_follows_the_otel_http_conventions(
    kind: str, attributes: dict[str, object], failed: str | None
) -> None:
    span = dataclasses.replace(make_span(3, None, name="GET"), kind=kind, attributes=attributes)
    triples = set(map_spans([span]).triples)
    if failed is None:
        assert (_act(3), O.status, '"ok"') in triples
        assert not any(p == O.errorType for _, p, _ in triples)
    else:
        assert (_act(3), O.status, '"error"') in triples
        assert (_act(3), O.errorType, f'"{failed}"') in triples
        assert (_act(3), O.errorMessage, f'"HTTP status {failed}"') in triples


def test_an_http_span_keeps_the_status_its_instrumentation_set() -> None:
    span = make_span(3, None, name="GET", status="error", message="connection reset")
    span = dataclasses.replace(span, kind="client", attributes={"error.type": "ConnectionError"})
    triples = set(map_spans([span]).triples)
    assert (_act(3), O.errorType, '"ConnectionError"') in triples
    assert (_act(3), O.errorMessage, '"connection reset"') in triples
    told_ok = dataclasses.replace(span, status="ok", attributes={"http.response.status_code": 404})
    assert (_act(3), O.status, '"ok"') in set(map_spans([told_ok]).triples)
    # An error with nothing but its status code (the requests instrumentation's 503).
    bare = dataclasses.replace(span, status_message=None, attributes={"http.status_code": 503})
    assert (_act(3), O.errorType, '"503"') in set(map_spans([bare]).triples)


def test_a_sessions_status_is_its_own_and_its_failed_calls_a_separate_count() -> None:
    def session(
        tool_status: str, *, tool_ended: bool = True, status: str = "unset"
    ) -> set[tuple[str, str, str]]:
        spans = [
            make_span(1, None, gen_ai__operation__name="invoke_agent", end_ms=10, status=status),
            make_span(
                2,
                1,
                gen_ai__operation__name="execute_tool",
                status=tool_status,
                end_ms=1 if tool_ended else None,
            ),
        ]
        return set(map_spans(spans).triples)

    def failed_calls(n: int) -> tuple[str, str, str]:
        return (_act(1), O.failedCalls, f'"{n}"^^<http://www.w3.org/2001/XMLSchema#integer>')

    clean, swallowed = session("ok"), session("error")
    assert {(_act(1), O.status, '"ok"'), failed_calls(0)} <= clean
    # The agent carried on past the failure: the session is ok, and counts what failed.
    assert {(_act(1), O.status, '"ok"'), failed_calls(1)} <= swallowed
    assert not any(s == _act(1) and p == O.errorType for s, p, _ in swallowed)
    raised = session("error", status="error")
    assert {(_act(1), O.status, '"error"'), failed_calls(1)} <= raised
    # A call still running is not a failure (it may yet end well).
    assert failed_calls(0) in session("unset", tool_ended=False)


def test_declared_tools_come_from_our_attribute_or_the_genai_definitions() -> None:
    definitions = json.dumps(
        [{"type": "function", "name": "search"}, {"function": {"name": "fetch"}}, {"x": 1}]
    )
    ours = map_spans(
        [make_span(1, None, gen_ai__operation__name="invoke_agent", otel_prov__agent__tools=("a",))]
    )
    theirs = map_spans(
        [
            make_span(1, None, gen_ai__operation__name="invoke_agent"),
            make_span(2, 1, gen_ai__operation__name="chat", gen_ai__tool__definitions=definitions),
            make_span(3, None, trace_id=7, gen_ai__operation__name="invoke_agent"),
        ]
    )

    def declared(record: ProvRecord, session: str) -> set[str]:
        return {o for s, p, o in record.triples if s == session and p == O.declaredTool}

    assert declared(ours, _act(1)) == {"<urn:otel-prov:tool:a>"}
    assert declared(theirs, _act(1)) == {
        "<urn:otel-prov:tool:search>",
        "<urn:otel-prov:tool:fetch>",
    }


def test_nested_session_is_part_of_and_started_by_its_parent() -> None:
    spans = [
        make_span(
            1, None, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="outer", end_ms=10
        ),
        make_span(
            2, 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name="delegate", end_ms=9
        ),
        make_span(
            3, 2, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="inner", end_ms=8
        ),
    ]
    record = map_spans(spans)
    triples = set(record.triples)
    assert record.root == _act(1)
    assert (_act(3), RDF_TYPE, O.AgentSession) in triples
    assert (_act(3), O.partOf, _act(2)) in triples
    start = _ent(3, "start")
    assert {(_act(3), P.qualifiedStart, start), (start, P.hadActivity, _act(2))} <= triples
    assert (start, RDF_TYPE, P.Start) in triples and (_act(3), P.wasInformedBy, _act(2)) in triples
    assert not any(s == _act(1) and p == P.qualifiedStart for s, p, _ in triples)


def test_only_the_run_is_marked_with_its_start_and_the_mark_is_sealed() -> None:
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent", start_ms=2, end_ms=10),
        make_span(2, 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name="t", end_ms=9),
        make_span(3, 2, gen_ai__operation__name="invoke_agent", start_ms=3, end_ms=8),
    ]
    triples = map_spans(spans).triples
    marked = [(s, o) for s, p, o in triples if p == O.runStartedAt]
    started = {s: o for s, p, o in triples if p == P.startedAtTime}
    assert marked == [(_act(1), started[_act(1)])]
    assert started[_act(3)] != started[_act(1)]
    content = session_content(triples, _act(1))
    assert (_act(1), O.runStartedAt, started[_act(1)]) in content
    recorded = next(parse_literal(o) for _, p, o in triples if p == O.contentHash)
    assert recorded == content_hash(content)


def test_a_session_reached_over_http_is_started_by_the_tool_call_that_sent_the_request() -> None:
    agent, researcher = "agent-service", "research-service"
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent", gen_ai__agent__name="outer"),
        make_span(2, 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name="research"),
        make_span(3, 2, name="POST", http__request__method="POST"),  # client, in the agent
        make_span(4, 3, name="POST /run", service=researcher),  # server, in the other service
        make_span(
            5,
            4,
            service=researcher,
            gen_ai__operation__name="invoke_agent",
            gen_ai__agent__name="inner",
        ),
    ]
    triples = set(map_spans(spans).triples)
    start = _ent(5, "start")
    assert {(_act(5), P.qualifiedStart, start), (start, P.hadActivity, _act(2))} <= triples
    assert (_act(5), P.wasInformedBy, _act(2)) in triples
    chain = [
        (_act(5), O.partOf, _act(4)),
        (_act(4), O.partOf, _act(3)),
        (_act(3), O.partOf, _act(2)),
    ]
    assert set(chain) <= triples
    for span, service in ((1, agent), (3, agent), (4, researcher), (5, researcher)):
        assert (_act(span), P.wasAssociatedWith, f"<urn:otel-prov:service:{service}>") in triples
    assert (f"<urn:otel-prov:service:{researcher}>", RDF_TYPE, O.Service) in triples
    # Only the outermost session is sealed: the nested one is part of its bundle.
    assert len({s for s, p, _ in triples if p == O.bundleOf}) == 1


def test_third_party_conventions_map_to_the_same_classes() -> None:
    spans = [
        make_span(
            1,
            None,
            openinference__span__kind="AGENT",
            input__value="q?",
            output__value="a!",
            session__id="s-1",
        ),
        make_span(
            2,
            1,
            openinference__span__kind="TOOL",
            tool__name="search",
            input__value='{"q": "x"}',
            output__value="found",
        ),
        make_span(3, 1, openinference__span__kind="LLM", llm__model_name="gpt"),
        make_span(4, 1, traceloop__span__kind="tool", traceloop__entity__name="calc"),
        make_span(5, 1, openinference__span__kind="RETRIEVER"),
    ]
    triples = set(map_spans(spans).triples)
    assert (_act(1), RDF_TYPE, O.AgentSession) in triples
    assert (_act(1), O.sessionId, '"s-1"') in triples
    assert (_ent(1, "question"), P.value, '"q?"') in triples
    assert (_act(2), O.toolName, '"search"') in triples
    assert (_ent(2, "observation"), P.value, '"found"') in triples
    assert (_act(3), RDF_TYPE, O.ModelCall) in triples
    assert (_act(3), O.modelName, '"gpt"') in triples
    assert (_act(4), O.toolName, '"calc"') in triples
    assert (_act(5), RDF_TYPE, O.Retrieval) in triples


def test_non_json_arguments_are_kept_as_text_and_reported() -> None:
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent"),
        make_span(
            2,
            1,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="t",
            otel_prov__arguments="city=Paris",
        ),
    ]
    record = map_spans(spans)
    assert (_ent(2, "arguments"), P.value, '"city=Paris"') in record.triples
    assert any(
        "not JSON" in problem and "0000000000000002" in problem for problem in record.problems
    )


def test_unexpected_attribute_types_are_converted_and_reported() -> None:
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent", otel_prov__question=["a", "b"]),
        make_span(2, 1, otel_prov__iteration__number="2", otel_prov__thought=42),
        make_span(3, 1, otel_prov__iteration__number="two"),
    ]
    record = map_spans(spans)
    triples = set(record.triples)
    assert (_ent(1, "question"), P.value, '"[\\"a\\", \\"b\\"]"') in triples
    assert (
        _act(2),
        O.iterationNumber,
        '"2"^^<http://www.w3.org/2001/XMLSchema#integer>',
    ) in triples
    assert (_ent(2, "thought"), P.value, '"42"') in triples
    assert (_act(3), RDF_TYPE, O.Iteration) in triples  # kept, without a number
    assert not any(s == _act(3) and p == O.iterationNumber for s, p, _ in triples)
    assert len(record.problems) == 4


def test_missing_parent_keeps_the_span_and_its_link() -> None:
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent"),
        make_span(3, 2, gen_ai__operation__name="execute_tool", gen_ai__tool__name="t"),
    ]
    triples = set(map_spans(spans).triples)
    assert (_act(3), O.partOf, _act(2)) in triples
    assert (_act(3), RDF_TYPE, O.ToolCall) in triples


def test_a_tool_call_recorded_apart_from_its_remote_parent_is_outside_the_callers_seal() -> None:
    """An MCP server's tool call: ``partOf`` the client's by its IRI, marked as recorded
    apart when mapped alone; mapped with the client's spans (one receiver), it is not."""
    tool = dict(gen_ai__operation__name="execute_tool", gen_ai__tool__name="t")
    client = [
        make_span(1, None, gen_ai__operation__name="invoke_agent"),
        make_span(2, 1, **tool),
    ]
    server = [dataclasses.replace(make_span(3, 2, service="tools", **tool), remote_parent=True)]
    alone = set(map_spans(server).triples)
    assert (_act(3), O.partOf, _act(2)) in alone
    assert (_act(3), O.remoteParent, boolean(True)) in alone
    together = list(map_spans(client + server).triples)
    assert (_act(3), O.partOf, _act(2)) in together
    assert not any(p == O.remoteParent for _, p, _ in together)
    assert any(t[0] == _act(3) for t in session_content(together, _act(1)))
    apart = list(map_spans(client).triples) + list(alone)
    assert not any(t[0].startswith(_act(3)[:-1]) for t in session_content(apart, _act(1)))


def test_ten_megabyte_attribute_survives_whole() -> None:
    big = "x" * 10_000_000 + '"\n'
    spans = [make_span(1, None, gen_ai__operation__name="invoke_agent", otel_prov__answer=big)]
    values = [o for s, p, o in map_spans(spans).triples if p == P.value]
    assert [parse_literal(v) for v in values] == [big]


def test_a_span_whose_mapping_fails_is_kept_as_a_plain_span() -> None:
    class Exploding(dict[str, object]):
        def get(self, key: str, default: object = None) -> object:
            if key == "gen_ai.tool.name":
                raise RuntimeError("boom")
            return super().get(key, default)

    base = make_span(2, 1, gen_ai__operation__name="execute_tool")
    broken = type(base)(
        **{
            **{f: getattr(base, f) for f in base.__slots__},
            "attributes": Exploding(base.attributes),
        }
    )
    record = map_spans([make_span(1, None, gen_ai__operation__name="invoke_agent"), broken])
    triples = set(record.triples)
    assert (_act(2), RDF_TYPE, O.Span) in triples
    assert (_act(2), O.spanId, '"0000000000000002"') in triples
    assert (_act(2), RDF_TYPE, O.ToolCall) not in triples
    assert any("boom" in problem for problem in record.problems)


def test_end_before_start_is_clamped_and_reported() -> None:
    record = map_spans([make_span(1, None, start_ms=5, end_ms=1)])
    ends = [o for s, p, o in record.triples if p == P.endedAtTime]
    starts = [o for s, p, o in record.triples if p == P.startedAtTime]
    assert ends == starts
    assert any("ends before it starts" in problem for problem in record.problems)


def test_exception_event_fills_error_details() -> None:
    event = SpanEvent("exception", 0, {"exception.type": "KeyError", "exception.message": "k"})
    record = map_spans([make_span(1, None, status="error", events=(event,))])
    assert (_act(1), O.errorType, '"KeyError"') in record.triples
    assert (_act(1), O.errorMessage, '"k"') in record.triples


def test_unfinished_span_is_incomplete_without_end_time() -> None:
    triples = set(
        map_spans([make_span(1, None, end_ms=None, gen_ai__operation__name="invoke_agent")]).triples
    )
    assert (_act(1), O.status, '"incomplete"') in triples
    assert not any(p == P.endedAtTime for _, p, _ in triples)


def test_links_become_was_informed_by() -> None:
    other = (0xABC, 0xDEF)
    record = map_spans([make_span(1, None, links=(other,))])
    assert (
        _act(1),
        P.wasInformedBy,
        f"<urn:otel-prov:{0xABC:032x}:{0xDEF:016x}>",
    ) in record.triples


@pytest.mark.parametrize("name", ["a b", "ü/ä", "<x>", "\ud800", "a\nb"])
def test_agent_and_tool_names_always_give_valid_iris(name: str) -> None:
    from otel_prov.prov._rdf import iri

    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent", gen_ai__agent__name=name),
        make_span(2, 1, gen_ai__operation__name="execute_tool", gen_ai__tool__name=name),
    ]
    record = map_spans(spans)
    assert record.problems == ()
    assert (_act(1), RDF_TYPE, O.AgentSession) in record.triples
    assert (_act(2), RDF_TYPE, O.ToolCall) in record.triples
    for s, _, o in record.triples:
        for term in (s, o):
            if term.startswith("<"):
                assert iri(term[1:-1]) == term


def test_arguments_are_kept_byte_for_byte() -> None:
    raw = '{"b": 1,   "a": [1.50, "é"]}'
    spans = [
        make_span(1, None, gen_ai__operation__name="invoke_agent"),
        make_span(
            2,
            1,
            gen_ai__operation__name="execute_tool",
            gen_ai__tool__name="t",
            gen_ai__tool__call__arguments=raw,
        ),
    ]
    values = [
        parse_literal(o)
        for s, p, o in map_spans(spans).triples
        if s == _ent(2, "arguments") and p == P.value
    ]
    assert values == [raw]
    assert json.loads(values[0]) == {"b": 1, "a": [1.5, "é"]}


@pytest.mark.parametrize(
    "operation", ["invoke_agent", "chat", "execute_tool", "retrieval", "create_agent"]
)
def test_a_value_nested_too_deep_to_parse_never_costs_its_span_its_role(operation: str) -> None:
    """Every attribute the mappers may read as JSON, holding JSON nested deeper than Python
    parses (a tool result from a hostile page): each is text, the span keeps its role."""
    deep = "[" * 5000 + '{"lc_agent_name": 1, "name": 2}' + "]" * 5000
    keys = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
        "gen_ai.tool.definitions",
        "gen_ai.retrieval.documents",
        "gen_ai.system_instructions",
        "input.value",
        "output.value",
        "metadata",
        "llm.tools",
        "traceloop.entity.input",
        "traceloop.entity.output",
        "otel_prov.arguments",
        "otel_prov.observation",
        "otel_prov.question",
        "otel_prov.answer",
    ]
    attributes = {key.replace(".", "__"): deep for key in keys}
    span = make_span(1, name=f"{operation} x", gen_ai__operation__name=operation, **attributes)
    record = map_spans([span])
    assert not [p for p in record.problems if "could not be converted" in p], record.problems
