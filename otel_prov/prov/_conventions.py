"""Which attribute says what, in every convention the mapper reads.

Our own ``otel_prov.*``, the official GenAI ``gen_ai.*``, OpenInference, OpenLLMetry and
the frameworks that trace themselves (Pydantic AI, LlamaIndex, Google ADK) record the
same facts under other keys and in other shapes: the span's kind, the question and
answer, a tool call's name, arguments and result, the model and its usage; tool calls a
model asked for inside its output messages, tool definitions as JSON, the agent's name
in LangChain run metadata, and text wrapped in the framework's serialised messages.
This module is the only one that knows those keys and shapes: the span record's role
(``_span_record``), the mapper (``_mapper``) and the write-ahead log
(``otel_prov/processing/_wal.py``) ask it.  Pure functions of attributes.

Adding a convention (spans some other instrumentation emits):

1. a :class:`Convention` in ``CONVENTIONS``: the attribute that names its span kinds and
   the :class:`Role` of each kind, and its key for each fact it records.  The order of
   ``CONVENTIONS`` is the order keys are tried in: a value under an earlier
   convention's key wins;
2. if it wraps its text in a serialised framework payload, its keys in ``wrapped``
   (``message_lists`` for those that hold a list of chat messages and nothing else; a
   message of a new shape is read in :mod:`otel_prov.prov._messages`, a payload of a new
   shape in :func:`unwrapped`);
3. if it records tool calls or tool definitions in structured attributes, their reading
   in :func:`calls_in` or :func:`defined_tools`; retrieved documents are read by
   :func:`otel_prov.prov._retrieved.retrieved_documents` from the patterns in
   ``documents`` and ``document_lists``;
4. a test in ``tests/test_third_party_conventions.py`` (and one with the instrumentation
   itself in ``tests/instrumentation/test_third_party.py`` if it can run there).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from otel_prov import semconv as sc
from otel_prov.prov._messages import (
    ASSISTANT,
    TOOL,
    USER,
    EventLike,
    Message,
    MessageSources,
    SpanMessages,
    block_text,
    json_text,
    loads,
    messages,
    react,
    received_messages,
    sent_messages,
    span_messages,
)

__all__ = [
    "AGENT_NAME_KEYS",
    "ANSWER_FIELDS",
    "ANSWER_KEYS",
    "ANSWER_TOOLS",
    "ARGUMENT_KEYS",
    "CACHE_READ_TOKEN_KEYS",
    "CACHE_WRITE_TOKEN_KEYS",
    "CONVENTIONS",
    "COST_AMOUNT_KEYS",
    "COST_CURRENCY_KEYS",
    "COST_SOURCE_KEYS",
    "DATA_SOURCE_KEYS",
    "ENVELOPES",
    "EVENT_MARKERS",
    "EXECUTE_TOOL",
    "HELPER_NAMES",
    "IDENTITY_KEYS",
    "INPUT_TOKEN_KEYS",
    "INVOKE_AGENT",
    "MESSAGE_LIST_KEYS",
    "MESSAGE_SOURCES",
    "MIME_TYPES",
    "MODEL_KEYS",
    "NAMED_RUNS",
    "OUTPUT_TOKEN_KEYS",
    "PLACEHOLDERS",
    "PRICED_MODEL_KEYS",
    "PROVIDER_KEYS",
    "QUERY_KEYS",
    "QUESTION_FIELDS",
    "QUESTION_KEYS",
    "REASONING_TOKEN_KEYS",
    "RESULT_KEYS",
    "RETRIEVAL",
    "RUN_ARGUMENTS",
    "RUN_NAME_KEYS",
    "RUN_RESULTS",
    "SESSION_ID_KEYS",
    "TOOL_CALL_ID_KEYS",
    "TOOL_CALL_KEYS",
    "TOOL_NAME_KEYS",
    "TOOL_SPAN_SUFFIXES",
    "WRAPPED_KEYS",
    "Convention",
    "Read",
    "Request",
    "Role",
    "agent_name",
    "calls_in",
    "classify",
    "defined_tools",
    "first_user_message",
    "holds_messages",
    "is_agent_run",
    "is_run_record",
    "json_typed",
    "model_output",
    "model_output_text",
    "output_text",
    "read_sent",
    "span_answer",
    "span_question",
    "starts_as_tool_call",
    "tool_exchange",
    "tool_name_from_span_name",
    "tool_schema_name",
    "unwrapped",
]


INVOKE_AGENT = "invoke_agent"
"""GenAI ``gen_ai.operation.name`` of an agent's run, and the first word of its span name."""
EXECUTE_TOOL = "execute_tool"
"""GenAI ``gen_ai.operation.name`` of a tool execution, and the first word of its span name."""
RETRIEVAL = "retrieval"
"""GenAI ``gen_ai.operation.name`` of a retrieval, and the first word of its span name."""


class Role(enum.Enum):
    """What a span is in the provenance model (PROV-MODEL.md, "Which span is what")."""

    SESSION = "session"
    ITERATION = "iteration"
    TOOL_CALL = "tool_call"
    MODEL_CALL = "model_call"
    RETRIEVAL = "retrieval"
    SPAN = "span"


