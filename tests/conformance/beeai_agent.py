"""The shared script as a BeeAI ``RequirementAgent`` on its OpenAI chat model, under OpenInference.

``python -m tests.conformance.beeai_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is BeeAI's ``OpenAIChatModel`` (through
LiteLLM) on the scripted server at ``OPENAI_BASE_URL``.  The agent answers by calling its
``final_answer`` tool, and the server's script does so when it is offered that tool.  A
tool that raises does not end the run: BeeAI hands the error to the model as the call's
result, and the model carries on.  The instrumentation is
``openinference-instrumentation-beeai``.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


async def run() -> str:
    from beeai_framework.adapters.openai import OpenAIChatModel
    from beeai_framework.agents.requirement import RequirementAgent
    from beeai_framework.memory import UnconstrainedMemory
    from beeai_framework.tools import tool

    agent = RequirementAgent(
        name=scenario.AGENT,
        instructions="Answer questions about the weather.",
        llm=OpenAIChatModel(
            scenario.MODEL,
            base_url=os.environ["OPENAI_BASE_URL"],
            api_key="not-a-key",
            # LiteLLM does not know the scripted model calls tools; BeeAI would then ask
            # for each call as JSON text instead of the API's tool calls.
            tool_call_fallback_via_response_format=False,
        ),
        memory=UnconstrainedMemory(),
        tools=[tool(function) for function in scenario.TOOLS],
    )
    output = await agent.run(scenario.QUESTION)
    return str(output.last_message.text)


def main(argv: list[str]) -> int:
    from openinference.instrumentation.beeai import BeeAIInstrumentor

    (store,) = argv
    return play(
        store,
        lambda: asyncio.run(run()),
        lambda provider: BeeAIInstrumentor().instrument(tracer_provider=provider),
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
