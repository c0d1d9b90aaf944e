"""The scripted run as a Pydantic AI agent with its own instrumentation, and nothing else.

``python -m tests.self_traced.pydantic_ai_agent STORE MODE``: ``raise`` lets the failing
tool's exception end the run (Pydantic AI's default); ``retry`` turns it into a
``ModelRetry``, the Pydantic AI way of telling the model a call failed, and the model
carries on to its answer.
"""

from __future__ import annotations

import sys

from pydantic_ai import Agent, ModelRetry, Tool
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import otel_prov
from tests.self_traced import scenario


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """The script's next turn; arguments as JSON text, as a real provider sends them."""
    turn = scenario.turn_after(sum(message.kind == "response" for message in messages))
    calls = [ToolCallPart(c.tool, c.arguments_json, tool_call_id=c.call_id) for c in turn.calls]
    return ModelResponse(parts=[TextPart(turn.thought), *calls])


def forecast_or_retry(city: str, days: int) -> str:
    """The forecast for a city, ``days`` ahead."""
    try:
        return scenario.get_forecast(city, days)
    except scenario.ForecastUnavailableError as error:
        raise ModelRetry(str(error)) from error


def main(store: str, mode: str) -> None:
    handle = otel_prov.configure(store=store, service_name="pydantic-ai-agent")
    forecast = forecast_or_retry if mode == "retry" else scenario.get_forecast
    agent = Agent(
        FunctionModel(scripted, model_name=scenario.MODEL),
        name=scenario.AGENT,
        tools=[Tool(scenario.get_weather), Tool(forecast, name="get_forecast")],
        capabilities=[Instrumentation()],
    )
    try:
        print(agent.run_sync(scenario.QUESTION).output)
    except scenario.ForecastUnavailableError as error:
        print(f"raised: {error}")
    handle.shutdown()


if __name__ == "__main__":
    main(*sys.argv[1:])