@dataclasses.dataclass(frozen=True, slots=True)
class Convention:
    """Where one convention records each fact the mapper reads (empty: it does not)."""

    name: str
    kind_key: str | None = None
    """The attribute naming the span's kind (operation)."""
    roles: Mapping[str, Role] = dataclasses.field(default_factory=dict)
    """Span kind -> its role."""
    run_kinds: frozenset[str] = frozenset()
    """Kinds that are a session when the span is a root or an agent's whole run
    (:func:`is_agent_run`), and a plain span otherwise."""
    question: tuple[str, ...] = ()
    answer: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    result: tuple[str, ...] = ()
    tool_name: tuple[str, ...] = ()
    tool_call_id: tuple[str, ...] = ()
    model: tuple[str, ...] = ()
    provider: tuple[str, ...] = ()
    priced_model: tuple[str, ...] = ()
    """The model a call is priced as: the one that answered, else the one asked for."""
    input_tokens: tuple[str, ...] = ()
    output_tokens: tuple[str, ...] = ()
    cache_read_tokens: tuple[str, ...] = ()
    cache_write_tokens: tuple[str, ...] = ()
    reasoning_tokens: tuple[str, ...] = ()
    cost_amount: tuple[str, ...] = ()
    cost_currency: tuple[str, ...] = ()
    cost_source: tuple[str, ...] = ()
    session_id: tuple[str, ...] = ()
    agent_name: tuple[str, ...] = ()
    """The name of the agent a session runs."""
    run_name: tuple[str, ...] = ()
    """The name a session span gives its run (an agent's or a workflow's): one run
    recorded twice, by two instrumentations, has the same name in both."""
    wrapped: frozenset[str] = frozenset()
    """Keys whose text may be wrapped in a serialised framework payload (:func:`unwrapped`)."""
    message_lists: frozenset[str] = frozenset()
    """Of those, the keys that hold a list of chat messages: their question or answer is a
    message's text, or there is none (the list itself is never the text)."""
    question_fields: tuple[str, ...] = ()
    """Fields of a JSON object under the question key that hold the question itself
    (a run's keyword arguments, ``{"task": ...}``)."""
    query: tuple[str, ...] = ()
    """What a retrieval searched with."""
    data_source: tuple[str, ...] = ()
    """The index or store a retrieval searched."""
    documents: tuple[re.Pattern[str], ...] = ()
    """Retrieved documents as one attribute per field: patterns with an ``index`` group
    (the document's position) and a ``field`` group (``id``, ``content``, ``score``,
    ``source``, ``metadata``, ``size`` or ``sha256``)."""
    document_lists: tuple[str, ...] = ()
    """Retrieved documents as one attribute: a JSON list of objects with those fields."""
    helpers: tuple[str, ...] = ()
    """Span-name endings of spans of a call's kind that only prepare the call and ask no
    model or tool: plain spans."""
    run_arguments: tuple[str, ...] = ()
    """Keys of a JSON object under the question key that is a run's arguments, not its
    question: the question is then the first user message of the session's first model call."""
    run_results: tuple[str, ...] = ()
    """How text under the answer key starts when it is a run's result object, not its
    answer: the answer is then the text of the session's last model call that called no
    tool."""
    placeholders: frozenset[str] = frozenset()
    """Values written where there is none (read as absent)."""
    named_runs: tuple[tuple[str, str], ...] = ()
    """(attribute, span-name ending) pairs: a session span with that attribute and no
    agent name of its own is named by its span name without the ending."""
    answer_tools: frozenset[str] = frozenset()
    """Tools a framework answers through (or ends its loop with): their spans are the
    run's answer being given, not tool calls of a step (plain spans; the session holds the
    answer), and a model call after a step that chose one extracts the answer within it."""
    answer_fields: tuple[str, ...] = ()
    """Fields of a JSON object under the answer key that hold the answer itself (a
    module's structured output, ``{"reasoning": ..., "answer": ...}``)."""
    envelopes: tuple[str, ...] = ()
    """Keys of a JSON object that only wraps a call's arguments (``{"kwargs": {...}}``):
    the arguments, and a run's question fields, are read inside it."""
    mime_types: Mapping[str, str] = dataclasses.field(default_factory=dict)
    """Content key -> the key of its media type: a JSON string under a key typed
    ``application/json`` is decoded once (``"Paris: 18 °C"`` is the text Paris: 18 °C)."""
    event_markers: tuple[str, ...] = ()
    """Attributes of a span that records an event of its parent (an error, an answer
    given) in its parent's kind: a plain span, whatever kind it claims."""
    tool_span_suffixes: tuple[str, ...] = ()
    """Span-name endings of a tool call named by its span alone (``get_weather.__call__``):
    its tool is the span name without them."""


