"""LangChainInstrumentor on real ``create_agent`` loops, offline, with a scripted model.

Each test runs the real LangGraph agent loop (model node, tool node, middleware) and
checks both the exported spans and the PROV-O the mapper makes of them.  LangChain
swallows exceptions raised inside callback handlers, so every test asserts on spans.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from uuid import uuid4

import pytest
import requests
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, wrap_tool_call
from langchain.agents.structured_output import ToolStrategy
from langchain.tools import ToolRuntime
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import ensure_config
from langchain_core.tools import StructuredTool, ToolException, create_retriever_tool, tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from opentelemetry import trace
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, SpanKind, StatusCode
from pydantic import BaseModel

from otel_prov import map_spans, record_from_span
from otel_prov import semconv as sc
from otel_prov.instrumentation.langchain import LangChainInstrumentor
from otel_prov.prov._iris import activity_iri, tool_iri
from otel_prov.prov._rdf import RDF_TYPE, parse_literal
from otel_prov.prov._vocab import O, P
from tests.instrumentation.span_helpers import genai_messages, parent_of, said

QUESTION = "Weather in Paris?"


# --- a scripted model and tools --------------------------------------------------------
class ScriptedModel(FakeMessagesListChatModel):
    """Returns the prepared messages in order; supports ``bind_tools`` as create_agent needs."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools])


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def step(thought: str, *calls: dict[str, Any]) -> AIMessage:
    usage = {
        "input_tokens": 12,
        "output_tokens": 5,
        "total_tokens": 17,
        "input_token_details": {"cache_read": 4},
        "output_token_details": {"reasoning": 2},
    }
    return AIMessage(content=thought, tool_calls=list(calls), usage_metadata=usage)


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"{city}: 18 °C"


@tool
def get_time(city: str, utc: bool = False) -> str:
    """The time in a city."""
    return f"{city}: 12:00{' UTC' if utc else ''}"


@tool
def broken_weather(city: str) -> str:
    """A weather service that is down."""
    raise ConnectionError(f"weather service unreachable for {city}")


def weather_agent(*tools: Any, middleware: Sequence[Any] = (), answer: str = "18 °C") -> Any:
    model = ScriptedModel(
        responses=[
            step("I need the weather.", call(tools[0].name, {"city": "Paris"}, "call_1")),
            AIMessage(content=answer),
        ]
    )
    return create_agent(model, list(tools), middleware=list(middleware), name="weather")


def ask(agent: Any, question: str = QUESTION) -> Any:
    return agent.invoke({"messages": [{"role": "user", "content": question}]})


# --- fixtures and span helpers ---------------------------------------------------------
@pytest.fixture
def exporter(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> Iterator[InMemorySpanExporter]:
    provider, memory = memory_provider
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        yield memory
    finally:
        instrumentor.uninstrument()


def spans_of(exporter: InMemorySpanExporter) -> list[ReadableSpan]:
    return list(exporter.get_finished_spans())


def one(spans: Sequence[ReadableSpan], name: str) -> ReadableSpan:
    found = [span for span in spans if span.name == name]
    assert len(found) == 1, f"expected one {name!r}, got {[s.name for s in spans]}"
    return found[0]


def children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[str]:
    assert parent.context is not None
    return sorted(
        span.name
        for span in spans
        if span.parent is not None and span.parent.span_id == parent.context.span_id
    )


def attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def act(span: ReadableSpan) -> str:
    assert span.context is not None
    return activity_iri(span.context.trace_id, span.context.span_id)


def prov(spans: Sequence[ReadableSpan]) -> set[tuple[str, str, str]]:
    record = map_spans([record_from_span(span) for span in spans])
    assert not record.problems, record.problems
    return set(record.triples)


def of_type(triples: set[tuple[str, str, str]], cls: str) -> set[str]:
    return {s for s, p, o in triples if p == RDF_TYPE and o == cls}


def value_of(triples: set[tuple[str, str, str]], subject: str, predicate: str, cls: str) -> str:
    """The ``prov:value`` of the single entity of ``cls`` linked to ``subject`` by ``predicate``."""
    linked = {
        o
        for s, p, o in triples
        if s == subject and p == predicate and (o, RDF_TYPE, cls) in triples
    }
    linked |= {
        s
        for s, p, o in triples
        if o == subject and p == predicate and (s, RDF_TYPE, cls) in triples
    }
    assert len(linked) == 1, f"{subject} {predicate} {cls}: {linked}"
    (entity,) = linked
    values = [o for s, p, o in triples if s == entity and p == P.value]
    assert len(values) == 1
    return parse_literal(values[0])


# --- tests -----------------------------------------------------------------------------
def test_two_step_run_gives_nested_spans_and_react_provenance(
    exporter: InMemorySpanExporter,
) -> None:
    result = ask(weather_agent(get_weather))
    assert result["messages"][-1].content == "18 °C"

    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    first, second = one(spans, "iteration 1"), one(spans, "iteration 2")
    weather = one(spans, "execute_tool get_weather")
    assert len(spans) == 6
    assert session.parent is None
    assert children(spans, session) == ["iteration 1", "iteration 2"]
    assert children(spans, first) == ["chat ScriptedModel", "execute_tool get_weather"]
    assert children(spans, second) == ["chat ScriptedModel"]
    assert attrs(session) == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "weather",
        "gen_ai.provider.name": "scriptedmodel",  # the chat model's, as LangChain names it
        "otel_prov.agent.tools": ("get_weather",),
        "otel_prov.question": QUESTION,
        "otel_prov.answer": "18 °C",
    }
    assert attrs(first) == {
        "otel_prov.iteration.number": 1,
        "otel_prov.thought": "I need the weather.",
        "otel_prov.action": "get_weather",
        "otel_prov.arguments": '{"city": "Paris"}',
    }
    assert attrs(second)["otel_prov.action"] == "final_answer"
    assert attrs(second)["otel_prov.iteration.number"] == 2
    assert attrs(weather) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.id": "call_1",
        "otel_prov.arguments": '{"city": "Paris"}',
        "otel_prov.observation": "Paris: 18 °C",
    }
    model = [s for s in spans if s.name == "chat ScriptedModel"]
    assert all(s.kind.name == "CLIENT" for s in model)
    usage = attrs(next(s for s in model if s.parent == first.context))
    assert usage["gen_ai.request.model"] == "ScriptedModel"
    assert (usage["gen_ai.usage.input_tokens"], usage["gen_ai.usage.output_tokens"]) == (12, 5)
    assert usage["gen_ai.usage.cache_read.input_tokens"] == 4
    assert usage["gen_ai.usage.reasoning.output_tokens"] == 2
    assert "gen_ai.usage.cache_creation.input_tokens" not in usage  # not reported: left off
    assert first.end_time is not None and second.start_time is not None
    assert first.end_time <= second.start_time
    assert {span.context.trace_id for span in spans if span.context} == {
        session.context.trace_id if session.context else 0
    }

    triples = prov(spans)
    assert of_type(triples, O.AgentSession) == {act(session)}
    assert of_type(triples, O.Iteration) == {act(first), act(second)}
    assert of_type(triples, O.ToolCall) == {act(weather)}
    assert (act(second), P.wasInformedBy, act(first)) in triples
    assert value_of(triples, act(weather), P.used, O.Arguments) == '{"city": "Paris"}'
    observation = value_of(triples, act(weather), P.wasGeneratedBy, O.Observation)
    assert observation == "Paris: 18 °C"
    assert any(s == act(second) and p == P.used for s, p, _ in triples)
    assert value_of(triples, act(session), P.used, O.Question) == QUESTION
    assert declared(triples, session) == {tool_iri("get_weather")}


