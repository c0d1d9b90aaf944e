"""An agent of the OpenAI Agents SDK that asks ``otel-prov mcp`` why a run failed: the
SDK's real agent loop and its own MCP client (``MCPServerStdio``), a scripted model.

Run as ``python -m tests.mcp_reading.agent_loop STORE RUN ENDPOINT``: the agent is asked
"Why did run RUN fail?"; the model calls the server's ``why`` and then ``summarize_run``
on RUN, and answers with the sentence of the summary that says what failed (read from
the tool's result in the conversation, as a model reads it).  The server reads STORE and
runs under ``opentelemetry-instrument`` (otel-prov's configurator, the MCP instrumentor
by its entry point), so its tool calls are recorded; this process records its own run
with ``configure()`` and the OpenAI Agents and MCP instrumentors.  Both write to the
SPARQL update endpoint ENDPOINT.  Prints one JSON line: the run's trace id and answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from agents import Agent, ModelSettings, RunConfig, Runner
from agents.items import ModelResponse
from agents.mcp import MCPServerStdio
from agents.tracing import set_trace_processors
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

import otel_prov
from otel_prov.instrumentation.mcp import MCPInstrumentor
from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from tests.instrumentation.scripted_openai import ScriptedModel, ScriptedProvider

ROOT = Path(__file__).resolve().parents[2]


def _call(call_id: str, tool: str, arguments: dict[str, str]) -> list[Any]:
    return [
        ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name=tool, arguments=json.dumps(arguments)
        )
    ]


def _said_failed(conversation: Any) -> str:
    """The sentence of the last tool result that says what failed."""
    outputs = [
        item["output"]
        for item in conversation
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    text = outputs[-1] if outputs else ""
    if isinstance(text, list):  # content blocks
        text = "".join(block.get("text", "") for block in text if isinstance(block, dict))
    summary = json.loads(text)
    return next(s["text"] for s in summary["sentences"] if "fail" in s["text"].lower())


def _message(text: str) -> list[Any]:
    content = [ResponseOutputText(type="output_text", text=text, annotations=[])]
    return [
        ResponseOutputMessage(
            id="msg_1", type="message", role="assistant", status="completed", content=content
        )
    ]


class ReadingModel(ScriptedModel):
    """Plays its steps, then answers from what the last tool returned."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        if not self.steps:
            self.steps.append(_message(_said_failed(input)))
        return await super().get_response(system_instructions, input, *args, **kwargs)


async def ask(store: str, run: str, endpoint: str) -> str:
    instrument = Path(sys.executable).with_name("opentelemetry-instrument")
    server = MCPServerStdio(
        params={
            "command": str(instrument),
            "args": [sys.executable, "-m", "otel_prov", "mcp", "--store", store],
            "env": {
                **os.environ,
                "OTEL_TRACES_EXPORTER": "prov",
                "OTEL_METRICS_EXPORTER": "none",
                "OTEL_LOGS_EXPORTER": "none",
                "OTEL_SERVICE_NAME": "otel-prov-mcp",
                "OTEL_PROV_SPARQL_UPDATE_ENDPOINT": endpoint,
            },
            "cwd": str(ROOT),
        },
        name="otel-prov",
        client_session_timeout_seconds=60,
        use_structured_content=False,
    )
    model = ReadingModel(
        [_call("call_why", "why", {"id": run}), _call("call_sum", "summarize_run", {"run": run})]
    )
    async with server:
        agent = Agent(
            name="investigator",
            instructions="Answer from the provenance the otel-prov tools give.",
            mcp_servers=[server],
            model_settings=ModelSettings(),
        )
        result = await Runner.run(
            agent,
            f"Why did run {run} fail?",
            run_config=RunConfig(model_provider=ScriptedProvider(model)),
        )
    return str(result.final_output)


def main() -> None:
    store, run, endpoint = sys.argv[1:4]
    handle = otel_prov.configure(
        service_name="why-agent", sparql_update_endpoint=endpoint, otlp=False
    )
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=handle.tracer_provider)
    set_trace_processors([instrumentor.processor])  # ours only: nothing goes to OpenAI
    MCPInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    answer = asyncio.run(ask(store, run, endpoint))
    handle.shutdown()
    print(json.dumps({"answer": answer}))


if __name__ == "__main__":
    main()
