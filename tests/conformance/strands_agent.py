"""The shared script as a Strands Agents agent on its OpenAI model, traced by Strands itself.

``python -m tests.conformance.strands_agent STORE`` in the side venv of
``scripts/strands-venv.sh`` (strands-agents pins an older ``mcp`` and ``openai`` than the
project's).  The model is Strands' ``OpenAIModel`` on the scripted server at
``OPENAI_BASE_URL`` (Strands always streams it).  Strands writes its GenAI spans to the
global ``TracerProvider``, the one ``otel_prov.configure(store=STORE)`` sets, in the
conventions ``OTEL_SEMCONV_STABILITY_OPT_IN`` asks for (by default, content in span
events; ``gen_ai_latest_experimental``, in the inference details event).  A tool that
raises does not end the run: Strands hands the error to the model as a failed tool
result, and the model carries on.  It prints the answer.
"""

from __future__ import annotations

import os
import sys

import otel_prov
from tests.self_traced import scenario


def main(argv: list[str]) -> int:
    from strands import Agent, tool
    from strands.models.openai import OpenAIModel

    (store,) = argv
    handle = otel_prov.configure(store=store, service_name="conformance")
    model = OpenAIModel(
        client_args={"base_url": os.environ["OPENAI_BASE_URL"], "api_key": "not-a-key"},
        model_id=scenario.MODEL,
    )
    agent = Agent(
        model=model,
        name=scenario.AGENT,
        system_prompt="Answer questions about the weather.",
        tools=[tool(function) for function in scenario.TOOLS],
        callback_handler=None,
    )
    answer = str(agent(scenario.QUESTION)).strip()
    handle.shutdown()
    print(answer)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