# --- retrievers ------------------------------------------------------------------------
LOUVRE = [
    Document(
        id="hours",
        page_content="The Louvre is open from 9:00 to 18:00, closed on Tuesdays.",
        metadata={"source": "https://www.louvre.fr/en/visit/hours", "score": 0.9},
    ),
    Document(
        id="tickets",
        page_content="A ticket costs 22 euros.",
        metadata={"source": "faq/tickets.md", "lang": "en"},
    ),
]


class KeywordRetriever(BaseRetriever):
    """A LangChain retriever over a fixed list: the documents, most words shared first."""

    documents: list[Document]

    def _get_relevant_documents(self, query: str, **kwargs: Any) -> list[Document]:
        words = set(query.lower().split())
        return sorted(
            self.documents, key=lambda d: -len(words & set(d.page_content.lower().split()))
        )


@pytest.mark.parametrize("content", ["SPAN_ONLY", ""])
def test_the_agent_span_speaks_the_genai_conventions(
    exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch, content: str
) -> None:
    """A GenAI-only backend reads the run off the agent span: its provider (the chat
    model's, as LangChain names it) always, the question and answer as messages under the
    content opt-in."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", content)
    ask(weather_agent(get_weather))
    session = one(spans_of(exporter), "invoke_agent weather")
    messages = said(QUESTION, "18 °C") if content else (None, None)
    assert genai_messages(session) == (*messages, "scriptedmodel")


def faq_agent() -> Any:
    """An agent whose one tool searches the FAQ (a retriever), then answers."""
    search = create_retriever_tool(
        KeywordRetriever(documents=LOUVRE), "search_faq", "Search the museum FAQ."
    )
    model = ScriptedModel(
        responses=[
            step("Search the FAQ.", call("search_faq", {"query": "louvre hours"}, "call_1")),
            AIMessage(content="9:00 to 18:00, closed on Tuesdays."),
        ]
    )
    return create_agent(model, [search], name="guide")


def test_retriever_tool_answer_derives_from_the_retrieved_chunks(
    exporter: InMemorySpanExporter,
) -> None:
    ask(faq_agent(), "When is the Louvre open?")

    spans = spans_of(exporter)
    tool_span = one(spans, "execute_tool search_faq")
    retrieval = next(s for s in spans if s.name.startswith("retrieval "))
    assert_child_of(retrieval, tool_span)
    found = attrs(retrieval)
    assert found["gen_ai.operation.name"] == "retrieval"
    assert found["otel_prov.retrieval.query"] == "louvre hours"
    ids = {found[f"otel_prov.retrieval.document.id.{i}"] for i in range(2)}
    assert ids == {"hours", "tickets"}

    triples = prov(spans)
    chunks = of_type(triples, O.Document)
    assert len(chunks) == 2
    assert all((chunk, P.wasGeneratedBy, act(retrieval)) in triples for chunk in chunks)
    sources = {o for s, p, o in triples if s in chunks and p == P.hadPrimarySource}
    assert sources == {
        "<https://www.louvre.fr/en/visit/hours>",
        "<urn:otel-prov:source:faq%2Ftickets.md>",
    }
    scores = {o for s, p, o in triples if s in chunks and p == O.retrievalScore}
    assert {float(parse_literal(score)) for score in scores} == {0.9}
    [observation] = of_type(triples, O.Observation)
    assert (observation, P.wasGeneratedBy, act(tool_span)) in triples
    assert all((observation, P.wasDerivedFrom, chunk) in triples for chunk in chunks)
    [answer] = of_type(triples, O.Answer)
    assert (answer, P.wasDerivedFrom, observation) in triples


def test_a_failing_retriever_is_a_failed_retrieval_with_no_documents(
    exporter: InMemorySpanExporter,
) -> None:
    class DownRetriever(BaseRetriever):
        def _get_relevant_documents(self, query: str, **kwargs: Any) -> list[Document]:
            raise ConnectionError("vector store unreachable")

    search = create_retriever_tool(DownRetriever(), "search_faq", "Search the museum FAQ.")
    model = ScriptedModel(
        responses=[
            step("Search the FAQ.", call("search_faq", {"query": "hours"}, "call_1")),
            AIMessage(content="I could not search."),
        ]
    )
    agent = create_agent(model, [search], name="guide")
    with pytest.raises(ConnectionError):
        ask(agent, "When is the Louvre open?")
    spans = spans_of(exporter)
    retrieval = next(s for s in spans if s.name.startswith("retrieval "))
    assert retrieval.status.status_code is StatusCode.ERROR
    assert attrs(retrieval)["error.type"] == "ConnectionError"
    triples = prov(spans)
    assert of_type(triples, O.Retrieval) == {act(retrieval)}
    assert of_type(triples, O.Document) == set()


# --- declared tools --------------------------------------------------------------------
def declared(triples: set[tuple[str, str, str]], session: ReadableSpan) -> set[str]:
    return {o for s, p, o in triples if s == act(session) and p == O.declaredTool}


class ProviderToolsModel(ScriptedModel):
    """Binds a provider's built-in tools (dicts) unchanged, as ``ChatAnthropic`` does."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(
            tools=[t if isinstance(t, dict) else convert_to_openai_tool(t) for t in tools]
        )


