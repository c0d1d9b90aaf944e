"""The shared script as a hand-written agent loop on LiteLLM's ``completion``, under OpenInference.

``python -m tests.conformance.litellm_agent STORE MODE`` (MODE ``run`` or ``stream``) in
the side venv of ``scripts/frameworks-venv.sh``.  The loop is ``openai_client_agent``'s
Chat Completions loop, its client LiteLLM: ``litellm.completion`` with an ``openai/``
model and ``api_base`` the scripted server at ``OPENAI_BASE_URL``.  The model's calls are
traced by ``openinference-instrumentation-litellm``, the agent and its tools by
OpenInference's ``OITracer`` spans, as a user who writes the loop marks them.  LiteLLM
reads its model price map from the package (``LITELLM_LOCAL_MODEL_COST_MAP``), not the
network.  The process calls ``otel_prov.configure(store=STORE)`` and nothing else of
ours.  It prints the answer.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace
from typing import Any

from tests.conformance.openai_client_agent import Tracing, chat_loop
from tests.conformance.playing import play


class LiteLLMClient:
    """The surface of the ``openai`` client that the loop uses, answered by LiteLLM."""

    def __init__(self, base_url: str) -> None:
        self._base_url = base_url
        self.chat = SimpleNamespace(completions=SimpleNamespace(create=self.create))

    def create(self, *, model: str, **request: Any) -> Any:
        import litellm

        return litellm.completion(
            model=f"openai/{model}", api_base=self._base_url, api_key="not-a-key", **request
        )


def main(argv: list[str]) -> int:
    from openinference.instrumentation.litellm import LiteLLMInstrumentor

    store, mode = argv
    tracings: list[Tracing] = []

    def instrument(provider: Any) -> None:
        LiteLLMInstrumentor().instrument(tracer_provider=provider)
        tracings.append(Tracing("openinference", provider, client=False))

    def run() -> str:
        (tracing,) = tracings
        with tracing.agent() as answered:
            client = LiteLLMClient(os.environ["OPENAI_BASE_URL"])
            answer = chat_loop(client, tracing, mode == "stream")
            answered(answer)
        return answer

    return play(store, run, instrument)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
