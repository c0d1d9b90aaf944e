"""``diff``: two runs of the demo agent compared step by step, from a real store."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

from otel_prov.capture import agent_session, iteration, set_action, set_answer, set_thought
from otel_prov.cli._exit import ExitCode
from otel_prov.demo import WeatherTools, run_demo_agent
from otel_prov.read import open_store
from otel_prov.read._diff import diff_sessions
from otel_prov.setup._configure import configure
from otel_prov.view._pages import diff_page
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
    for agent, question, thought in (
        ("planner", "What is 2 + 2?", "Add the numbers."),
        ("critic", "Is the sky green?", "Look at the sky."),
    ):
        _one_step_run(tp, agent, question, thought)
    handle.shutdown()
    yield path


def _one_step_run(tp: TracerProvider, agent: str, question: str, thought: str) -> None:
    """A run of one step that answers at once: what it did is the same whatever its
    agent, question and thought."""
    with agent_session(agent, question=question, conversation_id=agent, tracer_provider=tp):
        with iteration(1, tracer_provider=tp):
            set_thought(thought)
            set_action("final_answer")
        set_answer("4")


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
    assert first is not None and (first.iteration, first.field) == (None, "question")
    steps = [(d.iteration, d.field, d.a, d.b) for d in diff.differences]
    assert (3, "action", "calculator", "final_answer") in steps


def test_runs_of_other_agents_with_other_questions_and_thoughts_diverge(store: Path) -> None:
    diff = open_store(store).diff("planner", "critic")
    assert not diff.same
    assert [(d.iteration, d.field, d.a, d.b) for d in diff.differences] == [
        (None, "question", "What is 2 + 2?", "Is the sky green?"),
        (None, "agent", "planner", "critic"),
    ]
    assert [(t.iteration, t.a, t.b) for t in diff.thoughts_changed] == [
        (1, "Add the numbers.", "Look at the sky.")
    ]
    assert diff.as_json()["compared"] == list(diff.compared)
    assert {"question", "agent", "status", "step thought", "answer"} <= set(diff.compared)
    text = run_cli("diff", "planner", "critic", "--store", str(store))
    assert text.returncode == ExitCode.CHECK_FAILED
    assert "no divergence" not in text.stdout
    assert "first divergence: question" in text.stdout
    assert 'agent: "planner" -> "critic"' in text.stdout
    assert 'iteration 1 thought: "Add the numbers." -> "Look at the sky."' in text.stdout
    assert text.stdout.splitlines()[2].startswith("compared: question, agent, status, ")


def test_a_thought_worded_otherwise_is_the_only_difference_and_is_said(store: Path) -> None:
    reader = open_store(store)
    a = reader.session(reader.find("planner")[0])
    step = dataclasses.replace(a.iterations[0], thought="Sum them.")
    diff = diff_sessions(a, dataclasses.replace(a, iterations=(step,)))
    assert diff.first_divergence is None and not diff.same
    assert [t.iteration for t in diff.thoughts_changed] == [1]


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
    assert "first divergence: question" in text.stdout
    assert 'iteration 3 action: "calculator" -> "final_answer"' in text.stdout
    assert "tool calls missing in b:" in text.stdout
    unknown = run_cli("diff", "flaky", "nope", "--store", str(store))
    assert unknown.returncode == ExitCode.NOTHING_FOUND and unknown.stdout == ""
    assert unknown.stderr == "otel-prov: no session with id, trace id or conversation id 'nope'\n"


def test_the_diff_page_says_what_it_compared_and_marks_the_question(store: Path) -> None:
    reader = open_store(store)
    a, b = (reader.session(reader.find(name)[0]) for name in ("planner", "critic"))
    page = diff_page("planner", "critic", (a, b))
    assert "No divergence" not in page
    assert "First divergence: the question" in page
    assert "Compared: question, agent, status, step action" in page
    assert "Thoughts worded differently in iteration 1." in page
    assert '<dt>agent</dt><dd class="value">planner → critic</dd>' in page  # each one after it
    assert page.count('class="value diverges" data-field="question"') == 2
    same = diff_page("planner", "planner", (a, a))
    assert "No divergence: all of it agrees." in same and "value diverges" not in same
