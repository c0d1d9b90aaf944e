"""Framework agents, instrumented, into a real Oxigraph server over HTTP, read back with SPARQL.

Each test runs a real agent loop offline with the scripted models and tools of
``tests/instrumentation`` (LangChain ``create_agent``, the OpenAI Agents SDK, smolagents
``ToolCallingAgent``, and the same LangChain agent under OpenInference's instrumentor), with
the instrumentation and ``ProvSpanProcessor(SparqlUpdateExporter(...))`` on one
``TracerProvider``, flushes, and asks the server's query endpoint what it holds.

Expected values come from what the scripted model and tools were given, or from what the
framework itself reports (its result, its own tracing records), never from our output.  The
only constants are the contract's (``final_answer``, OTel's ``_OTHER`` error type).

One server serves the module; every test writes to a named graph of its own.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import json
import sys
import threading
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_prov
from otel_prov.exporters import SparqlUpdateExporter
from otel_prov.prov._vocab import O
from tests.integration.store_queries import select
from tests.servers import SparqlServer, start_oxigraph

pytestmark = pytest.mark.integration

PREFIXES = (
    "PREFIX prov: <http://www.w3.org/ns/prov#>\nPREFIX oprov: <https://w3id.org/otel-prov/ns#>\n"
)
AGENT_NAME = "weather"
FINAL_ANSWER = "final_answer"  # the contract's action of a step that answers
OTEL_OTHER = "_OTHER"  # OTel's error.type when the exception class is unknown
FLUSH_MILLIS = 20_000
Row = dict[str, str]


# --- what a run should leave in the store ----------------------------------------------
@dataclass(frozen=True)
class Scenario:
    """One run: the city the user asks about and the tool-call id the model gives."""

    city: str
    call_id: str
    failing: bool = False  # the tool raises (Atlantis, or LangChain's broken tool)
    gate: threading.Barrier | None = None  # the tool waits here (concurrency tests)

    @property
    def question(self) -> str:
        return f"Weather in {self.city}?"

    @property
    def thought(self) -> str:
        return f"I need the weather in {self.city} first."

    @property
    def answer(self) -> str:
        return f"Fine in {self.city} «{self.call_id}»."  # non-ASCII: escaping end to end


@dataclass(frozen=True)
class Step:
    thought: str | None  # None: no Thought entity
    action: str | None  # None: no oprov:action


@dataclass(frozen=True)
class ToolCall:
    name: str
    call_id: str
    arguments: str  # the exact JSON the model chose
    iteration: int
    observation: str | None = None  # None: the call failed, nothing generated
    error_type: str | None = None
    error_message_parts: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelCall:
    iteration: int
    model: str | None
    input_tokens: int | None
    output_tokens: int | None


@dataclass(frozen=True)
class Expected:
    agent: str | None
    question: str
    answer: str | None
    status: str  # the session's own: "ok" when the agent carried on past a failed call
    steps: tuple[Step, ...]
    tools: tuple[ToolCall, ...]
    models: tuple[ModelCall, ...]
    verbatim: bool = True
    """False for third-party spans: content is their payload, which must contain the text;
    the exact text, agent, thoughts and token counts are checked by
    ``test_openinference_records_what_ours_does``."""


# --- the pipeline: instrumentation -> ProvSpanProcessor -> SPARQL Update -> Oxigraph ---
@dataclass
class Pipeline:
    server: SparqlServer
    graph: str
    provider: TracerProvider
    processor: otel_prov.ProvSpanProcessor
    memory: InMemorySpanExporter
    closed: bool = False

    def deliver(self) -> None:
        """Export every ended session and wait until the store acknowledged it."""
        assert self.processor.force_flush(FLUSH_MILLIS), "the store did not get everything"

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.provider.shutdown()  # flushes, then shuts the processor and exporter down

    def select(self, where: str, modifiers: str = "") -> list[Row]:
        query = f"{PREFIXES}SELECT * WHERE {{ GRAPH <{self.graph}> {{ {where} }} }} {modifiers}"
        return select(self.server, query)

    def triple_count(self) -> int:
        """Triples of runs: a writer's checkpoints (its chain's head, at shutdown too) are
        about the writer, not about any run."""
        (row,) = select(
            self.server,
            f"""SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{self.graph}> {{
  ?s ?p ?o FILTER NOT EXISTS {{ ?s a {O.Checkpoint} }} }} }}""",
        )
        return int(row["n"])


@pytest.fixture(scope="module")
def oxigraph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SparqlServer]:
    server = start_oxigraph(tmp_path_factory.mktemp("frameworks-oxigraph"))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def pipeline(oxigraph: SparqlServer, tmp_path: Path) -> Iterator[Pipeline]:
    graph = f"urn:otel-prov:test:{uuid.uuid4().hex}"  # each test reads only what it wrote
    exporter = SparqlUpdateExporter(
        oxigraph.update_endpoint,
        oxigraph.query_endpoint,
        graph=graph,
        spool_dir=tmp_path / "spool",
    )
    processor = otel_prov.ProvSpanProcessor(exporter, schedule_delay=0.05)
    provider = TracerProvider(resource=Resource.create({"service.name": "frameworks-test"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    provider.add_span_processor(processor)
    built = Pipeline(oxigraph, graph, provider, processor, memory)
    try:
        yield built
    finally:
        built.close()


# --- one driver per instrumentation path -----------------------------------------------
class Driver(ABC):
    """Instruments one framework on the pipeline's provider and runs its scripted agent."""

    requires: tuple[str, ...] = ()

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.instrumented = False

    def instrument(self) -> None:
        self._instrument()
        self.instrumented = True

    def uninstrument(self) -> None:
        if self.instrumented:
            self.instrumented = False
            self._uninstrument()

    def close(self) -> None:
        self.uninstrument()

    @abstractmethod
    def _instrument(self) -> None: ...

    @abstractmethod
    def _uninstrument(self) -> None: ...

    @abstractmethod
    def run(self, scenario: Scenario) -> Expected:
        """Run the agent once; what the store must then hold, from the script and the run."""


