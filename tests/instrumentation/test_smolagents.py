"""SmolagentsInstrumentor on real ``ToolCallingAgent`` loops, offline, with a scripted model.

The model is a ``smolagents.Model`` subclass whose ``generate`` returns prepared
``ChatMessage``s (``shared/docs/FRAMEWORKS.md``); the run ends through the
``final_answer`` tool.  Each test checks the exported spans and the PROV-O the mapper
makes of them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("smolagents")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from smolagents import Model, MultiStepAgent, Tool, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)
from smolagents.monitoring import TokenUsage

from otel_prov import semconv as sc
from otel_prov._rdf import literal
from otel_prov._vocab import RDF_TYPE, O, P
from otel_prov.instrumentation.smolagents import SmolagentsInstrumentor
from tests.instrumentation.span_helpers import attrs, by_name, parent_of, prov, subjects, value

ARGS = '{"city":  "Paris"}'  # odd spacing on purpose: the exact string must survive
THOUGHT = "I need the weather in Paris first."
ANSWER = "It is 18 °C in Paris."


# --- a scripted model, per FRAMEWORKS.md ---------------------------------------------
def _call(name: str, arguments: str, call_id: str, thought: str) -> ChatMessage:
    return ChatMessage(
        role=MessageRole.ASSISTANT,
        content=thought,
        tool_calls=[
            ChatMessageToolCall(
                id=call_id,
                type="function",
                function=ChatMessageToolCallFunction(name=name, arguments=arguments),
            )
        ],
        token_usage=TokenUsage(input_tokens=11, output_tokens=7),
    )


def _tool_step(args: str = ARGS, call_id: str = "call_1") -> ChatMessage:
    return _call("get_weather", args, call_id, THOUGHT)


def _answer_step(text: str = ANSWER) -> ChatMessage:
    return _call("final_answer", json.dumps({"answer": text}), "call_final", "I know it now.")


class ScriptedModel(Model):
    def __init__(self, messages: list[ChatMessage]) -> None:
        super().__init__(model_id="scripted-1")
        self.messages = list(messages)

    def generate(
        self,
        messages: Any,
        stop_sequences: list[str] | None = None,
        response_format: Any = None,
        tools_to_call_from: Any = None,
        **kwargs: Any,
    ) -> ChatMessage:
        return self.messages.pop(0)


@tool
def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: the city's name
    """
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"18 °C and light rain in {city}"


def _agent(messages: list[ChatMessage]) -> ToolCallingAgent:
    return ToolCallingAgent(
        tools=[get_weather], model=ScriptedModel(messages), name="weather", verbosity_level=0
    )


