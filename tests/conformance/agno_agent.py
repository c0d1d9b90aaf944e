"""The shared script as an Agno ``Agent`` on its OpenAI chat model, under OpenInference.

``python -m tests.conformance.agno_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is Agno's ``OpenAIChat`` on the scripted server
at ``OPENAI_BASE_URL``, calling the script's two tools by function calling.  A tool that
raises does not end the run: Agno hands the error to the model as the call's result, and
the model carries on.  The instrumentation is ``openinference-instrumentation-agno``;
Agno's own telemetry is off (``telemetry=False``).  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


def run() -> str:
    from agno.agent import Agent
    from agno.models.openai import OpenAIChat

    agent = Agent(
        name=scenario.AGENT,
        model=OpenAIChat(
            id=scenario.MODEL, base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key"
        ),
        tools=list(scenario.TOOLS),
        instructions="Answer questions about the weather.",
        telemetry=False,
    )
    return str(agent.run(scenario.QUESTION).content)


def main(argv: list[str]) -> int:
    from openinference.instrumentation.agno import AgnoInstrumentor

    (store,) = argv
    return play(
        store, run, lambda provider: AgnoInstrumentor().instrument(tracer_provider=provider)
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