LANGCHAIN_USAGE = ((21, 8), (34, 3))  # (input, output) tokens the scripted model reports


class LangChainDriver(Driver):
    requires: tuple[str, ...] = ("langchain.agents",)

    def __init__(self, provider: TracerProvider) -> None:
        super().__init__(provider)
        from tests.instrumentation import test_langchain

        _undo_openllmetry_leftovers()
        self.lc: Any = test_langchain
        self.instrumentor: Any = self._make_instrumentor()

    def _make_instrumentor(self) -> Any:
        from otel_prov.instrumentation.langchain import LangChainInstrumentor

        return LangChainInstrumentor()

    def _instrument(self) -> None:
        self.instrumentor.instrument(tracer_provider=self.provider)

    def _uninstrument(self) -> None:
        self.instrumentor.uninstrument()

    def _tool(self, scenario: Scenario) -> Any:
        if scenario.failing:
            return self.lc.broken_weather
        original = self.lc.get_weather
        gate = scenario.gate
        if gate is None:
            return original
        from langchain_core.tools import StructuredTool

        def gated(city: str) -> str:
            gate.wait()
            return str(original.func(city))  # the raw function: no nested tool run

        return StructuredTool.from_function(
            gated, name=original.name, description=original.description
        )

    def run(self, scenario: Scenario) -> Expected:
        from langchain.agents import create_agent
        from langchain_core.messages import AIMessage

        tool = self._tool(scenario)
        args = {"city": scenario.city}
        replies = [
            AIMessage(
                content=scenario.thought,
                tool_calls=[self.lc.call(tool.name, args, scenario.call_id)],
                usage_metadata=_lc_usage(*LANGCHAIN_USAGE[0]),
            ),
            AIMessage(content=scenario.answer, usage_metadata=_lc_usage(*LANGCHAIN_USAGE[1])),
        ]
        model = self.lc.ScriptedModel(responses=replies)
        agent = create_agent(model, [tool], name=AGENT_NAME)
        model_name = type(model).__name__  # a chat model's serialized name
        models = tuple(
            ModelCall(number, model_name, tokens_in, tokens_out)
            for number, (tokens_in, tokens_out) in enumerate(LANGCHAIN_USAGE, 1)
        )
        arguments = json.dumps(args)  # the model chose a dict: its JSON text
        if scenario.failing:
            with pytest.raises(ConnectionError) as raised:
                self.lc.ask(agent, scenario.question)
            return Expected(
                agent=agent.name,
                question=scenario.question,
                answer=None,
                status="error",
                steps=(Step(scenario.thought, tool.name),),
                tools=(
                    ToolCall(
                        tool.name,
                        scenario.call_id,
                        arguments,
                        1,
                        error_type=type(raised.value).__name__,
                        error_message_parts=(str(raised.value),),
                    ),
                ),
                models=models[:1],  # the run stopped at the tool's exception
            )
        result = self.lc.ask(agent, scenario.question)
        messages = result["messages"]
        assert messages[-1].content == scenario.answer
        (observation,) = [m.content for m in messages if m.type == "tool"]
        return Expected(
            agent=agent.name,
            question=scenario.question,
            answer=messages[-1].content,
            status="ok",
            steps=(Step(scenario.thought, tool.name), Step(scenario.answer, FINAL_ANSWER)),
            tools=(ToolCall(tool.name, scenario.call_id, arguments, 1, observation),),
            models=models,
        )