CONVENTIONS: tuple[Convention, ...] = (
    Convention(
        "otel_prov",
        question=(sc.OTEL_PROV_QUESTION,),
        answer=(sc.OTEL_PROV_ANSWER,),
        arguments=(sc.OTEL_PROV_ARGUMENTS,),
        result=(sc.OTEL_PROV_OBSERVATION,),
        query=(sc.OTEL_PROV_RETRIEVAL_QUERY,),
        documents=(
            re.compile(
                r"otel_prov\.retrieval\.document\."
                r"(?P<field>id|content|score|source|metadata|size|sha256)\.(?P<index>[0-9]{1,9})"
            ),
        ),
    ),
    Convention(
        "OpenTelemetry GenAI",
        kind_key=sc.GEN_AI_OPERATION_NAME,
        roles={
            INVOKE_AGENT: Role.SESSION,
            "invoke_workflow": Role.SESSION,
            EXECUTE_TOOL: Role.TOOL_CALL,
            "chat": Role.MODEL_CALL,
            "generate_content": Role.MODEL_CALL,
            "text_completion": Role.MODEL_CALL,
            RETRIEVAL: Role.RETRIEVAL,
        },
        arguments=(sc.GEN_AI_TOOL_CALL_ARGUMENTS,),
        result=(sc.GEN_AI_TOOL_CALL_RESULT,),
        tool_name=(sc.GEN_AI_TOOL_NAME,),
        tool_call_id=(sc.GEN_AI_TOOL_CALL_ID,),
        model=(sc.GEN_AI_REQUEST_MODEL, sc.GEN_AI_RESPONSE_MODEL),
        # ``gen_ai.system``: the provider's name before the conventions renamed it.
        provider=(sc.GEN_AI_PROVIDER_NAME, "gen_ai.system"),
        priced_model=(sc.GEN_AI_RESPONSE_MODEL, sc.GEN_AI_REQUEST_MODEL),
        input_tokens=(sc.GEN_AI_USAGE_INPUT_TOKENS,),
        output_tokens=(sc.GEN_AI_USAGE_OUTPUT_TOKENS,),
        cache_read_tokens=(sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,),
        # ``cache_creation`` was renamed ``cache_write`` (semantic-conventions-genai).
        cache_write_tokens=(
            sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
            "gen_ai.usage.cache_write.input_tokens",
        ),
        reasoning_tokens=(sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS,),
        cost_amount=(sc.GEN_AI_USAGE_COST_AMOUNT,),
        cost_currency=(sc.GEN_AI_USAGE_COST_CURRENCY,),
        cost_source=(sc.GEN_AI_USAGE_COST_SOURCE,),
        session_id=(sc.GEN_AI_CONVERSATION_ID,),
        agent_name=(sc.GEN_AI_AGENT_NAME,),
        # A result may be content blocks (``[{"text": ...}]``: MCP, Strands Agents).
        wrapped=frozenset({sc.GEN_AI_TOOL_CALL_RESULT}),
        # A workflow run of one agent (Google ADK's ``invoke_workflow``) has its name.
        run_name=(sc.GEN_AI_AGENT_NAME, "gen_ai.workflow.name"),
        query=(sc.GEN_AI_RETRIEVAL_QUERY_TEXT,),
        data_source=(sc.GEN_AI_DATA_SOURCE_ID,),
        document_lists=(sc.GEN_AI_RETRIEVAL_DOCUMENTS,),
    ),
    Convention(
        "OpenInference",
        kind_key="openinference.span.kind",
        roles={
            "AGENT": Role.SESSION,
            "TOOL": Role.TOOL_CALL,
            "LLM": Role.MODEL_CALL,
            "RETRIEVER": Role.RETRIEVAL,
        },
        # LangGraph's agent run (``create_agent``) is a CHAIN, not an AGENT.
        run_kinds=frozenset({"CHAIN"}),
        question=("input.value",),
        answer=("output.value",),
        arguments=("input.value",),
        result=("output.value",),
        tool_name=("tool.name",),
        model=("llm.model_name",),
        # ``llm.provider`` is who hosts the model, ``llm.system`` whose API it is (the
        # openai client records only the latter, "openai").
        provider=("llm.provider", "llm.system"),
        priced_model=("llm.model_name",),
        input_tokens=("llm.token_count.prompt",),
        output_tokens=("llm.token_count.completion",),
        cache_read_tokens=("llm.token_count.prompt_details.cache_read",),
        cache_write_tokens=("llm.token_count.prompt_details.cache_write",),
        reasoning_tokens=("llm.token_count.completion_details.reasoning",),
        session_id=("session.id",),
        # ``graph.node.id``: the agent's node, all CrewAI's AGENT span says of its name.
        agent_name=("agent.name", "graph.node.id"),
        run_name=("agent.name",),
        wrapped=frozenset({"input.value", "output.value"}),
        mime_types={"input.value": "input.mime_type", "output.value": "output.mime_type"},
        query=("input.value",),
        documents=(
            re.compile(
                r"retrieval\.documents\.(?P<index>[0-9]{1,9})\.document\."
                r"(?P<field>id|content|score|metadata)"
            ),
        ),
    ),
    Convention(
        "OpenLLMetry",
        kind_key="traceloop.span.kind",
        roles={"agent": Role.SESSION, "workflow": Role.SESSION, "tool": Role.TOOL_CALL},
        question=("traceloop.entity.input",),
        answer=("traceloop.entity.output",),
        arguments=("traceloop.entity.input",),
        result=("traceloop.entity.output",),
        tool_name=("traceloop.entity.name",),
        # Its usage keys from before the GenAI conventions named cached and reasoning tokens.
        cache_read_tokens=("gen_ai.usage.cache_read_input_tokens",),
        # Strands Agents writes ``cache_write`` under the same older scheme.
        cache_write_tokens=(
            "gen_ai.usage.cache_creation_input_tokens",
            "gen_ai.usage.cache_write_input_tokens",
        ),
        reasoning_tokens=("gen_ai.usage.reasoning_tokens",),
        run_name=("traceloop.entity.name",),
        wrapped=frozenset({"traceloop.entity.input", "traceloop.entity.output"}),
    ),
    # OpenLLMetry names a LangChain retriever run by its operation, not by its span kind
    # (a "task"), and records the query and the documents as JSON payloads.
    Convention(
        "OpenLLMetry retrievers",
        kind_key=sc.GEN_AI_OPERATION_NAME,
        roles={"vector_db_retrieve": Role.RETRIEVAL},
        query=("traceloop.entity.input",),
        document_lists=("traceloop.entity.output",),
    ),
    # Pydantic AI's own GenAI instrumentation (``Instrumentation()``, ``Agent.instrument_all()``):
    # its spans are GenAI ones, but its ``invoke_agent`` span keeps the question only in the
    # run's message history and the answer under a key of its own.
    # Its instrumentation version 2 names a tool call's arguments and result its own way.
    Convention(
        "Pydantic AI",
        question=("pydantic_ai.all_messages",),
        answer=("final_result",),
        arguments=("tool_arguments",),
        result=("tool_response",),
        wrapped=frozenset({"pydantic_ai.all_messages"}),
        message_lists=frozenset({"pydantic_ai.all_messages"}),
    ),
    # smolagents through OpenInference: the run's ``input.value`` is the JSON of ``run()``'s
    # keyword arguments, its task the question.
    # The agent's name is only in the run's span name (``weather.run``), and the agent
    # answers by calling its ``final_answer`` tool.
    Convention(
        "smolagents (OpenInference)",
        question_fields=("task",),
        named_runs=(("smolagents.tools_names", ".run"),),
        answer_tools=frozenset({"final_answer"}),
    ),
    # CrewAI through OpenInference: the crew's kickoff (a root CHAIN, the wrapper of the
    # one agent's run) lists its tasks, whose description is the question; the agent's
    # AGENT span records ``_execute_core``'s arguments (agent, context, tools) as its input.
    Convention(
        "CrewAI (OpenInference)",
        question=("crew_tasks",),
        question_fields=("description",),
        wrapped=frozenset({"crew_tasks"}),
        run_arguments=("agent",),
    ),
    # CrewAI through OpenLLMetry: the crew's workflow and its task are sessions around the
    # agent's, and the task's description is the question.
    Convention("CrewAI (OpenLLMetry)", question=("crewai.task.description",)),
    # LlamaIndex agents through OpenInference's instrumentor: the run (``FunctionAgent.run``,
    # a root CHAIN) records the workflow's arguments and a truncated repr of its result,
    # the model is asked in an LLM span inside another (``achat`` -> ``chat``), a third LLM
    # span only prepares the request, and a tool's output is a serialised ``ToolOutput``.
    Convention(
        "LlamaIndex (OpenInference)",
        helpers=("._prepare_chat_with_tools",),
        run_arguments=("start_event",),
        run_results=("StopEvent(",),
    ),
    # DSPy through OpenInference: a module's call records ``{"input_args": {...}}`` (a tool's
    # ``{"kwargs": {...}}``), its output the signature's fields (``{"answer": ...}``), a
    # tool's result as JSON (``"Paris: 18 °C"``), a tool span is named ``get_weather.__call__``
    # with no tool name, and ReAct ends its loop by calling ``finish``, then extracts the
    # answer with one more model call.
    Convention(
        "DSPy (OpenInference)",
        question_fields=("question",),
        answer_fields=("answer",),
        envelopes=("input_args", "kwargs", "args"),
        tool_span_suffixes=(".__call__",),
        answer_tools=frozenset({"finish"}),
    ),
    # BeeAI through OpenInference: a run's input is ``{"input": ...}``, and each event its
    # emitter sends (a tool's error, the final answer) is a span of its own, of the kind of
    # the span it happened in, named by its event path.
    Convention(
        "BeeAI (OpenInference)", question_fields=("input",), event_markers=("metadata.path",)
    ),
    # Google ADK's built-in tracing: GenAI spans (content only with the GenAI opt-ins), an
    # ``invoke_workflow`` span around the agent's ``invoke_agent`` one, and a tool call id
    # it did not have written as a placeholder.
    Convention("Google ADK", placeholders=frozenset({"<not specified>"})),
    # Last: whole message lists (JSON), taken as a session's question and answer only when
    # no convention above has the text itself.
    Convention(
        "OpenTelemetry GenAI messages",
        question=("gen_ai.input.messages",),
        answer=("gen_ai.output.messages",),
        wrapped=frozenset({"gen_ai.input.messages", "gen_ai.output.messages"}),
        message_lists=frozenset({"gen_ai.input.messages", "gen_ai.output.messages"}),
    ),
)
"""Every convention the mapper reads, in the order their keys are tried."""


