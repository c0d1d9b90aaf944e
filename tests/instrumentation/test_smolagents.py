"""SmolagentsInstrumentor on real ``ToolCallingAgent`` loops, offline, with a scripted model.

The model is a ``smolagents.Model`` subclass whose ``generate`` returns prepared
``ChatMessage``s (``shared/docs/FRAMEWORKS.md``); the run ends through the
``final_answer`` tool.  Its streaming twin (``stream_outputs=True``) serves the same
messages through ``generate_stream`` as provider-like deltas.  Each test checks the
exported spans and the PROV-O the mapper makes of them.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode
from smolagents import Model, MultiStepAgent, Tool, ToolCallingAgent, tool
from smolagents.models import (
    ChatMessage,
    ChatMessageStreamDelta,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    ChatMessageToolCallStreamDelta,
    MessageRole,
    agglomerate_stream_deltas,
)
from smolagents.monitoring import TokenUsage

import otel_prov
from otel_prov import semconv as sc
from otel_prov.instrumentation.smolagents import SmolagentsInstrumentor, _patches
from otel_prov.prov._iris import activity_iri, tool_iri
from otel_prov.prov._rdf import literal
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.cli import run_cli
from tests.instrumentation.span_helpers import (
    Triples,
    attrs,
    by_name,
    genai_messages,
    parent_of,
    prov,
    said,
    subjects,
    value,
)

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


def _pieces(text: str, size: int = 5) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def _deltas(message: ChatMessage) -> list[ChatMessageStreamDelta]:
    """``message`` streamed as providers do: the text in pieces, each tool call opened by
    a delta with its index, id and name, then its arguments in pieces; the usage split
    over the first and the last delta (``agglomerate_stream_deltas`` sums it)."""
    deltas = [ChatMessageStreamDelta(content=piece) for piece in _pieces(str(message.content))]
    for index, call in enumerate(message.tool_calls or []):
        opening = ChatMessageToolCallStreamDelta(
            index=index,
            id=call.id,
            type="function",
            function=ChatMessageToolCallFunction(name=call.function.name, arguments=""),
        )
        deltas.append(ChatMessageStreamDelta(tool_calls=[opening]))
        deltas += [
            ChatMessageStreamDelta(
                tool_calls=[
                    ChatMessageToolCallStreamDelta(
                        index=index, function=ChatMessageToolCallFunction(name="", arguments=piece)
                    )
                ]
            )
            for piece in _pieces(str(call.function.arguments))
        ]
    usage = message.token_usage
    assert usage is not None
    deltas[0].token_usage = TokenUsage(input_tokens=usage.input_tokens, output_tokens=0)
    deltas.append(
        ChatMessageStreamDelta(
            content="", token_usage=TokenUsage(input_tokens=0, output_tokens=usage.output_tokens)
        )
    )
    return deltas


class StreamingModel(ScriptedModel):
    """Streams each prepared message; notes when each stream was requested and each
    delta handed out (``time.time_ns``, the SDK's clock)."""

    def __init__(self, messages: list[ChatMessage]) -> None:
        super().__init__(messages)
        self.requested_at: list[int] = []
        self.yielded_at: list[int] = []

    def generate_stream(
        self, messages: Any, **kwargs: Any
    ) -> Generator[ChatMessageStreamDelta, None, None]:
        self.requested_at.append(time.time_ns())
        return self._stream(_deltas(self.messages.pop(0)))

    def _stream(
        self, deltas: list[ChatMessageStreamDelta]
    ) -> Generator[ChatMessageStreamDelta, None, None]:
        for delta in deltas:
            self.yielded_at.append(time.time_ns())
            yield delta


class PreparedStream(Model):
    """Streams prepared lists of deltas as they are."""

    def __init__(self, streams: list[list[ChatMessageStreamDelta]]) -> None:
        super().__init__(model_id="prepared-1")
        self.streams = list(streams)

    def generate_stream(self, messages: Any, **kwargs: Any) -> Iterator[ChatMessageStreamDelta]:
        return iter(self.streams.pop(0))


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


def _streaming_agent(model: Model | None = None) -> ToolCallingAgent:
    return ToolCallingAgent(
        tools=[get_weather],
        model=model or StreamingModel([_tool_step(), _answer_step()]),
        name="weather",
        verbosity_level=0,
        stream_outputs=True,
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


class OpenSpans(SpanProcessor):
    """The spans started and not ended yet, by span id."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self.names[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        self.names.pop(span.context.span_id, None)


def _wrapped_methods() -> list[Any]:
    from smolagents import FinalAnswerTool

    return [
        MultiStepAgent.__dict__["_run_stream"],
        ToolCallingAgent.__dict__["_step_stream"],
        ScriptedModel.__dict__["generate"],
        StreamingModel.__dict__["generate_stream"],
        Tool.__dict__["__call__"],
        FinalAnswerTool.__dict__.get("__call__"),
    ]


def _shape(spans: list[ReadableSpan]) -> list[tuple[Any, ...]]:
    """What a run recorded, without ids and times: each span's name, kind, parent's
    name, status and attributes, in start order."""
    names = {s.context.span_id: s.name for s in spans}
    return [
        (
            s.name,
            s.kind,
            names.get(parent_of(s) or 0),
            s.status.status_code,
            sorted(attrs(s).items()),
        )
        for s in by_name(spans, "")
    ]


def _prov_shape(spans: list[ReadableSpan]) -> list[tuple[str, str, str]]:
    """The run's provenance with trace and span ids replaced by span names (numbered in
    start order), other hex digests and times blanked: equal for equal runs.  Bundles are
    left out: they only digest the rest, ids and times included."""
    labels = {f"{s.context.trace_id:032x}": "trace" for s in spans}
    labels |= {
        f"{s.context.span_id:016x}": f"{s.name}#{i}" for i, s in enumerate(by_name(spans, ""))
    }
    triples: Triples = prov(spans)

    def normal(term: str) -> str:
        term = re.sub(r'"[^"]*"\^\^<http://www\.w3\.org/2001/XMLSchema#dateTime>', "TIME", term)
        return re.sub(r"[0-9a-f]{16,}", lambda m: labels.get(m.group(), "HEX"), term)

    bundles = {s for s, p, o in triples if p == RDF_TYPE and o == P.Bundle}
    return sorted({(normal(s), normal(p), normal(o)) for s, p, o in triples if s not in bundles})


def _read_until(stream: Iterator[Any], kind: str, count: int) -> None:
    """Read ``stream`` up to its ``count``-th item of type ``kind``."""
    seen = 0
    for item in stream:
        if type(item).__name__ == kind:
            seen += 1
            if seen == count:
                return
    raise AssertionError(f"the run ended before {count} x {kind}")


def _stop_early(agent: ToolCallingAgent, kind: str, count: int) -> tuple[str | None, int]:
    """Read ``run(stream=True)`` up to an item, then close it: what ``close()`` raised
    (smolagents' ``_run_stream`` raises ``RuntimeError`` when closed mid-step) and how
    many steps the agent's memory holds."""
    stream = agent.run("Weather in Paris?", stream=True)
    _read_until(stream, kind, count)
    try:
        stream.close()
    except RuntimeError as exc:
        return f"RuntimeError: {exc}", len(agent.memory.steps)
    return None, len(agent.memory.steps)


# --- tests ---------------------------------------------------------------------------
def test_parallel_tool_calls_share_one_iteration(instrumented: InMemorySpanExporter) -> None:
    """smolagents runs a step's tool calls in a thread pool: each must still be a child of
    the step, with its own call id and arguments, and the next step uses both results."""
    cities = {"c1": "Paris", "c2": "Lyon"}
    both = ChatMessage(
        role=MessageRole.ASSISTANT,
        content="Both cities at once.",
        tool_calls=[
            ChatMessageToolCall(
                id=call_id,
                type="function",
                function=ChatMessageToolCallFunction(
                    name="get_weather", arguments=json.dumps({"city": city})
                ),
            )
            for call_id, city in cities.items()
        ],
        token_usage=TokenUsage(input_tokens=11, output_tokens=7),
    )
    _agent([both, _answer_step()]).run("Paris and Lyon?")
    spans = list(instrumented.get_finished_spans())
    first = by_name(spans, "iteration")[0]
    tools = by_name(spans, "execute_tool")
    assert len(tools) == 2 and all(parent_of(t) == first.context.span_id for t in tools)
    assert {
        attrs(t)[sc.GEN_AI_TOOL_CALL_ID]: json.loads(attrs(t)[sc.OTEL_PROV_ARGUMENTS])["city"]
        for t in tools
    } == cities
    assert {attrs(t)[sc.OTEL_PROV_OBSERVATION] for t in tools} == {
        f"18 °C and light rain in {city}" for city in cities.values()
    }
    triples = prov(spans)
    (second,) = [
        i for i in subjects(triples, O.Iteration) if value(triples, i, O.iterationNumber) == "2"
    ]
    used = {o for s, p, o in triples if s == second and p == P.used}
    assert used == {
        f"{activity_iri(t.context.trace_id, t.context.span_id)[:-1]}:observation>" for t in tools
    }


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
    assert attrs(session)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather",)  # not final_answer

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
    declared = [o for s, p, o in triples if s == prov_session and p == O.declaredTool]
    assert declared == [tool_iri("get_weather")]


@pytest.mark.parametrize("content", ["SPAN_ONLY", ""])
def test_the_agent_span_speaks_the_genai_conventions(
    instrumented: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """A GenAI-only backend reads the run off the agent span: its provider (its model's:
    here smolagents' OpenAIModel, on a local scripted OpenAI server) always, the question
    and answer as messages under the content opt-in."""
    from tests.conformance import smolagents_agent
    from tests.conformance.openai_server import ScriptedOpenAI
    from tests.self_traced import scenario

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    with ScriptedOpenAI() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        smolagents_agent.build(stream=False).run(scenario.QUESTION)
    (session,) = by_name(list(instrumented.get_finished_spans()), "invoke_agent")
    messages = said(scenario.QUESTION, scenario.ANSWER) if content else (None, None)
    assert genai_messages(session) == (*messages, "openai")


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


def test_verify_passes_the_tool_gate_only_for_a_tool_call_that_succeeded(
    tmp_path: Path,
) -> None:
    """The declared tools end to end: instrumented runs into a store, then ``otel-prov
    verify``.  ``final_answer`` is a tool in smolagents but not a declared one: answering
    through it is no tool result (``guessed`` fails the gate), and an agent given no other
    tool is not gated at all (``chat``)."""
    spans = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(spans))
    store = otel_prov.exporters.OxigraphStoreExporter(tmp_path / "store")
    provider.add_span_processor(otel_prov.ProvSpanProcessor(store, blob_dir=tmp_path / "blobs"))
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        assert _agent([_tool_step(), _answer_step()]).run("fetched") == ANSWER
        failed = _agent([_tool_step(args='{"city": "Atlantis"}'), _answer_step("Not found.")])
        assert failed.run("failed") == "Not found."  # the agent went on after the error
        assert _agent([_answer_step("Sunny, surely.")]).run("guessed") == "Sunny, surely."
        chat = ToolCallingAgent(
            tools=[], model=ScriptedModel([_answer_step("Hi.")]), name="chat", verbosity_level=0
        )
        assert chat.run("chat") == "Hi."
    finally:
        instrumentor.uninstrument()
    provider.shutdown()

    result = run_cli("verify", "--all", "--store", str(tmp_path / "store"), "--format", "json")
    assert result.returncode == 1, result.stderr  # two sessions fail their gate
    checks = {check["session"]: check for check in json.loads(result.stdout)}
    sessions = {
        attrs(s)[sc.OTEL_PROV_QUESTION]: activity_iri(s.context.trace_id, s.context.span_id)[1:-1]
        for s in by_name(list(spans.get_finished_spans()), "invoke_agent")
    }
    assert sorted(checks) == sorted(sessions.values())
    gate = {
        question: checks[iri]["gates"]["tool_use_verified"] for question, iri in sessions.items()
    }
    assert gate == {"fetched": True, "failed": False, "guessed": False, "chat": None}
    for question, tried in (
        ("failed", "1 call(s) of them, none succeeded"),
        ("guessed", "no call of them"),
    ):
        (problem,) = checks[sessions[question]]["problems"]
        assert f"declared get_weather and made {tried}" in problem
    assert checks[sessions["fetched"]]["ok"] and checks[sessions["chat"]]["ok"]


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
    assert all(p is not b for p, b in zip(patched[:5], before[:5], strict=True))
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
    assert _streaming_agent().run("Weather in Paris?") == ANSWER
    assert len(list(_streaming_agent().run("Weather in Paris?", stream=True))) > 10
    assert exporter.get_finished_spans() == ()


# --- streaming model calls (stream_outputs=True) --------------------------------------
@pytest.mark.parametrize("stream", [False, True], ids=["run", "run-stream"])
def test_streamed_model_call_records_what_generate_records(
    instrumented: InMemorySpanExporter, stream: bool
) -> None:
    streamed = agglomerate_stream_deltas(_deltas(_tool_step()))  # the script streams right
    assert (streamed.content, streamed.token_usage) == (THOUGHT, TokenUsage(11, 7))
    assert [(c.id, c.function.name, c.function.arguments) for c in streamed.tool_calls or []] == [
        ("call_1", "get_weather", ARGS)
    ]
    assert _agent([_tool_step(), _answer_step()]).run("Weather in Paris?") == ANSWER
    generated = list(instrumented.get_finished_spans())
    instrumented.clear()

    model = StreamingModel([_tool_step(), _answer_step()])
    agent = _streaming_agent(model)
    if stream:
        items = list(agent.run("Weather in Paris?", stream=True))
        assert sum(type(i).__name__ == "ChatMessageStreamDelta" for i in items) > 10
        assert getattr(items[-1], "output", None) == ANSWER
    else:
        assert agent.run("Weather in Paris?") == ANSWER
    spans = list(instrumented.get_finished_spans())

    assert _shape(spans) == _shape(generated)
    assert _prov_shape(spans) == _prov_shape(generated)
    first = attrs(by_name(spans, "iteration")[0])
    assert first[sc.OTEL_PROV_THOUGHT] == THOUGHT
    assert first[sc.OTEL_PROV_ARGUMENTS] == ARGS  # the streamed text, not re-dumped
    assert attrs(by_name(spans, "execute_tool")[0])[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    models = by_name(spans, "chat")
    assert [attrs(m)[sc.GEN_AI_USAGE_OUTPUT_TOKENS] for m in models] == [7, 7]  # 0 + 7
    # The span runs from the request to the last delta, not to the end of the step.
    (call,) = by_name(spans, "execute_tool")
    assert models[0].start_time is not None and models[0].end_time is not None
    assert models[0].start_time <= model.requested_at[0]
    assert model.yielded_at[0] < models[0].end_time <= (call.start_time or 0)
    assert models[1].end_time is not None and models[1].end_time >= model.yielded_at[-1]


def test_stream_that_raises_fails_the_model_call(instrumented: InMemorySpanExporter) -> None:
    class CutStream(StreamingModel):  # defined after instrument(): wrapped at run start
        def generate_stream(
            self, messages: Any, **kwargs: Any
        ) -> Generator[ChatMessageStreamDelta, None, None]:
            yield from _deltas(_tool_step())[:3]
            raise ConnectionError("stream cut")

    with pytest.raises(Exception, match="stream cut") as raised:
        _streaming_agent(CutStream([])).run("Weather in Paris?")
    assert type(raised.value).__name__ == "AgentGenerationError"
    spans = list(instrumented.get_finished_spans())
    (model,) = by_name(spans, "chat")
    assert model.name == "chat scripted-1"
    assert model.status.status_code is StatusCode.ERROR
    assert model.status.description == "stream cut"
    assert attrs(model)[sc.ERROR_TYPE] == "ConnectionError"
    assert [e.name for e in model.events] == ["exception"]
    assert sc.GEN_AI_USAGE_INPUT_TOKENS not in attrs(model)  # no usage of a broken stream
    (iteration,) = by_name(spans, "iteration")
    assert parent_of(model) == iteration.context.span_id
    assert iteration.status.status_code is StatusCode.ERROR
    (session,) = by_name(spans, "invoke_agent")
    assert session.status.status_code is StatusCode.ERROR
    (prov_model,) = subjects(prov(spans), O.ModelCall)
    assert value(prov(spans), prov_model, O.errorType) == "ConnectionError"


def test_override_streaming_through_super_is_one_model_call(
    instrumented: InMemorySpanExporter,
) -> None:
    class Relay(StreamingModel):  # wrapped at run start, its parent at instrument()
        def generate_stream(
            self, messages: Any, **kwargs: Any
        ) -> Generator[ChatMessageStreamDelta, None, None]:
            yield from super().generate_stream(messages, **kwargs)

    assert _streaming_agent(Relay([_tool_step(), _answer_step()])).run("Weather?") == ANSWER
    models = by_name(list(instrumented.get_finished_spans()), "chat")
    assert len(models) == 2
    assert all(attrs(m)[sc.GEN_AI_USAGE_INPUT_TOKENS] == 11 for m in models)


# (item type, how many of them) the consumer reads before closing run(stream=True)
_STOPS = {
    "in-model-stream": ("ChatMessageStreamDelta", 3),
    "at-tool-call": ("ToolCall", 1),
    "at-step-output": ("ActionOutput", 1),
    "between-steps": ("ActionStep", 1),
    "at-final-answer": ("FinalAnswerStep", 1),
}


@pytest.mark.parametrize("stop", list(_STOPS))
def test_stopping_a_streamed_run_early_ends_every_span(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter], stop: str
) -> None:
    kind, count = _STOPS[stop]
    bare = _stop_early(_streaming_agent(), kind, count)
    provider, exporter = memory_provider
    open_spans = OpenSpans()
    provider.add_span_processor(open_spans)
    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        before = otel_context.get_current()
        traced = _stop_early(_streaming_agent(), kind, count)
        assert otel_context.get_current() == before
        assert _patches._ITERATION.get() is None
        assert _patches._ACTIVE.get() == frozenset()
    finally:
        instrumentor.uninstrument()
    assert traced == bare  # the same close() outcome and agent memory as uninstrumented
    assert open_spans.names == {}  # every span started has ended

    spans = list(exporter.get_finished_spans())
    by_id = {s.context.span_id: s for s in spans}
    for span in spans:
        parent = by_id.get(parent_of(span) or 0)
        if parent is not None:
            assert (span.end_time or 0) <= (parent.end_time or 0), span.name
    closed = {
        s.name
        for s in spans
        if s.status.status_code is StatusCode.ERROR
        and attrs(s)[sc.ERROR_TYPE] == "GeneratorExit"
        and s.status.description == "closed early: the consumer stopped iterating"
        and not s.events
    }
    assert not [
        s for s in spans if s.status.status_code is StatusCode.ERROR and s.name not in closed
    ]
    (session,) = by_name(spans, "invoke_agent")
    iterations = by_name(spans, "iteration")
    if stop == "at-final-answer":  # the run was over: nothing is cut short
        assert closed == set()
        assert attrs(session)[sc.OTEL_PROV_ANSWER] == ANSWER
        assert len(iterations) == 2
    elif stop in ("at-step-output", "between-steps"):  # the first step was complete
        assert closed == {"invoke_agent weather"}
        assert [i.name for i in iterations] == ["iteration 1"]
    else:
        assert closed >= {"invoke_agent weather", "iteration 1"}
        (model,) = by_name(spans, "chat")
        streaming = stop == "in-model-stream"
        assert ("chat scripted-1" in closed) is streaming
        assert (sc.GEN_AI_USAGE_INPUT_TOKENS in attrs(model)) is not streaming
    (prov_session,) = subjects(prov(spans), O.AgentSession)
    assert value(prov(spans), prov_session, O.errorType) == (
        None if stop == "at-final-answer" else "GeneratorExit"
    )


def test_stream_closed_unread_still_ends_its_span(instrumented: InMemorySpanExporter) -> None:
    model = StreamingModel([_tool_step(), _tool_step()])
    model.generate_stream([]).close()
    stream = model.generate_stream([])
    del stream
    models = by_name(list(instrumented.get_finished_spans()), "chat")
    assert len(models) == 2
    assert all(attrs(m)[sc.ERROR_TYPE] == "GeneratorExit" for m in models)
    assert trace.get_current_span() is trace.INVALID_SPAN


def test_odd_streams_never_break_their_consumer(instrumented: InMemorySpanExporter) -> None:
    no_usage = [ChatMessageStreamDelta(content=piece) for piece in _pieces(THOUGHT)]
    no_index = [  # smolagents' agglomerate_stream_deltas refuses a tool call without index
        ChatMessageStreamDelta(
            tool_calls=[ChatMessageToolCallStreamDelta(id="call_1", type="function")],
            token_usage=TokenUsage(input_tokens=3, output_tokens=1),
        )
    ]
    model = PreparedStream([no_usage, no_index])
    assert list(model.generate_stream([])) == no_usage
    assert list(model.generate_stream([])) == no_index
    models = by_name(list(instrumented.get_finished_spans()), "chat")
    assert len(models) == 2
    for span in models:
        assert span.status.status_code is StatusCode.UNSET
        assert sc.GEN_AI_USAGE_INPUT_TOKENS not in attrs(span)  # unknown, not 0