def _undo_openllmetry_leftovers() -> None:
    """Put back what OpenLLMetry's LangChain instrumentor wrapped, when it is not instrumented.

    ``opentelemetry-instrumentation-langchain`` 0.62 cannot uninstrument under
    ``opentelemetry-instrumentation`` 0.66: it calls ``unwrap("langchain_core.callbacks",
    "BaseCallbackManager.__init__")``, which the newer ``unwrap`` reads as class
    ``callbacks`` of module ``langchain_core``, so nothing is unwrapped.  Its callback
    handler then joins every later LangChain run of the process (``test_third_party``
    instruments it), and its spans become the parents of OpenInference's root CHAIN, which
    the mapper then no longer takes for the session.
    """
    openllmetry = sys.modules.get("opentelemetry.instrumentation.langchain")
    if openllmetry is None or openllmetry.LangchainInstrumentor().is_instrumented_by_opentelemetry:
        return
    from langchain.agents.middleware.types import AgentMiddleware
    from langchain_core.callbacks import BaseCallbackManager
    from langgraph.pregel import Pregel
    from langgraph.types import Command

    for cls in (BaseCallbackManager, Pregel, Command, AgentMiddleware):
        for name, value in list(vars(cls).items()):
            wrapper = getattr(value, "_self_wrapper", None)
            if str(getattr(wrapper, "__module__", "")).startswith(openllmetry.__name__):
                setattr(cls, name, value.__wrapped__)


def _lc_usage(tokens_in: int, tokens_out: int) -> Any:
    return {
        "input_tokens": tokens_in,
        "output_tokens": tokens_out,
        "total_tokens": tokens_in + tokens_out,
    }


class OpenInferenceDriver(LangChainDriver):
    """The same LangChain agent under OpenInference's instrumentor (no iteration spans:
    the mapper infers the steps from the model-call -> tool-call sequence)."""

    requires: tuple[str, ...] = ("langchain.agents", "openinference.instrumentation.langchain")

    def _make_instrumentor(self) -> Any:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        return LangChainInstrumentor()

    def run_strict(self, scenario: Scenario) -> Expected:
        """What our own instrumentor's spans give for the same run."""
        return super().run(scenario)

    def run(self, scenario: Scenario) -> Expected:
        strict = self.run_strict(scenario)
        steps = tuple(
            # An inferred step's action is the tool it called; an answering step has none.
            Step(None, next((t.name for t in strict.tools if t.iteration == number), None))
            for number, _ in enumerate(strict.steps, 1)
        )
        # OpenInference reports no model name for this scripted model.
        models = tuple(dataclasses.replace(m, model=None) for m in strict.models)
        return dataclasses.replace(strict, agent=None, steps=steps, models=models, verbatim=False)