SERVER_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 2}
"""Anthropic's server-side web search: named, but run by the provider, never by LangChain."""


@tool("local_time")
def clock(city: str) -> str:
    """The time in a city (the model knows this tool as ``local_time``)."""
    return f"{city}: 12:00"


def test_session_declares_the_tools_the_model_is_given(exporter: InMemorySpanExporter) -> None:
    model = ProviderToolsModel(
        responses=[
            step("I need the weather.", call("get_weather", {"city": "Paris"}, "call_1")),
            AIMessage(content="18 °C"),
        ]
    )
    ask(create_agent(model, [get_weather, clock, SERVER_SEARCH], name="weather"))

    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    assert attrs(session)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather", "local_time")
    assert declared(prov(spans), session) == {tool_iri("get_weather"), tool_iri("local_time")}


class Report(BaseModel):
    """The weather report the agent answers with."""

    text: str


def test_structured_answer_tools_are_not_declared(exporter: InMemorySpanExporter) -> None:
    """``ToolStrategy`` binds a ``Report`` tool that the model node answers itself: no tool
    run can ever show it used, so it is dropped once the run answered through it.  Here the
    model calls ``get_weather`` beside it, so both replies end the run's messages."""
    answer = call("Report", {"text": "18 °C"}, "call_r")
    model = ScriptedModel(
        responses=[step("Report, and check.", call("get_weather", {"city": "Paris"}, "c"), answer)]
    )
    reporter = create_agent(
        model, [get_weather], response_format=ToolStrategy(Report), name="weather"
    )
    result = ask(reporter)
    assert result["structured_response"] == Report(text="18 °C")
    assert [m.name for m in result["messages"][-2:]] == ["Report", "get_weather"]
    extractor = create_agent(
        ScriptedModel(responses=[AIMessage(content="", tool_calls=[answer])]),
        [],
        response_format=ToolStrategy(Report),
        name="extractor",
    )
    assert ask(extractor)["structured_response"] == Report(text="18 °C")

    spans = spans_of(exporter)
    weather, extracting = one(spans, "invoke_agent weather"), one(spans, "invoke_agent extractor")
    assert attrs(weather)[sc.OTEL_PROV_AGENT_TOOLS] == ("get_weather",)
    assert attrs(extracting)[sc.OTEL_PROV_AGENT_TOOLS] == ()  # given no tool at all
    triples = prov(spans)
    assert declared(triples, weather) == {tool_iri("get_weather")}
    assert declared(triples, extracting) == set()