# --- fixtures and helpers --------------------------------------------------------------
@pytest.fixture
def instrumented(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> Iterator[InMemorySpanExporter]:
    provider, exporter = memory_provider
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield exporter
    instrumentor.uninstrument()


def _wrapped_methods() -> list[Any]:
    from smolagents import FinalAnswerTool

    return [
        MultiStepAgent.__dict__["_run_stream"],
        ToolCallingAgent.__dict__["_step_stream"],
        ScriptedModel.__dict__["generate"],
        Tool.__dict__["__call__"],
        FinalAnswerTool.__dict__.get("__call__"),
    ]


# --- tests ---------------------------------------------------------------------------
def test_tool_call_then_final_answer(instrumented: InMemorySpanExporter) -> None:
    result = _agent([_tool_step(), _answer_step()]).run("Weather in Paris?")
    assert result == ANSWER
    spans = list(instrumented.get_finished_spans())
    assert len({s.context.trace_id for s in spans}) == 1
    (session,) = by_name(spans, "invoke_agent")
    assert session.name == "invoke_agent weather"
    assert session.parent is None
    assert attrs(session)[sc.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert attrs(session)[sc.GEN_AI_AGENT_NAME] == "weather"
    assert attrs(session)[sc.OTEL_PROV_QUESTION] == "Weather in Paris?"
    assert attrs(session)[sc.OTEL_PROV_ANSWER] == ANSWER

    iterations = by_name(spans, "iteration")
    assert [attrs(i)[sc.OTEL_PROV_ITERATION_NUMBER] for i in iterations] == [1, 2]
    assert all(parent_of(i) == session.context.span_id for i in iterations)
    first, second = (attrs(i) for i in iterations)
    assert first[sc.OTEL_PROV_THOUGHT] == THOUGHT
    assert first[sc.OTEL_PROV_ACTION] == "get_weather"
    assert first[sc.OTEL_PROV_ARGUMENTS] == ARGS  # not the dict smolagents parsed in place
    assert second[sc.OTEL_PROV_ACTION] == "final_answer"
    assert json.loads(second[sc.OTEL_PROV_ARGUMENTS]) == {"answer": ANSWER}

    (call,) = by_name(spans, "execute_tool")  # final_answer has no tool span of its own
    assert call.name == "execute_tool get_weather"
    assert parent_of(call) == iterations[0].context.span_id
    tool_attrs = attrs(call)
    assert tool_attrs[sc.GEN_AI_TOOL_NAME] == "get_weather"
    assert tool_attrs[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert tool_attrs[sc.OTEL_PROV_ARGUMENTS] == ARGS
    assert tool_attrs[sc.OTEL_PROV_OBSERVATION] == "18 °C and light rain in Paris"
    assert sc.GEN_AI_TOOL_CALL_ARGUMENTS not in tool_attrs  # GenAI content is opt-in
    assert call.status.status_code is not StatusCode.ERROR

    models = by_name(spans, "chat")
    assert [m.name for m in models] == ["chat scripted-1", "chat scripted-1"]
    assert [parent_of(m) for m in models] == [i.context.span_id for i in iterations]
    for model in models:
        assert model.kind is SpanKind.CLIENT
        assert attrs(model)[sc.GEN_AI_REQUEST_MODEL] == "scripted-1"
        assert attrs(model)[sc.GEN_AI_USAGE_INPUT_TOKENS] == 11
        assert attrs(model)[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 7
    for iteration in iterations:
        children = [s for s in spans if parent_of(s) == iteration.context.span_id]
        assert iteration.start_time <= min(c.start_time or 0 for c in children)
        assert iteration.end_time >= max(c.end_time or 0 for c in children)

    triples = prov(spans)
    (prov_session,) = subjects(triples, O.AgentSession)
    prov_iterations = subjects(triples, O.Iteration)
    numbered = {int(value(triples, i, O.iterationNumber) or 0): i for i in prov_iterations}
    assert sorted(numbered) == [1, 2]
    assert (numbered[2], P.wasInformedBy, numbered[1]) in triples
    (prov_call,) = subjects(triples, O.ToolCall)
    assert (prov_call, O.status, literal("ok")) in triples
    assert value(triples, prov_call, O.toolCallId) == "call_1"
    (arguments,) = [o for s, p, o in triples if s == prov_call and p == P.used]
    assert value(triples, arguments, P.value) == ARGS
    (observation,) = [s for s, p, o in triples if p == P.wasGeneratedBy and o == prov_call]
    assert (observation, RDF_TYPE, O.Observation) in triples
    assert (numbered[2], P.used, observation) in triples
    (answer,) = subjects(triples, O.Answer)
    assert value(triples, answer, P.value) == ANSWER
    assert (answer, P.wasGeneratedBy, prov_session) in triples


def test_streaming_run_records_the_same_session(instrumented: InMemorySpanExporter) -> None:
    agent = _agent([_tool_step(), _answer_step()])
    items = list(agent.run("Weather in Paris?", stream=True))
    assert type(items[-1]).__name__ == "FinalAnswerStep"
    spans = list(instrumented.get_finished_spans())
    (session,) = by_name(spans, "invoke_agent")
    assert attrs(session)[sc.OTEL_PROV_ANSWER] == ANSWER
    assert len(by_name(spans, "iteration")) == 2
    assert len(by_name(spans, "execute_tool")) == 1


def _failing_run() -> tuple[Any, list[Any]]:
    agent = _agent([_tool_step(args='{"city": "Atlantis"}'), _answer_step("Not found.")])
    result = agent.run("Weather in Atlantis?")
    steps = [
        (type(s).__name__, getattr(s, "tool_calls", None), str(getattr(s, "error", None)))
        for s in agent.memory.steps
    ]
    return result, steps


def test_failing_tool_is_a_failed_call_and_the_run_goes_on(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    bare = _failing_run()
    provider, exporter = memory_provider
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        traced = _failing_run()
    finally:
        instrumentor.uninstrument()
    assert traced == bare  # the same result and the same agent memory as uninstrumented
    assert traced[0] == "Not found."
    assert bare[1][1][1] is None  # smolagents kept no tool_calls for the failed step

    spans = list(exporter.get_finished_spans())
    (call,) = by_name(spans, "execute_tool")
    assert call.status.status_code is StatusCode.ERROR
    assert call.status.description == "no such city"
    assert attrs(call)[sc.ERROR_TYPE] == "ValueError"
    assert attrs(call)[sc.OTEL_PROV_ARGUMENTS] == '{"city": "Atlantis"}'
    assert attrs(call)[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert sc.OTEL_PROV_OBSERVATION not in attrs(call)
    first, second = by_name(spans, "iteration")
    assert first.status.status_code is StatusCode.ERROR
    assert attrs(first)[sc.ERROR_TYPE] == "smolagents.utils.AgentToolExecutionError"
    assert attrs(first)[sc.OTEL_PROV_ACTION] == "get_weather"  # from model_output_message
    assert attrs(first)[sc.OTEL_PROV_ARGUMENTS] == '{"city": "Atlantis"}'
    assert second.status.status_code is not StatusCode.ERROR
    (session,) = by_name(spans, "invoke_agent")
    assert session.status.status_code is not StatusCode.ERROR
    assert attrs(session)[sc.OTEL_PROV_ANSWER] == "Not found."

    triples = prov(spans)
    (prov_call,) = subjects(triples, O.ToolCall)
    assert (prov_call, O.status, literal("error")) in triples
    assert value(triples, prov_call, O.errorType) == "ValueError"
    assert not [s for s, p, o in triples if p == P.wasGeneratedBy and o == prov_call]
    assert len(subjects(triples, O.Answer)) == 1


def test_model_failure_fails_the_run_as_uninstrumented(instrumented: InMemorySpanExporter) -> None:
    class BrokenModel(ScriptedModel):  # defined after instrument(): wrapped at run start
        def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
            raise RuntimeError("model down")

    agent = ToolCallingAgent(tools=[get_weather], model=BrokenModel([]), verbosity_level=0)
    with pytest.raises(Exception, match="model down") as raised:
        agent.run("Weather in Paris?")
    assert type(raised.value).__name__ == "AgentGenerationError"
    spans = list(instrumented.get_finished_spans())
    (session,) = by_name(spans, "invoke_agent")
    assert session.name == "invoke_agent ToolCallingAgent"  # unnamed agent: its class
    assert session.status.status_code is StatusCode.ERROR
    (model,) = by_name(spans, "chat")
    assert attrs(model)[sc.ERROR_TYPE] == "RuntimeError"
    (iteration,) = by_name(spans, "iteration")
    assert iteration.status.status_code is StatusCode.ERROR


def test_two_agents_in_threads_are_separate_traces(instrumented: InMemorySpanExporter) -> None:
    cities = ["Paris", "Oslo"]
    barrier = threading.Barrier(len(cities))
    errors: list[BaseException] = []

    def run(city: str) -> None:
        try:
            agent = _agent(
                [
                    _tool_step(args=json.dumps({"city": city}), call_id=f"call_{city}"),
                    _answer_step(f"Weather in {city}: fine."),
                ]
            )
            barrier.wait(timeout=10)
            agent.run(f"Weather in {city}?")
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(city,)) for city in cities]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    traces: dict[int, list[ReadableSpan]] = {}
    for span in instrumented.get_finished_spans():
        traces.setdefault(span.context.trace_id, []).append(span)
    assert len(traces) == 2
    seen = set()
    for trace_spans in traces.values():
        (session,) = by_name(trace_spans, "invoke_agent")
        city = str(attrs(session)[sc.OTEL_PROV_QUESTION]).removeprefix("Weather in ")[:-1]
        seen.add(city)
        assert attrs(session)[sc.OTEL_PROV_ANSWER] == f"Weather in {city}: fine."
        (call,) = by_name(trace_spans, "execute_tool")
        assert attrs(call)[sc.GEN_AI_TOOL_CALL_ID] == f"call_{city}"
        assert city in str(attrs(call)[sc.OTEL_PROV_OBSERVATION])
        triples = prov(trace_spans)
        assert len(subjects(triples, O.AgentSession)) == 1
        assert len(subjects(triples, O.Iteration)) == 2
    assert seen == set(cities)


def test_content_switch_off_keeps_structure_only(
    instrumented: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    _agent([_tool_step(), _answer_step()]).run("Weather in Paris?")
    spans = list(instrumented.get_finished_spans())
    content = {
        sc.OTEL_PROV_QUESTION,
        sc.OTEL_PROV_ANSWER,
        sc.OTEL_PROV_THOUGHT,
        sc.OTEL_PROV_ARGUMENTS,
        sc.OTEL_PROV_OBSERVATION,
    }
    assert len(spans) == 6
    assert all(not content & set(attrs(s)) for s in spans)
    assert [attrs(i)[sc.OTEL_PROV_ACTION] for i in by_name(spans, "iteration")] == [
        "get_weather",
        "final_answer",
    ]


def test_genai_opt_in_adds_tool_call_content(
    instrumented: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    _agent([_tool_step(), _answer_step()]).run("Weather in Paris?")
    (call,) = by_name(list(instrumented.get_finished_spans()), "execute_tool")
    assert attrs(call)[sc.GEN_AI_TOOL_CALL_ARGUMENTS] == ARGS
    assert attrs(call)[sc.GEN_AI_TOOL_CALL_RESULT] == "18 °C and light rain in Paris"


def test_uninstrument_restores_everything_and_leaves_no_spans(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    before = _wrapped_methods()
    instrumentor = SmolagentsInstrumentor()
    assert list(instrumentor.instrumentation_dependencies()) == ["smolagents >= 1.20"]
    instrumentor.instrument(tracer_provider=provider)
    patched = _wrapped_methods()
    assert patched[:4] != before[:4]
    # Idempotent: a second install wraps nothing twice.
    from otel_prov.instrumentation.smolagents import _patches

    _patches.install(_patches._tracer)  # type: ignore[arg-type]
    assert _wrapped_methods() == patched
    _agent([_tool_step(), _answer_step()]).run("Weather in Paris?")
    assert len(exporter.get_finished_spans()) == 6
    exporter.clear()
    instrumentor.uninstrument()
    assert _wrapped_methods() == before
    assert _agent([_tool_step(), _answer_step()]).run("Weather in Paris?") == ANSWER
    assert exporter.get_finished_spans() == ()