class OpenAIAgentsDriver(Driver):
    requires: tuple[str, ...] = ("agents",)

    def __init__(self, provider: TracerProvider) -> None:
        super().__init__(provider)
        from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from tests.instrumentation import scripted_openai, test_openai_agents

        self.oa: Any = test_openai_agents
        self.scripted: Any = scripted_openai
        self.instrumentor: Any = OpenAIAgentsInstrumentor()
        self.recorder: Any = test_openai_agents.Recorder()  # the SDK's own span records
        self.registered: list[Any] = []

    def _set_processors(self, processors: list[Any]) -> None:
        from agents.tracing import set_trace_processors

        set_trace_processors(processors)

    def _instrument(self) -> None:
        self.instrumentor.instrument(tracer_provider=self.provider)
        # Ours and the recorder only: OpenAI's exporter would try to upload every trace
        # (see tests/instrumentation/test_openai_agents.py).
        self.registered = [self.instrumentor.processor, self.recorder]
        self._set_processors(self.registered)

    def _uninstrument(self) -> None:
        self.instrumentor.uninstrument()
        # The SDK has no public removal API: even left registered, ours must stay inert.
        self._set_processors(self.registered)

    def close(self) -> None:
        super().close()
        self._set_processors([])

    def _agent(self, gate: threading.Barrier | None) -> Any:
        if gate is None:
            return self.oa.AGENT
        from agents import function_tool

        @function_tool(name_override="get_weather")
        def gated(city: str) -> str:
            """The weather in a city, once the other agent is in its tool too."""
            gate.wait()
            return f"fine in {city}"

        return self.oa.AGENT.clone(tools=[gated])

    def run(self, scenario: Scenario) -> Expected:
        from agents import RunConfig, Runner

        # Odd spacing on purpose: the model's exact string must reach the store.
        arguments = json.dumps({"city": scenario.city}).replace(": ", ":  ")
        steps = [
            self.oa._tool_step(call_id=scenario.call_id, args=arguments, thought=scenario.thought),
            self.oa._answer_step(scenario.answer),
        ]
        reasoning, function_call = steps[0]
        trace_id = f"trace_{uuid.uuid4().hex}"  # to find this run's SDK spans
        provider = self.scripted.ScriptedProvider(self.scripted.ScriptedModel(steps))
        agent = self._agent(scenario.gate)
        result = Runner.run_sync(
            agent,
            scenario.question,
            run_config=RunConfig(model_provider=provider, trace_id=trace_id),
        )
        assert result.final_output == scenario.answer
        sdk_spans = [s for s in list(self.recorder.spans) if s.trace_id == trace_id]
        generations = sorted(
            (s for s in sdk_spans if s.span_data.type == "generation"), key=lambda s: s.started_at
        )
        models = tuple(
            ModelCall(
                number,
                g.span_data.model,
                g.span_data.usage["input_tokens"],
                g.span_data.usage["output_tokens"],
            )
            for number, g in enumerate(generations, 1)
        )
        tool = ToolCall(
            function_call.name,
            function_call.call_id,
            function_call.arguments,
            1,
            observation=next(
                str(item.output)
                for item in result.new_items
                if item.type == "tool_call_output_item"
            ),
        )
        if scenario.failing:
            (function,) = [s for s in sdk_spans if s.span_data.type == "function"]
            error = function.error
            assert error, "the SDK recorded no error for the failing tool"
            detail = (error.get("data") or {}).get("error")
            tool = dataclasses.replace(
                tool,
                observation=None,
                error_type=OTEL_OTHER,  # the SDK reports no exception class
                error_message_parts=tuple(p for p in (error["message"], detail) if p),
            )
        return Expected(
            agent=agent.name,
            question=scenario.question,
            answer=str(result.final_output),
            status="ok",  # a failed call or not: the run went on and answered
            steps=(
                Step(reasoning.summary[0].text, function_call.name),
                Step(None, FINAL_ANSWER),
            ),
            tools=(tool,),
            models=models,
        )


