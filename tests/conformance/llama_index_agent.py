"""The shared script as a LlamaIndex ``ReActAgent`` on ``OpenAILike``, under OpenInference.

``python -m tests.conformance.llama_index_agent STORE MODE`` with MODE ``run`` (the model
asked with ``achat``) or ``stream`` (``astream_chat``, the agent's default), in the side
venv of ``scripts/llama-index-venv.sh`` (llama-index-llms-openai pins an older ``openai``
than the project's).  The model is ``OpenAILike`` on the scripted server at
``OPENAI_BASE_URL``; a ReAct agent reads its tool calls from the model's text, and the
server writes its turns so for a ReAct prompt.  A tool that raises does not end the run:
the agent hands the error to the model as the observation, and the model carries on.
The instrumentation is ``openinference-instrumentation-llama-index``.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import asyncio
import os
import sys

import otel_prov
from tests.self_traced import scenario


async def run(mode: str) -> str:
    from llama_index.core.agent.workflow import ReActAgent
    from llama_index.llms.openai_like import OpenAILike

    model = OpenAILike(
        model=scenario.MODEL,
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key="not-a-key",
        is_chat_model=True,
        is_function_calling_model=False,
        context_window=8192,
    )
    agent = ReActAgent(
        name=scenario.AGENT,
        description="Answers questions about the weather.",
        tools=list(scenario.TOOLS),
        llm=model,
        streaming=mode == "stream",
    )
    return str(await agent.run(user_msg=scenario.QUESTION))


def main(argv: list[str]) -> int:
    from openinference.instrumentation.llama_index import LlamaIndexInstrumentor

    store, mode = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    LlamaIndexInstrumentor().instrument(tracer_provider=handle.tracer_provider)
    answer = asyncio.run(run(mode))
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
