"""Google ADK's built-in tracing, read as it is: no instrumentor of ours.

The agent (``adk_agent``) runs the scripted run as an ``LlmAgent`` with a ``BaseLlm``
subclass under ``otel_prov.configure(store=...)``, in the ADK venv (``scripts/adk-venv.sh``:
ADK pins an older OpenTelemetry than the project's ``dev``).  ADK's spans are GenAI ones
under an ``invoke_workflow`` span; it records content only under the GenAI opt-ins set
here, and ends the run when a tool raises.
"""

from __future__ import annotations

from pathlib import Path

from tests.self_traced import scenario
from tests.side_venv import installed

CONTENT_OPT_IN = {
    "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
}


def _run(store: Path, environment: dict[str, str]) -> str:
    python = installed("adk-venv.sh", "OTEL_PROV_ADK_VENV")
    return scenario.run_agent("adk_agent", store, python=python, environment=environment)


def test_a_tool_that_raises_ends_the_run_and_the_provenance_says_why(tmp_path: Path) -> None:
    store = tmp_path / "store"
    printed = _run(store, CONTENT_OPT_IN)
    view = scenario.only_run(store)
    # The steps as the model chose them, each observation the tool's own return value
    # (ADK records it wrapped, {"result": ...}).
    scenario.assert_follows_the_script(view, turns=2)
    call = scenario.forecast_call(view)
    assert call.error_type == scenario.ForecastUnavailableError.__name__
    assert call.error_message is not None
    assert call.error_message.endswith(scenario.failure(scenario.FORECAST))
    assert printed.strip() == f"raised: {scenario.failure(scenario.FORECAST)}"
    assert view.answer is None


def test_without_the_content_opt_in_the_structure_stays(tmp_path: Path) -> None:
    """ADK's default records no content: steps, calls, ids and the error, no text."""
    store = tmp_path / "store"
    _run(store, {})
    view = scenario.only_run(store)
    assert (view.agent, view.question) == (scenario.AGENT, None)
    assert [step.number for step in view.iterations] == [1, 2]
    calls = [call for step in view.iterations for call in step.tool_calls]
    assert [c.name for c in calls] == [scenario.WEATHER.tool, scenario.FORECAST.tool]
    assert [c.arguments for c in calls] == [None, None]
    assert calls[0].call_id == scenario.WEATHER.call_id
    assert scenario.forecast_call(view).error_type == scenario.ForecastUnavailableError.__name__
