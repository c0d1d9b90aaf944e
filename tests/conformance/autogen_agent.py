"""The shared script as an AutoGen AgentChat ``AssistantAgent``, traced by AutoGen itself.

``python -m tests.conformance.autogen_agent STORE INSTRUMENTATION`` in the side venv of
``scripts/frameworks-venv.sh``, INSTRUMENTATION ``alone`` (AutoGen's own ``invoke_agent``
and ``execute_tool`` spans, which it writes to the global ``TracerProvider``) or
``openllmetry`` (with OpenLLMetry's OpenAI instrumentor beside them, as AutoGen's tracing
guide sets it up).  The model is ``OpenAIChatCompletionClient`` on the scripted server at
``OPENAI_BASE_URL``; the agent loops over tool calls until the model answers
(``max_tool_iterations``).  A tool that raises does not end the run: AutoGen hands the
error to the model as the call's result, and the model carries on.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from tests.conformance.playing import play
from tests.self_traced import scenario


async def run() -> str:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    model = OpenAIChatCompletionClient(
        model=scenario.MODEL,
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="not-a-key",
        model_info={
            "vision": False,
            "function_calling": True,
            "json_output": False,
            "structured_output": False,
            "family": "unknown",
        },
    )
    agent = AssistantAgent(
        scenario.AGENT,
        model_client=model,
        tools=list(scenario.TOOLS),
        system_message="Answer questions about the weather.",
        max_tool_iterations=len(scenario.TURNS),
    )
    result = await agent.run(task=scenario.QUESTION)
    await model.close()
    return str(result.messages[-1].content)


def main(argv: list[str]) -> int:
    store, instrumentation = argv

    def openllmetry(provider: Any) -> None:
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor

        OpenAIInstrumentor().instrument(tracer_provider=provider)

    return play(
        store, lambda: asyncio.run(run()), openllmetry if instrumentation == "openllmetry" else None
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