class SmolagentsDriver(Driver):
    requires: tuple[str, ...] = ("smolagents",)

    def __init__(self, provider: TracerProvider) -> None:
        super().__init__(provider)
        from otel_prov.instrumentation.smolagents import SmolagentsInstrumentor
        from tests.instrumentation import test_smolagents

        self.sm: Any = test_smolagents
        self.instrumentor: Any = SmolagentsInstrumentor()

    def _instrument(self) -> None:
        self.instrumentor.instrument(tracer_provider=self.provider)

    def _uninstrument(self) -> None:
        self.instrumentor.uninstrument()

    def _tool(self, gate: threading.Barrier | None) -> Any:
        original = self.sm.get_weather
        if gate is None:
            return original
        gated = copy.copy(original)
        forward: Callable[..., str] = original.forward

        def wait_then_forward(city: str) -> str:
            gate.wait()
            return forward(city)

        gated.forward = wait_then_forward
        return gated

    def run(self, scenario: Scenario) -> Expected:
        from smolagents import ToolCallingAgent

        arguments = json.dumps({"city": scenario.city}).replace(": ", ":  ")
        messages = [
            self.sm._tool_step(args=arguments, call_id=scenario.call_id),
            self.sm._answer_step(scenario.answer),
        ]
        # Read the script first: smolagents parses the arguments in place during the run.
        script = [
            (
                m.content,
                m.tool_calls[0].function.name,
                m.tool_calls[0].id,
                m.tool_calls[0].function.arguments,
                m.token_usage,
            )
            for m in messages
        ]
        model = self.sm.ScriptedModel(messages)
        agent = ToolCallingAgent(
            tools=[self._tool(scenario.gate)], model=model, name=AGENT_NAME, verbosity_level=0
        )
        expected_error: Exception | None = None
        if scenario.failing:
            try:
                self.sm.get_weather.forward(city=scenario.city)
            except Exception as exc:  # noqa: BLE001 - the reference failure, compared below
                expected_error = exc
            assert expected_error is not None
        result = agent.run(scenario.question)
        assert result == scenario.answer
        first_step = next(s for s in agent.memory.steps if type(s).__name__ == "ActionStep")
        tools = tuple(
            ToolCall(
                name,
                call_id,
                call_arguments,
                number,
                observation=None if expected_error else str(first_step.observations),
                error_type=type(expected_error).__name__ if expected_error else None,
                error_message_parts=(str(expected_error),) if expected_error else (),
            )
            for number, (_, name, call_id, call_arguments, _) in enumerate(script, 1)
            if name != FINAL_ANSWER  # smolagents' final_answer is not a tool call span
        )
        return Expected(
            agent=agent.name,
            question=scenario.question,
            answer=str(result),
            status="ok",  # a failed call or not: the run went on and answered
            steps=tuple(Step(thought, name) for thought, name, *_ in script),
            tools=tools,
            models=tuple(
                ModelCall(number, model.model_id, usage.input_tokens, usage.output_tokens)
                for number, (*_, usage) in enumerate(script, 1)
            ),
        )


DRIVERS: dict[str, type[Driver]] = {
    "langchain": LangChainDriver,
    "openai_agents": OpenAIAgentsDriver,
    "smolagents": SmolagentsDriver,
    "openinference_langchain": OpenInferenceDriver,
}


def _make_driver(name: str, pipeline: Pipeline) -> Driver:
    cls = DRIVERS[name]
    for module in cls.requires:
        importlib.import_module(module)  # a broken install fails here, never skips
    return cls(pipeline.provider)


@pytest.fixture(params=sorted(DRIVERS))
def driver(request: pytest.FixtureRequest, pipeline: Pipeline) -> Iterator[Driver]:
    instrumented = _make_driver(request.param, pipeline)
    instrumented.instrument()
    try:
        yield instrumented
    finally:
        instrumented.close()


# --- reading the store back ------------------------------------------------------------
def sessions(p: Pipeline) -> list[Row]:
    return p.select(
        """
        ?session a oprov:AgentSession, prov:Activity ;
                 oprov:traceId ?trace ; oprov:spanId ?span ; oprov:status ?status .
        OPTIONAL { ?session prov:used ?q . ?q a oprov:Question, prov:Entity ; prov:value ?question }
        OPTIONAL { ?a a oprov:Answer, prov:Entity ; prov:wasGeneratedBy ?session ;
                      prov:value ?answer }
        """
    )


def agents_of(p: Pipeline, session: str) -> list[str | None]:
    rows = p.select(
        f"""
        <{session}> prov:wasAssociatedWith ?agent .
        ?agent a oprov:AIAgent, prov:SoftwareAgent, prov:Agent .
        OPTIONAL {{ ?agent oprov:agentName ?name }}
        """
    )
    return [row.get("name") for row in rows]


def iterations_of(p: Pipeline, session: str) -> list[Row]:
    return p.select(
        f"""
        ?it a oprov:Iteration, prov:Activity ; oprov:partOf <{session}> ;
            oprov:iterationNumber ?n .
        OPTIONAL {{ ?it oprov:action ?action }}
        OPTIONAL {{ ?t a oprov:Thought, prov:Entity ; prov:wasGeneratedBy ?it ;
                      prov:value ?thought }}
        OPTIONAL {{ ?it prov:wasInformedBy ?previous . ?previous a oprov:Iteration }}
        """,
        "ORDER BY ?n",
    )


