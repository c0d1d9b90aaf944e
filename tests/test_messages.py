"""Chat messages in every recorded form, read as plain text per role (``_messages``)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from otel_prov.prov._conventions import MESSAGE_SOURCES
from otel_prov.prov._messages import (
    Message,
    SpanMessages,
    ToolCall,
    _call,
    _joined,
    _role,
    block_text,
    flattened,
    message,
    messages,
    numbered,
    system_instructions,
)
from otel_prov.prov._messages import span_messages as _span_messages
from otel_prov.prov._span_record import SpanEvent


def span_messages(attributes: dict[str, Any], events: Sequence[SpanEvent] = ()) -> SpanMessages:
    """A span's messages, from where the conventions say they are."""
    return _span_messages(attributes, events, MESSAGE_SOURCES)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "type",
                    "parts",
                    "content",
                    "text",
                    "data",
                    "messages",
                    "tool_calls",
                    "function",
                    "name",
                    "arguments",
                    "id",
                    "response",
                    "result",
                    "toolUse",
                    "toolResult",
                    "input",
                    "toolUseId",
                    "args",
                    "tool_call_id",
                    "x",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
_EVENT_NAMES = st.sampled_from(
    [
        "gen_ai.user.message",
        "gen_ai.system.message",
        "gen_ai.assistant.message",
        "gen_ai.tool.message",
        "gen_ai.choice",
        "gen_ai.client.inference.operation.details",
        "exception",
    ]
)
_EVENT_KEYS = st.sampled_from(
    ["content", "message", "id", "role", "gen_ai.input.messages", "gen_ai.output.messages",
     "gen_ai.system_instructions"]
)  # fmt: skip
_VALUE = st.one_of(_JSON.map(json.dumps), st.text(), st.integers(), st.none())
_ANY_TEXT = st.text(min_size=1).filter(lambda t: t.strip() == t and t != "")


def _all_messages_of(value: Any) -> None:
    for found in (*messages(value), message(value) or Message("x")):
        assert isinstance(found.role, str)
        assert found.text is None or isinstance(found.text, str)
        assert all(isinstance(call.arguments, str) for call in found.calls)
    assert block_text(value) is None or isinstance(block_text(value), str)
    system_instructions(value)


@given(_JSON)
def test_any_json_value_reads_without_raising(value: Any) -> None:
    _all_messages_of(value)
    _all_messages_of(json.dumps(value))


@given(
    st.dictionaries(
        st.tuples(
            st.sampled_from(["llm.input_messages.", "llm.output_messages."]),
            st.integers(0, 3).map(str) | st.just("9" * 12) | st.just("x"),
            st.sampled_from(
                [
                    "role",
                    "content",
                    "tool_call_id",
                    "contents.0.message_content.text",
                    "contents.1.message_content.type",
                    "tool_calls.0.tool_call.function.name",
                    "tool_calls.0.tool_call.function.arguments",
                    "tool_calls.0.tool_call.id",
                ]
            ),
        ).map(lambda k: f"{k[0]}{k[1]}.message.{k[2]}"),
        _VALUE,
    ),
    st.lists(
        st.builds(SpanEvent, _EVENT_NAMES, st.just(0), st.dictionaries(_EVENT_KEYS, _VALUE)),
        max_size=4,
    ),
)
def test_any_attributes_and_events_read_without_raising(
    attributes: dict[str, Any], events: list[SpanEvent]
) -> None:
    found = span_messages(attributes, events)
    for item in found.input + found.output:
        assert item.text is None or isinstance(item.text, str)


