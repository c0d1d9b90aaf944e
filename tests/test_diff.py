"""``diff``: two runs of the demo agent compared step by step, from a real store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_prov.cli._exit import ExitCode
from otel_prov.demo import WeatherTools, run_demo_agent
from otel_prov.read import open_store
from otel_prov.read._diff import diff_sessions
from otel_prov.setup._configure import configure
from tests.cli import run_cli


class ReliableWeather(WeatherTools):
    """The weather service answers the first time."""

    def get_weather(self, city: str) -> str:
        return f"{city}: 18 °C, light rain"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("diff") / "store"
    handle = configure(store=path, set_global=False, otlp=False, service_name="diff")
    tp = handle.tracer_provider
    run_demo_agent(conversation_id="flaky", tracer_provider=tp)
    run_demo_agent(conversation_id="flaky-again", tracer_provider=tp)
    run_demo_agent(conversation_id="reliable", tracer_provider=tp, tools=ReliableWeather())
    run_demo_agent(
        "What is the temperature in Paris right now?", conversation_id="celsius", tracer_provider=tp
    )
    handle.shutdown()
    yield path


def test_the_same_run_twice_has_no_divergence(store: Path) -> None:
    diff = open_store(store).diff("flaky", "flaky-again")
    assert diff.same and diff.first_divergence is None
    assert diff.as_json()["first_divergence"] is None
    assert diff.calls_added == diff.calls_missing == ()
    assert diff.answer is None and diff.steps == (4, 4)


def test_a_tool_that_no_longer_fails_diverges_at_the_first_status(store: Path) -> None:
    diff = open_store(store).diff("flaky", "reliable")
    first = diff.first_divergence
    assert first is not None
    assert (first.iteration, first.field, first.a, first.b) == (1, "status", "error", "ok")
    assert diff.steps == (4, 3)
    # Without the retry, every later step moved up by one.
    assert ("error", "ok") in [(c.a, c.b) for c in diff.status_changed if c.tool == "get_weather"]
    # Both runs carried on to an answer: their own status is ok in both.
    assert [c for c in diff.status_changed if c.iteration is None] == []
    missing = [(c.iteration, c.tool) for c in diff.calls_missing]
    assert missing == [(2, "get_weather"), (3, "calculator")]
    assert [(c.iteration, c.tool) for c in diff.calls_added] == [(2, "calculator")]
    assert diff.answer is None  # the same answer in the end
    steps = [(d.iteration, d.field, d.b) for d in diff.differences]
    assert (4, "iteration", None) in steps


def test_a_different_question_drops_the_calculator_and_changes_the_answer(store: Path) -> None:
    diff = open_store(store).diff("flaky", "celsius")
    assert diff.answer is not None
    assert "64.4 °F" in (diff.answer[0] or "") and "64.4" not in (diff.answer[1] or "")
    assert [c.tool for c in diff.calls_missing] == ["calculator"]
    first = diff.first_divergence
    assert first is not None and first.iteration == 3 and first.field == "action"
    assert (first.a, first.b) == ("calculator", "final_answer")


def test_arguments_compare_as_json(store: Path) -> None:
    reader = open_store(store)
    a = reader.session(reader.find("flaky")[0])
    step = a.iterations[1]
    call = step.tool_calls[0]
    respaced = step.__class__(
        **{
            **step.__dict__,
            "tool_calls": (call.__class__(**{**call.__dict__, "arguments": '{ "city":"Paris" }'}),),
        }
    )
    b = a.__class__(**{**a.__dict__, "iterations": (a.iterations[0], respaced, *a.iterations[2:])})
    assert diff_sessions(a, b).same
    moved = call.__class__(**{**call.__dict__, "arguments": '{"city": "Lyon"}'})
    c = a.__class__(
        **{
            **a.__dict__,
            "iterations": (
                a.iterations[0],
                step.__class__(**{**step.__dict__, "tool_calls": (moved,)}),
                *a.iterations[2:],
            ),
        }
    )
    changed = diff_sessions(a, c)
    assert [(x.iteration, x.tool, x.b) for x in changed.arguments_changed] == [
        (2, "get_weather", '{"city": "Lyon"}')
    ]


def test_the_command_writes_json_and_exits_1_when_runs_differ(store: Path) -> None:
    same = run_cli("diff", "flaky", "flaky-again", "--store", str(store), "--format", "json")
    assert same.returncode == ExitCode.OK, same.stderr
    assert json.loads(same.stdout)["first_divergence"] is None
    differ = run_cli("diff", "flaky", "reliable", "--store", str(store), "--format", "json")
    assert differ.returncode == ExitCode.CHECK_FAILED
    assert json.loads(differ.stdout)["first_divergence"] == {
        "iteration": 1,
        "field": "status",
        "a": "error",
        "b": "ok",
    }
    text = run_cli("diff", "flaky", "celsius", "--store", str(store))
    assert "first divergence: iteration 3 action" in text.stdout
    assert 'a: "calculator"' in text.stdout and "tool calls missing in b:" in text.stdout
    unknown = run_cli("diff", "flaky", "nope", "--store", str(store))
    assert unknown.returncode == ExitCode.NOTHING_FOUND and unknown.stdout == ""
    assert unknown.stderr == "otel-prov: no session with id, trace id or conversation id 'nope'\n"
