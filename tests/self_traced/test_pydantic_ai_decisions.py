"""Pydantic AI's own instrumentation, a structured output with the reasoning schema: the
mapper reads it from the run's final result (no instrumentor of ours), as the last step's
reasoning; the same JSON answered as text is not read."""

from __future__ import annotations

from pathlib import Path

from otel_prov.read import open_store
from otel_prov.read._decisions import decision_accounts
from tests.self_traced import scenario


def test_a_structured_final_result_is_the_last_steps_reasoning(tmp_path: Path) -> None:
    store = tmp_path / "store"
    scenario.run_agent("pydantic_ai_decisions_agent", store, "reasoning")
    reader = open_store(store)
    (run,) = reader.sessions().sessions
    why = reader.why(run.id)
    (account,) = decision_accounts(why)
    assert (account.decision.reasoning_id, account.decision.label) == ("d1", "Refuse the refund")
    assert account.decision.confidence == 0.8
    assert [node.reasoning_id for node in account.adopted] == ["h2"]
    # Evidence on h2 rests on what track_parcel [call_1] returned: resolved, and there
    # when the decision was made; the one on call_9 is kept, though the run has no such call.
    (via,) = account.supporting
    assert via.via is not None and via.via.reasoning_id == "h2"
    assert via.basis.type == "Observation" and via.weight == 0.9 and via.considered
    (unknown,) = account.not_considered
    assert unknown.basis.type == "UnresolvedReference" and "call_9" in unknown.basis.label
    steps = [node for node in why.nodes if node.type == "Iteration"]
    generated_by = {e.source: e.target for e in why.edges if e.relation == "wasGeneratedBy"}
    assert generated_by[account.decision.id] == steps[-1].id  # the step that answered
    graph = reader.graph(run.id).serialize(format="nt")
    assert "otel-prov/ns#Hypothesis" in graph
    told = sorted((n.type, n.reasoning_id) for n in why.nodes if n.reasoning_id)
    assert told == [("Decision", "d1"), ("Goal", "g1"), ("Hypothesis", "h1"), ("Hypothesis", "h2")]


def test_the_same_json_answered_as_text_is_no_reasoning(tmp_path: Path) -> None:
    """``output_type=str``: the answer is text that happens to be JSON; Pydantic AI records
    it as the final result all the same, and it is the answer, nothing more."""
    store = tmp_path / "store"
    printed = scenario.run_agent("pydantic_ai_decisions_agent", store, "text")
    reader = open_store(store)
    (run,) = reader.sessions().sessions
    assert reader.session(run.id).answer == printed.strip()
    assert decision_accounts(reader.why(run.id)) == []
