"""What LangChain's objects say, read without LangChain: the text of message content, a
run's question and last message, the tools bound to a model call, a structured answer's
tools and a model's name.  Duck-typed (mappings, tuples and message objects alike), so the
handler's callbacks never fail on a shape they did not expect."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from otel_prov.capture import tool_schema_name

__all__ = [
    "CLIENT_TOOL_TYPES",
    "bound_tools",
    "content_text",
    "first_question",
    "json_text",
    "last_message_text",
    "model_name",
    "reasoning",
    "structured_answer_tools",
    "structured_response",
]

CLIENT_TOOL_TYPES = frozenset({"function", "custom"})
"""``type`` of a bound tool schema that LangChain runs (OpenAI's ``function`` and
``custom``; Anthropic's schemas have no ``type``); any other type is a provider's
built-in tool, run on the provider's side."""


def json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def content_text(content: Any) -> str:
    """Message content as text: a string as-is, the text blocks of a list joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
        return "".join(parts)
    return "" if content is None else json_text(content)


def reasoning(message: Any) -> str:
    try:
        blocks = message.content_blocks
    except Exception:  # noqa: BLE001 - content_blocks parses provider formats; never fail on it
        return ""
    return "".join(
        str(block.get("reasoning", ""))
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "reasoning"
    )


def first_question(inputs: Any) -> str | None:
    messages = inputs.get("messages") if isinstance(inputs, Mapping) else None
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, Sequence):
        return None
    for message in messages:
        if isinstance(message, str):
            return message
        if isinstance(message, Mapping):
            if message.get("role") in ("user", "human"):
                return content_text(message.get("content"))
        elif isinstance(message, tuple) and len(message) == 2:
            if message[0] in ("user", "human"):
                return content_text(message[1])
        elif getattr(message, "type", None) == "human":
            return content_text(getattr(message, "content", None))
    return None


def last_message_text(outputs: Any) -> str | None:
    messages = outputs.get("messages") if isinstance(outputs, Mapping) else None
    if not isinstance(messages, Sequence) or not messages:
        return None
    last = messages[-1]
    if isinstance(last, Mapping):
        return content_text(last.get("content"))
    return content_text(getattr(last, "content", None))


def bound_tools(params: Mapping[str, Any] | None) -> list[str]:
    """Names of the tools bound to a model call (its ``invocation_params["tools"]``).

    ``bind_tools`` leaves the provider's schemas there: OpenAI's ``{"type": "function",
    "function": {"name": ...}}`` or ``{"type": "custom", "name": ...}``, Anthropic's
    ``{"name": ...}``.  A provider's built-in tools are left out (see ``CLIENT_TOOL_TYPES``).
    """
    tools = params.get("tools") if params else None
    if not isinstance(tools, Sequence) or isinstance(tools, str):
        return []
    names: list[str] = []
    for schema in tools:
        if not isinstance(schema, Mapping):
            continue
        kind = schema.get("type")
        if kind is not None and kind not in CLIENT_TOOL_TYPES:
            continue
        name = tool_schema_name(schema)
        if name:
            names.append(name)
    return names


def structured_answer_tools(outputs: Any) -> set[str]:
    """Names of the tools the run's structured answer was given through.

    With ``response_format=ToolStrategy(Schema)`` the model is bound one more tool per
    schema and answers by calling it; the model node replies to that call itself, and the
    output has a ``structured_response``.  The tool messages that end the run's messages
    are those replies, and the results of any tool the model called beside them (which
    ran: the caller keeps those declared).
    """
    if not isinstance(outputs, Mapping) or outputs.get("structured_response") is None:
        return set()
    messages = outputs.get("messages")
    names: set[str] = set()
    for message in reversed(messages if isinstance(messages, Sequence) else []):
        if getattr(message, "type", None) != "tool":
            break
        name = getattr(message, "name", None)
        if isinstance(name, str):
            names.add(name)
    return names


def structured_response(outputs: Any) -> Any:
    """The structured answer a ``model`` node's run produced (``create_agent(...,
    response_format=Schema)``: the state update's ``structured_response``), else None.

    The node returns its update as a dict, or as ``Command`` objects whose ``update`` is
    one; the object is the schema's (a Pydantic model, a dataclass, a dict)."""
    updates = (
        outputs if isinstance(outputs, Sequence) and not isinstance(outputs, str) else [outputs]
    )
    for update in updates:
        update = getattr(update, "update", update)
        if isinstance(update, Mapping) and update.get("structured_response") is not None:
            return update["structured_response"]
    return None


def model_name(
    serialized: Mapping[str, Any] | None,
    invocation_params: Mapping[str, Any] | None,
    metadata: Mapping[str, Any] | None,
) -> str:
    for source, key in (
        (invocation_params, "model"),
        (invocation_params, "model_name"),
        (invocation_params, "model_id"),
        (metadata, "ls_model_name"),
        (serialized, "name"),
    ):
        value = source.get(key) if source else None
        if isinstance(value, str) and value:
            return value
    ids = serialized.get("id") if serialized else None
    if isinstance(ids, list) and ids and isinstance(ids[-1], str):
        return ids[-1]
    return "unknown"