def tool_calls_of(p: Pipeline, session: str) -> list[Row]:
    """Tool calls under the session, in start order, with the step whose decision they ran."""
    return p.select(
        f"""
        ?call a oprov:ToolCall, prov:Activity ; oprov:partOf+ <{session}> ;
              oprov:toolName ?name ; oprov:status ?status ; prov:startedAtTime ?start ;
              prov:used ?args .
        ?args a oprov:Arguments, prov:Entity ; prov:value ?arguments ; prov:wasGeneratedBy ?it .
        ?it a oprov:Iteration ; oprov:iterationNumber ?n .
        OPTIONAL {{ ?call oprov:toolCallId ?id }}
        OPTIONAL {{ ?call oprov:errorType ?errorType }}
        OPTIONAL {{ ?call oprov:errorMessage ?errorMessage }}
        OPTIONAL {{ ?obs a oprov:Observation, prov:Entity ; prov:wasGeneratedBy ?call ;
                        prov:value ?observation .
                   OPTIONAL {{ ?next a oprov:Iteration ; prov:used ?obs ;
                                     oprov:iterationNumber ?usedBy }} }}
        """,
        "ORDER BY ?start",
    )


def model_calls_of(p: Pipeline, session: str) -> list[Row]:
    """Model calls in start order, with their iteration (parent, or the step they opened)."""
    return p.select(
        f"""
        ?m a oprov:ModelCall, prov:Activity ; oprov:partOf+ <{session}> ;
           prov:startedAtTime ?start .
        OPTIONAL {{ ?m oprov:modelName ?model }}
        OPTIONAL {{ ?m oprov:inputTokens ?in }}
        OPTIONAL {{ ?m oprov:outputTokens ?out }}
        OPTIONAL {{ ?it a oprov:Iteration ; oprov:iterationNumber ?n .
                   {{ ?m oprov:partOf+ ?it }}
                   UNION {{ ?it oprov:traceId ?trace ; oprov:spanId ?sid .
                           ?m oprov:traceId ?trace ; oprov:spanId ?sid }} }}
        """,
        "ORDER BY ?start",
    )


def activities_under(p: Pipeline, session: str) -> set[str]:
    rows = p.select(f"?a a prov:Activity ; oprov:partOf+ <{session}> .")
    return {row["a"] for row in rows} | {session}


def generated_by(p: Pipeline, activity: str) -> list[str]:
    return [row["e"] for row in p.select(f"?e prov:wasGeneratedBy <{activity}> .")]


def _int(value: str | None) -> int | None:
    return int(value) if value is not None else None


def _same_text(stored: str | None, expected: str, verbatim: bool) -> bool:
    if stored is None:
        return False
    return stored == expected if verbatim else expected in stored


def find_session(rows: list[Row], expected: Expected) -> Row:
    found = [r for r in rows if _same_text(r.get("question"), expected.question, False)]
    assert len(found) == 1, f"one session asking {expected.question!r} expected, got {rows}"
    return found[0]


def assert_session_stored(p: Pipeline, session: Row, expected: Expected) -> None:
    """Everything ``expected`` says about one session, as the store answers it."""
    iri, verbatim = session["session"], expected.verbatim
    assert session["status"] == expected.status
    assert _same_text(session.get("question"), expected.question, verbatim), session
    if expected.answer is None:
        assert "answer" not in session, session
    else:
        assert _same_text(session.get("answer"), expected.answer, verbatim), session
    if verbatim:
        assert agents_of(p, iri) == [expected.agent]

    iterations = iterations_of(p, iri)
    assert [int(r["n"]) for r in iterations] == list(range(1, len(expected.steps) + 1))
    assert [r.get("action") for r in iterations] == [s.action for s in expected.steps]
    if verbatim:
        assert [r.get("thought") for r in iterations] == [s.thought for s in expected.steps]
    order = [r["it"] for r in iterations]
    assert [r.get("previous") for r in iterations] == [None, *order[:-1]]

    calls = tool_calls_of(p, iri)
    assert len(calls) == len(expected.tools), calls
    for row, tool in zip(calls, expected.tools, strict=True):
        assert (row["name"], row.get("id"), row["arguments"], int(row["n"])) == (
            tool.name,
            tool.call_id,
            tool.arguments,
            tool.iteration,
        )
        if tool.observation is None:
            assert row["status"] == "error"
            assert row.get("errorType") == tool.error_type
            message = row.get("errorMessage") or ""
            assert all(part in message for part in tool.error_message_parts), (message, tool)
            assert "observation" not in row
            assert generated_by(p, row["call"]) == []  # nothing pretends the call succeeded
        else:
            assert row["status"] == "ok"
            assert "errorType" not in row and "errorMessage" not in row
            assert _same_text(row.get("observation"), tool.observation, verbatim), row
            assert _int(row.get("usedBy")) == tool.iteration + 1  # the next step used it

    models = model_calls_of(p, iri)
    stored_models = [
        (_int(r.get("n")), r.get("model"), _int(r.get("in")), _int(r.get("out"))) for r in models
    ]
    wanted = [(m.iteration, m.model, m.input_tokens, m.output_tokens) for m in expected.models]
    if not verbatim:  # token counts: see test_openinference_records_what_ours_does
        stored_models = [(*entry[:2], None, None) for entry in stored_models]
        wanted = [(*entry[:2], None, None) for entry in wanted]
    assert stored_models == wanted


