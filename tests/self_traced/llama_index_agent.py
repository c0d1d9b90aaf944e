"""The scripted run as a LlamaIndex ``FunctionAgent`` traced by OpenInference's instrumentor.

``python -m tests.self_traced.llama_index_agent STORE MODE``: ``stream`` (the agent's
default) asks the model with ``astream_chat``, ``chat`` with ``achat``.  A tool that
raises does not end a LlamaIndex run: the agent hands the error to the model as the
tool's output, and the model carries on to its answer.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, TextBlock, ToolCallBlock
from llama_index.core.llms.mock import MockFunctionCallingLLM
from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

import otel_prov
from tests.self_traced import scenario


def scripted(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
    """The script's next turn; arguments as JSON text, as a real provider sends them."""
    turn = scenario.turn_after(sum(message.role == "assistant" for message in messages))
    calls = [
        ToolCallBlock(tool_call_id=c.call_id, tool_name=c.tool, tool_kwargs=c.arguments_json)
        for c in turn.calls
    ]
    return ChatMessage(role="assistant", blocks=[TextBlock(text=turn.thought), *calls])


async def main(store: str, mode: str) -> None:
    handle = otel_prov.configure(store=store, service_name="llama-index-agent")
    LlamaIndexInstrumentor().instrument()
    agent = FunctionAgent(
        name=scenario.AGENT,
        tools=list(scenario.TOOLS),
        llm=MockFunctionCallingLLM(response_generator=scripted),
        streaming=mode == "stream",
    )
    print(await agent.run(user_msg=scenario.QUESTION))
    handle.shutdown()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
