"""The demo's scripted model follows the question it is asked, as a real model would."""

from __future__ import annotations

import json

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov.demo import DEMO_QUESTION, run_demo_agent


def _tool_calls(exporter: InMemorySpanExporter) -> list[tuple[str, dict[str, str]]]:
    calls = [
        span
        for span in exporter.get_finished_spans()
        if (span.attributes or {}).get("gen_ai.operation.name") == "execute_tool"
    ]
    calls.sort(key=lambda span: span.start_time or 0)
    return [
        (
            str((span.attributes or {})["gen_ai.tool.name"]),
            json.loads(str((span.attributes or {})["otel_prov.arguments"])),
        )
        for span in calls
    ]


@pytest.mark.parametrize(
    ("question", "city", "answer"),
    [
        (DEMO_QUESTION, "Paris", "It is 64.4 °F (18 °C) in Paris, with light rain."),
        (
            "How warm is it in Rio de Janeiro?",
            "Rio de Janeiro",
            "It is 18 °C in Rio de Janeiro, with light rain.",
        ),
        (
            "Is it cold in Oslo? Answer in Fahrenheit.",
            "Oslo",
            "It is 64.4 °F (18 °C) in Oslo, with light rain.",
        ),
    ],
)
def test_the_scripted_agent_answers_the_question_it_was_asked(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    question: str,
    city: str,
    answer: str,
) -> None:
    provider, exporter = memory_provider
    assert run_demo_agent(question, tracer_provider=provider) == answer
    calls = _tool_calls(exporter)
    assert calls[:2] == [("get_weather", {"city": city})] * 2  # the first one times out
    converted = [args for name, args in calls if name == "calculator"]
    assert bool(converted) == ("Fahrenheit" in question)
