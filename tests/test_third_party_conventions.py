"""Reading other instrumentations' attributes: agent runs, names, model text, wrapped payloads."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov import map_spans
from otel_prov import semconv as sc
from otel_prov.prov._conventions import (
    ARGUMENT_KEYS,
    CONVENTIONS,
    QUESTION_KEYS,
    TOOL_CALL_KEYS,
    WRAPPED_KEYS,
    Convention,
    agent_name,
    calls_in,
    first_user_message,
    is_agent_run,
    is_run_record,
    model_output,
    model_output_text,
    starts_as_tool_call,
    tool_name_from_span_name,
    unwrapped,
)
from otel_prov.prov._iris import activity_iri
from otel_prov.prov._rdf import literal, parse_literal
from otel_prov.prov._retrieved import retrieved_documents
from otel_prov.prov._span_record import Role, SpanEvent, SpanRecord, classify
from otel_prov.prov._vocab import RDF_TYPE, O, P
from tests.builders import T0, TRACE, make_span

_ROLES = st.sampled_from(["user", "human", "assistant", "ai", "system", "tool"])
_MESSAGES = st.lists(
    st.tuples(_ROLES, st.text(), st.booleans()).map(
        lambda m: (
            {"role": m[0], "content": m[1]} if m[2] else {"type": m[0], "data": {"content": m[1]}}
        )
    ),
    max_size=6,
)


@given(st.text())
def test_unwrapping_any_text_never_raises(text: str) -> None:
    for pick in ("question", "answer", "result", "query"):
        found = unwrapped(text, pick)
        assert found is None or isinstance(found, str)


@given(_MESSAGES)
def test_question_is_the_first_user_message_and_answer_the_last_assistant_one(
    messages: list[dict[str, object]],
) -> None:
    def role(message: dict[str, object]) -> object:
        return message.get("role") or message.get("type")

    def content(message: dict[str, object]) -> object:
        data = message.get("data")
        return data["content"] if isinstance(data, dict) else message["content"]

    payload = json.dumps({"messages": messages})
    # A message without text says nothing: the first (last) one with text is taken.
    users = [content(m) for m in messages if role(m) in ("user", "human") and content(m)]
    assistants = [content(m) for m in messages if role(m) in ("assistant", "ai") and content(m)]
    assert unwrapped(payload, "question") == (users[0] if users else None)
    assert unwrapped(payload, "answer") == (assistants[-1] if assistants else None)


def test_a_serialised_tool_message_gives_its_content() -> None:
    message = {"type": "tool", "data": {"content": "Paris: 18 °C", "tool_call_id": "c1"}}
    assert unwrapped(json.dumps(message), "result") == "Paris: 18 °C"
    assert unwrapped(json.dumps({"type": "ai", "data": {"content": "x"}}), "result") is None
    assert unwrapped("Paris: 18 °C", "result") is None  # plain text stays as it is


def test_an_openinference_agent_run_is_a_session_wherever_it_sits() -> None:
    run = {"openinference.span.kind": "CHAIN", "metadata": '{"lc_agent_name": "weather"}'}
    node = {
        "openinference.span.kind": "CHAIN",
        "metadata": '{"lc_agent_name": "weather", "langgraph_node": "model"}',
    }
    assert is_agent_run(run) and not is_agent_run(node)
    assert classify(run, root=False) is Role.SESSION
    assert classify(node, root=False) is Role.SPAN
    assert classify(node, root=True) is Role.SESSION  # a root chain is the whole run
    assert agent_name(run) == "weather" and agent_name({"metadata": "{bad"}) is None


def test_model_output_text_from_each_convention() -> None:
    assert model_output_text({"llm.output_messages.0.message.content": "think"}) == "think"
    assert model_output_text({"gen_ai.completion.0.content": "legacy"}) == "legacy"
    messages = [
        {"role": "assistant", "parts": [{"type": "text", "content": "a"}, {"type": "tool_call"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "b"}]},
    ]
    assert model_output_text({"gen_ai.output.messages": json.dumps(messages)}) == "a\nb"
    assert model_output_text({"gen_ai.output.messages": "not json"}) is None
    assert model_output_text({}) is None


@pytest.mark.parametrize(
    ("kind_key", "kind", "role"),
    [
        (convention.kind_key, kind, role)
        for convention in CONVENTIONS
        if convention.kind_key is not None
        for kind, role in convention.roles.items()
    ],
)
def test_every_convention_classifies_its_own_kinds(kind_key: str, kind: str, role: Role) -> None:
    assert classify({kind_key: kind}) is role
    assert classify({kind_key: [kind]}) is Role.SPAN  # not a kind: a list is no name


def test_an_earlier_convention_wins_and_a_later_one_fills_in() -> None:
    assert QUESTION_KEYS[0] == sc.OTEL_PROV_QUESTION
    assert ARGUMENT_KEYS.index(sc.GEN_AI_TOOL_CALL_ARGUMENTS) < ARGUMENT_KEYS.index("input.value")
    # Whole message lists are the last resort for a question, after any wrapped text.
    assert QUESTION_KEYS[-1] == "gen_ai.input.messages"
    assert {"input.value", "traceloop.entity.output"} <= WRAPPED_KEYS


@pytest.mark.parametrize(
    "convention",
    [c for c in CONVENTIONS if Role.TOOL_CALL in c.roles.values()],
    ids=lambda c: c.name,
)
def test_the_write_ahead_log_keeps_what_a_tool_call_is_read_from(convention: Convention) -> None:
    assert convention.kind_key is not None
    read_from = {convention.kind_key, *convention.tool_name, *convention.arguments}
    assert read_from <= set(TOOL_CALL_KEYS)


def test_a_tool_call_is_known_at_its_start_by_its_attributes_or_its_genai_name() -> None:
    assert starts_as_tool_call("execute_tool search", {})  # attributes set later
    assert starts_as_tool_call("search", {"openinference.span.kind": "TOOL"})
    assert not starts_as_tool_call("chat gpt-x", {"gen_ai.operation.name": "chat"})
    assert tool_name_from_span_name("execute_tool search") == "search"
    assert tool_name_from_span_name("lookup") == "lookup"  # no prefix: the whole name


_DOCUMENT_KEYS = st.sampled_from(
    [
        "retrieval.documents.{}.document.id",
        "retrieval.documents.{}.document.content",
        "retrieval.documents.{}.document.score",
        "retrieval.documents.{}.document.metadata",
        "otel_prov.retrieval.document.id.{}",
        "otel_prov.retrieval.document.sha256.{}",
        "gen_ai.retrieval.documents",
    ]
)
_ANY_VALUE = st.one_of(st.text(), st.integers(), st.floats(), st.booleans(), st.none())


@given(
    st.dictionaries(
        st.tuples(
            _DOCUMENT_KEYS, st.integers(0, 12).map(str) | st.just("9" * 5000) | st.just("-1")
        ).map(lambda k: k[0].format(k[1])),
        _ANY_VALUE,
    )
)
def test_reading_documents_from_any_attributes_never_raises(attributes: dict[str, object]) -> None:
    documents = retrieved_documents(attributes)
    assert [d.index for d in documents] == sorted({d.index for d in documents})
    for document in documents:
        assert document.source is None or isinstance(document.source, str)


@given(st.lists(st.tuples(st.text(), st.text(), st.floats(allow_nan=False)), max_size=5))
def test_openinference_documents_are_read_in_order_with_their_source(
    documents: list[tuple[str, str, float]],
) -> None:
    attributes: dict[str, object] = {"openinference.span.kind": "RETRIEVER"}
    for index, (identifier, source, score) in enumerate(documents):
        prefix = f"retrieval.documents.{index}.document."
        attributes[prefix + "id"] = identifier
        attributes[prefix + "score"] = score
        attributes[prefix + "metadata"] = json.dumps({"source": source})
    found = retrieved_documents(attributes)
    assert [(d.fields["id"], d.fields["score"], d.source) for d in found] == [
        (identifier, score, source or None) for identifier, source, score in documents
    ]
    assert classify(attributes) is Role.RETRIEVAL


def test_a_genai_message_history_gives_its_question_and_answer() -> None:
    """Pydantic AI keeps a run's history as GenAI messages (``parts``), with no wrapper."""
    history = [
        {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
        {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
        {"role": "assistant", "parts": [{"type": "tool_call", "name": "get_weather"}]},
        {"role": "assistant", "parts": [{"type": "text", "content": "18"}, {"type": "text"}]},
    ]
    assert unwrapped(json.dumps(history), "question") == "Weather in Paris?"
    # The last assistant message with text: a message of tool calls only says nothing.
    assert unwrapped(json.dumps(history[:3]), "answer") is None
    assert unwrapped(json.dumps(history), "answer") == "18"
    assert unwrapped(json.dumps(history), "result") is None  # a list is no tool message
    assert "pydantic_ai.all_messages" in WRAPPED_KEYS


def test_llamaindex_run_records_hold_no_question_or_answer() -> None:
    """Its run span records the workflow's arguments and a repr of its result object."""
    arguments = json.dumps({"init_state": {}, "start_event": "AgentWorkflowStartEvent()"})
    assert is_run_record(arguments, "question")
    assert not is_run_record(json.dumps({"messages": []}), "question")
    assert not is_run_record("{not json", "question")
    assert is_run_record("StopEvent(result=AgentOutput(...", "answer")
    assert not is_run_record("StopEvent(", "result")  # only a question or an answer
    assert not is_run_record("18 °C", "answer")


def test_the_first_user_message_a_model_was_sent() -> None:
    flattened = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "Be brief.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "Weather",
        "llm.input_messages.1.message.contents.1.message_content.type": "image",
        "llm.input_messages.1.message.contents.2.message_content.type": "text",
        "llm.input_messages.1.message.contents.2.message_content.text": "in Paris?",
    }
    assert first_user_message(flattened) == "Weather\nin Paris?"
    genai = [{"role": "user", "parts": [{"type": "text", "content": "Hi"}]}]
    assert first_user_message({"gen_ai.input.messages": json.dumps(genai)}) == "Hi"
    assert first_user_message({}) is None
    prefix = "llm.input_messages.1.message.contents."
    contents = {
        "llm.output_messages.0.message.contents." + key.removeprefix(prefix): value
        for key, value in flattened.items()
        if key.startswith(prefix)
    }
    assert model_output_text(contents) == "Weather\nin Paris?"


def test_a_llamaindex_tool_output_gives_what_the_tool_returned() -> None:
    output = {"blocks": [{"text": "18"}], "tool_name": "t", "raw_output": "18", "is_error": False}
    assert unwrapped(json.dumps(output), "result") == "18"
    output["raw_output"] = {"celsius": 18}
    assert json.loads(unwrapped(json.dumps(output), "result") or "") == {"celsius": 18}


def test_a_helper_span_is_no_call_whatever_kind_it_claims() -> None:
    llm = {"openinference.span.kind": "LLM"}
    assert classify(llm, name="MockLLM._prepare_chat_with_tools") is Role.SPAN
    assert classify(llm, name="MockLLM.achat") is Role.MODEL_CALL


def test_a_placeholder_call_id_gives_way_to_the_one_the_model_chose() -> None:
    """Google ADK writes ``<not specified>`` as the id of a failed tool call; its workflow
    span around the agent's, of the same name, is one run recorded twice."""
    requested = [{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"q": "x"}}
    ]}]  # fmt: skip
    spans = [
        make_span(1, name="invoke_workflow w", gen_ai__operation__name="invoke_workflow",
                  gen_ai__workflow__name="w"),
        make_span(2, 1, name="invoke_agent w", gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="w"),
        make_span(3, 2, name="chat", start_ms=0.1, end_ms=0.2, gen_ai__operation__name="chat",
                  gen_ai__output__messages=json.dumps(requested)),
        make_span(4, 2, name="execute_tool lookup", start_ms=0.3, end_ms=0.4, status="error",
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="lookup",
                  gen_ai__tool__call__id="<not specified>"),
    ]  # fmt: skip
    triples = set(map_spans(spans).triples)
    sessions = {s for s, p, o in triples if p == RDF_TYPE and o == O.AgentSession}
    assert sessions == {activity_iri(TRACE, 2)}
    assert (activity_iri(TRACE, 4), O.toolCallId, literal("c1")) in triples


