"""One scripted agent run, told the same way to every framework that traces itself.

The user asks for the weather; the model thinks, calls ``get_weather`` (which answers),
then ``get_forecast`` (which raises), then answers.  Each framework's agent module
(``tests/self_traced/<framework>_agent.py``) plays this script with the framework's own
model interface and tools, under ``otel_prov.configure(store=...)`` and nothing else of
ours: the framework's spans reach the global ``TracerProvider`` by themselves.  It runs
in a process of its own, because a process has one global provider.

The test then reads the store with :mod:`otel_prov.read` and checks the run against this
script: every expected value is here, given to the framework, or reported by it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otel_prov.read import SessionView, ToolCallView, open_store

ROOT = Path(__file__).resolve().parents[2]
AGENT = "weather"
MODEL = "scripted-model"
QUESTION = "Weather in Paris?"
ANSWER = "Paris: 18 °C now; no forecast «today»."  # non-ASCII: escaping end to end


class ForecastUnavailableError(RuntimeError):
    """What the failing tool raises: a class of our own, so its name cannot come from elsewhere."""


def get_weather(city: str) -> str:
    """The current weather in a city."""
    return f"{city}: 18 °C"


def get_forecast(city: str, days: int) -> str:
    """The forecast for a city, ``days`` ahead."""
    raise ForecastUnavailableError(f"no forecast for {city}")


@dataclass(frozen=True)
class Call:
    """A tool call the model asks for."""

    tool: str
    arguments: dict[str, Any]
    call_id: str

    @property
    def arguments_json(self) -> str:
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Turn:
    """What the model says in one turn: its reasoning and the calls it asks for."""

    thought: str
    calls: tuple[Call, ...] = ()


WEATHER = Call("get_weather", {"city": "Paris"}, "call_weather")
FORECAST = Call("get_forecast", {"city": "Paris", "days": 1}, "call_forecast")
TURNS = (
    Turn("I need the weather in Paris first.", (WEATHER,)),
    Turn("Now the forecast.", (FORECAST,)),
    Turn(ANSWER),
)
"""The model's turns, in order: one per iteration of the agent loop."""
TOOLS = (get_weather, get_forecast)


def turn_after(responses: int) -> Turn:
    """The model's next turn, after it has answered ``responses`` times in this run."""
    return TURNS[min(responses, len(TURNS) - 1)]


def observation(call: Call) -> str:
    """What the tool returns for ``call`` (the failing tool has none)."""
    return get_weather(**call.arguments)


def qualified(cls: type) -> str:
    """An exception class's name as OpenTelemetry records it (``exception.type``)."""
    return f"{cls.__module__}.{cls.__qualname__}"


def failure(call: Call) -> str:
    """The message of what the failing tool raises for ``call``."""
    try:
        get_forecast(**call.arguments)
    except ForecastUnavailableError as error:
        return str(error)
    raise AssertionError("get_forecast did not fail")


def run_agent(
    module: str,
    store: Path,
    *arguments: str,
    python: Path = Path(sys.executable),
    environment: Mapping[str, str] | None = None,
) -> str:
    """Run ``tests.self_traced.<module>`` in a fresh process writing to ``store``; its stdout.

    The environment is clean (no ``OTEL_*`` of the caller's) but for ``environment``, and
    the working directory is the store's parent, where ``configure()`` keeps its
    write-ahead log and blobs.  ``python``: a side venv's, for a framework that cannot
    share the project's (``tests/side_venv.py``)."""
    run = subprocess.run(
        [str(python), "-m", f"tests.self_traced.{module}", str(store), *arguments],
        cwd=store.parent,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={
            "PATH": "/usr/bin:/bin",
            "HOME": str(store.parent),
            "PYTHONPATH": str(ROOT),
            **(environment or {}),
        },
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def only_run(store: Path) -> SessionView:
    """The one run the store holds, as the read API gives it, checked against the listing."""
    reader = open_store(store)
    page = reader.sessions()
    (summary,) = page.sessions
    view = reader.session(summary.id)
    assert (summary.agent, summary.question) == (view.agent, view.question)
    assert summary.iterations == len(view.iterations)
    assert summary.tool_calls == sum(len(step.tool_calls) for step in view.iterations)
    assert (summary.status, summary.failed_calls) == (view.status, view.failed_calls)
    return view


def assert_follows_the_script(
    view: SessionView,
    *,
    turns: int = len(TURNS),
    agent: str | None = AGENT,
    observed: bool = True,
) -> None:
    """The run's steps are the script's first ``turns`` turns, in order: each with its
    thought, its action and its tool calls, with the exact arguments the model chose and
    (``observed``) the observation the tool returned.  The failing call is left to the
    caller.  ``agent``: the agent's name as stored (None where the spans do not say it)."""
    assert view.agent == agent
    assert view.question == QUESTION
    assert [step.number for step in view.iterations] == list(range(1, turns + 1))
    for step, turn in zip(view.iterations, TURNS[:turns], strict=True):
        assert step.thought == turn.thought
        assert step.action == (turn.calls[0].tool if turn.calls else None)
        assert [call.name for call in step.tool_calls] == [call.tool for call in turn.calls]
        for made, call in zip(step.tool_calls, turn.calls, strict=True):
            assert made.call_id == call.call_id
            assert made.arguments is not None
            assert json.loads(made.arguments) == call.arguments
            if call is WEATHER:
                assert made.status == "ok"
                assert made.observation == observation(call) or not observed


def forecast_call(view: SessionView) -> ToolCallView:
    """The failed ``get_forecast`` call: failed, with no observation."""
    (call,) = [c for step in view.iterations for c in step.tool_calls if c.name == FORECAST.tool]
    assert (call.status, call.observation) == ("error", None)
    # The run's own status apart from its failed call: ok when the agent carried on to an
    # answer, error when the failure ended it.
    assert view.failed_calls == 1
    assert view.status == ("ok" if view.answer is not None else "error")
    return call
