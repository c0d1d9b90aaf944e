"""The shared script as a smolagents ``ToolCallingAgent`` on ``OpenAIModel``, under OpenInference.

``python -m tests.conformance.smolagents_agent STORE MODE`` with MODE ``run``
(``agent.run``) or ``stream`` (the model streamed, ``stream_outputs=True``).  The model is
``OpenAIModel`` on the scripted server at ``OPENAI_BASE_URL``; the instrumentation is
``openinference-instrumentation-smolagents``.  A smolagents agent answers by calling its
``final_answer`` tool, and the server's script does so when it is offered that tool.  A
tool that raises does not end the run: smolagents hands the error to the model as the
step's observation, and the model carries on.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import otel_prov
from tests.self_traced import scenario


def build(stream: bool) -> Any:
    from smolagents import OpenAIModel, ToolCallingAgent, tool

    @tool  # type: ignore[untyped-decorator]
    def get_weather(city: str) -> str:
        """The current weather in a city.

        Args:
            city: The city's name.
        """
        return scenario.get_weather(city)

    @tool  # type: ignore[untyped-decorator]
    def get_forecast(city: str, days: int) -> str:
        """The forecast for a city, days ahead.

        Args:
            city: The city's name.
            days: How many days ahead.
        """
        return scenario.get_forecast(city, days)

    model = OpenAIModel(
        model_id=scenario.MODEL, api_base=os.environ["OPENAI_BASE_URL"], api_key="not-a-key"
    )
    return ToolCallingAgent(
        tools=[get_weather, get_forecast],
        model=model,
        name=scenario.AGENT,
        description="Answers questions about the weather.",
        max_steps=len(scenario.TURNS),
        stream_outputs=stream,
        verbosity_level=0,
    )


def main(argv: list[str]) -> int:
    from openinference.instrumentation.smolagents import SmolagentsInstrumentor

    store, mode = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    SmolagentsInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    answer = str(build(mode == "stream").run(scenario.QUESTION))
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