def test_an_agent_run_by_a_tool_declares_nothing_on_the_session(
    exporter: InMemorySpanExporter,
) -> None:
    """The model of an agent that a tool runs is not the session's: its tools are not the
    ones the session's model is given."""
    clock_agent = weather_agent(get_time, answer="12:00")

    @tool
    def ask_clock(city: str) -> str:
        """Asks the clock agent."""
        return str(ask(clock_agent, f"Time in {city}?")["messages"][-1].content)

    ask(weather_agent(ask_clock, answer="12:00"))
    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    assert one(spans, "execute_tool get_time")  # the clock agent did run its tool
    assert attrs(session)[sc.OTEL_PROV_AGENT_TOOLS] == ("ask_clock",)
    assert declared(prov(spans), session) == {tool_iri("ask_clock")}


def test_tool_error_is_reraised_and_recorded(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    with pytest.raises(ConnectionError) as bare:
        ask(weather_agent(broken_weather))  # not instrumented yet: the reference behaviour
    provider, exporter = memory_provider
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        with pytest.raises(ConnectionError) as instrumented:
            ask(weather_agent(broken_weather))
    finally:
        instrumentor.uninstrument()
    assert str(instrumented.value) == str(bare.value) == "weather service unreachable for Paris"

    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    failed = one(spans, "execute_tool broken_weather")
    assert [s.name for s in spans if s.name.startswith("iteration")] == ["iteration 1"]
    assert failed.status.status_code is StatusCode.ERROR
    assert attrs(failed)["error.type"] == "ConnectionError"
    assert attrs(failed)["gen_ai.tool.call.id"] == "call_1"
    assert "otel_prov.observation" not in attrs(failed)
    assert [event.name for event in failed.events] == ["exception"]
    assert session.status.status_code is StatusCode.ERROR
    assert "otel_prov.answer" not in attrs(session)

    triples = prov(spans)
    assert (act(failed), O.status, '"error"') in triples
    assert (act(failed), O.errorType, '"ConnectionError"') in triples
    assert not of_type(triples, O.Observation)


def test_error_turned_into_observation_by_middleware_lets_the_run_continue(
    exporter: InMemorySpanExporter,
) -> None:
    @wrap_tool_call
    def report_errors(request: Any, handler: Callable[[Any], Any]) -> Any:
        try:
            return handler(request)
        except ConnectionError as exc:
            return ToolMessage(
                content=f"error: {exc}", tool_call_id=request.tool_call["id"], status="error"
            )

    result = ask(weather_agent(broken_weather, middleware=[report_errors], answer="unknown"))
    assert result["messages"][-1].content == "unknown"
    assert result["messages"][-2].status == "error"

    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    failed = one(spans, "execute_tool broken_weather")
    assert failed.status.status_code is StatusCode.ERROR
    assert attrs(failed)["error.type"] == "ConnectionError"
    assert session.status.status_code is StatusCode.UNSET
    assert attrs(session)["otel_prov.answer"] == "unknown"
    assert attrs(one(spans, "iteration 2"))["otel_prov.action"] == "final_answer"

    triples = prov(spans)
    assert len(of_type(triples, O.Iteration)) == 2
    assert (act(failed), O.status, '"error"') in triples
    # The run went on (its own status is ok), and the ledger says a call inside it failed.
    assert (act(session), O.status, '"ok"') in triples
    assert (
        act(session),
        O.failedCalls,
        '"1"^^<http://www.w3.org/2001/XMLSchema#integer>',
    ) in triples


def test_tool_error_message_from_the_tool_itself_marks_the_span_as_error(
    exporter: InMemorySpanExporter,
) -> None:
    def no_data(city: str) -> str:
        """Fails politely."""
        raise ToolException(f"no data for {city}")

    flaky = StructuredTool.from_function(no_data, name="flaky", handle_tool_error=True)
    ask(weather_agent(flaky))
    failed = one(spans_of(exporter), "execute_tool flaky")
    assert failed.status.status_code is StatusCode.ERROR
    assert attrs(failed)["otel_prov.observation"] == "no data for Paris"


def test_parallel_tool_calls_share_one_iteration(exporter: InMemorySpanExporter) -> None:
    model = ScriptedModel(
        responses=[
            step(
                "Both at once.",
                call("get_weather", {"city": "Paris"}, "call_w"),
                call("get_time", {"city": "Lyon", "utc": True}, "call_t"),
            ),
            AIMessage(content="18 °C, 12:00 UTC"),
        ]
    )
    ask(create_agent(model, [get_weather, get_time], name="weather"))

    spans = spans_of(exporter)
    first, second = one(spans, "iteration 1"), one(spans, "iteration 2")
    weather, clock = one(spans, "execute_tool get_weather"), one(spans, "execute_tool get_time")
    assert children(spans, first) == [
        "chat ScriptedModel",
        "execute_tool get_time",
        "execute_tool get_weather",
    ]
    assert attrs(first)["otel_prov.action"] == "get_weather,get_time"
    assert json.loads(attrs(first)["otel_prov.arguments"]) == [
        {"city": "Paris"},
        {"city": "Lyon", "utc": True},
    ]
    assert attrs(clock)["otel_prov.arguments"] == '{"city": "Lyon", "utc": true}'
    assert attrs(clock)["gen_ai.tool.call.id"] == "call_t"
    assert attrs(weather)["gen_ai.tool.call.id"] == "call_w"
    for tool_span in (weather, clock):
        assert first.end_time is not None and tool_span.end_time is not None
        assert tool_span.end_time <= first.end_time

    triples = prov(spans)
    observations = {
        s for s, p, o in triples if p == P.wasGeneratedBy and o in (act(weather), act(clock))
    }
    assert len(observations) == 2
    assert {o for s, p, o in triples if s == act(second) and p == P.used} == observations
    assert (act(second), P.wasInformedBy, act(first)) in triples


def test_async_run_is_recorded_the_same_way(exporter: InMemorySpanExporter) -> None:
    @tool
    async def aweather(city: str) -> str:
        """The weather, asynchronously."""
        await asyncio.sleep(0)
        return f"{city}: 17 °C"

    agent = weather_agent(aweather, answer="17 °C")
    result = asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]}))
    assert result["messages"][-1].content == "17 °C"

    spans = spans_of(exporter)
    session = one(spans, "invoke_agent weather")
    first = one(spans, "iteration 1")
    assert children(spans, session) == ["iteration 1", "iteration 2"]
    assert children(spans, first) == ["chat ScriptedModel", "execute_tool aweather"]
    assert attrs(one(spans, "execute_tool aweather"))["otel_prov.observation"] == "Paris: 17 °C"
    assert attrs(session)["otel_prov.answer"] == "17 °C"
    triples = prov(spans)
    assert len(of_type(triples, O.Iteration)) == 2


