"""Pydantic AI's own GenAI instrumentation, read as it is: no instrumentor of ours.

The agent (``pydantic_ai_agent``) runs the scripted run with a ``FunctionModel`` and
``Instrumentation()`` under ``otel_prov.configure(store=...)``.  Its spans are GenAI
``invoke_agent``/``chat``/``execute_tool`` spans with no step spans: the steps are
inferred, one per model call, and the read API must show them in order with their calls.
"""

from __future__ import annotations

from pathlib import Path

from pydantic_ai.exceptions import ToolRetryError

from tests.self_traced import scenario


def test_a_tool_that_raises_ends_the_run_and_the_provenance_says_why(tmp_path: Path) -> None:
    store = tmp_path / "store"
    printed = scenario.run_agent("pydantic_ai_agent", store, "raise")
    view = scenario.only_run(store)
    scenario.assert_follows_the_script(view, turns=2)  # the run ended in the second step
    call = scenario.forecast_call(view)
    assert call.error_type == scenario.qualified(scenario.ForecastUnavailableError)
    assert call.error_message == scenario.failure(scenario.FORECAST)
    assert printed.strip() == f"raised: {call.error_message}"
    assert view.answer is None


def test_a_retried_call_is_a_failed_call_and_the_agent_answers(tmp_path: Path) -> None:
    """``ModelRetry`` tells the model the call failed; Pydantic AI records the call as an
    error (``ToolRetryError``) and the model goes on to answer."""
    store = tmp_path / "store"
    printed = scenario.run_agent("pydantic_ai_agent", store, "retry")
    view = scenario.only_run(store)
    scenario.assert_follows_the_script(view)
    call = scenario.forecast_call(view)
    assert call.error_type == scenario.qualified(ToolRetryError)
    assert call.error_message == scenario.failure(scenario.FORECAST)
    assert view.answer == scenario.ANSWER == printed.strip()
    assert [m.model for step in view.iterations for m in step.model_calls] == [scenario.MODEL] * 3
