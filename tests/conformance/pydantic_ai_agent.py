"""The shared script as a Pydantic AI agent on its OpenAI chat model, traced by Pydantic AI itself.

``python -m tests.conformance.pydantic_ai_agent STORE VERSION MODE`` with VERSION one of
Pydantic AI's instrumentation formats (``InstrumentationSettings(version=N)``: 2, 5 or 6)
and MODE ``run`` (``run_sync``) or ``stream`` (``run_stream_events``, the model streamed).
The model is ``OpenAIChatModel`` on the scripted server at ``OPENAI_BASE_URL``.  The
failing tool raises ``ModelRetry`` (tests/self_traced/pydantic_ai_agent.py), the Pydantic
AI way of telling the model a call failed, and the model carries on.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any, Literal, cast

import otel_prov
from tests.self_traced import scenario
from tests.self_traced.pydantic_ai_agent import forecast_or_retry


def build(version: int, provider: Any) -> Any:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(
        scenario.MODEL,
        provider=OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key"),
    )
    settings = InstrumentationSettings(
        tracer_provider=provider, version=cast(Literal[2, 3, 4, 5, 6], version)
    )
    return Agent(
        model,
        name=scenario.AGENT,
        instructions="Answer questions about the weather.",
        tools=[Tool(scenario.get_weather), Tool(forecast_or_retry, name="get_forecast")],
        capabilities=[Instrumentation(settings=settings)],
    )


async def streamed(agent: Any) -> str:
    from pydantic_ai import AgentRunResultEvent

    async with agent.run_stream_events(scenario.QUESTION) as events:
        async for event in events:
            if isinstance(event, AgentRunResultEvent):
                return str(event.result.output)
    raise AssertionError("the run ended with no result")


def main(argv: list[str]) -> int:
    store, version, mode = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    agent = build(int(version), handle.tracer_provider)
    if mode == "stream":
        answer = asyncio.run(streamed(agent))
    else:
        answer = str(agent.run_sync(scenario.QUESTION).output)
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
