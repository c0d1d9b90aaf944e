"""The shared script as a one-agent CrewAI crew on CrewAI's OpenAI LLM, under OpenInference
or OpenLLMetry.

``python -m tests.conformance.crewai_agent STORE INSTRUMENTATION`` in the side venv of
``scripts/crewai-venv.sh`` (CrewAI pins older ``openai``, ``mcp`` and ``pydantic`` than
the project's).  The agent's role is the script's agent name; its LLM is CrewAI's native OpenAI
provider on the scripted server at ``OPENAI_BASE_URL``, calling the script's two tools by
function calling.  A tool that raises does not end the run: CrewAI hands the error to the
model as the tool's result, and the model carries on.  INSTRUMENTATION ``openinference`` is
``openinference-instrumentation-crewai``, with ``openinference-instrumentation-openai`` for
the model's calls (CrewAI's OpenAI LLM calls the ``openai`` client); ``openllmetry`` is
``opentelemetry-instrumentation-crewai`` with OpenLLMetry's OpenAI instrumentor.  CrewAI's
own telemetry is off (``CREWAI_DISABLE_TELEMETRY``, set by the suite).  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import otel_prov
from tests.self_traced import scenario


def instrument(instrumentation: str, provider: Any) -> None:
    """Turn on ``instrumentation``'s CrewAI and OpenAI instrumentors."""
    if instrumentation == "openinference":
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
    elif instrumentation == "openllmetry":
        from opentelemetry.instrumentation.crewai import (  # type: ignore[no-redef]
            CrewAIInstrumentor,
        )
        from opentelemetry.instrumentation.openai import (  # type: ignore[no-redef]
            OpenAIInstrumentor,
        )
    else:
        raise SystemExit(f"unknown instrumentation {instrumentation!r}")
    CrewAIInstrumentor().instrument(tracer_provider=provider)
    OpenAIInstrumentor().instrument(tracer_provider=provider)


def main(argv: list[str]) -> int:
    from crewai import LLM, Agent, Crew, Task
    from crewai.tools import tool

    store, instrumentation = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    instrument(instrumentation, handle.tracer_provider)
    llm = LLM(
        model=f"openai/{scenario.MODEL}",
        base_url=os.environ["OPENAI_BASE_URL"],
        api_key="not-a-key",
    )
    agent = Agent(
        role=scenario.AGENT,
        goal="Answer questions about the weather.",
        backstory="You read the weather tools.",
        llm=llm,
        tools=[tool(function.__name__)(function) for function in scenario.TOOLS],
        max_iter=len(scenario.TURNS),
    )
    task = Task(description=scenario.QUESTION, expected_output="The weather.", agent=agent)
    answer = str(Crew(agents=[agent], tasks=[task]).kickoff()).strip()
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
