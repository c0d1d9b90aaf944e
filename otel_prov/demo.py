"""A small deterministic ReAct agent, instrumented by hand: what ``otel-prov demo`` runs.

The model is scripted (no network, no API key) and one tool fails once, so the
provenance shows a failed tool call, the agent's recovery, a calculation and the
final answer derived from the observations.
"""

from __future__ import annotations

import ast
import json
import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from opentelemetry.trace import Span, SpanContext, TracerProvider

from otel_prov.capture import (
    agent_session,
    iteration,
    model_call,
    set_action,
    set_answer,
    set_arguments,
    set_observation,
    set_thought,
    set_usage,
    tool_call,
)

__all__ = ["DEMO_QUESTION", "ScriptedModel", "Step", "WeatherTools", "run_demo_agent"]

DEMO_QUESTION = "What is the temperature in Paris right now, in Fahrenheit?"


@dataclass(frozen=True)
class Step:
    """One scripted model reply: a thought and the action it chose."""

    thought: str
    action: str
    arguments: str
    """The arguments as the model wrote them (JSON text)."""
    input_tokens: int
    output_tokens: int


_CITY = re.compile(r"\bin ([A-Z][\w-]*(?:(?: (?:de|del|da|do|la|le|of|on|upon))? [A-Z][\w-]*)*)")
_CELSIUS = re.compile(r"(-?\d+(?:\.\d+)?) °C")
_TOKENS = {"get_weather": (112, 24), "retry": (161, 27), "calculator": (203, 31)}


class ScriptedModel:
    """A deterministic stand-in for a chat model: it reads the question and the last
    observation and decides the next step as a ReAct model would (weather, retry after an
    error, convert to Fahrenheit if asked, answer), so no network or API key is needed."""

    name = "scripted-react-1"
    provider = "otel-prov-demo"

    def __init__(self, question: str = DEMO_QUESTION) -> None:
        found = _CITY.search(question)
        self._city = found.group(1) if found else "Paris"
        self._fahrenheit = "fahrenheit" in question.lower()
        self._weather: str | None = None
        self._celsius: float | None = None
        self._steps = 0

    def next_step(self, observation: str | None) -> Step:
        self._steps += 1
        city = json.dumps({"city": self._city}, ensure_ascii=False)
        if self._weather is None:
            if observation is None:
                return self._step(
                    f"I need the current weather in {self._city}.", "get_weather", city
                )
            if observation.startswith("error:"):
                return self._step(
                    "The weather service timed out. I will try once more.",
                    "get_weather",
                    city,
                    tokens="retry",
                )
            self._weather = observation
            found = _CELSIUS.search(observation)
            self._celsius = float(found.group(1)) if found else None
            if self._fahrenheit and self._celsius is not None:
                expression = f"{self._celsius:g} * 9 / 5 + 32"
                return self._step(
                    f"It is {self._celsius:g} °C. In Fahrenheit that is {expression}.",
                    "calculator",
                    json.dumps({"expression": expression}),
                )
        sky = self._weather.split(", ", 1)[1] if ", " in self._weather else ""
        with_sky = f", with {sky}" if sky else ""
        if self._fahrenheit and self._celsius is not None and observation is not None:
            answer = f"It is {observation} °F ({self._celsius:g} °C) in {self._city}{with_sky}."
        else:
            answer = (
                f"It is {self._weather.split(': ', 1)[-1].split(',')[0]} in {self._city}{with_sky}."
            )
        return Step(
            "I have everything I need.",
            "final_answer",
            json.dumps({"answer": answer}, ensure_ascii=False),
            241,
            29,
        )

    def _step(self, thought: str, action: str, arguments: str, *, tokens: str = "") -> Step:
        used_in, used_out = _TOKENS[tokens or action]
        return Step(thought, action, arguments, used_in, used_out)


_OPERATORS: dict[type[ast.AST], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
}


def _evaluate(node: ast.AST) -> float:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
        return float(_OPERATORS[type(node.op)](_evaluate(node.left), _evaluate(node.right)))
    raise ValueError(f"unsupported expression element: {ast.dump(node)}")


class WeatherTools:
    """The demo's tools; the weather service fails on its first call."""

    def __init__(self) -> None:
        self._weather_calls = 0

    def get_weather(self, city: str) -> str:
        self._weather_calls += 1
        if self._weather_calls == 1:
            raise TimeoutError(f"weather service did not answer for {city} within 2 s")
        return f"{city}: 18 °C, light rain"

    def calculator(self, expression: str) -> str:
        return f"{_evaluate(ast.parse(expression, mode='eval')):g}"

    def run(self, name: str, arguments: dict[str, Any]) -> str:
        tool: Callable[..., str] = getattr(self, name)
        return tool(**arguments)


def run_demo_agent(
    question: str = DEMO_QUESTION,
    *,
    conversation_id: str = "demo-conversation",
    tracer_provider: TracerProvider | None = None,
    tools: WeatherTools | None = None,
    follows: Sequence[SpanContext] = (),
    on_session: Callable[[Span], object] | None = None,
) -> str:
    """Run the ReAct loop once and return the answer; spans go to ``tracer_provider``.

    ``tools`` replaces the demo's in-process tools (the service example calls a real
    weather service over HTTP); ``follows`` links the session to earlier work;
    ``on_session`` is called with the session span when it starts.
    """
    model, tools = ScriptedModel(question), tools or WeatherTools()
    observation: str | None = None
    tp = tracer_provider
    with agent_session(
        "weather-assistant",
        question=question,
        conversation_id=conversation_id,
        tools=("get_weather", "calculator"),
        follows=follows,
        tracer_provider=tp,
    ) as session:
        if on_session is not None:
            on_session(session)
        for number in range(1, 10):
            with iteration(number, tracer_provider=tp):
                with model_call(model.name, provider=model.provider, tracer_provider=tp):
                    step = model.next_step(observation)
                    set_usage(input_tokens=step.input_tokens, output_tokens=step.output_tokens)
                set_thought(step.thought)
                set_action(step.action)
                set_arguments(step.arguments)
                arguments = json.loads(step.arguments)
                if step.action == "final_answer":
                    answer = str(arguments["answer"])
                    set_answer(answer, span=session)
                    return answer
                try:
                    with tool_call(
                        step.action,
                        arguments=step.arguments,
                        call_id=f"call_{number}",
                        tracer_provider=tp,
                    ):
                        observation = tools.run(step.action, arguments)
                        set_observation(observation)
                except Exception as exc:  # noqa: BLE001 - the agent reads errors as observations
                    observation = f"error: {type(exc).__name__}: {exc}"
                set_observation(observation)
    raise RuntimeError("the scripted model ran out of steps without answering")
