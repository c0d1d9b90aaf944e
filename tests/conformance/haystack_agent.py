"""The shared script as a Haystack ``Agent`` on ``OpenAIChatGenerator``, under OpenInference.

``python -m tests.conformance.haystack_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is ``OpenAIChatGenerator`` on the scripted
server at ``OPENAI_BASE_URL``, calling the script's two tools by function calling.  A
tool that raises does not end the run: the agent's ``ToolInvoker`` hands the error to the
model as the tool's result, and the model carries on.  The instrumentation is
``openinference-instrumentation-haystack``.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


def run() -> str:
    from haystack.components.agents import Agent
    from haystack.components.generators.chat import OpenAIChatGenerator
    from haystack.dataclasses import ChatMessage
    from haystack.tools import create_tool_from_function
    from haystack.utils import Secret

    model = OpenAIChatGenerator(
        model=scenario.MODEL,
        api_base_url=os.environ["OPENAI_BASE_URL"],
        api_key=Secret.from_token("not-a-key"),
    )
    agent = Agent(
        chat_generator=model,
        tools=[create_tool_from_function(function) for function in scenario.TOOLS],
        system_prompt="Answer questions about the weather.",
        max_agent_steps=len(scenario.TURNS) * 2,
    )
    agent.warm_up()
    result = agent.run(messages=[ChatMessage.from_user(scenario.QUESTION)])
    return str(result["messages"][-1].text)


def main(argv: list[str]) -> int:
    # The agent's classes imported first: the instrumentor wraps those it finds loaded,
    # and a run of classes imported after it records no span.
    from haystack.components.agents import Agent  # noqa: F401
    from haystack.components.generators.chat import OpenAIChatGenerator  # noqa: F401
    from openinference.instrumentation.haystack import HaystackInstrumentor

    (store,) = argv
    return play(
        store, run, lambda provider: HaystackInstrumentor().instrument(tracer_provider=provider)
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
