"""A refund decision by a Pydantic AI agent with its own instrumentation and nothing else
of ours: the model answers with ``output_type`` set to the reasoning schema.

``python -m tests.self_traced.pydantic_ai_decisions_agent STORE MODE``: ``reasoning`` has
the output type of ``tests/reasoning_schema.py`` (goals, hypotheses, evidence, decision);
``text`` answers the same JSON as plain text (``output_type`` str), which is no structured
output and records no reasoning.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic_ai import Agent, Tool
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import otel_prov
from tests.reasoning_schema import ANSWER, RefundDecision


def track_parcel(order: str) -> str:
    """Where the parcel of an order is."""
    return f"order {order}: delivered on 2 May"


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """First the tracking (call id ``call_1``), then the answer: through the output tool
    when there is one, else as text."""
    if not any(message.kind == "response" for message in messages):
        track = ToolCallPart("track_parcel", '{"order": "1042"}', tool_call_id="call_1")
        return ModelResponse(parts=[TextPart("First the tracking."), track])
    answer = ANSWER.model_dump_json()
    if info.output_tools:
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, answer, tool_call_id="call_answer")]
        )
    return ModelResponse(parts=[TextPart(answer)])


def main(store: str, mode: str) -> None:
    handle = otel_prov.configure(store=store, service_name="pydantic-ai-decisions")
    output: Any = RefundDecision if mode == "reasoning" else str
    agent = Agent(
        FunctionModel(scripted, model_name="scripted-model"),
        name="refunds",
        tools=[Tool(track_parcel)],
        output_type=output,
        capabilities=[Instrumentation()],
    )
    print(agent.run_sync("Refund order 1042?").output)
    handle.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
