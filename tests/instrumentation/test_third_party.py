"""Third-party instrumentations of the same scripted agent give the same provenance shape.

OpenInference and OpenLLMetry (traceloop) instrument the real ``create_agent`` loop of
``test_langchain``; the official GenAI spans come from ``opentelemetry-util-genai``.  None
of them has iteration spans: the mapper infers one iteration per model call, so each
run must map to what our own LangChainInstrumentor gives (same counts of each class).

Root classification decided here: OpenInference marks the LangGraph run as a root
``CHAIN`` (a root CHAIN is the session); OpenLLMetry writes an ``invoke_agent`` span
wrapping a ``workflow`` span of the same agent (the inner one, with the input and
output, is the session; the wrapper is a plain span).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import pyshacl
import pytest
import rdflib
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov import map_spans, record_from_span
from otel_prov.instrumentation.langchain import LangChainInstrumentor
from otel_prov.prov._rdf import RDF_TYPE, integer, parse_literal, to_ntriples
from otel_prov.prov._vocab import O, P
from otel_prov.semconv import SHAPES_PATH
from tests.instrumentation.test_langchain import ask, faq_agent, get_weather, weather_agent

Triples = set[tuple[str, str, str]]
CLASSES = {
    "AgentSession": O.AgentSession,
    "Iteration": O.Iteration,
    "ToolCall": O.ToolCall,
    "ModelCall": O.ModelCall,
    "Question": O.Question,
    "Arguments": O.Arguments,
    "Observation": O.Observation,
    "Answer": O.Answer,
}


def _openinference() -> Any:
    module = importlib.import_module("openinference.instrumentation.langchain")
    return module.LangChainInstrumentor()


def _openllmetry() -> Any:
    module = importlib.import_module("opentelemetry.instrumentation.langchain")
    return module.LangchainInstrumentor()


def _run(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter], make: Callable[[], Any]
) -> Triples:
    """Run the scripted two-step agent under one instrumentor; its spans mapped to PROV."""
    provider, memory = memory_provider
    instrumentor = make()
    instrumentor.instrument(tracer_provider=provider)
    try:
        result = ask(weather_agent(get_weather))
    finally:
        instrumentor.uninstrument()
    assert result["messages"][-1].content == "18 °C"
    return _map(memory)


def _map(memory: InMemorySpanExporter) -> Triples:
    spans = memory.get_finished_spans()
    memory.clear()
    record = map_spans([record_from_span(span) for span in spans])
    assert not record.problems, record.problems
    return set(record.triples)


def of_type(triples: Triples, cls: str) -> set[str]:
    return {s for s, p, o in triples if p == RDF_TYPE and o == cls}


def objects(triples: Triples, subject: str, predicate: str) -> set[str]:
    return {o for s, p, o in triples if s == subject and p == predicate}


def value(triples: Triples, entity: str) -> str:
    (text,) = objects(triples, entity, P.value)
    return parse_literal(text)


def shape(triples: Triples) -> dict[str, int]:
    return {name: len(of_type(triples, cls)) for name, cls in CLASSES.items()}


def assert_react_shape(triples: Triples, *, tool: str = "get_weather") -> None:
    """One session, two inferred iterations linked as ours are, one tool call with its
    arguments and observation, an answer derived from the observation; SHACL conforms."""
    (session,) = of_type(triples, O.AgentSession)
    iterations = of_type(triples, O.Iteration)
    assert len(iterations) == 2
    numbers = {}
    for iteration in iterations:
        assert (iteration, RDF_TYPE, P.Activity) in triples
        assert objects(triples, iteration, O.partOf) == {session}
        (number,) = objects(triples, iteration, O.iterationNumber)
        numbers[int(parse_literal(number))] = iteration
    first, second = numbers[1], numbers[2]
    assert first.endswith(":step>") and second.endswith(":step>")
    assert objects(triples, second, P.wasInformedBy) == {first}

    (call,) = of_type(triples, O.ToolCall)
    assert objects(triples, call, O.toolName) == {f'"{tool}"'}
    (arguments,) = objects(triples, call, P.used)
    assert (arguments, RDF_TYPE, O.Arguments) in triples
    assert json.loads(value(triples, arguments)) == {"city": "Paris"}
    assert objects(triples, arguments, P.wasGeneratedBy) == {first}
    (observation,) = of_type(triples, O.Observation)
    assert objects(triples, observation, P.wasGeneratedBy) == {call}
    assert "Paris: 18 °C" in value(triples, observation)
    assert (second, P.used, observation) in triples

    (answer,) = of_type(triples, O.Answer)
    assert objects(triples, answer, P.wasGeneratedBy) == {session}
    assert (answer, P.wasDerivedFrom, observation) in triples
    assert "18 °C" in _unescaped(value(triples, answer))
    assert_shacl(triples)


def _unescaped(text: str) -> str:
    """JSON content (some instrumentations escape non-ASCII) as plain text."""
    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except ValueError:
        return text


def assert_shacl(triples: Triples) -> None:
    graph = rdflib.Graph().parse(data=to_ntriples(sorted(triples)), format="nt")
    shapes = rdflib.Graph().parse(SHAPES_PATH, format="turtle")
    conforms, _, report = pyshacl.validate(graph, shacl_graph=shapes, advanced=True)
    assert conforms, report


@pytest.fixture
def ours(memory_provider: tuple[TracerProvider, InMemorySpanExporter]) -> dict[str, int]:
    """The class counts of our own LangChainInstrumentor on the same agent."""
    triples = _run(memory_provider, LangChainInstrumentor)
    counts = shape(triples)
    assert counts["Iteration"] == 2 and counts["ToolCall"] == 1
    return counts


@pytest.mark.parametrize(
    "make", [_openinference, _openllmetry], ids=["openinference", "openllmetry"]
)
def test_third_party_langchain_spans_map_to_our_react_shape(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    make: Callable[[], Any],
    ours: dict[str, int],
) -> None:
    triples = _run(memory_provider, make)
    assert_react_shape(triples)
    assert shape(triples) == ours


def test_explicit_iterations_are_not_inferred_again(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    """Our own spans carry iterations: no ``:step`` iteration is added beside them."""
    triples = _run(memory_provider, LangChainInstrumentor)
    iterations = of_type(triples, O.Iteration)
    assert len(iterations) == 2
    assert not any(iri.endswith(":step>") for iri in iterations)


@pytest.fixture
def genai_handler(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[Any]:
    handler_module = importlib.import_module("opentelemetry.util.genai.handler")
    monkeypatch.setenv("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, _ = memory_provider
    yield handler_module.TelemetryHandler(tracer_provider=provider)


def test_official_genai_spans_map_to_our_react_shape(
    genai_handler: Any,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    ours: dict[str, int],
) -> None:
    types = importlib.import_module("opentelemetry.util.genai.types")
    question = [types.InputMessage(role="user", parts=[types.Text(content="Weather in Paris?")])]
    request = types.ToolCallRequest(arguments={"city": "Paris"}, name="get_weather", id="call_1")
    with genai_handler.invoke_local_agent(agent_name="weather", request_model="m") as agent:
        agent.input_messages = question
        with genai_handler.inference("p", request_model="m") as chat:
            chat.input_messages = question
            chat.output_messages = [
                types.OutputMessage(role="assistant", parts=[request], finish_reason="tool_calls")
            ]
        with genai_handler.tool("get_weather", tool_type="function") as call:
            call.tool_call_id = "call_1"
            call.arguments = {"city": "Paris"}
            call.tool_result = "Paris: 18 °C"
        answer = [
            types.OutputMessage(
                role="assistant", parts=[types.Text(content="18 °C")], finish_reason="stop"
            )
        ]
        with genai_handler.inference("p", request_model="m") as chat:
            chat.output_messages = answer
        agent.output_messages = answer
    _, memory = memory_provider
    triples = _map(memory)
    assert_react_shape(triples)
    assert shape(triples) == ours


@pytest.mark.parametrize(
    "make", [_openinference, LangChainInstrumentor], ids=["openinference", "ours"]
)
def test_retriever_documents_are_read_from_openinference_as_from_ours(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter], make: Callable[[], Any]
) -> None:
    """OpenInference's RETRIEVER span (``retrieval.documents.N.document.*``) gives the
    documents, sources and derivations our own instrumentor gives.  (OpenLLMetry's
    retriever spans are read too, see ``tests/test_retrieval.py``: its instrumentor keeps
    sending a LangGraph run's spans to the provider it was first instrumented with, so a
    second OpenLLMetry run in this process would record nothing here.)"""
    provider, memory = memory_provider
    instrumentor = make()
    instrumentor.instrument(tracer_provider=provider)
    try:
        ask(faq_agent(), "When is the Louvre open?")
    finally:
        instrumentor.uninstrument()
    triples = _map(memory)
    (retrieval,) = of_type(triples, O.Retrieval)
    chunks = of_type(triples, O.Document)
    assert {value(triples, chunk) for chunk in chunks} == {
        "The Louvre is open from 9:00 to 18:00, closed on Tuesdays.",
        "A ticket costs 22 euros.",
    }
    assert all(objects(triples, chunk, P.wasGeneratedBy) == {retrieval} for chunk in chunks)
    sources = set().union(*(objects(triples, chunk, P.hadPrimarySource) for chunk in chunks))
    assert sources == {
        "<https://www.louvre.fr/en/visit/hours>",
        "<urn:otel-prov:source:faq%2Ftickets.md>",
    }
    (query,) = objects(triples, retrieval, P.used)
    assert value(triples, query) == "louvre hours"
    (observation,) = of_type(triples, O.Observation)
    assert chunks <= objects(triples, observation, P.wasDerivedFrom)
    assert_shacl(triples)


def _openinference_agents() -> Any:
    return importlib.import_module(
        "openinference.instrumentation.openai_agents"
    ).OpenAIAgentsInstrumentor()


def _openllmetry_agents() -> Any:
    return importlib.import_module(
        "opentelemetry.instrumentation.openai_agents"
    ).OpenAIAgentsInstrumentor()


@pytest.mark.parametrize(
    "make", [_openinference_agents, _openllmetry_agents], ids=["openinference", "openllmetry"]
)
def test_an_openai_agents_workflow_is_the_agents_run(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter], make: Callable[[], Any]
) -> None:
    """Both instrumentations wrap the agent in an "Agent workflow" span: the run is the
    agent's, named, with its question, its failed call and the tool's result."""
    agents = importlib.import_module("agents")
    tracing = importlib.import_module("agents.tracing")
    responses = importlib.import_module("openai.types.responses")
    scripted = importlib.import_module("tests.instrumentation.scripted_openai")

    @agents.function_tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        if city == "Atlantis":
            raise ValueError("no such city")
        return f"18 °C in {city}"

    def call(call_id: str, city: str) -> Any:
        return responses.ResponseFunctionToolCall(
            type="function_call", call_id=call_id, name="get_weather",
            arguments=json.dumps({"city": city}),
        )  # fmt: skip

    answer = responses.ResponseOutputMessage(
        id="m", type="message", role="assistant", status="completed",
        content=[responses.ResponseOutputText(type="output_text", text="18 °C", annotations=[])],
    )  # fmt: skip
    model = scripted.ScriptedModel(
        [[call("call_1", "Paris"), call("call_2", "Atlantis")], [answer]]
    )
    agent = agents.Agent(name="weather", instructions="Be brief.", tools=[get_weather])
    provider, memory = memory_provider
    tracing.set_trace_processors([])  # nothing goes to OpenAI's exporter
    instrumentor = make()
    instrumentor.instrument(tracer_provider=provider)
    try:
        config = agents.RunConfig(model_provider=scripted.ScriptedProvider(model))
        assert agents.Runner.run_sync(agent, "Weather in Paris?", run_config=config).final_output
    finally:
        instrumentor.uninstrument()
    triples = _map(memory)
    (session,) = of_type(triples, O.AgentSession)
    assert objects(triples, session, O.agentLabel) == {'"weather"'}
    assert objects(triples, session, O.failedCalls) == {integer(1)}
    (question,) = of_type(triples, O.Question)
    assert value(triples, question) == "Weather in Paris?"
    (observation,) = of_type(triples, O.Observation)
    assert value(triples, observation) == "18 °C in Paris"