@given(_ANY_TEXT, _ANY_TEXT, st.booleans())
def test_genai_json_text_round_trips_decoded(question: str, answer: str, ascii: bool) -> None:
    """Whatever the text (odd Unicode, surrogates, escapes), the JSON's ``\\u`` escapes
    come back as the characters they stand for."""
    sent = [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": question}]},
    ]
    received = [
        {"role": "assistant", "parts": [
            {"type": "reasoning", "content": "hm"},
            {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": question}},
        ]},
        {"role": "assistant", "parts": [{"type": "text", "content": answer}]},
    ]  # fmt: skip
    attributes = {
        "gen_ai.input.messages": json.dumps(sent, ensure_ascii=ascii),
        "gen_ai.output.messages": json.dumps(received, ensure_ascii=ascii),
    }
    found = span_messages(attributes)
    assert [m.role for m in found.input] == ["system", "user"]
    assert found.input[1].text == question
    assert found.output[0].calls == (
        ToolCall("lookup", json.dumps({"q": question}, ensure_ascii=False), "c1"),
    )
    assert found.output[0].reasoning == "hm" and found.output[0].text is None
    assert found.output[1].text == answer


@given(st.integers(0, 3), _ANY_TEXT)
def test_flattened_messages_are_read_at_any_index(start: int, text: str) -> None:
    attributes = {
        f"llm.input_messages.{start}.message.role": "system",
        f"llm.input_messages.{start}.message.content": "Be brief.",
        f"llm.input_messages.{start + 10}.message.role": "user",
        f"llm.input_messages.{start + 10}.message.contents.0.message_content.type": "text",
        f"llm.input_messages.{start + 10}.message.contents.0.message_content.text": text,
        f"llm.output_messages.{start}.message.role": "assistant",
        f"llm.output_messages.{start + 1}.message.role": "assistant",
        f"llm.output_messages.{start + 1}.message.tool_calls.1.tool_call.function.name": "b",
        f"llm.output_messages.{start + 1}.message.tool_calls.0.tool_call.function.name": "a",
        f"llm.output_messages.{start + 1}.message.tool_calls.0.tool_call.function.arguments": "{}",
        f"llm.output_messages.{start + 1}.message.tool_calls.0.tool_call.id": "c1",
    }
    found = span_messages(attributes)
    assert [(m.role, m.text) for m in found.input] == [("system", "Be brief."), ("user", text)]
    assert found.output[1].calls == (ToolCall("a", "{}", "c1"), ToolCall("b", "{}", None))


@given(_ANY_TEXT)
def test_message_events_give_text_per_role(text: str) -> None:
    """The deprecated events Strands Agents emits: content blocks as JSON text."""
    blocks = json.dumps([{"text": text}])
    events = [
        SpanEvent("gen_ai.system.message", 1, {"content": json.dumps([{"text": "Be brief."}])}),
        SpanEvent("gen_ai.user.message", 2, {"content": blocks}),
        SpanEvent("gen_ai.tool.message", 3, {"content": json.dumps(
            [{"toolResult": {"toolUseId": "t1", "content": [{"text": "18"}], "status": "success"}}]
        )}),
        SpanEvent("gen_ai.choice", 4, {"message": json.dumps(
            [{"text": "Looking."}, {"toolUse": {"toolUseId": "t2", "name": "w", "input": {"c": 1}}}]
        ), "finish_reason": "tool_use"}),
    ]  # fmt: skip
    found = span_messages({}, events)
    assert [(m.role, m.text) for m in found.input] == [
        ("system", "Be brief."),
        ("user", text),
        ("tool", "18"),
    ]
    assert found.input[2].call_id == "t1"
    (choice,) = found.output
    assert (choice.role, choice.text) == ("assistant", "Looking.")
    assert choice.calls == (ToolCall("w", '{"c": 1}', "t2"),)


def test_the_operation_details_event_holds_the_genai_messages() -> None:
    details = "gen_ai.client.inference.operation.details"
    call = [{"role": "tool", "parts": [
        {"type": "tool_call", "name": "w", "id": "t1", "arguments": {"city": "Paris"}}
    ]}]  # fmt: skip
    response = [{"role": "tool", "parts": [
        {"type": "tool_call_response", "id": "t1", "response": [{"text": "18 \u00b0C"}]}
    ]}]  # fmt: skip
    events = [
        SpanEvent(details, 1, {"gen_ai.input.messages": json.dumps(call)}),
        SpanEvent(details, 2, {"gen_ai.output.messages": json.dumps(response)}),
    ]
    found = span_messages({}, events)
    assert found.input[0].calls == (ToolCall("w", '{"city": "Paris"}', "t1"),)
    assert (found.output[0].text, found.output[0].call_id) == ("18 °C", "t1")


def test_system_instructions_come_first_and_other_parts_are_skipped() -> None:
    instructions = [{"type": "text", "content": "Be brief."}, {"type": "blob", "content": "AA=="}]
    sent = [{"role": "user", "parts": [
        {"type": "uri", "uri": "https://x.example/a.png", "modality": "image"},
        {"type": "text", "content": "What is this?"},
    ]}]  # fmt: skip
    found = span_messages(
        {
            "gen_ai.system_instructions": json.dumps(instructions),
            "gen_ai.input.messages": json.dumps(sent),
        }
    )
    assert [(m.role, m.text) for m in found.input] == [
        ("system", "Be brief."),
        ("user", "What is this?"),
    ]
    assert system_instructions("plain text") == (Message("system", "plain text"),)


def test_serialised_framework_messages() -> None:
    openai = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": '{"c": 1}'}}
    ]}  # fmt: skip
    assert message(openai) == Message("assistant", None, (ToolCall("w", '{"c": 1}', "c1"),))
    langchain = {"type": "ai", "data": {"content": "hi", "tool_calls": [
        {"name": "w", "args": {"c": 1}, "id": "c2"}
    ]}}  # fmt: skip
    assert message(langchain) == Message("assistant", "hi", (ToolCall("w", '{"c": 1}', "c2"),))
    blocks = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image"}]}
    assert message(blocks) == Message("user", "a")
    assert message({"type": "text", "text": "a"}) is None  # a content block, not a message
    assert messages('{"messages": [{"role": "human", "content": "q"}]}') == (Message("user", "q"),)


