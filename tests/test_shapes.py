"""The span shapes every producer builds with (``otel_prov.capture``), on a real SDK provider."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from otel_prov import semconv as sc
from otel_prov.capture import (
    agent_session,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    put_content,
    record_error,
    session_shape,
    set_answer,
    tool_call_shape,
)
from tests.instrumentation.span_helpers import genai_messages, said

Provider = tuple[TracerProvider, InMemorySpanExporter]


def _only(exporter: InMemorySpanExporter) -> ReadableSpan:
    (span,) = exporter.get_finished_spans()
    return span


def test_unknown_values_are_left_off_not_set() -> None:
    shape = session_shape("helper", agent_id=None, tools=(), question=None)
    assert shape.name == "invoke_agent helper"
    assert dict(shape.attributes) == {
        sc.GEN_AI_OPERATION_NAME: "invoke_agent",
        sc.GEN_AI_AGENT_NAME: "helper",
    }
    assert dict(shape.content) == {}


def test_a_model_named_only_later_is_named_by_its_operation() -> None:
    shape = model_call_shape(None, provider="openai")
    assert (shape.name, shape.kind) == ("chat", SpanKind.CLIENT)
    assert sc.GEN_AI_REQUEST_MODEL not in shape.attributes
    assert model_call_shape("m", operation="text_completion").name == "text_completion m"


def test_content_is_put_when_the_span_starts_under_the_settings_then(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, exporter = memory_provider
    shape = iteration_shape(2, thought="why")
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    shape.start(provider.get_tracer("t")).end()
    attributes = _only(exporter).attributes or {}
    assert attributes[sc.OTEL_PROV_ITERATION_NUMBER] == 2
    assert sc.OTEL_PROV_THOUGHT not in attributes
    assert attributes[sc.OTEL_PROV_CONTENT_THOUGHT_SIZE] == 3


@pytest.mark.parametrize("start_with_arguments", [True, False])
def test_the_genai_twin_goes_on_tool_calls_only(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch, start_with_arguments: bool
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    provider, exporter = memory_provider
    tracer = provider.get_tracer("t")
    arguments = {"q": "x"} if start_with_arguments else None
    tool = tool_call_shape("search", arguments=arguments).start(tracer)
    if not start_with_arguments:
        put_content(tool, sc.OTEL_PROV_ARGUMENTS, {"q": "x"})
    put_content(tool, sc.OTEL_PROV_OBSERVATION, "found")
    tool.end()
    step = iteration_shape(1).start(tracer)
    describe_iteration(step, action="search", arguments={"q": "x"}, observation="found")
    step.end()
    spans = {span.name: span.attributes or {} for span in exporter.get_finished_spans()}
    assert spans["execute_tool search"][sc.GEN_AI_TOOL_CALL_ARGUMENTS] == '{"q": "x"}'
    assert spans["execute_tool search"][sc.GEN_AI_TOOL_CALL_RESULT] == "found"
    assert spans["iteration 1"][sc.OTEL_PROV_ARGUMENTS] == '{"q": "x"}'
    assert not {sc.GEN_AI_TOOL_CALL_ARGUMENTS, sc.GEN_AI_TOOL_CALL_RESULT} & set(
        spans["iteration 1"]
    )


@pytest.mark.parametrize("content", ["SPAN_ONLY", "true", "", "NO_CONTENT"])
def test_a_manual_session_speaks_the_genai_conventions(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """The agent span of the manual API carries its provider, and under the GenAI opt-in
    its question and answer as the conventions' input and output messages."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    provider, exporter = memory_provider
    with agent_session(
        "weather", question="Weather in «Paris»?", provider="openai", tracer_provider=provider
    ):
        set_answer("18 °C")
    on = content in ("SPAN_ONLY", "true")
    messages = said("Weather in «Paris»?", "18 °C") if on else (None, None)
    assert genai_messages(_only(exporter)) == (*messages, "openai")


def test_an_error_is_recorded_with_its_type_event_and_status(memory_provider: Provider) -> None:
    provider, exporter = memory_provider
    span = tool_call_shape("t").start(provider.get_tracer("t"))
    record_error(span, KeyError("city"))
    span.end()
    recorded = _only(exporter)
    assert (recorded.attributes or {})[sc.ERROR_TYPE] == "KeyError"
    assert recorded.status.status_code is StatusCode.ERROR
    assert [event.name for event in recorded.events] == ["exception"]


def test_a_stream_closed_early_is_marked_without_an_exception(memory_provider: Provider) -> None:
    provider, exporter = memory_provider
    span = model_call_shape("m").start(provider.get_tracer("t"))
    record_error(span, GeneratorExit())
    span.end()
    recorded = _only(exporter)
    assert (recorded.attributes or {})[sc.ERROR_TYPE] == "GeneratorExit"
    assert recorded.status.status_code is StatusCode.ERROR
    assert "closed early" in (recorded.status.description or "")
    assert recorded.events == ()