def _keys(fact: str) -> tuple[str, ...]:
    """Every convention's keys for ``fact`` (a :class:`Convention` field), in order, once."""
    keys: tuple[str, ...] = ()
    for convention in CONVENTIONS:
        keys += getattr(convention, fact)
    return tuple(dict.fromkeys(keys))


QUESTION_KEYS = _keys("question")
ANSWER_KEYS = _keys("answer")
ARGUMENT_KEYS = _keys("arguments")
RESULT_KEYS = _keys("result")
TOOL_NAME_KEYS = _keys("tool_name")
TOOL_CALL_ID_KEYS = _keys("tool_call_id")
MODEL_KEYS = _keys("model")
PROVIDER_KEYS = _keys("provider")
PRICED_MODEL_KEYS = _keys("priced_model")
INPUT_TOKEN_KEYS = _keys("input_tokens")
OUTPUT_TOKEN_KEYS = _keys("output_tokens")
CACHE_READ_TOKEN_KEYS = _keys("cache_read_tokens")
CACHE_WRITE_TOKEN_KEYS = _keys("cache_write_tokens")
REASONING_TOKEN_KEYS = _keys("reasoning_tokens")
COST_AMOUNT_KEYS = _keys("cost_amount")
COST_CURRENCY_KEYS = _keys("cost_currency")
COST_SOURCE_KEYS = _keys("cost_source")
SESSION_ID_KEYS = _keys("session_id")
USER_KEYS = (sc.USER_ID, "traceloop.association.properties.user_id")
"""Where a session's user is: OTel's ``user.id`` (OpenInference's ``using_user`` sets it
on every span of its context) and OpenLLMetry's ``user_id`` association property
(``Traceloop.set_association_properties``)."""
AGENT_NAME_KEYS = _keys("agent_name")
RUN_NAME_KEYS = _keys("run_name")
QUERY_KEYS = _keys("query")
DATA_SOURCE_KEYS = _keys("data_source")
WRAPPED_KEYS = frozenset().union(*(convention.wrapped for convention in CONVENTIONS))
MESSAGE_LIST_KEYS = frozenset().union(*(convention.message_lists for convention in CONVENTIONS))
QUESTION_FIELDS = _keys("question_fields")
HELPER_NAMES = _keys("helpers")
RUN_ARGUMENTS = _keys("run_arguments")
RUN_RESULTS = _keys("run_results")
PLACEHOLDERS = frozenset().union(*(convention.placeholders for convention in CONVENTIONS))
NAMED_RUNS = tuple(pair for convention in CONVENTIONS for pair in convention.named_runs)
ANSWER_TOOLS = frozenset().union(*(convention.answer_tools for convention in CONVENTIONS))
ANSWER_FIELDS = _keys("answer_fields")
ENVELOPES = _keys("envelopes")
MIME_TYPES = {key: typed for c in CONVENTIONS for key, typed in c.mime_types.items()}
TOOL_SPAN_SUFFIXES = _keys("tool_span_suffixes")
EVENT_MARKERS = _keys("event_markers")
_KIND_KEYS = tuple(c.kind_key for c in CONVENTIONS if c.kind_key is not None)
TOOL_CALL_KEYS = tuple(
    dict.fromkeys(_KIND_KEYS + TOOL_NAME_KEYS + TOOL_CALL_ID_KEYS + ARGUMENT_KEYS)
)
"""What a tool call is read from (its role, name, call id and arguments), in every
convention: all the write-ahead log keeps of a call it may have to recover."""

