"""The shared script as an OpenAI Agents SDK agent, under a third-party instrumentor.

``python -m tests.conformance.openai_agents_agent STORE INSTRUMENTATION API MODE [TOOLS]``
with INSTRUMENTATION ``openinference`` or ``openllmetry``, API ``chat`` (Chat Completions)
or ``responses``, MODE ``run`` or ``stream``, TOOLS ``function`` (the default: function
tools in process) or ``mcp`` (the same tools from a real MCP server process,
``mcp_weather``, over stdio, with ``openinference-instrumentation-mcp`` propagating the
trace context to it). The model is the scripted server at ``OPENAI_BASE_URL``; the
process calls ``otel_prov.configure(store=STORE)`` and nothing else of ours, with OTLP
export on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (to an ``otel-prov receive``). It
prints the run's final output.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import otel_prov
from tests.self_traced import scenario


def instrument(name: str, provider: Any) -> None:
    if name == "openinference":
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider, exclusive_processor=True)
    elif name == "openllmetry":
        from agents.tracing import set_trace_processors
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor as Oll

        set_trace_processors([])  # no export to OpenAI's own tracing service
        Oll().instrument(tracer_provider=provider)
    else:
        raise SystemExit(f"unknown instrumentation {name!r}")


def build(api: str, mcp_servers: Sequence[Any] = ()) -> Any:
    from agents import (
        Agent,
        OpenAIChatCompletionsModel,
        OpenAIResponsesModel,
        function_tool,
    )
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key")
    model_class = OpenAIChatCompletionsModel if api == "chat" else OpenAIResponsesModel
    model = model_class(model=scenario.MODEL, openai_client=client)
    return Agent(
        name=scenario.AGENT,
        instructions="Answer questions about the weather.",
        model=model,
        tools=[] if mcp_servers else [function_tool(tool) for tool in scenario.TOOLS],
        mcp_servers=list(mcp_servers),
    )


async def run(agent: Any, mode: str) -> str:
    from agents import Runner

    if mode == "stream":
        streamed = Runner.run_streamed(agent, scenario.QUESTION)
        async for _ in streamed.stream_events():
            pass
        return str(streamed.final_output)
    result = await Runner.run(agent, scenario.QUESTION)
    return str(result.final_output)


async def run_with(api: str, mode: str, tools: str) -> str:
    """The run, its tools in process or from the MCP server started for it."""
    if tools == "function":
        return await run(build(api), mode)
    from agents.mcp import MCPServerStdio, MCPServerStdioParams

    params = MCPServerStdioParams(
        command=sys.executable,
        args=["-m", "tests.conformance.mcp_weather"],
        env=dict(os.environ),
        cwd=Path.cwd(),
    )
    async with MCPServerStdio(params) as server:
        return await run(build(api, [server]), mode)


def main(argv: list[str]) -> int:
    store, instrumentation, api, mode, *rest = argv
    tools = rest[0] if rest else "function"
    handle = otel_prov.configure(store=store, service_name="conformance")
    instrument(instrumentation, handle.tracer_provider)
    if tools == "mcp":
        from openinference.instrumentation.mcp import MCPInstrumentor

        MCPInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    answer = asyncio.run(run_with(api, mode, tools))
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