def test_concurrent_agents_in_threads_get_separate_traces(
    exporter: InMemorySpanExporter,
) -> None:
    both_in_tool = threading.Barrier(2, timeout=10)

    @tool
    def slow_weather(city: str) -> str:
        """Waits until the other agent is inside its tool too."""
        both_in_tool.wait()
        return f"{city}: 18 °C"

    errors: list[BaseException] = []

    def run(city: str) -> None:
        model = ScriptedModel(
            responses=[
                step(f"{city}?", call("slow_weather", {"city": city}, f"id_{city}")),
                AIMessage(content=city),
            ]
        )
        try:
            agent = create_agent(model, [slow_weather], name="weather")
            ask(agent, f"Weather in {city}?")
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(city,)) for city in ("Paris", "Lyon")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors

    spans = spans_of(exporter)
    sessions = [s for s in spans if s.name == "invoke_agent weather"]
    assert len(sessions) == 2
    traces = {s.context.trace_id for s in sessions if s.context}
    assert len(traces) == 2
    for session in sessions:
        assert session.context is not None
        trace_spans = [
            s for s in spans if s.context and s.context.trace_id == session.context.trace_id
        ]
        city = attrs(session)["otel_prov.answer"]
        assert attrs(session)["otel_prov.question"] == f"Weather in {city}?"
        tool_span = one(trace_spans, "execute_tool slow_weather")
        assert attrs(tool_span)["gen_ai.tool.call.id"] == f"id_{city}"
        assert len(trace_spans) == 6
        triples = prov(trace_spans)
        assert of_type(triples, O.AgentSession) == {act(session)}
        assert len(of_type(triples, O.Iteration)) == 2


def test_uninstrument_records_nothing_afterwards(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
) -> None:
    provider, exporter = memory_provider
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    ask(weather_agent(get_weather))
    assert len(spans_of(exporter)) == 6
    exporter.clear()

    instrumentor.uninstrument()
    assert instrumentor.handler is None
    ask(weather_agent(get_weather))
    # a thread started afterwards sees the hook's default value: the handler must be inert
    worker = threading.Thread(target=lambda: ask(weather_agent(get_weather)))
    worker.start()
    worker.join()
    asyncio.run(weather_agent(get_weather).ainvoke({"messages": [("user", QUESTION)]}))
    assert spans_of(exporter) == []

    instrumentor.instrument(tracer_provider=provider)  # and it can come back
    try:
        ask(weather_agent(get_weather))
    finally:
        instrumentor.uninstrument()
    assert len(spans_of(exporter)) == 6


