"""What other instrumentations' attributes mean, for the mapper.

OpenInference, OpenLLMetry and the official GenAI conventions record the same facts in
other shapes: tool calls a model asked for inside its output messages, tool definitions
as JSON, the agent's name in LangChain run metadata, and questions, answers and tool
results wrapped in the framework's serialised messages.  Pure functions of attributes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "agent_name",
    "defined_tools",
    "is_agent_run",
    "model_output_text",
    "requested_calls",
    "tool_schema_name",
    "unwrapped",
]


def is_agent_run(attributes: Mapping[str, Any]) -> bool:
    """An OpenInference ``CHAIN`` that is a LangChain agent's whole run, wherever it sits
    in the trace: its run metadata names the agent and no graph node (the graph's nodes
    carry ``langgraph_node``).  A substring test: this runs on span start."""
    metadata = attributes.get("metadata")
    return (
        isinstance(metadata, str)
        and '"lc_agent_name"' in metadata
        and '"langgraph_node"' not in metadata
    )


def agent_name(attributes: Mapping[str, Any]) -> str | None:
    """The agent named in LangChain run metadata (OpenInference's ``metadata``)."""
    metadata = attributes.get("metadata")
    if not isinstance(metadata, str) or '"lc_agent_name"' not in metadata:
        return None
    try:
        parsed = json.loads(metadata)
    except ValueError:
        return None
    name = parsed.get("lc_agent_name") if isinstance(parsed, dict) else None
    return name if isinstance(name, str) and name else None


def model_output_text(attributes: Mapping[str, Any]) -> str | None:
    """The text a model call answered with (its reasoning when it also called tools):
    OpenInference, OpenLLMetry's legacy completion, or the GenAI output messages."""
    for key in ("llm.output_messages.0.message.content", "gen_ai.completion.0.content"):
        value = attributes.get(key)
        if isinstance(value, str) and value:
            return value
    messages = attributes.get("gen_ai.output.messages")
    if not isinstance(messages, str):
        return None
    try:
        parsed = json.loads(messages)
    except ValueError:
        return None
    texts = []
    for message in parsed if isinstance(parsed, list) else []:
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if isinstance(part, dict) and part.get("type") == "text":
                content = part.get("content")
                if isinstance(content, str):
                    texts.append(content)
    return "\n".join(texts) or None


_USER = frozenset({"user", "human"})
_ASSISTANT = frozenset({"assistant", "ai"})


def unwrapped(text: str, pick: str) -> str | None:
    """The plain text inside a serialised framework payload, or None if it is not one.

    ``pick``: ``question`` (the first user message of ``{"messages": [...]}``),
    ``answer`` (the last assistant message) or ``result`` (a serialised tool message,
    ``{"type": "tool", "data": {"content": ...}}``).  Messages come as
    ``{"role", "content"}`` or as LangChain's ``{"type", "data": {"content"}}``.
    """
    if not text.lstrip().startswith("{"):
        return None
    try:
        parsed = json.loads(text)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    if pick == "result":
        return _message_content(parsed) if parsed.get("type") == "tool" else None
    messages = parsed.get("messages")
    if not isinstance(messages, list):
        return None
    roles = _USER if pick == "question" else _ASSISTANT
    ordered = messages if pick == "question" else list(reversed(messages))
    for message in ordered:
        if isinstance(message, dict) and (message.get("role") or message.get("type")) in roles:
            return _message_content(message)
    return None


def _message_content(message: Mapping[str, Any]) -> str | None:
    data = message.get("data")
    content = data.get("content") if isinstance(data, dict) else message.get("content")
    return content if isinstance(content, str) else None


def _json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def requested_calls(attributes: Mapping[str, Any]) -> list[tuple[str, str, str | None]]:
    """(tool name, arguments JSON, call id) of each tool call a model call's output asked
    for: official GenAI ``gen_ai.output.messages`` parts, else OpenInference's flattened
    ``llm.output_messages.*.message.tool_calls.*`` attributes."""
    calls: list[tuple[str, str, str | None]] = []
    messages = attributes.get("gen_ai.output.messages")
    if isinstance(messages, str):
        try:
            parsed = json.loads(messages)
        except ValueError:
            parsed = []
        for message in parsed if isinstance(parsed, list) else []:
            parts = message.get("parts") if isinstance(message, dict) else None
            for part in parts if isinstance(parts, list) else []:
                if isinstance(part, dict) and part.get("type") == "tool_call" and part.get("name"):
                    arguments = _json_text(part.get("arguments", {}))
                    call_id = part.get("id")
                    calls.append((str(part["name"]), arguments, str(call_id) if call_id else None))
        return calls
    prefix = "llm.output_messages.0.message.tool_calls."
    for index in range(len(attributes)):
        base = f"{prefix}{index}.tool_call."
        name = attributes.get(f"{base}function.name")
        if not isinstance(name, str):
            break
        arguments = _json_text(attributes.get(f"{base}function.arguments", "{}"))
        call_id = attributes.get(f"{base}id")
        calls.append((name, arguments, str(call_id) if call_id else None))
    return calls


def defined_tools(attributes: Mapping[str, Any]) -> list[str]:
    """Tool names in ``gen_ai.tool.definitions`` (a JSON list of ``{"name"}`` or
    ``{"function": {"name"}}`` objects) and OpenInference's ``llm.tools.N.tool.json_schema``."""
    texts = [attributes.get("gen_ai.tool.definitions")]
    texts += [
        value
        for key, value in attributes.items()
        if key.startswith("llm.tools.") and key.endswith(".tool.json_schema")
    ]
    names = []
    for text in texts:
        if not isinstance(text, str):
            continue
        try:
            parsed = json.loads(text)
        except ValueError:
            continue
        for item in parsed if isinstance(parsed, list) else [parsed]:
            name = tool_schema_name(item) if isinstance(item, dict) else None
            if name:
                names.append(name)
    return names


def tool_schema_name(schema: Mapping[str, Any]) -> str | None:
    """The name in a tool definition: OpenAI's ``{"function": {"name"}}`` or a flat
    ``{"name"}`` (GenAI definitions, Anthropic, OpenAI custom tools)."""
    function = schema.get("function")
    name = function.get("name") if isinstance(function, Mapping) else schema.get("name")
    return name if isinstance(name, str) and name else None