IDENTITY_KEYS = frozenset(
    _KIND_KEYS
    + TOOL_NAME_KEYS
    + TOOL_CALL_ID_KEYS
    + AGENT_NAME_KEYS
    + RUN_NAME_KEYS
    + SESSION_ID_KEYS
    + USER_KEYS
    + MODEL_KEYS
    + PROVIDER_KEYS
    + DATA_SOURCE_KEYS
    + (sc.OTEL_PROV_ITERATION_NUMBER,)
)
"""What says which span this is (its kind, names, ids, model), in every convention, and
none of what it says: all the write-ahead log keeps of a span when content is withheld."""


def classify(attributes: Mapping[str, Any], *, root: bool = False, name: str = "") -> Role:
    """The role of a span, from our own, the official GenAI or third-party conventions.

    ``root`` says the span has no parent, ``name`` is its name (a helper span that only
    prepares a call is a plain span, whatever kind it claims).  OpenInference marks a
    LangGraph agent run (``create_agent``) as a ``CHAIN``, not ``AGENT``: a root ``CHAIN``,
    or one whose run metadata names an agent and no graph node (an agent run inside an
    HTTP request, say), is the whole run, so it is classified as the session; graph nodes
    stay plain spans.
    """
    if sc.OTEL_PROV_ITERATION_NUMBER in attributes:
        return Role.ITERATION
    if name.endswith(HELPER_NAMES) or any(key in attributes for key in EVENT_MARKERS):
        return Role.SPAN
    for convention in CONVENTIONS:
        if convention.kind_key is None:
            continue
        kind = attributes.get(convention.kind_key)
        if not isinstance(kind, str):
            continue
        role = convention.roles.get(kind)
        if (
            role is Role.TOOL_CALL
            and (_tool_name(attributes) or tool_name_from_span_name(name)) in ANSWER_TOOLS
        ):
            return Role.SPAN  # the answer being given: the session holds it
        if role is not None:
            return role
        if kind in convention.run_kinds and (root or is_agent_run(attributes)):
            return Role.SESSION
    return Role.SPAN


