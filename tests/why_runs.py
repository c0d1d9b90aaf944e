"""Runs at the sizes people run, for the why-graph's browser tests, each written by a real
agent process into an embedded store through the whole pipeline (streamed, as by
default).

``python -m tests.why_runs STORE conversation TURNS``: a conversation (``chat-TURNS``) of
``TURNS`` turns of the demo agent, three steps each (a weather call that times out, the
one that answers, the answer).  ``python -m tests.why_runs STORE steps N``: one run
(``steps-N``) of ``N`` steps, each a model call and a tool call, its answer resting on
every step.  ``python -m tests.why_runs STORE failed 2``: a run (``quota``) that raises
after two steps, each with its call, before it answers.
"""

from __future__ import annotations

import contextlib
import sys

from opentelemetry.trace import TracerProvider

import otel_prov
from otel_prov.demo import run_demo_agent

QUESTION = "What is the weather in Paris now? (turn {turn})"
"""What each turn asks: alike but for its number, as people ask again."""


def conversation(store: str, turns: int) -> None:
    handle = otel_prov.configure(store=store, set_global=False, otlp=False, service_name="chat")
    for turn in range(1, turns + 1):
        run_demo_agent(
            QUESTION.format(turn=turn),
            conversation_id=f"chat-{turns}",
            tracer_provider=handle.tracer_provider,
        )
    handle.shutdown()


def steps(store: str, count: int) -> None:
    handle = otel_prov.configure(store=store, set_global=False, otlp=False, service_name="long")
    provider = handle.tracer_provider
    with otel_prov.agent_session(
        "researcher",
        question=f"What do the {count} sources say?",
        tools=["lookup"],
        conversation_id=f"steps-{count}",
        tracer_provider=provider,
    ):
        for number in range(1, count + 1):
            with otel_prov.iteration(
                number, thought=f"Source {number} is next.", tracer_provider=provider
            ):
                with otel_prov.model_call("scripted", provider="local", tracer_provider=provider):
                    pass
                with otel_prov.tool_call(
                    "lookup", arguments={"source": number}, tracer_provider=provider
                ):
                    otel_prov.set_observation(f"source {number} says {number * 7 % 100}")
        otel_prov.set_answer(f"All {count} sources read.")
    handle.shutdown()


def raises_after_steps(provider: TracerProvider, count: int = 2) -> None:
    """A run whose model gives out after ``count`` steps, each with its call: no answer
    (conversation ``quota``)."""
    with (
        contextlib.suppress(RuntimeError),
        otel_prov.agent_session(
            "researcher",
            question="why does it fail?",
            conversation_id="quota",
            tracer_provider=provider,
        ),
    ):
        for number in range(1, count + 1):
            step = otel_prov.iteration(
                number, thought=f"look up {number}", tracer_provider=provider
            )
            call = otel_prov.tool_call("lookup", arguments={"n": number}, tracer_provider=provider)
            with step, call:
                otel_prov.set_observation(f"found {number}")
        raise RuntimeError("the model quota ran out")


def failed(store: str, count: int) -> None:
    handle = otel_prov.configure(store=store, set_global=False, otlp=False, service_name="quota")
    raises_after_steps(handle.tracer_provider, count)
    handle.shutdown()


KINDS = {"conversation": conversation, "steps": steps, "failed": failed}

if __name__ == "__main__":
    KINDS[sys.argv[2]](sys.argv[1], int(sys.argv[3]))
