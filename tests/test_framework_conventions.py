"""The general readings the frameworks of the conformance suite need (issue 42), each on
the smallest span tree that shows it: module envelopes and structured output (DSPy), JSON
typed by its media type, tool calls known only from a model's messages (Haystack), a
result only in the next request (AutoGen with OpenLLMetry), steps from tool calls where no
model call is recorded (AutoGen alone), event spans (BeeAI)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pyshacl
import rdflib
from hypothesis import given
from hypothesis import strategies as st

from otel_prov import map_spans
from otel_prov.prov._conventions import tool_name_from_span_name, unwrapped
from otel_prov.prov._messages import Message, react, sections
from otel_prov.prov._rdf import parse_literal
from otel_prov.prov._span_record import Role, SpanEvent, SpanRecord, classify
from otel_prov.prov._vocab import RDF_TYPE, O, P
from otel_prov.semconv import SHAPES_PATH
from tests.builders import T0, make_span

OI = {"openinference__span__kind": "LLM", "llm__model_name": "m"}


def _root(span: SpanRecord) -> SpanRecord:
    """``span`` classified as the root it is (``make_span`` classifies every span as a child)."""
    return dataclasses.replace(span, role=classify(span.attributes, root=True, name=span.name))


def _run(spans: list[SpanRecord]) -> dict[str, Any]:
    """What a reader would take from the run's triples: its steps (number, thought, action)
    and tool calls (name, call id, status, arguments, observation), question and answer."""
    record = map_spans(spans)
    assert not record.problems, record.problems
    triples = set(record.triples)

    def one(subject: str, predicate: str) -> str | None:
        found = [o for s, p, o in triples if s == subject and p == predicate]
        return parse_literal(found[0]) if len(found) == 1 else None

    def value(entity: str | None) -> str | None:
        return one(entity, P.value) if entity is not None else None

    def typed(cls: str) -> list[str]:
        return [s for s, p, o in triples if p == RDF_TYPE and o == cls]

    def linked(subject: str, predicate: str, cls: str) -> str | None:
        found = [o for s, p, o in triples if s == subject and p == predicate and o in typed(cls)]
        return found[0] if len(found) == 1 else None

    def generated(activity: str, cls: str) -> str | None:
        found = [s for s, p, o in triples if p == P.wasGeneratedBy and o == activity]
        found = [s for s in found if s in typed(cls)]
        return found[0] if len(found) == 1 else None

    steps = sorted(typed(O.Iteration), key=lambda s: int(one(s, O.iterationNumber) or 0))
    calls = sorted(typed(O.ToolCall), key=lambda s: (one(s, P.startedAtTime) or "", s))
    (session,) = typed(O.AgentSession)
    return {
        "steps": [
            (one(s, O.iterationNumber), value(generated(s, O.Thought)), one(s, O.action))
            for s in steps
        ],
        "calls": [
            (
                one(c, O.toolName),
                one(c, O.toolCallId),
                one(c, O.status),
                value(linked(c, P.used, O.Arguments)),
                value(generated(c, O.Observation)),
            )
            for c in calls
        ],
        "question": value(linked(session, P.used, O.Question)),
        "answer": value(generated(session, O.Answer)),
        "triples": triples,
    }


def _conforms(triples: set[tuple[str, str, str]]) -> None:
    graph = rdflib.Graph().parse(
        data="\n".join(f"{s} {p} {o} ." for s, p, o in triples), format="nt"
    )
    shapes = rdflib.Graph().parse(SHAPES_PATH, format="turtle")
    conforms, _, text = pyshacl.validate(graph, shacl_graph=shapes, advanced=True)
    assert conforms, text


# DSPy ---------------------------------------------------------------------------------

_FIELDS = (
    "[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
    "[[ ## next_tool_args ## ]]\n{args}\n\n[[ ## completed ## ]]"
)


def _lm(span_id: int, parent: int, at: float, text: str) -> SpanRecord:
    return make_span(span_id, parent, name="LM.__call__", start_ms=at, end_ms=at + 0.5,
                     llm__output_messages__0__message__role="assistant",
                     llm__output_messages__0__message__content=text,
                     llm__input_messages__0__message__role="user",
                     llm__input_messages__0__message__content="[[ ## question ## ]]\nq",
                     **OI)  # fmt: skip


def _dspy_run() -> list[SpanRecord]:
    json_in = {"input__mime_type": "application/json", "output__mime_type": "application/json"}
    return [
        _root(make_span(1, name="ReAct.forward", end_ms=10, openinference__span__kind="CHAIN",
                        input__value=json.dumps({"input_args": {"question": "Weather in Paris?"}}),
                        output__value=json.dumps({"trajectory": {}, "reasoning": "r",
                                                  "answer": "18 °C."}), **json_in)),
        make_span(2, 1, name="Predict.forward", start_ms=0.5, end_ms=1.5,
                  openinference__span__kind="CHAIN"),
        _lm(3, 2, 1, _FIELDS.format(thought="Look it up.", tool="get_weather",
                                    args='{"city": "Paris"}')),
        make_span(4, 1, name="get_weather.__call__", start_ms=2, end_ms=3,
                  openinference__span__kind="TOOL",
                  input__value=json.dumps({"kwargs": {"city": "Paris"}}),
                  output__value=json.dumps("Paris: 18 °C"), **json_in),
        _lm(5, 1, 4, _FIELDS.format(thought="Done.", tool="finish", args="{}")),
        make_span(6, 1, name="finish.__call__", start_ms=5, end_ms=5.5,
                  openinference__span__kind="TOOL", input__value='{"kwargs": {}}',
                  output__value='"Completed."', **json_in),
        _lm(7, 1, 6, "[[ ## reasoning ## ]]\nr\n\n[[ ## answer ## ]]\n18 °C.\n\n"
                     "[[ ## completed ## ]]"),
    ]  # fmt: skip


def test_a_dspy_react_run_reads_through_its_envelopes_fields_and_json() -> None:
    run = _run(_dspy_run())
    assert run["question"] == "Weather in Paris?"
    assert run["answer"] == "18 °C."
    # The model call after `finish` extracts the answer within the step that finished.
    assert run["steps"] == [("1", "Look it up.", "get_weather"), ("2", "Done.", None)]
    assert run["calls"] == [("get_weather", None, "ok", '{"city": "Paris"}', "Paris: 18 °C")]
    _conforms(run["triples"])


def test_a_json_string_is_decoded_only_when_typed_json() -> None:
    spans = _dspy_run()
    spans[3] = make_span(4, 1, name="get_weather.__call__", start_ms=2, end_ms=3,
                         openinference__span__kind="TOOL", output__value='"quoted"',
                         output__mime_type="text/plain")  # fmt: skip
    assert _run(spans)["calls"][0][4] == '"quoted"'


def test_envelopes_of_a_call_are_read_through() -> None:
    assert unwrapped('{"input_args": {"question": "q"}}', "question") == "q"
    assert unwrapped('{"kwargs": {"city": "Paris"}, "args": []}', "arguments") == (
        '{"city": "Paris"}'
    )
    assert unwrapped('{"city": "Paris"}', "arguments") is None  # no envelope: as it is
    assert unwrapped('{"kwargs": "x"}', "arguments") is None
    assert unwrapped('{"reasoning": "r", "answer": "a"}', "answer") == "a"


def test_a_tool_span_named_by_its_method_is_its_tool() -> None:
    assert tool_name_from_span_name("get_weather.__call__") == "get_weather"
    assert tool_name_from_span_name(".__call__") == ".__call__"
    assert tool_name_from_span_name("execute_tool get_weather") == "get_weather"
    finish = make_span(1, name="finish.__call__", openinference__span__kind="TOOL")
    assert finish.role is Role.SPAN  # the loop's end, not a call of a step


def test_a_model_text_in_field_sections_says_its_thought_call_and_answer() -> None:
    step = react(Message("assistant", _FIELDS.format(thought="T", tool="w", args='{"c": 1}')))
    assert (step.reasoning, step.text) == ("T", None)
    assert [(c.name, c.arguments, c.call_id) for c in step.calls] == [("w", '{"c": 1}', None)]
    answer = react(Message("assistant", "[[ ## reasoning ## ]]\nR\n[[ ## answer ## ]]\nA"))
    assert (answer.reasoning, answer.text, answer.calls) == ("R", "A", ())
    plain = Message("assistant", "Before [[ ## answer ## ]]\nA")
    assert react(plain) == plain  # text before the first section: not that form


@given(st.text())
def test_reading_field_sections_of_any_text_never_raises(text: str) -> None:
    found = sections(text)
    assert found is None or all(isinstance(v, str) for v in found.values())
    react(Message("assistant", text))
    react(Message("assistant", f"[[ ## next_tool_args ## ]]\n{text}"))


# Haystack: tool calls known only from the model's messages ------------------------------


def _haystack_run(*, ids: bool) -> list[SpanRecord]:
    def call(index: int, name: str, arguments: str, call_id: str) -> dict[str, str]:
        head = f"llm__output_messages__0__message__tool_calls__{index}__tool_call__"
        found = {f"{head}function__name": name, f"{head}function__arguments": arguments}
        return {**found, f"{head}id": call_id} if ids else found

    def sent(*messages: tuple[str, str | None, str | None]) -> dict[str, str]:
        found = {}
        for index, (role, content, call_id) in enumerate(messages):
            found[f"llm__input_messages__{index}__message__role"] = role
            if content is not None:
                found[f"llm__input_messages__{index}__message__content"] = content
            if call_id is not None and ids:
                found[f"llm__input_messages__{index}__message__tool_call_id"] = call_id
        return found

    question = ("user", "Weather in Paris?", None)
    asked = ("assistant", "Look it up.", None)
    return [
        _root(make_span(1, name="Agent.run", end_ms=10, openinference__span__kind="CHAIN",
                        input__value=json.dumps({"messages": ["ChatMessage(_role=...)"]}),
                        output__value=json.dumps({"messages": ["ChatMessage(_role=...)"]}))),
        make_span(2, 1, name="OpenAIChatGenerator.run", start_ms=1, end_ms=2, **OI,
                  **sent(question), llm__output_messages__0__message__role="assistant",
                  llm__output_messages__0__message__content="Look it up.",
                  **call(0, "get_weather", '{"city": "Paris"}', "c1"),
                  **call(1, "get_forecast", '{"city": "Paris"}', "c2")),
        make_span(3, 1, name="OpenAIChatGenerator.run", start_ms=3, end_ms=4, **OI,
                  **sent(question, asked, ("tool", "18 °C", "c1"), ("tool", None, "c2")),
                  llm__output_messages__0__message__role="assistant",
                  llm__output_messages__0__message__content="Now more.",
                  **call(0, "get_news", "{}", "c3")),
    ]  # fmt: skip


def test_tool_calls_only_in_the_model_messages_are_calls_of_their_step() -> None:
    for ids in (True, False):
        run = _run(_haystack_run(ids=ids))
        assert run["question"] == "Weather in Paris?"  # the reprs are no question
        assert run["steps"] == [("1", "Look it up.", "get_weather"), ("2", "Now more.", "get_news")]
        # Answered by id (or, with none, in order) in the next request; the last call
        # has no request after it: it never said it ended.
        assert run["calls"] == [
            ("get_weather", "c1" if ids else None, "ok", '{"city": "Paris"}', "18 °C"),
            ("get_forecast", "c2" if ids else None, "ok", '{"city": "Paris"}', None),
            ("get_news", "c3" if ids else None, "incomplete", "{}", None),
        ]
        _conforms(run["triples"])
        # The next step used what the calls returned.
        step_two = next(
            s for s, p, o in run["triples"] if p == O.iterationNumber and parse_literal(o) == "2"
        )
        used = {o for s, p, o in run["triples"] if s == step_two and p == P.used}
        assert len(used) == 2  # both answered calls' observations


def test_a_run_with_tool_spans_makes_no_calls_from_messages() -> None:
    spans = _haystack_run(ids=True)
    spans.append(make_span(4, 1, name="get_weather", start_ms=2.1, end_ms=2.5,
                           openinference__span__kind="TOOL", tool__name="get_weather",
                           output__value="18 °C"))  # fmt: skip
    names = [call[0] for call in _run(spans)["calls"]]
    assert names == ["get_weather"]


# AutoGen --------------------------------------------------------------------------------


def _autogen_tool(span_id: int, at: float, name: str, call_id: str, **more: Any) -> SpanRecord:
    return make_span(span_id, 1, name=f"execute_tool {name}", start_ms=at, end_ms=at + 0.5,
                     gen_ai__operation__name="execute_tool", gen_ai__tool__name=name,
                     gen_ai__tool__call__id=call_id, **more)  # fmt: skip


def test_a_result_only_in_the_next_request_is_the_call_observation() -> None:
    call = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "P"}}
        ],
    }
    answer = {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": "c1", "response": "18 °C"}],
    }
    user = {"role": "user", "parts": [{"type": "text", "content": "q"}]}
    spans = [
        make_span(1, name="invoke_agent weather", end_ms=10,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="weather"),
        make_span(2, 1, name="openai.chat", start_ms=1, end_ms=2, gen_ai__operation__name="chat",
                  gen_ai__input__messages=json.dumps([user]),
                  gen_ai__output__messages=json.dumps([call])),
        _autogen_tool(3, 2.5, "get_weather", "c1"),
        make_span(4, 1, name="openai.chat", start_ms=4, end_ms=5, gen_ai__operation__name="chat",
                  gen_ai__input__messages=json.dumps([user, call, answer])),
    ]  # fmt: skip
    assert _run(spans)["calls"] == [("get_weather", "c1", "ok", '{"city": "P"}', "18 °C")]


def test_without_model_call_spans_each_tool_call_opens_a_step() -> None:
    spans = [
        make_span(1, name="invoke_agent weather", end_ms=10,
                  gen_ai__operation__name="invoke_agent", gen_ai__agent__name="weather"),
        _autogen_tool(2, 1, "get_weather", "c1"),
        _autogen_tool(3, 1.2, "get_time", "c2"),  # beside the first: the same step
        _autogen_tool(4, 3, "get_forecast", "c3", status="error", message="no forecast"),
    ]  # fmt: skip
    run = _run(spans)
    assert run["steps"] == [("1", None, "get_weather"), ("2", None, "get_forecast")]
    assert sorted((name, status) for name, _, status, _, _ in run["calls"]) == [
        ("get_forecast", "error"), ("get_time", "ok"), ("get_weather", "ok")]  # fmt: skip
    _conforms(run["triples"])


# BeeAI ----------------------------------------------------------------------------------


def test_an_event_recorded_as_a_span_is_a_plain_span() -> None:
    error = make_span(2, 1, name="error", openinference__span__kind="TOOL",
                      metadata__path="tool.custom.get_forecast.error")  # fmt: skip
    answer = make_span(3, 1, name="final_answer", openinference__span__kind="AGENT",
                       metadata__path="agent.requirement.final_answer")  # fmt: skip
    assert (error.role, answer.role) == (Role.SPAN, Role.SPAN)
    tool = make_span(4, 1, name="get_weather", openinference__span__kind="TOOL",
                     metadata__class_name="FunctionTool")  # fmt: skip
    assert tool.role is Role.TOOL_CALL


def test_token_counts_written_as_digits_are_read_without_a_problem() -> None:
    spans = [
        make_span(1, name="invoke_agent", gen_ai__operation__name="invoke_agent"),
        make_span(2, 1, name="chat", gen_ai__operation__name="chat",
                  gen_ai__usage__input_tokens="40", gen_ai__usage__output_tokens="7"),
    ]  # fmt: skip
    record = map_spans(spans)
    assert not record.problems
    counts = {p: o for s, p, o in record.triples if p in (O.inputTokens, O.outputTokens)}
    assert {p: parse_literal(o) for p, o in counts.items()} == {
        O.inputTokens: "40", O.outputTokens: "7"}  # fmt: skip
    spans[1] = make_span(2, 1, name="chat", gen_ai__operation__name="chat",
                         gen_ai__usage__input_tokens="forty")  # fmt: skip
    assert map_spans(spans).problems  # not a number: reported, left out


def test_a_failed_call_answer_that_says_more_than_its_error_message_is_the_error() -> None:
    """BeeAI's failed tool span: its exception's message is its wrapper's, "Tool Error";
    the tool's output repeats it with the cause."""
    said = "ToolError: Tool Error\n  ForecastUnavailableError: no forecast for Paris"
    exception = SpanEvent("exception", T0, {"exception.type": "ToolError",
                                            "exception.message": "Tool Error"})  # fmt: skip
    spans = [
        make_span(1, name="weather", openinference__span__kind="AGENT"),
        make_span(2, 1, name="get_forecast", status="error", events=(exception,),
                  openinference__span__kind="TOOL", tool__name="get_forecast",
                  output__value=said),
        make_span(3, 1, name="get_weather", status="error", events=(exception,),
                  openinference__span__kind="TOOL", tool__name="get_weather",
                  output__value="something else"),
    ]  # fmt: skip
    triples = map_spans(spans).triples
    messages = sorted(parse_literal(o) for s, p, o in triples if p == O.errorMessage)
    assert messages == ["Tool Error", said]  # the other answer does not repeat it: kept