def assert_spans_stored(p: Pipeline, trace_id: str) -> None:
    """Every span the SDK exported for the trace is an activity with the same ids."""
    exported = {
        format(span.context.span_id, "016x")
        for span in p.memory.get_finished_spans()
        if span.context is not None and format(span.context.trace_id, "032x") == trace_id
    }
    rows = p.select("?a a prov:Activity ; oprov:traceId ?trace ; oprov:spanId ?span .")
    stored = {row["span"] for row in rows if row["trace"] == trace_id}
    assert exported and stored == exported


# --- tests -----------------------------------------------------------------------------
def test_agent_run_is_queryable_in_the_store(driver: Driver, pipeline: Pipeline) -> None:
    expected = driver.run(Scenario("Paris", "call_paris"))
    pipeline.deliver()
    (session,) = sessions(pipeline)
    assert_session_stored(pipeline, session, expected)
    assert_spans_stored(pipeline, session["trace"])


def test_failed_tool_call_is_an_error_activity_without_observation(
    driver: Driver, pipeline: Pipeline
) -> None:
    expected = driver.run(Scenario("Atlantis", "call_atlantis", failing=True))
    assert [tool.observation for tool in expected.tools] == [None]
    pipeline.deliver()
    (session,) = sessions(pipeline)
    assert_session_stored(pipeline, session, expected)
    assert_spans_stored(pipeline, session["trace"])


def test_concurrent_agents_in_threads_are_separate_sessions(
    driver: Driver, pipeline: Pipeline
) -> None:
    gate = threading.Barrier(2, timeout=20)  # both agents are inside their tool at once
    scenarios = [Scenario(city, f"call_{city.lower()}", gate=gate) for city in ("Paris", "Lyon")]
    results: dict[str, Expected] = {}
    errors: list[BaseException] = []

    def run(scenario: Scenario) -> None:
        try:
            results[scenario.city] = driver.run(scenario)
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)
            gate.abort()

    threads = [threading.Thread(target=run, args=(s,)) for s in scenarios]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors
    assert sorted(results) == ["Lyon", "Paris"]
    pipeline.deliver()

    stored = sessions(pipeline)
    assert len(stored) == 2
    assert len({row["trace"] for row in stored}) == 2
    activities = []
    for expected in results.values():
        session = find_session(stored, expected)
        assert_session_stored(pipeline, session, expected)
        assert_spans_stored(pipeline, session["trace"])
        activities.append(activities_under(pipeline, session["session"]))
    first, second = activities
    assert len(first) > 1 and len(second) > 1
    assert not first & second


def test_uninstrumented_run_adds_nothing_to_the_store(driver: Driver, pipeline: Pipeline) -> None:
    driver.run(Scenario("Paris", "call_before"))
    pipeline.deliver()
    assert len(sessions(pipeline)) == 1  # instrumented, the pipeline delivers
    triples, spans = pipeline.triple_count(), len(pipeline.memory.get_finished_spans())
    assert triples > 0 and spans > 0

    driver.uninstrument()
    driver.run(Scenario("Lyon", "call_after"))
    pipeline.deliver()
    pipeline.close()  # whatever might still be pending goes out now
    assert pipeline.triple_count() == triples
    assert len(pipeline.memory.get_finished_spans()) == spans


# --- what the OpenInference path records as our instrumentor does ---------------------
def _same_agent(p: Pipeline, session: str, expected: Expected) -> None:
    assert agents_of(p, session) == [expected.agent]


def _same_thoughts(p: Pipeline, session: str, expected: Expected) -> None:
    stored = [row.get("thought") for row in iterations_of(p, session)]
    assert stored == [step.thought for step in expected.steps]


