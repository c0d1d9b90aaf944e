"""LlamaIndex through OpenInference's instrumentor, read as it is: no instrumentor of ours.

The agent (``llama_index_agent``) runs the scripted run as a ``FunctionAgent`` with a
``MockFunctionCallingLLM`` under ``otel_prov.configure(store=...)``, streaming (the
default) and not.  The run's root span records neither question nor answer and the
agent's name nowhere; each model request is two LLM spans (plus one that only prepares
it), and a tool's output is a serialised ``ToolOutput``.  The steps are inferred, one per
model request, and the question and answer come from the first and last of them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.self_traced import scenario


@pytest.mark.parametrize("mode", ["stream", "chat"])
def test_a_failing_tool_is_a_failed_call_and_the_agent_answers(tmp_path: Path, mode: str) -> None:
    store = tmp_path / "store"
    printed = scenario.run_agent("llama_index_agent", store, mode)
    view = scenario.only_run(store)
    scenario.assert_follows_the_script(view, agent=None)
    call = scenario.forecast_call(view)
    assert call.error_type == scenario.qualified(scenario.ForecastUnavailableError)
    assert call.error_message is not None
    assert call.error_message.endswith(scenario.failure(scenario.FORECAST))
    assert view.answer == scenario.ANSWER == printed.strip()
    assert [len(step.model_calls) for step in view.iterations] == [1] * len(scenario.TURNS)