# --- message content in every form, and the names around it (issue 25) -----------------
def _facts(spans: list[SpanRecord]) -> dict[str, object]:
    """What a reader would say of the run: its sessions, their agents, each content
    entity's text by class, the model calls and their usage and provider."""
    triples = set(map_spans(spans).triples)

    def of(cls: str) -> list[str]:
        return sorted(s for s, p, o in triples if p == RDF_TYPE and o == cls)

    def values(cls: str) -> list[str]:
        return sorted(parse_literal(o) for s in of(cls) for p, o in _po(triples, s, P.value))

    def literals(subjects: list[str], predicate: str) -> list[str]:
        return sorted(parse_literal(o) for s in subjects for _, o in _po(triples, s, predicate))

    sessions, models = of(O.AgentSession), of(O.ModelCall)
    return {
        "sessions": len(sessions),
        "agents": literals(sessions, O.agentLabel),
        "failed": literals(sessions, O.failedCalls),
        "question": values(O.Question),
        "answer": values(O.Answer),
        "thought": values(O.Thought),
        "arguments": values(O.Arguments),
        "observation": values(O.Observation),
        "model_calls": len(models),
        "call_ids": literals(of(O.ToolCall), O.toolCallId),
        "providers": sorted(set(literals(models, O.providerName))),
        "cache_write": literals(models, O.cacheWriteTokens),
    }