def test_langchain_objects_and_openllmetry_run_records_hold_messages() -> None:
    """LangChain's ``{"lc": 1, "type": "constructor"}`` objects, also inside OpenLLMetry's
    ``{"outputs": {"messages": [...]}}`` record of a run."""
    ai = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
          "kwargs": {"content": "hi", "type": "ai", "tool_calls": [
              {"name": "w", "args": {"c": 1}, "id": "c1"}]}}  # fmt: skip
    expected = Message("assistant", "hi", (ToolCall("w", '{"c": 1}', "c1"),))
    assert message(ai) == expected
    assert messages(json.dumps({"outputs": {"messages": [ai]}, "kwargs": {}})) == (expected,)
    assert messages({"inputs": {"messages": [{"role": "user", "content": "q"}]}}) == (
        Message("user", "q"),
    )


def test_openai_responses_objects_and_items_are_messages() -> None:
    """A list of Responses objects (OpenInference's output.value of a streamed
    openai-agents turn): their output items, the function calls among them."""
    response = {"object": "response", "output": [
        {"type": "message", "role": "assistant",
         "content": [{"type": "output_text", "text": "thinking"}]},
        {"type": "function_call", "name": "w", "arguments": '{"c": 1}', "call_id": "c1"},
    ]}  # fmt: skip
    assert messages([response]) == (
        Message("assistant", "thinking"),
        Message("assistant", None, (ToolCall("w", '{"c": 1}', "c1"),)),
    )
    output = {"type": "function_call_output", "call_id": "c1", "output": "18"}
    assert message(output) == Message("tool", "18", call_id="c1")


def test_react_text_is_reasoning_a_call_and_an_answer() -> None:
    acting = span_messages({"llm.output_messages.0.message.role": "assistant",
                            "llm.output_messages.0.message.content":
                            'Thought: look it up\nAction: w\nAction Input: {"c": 1}'})  # fmt: skip
    assert acting.output == (
        Message("assistant", None, (ToolCall("w", '{"c": 1}'),), None, "look it up"),
    )
    answering = span_messages({"gen_ai.completion.0.content": "Thought: done\nAnswer: 18 °C"})
    assert answering.output == (Message("assistant", "18 °C", reasoning="done"),)
    plain = span_messages({"gen_ai.completion.0.content": "Thought: no action follows"})
    assert plain.output == (Message("assistant", "Thought: no action follows"),)


_DIGITS = st.text(st.sampled_from("0123456789٣²"), min_size=0, max_size=11)
_TAIL = st.text(st.sampled_from("ab.\n_"), max_size=6)


