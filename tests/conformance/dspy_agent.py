"""The shared script as a DSPy ``ReAct`` program on ``dspy.LM``, under OpenInference.

``python -m tests.conformance.dspy_agent STORE`` in the side venv of
``scripts/frameworks-venv.sh``.  The model is ``dspy.LM("openai/...")`` on the scripted
server at ``OPENAI_BASE_URL`` (through LiteLLM); DSPy's chat adapter asks it for the
signature's fields as ``[[ ## name ## ]]`` sections, and the server writes its turns so
for such a prompt: each step's ``next_thought``, ``next_tool_name`` and
``next_tool_args``, then ``finish``, then the extraction's ``reasoning`` and ``answer``.
A tool that raises does not end the run: ReAct hands the error to the model as the
step's observation, and the model carries on.  The instrumentation is
``openinference-instrumentation-dspy``.  The process calls
``otel_prov.configure(store=STORE)`` and nothing else of ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys

from tests.conformance.playing import play
from tests.self_traced import scenario


def run() -> str:
    import dspy

    model = dspy.LM(
        f"openai/{scenario.MODEL}",
        api_base=os.environ["OPENAI_BASE_URL"],
        api_key="not-a-key",
        cache=False,
    )
    dspy.configure(lm=model)
    agent = dspy.ReAct("question -> answer", tools=list(scenario.TOOLS), max_iters=5)
    return str(agent(question=scenario.QUESTION).answer)


def main(argv: list[str]) -> int:
    from openinference.instrumentation.dspy import DSPyInstrumentor

    (store,) = argv
    return play(
        store, run, lambda provider: DSPyInstrumentor().instrument(tracer_provider=provider)
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
