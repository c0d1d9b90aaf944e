"""``show`` and ``sessions`` on runs whose agents hand off or delegate to other agents.

A sub-agent's session is ``oprov:partOf`` an activity of its parent's session; the CLI
nests it there as a block of its own, credits the run with the answer a sub-session
gave, and counts the whole run.  The runs are made with the manual API into an
embedded store and read back by the CLI, run as users run it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider

import otel_prov
from tests.cli import run_cli, show, shown_view

QUESTION = "Where is order 42?"
ANSWER = "Order 42 shipped yesterday."


def handoff_run(provider: TracerProvider) -> None:
    """Triage delegates to billing through a tool; billing answers, triage does not."""
    p = provider
    with otel_prov.agent_session(
        "triage", question=QUESTION, conversation_id="delegated", tracer_provider=p
    ):
        with (
            otel_prov.iteration(
                1, thought="Orders are billing's business.", action="ask_billing", tracer_provider=p
            ),
            otel_prov.tool_call(
                "ask_billing", arguments={"order": "42"}, call_id="call_b", tracer_provider=p
            ),
        ):
            with otel_prov.agent_session("billing", question=QUESTION, tracer_provider=p):
                with (
                    otel_prov.iteration(
                        1, thought="Look it up.", action="lookup_order", tracer_provider=p
                    ),
                    otel_prov.tool_call(
                        "lookup_order",
                        arguments={"order": "42"},
                        call_id="call_o",
                        tracer_provider=p,
                    ),
                ):
                    otel_prov.set_observation("order 42 shipped yesterday")
                with otel_prov.iteration(
                    2, thought="I know.", action="final_answer", tracer_provider=p
                ):
                    pass
                otel_prov.set_answer(ANSWER)
            otel_prov.set_observation(ANSWER)
        with otel_prov.iteration(
            2, thought="Billing answered.", action="final_answer", tracer_provider=p
        ):
            pass


def deep_run(provider: TracerProvider) -> None:
    """Sub-sessions at every level: in an iteration, in a tool call behind a plain span,
    and in the session itself; three of them answer, the writer last."""
    p = provider
    with otel_prov.agent_session(
        "planner", question="Plan a trip", conversation_id="deep", tracer_provider=p
    ):
        with (
            otel_prov.iteration(1, thought="Ask the researcher.", tracer_provider=p),
            otel_prov.agent_session("researcher", question="Find flights", tracer_provider=p),
        ):
            with (
                otel_prov.iteration(1, action="search_flights", tracer_provider=p),
                otel_prov.tool_call("search_flights", tracer_provider=p),
            ):
                otel_prov.set_observation("AF123")
            with (
                otel_prov.iteration(2, action="ask_pricing", tracer_provider=p),
                otel_prov.tool_call("ask_pricing", tracer_provider=p),
            ):
                with (
                    p.get_tracer("tests").start_as_current_span("POST /pricing"),
                    otel_prov.agent_session("pricing", question="Price AF123", tracer_provider=p),
                ):
                    with otel_prov.iteration(1, tracer_provider=p):
                        pass
                    otel_prov.set_answer("AF123 costs 200 EUR")
                otel_prov.set_observation("200 EUR")
            otel_prov.set_answer("AF123 at 200 EUR")
        with otel_prov.agent_session("writer", question="Write it up", tracer_provider=p):
            otel_prov.set_answer("Take AF123 (200 EUR).")


def flat_run(provider: TracerProvider) -> None:
    """One agent, no sub-sessions, its own answer."""
    p = provider
    with otel_prov.agent_session(
        "solo", question="2+2?", conversation_id="flat", tracer_provider=p
    ):
        with otel_prov.iteration(1, thought="Easy.", action="final_answer", tracer_provider=p):
            pass
        otel_prov.set_answer("4")


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("nested") / "store"
    handle = otel_prov.configure(store=path, set_global=False, otlp=False)
    for run in (handoff_run, deep_run, flat_run):
        run(handle.tracer_provider)
        handle.force_flush()
    handle.shutdown()
    return path


def _placeholders(text: str) -> str:
    """Session IRIs, span ids, times and durations vary from run to run: name them by
    shape."""
    text = re.sub(r"urn:otel-prov:[0-9a-f]{32}:[0-9a-f]{16}", "IRI", text)
    text = re.sub(r"\b[0-9a-f]{32}\b", "TRACE", text)
    text = re.sub(r", \d+(\.\d+)? (µs|ms|s|min)$", ", TOOK", text, flags=re.MULTILINE)
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", "TIME", text)


def test_text_nests_the_sub_session_under_the_tool_call_that_started_it(store: Path) -> None:
    billing = shown_view(store, "delegated")["iterations"][0]["tool_calls"][0]["sub_sessions"][0]
    text = show(store, "delegated")
    assert f"answered by  billing (sub-session {billing['id']})" in text
    assert _placeholders(text) == (
        "Session IRI\n"
        "  agent        triage\n"
        "  status       ok\n"
        "  started      TIME\n"
        "  ended        TIME\n"
        "  question     Where is order 42?\n"
        "Iteration 1\n"
        "    thought      Orders are billing's business.\n"
        '    action       ask_billing {"order": "42"}\n'
        "    tool call    ask_billing [call_b] ok\n"
        "    observation  Order 42 shipped yesterday.\n"
        "      Sub-session IRI\n"
        "        agent        billing\n"
        "        status       ok\n"
        "        started      TIME\n"
        "        ended        TIME\n"
        "        question     Where is order 42?\n"
        "      Iteration 1\n"
        "          thought      Look it up.\n"
        '          action       lookup_order {"order": "42"}\n'
        "          tool call    lookup_order [call_o] ok\n"
        "          observation  order 42 shipped yesterday\n"
        "      Iteration 2\n"
        "          thought      I know.\n"
        "          action       final_answer\n"
        "      answer       Order 42 shipped yesterday.\n"
        "Iteration 2\n"
        "    thought      Billing answered.\n"
        "    action       final_answer\n"
        "answer       Order 42 shipped yesterday.\n"
        "answered by  billing (sub-session IRI)\n"
        "trace        TRACE\n"
    )


def test_json_puts_the_sub_session_on_the_tool_call_and_credits_its_answer(
    store: Path,
) -> None:
    view = shown_view(store, "delegated")
    assert [it["number"] for it in view["iterations"]] == [1, 2]
    (call,) = view["iterations"][0]["tool_calls"]
    assert call["name"] == "ask_billing" and call["observation"] == ANSWER
    (billing,) = call["sub_sessions"]
    assert (billing["agent"], billing["status"], billing["question"]) == ("billing", "ok", QUESTION)
    assert billing["answer"] == ANSWER and billing["answered_by"] is None
    assert [it["number"] for it in billing["iterations"]] == [1, 2]
    (lookup,) = billing["iterations"][0]["tool_calls"]
    assert (lookup["name"], lookup["observation"]) == ("lookup_order", "order 42 shipped yesterday")
    assert billing["trace_id"] == view["trace_id"] and billing["span_id"] in billing["id"]
    # Triage gave no answer of its own: the run's is billing's, and says so.
    assert view["answer"] == ANSWER and view["answered_by"] == billing["id"]
    assert view["sub_sessions"] == [] and view["iterations"][0]["sub_sessions"] == []
    assert view["iterations"][1]["tool_calls"] == []


def test_mermaid_draws_the_sub_session_as_a_subgraph_from_its_tool_call(store: Path) -> None:
    lines = show(store, "delegated", "mermaid").splitlines()
    start = lines.index('  subgraph I1T1S1["Sub-session: billing"]')
    end = lines.index("  end")
    inside = lines[start + 1 : end]
    assert '    I1T1S1Q["Question: Where is order 42?"]' in inside
    assert "    I1T1S1I1 --> I1T1S1I1T1" in inside
    assert '    I1T1S1A["Answer: Order 42 shipped yesterday."]' in inside
    # Only the sub-session's nodes inside: Mermaid draws a node where it is first named.
    assert all(line.split()[0].startswith("I1T1S1") for line in inside)
    assert lines[end + 1] == "  I1T1 --> I1T1S1Q"
    assert "  I1 --> I2" in lines and "  I2 --> A" in lines
    assert lines[-1] == "  I1T1S1A -.-> A"


def test_sub_sessions_nest_at_every_level_and_the_last_answer_is_the_runs(store: Path) -> None:
    view = shown_view(store, "deep")
    assert [it["number"] for it in view["iterations"]] == [1]
    (researcher,) = view["iterations"][0]["sub_sessions"]
    assert researcher["agent"] == "researcher"
    assert [it["number"] for it in researcher["iterations"]] == [1, 2]
    # Behind the plain HTTP span, pricing still belongs to the tool call that started it.
    (ask,) = researcher["iterations"][1]["tool_calls"]
    (pricing,) = ask["sub_sessions"]
    assert (pricing["agent"], pricing["answer"]) == ("pricing", "AF123 costs 200 EUR")
    assert [it["number"] for it in pricing["iterations"]] == [1]
    (writer,) = view["sub_sessions"]
    assert writer["agent"] == "writer" and writer["iterations"] == []
    # Three sub-sessions answered; the writer's answer came last.
    assert view["answer"] == "Take AF123 (200 EUR)." and view["answered_by"] == writer["id"]

    text = _placeholders(show(store, "deep"))
    assert (
        "\n".join(
            [
                "Iteration 1",
                "    thought      Ask the researcher.",
                "    action       ",
                "      Sub-session IRI",
                "        agent        researcher",
            ]
        )
        in text
    )
    assert (
        "\n".join(
            [
                "          tool call    ask_pricing ok",
                "          observation  200 EUR",
                "            caused       POST /pricing (unknown_service:python) ok, TOOK",
                "              caused       session pricing (unknown_service:python) ok, TOOK",
                "            Sub-session IRI",
                "              agent        pricing",
            ]
        )
        in text
    )
    assert (
        "\n".join(
            [
                "      answer       AF123 at 200 EUR",
                "  Sub-session IRI",
                "    agent        writer",
            ]
        )
        in text
    )
    assert text.endswith(
        "  answer       Take AF123 (200 EUR).\n"
        "answer       Take AF123 (200 EUR).\n"
        "answered by  writer (sub-session IRI)\n"
        "trace        TRACE\n"
    )
    mermaid = show(store, "deep", "mermaid")
    assert '  subgraph QS1["Sub-session: writer"]' in mermaid
    assert "    I1S1I2T1 --> I1S1I2T1S1Q" in mermaid
    assert mermaid.rstrip().endswith("  QS1A -.-> A")


def test_sessions_count_the_whole_run_and_list_only_runs(store: Path) -> None:
    listed = run_cli("sessions", "--store", str(store), "--format", "json")
    assert listed.returncode == 0, listed.stderr
    runs = {s["agent"]: s for s in json.loads(listed.stdout)}
    assert set(runs) == {"triage", "planner", "solo"}
    # triage 2 + billing 2 iterations; ask_billing and billing's lookup_order.
    assert (runs["triage"]["iterations"], runs["triage"]["tool_calls"]) == (4, 2)
    assert (runs["planner"]["iterations"], runs["planner"]["tool_calls"]) == (4, 2)
    assert (runs["solo"]["iterations"], runs["solo"]["tool_calls"]) == (1, 0)
    table = run_cli("sessions", "--store", str(store)).stdout.splitlines()
    (row,) = [line for line in table if "triage" in line]
    assert row.split()[-5:-1] == ["4", "2", "0", "ok"]
    helped = run_cli("sessions", "--help").stdout
    assert "sub-agent sessions included" in " ".join(helped.split())


def test_a_flat_session_keeps_its_own_answer_and_no_sub_sessions(store: Path) -> None:
    view = shown_view(store, "flat")
    assert (view["answer"], view["answered_by"], view["sub_sessions"]) == ("4", None, [])
    assert view["iterations"][0]["sub_sessions"] == []
    text = show(store, "flat")
    assert "answer       4\ntrace" in text and "Sub-session" not in text
    assert "subgraph" not in show(store, "flat", "mermaid")


@pytest.mark.parametrize("turn_spans", [True, False], ids=["turn-spans", "inferred-turns"])
def test_openai_agents_handoff_shows_billing_under_the_handoff(
    tmp_path: Path, turn_spans: bool
) -> None:
    from agents import Runner
    from agents.tracing import set_trace_processors

    from otel_prov.instrumentation.openai_agents import OpenAIAgentsInstrumentor
    from tests.instrumentation.test_openai_agents import (
        ORDER_ANSWER,
        _config,
        _handoff_steps,
        _triage,
        lookup_order,
    )

    path = tmp_path / "store"
    handle = otel_prov.configure(store=path, set_global=False, otlp=False)
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=handle.tracer_provider)
    # Ours only: OpenAI's default exporter would try to upload the trace.
    set_trace_processors([instrumentor.processor])  # type: ignore[list-item]
    try:
        triage, _ = _triage(lookup_order)
        Runner.run_sync(
            triage, QUESTION, run_config=_config(_handoff_steps(), turn_spans=turn_spans)
        )
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])
        handle.shutdown()

    (run,) = json.loads(run_cli("sessions", "--store", str(path), "--format", "json").stdout)
    assert run["agent"] == "triage"
    assert (run["iterations"], run["tool_calls"]) == (3, 2)
    view = shown_view(path, run["id"])
    assert [it["number"] for it in view["iterations"]] == [1]
    (handoff,) = view["iterations"][0]["tool_calls"]
    assert (handoff["name"], handoff["call_id"]) == ("transfer_to_billing", "call_h")
    (billing,) = handoff["sub_sessions"]
    assert billing["agent"] == "billing" and billing["question"] == QUESTION
    assert [it["number"] for it in billing["iterations"]] == [1, 2]
    assert [c["name"] for c in billing["iterations"][0]["tool_calls"]] == ["lookup_order"]
    assert view["answer"] == billing["answer"] == ORDER_ANSWER
    assert view["answered_by"] == billing["id"]
    text = show(path, run["id"])
    assert "    tool call    transfer_to_billing [call_h] ok\n" in text
    assert "      Sub-session " in text and "        agent        billing\n" in text
    assert f"answer       {ORDER_ANSWER}\nanswered by  billing (sub-session " in text