def _tool_name(attributes: Mapping[str, Any]) -> str | None:
    return next(
        (v for key in TOOL_NAME_KEYS if isinstance(v := attributes.get(key), str) and v), None
    )


def starts_as_tool_call(name: str, attributes: Mapping[str, Any]) -> bool:
    """Will a span just started be a tool call?  Its attributes say so, or its name alone:
    the GenAI span name ``execute_tool {tool}`` comes before some instrumentations set
    their attributes."""
    return name.startswith(EXECUTE_TOOL) or classify(attributes) is Role.TOOL_CALL


def tool_name_from_span_name(name: str) -> str:
    """A tool call's name when no attribute gives it: its GenAI span name without the
    ``execute_tool`` prefix, or a span name without a ``tool_span_suffixes`` ending
    (``get_weather.__call__``); the whole name when it has neither."""
    name = name.removeprefix(f"{EXECUTE_TOOL} ").strip()
    for suffix in TOOL_SPAN_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name.removesuffix(suffix)
    return name


def json_typed(attributes: Mapping[str, Any], key: str, text: str) -> str:
    """``text`` (the value of ``key``) decoded once when its media type key says it is
    JSON and it is a JSON string; ``text`` itself otherwise."""
    typed = MIME_TYPES.get(key)
    if typed is None or attributes.get(typed) != "application/json" or not text.startswith('"'):
        return text
    decoded = loads(text)
    return decoded if isinstance(decoded, str) else text


def holds_messages(text: str) -> bool:
    """Is ``text`` an object of messages (``{"messages": [...]}``)?  When none of them is a
    message read (Haystack's are Python reprs), it holds no question or answer."""
    if '"messages"' not in text:
        return False
    parsed = loads(text)
    return isinstance(parsed, dict) and isinstance(parsed.get("messages"), list)


def _enveloped(parsed: Any) -> Any:
    """What an envelope of a call's arguments (``ENVELOPES``) wraps: the one non-empty
    object inside it, level by level; ``parsed`` itself when it wraps nothing."""
    while isinstance(parsed, dict):
        inner = {k: v for k, v in parsed.items() if v not in (None, {}, [])}
        if len(inner) != 1:
            break
        ((key, value),) = inner.items()
        if key not in ENVELOPES or not isinstance(value, dict):
            break
        parsed = value
    return parsed


def is_agent_run(attributes: Mapping[str, Any]) -> bool:
    """An OpenInference ``CHAIN`` that is a LangChain agent's whole run, wherever it sits
    in the trace: its run metadata names the agent and no graph node (the graph's nodes
    carry ``langgraph_node``).  A substring test: this runs on span start."""
    metadata = attributes.get("metadata")
    return (
        isinstance(metadata, str)
        and '"lc_agent_name"' in metadata
        and '"langgraph_node"' not in metadata
    )


def agent_name(attributes: Mapping[str, Any], span_name: str = "") -> str | None:
    """The agent a session span names other than under an agent name key: in LangChain run
    metadata (OpenInference's ``metadata``), or in its span name (``named_runs``)."""
    for marker, ending in NAMED_RUNS:
        if marker in attributes and span_name.endswith(ending) and len(span_name) > len(ending):
            return span_name.removesuffix(ending)
    metadata = attributes.get("metadata")
    if not isinstance(metadata, str) or '"lc_agent_name"' not in metadata:
        return None
    parsed = loads(metadata)
    name = parsed.get("lc_agent_name") if isinstance(parsed, dict) else None
    return name if isinstance(name, str) and name else None


def is_run_record(text: str, pick: str) -> bool:
    """Is ``text``, under a ``question`` or ``answer`` key, a framework's record of the whole
    run (its arguments, its result object) that holds no question or answer to read?"""
    if pick == "answer":
        return text.lstrip().startswith(RUN_RESULTS)
    if pick != "question" or not RUN_ARGUMENTS or not text.lstrip().startswith("{"):
        return False
    parsed = loads(text)
    return isinstance(parsed, dict) and any(key in parsed for key in RUN_ARGUMENTS)


MESSAGE_SOURCES = MessageSources(
    instructions=("gen_ai.system_instructions",),
    input_lists=("gen_ai.input.messages",),
    output_lists=("gen_ai.output.messages",),
    input_flattened=("llm.input_messages.",),  # OpenInference
    output_flattened=("llm.output_messages.",),
    input_legacy=("gen_ai.prompt.",),  # OpenLLMetry before the GenAI message lists
    output_legacy=("gen_ai.completion.",),
    # The deprecated GenAI message events (Strands Agents' default).
    input_events={
        "gen_ai.system.message": "system",
        "gen_ai.user.message": USER,
        "gen_ai.assistant.message": ASSISTANT,
        "gen_ai.tool.message": TOOL,
    },
    output_events=("gen_ai.choice",),
    detail_events=("gen_ai.client.inference.operation.details",),
    # OpenInference's whole request and response, when it flattened no text of them
    # (openai-agents' generation spans of Responses items).
    input_late=("input.value",),
    output_late=("output.value",),
)
"""Where each convention records a span's chat messages (see :mod:`._messages`)."""