def test_content_switches(exporter: InMemorySpanExporter, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    ask(weather_agent(get_weather))
    weather = attrs(one(spans_of(exporter), "execute_tool get_weather"))
    assert weather["gen_ai.tool.call.arguments"] == '{"city": "Paris"}'
    assert weather["gen_ai.tool.call.result"] == "Paris: 18 °C"
    exporter.clear()

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    ask(weather_agent(get_weather))
    spans = spans_of(exporter)
    content = {"question", "answer", "thought", "arguments", "observation"}
    leaked = [
        (span.name, key)
        for span in spans
        for key in attrs(span)
        if key.removeprefix("otel_prov.") in content or key.startswith("gen_ai.tool.call.a")
    ]
    assert leaked == []
    assert attrs(one(spans, "iteration 1"))["otel_prov.action"] == "get_weather"
    assert attrs(one(spans, "execute_tool get_weather"))["gen_ai.tool.call.id"] == "call_1"


def test_other_runnables_outside_an_agent_make_no_spans(exporter: InMemorySpanExporter) -> None:
    ScriptedModel(responses=[AIMessage(content="hi")]).invoke("hello")
    get_weather.invoke({"city": "Paris"})
    assert spans_of(exporter) == []


def test_tool_arguments_are_what_the_model_chose_not_the_injected_inputs(
    exporter: InMemorySpanExporter,
) -> None:
    @tool
    def whoami(city: str, runtime: ToolRuntime) -> str:
        """Uses the injected runtime."""
        return f"{city} for {runtime.tool_call_id}"

    model = ScriptedModel(
        responses=[step("Who?", call("whoami", {"city": "Paris"}, "call_9")), AIMessage("ok")]
    )
    ask(create_agent(model, [whoami], name="weather"))
    span = one(spans_of(exporter), "execute_tool whoami")
    assert attrs(span)["otel_prov.arguments"] == '{"city": "Paris"}'
    assert attrs(span)["otel_prov.observation"] == "Paris for call_9"


# --- the tool and model spans are current while they run -------------------------------
def assert_child_of(child: ReadableSpan, parent: ReadableSpan) -> None:
    assert child.context is not None and parent.context is not None
    assert parent_of(child) == parent.context.span_id, f"{child.name!r} not under {parent.name!r}"
    assert child.context.trace_id == parent.context.trace_id


def assert_quiet(caplog: pytest.LogCaptureFixture) -> None:
    """No "Failed to detach context" from OTel, no handler error swallowed by LangChain."""
    noisy = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert noisy == []


class ContextProbe(AgentMiddleware):
    """Records the current span before and after each model and tool call it wraps.

    The end callbacks of a run must detach what its start attached, in the same context:
    whatever a tool or model call leaves current shows up here, in the caller's context.
    """

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[tuple[str, Span, Span]] = []

    def _around(self, kind: str, call: Callable[[], Any]) -> Any:
        before = trace.get_current_span()
        try:
            return call()
        finally:
            self.seen.append((kind, before, trace.get_current_span()))

    async def _aaround(self, kind: str, call: Callable[[], Awaitable[Any]]) -> Any:
        before = trace.get_current_span()
        try:
            return await call()
        finally:
            self.seen.append((kind, before, trace.get_current_span()))

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._around("model", lambda: handler(request))

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await self._aaround("model", lambda: handler(request))

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return self._around("tool", lambda: handler(request))

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        return await self._aaround("tool", lambda: handler(request))

    def assert_restored(self, calls: int) -> None:
        assert len(self.seen) == calls
        for kind, before, after in self.seen:
            assert after is before, f"a {kind} call left {getattr(after, 'name', after)} current"


class TracedModel(ScriptedModel):
    """Starts a ``model client`` span in each call, as an instrumented model client would."""

    tracer: Any = None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        with self.tracer.start_as_current_span("model client"):
            return super()._generate(messages, stop, run_manager, **kwargs)


class _WeatherServer(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"{self.path.strip('/')}: sunny".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the test output is not the place for access logs."""


@pytest.fixture
def weather_url() -> Iterator[str]:
    """A real HTTP server on a free local port, in a thread, for the duration of a test."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _WeatherServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def test_http_call_in_a_sync_tool_is_a_child_of_the_tool_span(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    weather_url: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    def fetch_weather(city: str) -> str:
        """The weather, from a web service."""
        with requests.Session() as session:
            session.trust_env = False  # a proxy from the environment must not see localhost
            return session.get(f"{weather_url}/{city}", timeout=10).text

    requests_instrumentor = RequestsInstrumentor()
    requests_instrumentor.instrument(tracer_provider=memory_provider[0])
    try:
        result = ask(weather_agent(fetch_weather, answer="sunny"))
    finally:
        requests_instrumentor.uninstrument()
    assert result["messages"][-2].content == "Paris: sunny"

    spans = spans_of(exporter)
    tool_span = one(spans, "execute_tool fetch_weather")
    http = one(spans, "GET")
    assert http.kind is SpanKind.CLIENT
    assert_child_of(http, tool_span)
    assert attrs(tool_span)["otel_prov.observation"] == "Paris: sunny"
    assert len(of_type(prov(spans), O.ToolCall)) == 1  # the HTTP span adds no provenance
    assert_quiet(caplog)


def test_span_started_in_an_async_tool_is_a_child_of_the_tool_span(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracer = memory_provider[0].get_tracer("test")

    @tool
    async def aweather(city: str) -> str:
        """The weather, asynchronously."""
        with tracer.start_as_current_span("lookup"):
            await asyncio.sleep(0)
        return f"{city}: 17 °C"

    agent = weather_agent(aweather, answer="17 °C")
    asyncio.run(agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]}))

    spans = spans_of(exporter)
    assert_child_of(one(spans, "lookup"), one(spans, "execute_tool aweather"))
    assert_quiet(caplog)