def _po(triples: set[tuple[str, str, str]], subject: str, predicate: str) -> list[tuple[str, str]]:
    return [(p, o) for s, p, o in triples if s == subject and p == predicate]


_GENAI_IN = [
    {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
]
_GENAI_CALL = [{"role": "assistant", "finish_reason": "tool_call", "parts": [
    {"type": "text", "content": "Looking it up."},
    {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}},
]}]  # fmt: skip
_GENAI_OUT = [{"role": "assistant", "finish_reason": "stop", "parts": [
    {"type": "text", "content": "18 °C in Paris."}
]}]  # fmt: skip


def test_official_genai_messages_are_plain_text_not_json() -> None:
    """``gen_ai.input.messages`` / ``gen_ai.output.messages`` on the agent span were the
    question and answer as raw JSON, ``\\u00b0`` escapes kept."""
    spans = [
        make_span(1, name="invoke_agent weather", gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="weather", gen_ai__input__messages=json.dumps(_GENAI_IN),
                  gen_ai__output__messages=json.dumps(_GENAI_OUT)),
        make_span(2, 1, name="chat m", start_ms=0.1, end_ms=0.2, gen_ai__operation__name="chat",
                  gen_ai__input__messages=json.dumps(_GENAI_IN),
                  gen_ai__output__messages=json.dumps(_GENAI_CALL)),
        make_span(3, 1, name="execute_tool get_weather", start_ms=0.3, end_ms=0.4,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="get_weather",
                  gen_ai__tool__call__result=json.dumps([{"text": "18 °C"}])),
    ]  # fmt: skip
    facts = _facts(spans)
    assert facts["question"] == ["Weather in Paris?"]
    assert facts["answer"] == ["18 °C in Paris."]
    assert facts["thought"] == ["Looking it up."]
    assert facts["arguments"] == ['{"city": "Paris"}']
    assert facts["observation"] == ["18 °C"]  # content blocks: their text
    assert facts["call_ids"] == ["call_1"]


