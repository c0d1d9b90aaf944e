"""Record the fixtures of ``bench_third_party``: one scripted run's spans, per instrumentation.

``python -m benchmarks.record_third_party`` runs the conformance suite's script (one tool
answers, one raises, the model answers; ``tests/self_traced/scenario.py``) on the
scripted OpenAI-compatible server of ``tests/conformance/openai_server.py``, once under
each instrumentation of :data:`RUNS`, each in a process of its own (an instrumentor
patches its framework for the process), and writes what the SDK's OTLP exporter would
send (the protobuf request, as ``otel-prov receive`` gets it) to
``benchmarks/fixtures/<run>.pb``.  Run it again when an instrumentation's pin changes.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from opentelemetry.exporter.otlp.proto.common._internal.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"

_GENAI_LATEST = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}


def _openai_agents(instrumentation: str) -> Callable[[TracerProvider], None]:
    """The script as an OpenAI Agents SDK agent (Chat Completions), under ``instrumentation``:
    ``otel-prov`` (ours) or a third party's, as the conformance suite instruments it."""

    def run(provider: TracerProvider) -> None:
        from tests.conformance import openai_agents_agent as agent

        if instrumentation == "otel-prov":
            from agents.tracing import set_trace_processors

            from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor

            ours = OpenAIAgentsInstrumentor()
            ours.instrument(tracer_provider=provider)
            set_trace_processors([ours.processor])  # no export to OpenAI's tracing service
        else:
            agent.instrument(instrumentation, provider)
        asyncio.run(agent.run(agent.build("chat"), "run"))

    return run


def _genai_client(provider: TracerProvider) -> None:
    """The script as a hand-written loop on the ``openai`` client, under the official GenAI
    packages with the newest conventions and content on spans."""
    from openai import OpenAI

    from tests.conformance import openai_client_agent as agent

    tracing = agent.Tracing("genai", provider)
    client = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key="not-a-key")
    with tracing.agent() as answered:
        answered(agent.chat_loop(client, tracing, stream=False))


RUNS: dict[str, tuple[Callable[[TracerProvider], None], dict[str, str]]] = {
    "otel-prov-openai-agents": (_openai_agents("otel-prov"), {}),
    "openinference-openai-agents": (_openai_agents("openinference"), {}),
    "openllmetry-openai-agents": (_openai_agents("openllmetry"), {}),
    "genai-openai-v2-latest": (_genai_client, _GENAI_LATEST),
}
"""Fixture name -> the run, and the environment its instrumentation reads at import."""


def record(name: str) -> None:
    """Run ``name`` in this process and write its spans to its fixture."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource({"service.name": "conformance"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    RUNS[name][0](provider)
    provider.shutdown()
    request = encode_spans(exporter.get_finished_spans()).SerializeToString()
    FIXTURES.mkdir(exist_ok=True)
    (FIXTURES / f"{name}.pb").write_bytes(request)


def main(argv: list[str]) -> int:
    if argv:
        record(*argv)
        return 0
    from tests.conformance.openai_server import ScriptedOpenAI

    for name, (_, environment) in RUNS.items():
        with ScriptedOpenAI() as model:
            subprocess.run(
                [sys.executable, "-m", "benchmarks.record_third_party", name],
                cwd=ROOT,
                check=True,
                env={
                    **os.environ,
                    "PYTHONPATH": str(ROOT),
                    "OPENAI_BASE_URL": model.base_url,
                    "OPENAI_API_KEY": "not-a-key",
                    **environment,
                },
            )
        print(f"wrote {FIXTURES / name}.pb")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