def _same_tokens(p: Pipeline, session: str, expected: Expected) -> None:
    stored = [(_int(r.get("in")), _int(r.get("out"))) for r in model_calls_of(p, session)]
    assert stored == [(m.input_tokens, m.output_tokens) for m in expected.models]


def _same_content(p: Pipeline, session: str, expected: Expected) -> None:
    (row,) = [r for r in sessions(p) if r["session"] == session]
    (call,) = tool_calls_of(p, session)
    (tool,) = expected.tools
    stored = (row.get("question"), row.get("answer"), call.get("observation"))
    assert stored == (expected.question, expected.answer, tool.observation)


OPENINFERENCE_CHECKS: dict[str, Callable[[Pipeline, str, Expected], None]] = {
    # The agent: OpenInference names it in LangChain's run metadata (lc_agent_name).
    "agent": _same_agent,
    # Thoughts of inferred steps: the LLM span's llm.output_messages.0.message.content.
    "thought": _same_thoughts,
    # Tokens: llm.token_count.prompt / completion.
    "tokens": _same_tokens,
    # The question, answer and tool output text inside OpenInference's JSON payloads.
    "content": _same_content,
}


@pytest.mark.parametrize("check", sorted(OPENINFERENCE_CHECKS))
def test_openinference_records_what_ours_does(check: str, pipeline: Pipeline) -> None:
    """What our own instrumentor records for this run, the OpenInference path should too."""
    driver = _make_driver("openinference_langchain", pipeline)
    assert isinstance(driver, OpenInferenceDriver)
    driver.instrument()
    try:
        expected = driver.run_strict(Scenario("Paris", "call_paris"))
    finally:
        driver.close()
    pipeline.deliver()
    (session,) = sessions(pipeline)
    OPENINFERENCE_CHECKS[check](pipeline, session["session"], expected)


def test_openinference_agent_inside_a_request_is_a_session(pipeline: Pipeline) -> None:
    from opentelemetry.trace import SpanKind

    driver = _make_driver("openinference_langchain", pipeline)
    driver.instrument()
    tracer = pipeline.provider.get_tracer("web-framework")
    try:
        with tracer.start_as_current_span("POST /ask", kind=SpanKind.SERVER) as request:
            expected = driver.run(Scenario("Paris", "call_paris"))
    finally:
        driver.close()
    pipeline.deliver()
    (session,) = sessions(pipeline)
    (parent,) = pipeline.select(
        f"<{session['session']}> oprov:partOf ?request ."
        " ?request a oprov:Span ; oprov:spanId ?span ."
    )
    assert parent["span"] == format(request.get_span_context().span_id, "016x")
    assert_session_stored(pipeline, session, expected)


def test_langchain_retriever_chunks_and_their_sources_are_in_the_store(
    pipeline: Pipeline,
) -> None:
    """A LangChain agent whose tool is a retriever: the store holds the retrieval, one
    Document per document the retriever returned (its text, source and metadata as
    LangChain gave them), and the answer rests on them through the tool's observation."""
    from langchain_core.messages import HumanMessage

    from otel_prov.instrumentation.langchain import LangChainInstrumentor
    from tests.instrumentation.test_langchain import LOUVRE, faq_agent

    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=pipeline.provider)
    try:
        faq_agent().invoke({"messages": [HumanMessage("When is the Louvre open?")]})
    finally:
        instrumentor.uninstrument()
    pipeline.deliver()
    rows = pipeline.select(
        """
        ?answer a oprov:Answer ; prov:wasDerivedFrom ?observation .
        ?observation a oprov:Observation ; prov:wasDerivedFrom ?chunk .
        ?chunk a oprov:Document ; prov:value ?text ; oprov:rank ?rank ;
               oprov:documentMetadata ?metadata ; prov:hadPrimarySource ?source ;
               prov:wasGeneratedBy ?retrieval .
        ?retrieval a oprov:Retrieval ; prov:used [ a oprov:Query ; prov:value ?query ] .
        """,
        "ORDER BY ?rank",
    )
    assert {row["query"] for row in rows} == {"louvre hours"}
    stored = {(row["text"], json.loads(row["metadata"])["source"]) for row in rows}
    assert stored == {(d.page_content, d.metadata["source"]) for d in LOUVRE}
    sources = {row["source"] for row in rows}
    assert "https://www.louvre.fr/en/visit/hours" in sources and len(sources) == len(LOUVRE)