def _messages(attributes: Mapping[str, Any], events: Iterable[EventLike]) -> SpanMessages:
    return span_messages(attributes, tuple(events), MESSAGE_SOURCES)


def read_sent(attributes: Mapping[str, Any], events: Iterable[EventLike]) -> tuple[Message, ...]:
    """What a span says it sent to a model (a :data:`Read`): its input messages, in any
    form :mod:`._messages` reads."""
    return sent_messages(attributes, tuple(events), MESSAGE_SOURCES)


def _received(attributes: Mapping[str, Any], events: Iterable[EventLike]) -> tuple[Message, ...]:
    return received_messages(attributes, tuple(events), MESSAGE_SOURCES)


Read = Callable[[Mapping[str, Any], Iterable[EventLike]], tuple[Message, ...]]
"""A reader of one side of a span's messages, given its attributes and events."""


def _first(found: Iterable[Message], role: str) -> str | None:
    return next((m.text for m in found if m.role == role and m.text), None)


def _last(found: Iterable[Message], role: str) -> str | None:
    return _first(reversed(tuple(found)), role)


def first_user_message(
    attributes: Mapping[str, Any], events: Iterable[EventLike] = (), sent: Read = read_sent
) -> str | None:
    """The text of the first user message a model call was sent: the question, for a
    session that records none of its own.  Any form :mod:`._messages` reads (``sent``:
    see :func:`model_output`)."""
    return _first(sent(attributes, events), USER)


Request = tuple[Mapping[str, Any], Iterable[EventLike]]
"""A model call's attributes and events."""


def model_output(
    attributes: Mapping[str, Any],
    events: Iterable[EventLike] = (),
    following: Request | None = None,
    sent: Read = read_sent,
) -> tuple[Message, ...]:
    """What a model call answered: its output messages, in any form :mod:`._messages`
    reads, read once by a caller that asks several things of them (:func:`output_text`,
    :func:`calls_in`).  When it records none, and the ``following`` request of the
    conversation was sent this call's messages and more, the assistant messages right after
    them: what this call answered (OpenLLMetry records an openai-agents Chat Completions
    generation's input only).  ``sent`` reads a request's input: a caller that reads the
    requests of a conversation in turn passes one that reads each once."""
    output = _received(attributes, events)
    if output or following is None:
        return output
    before, later = sent(attributes, events), sent(*following)
    if len(later) <= len(before) or any(
        (a.role, a.text) != (b.role, b.text) for a, b in zip(before, later, strict=False)
    ):
        return ()
    answered: list[Message] = []
    for item in later[len(before) :]:
        if item.role != ASSISTANT:
            break
        answered.append(react(item))
    return tuple(answered)


def model_output_text(
    attributes: Mapping[str, Any],
    events: Iterable[EventLike] = (),
    following: Request | None = None,
) -> str | None:
    """The text a model call answered with: :func:`output_text` of its output
    (``following``: see :func:`model_output`)."""
    return output_text(model_output(attributes, events, following))


def output_text(received: Iterable[Message]) -> str | None:
    """The text of a model call's output messages (its reasoning when it gave no text,
    also when it called tools): every output message's text but a tool's, in order."""
    output = [m for m in received if m.role != TOOL]
    texts = [m.text for m in output if m.text]
    if texts:
        return "\n".join(texts)
    reasoning = [m.reasoning for m in output if m.reasoning]
    return "\n".join(reasoning) if reasoning else None


def span_question(attributes: Mapping[str, Any], events: Iterable[EventLike] = ()) -> str | None:
    """A session's question from its own messages (attributes or events): its first user
    message, when no question key holds it."""
    return first_user_message(attributes, events)


def span_answer(attributes: Mapping[str, Any], events: Iterable[EventLike] = ()) -> str | None:
    """A session's answer from its own output messages: the last assistant text."""
    return _last(_received(attributes, events), ASSISTANT)


def tool_exchange(
    attributes: Mapping[str, Any], events: Iterable[EventLike] = ()
) -> tuple[str | None, str | None]:
    """(arguments, result) of a tool call recorded as messages (Strands Agents: the call
    sent as a ``tool_call`` part or a ``gen_ai.tool.message`` event, its result as a
    ``tool_call_response`` part or a ``gen_ai.choice`` event)."""
    found = _messages(attributes, events)
    calls = [call for m in found.input for call in m.calls]
    arguments = calls[0].arguments if calls else _first(found.input, TOOL)
    result = next((m.text for m in found.output if m.text), None)
    return arguments, result


