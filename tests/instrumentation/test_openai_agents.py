"""OpenAIAgentsInstrumentor: real ``Runner.run`` / ``run_sync`` offline, spans and provenance.

The model is scripted (``shared/docs/FRAMEWORKS.md``): a ``Model`` that returns prepared
Responses items and opens its own ``generation_span``, as the SDK's models do.

Only our processor is registered in these tests (``set_trace_processors``): OpenAI's
default exporter would try to upload every trace to api.openai.com from a background
thread (there is no network and no key here), and nothing may leave the machine.  The
instrumentor itself uses ``add_trace_processor`` and keeps OpenAI's exporter.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pyoxigraph
import pytest
from agents import (
    Agent,
    RunConfig,
    RunContextWrapper,
    Runner,
    UserError,
    WebSearchTool,
    function_tool,
    handoff,
)
from agents.items import ModelResponse
from agents.tracing import (
    TracingProcessor,
    get_trace_provider,
    set_trace_processors,
)
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
    ResponseReasoningItem,
)
from openai.types.responses.response_reasoning_item import Summary
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import BaseModel

import otel_prov
from otel_prov import semconv as sc
from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor
from otel_prov.instrumentation.openai_agents._processor import _ns
from otel_prov.processing._assembler import SessionAssembler
from otel_prov.prov._approval_triples import person_iri
from otel_prov.prov._bundle import bundles_in, session_content
from otel_prov.prov._iris import activity_iri, tool_iri
from otel_prov.prov._rdf import literal
from otel_prov.prov._span_record import SpanRecord, record_from_span
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.instrumentation.scripted_openai import ScriptedModel, ScriptedProvider
from tests.instrumentation.span_helpers import (
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
def _tool_step(call_id: str = "call_1", args: str = ARGS, thought: str = THOUGHT) -> list[Any]:
    return [
        ResponseReasoningItem(
            id="rs_1", type="reasoning", summary=[Summary(text=thought, type="summary_text")]
        ),
        ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name="get_weather", arguments=args
        ),
    ]


def _answer_step(text: str = ANSWER) -> list[Any]:
    return [
        ResponseOutputMessage(
            id="msg_1",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
    ]


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    if city == "Atlantis":
        raise ValueError("no such city")
    return f"18 °C and light rain in {city}"


def _config(steps: list[list[Any]], *, turn_spans: bool = True) -> RunConfig:
    return RunConfig(
        model_provider=ScriptedProvider(ScriptedModel(steps)),
        tracing={"include_task_and_turn_spans": turn_spans},
    )


AGENT = Agent(name="weather", instructions="Answer with the weather.", tools=[get_weather])


@function_tool(name_override="get_weather")
async def slow_weather(city: str) -> str:
    """The weather in a city; Oslo answers last."""
    await asyncio.sleep(0.05 if city == "Oslo" else 0)
    return f"fine in {city}"


PARALLEL_AGENT = Agent(name="weather", tools=[slow_weather])


# --- fixtures ------------------------------------------------------------------------
class Recorder(TracingProcessor):
    """Keeps the SDK spans, to compare times and ids with ours."""

    def __init__(self) -> None:
        self.spans: list[Any] = []

    def on_trace_start(self, trace: Any) -> None: ...
    def on_trace_end(self, trace: Any) -> None: ...
    def on_span_start(self, span: Any) -> None: ...

    def on_span_end(self, span: Any) -> None:
        self.spans.append(span)

    def shutdown(self) -> None: ...
    def force_flush(self) -> None: ...


@pytest.fixture
def instrumented(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> Iterator[tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor]]:
    provider, exporter = memory_provider
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    recorder = Recorder()
    # Ours only (plus a recorder): see the module docstring.
    set_trace_processors([instrumentor.processor, recorder])  # type: ignore[list-item]
    yield exporter, recorder, instrumentor
    instrumentor.uninstrument()
    set_trace_processors([])


def _assert_success_spans(spans: list[ReadableSpan]) -> None:
    (session,) = by_name(spans, "invoke_agent")
    iterations = by_name(spans, "iteration")
    (tool,) = by_name(spans, "execute_tool")
    models = by_name(spans, "chat")
    assert len({s.context.trace_id for s in spans}) == 1
    assert session.name == "invoke_agent weather"
    assert attrs(session)[sc.GEN_AI_OPERATION_NAME] == "invoke_agent"
    assert attrs(session)[sc.GEN_AI_AGENT_NAME] == "weather"
    assert attrs(session)[sc.OTEL_PROV_QUESTION] == "Weather in Paris?"
    assert attrs(session)[sc.OTEL_PROV_ANSWER] == ANSWER
    assert attrs(session)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather",)

    assert [attrs(i)[sc.OTEL_PROV_ITERATION_NUMBER] for i in iterations] == [1, 2]
    assert all(parent_of(i) == session.context.span_id for i in iterations)
    first, second = (attrs(i) for i in iterations)
    assert first[sc.OTEL_PROV_THOUGHT] == THOUGHT
    assert first[sc.OTEL_PROV_ACTION] == "get_weather"
    assert first[sc.OTEL_PROV_ARGUMENTS] == ARGS
    assert second[sc.OTEL_PROV_ACTION] == "final_answer"
    assert json.loads(second[sc.OTEL_PROV_ARGUMENTS]) == {"answer": ANSWER}

    assert tool.name == "execute_tool get_weather"
    assert parent_of(tool) == iterations[0].context.span_id
    tool_attrs = attrs(tool)
    assert tool_attrs[sc.GEN_AI_TOOL_NAME] == "get_weather"
    assert tool_attrs[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert tool_attrs[sc.OTEL_PROV_ARGUMENTS] == ARGS
    assert tool_attrs[sc.OTEL_PROV_OBSERVATION] == "18 °C and light rain in Paris"
    assert sc.GEN_AI_TOOL_CALL_ARGUMENTS not in tool_attrs  # GenAI content is opt-in
    assert tool.status.status_code is not StatusCode.ERROR

    assert [m.name for m in models] == ["chat scripted-1", "chat scripted-1"]
    assert [parent_of(m) for m in models] == [i.context.span_id for i in iterations]
    for model in models:
        assert model.kind is SpanKind.CLIENT
        assert attrs(model)[sc.GEN_AI_REQUEST_MODEL] == "scripted-1"
        assert attrs(model)[sc.GEN_AI_USAGE_INPUT_TOKENS] == 11
        assert attrs(model)[sc.GEN_AI_USAGE_OUTPUT_TOKENS] == 7
    # Iterations cover their children.
    for iteration in iterations:
        children = [s for s in spans if parent_of(s) == iteration.context.span_id]
        assert children
        assert iteration.start_time <= min(c.start_time or 0 for c in children)
        assert iteration.end_time >= max(c.end_time or 0 for c in children)


def _assert_success_prov(spans: list[ReadableSpan]) -> None:
    triples = prov(spans)
    (session,) = subjects(triples, O.AgentSession)
    iterations = subjects(triples, O.Iteration)
    assert len(iterations) == 2
    numbered = {int(value(triples, i, O.iterationNumber) or 0): i for i in iterations}
    assert (numbered[2], P.wasInformedBy, numbered[1]) in triples
    (call,) = subjects(triples, O.ToolCall)
    assert (call, O.status, literal("ok")) in triples
    assert value(triples, call, O.toolCallId) == "call_1"
    (arguments,) = [o for s, p, o in triples if s == call and p == P.used]
    assert value(triples, arguments, P.value) == ARGS
    (observation,) = [s for s, p, o in triples if p == P.wasGeneratedBy and o == call]
    assert (observation, RDF_TYPE, O.Observation) in triples
    assert value(triples, observation, P.value) == "18 °C and light rain in Paris"
    assert (numbered[2], P.used, observation) in triples
    (answer,) = subjects(triples, O.Answer)
    assert value(triples, answer, P.value) == ANSWER
    assert (answer, P.wasGeneratedBy, session) in triples
    declared = [o for s, p, o in triples if s == session and p == O.declaredTool]
    assert declared == [tool_iri("get_weather")]


# --- tests ---------------------------------------------------------------------------
@pytest.mark.parametrize("turn_spans", [True, False], ids=["turn-spans", "inferred-turns"])
def test_tool_call_then_answer(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    turn_spans: bool,
) -> None:
    exporter, recorder, _ = instrumented
    result = Runner.run_sync(
        AGENT,
        "Weather in Paris?",
        run_config=_config([_tool_step(), _answer_step()], turn_spans=turn_spans),
    )
    assert result.final_output == ANSWER
    spans = list(exporter.get_finished_spans())
    _assert_success_spans(spans)
    _assert_success_prov(spans)
    # The SDK's own times, not the moment our processor saw them.
    (sdk_function,) = [s for s in recorder.spans if s.span_data.type == "function"]
    (tool,) = by_name(spans, "execute_tool")
    assert tool.start_time == _ns(sdk_function.started_at)
    assert tool.end_time == _ns(sdk_function.ended_at)
    (root,) = [s for s in spans if s.parent is None]
    assert root.name == "Agent workflow"
    assert sc.GEN_AI_OPERATION_NAME not in attrs(root)  # a plain span, not a second session


def test_async_run(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented

    async def main() -> Any:
        return await Runner.run(
            AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()])
        )

    assert asyncio.run(main()).final_output == ANSWER
    spans = list(exporter.get_finished_spans())
    _assert_success_spans(spans)
    _assert_success_prov(spans)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync-tool", "async-tool"])
def test_what_a_tool_does_is_traced_under_its_call(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    asynchronous: bool,
) -> None:
    """A tool's own work (an HTTP call, an MCP call, traced by their instrumentations) is
    a child of its ``execute_tool`` span, in the run's trace, as it is in any other
    framework: the call's span is the current OTel span while the SDK runs the tool, and
    is no longer once the call has ended."""
    exporter, _, _ = instrumented
    tracer = memory_provider[0].get_tracer("a-client-library")

    def weather(city: str) -> str:
        with tracer.start_as_current_span("GET /weather"):
            return f"fine in {city}"

    async def weather_async(city: str) -> str:
        await asyncio.sleep(0)
        return weather(city)

    tool = function_tool(weather_async if asynchronous else weather, name_override="get_weather")
    agent = Agent(name="weather", tools=[tool])
    Runner.run_sync(agent, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    spans = list(exporter.get_finished_spans())
    (call,) = by_name(spans, "execute_tool")
    (inner,) = by_name(spans, "GET /weather")
    assert inner.context.trace_id == call.context.trace_id
    assert parent_of(inner) == call.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN  # nothing left current after it


def test_failing_tool_is_a_failed_call_and_the_run_goes_on(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    args = '{"city": "Atlantis"}'
    result = Runner.run_sync(
        AGENT,
        "Weather in Atlantis?",
        run_config=_config([_tool_step(args=args), _answer_step("I could not find it.")]),
    )
    assert result.final_output == "I could not find it."
    spans = list(exporter.get_finished_spans())
    (tool,) = by_name(spans, "execute_tool")
    assert tool.status.status_code is StatusCode.ERROR
    assert tool.status.description and "Error running tool" in tool.status.description
    assert attrs(tool)[sc.ERROR_TYPE] == "_OTHER"
    assert attrs(tool)[sc.OTEL_PROV_ARGUMENTS] == args
    assert attrs(tool)[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    (session,) = by_name(spans, "invoke_agent")
    assert session.status.status_code is not StatusCode.ERROR
    assert len(by_name(spans, "iteration")) == 2

    triples = prov(spans)
    (call,) = subjects(triples, O.ToolCall)
    assert (call, O.status, literal("error")) in triples
    assert value(triples, call, O.errorType) == "_OTHER"
    assert not [s for s, p, o in triples if p == P.wasGeneratedBy and o == call]
    assert len(subjects(triples, O.Answer)) == 1


def test_parallel_calls_get_their_own_call_ids(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    # Oslo is chosen first but finishes last: ids follow the arguments, not the order.
    calls = [("call_b", '{"city": "Oslo"}'), ("call_a", '{"city": "Paris"}')]
    step = _tool_step(call_id=calls[0][0], args=calls[0][1])
    step.append(
        ResponseFunctionToolCall(
            type="function_call", call_id=calls[1][0], name="get_weather", arguments=calls[1][1]
        )
    )
    Runner.run_sync(PARALLEL_AGENT, "Oslo and Paris?", run_config=_config([step, _answer_step()]))
    spans = list(exporter.get_finished_spans())
    tools = by_name(spans, "execute_tool")
    assert len(tools) == 2
    ids = {attrs(t)[sc.OTEL_PROV_ARGUMENTS]: attrs(t)[sc.GEN_AI_TOOL_CALL_ID] for t in tools}
    assert ids == {'{"city": "Oslo"}': "call_b", '{"city": "Paris"}': "call_a"}
    first = attrs(by_name(spans, "iteration")[0])
    assert first[sc.OTEL_PROV_ACTION] == "get_weather, get_weather"
    assert sc.OTEL_PROV_ARGUMENTS not in first  # several calls: the tool spans carry them
    triples = prov(spans)
    (second,) = [
        i for i in subjects(triples, O.Iteration) if value(triples, i, O.iterationNumber) == "2"
    ]
    used = [o for s, p, o in triples if s == second and p == P.used]
    assert len(used) == 2  # both observations inform the next step


def test_concurrent_runs_in_threads_are_separate_traces(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    cities = ["Paris", "Oslo"]
    barrier = threading.Barrier(len(cities))
    errors: list[BaseException] = []

    def run(city: str) -> None:
        try:
            barrier.wait(timeout=10)
            steps = [_tool_step(call_id=f"call_{city}", args=json.dumps({"city": city}))]
            steps.append(_answer_step(f"Weather in {city}: fine."))
            Runner.run_sync(AGENT, f"Weather in {city}?", run_config=_config(steps))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(city,)) for city in cities]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    spans = list(exporter.get_finished_spans())
    traces: dict[int, list[ReadableSpan]] = {}
    for span in spans:
        traces.setdefault(span.context.trace_id, []).append(span)
    assert len(traces) == 2
    seen = set()
    for trace_spans in traces.values():
        (session,) = by_name(trace_spans, "invoke_agent")
        city = str(attrs(session)[sc.OTEL_PROV_QUESTION]).removeprefix("Weather in ")[:-1]
        seen.add(city)
        assert attrs(session)[sc.OTEL_PROV_ANSWER] == f"Weather in {city}: fine."
        (tool,) = by_name(trace_spans, "execute_tool")
        assert attrs(tool)[sc.GEN_AI_TOOL_CALL_ID] == f"call_{city}"
        assert city in str(attrs(tool)[sc.OTEL_PROV_OBSERVATION])
        triples = prov(trace_spans)
        assert len(subjects(triples, O.AgentSession)) == 1
        assert len(subjects(triples, O.Iteration)) == 2
    assert seen == set(cities)


def test_content_switch_off_keeps_structure_only(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_PROV_CAPTURE_CONTENT", "false")
    exporter, _, _ = instrumented
    Runner.run_sync(AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    spans = list(exporter.get_finished_spans())
    content = {
        sc.OTEL_PROV_QUESTION,
        sc.OTEL_PROV_ANSWER,
        sc.OTEL_PROV_THOUGHT,
        sc.OTEL_PROV_ARGUMENTS,
        sc.OTEL_PROV_OBSERVATION,
    }
    assert all(not content & set(attrs(s)) for s in spans)
    assert [attrs(i)[sc.OTEL_PROV_ACTION] for i in by_name(spans, "iteration")] == [
        "get_weather",
        "final_answer",
    ]


def test_genai_opt_in_adds_tool_call_content(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    exporter, _, _ = instrumented
    Runner.run_sync(AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    (tool,) = by_name(list(exporter.get_finished_spans()), "execute_tool")
    assert attrs(tool)[sc.GEN_AI_TOOL_CALL_ARGUMENTS] == ARGS
    assert attrs(tool)[sc.GEN_AI_TOOL_CALL_RESULT] == "18 °C and light rain in Paris"


@pytest.mark.parametrize("content", ["SPAN_ONLY", ""])
def test_the_agent_span_speaks_the_genai_conventions(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    monkeypatch: pytest.MonkeyPatch,
    content: str,
) -> None:
    """A GenAI-only backend reads the run off the agent span: its provider always, the
    question and answer as messages under the content opt-in."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    exporter, _, _ = instrumented
    Runner.run_sync(AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    (session,) = by_name(list(exporter.get_finished_spans()), "invoke_agent")
    messages = said("Weather in Paris?", ANSWER) if content else (None, None)
    assert genai_messages(session) == (*messages, "openai")


def test_uninstrument_leaves_no_spans(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    instrumentor = OpenAIAgentsInstrumentor()
    before = _registered()
    instrumentor.instrument(tracer_provider=provider)
    processor = instrumentor.processor
    assert processor is not None and processor in _registered()
    # Leave OpenAI's exporter out of this run (no network): ours alone, then uninstrument.
    set_trace_processors([processor])  # type: ignore[list-item]
    Runner.run_sync(AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    assert exporter.get_finished_spans()  # instrumented: spans
    exporter.clear()
    instrumentor.uninstrument()
    assert processor not in _registered()
    # Even if the SDK kept it (no public removal API), it is inert.
    set_trace_processors([processor])  # type: ignore[list-item]
    Runner.run_sync(AGENT, "Weather in Paris?", run_config=_config([_tool_step(), _answer_step()]))
    assert exporter.get_finished_spans() == ()
    set_trace_processors(list(before))


def test_instrument_keeps_openai_exporter(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, _ = memory_provider
    before = _registered()
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        after = _registered()
        assert after[: len(before)] == before  # added beside, nothing replaced
        assert after[-1] is instrumentor.processor
        assert list(instrumentor.instrumentation_dependencies()) == ["openai-agents >= 0.20"]
    finally:
        instrumentor.uninstrument()
    assert _registered() == before


def _registered() -> tuple[Any, ...]:
    """The SDK's processor list (private, read for the test only)."""
    processors = get_trace_provider()._multi_processor._processors  # type: ignore[attr-defined]
    return tuple(processors)


# --- handoffs ----------------------------------------------------------------------
HANDOFF_ARGS = '{"reason":  "a billing question"}'  # exact string, odd spacing kept
HANDOFF_THOUGHT = "Orders are billing's business."
ORDER_ARGS = '{"order":  "42"}'
ORDER_ANSWER = "Order 42 shipped yesterday."


class Escalation(BaseModel):
    reason: str


@function_tool
def lookup_order(order: str) -> str:
    """The state of an order."""
    return f"order {order} shipped yesterday"


@function_tool(name_override="lookup_order", failure_error_function=None)
def broken_lookup_order(order: str) -> str:
    """The state of an order; its database is down, and the error ends the run."""
    raise ValueError("order database is down")


def _triage(tool: Any) -> tuple[Agent[Any], list[Escalation]]:
    """A triage agent that hands off to ``billing``; the list collects what billing got."""
    received: list[Escalation] = []

    async def on_handoff(context: RunContextWrapper[Any], escalation: Escalation) -> None:
        received.append(escalation)

    billing = Agent(name="billing", instructions="Answer about orders.", tools=[tool])
    triage = Agent(
        name="triage",
        instructions="Route the question.",
        handoffs=[handoff(billing, on_handoff=on_handoff, input_type=Escalation)],
    )
    return triage, received


def _handoff_steps() -> list[list[Any]]:
    """Triage hands off; billing looks the order up, then answers."""
    return [
        [
            ResponseReasoningItem(
                id="rs_h",
                type="reasoning",
                summary=[Summary(text=HANDOFF_THOUGHT, type="summary_text")],
            ),
            ResponseFunctionToolCall(
                type="function_call",
                call_id="call_h",
                name="transfer_to_billing",
                arguments=HANDOFF_ARGS,
            ),
        ],
        [
            ResponseFunctionToolCall(
                type="function_call", call_id="call_o", name="lookup_order", arguments=ORDER_ARGS
            )
        ],
        _answer_step(ORDER_ANSWER),
    ]


def _iri(span: ReadableSpan) -> str:
    return activity_iri(span.context.trace_id, span.context.span_id)


def _handoff_spans(
    spans: list[ReadableSpan],
) -> tuple[ReadableSpan, ReadableSpan, ReadableSpan, ReadableSpan]:
    """(triage session, its iteration that chose the handoff, the handoff, billing session),
    with the parentage and links that make billing a sub-session started by the handoff."""
    assert len({s.context.trace_id for s in spans}) == 1
    (root,) = [s for s in spans if s.parent is None]
    triage, billing = by_name(spans, "invoke_agent")
    assert (triage.name, billing.name) == ("invoke_agent triage", "invoke_agent billing")
    assert attrs(triage)[sc.GEN_AI_AGENT_NAME] == "triage"
    assert attrs(billing)[sc.GEN_AI_AGENT_NAME] == "billing"
    assert parent_of(triage) == root.context.span_id
    (chose,) = [i for i in by_name(spans, "iteration") if parent_of(i) == triage.context.span_id]
    (moved,) = by_name(spans, "execute_tool transfer_to_billing")
    assert parent_of(moved) == chose.context.span_id
    assert parent_of(billing) == moved.context.span_id
    assert [link.context.span_id for link in billing.links] == [moved.context.span_id]
    # The SDK's order: the handoff ends, then the new agent starts.
    assert (moved.end_time or 0) <= (billing.start_time or 0)
    return triage, chose, moved, billing


_WHO_STARTED = """
PREFIX prov: <http://www.w3.org/ns/prov#>
PREFIX oprov: <https://w3id.org/otel-prov/ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
SELECT ?session ?agent ?starter ?tool ?call ?action ?arguments ?from ?status WHERE {
  ?session a oprov:AgentSession ; oprov:status ?status ;
           prov:qualifiedStart [ a prov:Start ; prov:hadActivity ?starter ] ;
           prov:wasInformedBy ?starter ;
           prov:wasAssociatedWith [ a oprov:AIAgent ; rdfs:label ?agent ] .
  ?starter a oprov:ToolCall ; oprov:toolName ?tool ; oprov:toolCallId ?call ;
           oprov:partOf ?iteration ; prov:used ?chosen .
  ?chosen a oprov:Arguments ; prov:value ?arguments ; prov:wasGeneratedBy ?iteration .
  ?iteration a oprov:Iteration ; oprov:action ?action ; oprov:partOf ?outer .
  ?outer a oprov:AgentSession ; prov:wasAssociatedWith [ a oprov:AIAgent ; rdfs:label ?from ] .
}"""


def _who_started(triples: set[tuple[str, str, str]]) -> list[dict[str, str]]:
    """Sessions started by a tool call, read back with SPARQL from an in-memory store."""
    store = pyoxigraph.Store()
    store.load(
        "".join(f"{s} {p} {o} .\n" for s, p, o in triples).encode(),
        pyoxigraph.RdfFormat.N_TRIPLES,
    )
    solutions = store.query(_WHO_STARTED)
    assert isinstance(solutions, pyoxigraph.QuerySolutions)
    return [
        {v.value: term.value for v, term in zip(solutions.variables, row, strict=True) if term}
        for row in solutions
    ]


@pytest.mark.parametrize("turn_spans", [True, False], ids=["turn-spans", "inferred-turns"])
def test_handoff_starts_the_specialist_as_a_sub_session(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    turn_spans: bool,
) -> None:
    exporter, recorder, _ = instrumented
    triage_agent, received = _triage(lookup_order)
    result = Runner.run_sync(
        triage_agent,
        "Where is order 42?",
        run_config=_config(_handoff_steps(), turn_spans=turn_spans),
    )
    assert result.final_output == ORDER_ANSWER
    assert result.last_agent.name == "billing"
    assert received == [Escalation(reason="a billing question")]
    spans = list(exporter.get_finished_spans())
    triage, chose, moved, billing = _handoff_spans(spans)

    assert attrs(chose)[sc.OTEL_PROV_THOUGHT] == HANDOFF_THOUGHT
    assert attrs(chose)[sc.OTEL_PROV_ACTION] == "transfer_to_billing"
    assert attrs(chose)[sc.OTEL_PROV_ARGUMENTS] == HANDOFF_ARGS
    assert attrs(moved) == {
        sc.GEN_AI_OPERATION_NAME: "execute_tool",
        sc.GEN_AI_TOOL_NAME: "transfer_to_billing",
        sc.GEN_AI_TOOL_TYPE: "function",
        sc.GEN_AI_TOOL_CALL_ID: "call_h",
        sc.OTEL_PROV_ARGUMENTS: HANDOFF_ARGS,
        sc.OTEL_PROV_OBSERVATION: "billing",
        "openai_agents.handoff.from_agent": "triage",
        "openai_agents.handoff.to_agent": "billing",
    }
    # The answer is the specialist's; both sessions got the question.
    assert sc.OTEL_PROV_ANSWER not in attrs(triage)
    assert attrs(billing)[sc.OTEL_PROV_ANSWER] == ORDER_ANSWER
    assert attrs(triage)[sc.OTEL_PROV_QUESTION] == attrs(billing)[sc.OTEL_PROV_QUESTION]
    # Billing numbers its own iterations, and its tool call is its own.
    steps = [i for i in by_name(spans, "iteration") if parent_of(i) == billing.context.span_id]
    assert [attrs(i)[sc.OTEL_PROV_ITERATION_NUMBER] for i in steps] == [1, 2]
    (lookup,) = by_name(spans, "execute_tool lookup_order")
    assert parent_of(lookup) == steps[0].context.span_id
    assert attrs(lookup)[sc.GEN_AI_TOOL_CALL_ID] == "call_o"
    # Triage ended (late, see the next test) at the SDK's own end time for it.
    (sdk_triage,) = [s for s in recorder.spans if getattr(s.span_data, "name", "") == "triage"]
    assert triage.end_time == _ns(sdk_triage.ended_at)

    triples = prov(spans)
    (started,) = _who_started(triples)
    assert started == {
        "session": _iri(billing)[1:-1],
        "agent": "billing",
        "starter": _iri(moved)[1:-1],
        "tool": "transfer_to_billing",
        "call": "call_h",
        "action": "transfer_to_billing",
        "arguments": HANDOFF_ARGS,
        "from": "triage",
        "status": "ok",
    }
    (answer,) = subjects(triples, O.Answer)
    assert value(triples, answer, P.value) == ORDER_ANSWER
    assert [o for s, p, o in triples if s == answer and p == P.wasGeneratedBy] == [_iri(billing)]
    # One run, one outermost session: one bundle, of triage, holding billing's work.
    assert [session for _, session, _ in bundles_in(list(triples))] == [_iri(triage)]
    inside = {s for s, _, _ in session_content(triples, _iri(triage))}
    assert {_iri(billing), _iri(lookup), answer} <= inside


def test_handoff_in_a_run_that_fails_later(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    triage_agent, _ = _triage(broken_lookup_order)
    with pytest.raises(UserError, match="order database is down"):
        Runner.run_sync(
            triage_agent, "Where is order 42?", run_config=_config(_handoff_steps()[:2])
        )
    spans = list(exporter.get_finished_spans())
    triage, chose, moved, billing = _handoff_spans(spans)
    assert attrs(chose)[sc.OTEL_PROV_ACTION] == "transfer_to_billing"
    assert moved.status.status_code is not StatusCode.ERROR
    assert triage.status.status_code is not StatusCode.ERROR
    assert billing.status.status_code is StatusCode.ERROR
    assert "order database is down" in (billing.status.description or "")
    assert all(sc.OTEL_PROV_ANSWER not in attrs(s) for s in (triage, billing))
    (lookup,) = by_name(spans, "execute_tool lookup_order")
    assert lookup.status.status_code is StatusCode.ERROR

    triples = prov(spans)
    (started,) = _who_started(triples)
    assert (started["session"], started["starter"]) == (_iri(billing)[1:-1], _iri(moved)[1:-1])
    assert (started["agent"], started["from"], started["status"]) == ("billing", "triage", "error")
    assert "order database is down" in (value(triples, _iri(billing), O.errorMessage) or "")
    assert (_iri(moved), O.status, literal("ok")) in triples
    assert (_iri(lookup), O.status, literal("error")) in triples
    assert subjects(triples, O.Answer) == []
    assert [session for _, session, _ in bundles_in(list(triples))] == [_iri(triage)]


def test_handoff_whose_target_never_starts_still_ends_its_session(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, recorder, _ = instrumented
    billing = Agent(name="billing", tools=[lookup_order])
    triage_agent = Agent(
        name="triage",
        # Not a HandoffInputData: the SDK fails the handoff after choosing billing.
        handoffs=[handoff(billing, input_filter=lambda data: None)],  # type: ignore[arg-type,return-value]
    )
    with pytest.raises(UserError, match="Invalid input filter result"):
        Runner.run_sync(
            triage_agent, "Where is order 42?", run_config=_config(_handoff_steps()[:1])
        )
    spans = list(exporter.get_finished_spans())
    (triage,) = by_name(spans, "invoke_agent")  # ended, though nobody took over
    (sdk_triage,) = [s for s in recorder.spans if getattr(s.span_data, "name", "") == "triage"]
    assert triage.end_time == _ns(sdk_triage.ended_at)
    (moved,) = by_name(spans, "execute_tool transfer_to_billing")
    assert moved.status.status_code is StatusCode.ERROR
    triples = prov(spans)
    assert subjects(triples, O.AgentSession) == [_iri(triage)]
    assert (_iri(moved), O.status, literal("error")) in triples
    assert not [s for s, p, o in triples if p == P.wasGeneratedBy and o == _iri(moved)]


class EagerAssembly(SpanProcessor):
    """A provenance processor's session assembly, polled after every span end: its
    worker's worst timing for a session that ends before the one it handed off to."""

    def __init__(self) -> None:
        hour = 3600 * 10**9
        self._assembler = SessionAssembler(
            session_timeout_ns=hour,
            late_span_grace_ns=hour,
            idle_timeout_ns=0,
            knows_open_spans=True,
        )
        self._open: dict[int, Span] = {}
        self.groups: list[list[SpanRecord]] = []

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        self._open[span.context.span_id] = span

    def on_end(self, span: ReadableSpan) -> None:
        self._open.pop(span.context.span_id, None)
        now = time.time_ns()
        self._assembler.add(record_from_span(span), now)
        still_open = [record_from_span(s, ended=False) for s in self._open.values()]
        self.groups.extend(self._assembler.poll(now, still_open))


def test_live_processor_maps_a_run_with_a_handoff_as_one_session(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, _ = memory_provider
    assembly = EagerAssembly()
    provider.add_span_processor(assembly)
    triage_agent, _ = _triage(lookup_order)
    Runner.run_sync(triage_agent, "Where is order 42?", run_config=_config(_handoff_steps()))
    records = [otel_prov.map_spans(group) for group in assembly.groups]
    bundles = [bundle for record in records for bundle in bundles_in(record.triples)]
    assert len(bundles) == 1  # not one for triage and a second one for billing
    (record,) = [r for r in records if bundles_in(r.triples)]
    assert len(subjects(set(record.triples), O.AgentSession)) == 2
    assert len([s for s, p, _ in record.triples if p == P.qualifiedStart]) == 1  # billing's


class DeclaredWhenToolsStart(SpanProcessor):
    """The ``otel_prov.agent.tools`` of every open session when each tool span starts:
    what a provenance processor that maps a session still running would read."""

    def __init__(self) -> None:
        self._sessions: dict[int, Span] = {}
        self.seen: dict[str, dict[str, Any]] = {}

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if span.name.startswith("invoke_agent"):
            self._sessions[span.context.span_id] = span
        elif span.name.startswith("execute_tool"):
            self.seen[span.name] = {
                session.name: (session.attributes or {}).get(sc.OTEL_PROV_AGENT_TOOLS)
                for session in self._sessions.values()
            }

    def on_end(self, span: ReadableSpan) -> None:
        self._sessions.pop(span.context.span_id, None)


@pytest.mark.parametrize("turn_spans", [True, False], ids=["turn-spans", "inferred-turns"])
def test_sessions_declare_function_tools_not_hosted_tools_or_handoffs(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    turn_spans: bool,
) -> None:
    """Handoffs are not declared: ``transfer_to_billing`` passes the conversation on and
    fetches nothing the answer could rest on.  Nor is ``web_search``, which OpenAI would
    run: no span of its call could ever show it used."""
    exporter, recorder, _ = instrumented
    provider, _ = memory_provider
    live = DeclaredWhenToolsStart()
    provider.add_span_processor(live)

    async def noted(context: RunContextWrapper[Any], escalation: Escalation) -> None:
        """The handoff's input type needs a callback; the handoff test checks its input."""

    billing = Agent(name="billing", tools=[lookup_order])
    triage = Agent(
        name="triage",
        tools=[get_weather, WebSearchTool()],
        handoffs=[handoff(billing, on_handoff=noted, input_type=Escalation)],
    )
    result = Runner.run_sync(
        triage, "Where is order 42?", run_config=_config(_handoff_steps(), turn_spans=turn_spans)
    )
    assert result.final_output == ORDER_ANSWER
    (sdk_triage,) = [s for s in recorder.spans if getattr(s.span_data, "name", "") == "triage"]
    assert sdk_triage.span_data.tools == ["get_weather", "web_search"]  # the SDK's own list
    assert sdk_triage.span_data.handoffs == ["billing"]

    spans = list(exporter.get_finished_spans())
    triage_span, _, _, billing_span = _handoff_spans(spans)
    assert attrs(triage_span)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather",)
    assert attrs(billing_span)[sc.OTEL_PROV_AGENT_TOOLS] == ("lookup_order",)
    # Declared while the sessions run: read when their model calls start.
    assert live.seen["execute_tool transfer_to_billing"]["invoke_agent triage"] == ("get_weather",)
    assert live.seen["execute_tool lookup_order"]["invoke_agent billing"] == ("lookup_order",)

    triples = prov(spans)
    declared = {(s, o) for s, p, o in triples if p == O.declaredTool}
    assert declared == {
        (_iri(triage_span), tool_iri("get_weather")),
        (_iri(billing_span), tool_iri("lookup_order")),
    }


class SpanlessModel(ScriptedModel):
    """A custom model that opens no ``generation_span`` (the SDK leaves that to models)."""

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.steps.pop(0), usage=Usage(requests=1), response_id=None)


def test_tools_are_declared_when_the_session_ends_if_no_model_call_showed_them(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    model = SpanlessModel([_tool_step(), _answer_step()])
    run_config = RunConfig(model_provider=ScriptedProvider(model))
    assert Runner.run_sync(AGENT, "Weather in Paris?", run_config=run_config).final_output
    spans = list(exporter.get_finished_spans())
    assert by_name(spans, "chat") == []
    (session,) = by_name(spans, "invoke_agent")
    assert attrs(session)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather",)


# --- tool approvals (issue 30.2): needs_approval, RunState.approve / reject, resume --------


@function_tool(needs_approval=True)
def send_email(to: str) -> str:
    """Send the report to someone."""
    return f"sent to {to}"


MAILER = Agent(name="mailer", tools=[send_email])


def _run(decide: str, *, user: str | None = "u-7") -> None:
    steps = [
        [
            ResponseFunctionToolCall(
                type="function_call", call_id="call_9", name="send_email", arguments='{"to":"bob"}'
            )
        ],
        _answer_step("done"),
    ]
    config = RunConfig(
        model_provider=ScriptedProvider(ScriptedModel(steps)),
        trace_metadata={"user.id": user} if user else None,
    )
    first = Runner.run_sync(MAILER, "Mail the report to bob", run_config=config)
    (item,) = first.interruptions
    state = first.to_state()
    time.sleep(0.05)  # the person takes a while
    if decide == "approve":
        state.approve(item)
    else:
        state.reject(item, rejection_message="not to bob")
    resumed = Runner.run_sync(MAILER, state, run_config=config)
    assert resumed.final_output == "done"


def _approvals(spans: list[ReadableSpan]) -> list[tuple[ReadableSpan, dict[str, Any]]]:
    return [
        (span, dict(event.attributes or {}))
        for span in spans
        for event in span.events
        if event.name == sc.APPROVAL_EVENT
    ]


def test_an_approved_call_runs_informed_by_the_decision(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    _run("approve")
    spans = list(exporter.get_finished_spans())
    ((span, event),) = _approvals(spans)
    assert span.name == "execute_tool send_email"
    assert event[sc.OTEL_PROV_APPROVAL_DECISION] == "approved"
    assert event[sc.OTEL_PROV_APPROVAL_WAIT] >= 0.05
    ran = dict(span.attributes or {})
    assert ran[sc.GEN_AI_TOOL_CALL_ID] == "call_9"
    assert ran[sc.OTEL_PROV_APPROVAL_REQUIRED] is True
    triples = prov([s for s in spans if s.context.trace_id == span.context.trace_id])
    (decision,) = subjects(triples, O.Approval)
    calls = [
        c for c in subjects(triples, O.ToolCall) if value(triples, c, O.toolCallId) == "call_9"
    ]
    assert [(c, P.wasInformedBy, decision) in triples for c in calls] == [True]
    # The SDK does not say who approved: a person all the same, not named.
    (person,) = [o for s, p, o in triples if s == decision and p == P.wasAssociatedWith]
    assert (person, RDF_TYPE, P.Person) in triples
    # In the run up to the interruption the call stopped to wait: on record as not run.
    (waited,) = [
        s for s in spans if s.context.trace_id != span.context.trace_id and s.name == span.name
    ]
    assert dict(waited.attributes or {})[sc.OTEL_PROV_APPROVAL_PENDING] is True
    first = prov([s for s in spans if s.context.trace_id == waited.context.trace_id])
    (stopped,) = subjects(first, O.ToolCall)
    assert value(first, stopped, O.awaitingApproval) == "true"
    assert not subjects(first, O.Observation)


def test_a_rejected_call_is_on_record_as_not_run_with_the_reason(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    _run("reject")
    spans = list(exporter.get_finished_spans())
    ((span, event),) = _approvals(spans)
    assert span.name == "invoke_agent mailer"
    assert event[sc.OTEL_PROV_APPROVAL_DECISION] == "rejected"
    assert event[sc.OTEL_PROV_APPROVAL_REASON] == "not to bob"
    assert event[sc.GEN_AI_TOOL_CALL_ID] == "call_9"
    triples = prov([s for s in spans if s.context.trace_id == span.context.trace_id])
    (decision,) = subjects(triples, O.Approval)
    assert value(triples, decision, O.callRan) == "false"
    assert value(triples, decision, O.reason) == "not to bob"
    assert value(triples, decision, O.toolName) == "send_email"
    assert not [
        c for c in subjects(triples, O.ToolCall) if (c, P.wasInformedBy, decision) in triples
    ]


def test_the_run_acts_on_behalf_of_the_user_its_trace_metadata_names(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    exporter, _, _ = instrumented
    _run("approve")
    spans = list(exporter.get_finished_spans())
    runs = {span.context.trace_id for span in spans}
    assert len(runs) == 2  # the first run, up to the interruption, and the resumed one
    for run in runs:
        triples = prov([s for s in spans if s.context.trace_id == run])
        assert [s for s, p, o in triples if p == P.actedOnBehalfOf and o == person_iri("u-7")]


def test_the_sdk_trace_has_no_span_of_a_decision(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    """What third-party instrumentations of the SDK read (its trace) holds no decision:
    the support matrix says so (tests/conformance/people.py)."""
    _, recorder, _ = instrumented
    _run("approve")
    kinds = {
        f"{span.span_data.type} {getattr(span.span_data, 'name', '')}" for span in recorder.spans
    }
    assert kinds and not [kind for kind in kinds if "approv" in kind.lower()]


@function_tool
def forget(note: str) -> None:
    """Forget a note; returns nothing."""


def test_a_call_that_returns_nothing_is_no_call_waiting_for_approval(
    instrumented: tuple[InMemorySpanExporter, Recorder, OpenAIAgentsInstrumentor],
) -> None:
    """Its span ends without output, like one that stops to wait: held until the turn ends,
    it ends at the SDK's time, as a call that ran."""
    exporter, recorder, _ = instrumented
    steps = [
        [
            ResponseFunctionToolCall(
                type="function_call", call_id="c1", name="forget", arguments='{"note":"x"}'
            )
        ],
        _answer_step("done"),
    ]
    agent = Agent(name="forgetful", tools=[forget])
    result = Runner.run_sync(agent, "Forget x", run_config=_config(steps))
    assert result.final_output == "done" and not result.interruptions
    spans = list(exporter.get_finished_spans())
    (tool,) = by_name(spans, "execute_tool forget")
    assert sc.OTEL_PROV_APPROVAL_PENDING not in attrs(tool)
    (sdk_function,) = [s for s in recorder.spans if s.span_data.type == "function"]
    assert tool.end_time == _ns(sdk_function.ended_at)
    triples = prov(spans)
    (call,) = subjects(triples, O.ToolCall)
    assert [s for s, p, o in triples if p == P.wasGeneratedBy and o == call]  # it ran
