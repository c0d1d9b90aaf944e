"""Chat messages, in every form instrumentations record them, as plain text per role.

A model call's conversation reaches us in many shapes: the official GenAI JSON
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``:
messages of typed ``parts``), OpenInference's flattened attributes
(``llm.input_messages.N.message.*``, numbered from 0 or from 1), OpenLLMetry's legacy
``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*``, the deprecated GenAI message events
(``gen_ai.user.message``, ``gen_ai.choice``, ... that Strands Agents still emits), the
``gen_ai.client.inference.operation.details`` event, and the serialised messages of the
frameworks themselves (``{"role", "content"}``, LangChain's ``{"type", "data"}`` and its
``{"lc": 1, "type": "constructor", "kwargs"}``, content blocks ``[{"text": ...}]``,
Bedrock's ``toolUse`` / ``toolResult``, the items of OpenAI Responses objects), and a ReAct
model's text (``Thought: ... Action: ... Action Input: ...``, ``Thought: ... Answer: ...``).
This module reads them all into one :class:`Message` type.  Which attribute and which
event holds which form is :mod:`otel_prov.prov._conventions`' to say (a
:class:`MessageSources`), as it picks the question, answer, thought, arguments and result
from what is read here.

Pure functions, and total: any value (not JSON, JSON of another shape, nested too deep)
gives fewer messages, never an exception.  JSON escapes (``\\u00b0``) come out decoded.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

__all__ = [
    "EventLike",
    "Message",
    "MessageSources",
    "SpanMessages",
    "ToolCall",
    "block_text",
    "flattened",
    "json_text",
    "loads",
    "message",
    "messages",
    "numbered",
    "react",
    "sections",
    "span_messages",
    "structured",
]

USER, ASSISTANT, SYSTEM, TOOL = "user", "assistant", "system", "tool"
_ROLES = {
    "human": USER,
    "ai": ASSISTANT,
    "model": ASSISTANT,
    "developer": SYSTEM,
    "function": TOOL,
}
"""Role names of other vocabularies (LangChain, Gemini, OpenAI) -> the GenAI role."""
_TYPE_ROLES = frozenset({"human", "ai", "system", "tool", "function", "user", "assistant"})
"""LangChain's message ``type`` values: a ``type`` of another value (a content block's
``text``) names no role."""


class EventLike(Protocol):
    """A span event, as the span record (or the SDK) holds it."""

    @property
    def name(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any]: ...


@dataclasses.dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call a model asked for: the tool's name, its arguments as JSON text, its id."""

    name: str
    arguments: str
    call_id: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Message:
    """One message: its GenAI role, its text (None: it has none), the tool calls it asked
    for, the id of the call it answers (a tool message) and its reasoning text."""

    role: str
    text: str | None = None
    calls: tuple[ToolCall, ...] = ()
    call_id: str | None = None
    reasoning: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class SpanMessages:
    """What a span says was sent to the model (``input``, system instructions first) and
    what came back (``output``)."""

    input: tuple[Message, ...] = ()
    output: tuple[Message, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class MessageSources:
    """Where a span's messages are, per side, in the order they are tried (the first that
    gives any wins): JSON message lists, flattened prefixes, legacy numbered prefixes,
    events; ``late``: JSON lists tried after the events."""

    instructions: tuple[str, ...] = ()
    """Keys of system instructions (JSON parts or text), put before the input."""
    input_lists: tuple[str, ...] = ()
    output_lists: tuple[str, ...] = ()
    input_flattened: tuple[str, ...] = ()
    output_flattened: tuple[str, ...] = ()
    input_legacy: tuple[str, ...] = ()
    output_legacy: tuple[str, ...] = ()
    input_events: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Event name -> the role of the message it carries."""
    output_events: tuple[str, ...] = ()
    detail_events: tuple[str, ...] = ()
    """Events that hold the JSON lists (and instructions) under the same keys as a span."""
    input_late: tuple[str, ...] = ()
    output_late: tuple[str, ...] = ()


def loads(text: str) -> Any:
    """``text`` parsed as JSON, or None when it is not JSON (or nests too deep to parse)."""
    if not text.lstrip().startswith(("{", "[", '"')):
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def json_text(value: Any) -> str:
    """A value as text: a string itself, anything else as JSON (non-ASCII kept)."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):  # a circular or too deep structure
        return str(value)


def _role(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    role = value.strip().lower()
    return _ROLES.get(role, role)


def _joined(texts: Iterable[str | None]) -> str | None:
    found = [text for text in texts if text]
    return "\n".join(found) if found else None


def block_text(value: Any) -> str | None:
    """The text of a message's content: a string, a content block (``{"text"}``,
    ``{"type": "text", "content"}``, OpenAI's ``output_text``) or a list of them."""
    if isinstance(value, str):
        return value or None
    if isinstance(value, Mapping):
        for key in ("text", "content"):
            text = value.get(key)
            if isinstance(text, str):
                return text or None
            if key == "content" and isinstance(text, list):
                return block_text(text)
        return None
    if isinstance(value, list):
        return _joined(block_text(item) for item in value if not _is_tool_block(item))
    return None


def _is_tool_block(value: Any) -> bool:
    return isinstance(value, Mapping) and ("toolUse" in value or "toolResult" in value)


def _call(name: Any, arguments: Any, call_id: Any) -> ToolCall | None:
    if not isinstance(name, str) or not name:
        return None
    text = json_text({} if arguments is None else arguments)
    return ToolCall(name, text, str(call_id) if call_id not in (None, "") else None)


def _part_calls(parts: Sequence[Any]) -> tuple[ToolCall, ...]:
    calls = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") == "tool_call":
            call = _call(part.get("name"), part.get("arguments"), part.get("id"))
            if call is not None:
                calls.append(call)
    return tuple(calls)


def _from_parts(role: str, parts: Sequence[Any]) -> Message:
    """A GenAI message: ``text``, ``reasoning``, ``tool_call`` and ``tool_call_response``
    parts read, others (``blob``, ``uri``, ``file``, ``server_tool_call``) skipped."""
    texts, reasoning, call_id = [], [], None
    response: str | None = None
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        kind = part.get("type")
        if kind == "text" and isinstance(part.get("content"), str):
            texts.append(part["content"])
        elif kind == "reasoning" and isinstance(part.get("content"), str):
            reasoning.append(part["content"])
        elif kind == "tool_call_response":
            # ``response`` (current), ``result`` (semantic conventions before 1.37)
            result = part.get("response", part.get("result"))
            response = block_text(result) if isinstance(result, list) else json_text(result)
            call_id = part.get("id") if isinstance(part.get("id"), str) else None
    return Message(
        role,
        _joined(texts) if texts else response,
        _part_calls(parts),
        call_id or None,
        _joined(reasoning),
    )


def _block_calls(blocks: Sequence[Any]) -> tuple[ToolCall, ...]:
    """Bedrock / Strands ``{"toolUse": {"toolUseId", "name", "input"}}`` blocks."""
    calls = []
    for block in blocks:
        use = block.get("toolUse") if isinstance(block, Mapping) else None
        if isinstance(use, Mapping):
            call = _call(use.get("name"), use.get("input"), use.get("toolUseId"))
            if call is not None:
                calls.append(call)
    return tuple(calls)


def _tool_result(blocks: Sequence[Any]) -> tuple[str | None, str | None]:
    """(text, call id) of a ``{"toolResult": {"toolUseId", "content"}}`` block."""
    for block in blocks:
        result = block.get("toolResult") if isinstance(block, Mapping) else None
        if isinstance(result, Mapping):
            call_id = result.get("toolUseId")
            return block_text(result.get("content")), call_id if isinstance(call_id, str) else None
    return None, None


def _openai_calls(value: Any) -> tuple[ToolCall, ...]:
    """OpenAI chat ``tool_calls`` (``{"id", "function": {"name", "arguments"}}``) or
    LangChain's (``{"name", "args", "id"}``)."""
    calls = []
    for item in value if isinstance(value, list) else []:
        if not isinstance(item, Mapping):
            continue
        function = item.get("function")
        if isinstance(function, Mapping):
            call = _call(function.get("name"), function.get("arguments"), item.get("id"))
        else:
            call = _call(item.get("name"), item.get("args", item.get("arguments")), item.get("id"))
        if call is not None:
            calls.append(call)
    return tuple(calls)


def message(value: Any, role: str | None = None) -> Message | None:
    """One message in any of the serialised forms above (None: not a message).  ``role``:
    the role when the value itself names none (an event's)."""
    if not isinstance(value, Mapping):
        return None
    if value.get("type") == "constructor" and isinstance(value.get("kwargs"), Mapping):
        value = value["kwargs"]  # LangChain's serialised object: the message is its kwargs
    kind = value.get("type")
    if kind == "function_call":  # an OpenAI Responses item: the call the model asked for
        call = _call(value.get("name"), value.get("arguments"), value.get("call_id"))
        return Message(ASSISTANT, calls=(call,) if call is not None else ())
    if kind == "function_call_output":
        output, call_id = value.get("output"), value.get("call_id")
        text = block_text(output) if isinstance(output, list) else json_text(output)
        return Message(TOOL, text or None, call_id=call_id if isinstance(call_id, str) else None)
    data = value.get("data")
    body: Mapping[str, Any] = data if isinstance(data, Mapping) else value
    typed = _role(kind) if isinstance(kind, str) and kind in _TYPE_ROLES else None
    named = _role(value.get("role")) or typed or role
    if named is None:
        return None
    parts = value.get("parts")
    if isinstance(parts, list):
        return _from_parts(named, parts)
    content = body.get("content")
    calls = _openai_calls(body.get("tool_calls"))
    call_id = body.get("tool_call_id") or body.get("id") if named == TOOL else None
    if isinstance(content, list):
        calls += _block_calls(content)
        result, result_id = _tool_result(content)
        if result is not None or result_id is not None:
            return Message(TOOL, result, calls, result_id)
    return Message(named, block_text(content), calls, str(call_id) if call_id else None)


_ENVELOPES = ("messages", "inputs", "outputs", "output")
"""Keys of an object that is no message but holds them: ``messages``, OpenLLMetry's record
of a LangChain run (``{"inputs": ...}``, ``{"outputs": ...}``, a tool's ``{"output": ...}``)
and an OpenAI Responses object (``{"object": "response", "output": [items]}``)."""


def _items(parsed: Any, depth: int = 0) -> list[Any]:
    """The message-like values inside ``parsed``: the items of a list, and of each envelope
    (a few levels deep) of an object that is not a message itself."""
    if depth > 3:
        return []
    if isinstance(parsed, list):
        return [item for value in parsed for item in _items(value, depth + 1)]
    if not isinstance(parsed, Mapping):
        return []
    if not any(key in parsed for key in ("role", "parts", "type")):
        for key in _ENVELOPES:
            inner = parsed.get(key)
            if isinstance(inner, (Mapping, list)):
                return _items(inner, depth + 1)
    return [parsed]


def messages(value: Any) -> tuple[Message, ...]:
    """The messages of a JSON text or a parsed value: a list of messages, one message,
    or an object holding them (:data:`_ENVELOPES`)."""
    parsed = loads(value) if isinstance(value, str) else value
    found = (message(item) for item in _items(parsed))
    return tuple(item for item in found if item is not None)


def system_instructions(value: Any) -> tuple[Message, ...]:
    """``gen_ai.system_instructions``: a JSON list of parts (or plain text) as one message."""
    parsed = loads(value) if isinstance(value, str) else value
    if isinstance(parsed, list):
        found = _from_parts(SYSTEM, parsed)
        return (found,) if found.text or found.reasoning else ()
    if isinstance(value, str) and value and parsed is None:
        return (Message(SYSTEM, value),)
    return ()


_MESSAGE, _PART, _CALL = ".message.", ".message_content.", ".tool_call."
_PARTS, _CALLS = "contents.", "tool_calls."
_PART_FIELDS = frozenset({"type", "text"})
_CALL_FIELDS = frozenset({"function.name", "function.arguments", "id"})

Fields = dict[str, Any]
"""The fields of one flattened item (a message, a content part, a tool call) by name."""


def numbered(text: str, separator: str) -> tuple[int, str] | None:
    """``text`` read as ``N<separator>rest``: (N, rest), where N is 1 to 9 ASCII digits
    (``07`` is 7) and rest is not empty and holds no line break; None for any other text.
    Each level of an OpenInference key (``N.message.contents.M.message_content.text``)
    is read so."""
    index, found, rest = text.partition(separator)
    if not found or not rest or "\n" in rest or len(index) > 9:
        return None
    if not (index.isdigit() and index.isascii()):
        return None
    return int(index), rest


def _nested(
    fields: Iterable[tuple[str, Any]], head: str, separator: str, names: frozenset[str]
) -> list[Fields]:
    """The items numbered under ``head`` (a message's ``contents.`` or ``tool_calls.``),
    in index order, each with the fields among ``names`` it has."""
    items: dict[int, Fields] = {}
    for field, value in fields:
        if field.startswith(head) and (read := numbered(field[len(head) :], separator)):
            index, name = read
            if name in names:
                items.setdefault(index, {})[name] = value
    return [items[index] for index in sorted(items)]


def flattened(
    attributes: Mapping[str, Any], prefix: str, role: str | None = None
) -> tuple[Message, ...]:
    """OpenInference messages flattened under ``prefix`` (``llm.input_messages.``), in
    index order, at whatever index they start: ``role`` (``role`` when it names none),
    ``content`` or text ``contents``, ``tool_calls`` (name, arguments, id) and
    ``tool_call_id``.  Where two keys give one field (``07`` and ``7``), the later wins.

    One pass over the attributes with string operations (:func:`numbered`), the parts and
    calls of a message read only if it has any: reading these keys is the most of what
    mapping an OpenInference run costs more than ours, and this reads a side 16-30%
    faster than the regular expressions it replaces, matched per key and again per field
    (a message with a tool call gains least: 0-3%; docs/design.md)."""
    start = len(prefix)
    items: dict[int, Fields] = {}
    nested: dict[int, list[tuple[str, Any]]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix) or (read := numbered(key[start:], _MESSAGE)) is None:
            continue
        index, field = read
        item = items.setdefault(index, {})
        if field.startswith((_PARTS, _CALLS)):
            nested.setdefault(index, []).append((field, value))
        else:
            item[field] = value
    found = []
    for index in sorted(items):
        item = items[index]
        named = _role(item.get("role")) or role
        if named is None:
            continue
        content = item.get("content")
        text = content if isinstance(content, str) and content else None
        calls: tuple[ToolCall, ...] = ()
        if index in nested:
            fields = nested[index]
            if text is None:
                text = _joined(
                    part["text"]
                    for part in _nested(fields, _PARTS, _PART, _PART_FIELDS)
                    if part.get("type", "text") == "text" and isinstance(part.get("text"), str)
                )
            requested = (
                _call(call.get("function.name"), call.get("function.arguments"), call.get("id"))
                for call in _nested(fields, _CALLS, _CALL, _CALL_FIELDS)
            )
            calls = tuple(call for call in requested if call is not None)
        call_id = item.get("tool_call_id")
        found.append(
            Message(named, text, calls, call_id if isinstance(call_id, str) and call_id else None)
        )
    return tuple(found)


def _legacy(attributes: Mapping[str, Any], prefix: str, role: str) -> tuple[Message, ...]:
    """Numbered ``{prefix}N.role`` / ``{prefix}N.content`` attributes, from 0 or from 1."""
    found = []
    for index in range(len(attributes)):
        named = attributes.get(f"{prefix}{index}.role")
        content = attributes.get(f"{prefix}{index}.content")
        if named is None and content is None:
            if index == 0:
                continue
            break
        found.append(Message(_role(named) or role, block_text(content)))
    return tuple(found)


def _event_message(attributes: Mapping[str, Any], role: str) -> Message | None:
    """A message event's body: ``content`` (text, JSON blocks or a JSON value) or, for a
    choice, ``message``; with the call ``id`` a tool message answers."""
    body = attributes.get("content", attributes.get("message"))
    call_id = attributes.get("id")
    parsed = loads(body) if isinstance(body, str) else body
    if isinstance(parsed, Mapping) and ("role" in parsed or "parts" in parsed):
        return message(parsed, role)
    calls: tuple[ToolCall, ...] = ()
    if isinstance(parsed, list):
        calls = _block_calls(parsed)
        result, result_id = _tool_result(parsed)
        if result is not None or result_id is not None:
            return Message(TOOL, result, calls, result_id)
        text = block_text(parsed)
    elif isinstance(parsed, Mapping) and ("text" in parsed or "content" in parsed):
        text = block_text(parsed)
    else:
        text = body if isinstance(body, str) and body else None
        if text is None and body is not None:
            text = json_text(body)
    return Message(
        _role(attributes.get("role")) or role,
        text,
        calls,
        call_id if isinstance(call_id, str) and call_id else None,
    )


_REACT = re.compile(
    r"\s*Thought:\s*(?P<thought>.*?)\s*\n\s*(?:"
    r"Action:\s*(?P<action>[^\n]+?)\s*\n\s*Action Input:\s*(?P<input>.*?)"
    r"|(?:Final )?Answer:\s*(?P<answer>.*?))\s*",
    re.DOTALL,
)


def react(found: Message) -> Message:
    """A model's message in the ReAct text form (LlamaIndex's ``ReActAgent``, LangChain's
    ReAct prompts) as what it says: its ``Thought:`` as reasoning, its ``Action:`` and
    ``Action Input:`` as the call it asks for (with no id: the model writes none), its
    ``Answer:`` as its text; in DSPy's ``[[ ## field ## ]]`` sections, by its fields
    (:func:`structured`).  Any other message as it is."""
    if not found.text or found.calls:
        return found
    match = _REACT.fullmatch(found.text)
    if match is None:
        fields = sections(found.text) if "[[ ## " in found.text else None
        return structured(found, fields) if fields else found
    thought, action = match["thought"] or None, match["action"]
    if action is None:
        return dataclasses.replace(found, text=match["answer"] or None, reasoning=thought)
    call = ToolCall(action, match["input"] or "{}")
    return dataclasses.replace(found, text=None, calls=(call,), reasoning=thought)


_SECTION = re.compile(r"\[\[ ## (\w{1,64}) ## \]\]")
_DONE = "completed"
"""The section DSPy's chat adapter closes a model's fields with (``[[ ## completed ## ]]``)."""
THOUGHT_FIELDS = ("next_thought", "reasoning")
"""Fields of a module's structured output that hold its reasoning, in the order tried."""
TOOL_FIELDS = ("next_tool_name", "next_tool_args")
"""Fields that name the tool a step calls and its arguments (DSPy's ``ReAct``)."""
ANSWER_FIELDS = ("answer",)
"""Fields that hold the answer (DSPy's ``question -> answer`` signature, and its ``ReAct``)."""


def sections(text: str) -> dict[str, str] | None:
    """A model's text in DSPy's chat-adapter form, ``[[ ## name ## ]]`` then the field's
    value, section by section (``completed`` ends it): its fields by name; None for text
    of any other form (text before the first section, or no section at all)."""
    parts = _SECTION.split(text)
    if len(parts) < 3 or parts[0].strip():
        return None
    found = {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}
    found.pop(_DONE, None)
    return found or None


def structured(found: Message, fields: Mapping[str, Any]) -> Message:
    """``found`` read as a module's structured output, by its field names: its reasoning
    (:data:`THOUGHT_FIELDS`), the tool it calls with its arguments (:data:`TOOL_FIELDS`,
    a call without id: the model writes none) and its answer (:data:`ANSWER_FIELDS`)."""
    thought = next((v for k in THOUGHT_FIELDS if isinstance(v := fields.get(k), str) and v), None)
    name, arguments = (fields.get(key) for key in TOOL_FIELDS)
    if isinstance(arguments, str):
        parsed = loads(arguments)
        arguments = parsed if isinstance(parsed, Mapping) else arguments
    call = _call(name, arguments, None)
    answer = next((v for k in ANSWER_FIELDS if isinstance(v := fields.get(k), str) and v), None)
    return dataclasses.replace(found, text=answer, calls=(call,) if call else (), reasoning=thought)


def _said(found: tuple[Message, ...]) -> tuple[Message, ...]:
    """``found`` if any of its messages says something (text, calls, reasoning, the call
    it answers), else none: a source of empty messages gives way to the next one."""
    return found if any(m.text or m.calls or m.reasoning or m.call_id for m in found) else ()


def _lists(attributes: Mapping[str, Any], keys: Iterable[str]) -> tuple[Message, ...]:
    """The messages of the first of ``keys`` that has any.  An absent key is passed over
    before any parsing: most spans have none of them, and each side of a span tries them."""
    for key in keys:
        value = attributes.get(key)
        if value is not None and (found := _said(messages(value))):
            return found
    return ()


def _instructions(attributes: Mapping[str, Any], keys: Iterable[str]) -> tuple[Message, ...]:
    values = [value for key in keys if (value := attributes.get(key)) is not None]
    return tuple(m for value in values for m in system_instructions(value)) if values else ()


def _events(
    events: Iterable[EventLike], sources: MessageSources
) -> tuple[tuple[Message, ...], tuple[Message, ...]]:
    """(input, output) messages of a span's events."""
    sent: list[Message] = []
    received: list[Message] = []
    for event in events:
        attributes = event.attributes
        if event.name in sources.input_events:
            found = _event_message(attributes, sources.input_events[event.name])
            if found is not None:
                sent.append(found)
        elif event.name in sources.output_events:
            found = _event_message(attributes, ASSISTANT)
            if found is not None:
                received.append(found)
        elif event.name in sources.detail_events:
            sent.extend(_instructions(attributes, sources.instructions))
            sent.extend(_lists(attributes, sources.input_lists))
            received.extend(_lists(attributes, sources.output_lists))
    return tuple(sent), tuple(received)


def _side(
    attributes: Mapping[str, Any],
    lists: tuple[str, ...],
    prefixes: tuple[str, ...],
    legacy: tuple[str, ...],
    role: str | None,
) -> tuple[Message, ...]:
    found = _lists(attributes, lists)
    for prefix in prefixes:
        found = found or _said(flattened(attributes, prefix, role))
    for prefix in legacy:
        found = found or _said(_legacy(attributes, prefix, role or USER))
    return found


def span_messages(
    attributes: Mapping[str, Any], events: Sequence[EventLike], sources: MessageSources
) -> SpanMessages:
    """Every message a span records, on each side from the first source that has any."""
    return SpanMessages(
        sent_messages(attributes, events, sources), received_messages(attributes, events, sources)
    )


def sent_messages(
    attributes: Mapping[str, Any], events: Sequence[EventLike], sources: MessageSources
) -> tuple[Message, ...]:
    """The input side of :func:`span_messages` alone (system instructions first).  Apart,
    because a model call's input is the whole conversation so far, and most readers want
    only what came back: parsing it for them cost the mapping of third-party runs half
    its time (docs/design.md)."""
    sent = (
        _side(attributes, sources.input_lists, sources.input_flattened, sources.input_legacy, None)
        or (_said(_events(events, sources)[0]) if events else ())
        or _lists(attributes, sources.input_late)
    )
    return _instructions(attributes, sources.instructions) + sent


def received_messages(
    attributes: Mapping[str, Any], events: Sequence[EventLike], sources: MessageSources
) -> tuple[Message, ...]:
    """The output side of :func:`span_messages` alone (an assistant's ReAct text read as
    its thought, call and answer: :func:`react`)."""
    received = (
        _side(
            attributes,
            sources.output_lists,
            sources.output_flattened,
            sources.output_legacy,
            ASSISTANT,
        )
        or (_said(_events(events, sources)[1]) if events else ())
        or _lists(attributes, sources.output_late)
    )
    return tuple(react(m) if m.role == ASSISTANT else m for m in received)