def test_parallel_tool_calls_each_see_their_own_tool_span(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracer = memory_provider[0].get_tracer("test")
    both_started = threading.Barrier(2, timeout=10)

    def lookup(what: str, city: str) -> str:
        both_started.wait()  # both tool spans are current, each in its own thread, at once
        with tracer.start_as_current_span(f"lookup {what}"):
            return f"{city}: {what}"

    @tool
    def weather_now(city: str) -> str:
        """The weather now."""
        return lookup("weather", city)

    @tool
    def time_now(city: str) -> str:
        """The time now."""
        return lookup("time", city)

    model = ScriptedModel(
        responses=[
            step(
                "Both at once.",
                call("weather_now", {"city": "Paris"}, "call_w"),
                call("time_now", {"city": "Lyon"}, "call_t"),
            ),
            AIMessage(content="sunny, noon"),
        ]
    )
    ask(create_agent(model, [weather_now, time_now], name="weather"))

    spans = spans_of(exporter)
    assert_child_of(one(spans, "lookup weather"), one(spans, "execute_tool weather_now"))
    assert_child_of(one(spans, "lookup time"), one(spans, "execute_tool time_now"))
    assert_quiet(caplog)


def test_runs_leave_the_current_span_as_they_found_it(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    tracer = memory_provider[0].get_tracer("test")
    before = trace.get_current_span()

    sync_probe = ContextProbe()
    with tracer.start_as_current_span("request") as request:
        ask(weather_agent(get_weather, middleware=[sync_probe]))
        assert trace.get_current_span() is request
    assert trace.get_current_span() is before
    sync_probe.assert_restored(calls=3)  # model, tool, model

    @tool
    async def aweather(city: str) -> str:
        """The weather, asynchronously."""
        return f"{city}: 17 °C"

    async_probe = ContextProbe()

    async def main() -> None:
        with tracer.start_as_current_span("async request") as async_request:
            agent = weather_agent(aweather, middleware=[async_probe])
            await agent.ainvoke({"messages": [{"role": "user", "content": QUESTION}]})
            assert trace.get_current_span() is async_request

    asyncio.run(main())
    assert trace.get_current_span() is before
    async_probe.assert_restored(calls=3)
    assert len([s for s in spans_of(exporter) if s.name == "invoke_agent weather"]) == 2
    assert_quiet(caplog)


def test_code_in_a_sync_model_call_sees_the_chat_span(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = TracedModel(
        responses=[step("Weather?", call("get_weather", {"city": "Paris"}, "c1")), AIMessage("ok")],
        tracer=memory_provider[0].get_tracer("test"),
    )
    ask(create_agent(model, [get_weather], name="weather"))

    spans = spans_of(exporter)
    clients = [s for s in spans if s.name == "model client"]
    chats = {s.context.span_id: s for s in spans if s.name == "chat TracedModel" and s.context}
    assert len(clients) == len(chats) == 2
    for client in clients:
        assert_child_of(client, chats[parent_of(client) or 0])
    assert_quiet(caplog)


def test_a_batch_of_prompts_is_recorded_but_not_made_current(
    exporter: InMemorySpanExporter,
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """LangChain starts every run of a batch before it ends the first: no attach unwinds."""
    tracer = memory_provider[0].get_tracer("test")
    inside: list[Span] = []

    @tool
    def poll(city: str) -> str:
        """Asks two models at once."""
        before = trace.get_current_span()
        voters = TracedModel(responses=[AIMessage("yes"), AIMessage("no")], tracer=tracer)
        prompts: list[list[BaseMessage]] = [[HumanMessage(city)], [HumanMessage(city + "?")]]
        voters.generate(prompts, callbacks=ensure_config()["callbacks"])  # the tool's child runs
        inside.extend((before, trace.get_current_span()))
        return "yes, no"

    ask(weather_agent(poll))

    spans = spans_of(exporter)
    poll_span = one(spans, "execute_tool poll")
    assert [s.name for s in spans if parent_of(s) == poll_span.context.span_id] == [
        "model client",
        "model client",
        "chat TracedModel",
        "chat TracedModel",
    ]
    assert inside[0] is inside[1]
    assert_quiet(caplog)


def test_a_run_ending_in_another_context_logs_no_detach_error(
    exporter: InMemorySpanExporter, caplog: pytest.LogCaptureFixture
) -> None:
    """The handler cannot undo an attach from another context, and must not try."""
    handler = LangChainInstrumentor().handler
    assert handler is not None
    session_id, tool_id = uuid4(), uuid4()
    current: list[Span] = []

    def start() -> None:
        metadata = {"ls_integration": "langchain_create_agent"}
        handler.on_chain_start({}, {"messages": []}, run_id=session_id, metadata=metadata)
        handler.on_tool_start(
            {"name": "get_weather"},
            "Paris",
            run_id=tool_id,
            parent_run_id=session_id,
            tool_call_id="call_1",
        )
        current.append(trace.get_current_span())

    contextvars.copy_context().run(start)
    ending = threading.Thread(
        target=handler.on_tool_end,
        args=(ToolMessage("Paris: 18 °C", tool_call_id="call_1"),),
        kwargs={"run_id": tool_id, "parent_run_id": session_id},
    )
    ending.start()
    ending.join()
    handler.on_chain_end({"messages": []}, run_id=session_id)

    spans = spans_of(exporter)
    tool_span = one(spans, "execute_tool get_weather")
    assert current[0].get_span_context() == tool_span.context
    assert attrs(tool_span)["otel_prov.observation"] == "Paris: 18 °C"
    assert [s.name for s in spans] == ["execute_tool get_weather", "invoke_agent agent"]
    assert_quiet(caplog)


def test_uninstrumenting_during_a_tool_call_still_restores_the_context(
    memory_provider: tuple[TracerProvider, InMemorySpanExporter],
    caplog: pytest.LogCaptureFixture,
) -> None:
    provider, exporter = memory_provider
    instrumentor = LangChainInstrumentor()

    @tool
    def last_call(city: str) -> str:
        """Switches the instrumentation off while it runs."""
        instrumentor.uninstrument()
        return f"{city}: 18 °C"

    probe = ContextProbe()
    instrumentor.instrument(tracer_provider=provider)
    try:
        ask(weather_agent(last_call, middleware=[probe]))
    finally:
        if instrumentor.handler is not None:
            instrumentor.uninstrument()
    probe.assert_restored(calls=3)
    assert [s.name for s in spans_of(exporter)] == ["chat ScriptedModel"]
    assert_quiet(caplog)


# --- LangGraph interrupt() and resume: the human-in-the-loop middleware (issue 30.2) ---
@tool
def send_email(to: str) -> str:
    """Send the report to someone."""
    return f"sent to {to}"


def _supervised(decision: dict[str, Any]) -> None:
    """An agent that stops for approval before each mail (LangGraph's ``interrupt()``), run
    until it stops, then resumed with ``decision`` by user u-7."""
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.types import Command

    model = ScriptedModel(
        responses=[
            step("I mail bob.", call("send_email", {"to": "bob"}, "call_1")),
            AIMessage(content="done"),
        ]
    )
    agent = create_agent(
        model,
        [send_email],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"send_email": True})],
        checkpointer=InMemorySaver(),
        name="mailer",
    )
    config: Any = {"configurable": {"thread_id": "t-1"}, "metadata": {"user_id": "u-7"}}
    first = agent.invoke({"messages": [{"role": "user", "content": "Mail bob"}]}, config)
    assert first["__interrupt__"]
    resumed = agent.invoke(Command(resume={"decisions": [decision]}), config)
    assert resumed["messages"][-1].content == "done"


def _approval_events(spans: Sequence[ReadableSpan]) -> list[tuple[ReadableSpan, dict[str, Any]]]:
    return [
        (span, dict(event.attributes or {}))
        for span in spans
        for event in span.events
        if event.name == sc.APPROVAL_EVENT
    ]


@pytest.mark.parametrize(
    ("decision", "recorded", "ran_with"),
    [
        ({"type": "approve"}, "approved", {"to": "bob"}),
        (
            {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "carol"}}},
            "modified",
            {"to": "carol"},
        ),
    ],
    ids=["approve", "edit"],
)
def test_an_allowed_call_after_an_interrupt_is_informed_by_the_decision(
    exporter: InMemorySpanExporter,
    decision: dict[str, Any],
    recorded: str,
    ran_with: dict[str, Any],
) -> None:
    _supervised(decision)
    spans = spans_of(exporter)
    ((span, event),) = _approval_events(spans)
    assert span.name == "execute_tool send_email"
    assert event[sc.OTEL_PROV_APPROVAL_DECISION] == recorded
    assert event[sc.OTEL_PROV_APPROVAL_APPROVER_ID] == "u-7"
    assert event[sc.OTEL_PROV_APPROVAL_WAIT] >= 0
    attributes = dict(span.attributes or {})
    assert attributes[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert json.loads(attributes[sc.OTEL_PROV_ARGUMENTS]) == ran_with
    record = map_spans(
        [record_from_span(s) for s in spans if s.context.trace_id == span.context.trace_id]
    )
    assert record.problems == ()
    triples = set(record.triples)
    (decided,) = [s for s, p, o in triples if p == RDF_TYPE and o == O.Approval]
    assert (
        activity_iri(span.context.trace_id, span.context.span_id),
        P.wasInformedBy,
        decided,
    ) in triples
    sessions = [s for s in spans if s.name == "invoke_agent mailer"]
    assert len(sessions) == 2  # the run up to the interrupt, and the resumed one
    assert all(dict(s.attributes or {})[sc.USER_ID] == "u-7" for s in sessions)


def test_a_call_rejected_at_an_interrupt_is_on_record_as_not_run(
    exporter: InMemorySpanExporter,
) -> None:
    _supervised({"type": "reject", "message": "not bob"})
    spans = spans_of(exporter)
    ((span, event),) = _approval_events(spans)
    assert span.name == "invoke_agent mailer"
    assert event[sc.OTEL_PROV_APPROVAL_DECISION] == "rejected"
    assert event[sc.OTEL_PROV_APPROVAL_REASON] == "not bob"
    assert event[sc.GEN_AI_TOOL_CALL_ID] == "call_1"
    assert event[sc.GEN_AI_TOOL_NAME] == "send_email"
    assert not [s for s in spans if s.name == "execute_tool send_email"]
