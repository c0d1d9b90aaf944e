"""The scripted run as a Google ADK ``LlmAgent`` with ADK's built-in tracing, and nothing else.

``python -m tests.self_traced.adk_agent STORE``, with the Python of the ADK venv
(``scripts/adk-venv.sh``: ADK pins an older OpenTelemetry than the project's ``dev``).  ADK
records content only under the GenAI opt-ins the test sets
(``OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental``,
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY``).  A tool that raises ends
an ADK run.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import InMemoryRunner
from google.genai import types

import otel_prov
from tests.self_traced import scenario


class ScriptedModel(BaseLlm):
    """Plays the script: ADK gives a model the whole conversation each turn."""

    model: str = scenario.MODEL

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        turn = scenario.turn_after(sum(c.role == "model" for c in llm_request.contents))
        calls = [
            types.Part(
                function_call=types.FunctionCall(id=c.call_id, name=c.tool, args=c.arguments)
            )
            for c in turn.calls
        ]
        yield LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=turn.thought), *calls])
        )


async def main(store: str) -> None:
    handle = otel_prov.configure(store=store, service_name="adk-agent")
    agent = LlmAgent(name=scenario.AGENT, model=ScriptedModel(), tools=list(scenario.TOOLS))
    runner = InMemoryRunner(agent=agent, app_name="weather-app")
    session = await runner.session_service.create_session(app_name="weather-app", user_id="user")
    question = types.Content(role="user", parts=[types.Part(text=scenario.QUESTION)])
    try:
        async for _ in runner.run_async(
            user_id="user", session_id=session.id, new_message=question
        ):
            pass
    except scenario.ForecastUnavailableError as error:
        print(f"raised: {error}")
    handle.shutdown()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:]))