def unwrapped(text: str, pick: str) -> str | None:
    """The plain text inside a serialised framework payload, or None if it is not one.

    ``pick``: ``question`` (a run's task, ``{"task": ...}``, else the first user message of
    ``{"messages": [...]}`` or of a bare message list), ``answer`` (an ``ANSWER_FIELDS``
    field, else the last assistant message), ``arguments`` (what an envelope of a call's
    arguments wraps, ``{"kwargs": {...}}``), ``result`` (a serialised tool message,
    ``{"type": "tool", "data": {"content": ...}}``, LlamaIndex's ``ToolOutput`` or content
    blocks ``[{"text": ...}]``) or ``query`` (a retriever's input, ``{"query": ...}``).
    Messages in any form :func:`otel_prov.prov._messages.message` reads; a message without
    text says nothing.
    """
    if not text.lstrip().startswith(("{", "[")):
        return None
    parsed = loads(text)
    if pick == "result":
        return _tool_output(parsed)
    if pick == "query":
        query = parsed.get("query") if isinstance(parsed, dict) else None
        return query if isinstance(query, str) else None
    if pick == "arguments":
        inner = _enveloped(parsed)
        return json_text(inner) if inner is not parsed else None
    if pick == "answer" and isinstance(parsed, dict):
        answer = next((parsed[f] for f in ANSWER_FIELDS if isinstance(parsed.get(f), str)), None)
        if answer is not None:
            return str(answer)
    if pick == "question":
        # A run's arguments ({"task": ...}, in an envelope: {"input_args": {"question": ...}}),
        # or its one task of a list (CrewAI's crew_tasks).
        one = parsed[0] if isinstance(parsed, list) and len(parsed) == 1 else parsed
        one = _enveloped(one)
        fields = one if isinstance(one, dict) else {}
        task = next((fields[f] for f in QUESTION_FIELDS if isinstance(fields.get(f), str)), None)
        if task is not None:
            return str(task)
    found = messages(parsed) if isinstance(parsed, (dict, list)) else ()
    return _first(found, USER) if pick == "question" else _last(found, ASSISTANT)


def _tool_output(parsed: Any) -> str | None:
    """What a tool returned, in LangChain's serialised tool message (also as OpenLLMetry
    records it, ``{"output": {"lc": 1, ...}}``), LlamaIndex's ``ToolOutput``
    (``raw_output``: the tool's own return value, before it became blocks), a list of
    content blocks (``[{"text": ...}]``, Strands Agents, MCP), one text block (``{"type":
    "text", "text": ...}``, an MCP result as openai-agents records it) or Google ADK's
    ``{"result": ...}``, in which it wraps a tool's return value that is not an object."""
    if (
        isinstance(parsed, list)
        and parsed
        and all(isinstance(b, dict) and isinstance(b.get("text"), str) for b in parsed)
    ):
        return block_text(parsed)
    if not isinstance(parsed, dict):
        return None
    if parsed.get("type") == "text" and isinstance(parsed.get("text"), str):
        return block_text(parsed)
    if "raw_output" in parsed and "tool_name" in parsed:
        return json_text(parsed["raw_output"])
    if list(parsed) == ["result"]:
        return json_text(parsed["result"])
    found = [m for m in messages(parsed) if m.role == TOOL]
    return found[0].text if found else None


def calls_in(received: Iterable[Message]) -> list[tuple[str, str, str | None]]:
    """(tool name, arguments JSON, call id) of each tool call a model call's output
    messages (:func:`model_output`) asked for, in order: GenAI ``tool_call`` parts,
    OpenInference's flattened ``tool_calls`` of any output message, ``toolUse`` blocks of
    a ``gen_ai.choice`` event, Responses ``function_call`` items, a ReAct ``Action:``."""
    return [(call.name, call.arguments, call.call_id) for found in received for call in found.calls]


def defined_tools(attributes: Mapping[str, Any], seen: set[str] | None = None) -> list[str]:
    """Tool names in ``gen_ai.tool.definitions`` (a JSON list of ``{"name"}`` or
    ``{"function": {"name"}}`` objects) and OpenInference's ``llm.tools.N.tool.json_schema``.
    ``seen``: definitions already read (and read now, added): every model call of a run
    sends the same ones, and parsing them again was 6% of mapping an Agno run."""
    texts = [attributes.get("gen_ai.tool.definitions")]
    texts += [
        value
        for key, value in attributes.items()
        if key.startswith("llm.tools.") and key.endswith(".tool.json_schema")
    ]
    names = []
    for text in texts:
        if not isinstance(text, str) or (seen is not None and text in seen):
            continue
        if seen is not None:
            seen.add(text)
        parsed = loads(text)
        for item in parsed if isinstance(parsed, list) else [parsed]:
            name = tool_schema_name(item) if isinstance(item, dict) else None
            if name:
                names.append(name)
    return names


def tool_schema_name(schema: Mapping[str, Any]) -> str | None:
    """The name in a tool definition: OpenAI's ``{"function": {"name"}}`` or a flat
    ``{"name"}`` (GenAI definitions, Anthropic, OpenAI custom tools)."""
    function = schema.get("function")
    name = function.get("name") if isinstance(function, Mapping) else schema.get("name")
    return name if isinstance(name, str) and name else None
