"""The manual instrumentation API on a real SDK provider."""

from __future__ import annotations

import asyncio
import json

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

import otel_prov

Provider = tuple[TracerProvider, InMemorySpanExporter]


def _by_name(exporter: InMemorySpanExporter) -> dict[str, ReadableSpan]:
    return {span.name: span for span in exporter.get_finished_spans()}


def test_context_managers_nest_and_set_the_conventions(memory_provider: Provider) -> None:
    provider, exporter = memory_provider
    with otel_prov.agent_session(
        "helper", question="Q?", conversation_id="c-1", agent_id="a-1", tracer_provider=provider
    ) as session:
        with otel_prov.iteration(
            1, thought="T", action="search", arguments={"q": "x"}, tracer_provider=provider
        ):
            with otel_prov.model_call("gpt-x", provider="openai", tracer_provider=provider):
                otel_prov.set_usage(input_tokens=5, output_tokens=2)
            with otel_prov.tool_call(
                "search", arguments='{"q": "x"}', call_id="call_9", tracer_provider=provider
            ):
                otel_prov.set_observation("found")
            otel_prov.set_observation(["found"])
        otel_prov.set_answer("A", span=session)
    spans = _by_name(exporter)
    s = spans["invoke_agent helper"].attributes or {}
    assert s["gen_ai.operation.name"] == "invoke_agent"
    assert (s["gen_ai.agent.name"], s["gen_ai.agent.id"], s["gen_ai.conversation.id"]) == (
        "helper",
        "a-1",
        "c-1",
    )
    assert (s["otel_prov.question"], s["otel_prov.answer"]) == ("Q?", "A")
    it = spans["iteration 1"].attributes or {}
    assert it["otel_prov.iteration.number"] == 1
    assert (it["otel_prov.thought"], it["otel_prov.action"]) == ("T", "search")
    assert json.loads(str(it["otel_prov.arguments"])) == {"q": "x"}
    assert it["otel_prov.observation"] == '["found"]'
    tool = spans["execute_tool search"].attributes or {}
    assert tool["gen_ai.tool.name"] == "search" and tool["gen_ai.tool.call.id"] == "call_9"
    assert tool["otel_prov.arguments"] == '{"q": "x"}'
    assert tool["otel_prov.observation"] == "found"
    assert "gen_ai.tool.call.arguments" not in tool  # opt-in, not set
    model = spans["chat gpt-x"]
    assert model.kind is SpanKind.CLIENT
    assert (model.attributes or {})["gen_ai.usage.input_tokens"] == 5
    assert spans["execute_tool search"].parent.span_id == spans["iteration 1"].context.span_id


def test_exception_is_recorded_then_propagates_unchanged(memory_provider: Provider) -> None:
    provider, exporter = memory_provider

    class ToolBroke(RuntimeError):
        pass

    error = ToolBroke("disk full")
    with pytest.raises(ToolBroke) as caught, otel_prov.tool_call("write", tracer_provider=provider):
        raise error
    assert caught.value is error
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == "disk full"
    assert (span.attributes or {})["error.type"].endswith("ToolBroke")
    assert [event.name for event in span.events] == ["exception"]


def test_decorated_tool_records_arguments_and_result(memory_provider: Provider) -> None:
    provider, exporter = memory_provider

    @otel_prov.tool_call("add", tracer_provider=provider)
    def add(a: int, b: int = 2) -> int:
        return a + b

    assert add(1) == 3
    assert add.__name__ == "add"
    (span,) = exporter.get_finished_spans()
    attributes = span.attributes or {}
    assert json.loads(str(attributes["otel_prov.arguments"])) == {"a": 1, "b": 2}
    assert attributes["otel_prov.observation"] == "3"


def test_async_decorator_and_context_manager(memory_provider: Provider) -> None:
    provider, exporter = memory_provider

    @otel_prov.tool_call("fetch", tracer_provider=provider)
    async def fetch(url: str) -> str:
        await asyncio.sleep(0)
        return f"<{url}>"

    @otel_prov.agent_session("async-agent", tracer_provider=provider)
    async def run() -> str:
        async with otel_prov.iteration(1, tracer_provider=provider):
            return await fetch("u")

    @otel_prov.tool_call("fail", tracer_provider=provider)
    async def fail() -> None:
        raise ValueError("nope")

    assert asyncio.run(run()) == "<u>"
    with pytest.raises(ValueError, match="nope"):
        asyncio.run(fail())
    spans = _by_name(exporter)
    assert spans["execute_tool fetch"].parent.span_id == spans["iteration 1"].context.span_id
    assert (spans["execute_tool fetch"].attributes or {})["otel_prov.observation"] == "<u>"
    assert spans["execute_tool fail"].status.status_code is StatusCode.ERROR


def test_decorator_gives_each_call_its_own_span(memory_provider: Provider) -> None:
    provider, exporter = memory_provider
    step = otel_prov.iteration(1, tracer_provider=provider)

    @step
    def work() -> None:
        pass

    work()
    work()
    spans = exporter.get_finished_spans()
    assert len(spans) == 2 and spans[0].context.span_id != spans[1].context.span_id


def test_content_off_keeps_structure_only(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, exporter = memory_provider
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    with (
        otel_prov.agent_session("s", question="secret question", tracer_provider=provider),
        otel_prov.iteration(1, thought="secret thought", action="lookup", tracer_provider=provider),
        otel_prov.tool_call("lookup", arguments='{"k": "secret"}', tracer_provider=provider),
    ):
        otel_prov.set_observation("secret result")
    for span in exporter.get_finished_spans():
        values = " ".join(str(v) for v in (span.attributes or {}).values())
        assert "secret" not in values
    attributes = _by_name(exporter)["iteration 1"].attributes or {}
    assert attributes["otel_prov.action"] == "lookup"


def test_genai_no_content_switches_ours_off_and_opt_in_adds_theirs(
    memory_provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider, exporter = memory_provider
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    with otel_prov.tool_call("t", arguments="{}", tracer_provider=provider):
        pass
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    with otel_prov.tool_call("u", arguments="{}", tracer_provider=provider):
        otel_prov.set_observation("r")
    spans = _by_name(exporter)
    assert "otel_prov.arguments" not in (spans["execute_tool t"].attributes or {})
    u = spans["execute_tool u"].attributes or {}
    assert u["gen_ai.tool.call.arguments"] == "{}" and u["gen_ai.tool.call.result"] == "r"
    assert u["otel_prov.arguments"] == "{}"


def test_iteration_number_must_be_positive() -> None:
    with pytest.raises(ValueError, match="iteration number"):
        otel_prov.iteration(0)
