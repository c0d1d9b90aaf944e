"""The shared script as an AG2 ``Agent`` on its OpenAI config, traced by AG2 itself.

``python -m tests.conformance.ag2_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is AG2's ``OpenAIConfig`` on the scripted
server at ``OPENAI_BASE_URL``.  AG2 writes GenAI spans (``invoke_agent``, ``chat``,
``execute_tool``) through its ``TelemetryMiddleware`` to the global ``TracerProvider``, the
one ``otel_prov.configure(store=STORE)`` sets.  A tool that raises does not end the run:
AG2 hands the error to the model as the call's result, and the model carries on.  It
prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


async def run() -> str:
    from ag2 import Agent
    from ag2.config.openai import OpenAIConfig
    from ag2.middleware import TelemetryMiddleware

    agent = Agent(
        scenario.AGENT,
        prompt="Answer questions about the weather.",
        config=OpenAIConfig(
            model=scenario.MODEL, base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key"
        ),
        tools=list(scenario.TOOLS),
        middleware=[
            TelemetryMiddleware(
                agent_name=scenario.AGENT, provider_name="openai", model_name=scenario.MODEL
            )
        ],
    )
    reply = await agent.ask(scenario.QUESTION)
    return str(await reply.content())


def main(argv: list[str]) -> int:
    (store,) = argv
    return play(store, lambda: asyncio.run(run()))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
