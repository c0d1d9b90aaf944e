"""The people declarations of ``people.py`` hold for the pinned packages (issue 30.4).

The conventions' registries define no approval or interrupt attribute (a test fails the
day one does, so that otel-prov reads it), and a real LangGraph human-in-the-loop run
(LangChain's ``HumanInTheLoopMiddleware``: ``interrupt()``, then a resume) under
OpenInference's and OpenLLMetry's LangChain instrumentations leaves the decision only in
the resumed run's input, which otel-prov does not take for an approval.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from otel_prov import map_spans, record_from_span
from otel_prov.prov._vocab import RDF_TYPE, O
from tests.conformance.people import PEOPLE
from tests.instrumentation.test_langchain import _supervised

_WORDS = ("approv", "interrupt", "human", "hitl", "reviewer")
"""Words an attribute about a person's decision would hold (OpenInference's `decision.*` is
a decision *model's* call, not a person's)."""

_REGISTRIES = {
    "OpenInference": ("openinference.semconv.trace", "SpanAttributes"),
    "OpenLLMetry": ("opentelemetry.semconv_ai", "SpanAttributes"),
    "OpenTelemetry GenAI": ("opentelemetry.semconv._incubating.attributes.gen_ai_attributes", None),
}


def _names(module: str, holder: str | None) -> set[str]:
    found = importlib.import_module(module)
    scope = vars(getattr(found, holder)) if holder else vars(found)
    return {value for key, value in scope.items() if key.isupper() and isinstance(value, str)}


def test_every_convention_is_declared_once() -> None:
    assert sorted(p.convention for p in PEOPLE) == sorted(_REGISTRIES)
    assert all(p.approvals.startswith(("yes", "absent", "lost")) for p in PEOPLE)


@pytest.mark.parametrize("convention", sorted(_REGISTRIES))
def test_no_convention_defines_an_approval_or_interrupt_attribute(convention: str) -> None:
    names = _names(*_REGISTRIES[convention])
    assert names, convention
    defined = sorted(name for name in names if any(word in name.lower() for word in _WORDS))
    assert defined == [], f"{convention} defines {defined}: read them, then update people.py"


def test_the_user_keys_declared_are_the_conventions_own() -> None:
    assert "user.id" in _names("openinference.semconv.trace", "SpanAttributes")
    association = _names("opentelemetry.semconv_ai", "SpanAttributes")
    assert "traceloop.association.properties" in association


def _instrumentor(name: str) -> Any:
    if name == "openinference":
        from openinference.instrumentation.langchain import LangChainInstrumentor

        return LangChainInstrumentor()
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    return LangchainInstrumentor()


def _inputs(span: ReadableSpan) -> list[Any]:
    found = []
    for key in ("input.value", "traceloop.entity.input"):
        text = (span.attributes or {}).get(key)
        if isinstance(text, str):
            try:
                found.append(json.loads(text))
            except ValueError:
                continue
    return found


def _resume(value: Any) -> Any:
    if isinstance(value, dict):
        if "resume" in value:
            return value["resume"]
        return next((r for v in value.values() if (r := _resume(v)) is not None), None)
    return None


def observe(name: str) -> dict[str, Any]:
    """A supervised LangGraph run under ``name``'s LangChain instrumentation: the resumes
    its spans hold, and the approvals the mapping finds in them."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    instrumentor = _instrumentor(name)
    instrumentor.instrument(tracer_provider=provider)
    try:
        _supervised({"type": "reject", "message": "not bob"})
    finally:
        instrumentor.uninstrument()
        provider.shutdown()
    spans = list(exporter.get_finished_spans())
    approvals = 0
    for trace_id in {span.context.trace_id for span in spans}:
        run = [record_from_span(s) for s in spans if s.context.trace_id == trace_id]
        approvals += sum(
            1 for t in map_spans(run).triples if t[1] == RDF_TYPE and t[2] == O.Approval
        )
    resumes = [r for span in spans for value in _inputs(span) if (r := _resume(value))]
    return {"resumes": resumes, "approvals": approvals}


@pytest.mark.parametrize("name", ["openinference", "openllmetry"])
def test_a_langgraph_resume_is_only_the_resumed_runs_input(name: str) -> None:
    """In a process of its own: OpenLLMetry's ``uninstrument`` leaves LangChain patched,
    and the tests after this one would see its spans as their parents."""
    script = (
        "import json; from tests.conformance.test_people import observe; "
        f"print(json.dumps(observe({name!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"decisions": [{"type": "reject", "message": "not bob"}]} in seen["resumes"], name
    assert seen["approvals"] == 0, name