def test_openinference_responses_messages_numbered_from_one() -> None:
    """OpenInference's Responses API spans number the input from 1 and put the tool call
    in ``llm.output_messages.1``."""
    model = {
        "openinference.span.kind": "LLM",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.contents.0.message_content.type": "text",
        "llm.input_messages.1.message.contents.0.message_content.text": "Weather in Paris?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.1.message.role": "assistant",
        "llm.output_messages.1.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.1.message.tool_calls.0.tool_call.function.name": "get_weather",
    }
    model["llm.output_messages.1.message.tool_calls.0.tool_call.function.arguments"] = (
        '{"city":"Paris"}'
    )
    spans = [
        make_span(1, name="weather", openinference__span__kind="AGENT", agent__name="weather"),
        make_span(2, 1, name="response", start_ms=0.1, end_ms=0.2,
                  **{k.replace(".", "__"): v for k, v in model.items()}),
        make_span(3, 1, name="get_weather", start_ms=0.3, end_ms=0.4,
                  openinference__span__kind="TOOL", tool__name="get_weather",
                  input__value='{"city": "Paris"}', output__value="18 °C"),
    ]  # fmt: skip
    facts = _facts(spans)
    assert facts["question"] == ["Weather in Paris?"]
    assert facts["call_ids"] == ["call_1"]
    assert facts["arguments"] == ['{"city":"Paris"}']
    assert facts["agents"] == ["weather"]  # OpenInference's agent.name


