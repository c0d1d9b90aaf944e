"""What a reader of one run sees, field by field, and what the shared script says it should be.

A conformance scenario runs the script under a third-party instrumentation and reads the
stored run back through :mod:`otel_prov.read`, as `sessions`, `show` and the web view do.
``observed`` flattens that run into named fields; ``EXPECTED`` holds the script's value of
each.  A scenario says, per field, why a value cannot be there (``absent``: the
instrumentation does not put it in its spans) or that the mapping still loses it
(``lost``, a strict expected failure that turns into a failure the day it is read).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import rdflib

from otel_prov.capture import FINAL_ANSWER
from otel_prov.read import SessionView, open_store
from tests.conformance.openai_server import usage_of
from tests.conformance.semantic_kernel_agent import PLUGIN
from tests.self_traced import scenario

OPROV = "https://w3id.org/otel-prov/ns#"
FIELDS = (
    "agent",
    "question",
    "answer",
    "steps",
    "thoughts",
    "actions",
    "arguments",
    "call_ids",
    "observation",
    "failed_call",
    "error_text",
    "failed_count",
    "tokens",
    "model",
    "provider",
)
"""Every field a scenario is checked on, in the order the tests report them."""

_WEATHER, _FORECAST = scenario.WEATHER, scenario.FORECAST
EXPECTED: Mapping[str, object] = {
    "agent": scenario.AGENT,
    "question": scenario.QUESTION,
    "answer": scenario.ANSWER,
    "steps": len(scenario.TURNS),
    "thoughts": [turn.thought for turn in scenario.TURNS],
    "actions": [turn.calls[0].tool if turn.calls else None for turn in scenario.TURNS],
    "arguments": [_WEATHER.arguments, _FORECAST.arguments],
    "call_ids": [_WEATHER.call_id, _FORECAST.call_id],
    "observation": scenario.observation(_WEATHER),
    "failed_call": (_FORECAST.tool, "error"),
    "error_text": scenario.failure(_FORECAST),
    "failed_count": 1,
    "tokens": tuple(
        sum(usage_of(turn)[kind] for turn in range(len(scenario.TURNS))) for kind in (0, 1)
    ),
    "model": scenario.MODEL,
    "provider": "openai",
}


def tool(name: str | None) -> str | None:
    """A tool's name as the script has it: Semantic Kernel names a plugin's function
    ``Plugin-function`` (``Weather-get_weather``), and its spans, so the store, keep that
    name; the field is the function's."""
    return name.removeprefix(f"{PLUGIN}-") if name is not None else None


def _calls(view: SessionView) -> list[Any]:
    return [call for step in view.iterations for call in step.tool_calls]


def _providers(store: Path, run: str) -> list[str]:
    graph: rdflib.Graph = open_store(store).graph(run)
    return sorted({str(o) for o in graph.objects(None, rdflib.URIRef(OPROV + "providerName"))})


def observed(store: Path) -> dict[str, object]:
    """The run's fields as a reader sees them."""
    view = scenario.only_run(store)  # the listing's line agrees with the run's view
    calls = _calls(view)
    failed = [call for call in calls if call.status == "error"]
    models = sorted({m.model for step in view.iterations for m in step.model_calls if m.model})
    weather = [call for call in calls if tool(call.name) == _WEATHER.tool]

    def arguments(text: str | None) -> object:
        try:
            return json.loads(text) if text is not None else None
        except ValueError:
            return text

    providers = _providers(store, view.id)
    return {
        "agent": view.agent,
        "question": view.question,
        "answer": view.answer,
        "steps": len(view.iterations),
        "thoughts": [step.thought for step in view.iterations],
        "actions": [tool(step.action) for step in view.iterations],
        "arguments": [arguments(call.arguments) for call in calls],
        "call_ids": [call.call_id for call in calls],
        "observation": weather[0].observation if weather else None,
        "failed_call": (tool(failed[0].name), failed[0].status) if failed else None,
        "error_text": failed[0].error_message if failed else None,
        "failed_count": view.failed_calls,
        "tokens": (view.usage.tokens.get("input", 0), view.usage.tokens.get("output", 0)),
        "model": models[0] if len(models) == 1 else models,
        "provider": providers[0] if len(providers) == 1 else providers,
    }


def matches(name: str, value: object) -> bool:
    """Whether a reader's ``value`` of field ``name`` is the script's."""
    expected = EXPECTED[name]
    if name == "error_text":  # a framework may wrap the message: it must hold it
        return isinstance(value, str) and str(expected) in value
    if name in ("question", "answer") and isinstance(value, str):
        # Whitespace around a message is not its text (Strands ends its answer with "\n").
        value = value.strip()
    if name == "actions" and isinstance(value, list):
        # A step that answers may name its action FINAL_ANSWER (smolagents answers through
        # a tool of that name): a reader takes it, as no action, for the answering step.
        value = [None if action == FINAL_ANSWER else action for action in value]
    return value == expected