@given(_DIGITS, st.sampled_from([".message.", ".tool_call.", ".x."]), _TAIL)
def test_a_numbered_key_level_reads_as_its_pattern_says(
    index: str, separator: str, rest: str
) -> None:
    """``numbered`` reads what ``N<separator>rest`` (N 1-9 ASCII digits, rest any text
    but a line break) matches, and nothing else."""
    text = index + separator + rest
    pattern = re.compile(rf"(?P<index>[0-9]{{1,9}}){re.escape(separator)}(?P<rest>.+)")
    match = pattern.fullmatch(text)
    expected = (int(match["index"]), match["rest"]) if match else None
    assert numbered(text, ".message.") == (expected if separator == ".message." else None)
    assert numbered(text, separator) == expected


def _flattened_by_patterns(
    attributes: dict[str, Any], prefix: str, role: str | None
) -> tuple[Message, ...]:
    """OpenInference's flattened messages read with the regular expressions that
    ``flattened`` replaced: what it must read, key for key."""
    message = re.compile(r"(?P<index>[0-9]{1,9})\.message\.(?P<field>.+)")
    content = re.compile(r"contents\.(?P<index>[0-9]{1,9})\.message_content\.(?P<field>type|text)")
    tool_call = re.compile(
        r"tool_calls\.(?P<index>[0-9]{1,9})\.tool_call\."
        r"(?P<field>function\.name|function\.arguments|id)"
    )
    fields: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix) and (match := message.fullmatch(key, len(prefix))):
            fields.setdefault(int(match["index"]), {})[match["field"]] = value
    found = []
    for index in sorted(fields):
        item = fields[index]
        named = _role(item.get("role")) or role
        if named is None:
            continue
        parts: dict[int, dict[str, Any]] = {}
        calls: dict[int, dict[str, Any]] = {}
        for field, value in item.items():
            if part := content.fullmatch(field):
                parts.setdefault(int(part["index"]), {})[part["field"]] = value
            elif call := tool_call.fullmatch(field):
                calls.setdefault(int(call["index"]), {})[call["field"]] = value
        text = item.get("content") if isinstance(item.get("content"), str) else None
        text = text or _joined(
            parts[i]["text"]
            for i in sorted(parts)
            if parts[i].get("type", "text") == "text" and isinstance(parts[i].get("text"), str)
        )
        requested = [
            _call(c.get("function.name"), c.get("function.arguments"), c.get("id"))
            for c in (calls[i] for i in sorted(calls))
        ]
        call_id = item.get("tool_call_id")
        found.append(
            Message(
                named,
                text,
                tuple(c for c in requested if c is not None),
                call_id if isinstance(call_id, str) and call_id else None,
            )
        )
    return tuple(found)


_INDEX = st.sampled_from(["0", "1", "2", "01", "12", "x", "", "٣"])
_NESTED = st.integers(0, 2).map(str) | st.sampled_from(["x", "0\n"])
_FIELD = st.one_of(
    st.sampled_from(["role", "content", "tool_call_id", "name", "", "role\n"]),
    st.builds(
        lambda i, f: f"contents.{i}.message_content.{f}",
        _NESTED,
        st.sampled_from(["type", "text", "image", ""]),
    ),
    st.builds(
        lambda i, f: f"tool_calls.{i}.tool_call.{f}",
        _NESTED,
        st.sampled_from(["function.name", "function.arguments", "id", "function"]),
    ),
)
_FLAT_KEYS = st.builds(
    lambda prefix, index, field: f"{prefix}{index}.message.{field}",
    st.sampled_from(["llm.input_messages.", "llm.output_messages.", "llm.input_messages"]),
    _INDEX,
    _FIELD,
)
_FLAT_VALUES = st.sampled_from(["user", "assistant", "tool", "text", "", "hi", "{}", "c1", 3, None])


@given(st.dictionaries(_FLAT_KEYS, _FLAT_VALUES, max_size=12), st.sampled_from([None, "assistant"]))
def test_flattened_messages_read_as_the_key_patterns_say(
    attributes: dict[str, Any], role: str | None
) -> None:
    for prefix in ("llm.input_messages.", "llm.output_messages."):
        assert flattened(attributes, prefix, role) == _flattened_by_patterns(
            attributes, prefix, role
        )
