"""The shared script as a Semantic Kernel ``ChatCompletionAgent``, traced by Semantic Kernel itself.

``python -m tests.conformance.semantic_kernel_agent STORE`` in the side venv of
``scripts/semantic-kernel-venv.sh``.  The model is ``OpenAIChatCompletion`` on the
scripted server at ``OPENAI_BASE_URL``; the tools are a plugin's kernel functions, called
by function calling.  Semantic Kernel writes its spans to the global ``TracerProvider``
(the one ``otel_prov.configure(store=STORE)`` sets) when
``SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE`` is on, and its chat
messages as Python log records, not spans.  A tool that raises does not end the run:
Semantic Kernel hands the error to the model as the call's result, and the model carries
on.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Annotated

from tests.conformance.playing import play
from tests.self_traced import scenario

PLUGIN = "Weather"
"""The plugin the tools are functions of: Semantic Kernel offers them to the model, and
records them, as ``Weather-get_weather`` and ``Weather-get_forecast``."""


def plugin() -> object:
    from semantic_kernel.functions import kernel_function

    class Weather:  # the plugin's name is its class's: PLUGIN
        @kernel_function(name="get_weather", description="The current weather in a city.")
        def get_weather(self, city: Annotated[str, "The city"]) -> str:
            return scenario.get_weather(city)

        @kernel_function(name="get_forecast", description="The forecast for a city.")
        def get_forecast(self, city: Annotated[str, "The city"], days: int) -> str:
            return scenario.get_forecast(city, days)

    return Weather()


async def run() -> str:
    from openai import AsyncOpenAI
    from semantic_kernel.agents import ChatCompletionAgent
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion

    client = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key")
    agent = ChatCompletionAgent(
        service=OpenAIChatCompletion(ai_model_id=scenario.MODEL, async_client=client),
        name=scenario.AGENT,
        instructions="Answer questions about the weather.",
        plugins=[plugin()],
    )
    return str((await agent.get_response(messages=scenario.QUESTION)).content)


def main(argv: list[str]) -> int:
    (store,) = argv
    return play(store, lambda: asyncio.run(run()))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