def _event(name: str, **attributes: object) -> SpanEvent:
    return SpanEvent(name, T0, attributes)


def _strands(latest: bool) -> list[SpanRecord]:
    """Strands Agents' own spans: content in message events (default) or in the
    operation details event (``gen_ai_latest_experimental``)."""
    details = "gen_ai.client.inference.operation.details"
    question = [{"text": "Weather in Paris?"}]
    use = {"toolUseId": "t1", "name": "get_weather", "input": {"city": "Paris"}}
    result = [{"text": "18 °C"}]
    if latest:
        asked = _event(
            details,
            **{
                "gen_ai.input.messages": json.dumps(
                    [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
                )
            },
        )
        agent = (
            asked,
            _event(details, **{"gen_ai.output.messages": json.dumps(_GENAI_OUT)}),
        )
        chat = (
            asked,
            _event(details, **{"gen_ai.output.messages": json.dumps(_GENAI_CALL)}),
        )
        tool = (
            _event(
                details,
                **{
                    "gen_ai.input.messages": json.dumps(
                        [
                            {
                                "role": "tool",
                                "parts": [
                                    {
                                        "type": "tool_call",
                                        "name": "get_weather",
                                        "id": "t1",
                                        "arguments": {"city": "Paris"},
                                    }
                                ],
                            }
                        ]
                    )
                },
            ),
            _event(
                details,
                **{
                    "gen_ai.output.messages": json.dumps(
                        [
                            {
                                "role": "tool",
                                "parts": [
                                    {"type": "tool_call_response", "id": "t1", "response": result}
                                ],
                            }
                        ]
                    )
                },
            ),
        )
    else:
        agent = (
            _event("gen_ai.user.message", content=json.dumps(question)),
            _event("gen_ai.choice", message="18 °C in Paris.\n", finish_reason="end_turn"),
        )
        chat = (
            _event("gen_ai.user.message", content=json.dumps(question)),
            _event(
                "gen_ai.choice",
                finish_reason="tool_use",
                message=json.dumps([{"text": "Looking it up."}, {"toolUse": use}]),
            ),
        )
        tool = (
            _event(
                "gen_ai.tool.message", role="tool", content=json.dumps({"city": "Paris"}), id="t1"
            ),
            _event("gen_ai.choice", message=json.dumps(result), id="t1"),
        )
    return [
        make_span(1, name="invoke_agent weather", gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="weather", gen_ai__system="strands-agents", events=agent),
        make_span(2, 1, name="execute_event_loop_cycle", start_ms=0.05, end_ms=0.5),
        make_span(3, 2, name="chat", start_ms=0.1, end_ms=0.2, gen_ai__operation__name="chat",
                  gen_ai__system="strands-agents", gen_ai__request__model="m",
                  gen_ai__usage__cache_write_input_tokens=3, events=chat),
        make_span(4, 2, name="execute_tool get_weather", start_ms=0.3, end_ms=0.4,
                  gen_ai__operation__name="execute_tool", gen_ai__tool__name="get_weather",
                  gen_ai__tool__call__id="t1", events=tool),
    ]  # fmt: skip


@pytest.mark.parametrize("latest", [False, True], ids=["default", "latest-experimental"])
def test_strands_message_events_give_every_content_field(latest: bool) -> None:
    facts = _facts(_strands(latest))
    assert facts["question"] == ["Weather in Paris?"]
    assert facts["thought"] == ["Looking it up."]
    assert json.loads(str(facts["arguments"][0])) == {"city": "Paris"}  # type: ignore[index]
    assert facts["observation"] == ["18 °C"]
    assert [str(a).strip() for a in facts["answer"]] == ["18 °C in Paris."]  # type: ignore[attr-defined]
    # gen_ai.system is the provider's name before gen_ai.provider.name; cache_write.
    assert facts["providers"] == ["strands-agents"]
    assert facts["cache_write"] == ["3"]


def test_cache_write_under_its_current_genai_name() -> None:
    spans = [
        make_span(1, name="invoke_agent a", gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="a"),
        make_span(2, 1, name="chat m", gen_ai__operation__name="chat", gen_ai__request__model="m",
                  gen_ai__usage__cache_write__input_tokens=5),
    ]  # fmt: skip
    assert _facts(spans)["cache_write"] == ["5"]


def test_smolagents_question_is_the_task_of_its_run_arguments() -> None:
    run = json.dumps({"task": "Weather in Paris?", "stream": False, "reset": True})
    spans = [
        make_span(1, name="weather.run", openinference__span__kind="AGENT", input__value=run,
                  output__value="18 °C"),
    ]  # fmt: skip
    assert _facts(spans)["question"] == ["Weather in Paris?"]


def test_pydantic_ai_version_2_tool_arguments_and_response() -> None:
    spans = [
        make_span(1, name="agent run", gen_ai__operation__name="invoke_agent",
                  gen_ai__agent__name="a"),
        make_span(2, 1, name="running tool", gen_ai__operation__name="execute_tool",
                  gen_ai__tool__name="get_weather", tool_arguments='{"city": "Paris"}',
                  tool_response="18 °C"),
    ]  # fmt: skip
    facts = _facts(spans)
    assert facts["arguments"] == ['{"city": "Paris"}']
    assert facts["observation"] == ["18 °C"]


def _agent_workflow(
    kind_key: str, wrapper: dict[str, str], agent: dict[str, str]
) -> list[SpanRecord]:
    """A run under a workflow span around one agent, as OpenInference's and OpenLLMetry's
    openai-agents instrumentations record it: the agent's model call, a tool that answers
    and one that fails."""
    user = {"llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Weather in Paris?"}  # fmt: skip
    llm = {k.replace(".", "__"): v for k, v in user.items()}
    return [
        make_span(1, name="Agent workflow", end_ms=2, **wrapper),
        make_span(2, 1, name="Agent workflow", end_ms=2, openinference__span__kind="CHAIN"),
        make_span(3, 2, name="weather", start_ms=0.1, end_ms=1.9, **agent),
        make_span(4, 3, name="generation", start_ms=0.2, end_ms=0.3,
                  openinference__span__kind="LLM", **llm),
        make_span(5, 3, name="get_weather", start_ms=0.4, end_ms=0.5,
                  **{kind_key: "TOOL" if kind_key.startswith("open") else "tool"},
                  tool__name="get_weather", input__value='{"city": "Paris"}', output__value="18"),
        make_span(6, 3, name="get_weather", start_ms=0.6, end_ms=0.7, status="error",
                  **{kind_key: "TOOL" if kind_key.startswith("open") else "tool"},
                  tool__name="get_weather", input__value='{"city": "Atlantis"}'),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("kind_key", "wrapper", "agent"),
    [
        (
            "openinference__span__kind",
            {"openinference__span__kind": "AGENT"},
            {"openinference__span__kind": "AGENT", "agent__name": "weather"},
        ),
        (
            "traceloop__span__kind",
            {"traceloop__span__kind": "workflow", "traceloop__workflow__name": "Agent Workflow"},
            {"traceloop__span__kind": "agent", "gen_ai__agent__name": "weather",
             "gen_ai__operation__name": "invoke_agent"},
        ),
    ],
    ids=["openinference", "openllmetry"],
)  # fmt: skip
def test_a_workflow_around_one_agent_is_folded_into_the_run(
    kind_key: str, wrapper: dict[str, str], agent: dict[str, str]
) -> None:
    """The outer session had no name and no question, and FAILED 0 while its sub-session
    held the failed call: the run is the agent's."""
    facts = _facts(_agent_workflow(kind_key, wrapper, agent))
    assert facts["sessions"] == 1
    assert facts["agents"] == ["weather"]
    assert facts["question"] == ["Weather in Paris?"]
    assert facts["failed"] == ["1"]
    spans = _agent_workflow(kind_key, wrapper, agent)
    assert map_spans(spans).root == activity_iri(TRACE, 3)


def test_a_workflow_of_several_agents_stays_the_run() -> None:
    spans = [
        make_span(1, name="Agent workflow", end_ms=2, openinference__span__kind="AGENT"),
        make_span(2, 1, name="triage", openinference__span__kind="AGENT", agent__name="triage"),
        make_span(3, 1, name="weather", start_ms=1, openinference__span__kind="AGENT",
                  agent__name="weather"),
    ]  # fmt: skip
    assert map_spans(spans).root == activity_iri(TRACE, 1)


def test_a_model_span_inside_one_of_the_same_name_is_one_model_call() -> None:
    """LlamaIndex's OpenAILike nests an LLM span in another of the same name; the inner one
    has the messages and the tokens."""
    inner = {
        "llm__input_messages__0__message__role": "user",
        "llm__input_messages__0__message__content": "Weather in Paris?",
        "llm__output_messages__0__message__role": "assistant",
        "llm__output_messages__0__message__content": "18 °C.",
        "llm__token_count__prompt": 11,
    }
    spans = [
        make_span(1, name="ReActAgent.run", openinference__span__kind="AGENT",
                  agent__name="react", end_ms=1),
        make_span(2, 1, name="OpenAILike.achat", openinference__span__kind="LLM", start_ms=0.1,
                  end_ms=0.9),
        make_span(3, 2, name="OpenAILike.achat", openinference__span__kind="LLM", start_ms=0.2,
                  end_ms=0.8, **inner),
    ]  # fmt: skip
    facts = _facts(spans)
    assert facts["model_calls"] == 1
    assert facts["question"] == ["Weather in Paris?"]
    assert facts["answer"] == ["18 °C."]


def test_a_model_call_without_output_answered_what_the_next_request_holds() -> None:
    """OpenLLMetry's openai-agents Chat Completions generations record their input only."""
    first = [{"role": "user", "parts": [{"type": "text", "content": "q"}]}]
    answered = {"role": "assistant", "parts": [
        {"type": "text", "content": "think"},
        {"type": "tool_call", "id": "c1", "name": "w", "arguments": {"c": 1}}]}  # fmt: skip
    tool = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "18"}]}
    this = {"gen_ai.input.messages": json.dumps(first)}
    following = ({"gen_ai.input.messages": json.dumps([*first, answered, tool])}, ())
    assert model_output_text(this, (), following) == "think"
    assert calls_in(model_output(this, (), following)) == [("w", '{"c": 1}', "c1")]
    other = ({"gen_ai.input.messages": json.dumps([answered, tool])}, ())
    assert model_output_text(this, (), other) is None  # another conversation


