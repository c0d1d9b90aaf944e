"""The shared script as a Microsoft Agent Framework agent on its OpenAI chat client, traced
by Agent Framework itself.

``python -m tests.conformance.agent_framework_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is ``OpenAIChatClient`` on the scripted server
at ``OPENAI_BASE_URL``.  Agent Framework writes GenAI spans (``invoke_agent``, ``chat``,
``execute_tool``) to the global ``TracerProvider``, the one ``otel_prov.configure(store=STORE)``
sets, once its instrumentation is on, with content when sensitive data is enabled.  A tool
that raises does not end the run: the framework hands the error to the model as the call's
result, and the model carries on.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


async def run() -> str:
    from agent_framework.openai import OpenAIChatClient

    client = OpenAIChatClient(
        model=scenario.MODEL, base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key"
    )
    agent = client.as_agent(
        name=scenario.AGENT,
        instructions="Answer questions about the weather.",
        tools=list(scenario.TOOLS),
    )
    return str((await agent.run(scenario.QUESTION)).text)


def main(argv: list[str]) -> int:
    from agent_framework.observability import enable_instrumentation

    (store,) = argv
    return play(
        store,
        lambda: asyncio.run(run()),
        lambda _: enable_instrumentation(enable_sensitive_data=True),
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
