"""Our agent spans in a backend that reads only the GenAI conventions (issue 25, point 5).

Arize Phoenix (real, over OTLP/HTTP) knows nothing of ``otel_prov.*``: it shows a
session's input, output and provider from ``gen_ai.input.messages``,
``gen_ai.output.messages`` and ``gen_ai.provider.name``, which it turns into its own
``llm.input_messages.*``, ``llm.output_messages.*`` and ``llm.provider``.  A run made
with the manual API and one made by the smolagents instrumentor (its ``OpenAIModel`` on
a local scripted OpenAI server), with the content opt-in, must show there whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_prov.capture import agent_session, set_answer
from otel_prov.instrumentation.smolagents import SmolagentsInstrumentor
from tests.phoenix import Phoenix, start_phoenix
from tests.self_traced import scenario

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Phoenix]:
    started = start_phoenix(tmp_path_factory.mktemp("phoenix"))
    yield started
    started.stop()


def _manual(provider: TracerProvider) -> None:
    with agent_session(
        scenario.AGENT, question=scenario.QUESTION, provider="openai", tracer_provider=provider
    ):
        set_answer(scenario.ANSWER)


def _smolagents(provider: TracerProvider) -> None:
    from tests.conformance import smolagents_agent
    from tests.conformance.openai_server import ScriptedOpenAI

    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with ScriptedOpenAI() as server, pytest.MonkeyPatch.context() as env:
            env.setenv("OPENAI_BASE_URL", server.base_url)
            smolagents_agent.build(stream=False).run(scenario.QUESTION)
    finally:
        instrumentor.uninstrument()


RUNS: dict[str, Callable[[TracerProvider], None]] = {"manual": _manual, "smolagents": _smolagents}


@pytest.mark.parametrize("run", list(RUNS))
def test_phoenix_shows_the_session_s_input_output_and_provider(
    phoenix: Phoenix, monkeypatch: pytest.MonkeyPatch, run: str
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    project = f"otel-prov-genai-{run}"
    provider = TracerProvider(resource=Resource({"openinference.project.name": project}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(phoenix.otlp_http_traces)))
    try:
        RUNS[run](provider)
    finally:
        provider.shutdown()
    stored = phoenix.spans(project, expected=1, timeout=60)
    (session,) = [s for s in stored if s["name"] == f"invoke_agent {scenario.AGENT}"]
    shown: dict[str, Any] = session["attributes"]
    assert session["span_kind"] == "AGENT"
    assert shown.get("llm.input_messages.0.message.role") == "user"
    assert shown.get("llm.input_messages.0.message.content") == scenario.QUESTION
    assert shown.get("llm.output_messages.0.message.role") == "assistant"
    assert shown.get("llm.output_messages.0.message.content") == scenario.ANSWER
    assert shown.get("llm.provider") == "openai"