def test_tool_results_in_content_blocks_and_wrappers_are_plain_text() -> None:
    assert unwrapped('{"type": "text", "text": "18"}', "result") == "18"  # MCP
    assert unwrapped('{"result": "18"}', "result") == "18"  # Google ADK
    serialised = {"output": {"lc": 1, "type": "constructor", "id": ["ToolMessage"],
                             "kwargs": {"content": "18", "type": "tool"}}}  # fmt: skip
    assert unwrapped(json.dumps(serialised), "result") == "18"  # OpenLLMetry, LangChain


def test_smolagents_names_its_agent_in_its_run_span_and_answers_through_a_tool() -> None:
    run = {"openinference.span.kind": "AGENT", "smolagents.tools_names": "[]"}
    assert agent_name(run, "weather.run") == "weather"
    assert agent_name({"openinference.span.kind": "AGENT"}, "weather.run") is None
    answer = {"openinference.span.kind": "TOOL", "tool.name": "final_answer"}
    assert classify(answer) is Role.SPAN
    assert classify({**answer, "tool.name": "get_weather"}) is Role.TOOL_CALL


def test_a_crewai_question_is_its_one_task() -> None:
    tasks = [{"description": "Weather in Paris?", "expected_output": "The weather."}]
    assert unwrapped(json.dumps(tasks), "question") == "Weather in Paris?"
    assert unwrapped(json.dumps(tasks * 2), "question") is None


@pytest.mark.parametrize(
    "user_key",
    ["user.id", "traceloop.association.properties.user_id"],
    ids=["openinference", "openllmetry"],
)
def test_a_third_party_session_acts_on_behalf_of_its_user(user_key: str) -> None:
    """OpenInference's ``using_user`` puts ``user.id`` on every span of its context, and
    OpenLLMetry's ``user_id`` association property goes on every span too."""
    session = make_span(
        1,
        name="weather",
        **{"openinference.span.kind": "AGENT", "gen_ai.agent.name": "weather", user_key: "u-7"},
    )
    triples = set(map_spans([session]).triples)
    (agent,) = [o for s, p, o in triples if p == P.wasAssociatedWith and "agent:" in o]
    acted = [o for s, p, o in triples if s == agent and p == P.actedOnBehalfOf]
    assert len(acted) == 1 and (acted[0], O.personId, literal("u-7")) in triples
