"""The span shapes: what a session, an iteration, a tool call and a model call look like.

The manual API and every instrumentor build their spans here, so the mapper meets one
shape whatever made it.  A ``*_shape`` function takes what is known when the span
starts and returns a :class:`SpanShape` (name, kind, attributes and content), which
:meth:`SpanShape.start` starts.  What is known only later goes on through the fillers:
:func:`put_content` (content, as the content policy allows), :func:`describe_iteration`
(the step's decision), :func:`declare_tools`, :func:`put_usage`, :func:`put_document` (a
retrieved document), and :func:`record_error`
or :func:`record_failure` when the work failed.

Adding a shape (an MCP call, a plan, an evaluation): register its
attributes in ``semconv/registry/`` (and their constants in ``otel_prov.semconv``),
write a ``*_shape`` function beside the others (its span name and attributes, with
content passed as content so the capture switches apply), a filler if something about
it is only known when it ends, and re-export both from ``otel_prov.capture``.  Then
teach the mapper the role it has (``otel_prov.prov._conventions``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode, Tracer

from otel_prov import semconv as sc
from otel_prov.capture._content import capture_switches, redact
from otel_prov.capture._sinks import warn_if_nothing_records
from otel_prov.prov._conventions import EXECUTE_TOOL, INVOKE_AGENT, RETRIEVAL
from otel_prov.prov._span_record import attribute_length_limit
from otel_prov.prov._withheld import without_content

__all__ = [
    "FINAL_ANSWER",
    "SpanShape",
    "content_text",
    "declare_tools",
    "describe_iteration",
    "iteration_shape",
    "model_call_shape",
    "name_provider",
    "person_id",
    "plan_shape",
    "put_approval",
    "put_content",
    "put_document",
    "put_evaluation",
    "put_postcondition",
    "put_reasoning",
    "put_step_outcome",
    "put_usage",
    "record_error",
    "record_failure",
    "retrieval_shape",
    "session_shape",
    "tool_call_shape",
]

FINAL_ANSWER = "final_answer"
"""The ``otel_prov.action`` of an iteration that answered instead of calling a tool."""

_CLOSED = "closed early: the consumer stopped iterating"
"""Status description of a span whose generator was closed before it was exhausted."""


_withheld: weakref.WeakKeyDictionary[Span, list[str]] = weakref.WeakKeyDictionary()
"""Per span, the content the content policy left off it: what its error message must not
repeat (the mapper withholds what is on a span; ours never gets there).  Held in memory
only, for as long as the span lives."""
_withheld_lock = threading.Lock()
_CARRIED = "_otel_prov_withheld"
"""The attribute of an exception that passed through our spans holding what they withheld:
the spans it ends next (the iteration, the session) withhold that too."""


def _withhold(span: Span, texts: Iterable[str]) -> None:
    with _withheld_lock:
        _withheld.setdefault(span, []).extend(texts)


def _withheld_for(span: Span, error: BaseException | None = None) -> list[str]:
    """What ``span`` withheld, and what every span ``error`` (or its causes) passed
    through did."""
    with _withheld_lock:
        texts = list(_withheld.get(span, ()))
    seen: set[int] = set()
    while error is not None and id(error) not in seen and len(seen) < 20:
        seen.add(id(error))
        texts += getattr(error, _CARRIED, ())
        error = error.__cause__ or error.__context__
    return texts


def _present(values: Mapping[str, Any]) -> dict[str, Any]:
    """``None`` means "not known": such attributes are left off, never set to a placeholder."""
    return {key: value for key, value in values.items() if value is not None}


@dataclasses.dataclass(frozen=True, slots=True)
class SpanShape:
    """A span before it starts: its name, kind, attributes and content.

    Content (question, thought, arguments, ...) stays apart from the attributes until the
    span starts, because the capture switches and redaction are read then: a shape made
    once (by a decorator) follows the settings in force at each call.  ``None`` values
    are dropped, so a shape only has what its caller knew.
    """

    name: str
    attributes: Mapping[str, Any]
    content: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    kind: SpanKind = SpanKind.INTERNAL

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", _present(self.attributes))
        object.__setattr__(self, "content", _present(self.content))

    def with_attributes(self, attributes: Mapping[str, Any]) -> SpanShape:
        """This shape with more attributes (a framework's own, beside the shared ones)."""
        return dataclasses.replace(self, attributes={**self.attributes, **attributes})

    def with_content(self, key: str, value: Any) -> SpanShape:
        """This shape with one more content value (replacing any under ``key``)."""
        return dataclasses.replace(self, content={**self.content, key: value})

    def start(
        self,
        tracer: Tracer,
        *,
        parent: Span | None = None,
        start_time: int | None = None,
        links: Sequence[Link] = (),
    ) -> Span:
        """Start the span (not made current) under ``parent``, else the current span.

        Exceptions are recorded by :func:`record_error`, not by the span itself, so that
        every producer records them the same way.
        """
        attributes = dict(self.attributes)
        capture = None
        if self.content:
            capture = _Capture.now(_tracer_limit(tracer))
            for key, value in self.content.items():
                put_content(attributes, key, value, capture)
        if attributes.get(sc.GEN_AI_OPERATION_NAME) == "invoke_agent":
            warn_if_nothing_records(f"agent session {self.name!r}")
        span = tracer.start_span(
            self.name,
            context=None if parent is None else trace.set_span_in_context(parent),
            kind=self.kind,
            attributes=attributes,
            links=links,
            start_time=start_time,
            record_exception=False,
            set_status_on_exception=False,
        )
        if capture is not None and not capture.prov:
            _withhold(span, (content_text(value) for value in self.content.values()))
        return span


def session_shape(
    agent: str,
    *,
    agent_id: str | None = None,
    conversation_id: str | None = None,
    tools: Sequence[str] = (),
    question: Any = None,
    provider: str | None = None,
    user_id: str | None = None,
) -> SpanShape:
    """An agent session, ``invoke_agent {agent}``: one task from question to answer.

    ``tools``: the tools the agent was given (``otel-prov verify``'s ``tool_use_verified``
    gate); left off when there are none, so an agent without tools is not held to it.
    ``provider``: its model's provider (``gen_ai.provider.name``, which the GenAI
    conventions require of an agent span), when known before the first model call
    (:func:`name_provider` names it then).
    ``user_id``: the user the agent acts on behalf of (``user.id``, under the content
    policy: see :func:`person_id`).
    """
    return SpanShape(
        f"{INVOKE_AGENT} {agent}",
        {
            sc.GEN_AI_OPERATION_NAME: INVOKE_AGENT,
            sc.GEN_AI_AGENT_NAME: agent,
            sc.GEN_AI_AGENT_ID: agent_id,
            sc.GEN_AI_CONVERSATION_ID: conversation_id,
            sc.GEN_AI_PROVIDER_NAME: provider,
            sc.OTEL_PROV_AGENT_TOOLS: list(tools) or None,
            sc.USER_ID: None if user_id is None else person_id(user_id),
        },
        {sc.OTEL_PROV_QUESTION: question},
    )


def name_provider(session: Span, provider: str | None) -> None:
    """Name the provider of the session on ``session``'s span from its model call's, when
    the span names none yet: a framework often knows the model only when it calls it."""
    attributes = getattr(session, "attributes", None) or {}
    if provider and sc.GEN_AI_PROVIDER_NAME not in attributes and session.is_recording():
        session.set_attribute(sc.GEN_AI_PROVIDER_NAME, provider)


def iteration_shape(
    number: int, *, action: str | None = None, thought: Any = None, arguments: Any = None
) -> SpanShape:
    """One reason-act step of a session, ``iteration {number}``, numbered from 1."""
    return SpanShape(
        f"iteration {number}",
        {sc.OTEL_PROV_ITERATION_NUMBER: number, sc.OTEL_PROV_ACTION: action},
        {sc.OTEL_PROV_THOUGHT: thought, sc.OTEL_PROV_ARGUMENTS: arguments},
    )


def tool_call_shape(
    name: str,
    *,
    call_id: str | None = None,
    tool_type: str = "function",
    arguments: Any = None,
    kind: SpanKind = SpanKind.INTERNAL,
) -> SpanShape:
    """A tool execution, ``execute_tool {name}``.  ``call_id``: the id the model gave the call.

    ``kind``: CLIENT or SERVER when the tool runs in another process (an MCP server), so
    the two halves of the call read as a remote call in any trace viewer.
    """
    return SpanShape(
        f"{EXECUTE_TOOL} {name}",
        {
            sc.GEN_AI_OPERATION_NAME: EXECUTE_TOOL,
            sc.GEN_AI_TOOL_NAME: name,
            sc.GEN_AI_TOOL_CALL_ID: call_id,
            sc.GEN_AI_TOOL_TYPE: tool_type,
        },
        {sc.OTEL_PROV_ARGUMENTS: arguments},
        kind=kind,
    )


def model_call_shape(
    model: str | None, *, operation: str = "chat", provider: str | None = None
) -> SpanShape:
    """A call to a language model, ``{operation} {model}``: a CLIENT span, as GenAI says.

    ``model`` None: not known yet (a framework that names it when the call ends); the
    span is named by its operation alone.
    """
    return SpanShape(
        operation if model is None else f"{operation} {model}",
        {
            sc.GEN_AI_OPERATION_NAME: operation,
            sc.GEN_AI_REQUEST_MODEL: model,
            sc.GEN_AI_PROVIDER_NAME: provider,
        },
        kind=SpanKind.CLIENT,
    )


def retrieval_shape(*, data_source: str | None = None, query: Any = None) -> SpanShape:
    """A retrieval of documents for ``query``, ``retrieval {data_source}``: the GenAI
    retrieval span.  ``data_source``: the index or store searched (``gen_ai.data_source.id``).
    The documents it returned go on with :func:`put_document`."""
    return SpanShape(
        RETRIEVAL if data_source is None else f"{RETRIEVAL} {data_source}",
        {sc.GEN_AI_OPERATION_NAME: RETRIEVAL, sc.GEN_AI_DATA_SOURCE_ID: data_source},
        {sc.OTEL_PROV_RETRIEVAL_QUERY: query},
    )


def put_document(
    span: Span,
    index: int,
    *,
    document_id: str | int | None = None,
    content: Any = None,
    score: float | None = None,
    source: str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> None:
    """The document (or chunk) a retrieval returned at 0-based position ``index``.

    ``content`` is content: kept as the capture switches allow, else its size and hash.
    ``source``: the document the chunk was taken from (an IRI, or a name).  ``metadata``
    is kept as a JSON object whatever it holds: keys become strings, and values JSON
    cannot hold (NaN, objects) their text.  Raises ``TypeError``/``ValueError`` for a
    score that is no number or metadata that is no mapping, before anything is set.
    """
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise TypeError(f"a document's score must be a number, not {score!r}")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise TypeError(
            f"a document's metadata must be a mapping (a dict), not {type(metadata).__name__}"
        )
    if document_id is not None:
        key = sc.document_key(sc.OTEL_PROV_RETRIEVAL_DOCUMENT_ID, index)
        span.set_attribute(key, str(document_id))
    if content is not None:
        put_content(span, sc.document_key(sc.OTEL_PROV_RETRIEVAL_DOCUMENT_CONTENT, index), content)
    if score is not None:
        span.set_attribute(sc.document_key(sc.OTEL_PROV_RETRIEVAL_DOCUMENT_SCORE, index), score)
    if source is not None:
        span.set_attribute(sc.document_key(sc.OTEL_PROV_RETRIEVAL_DOCUMENT_SOURCE, index), source)
    if metadata is not None:
        text = json.dumps(_json_safe(metadata), ensure_ascii=False, sort_keys=True)
        span.set_attribute(sc.document_key(sc.OTEL_PROV_RETRIEVAL_DOCUMENT_METADATA, index), text)


def _json_safe(value: Any) -> Any:
    """``value`` as plain JSON: string keys, and the text of what JSON has no form for."""
    if isinstance(value, Mapping):
        return {str(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def content_text(value: Any) -> str:
    """Content as span text: strings unchanged (the exact JSON the model chose), else JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


_TWIN_OPERATIONS = {
    sc.OTEL_PROV_ARGUMENTS: EXECUTE_TOOL,
    sc.OTEL_PROV_OBSERVATION: EXECUTE_TOOL,
    sc.OTEL_PROV_RETRIEVAL_QUERY: RETRIEVAL,
    sc.OTEL_PROV_QUESTION: INVOKE_AGENT,
    sc.OTEL_PROV_ANSWER: INVOKE_AGENT,
}
"""Content attribute -> the operation of the spans on which it has its GenAI twin."""


def _message(role: str, **extra: str) -> Callable[[str], str]:
    """The GenAI conventions' messages attribute of one text message by ``role``."""

    def form(text: str) -> str:
        parts = [{"type": "text", "content": text}]
        return json.dumps([{"role": role, "parts": parts, **extra}], ensure_ascii=False)

    return form


_TWIN_FORMS: dict[str, Callable[[str], str]] = {
    sc.OTEL_PROV_QUESTION: _message("user"),
    sc.OTEL_PROV_ANSWER: _message("assistant", finish_reason="stop"),
}
"""Content attribute -> how its twin holds the text, where not as it is: a session's
question is its ``gen_ai.input.messages``, a user message; its answer its
``gen_ai.output.messages``, the assistant's last message."""


def _has_twin(target: Mapping[str, Any] | Span, key: str) -> bool:
    attributes = target if isinstance(target, Mapping) else getattr(target, "attributes", None)
    operation = (attributes or {}).get(sc.GEN_AI_OPERATION_NAME)
    return operation is not None and operation == _TWIN_OPERATIONS.get(key)


@dataclasses.dataclass(frozen=True, slots=True)
class _Capture:
    """The capture switches and the attribute length limit, read once for the content
    values set together (a span's start attributes, an iteration's decision)."""

    prov: bool
    genai: bool
    limit: int | None

    @classmethod
    def now(cls, limit: int | None) -> _Capture:
        return cls(*capture_switches(), limit)

    @classmethod
    def of(cls, target: dict[str, Any] | Span) -> _Capture:
        return cls.now(_length_limit(target))


def put_content(
    target: dict[str, Any] | Span, key: str, value: Any, capture: _Capture | None = None
) -> None:
    """Set a content attribute on a span (or start attributes) as the capture switches allow.

    On a tool call, arguments and result (on a retrieval, its query) also go to their
    opt-in ``gen_ai.*`` twins when the GenAI variable allows.  When the content is left
    off, its size and hash are recorded instead, so provenance keeps a fingerprint of what
    it may not show.  When an
    attribute length limit is about to cut the value (the SDK does so silently), they are
    recorded beside it, so the graph can say the value is truncated and what the whole of
    it was.  ``capture``: the switches and limit already read for ``target``.
    """
    capture = capture or _Capture.of(target)
    given = content_text(value)
    text = redact(given)
    setter = target.__setitem__ if isinstance(target, dict) else target.set_attribute
    keep = capture.prov
    if not keep and not isinstance(target, dict):
        _withhold(target, (given,))
    if keep:
        setter(key, text)
    twin = sc.GEN_AI_CONTENT_TWINS.get(key)
    if twin is not None and capture.genai and _has_twin(target, key):
        form = _TWIN_FORMS.get(key)
        setter(twin, text if form is None else form(text))
        keep = True
    limit = capture.limit
    if not keep or (limit is not None and len(text) > limit):
        digest_keys = sc.content_digest_keys(key)
        if digest_keys is None:
            raise ValueError(f"{key} is not a content attribute of the otel_prov registry")
        size_key, hash_key = digest_keys
        data = text.encode()
        setter(size_key, len(data))
        setter(hash_key, "sha256:" + hashlib.sha256(data).hexdigest())


def _tracer_limit(tracer: Tracer) -> int | None:
    """The attribute length limit of the spans ``tracer`` starts: the SDK tracer's own span
    limits (read from the environment when its provider was made), else the setting."""
    limits = getattr(tracer, "_span_limits", None)
    if limits is None:
        return _length_limit({})
    limit = getattr(limits, "max_span_attribute_length", None)
    return limit if isinstance(limit, int) else None


def _length_limit(target: dict[str, Any] | Span) -> int | None:
    """The attribute length limit the value will meet: the span's own, or for attributes
    of a span not started yet, the SDK's environment setting."""
    if not isinstance(target, dict):
        return attribute_length_limit(target)
    for variable in ("OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT", "OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT"):
        setting = os.environ.get(variable, "").strip()
        if setting.isdigit():
            return int(setting)
    return None


def describe_iteration(
    span: Span,
    *,
    thought: Any = None,
    action: str | None = None,
    arguments: Any = None,
    observation: Any = None,
) -> None:
    """An iteration's decision, once the model has made it: why (``thought``), which tool
    (``action``, or :data:`FINAL_ANSWER`), with what ``arguments``, and what came back.
    ``None`` leaves a part unset; the action is a tool name, not content, so always kept."""
    capture = _Capture.of(span)
    if thought is not None:
        put_content(span, sc.OTEL_PROV_THOUGHT, thought, capture)
    if action is not None:
        span.set_attribute(sc.OTEL_PROV_ACTION, action)
    if arguments is not None:
        put_content(span, sc.OTEL_PROV_ARGUMENTS, arguments, capture)
    if observation is not None:
        put_content(span, sc.OTEL_PROV_OBSERVATION, observation, capture)


def declare_tools(span: Span, names: Sequence[str]) -> None:
    """The whole set of tools a session's agent was given so far (a framework may bind
    more while it runs: each call replaces the attribute with the set it passes)."""
    span.set_attribute(sc.OTEL_PROV_AGENT_TOOLS, list(names))


def put_usage(
    span: Span,
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    cost: float | None = None,
    currency: str | None = None,
    cost_source: str | None = None,
) -> None:
    """A model call's token usage and cost; a count that is not known is left off, not zero.

    Input tokens include those read from or written to a cache, output tokens the
    reasoning ones, as the GenAI conventions count them.
    """
    for key, value in (
        (sc.GEN_AI_USAGE_INPUT_TOKENS, input_tokens),
        (sc.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens),
        (sc.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, cache_read_tokens),
        (sc.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS, cache_write_tokens),
        (sc.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS, reasoning_tokens),
        (sc.GEN_AI_USAGE_COST_AMOUNT, cost),
        (sc.GEN_AI_USAGE_COST_CURRENCY, currency),
        (sc.GEN_AI_USAGE_COST_SOURCE, cost_source),
    ):
        if value is not None:
            span.set_attribute(key, value)


def plan_shape(steps: Sequence[str], *, name: str = "plan") -> SpanShape:
    """The making of a plan (GenAI operation ``plan``), carrying its ordered steps."""
    return SpanShape(
        name,
        {sc.GEN_AI_OPERATION_NAME: sc.PLAN_OPERATION, sc.OTEL_PROV_PLAN_STEPS: list(steps)},
    )


def put_step_outcome(span: Span, plan_id: str, number: int, outcome: str) -> None:
    """What became of step ``number`` of the plan ``plan_id`` (an event: the latest wins)."""
    span.add_event(
        sc.STEP_OUTCOME_EVENT,
        {
            sc.OTEL_PROV_PLAN_ID: plan_id,
            sc.OTEL_PROV_PLAN_STEP: number,
            sc.OTEL_PROV_PLAN_STEP_OUTCOME: outcome,
        },
    )


def put_postcondition(
    span: Span,
    name: str,
    *,
    ok: bool,
    detail: str | None = None,
    step: Mapping[str, str | int] | None = None,
) -> None:
    """A postcondition checked (an event), with the plan step it was checked for."""
    attributes: dict[str, str | int | bool] = {
        sc.OTEL_PROV_POSTCONDITION_NAME: name,
        sc.OTEL_PROV_POSTCONDITION_OK: ok,
        **(step or {}),
    }
    if detail is not None:
        attributes[sc.OTEL_PROV_POSTCONDITION_DETAIL] = detail
    span.add_event(sc.POSTCONDITION_EVENT, attributes)


def put_evaluation(
    span: Span,
    name: str,
    *,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    evaluator: str | None = None,
    response_id: str | None = None,
) -> None:
    """A ``gen_ai.evaluation.result`` event on the span evaluated (or, with
    ``response_id``, naming the model response judged)."""
    if not name:
        raise ValueError('an evaluation needs a name (e.g. "relevance")')
    attributes: dict[str, str | float] = {sc.GEN_AI_EVALUATION_NAME: name}
    for key, value in (
        (sc.GEN_AI_EVALUATION_SCORE_VALUE, None if score is None else float(score)),
        (sc.GEN_AI_EVALUATION_SCORE_LABEL, label),
        (sc.GEN_AI_EVALUATION_EXPLANATION, explanation),
        (sc.OTEL_PROV_EVALUATION_EVALUATOR, evaluator),
        (sc.GEN_AI_RESPONSE_ID, response_id),
    ):
        if value is not None:
            attributes[key] = value
    span.add_event(sc.GEN_AI_EVALUATION_RESULT, attributes)


def put_reasoning(span: Span, event: str, attributes: Mapping[str, Any]) -> None:
    """A goal, hypothesis, piece of evidence or decision (an ``otel_prov.goal`` ...
    ``otel_prov.decision`` event, :data:`otel_prov.semconv.REASONING_EVENTS`) on the span
    of the step that formed it.  Its text (``otel_prov.reasoning.text``) is content:
    kept as the capture switches allow, else its size and hash; ids, weights and
    confidences are not.  ``None`` values are left off."""
    recorded: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is None:
            continue
        if key == sc.OTEL_PROV_REASONING_TEXT:
            put_content(recorded, key, value, _Capture.of(span))
        else:
            recorded[key] = value
    span.add_event(event, recorded)


def person_id(identifier: str) -> str:
    """A person's id as the content policy allows: as given when content is captured, else
    ``sha256:<hex>`` of it, a pseudonym that still tells one person from another (the
    mapper names the person's node by that hash either way)."""
    if capture_switches()[0]:
        return identifier
    return "sha256:" + hashlib.sha256(identifier.encode()).hexdigest()


def put_approval(
    span: Span,
    decision: str,
    approver: str | None,
    *,
    approver_name: str | None = None,
    reason: str | None = None,
    waited: float | None = None,
    tool_name: str | None = None,
    tool_call_id: str | None = None,
    at_ns: int | None = None,
) -> None:
    """An ``otel_prov.approval`` event: ``approver`` decided ``decision`` on a tool call, at
    ``at_ns`` (default: now) after the run ``waited`` seconds for it.

    The call is the span's own (a tool call span, then marked as one that needed an
    approval; ``waited`` None: since the call started) or the one ``tool_call_id`` names.
    The approver's id is kept under the content policy (:func:`person_id`); name and
    reason are content, left off without it.  ``approver`` None: the framework does not
    say who decided (the mapper records a person it cannot name).
    Raises ``ValueError`` for an unknown decision or an empty approver, before anything
    is recorded.
    """
    if decision not in sc.APPROVAL_DECISIONS:
        raise ValueError(f"a decision is approved, rejected or modified, not {decision!r}")
    if approver is not None and (not isinstance(approver, str) or not approver):
        raise ValueError("an approver is a person's id, a non-empty string")
    if waited is not None and not (isinstance(waited, (int, float)) and waited >= 0):
        raise ValueError(f"waited is a number of seconds >= 0, not {waited!r}")
    on_the_call = _has_operation(span, EXECUTE_TOOL) and tool_call_id is None
    started = getattr(span, "start_time", None)
    if waited is None and on_the_call and isinstance(started, int):
        waited = max(0, (at_ns or time.time_ns()) - started) / 1e9
    content = capture_switches()[0]
    attributes: dict[str, str | float] = {sc.OTEL_PROV_APPROVAL_DECISION: decision}
    for key, value in (
        (sc.OTEL_PROV_APPROVAL_APPROVER_ID, None if approver is None else person_id(approver)),
        (sc.OTEL_PROV_APPROVAL_APPROVER_NAME, approver_name if content else None),
        (sc.OTEL_PROV_APPROVAL_REASON, redact(reason) if content and reason else None),
        (sc.OTEL_PROV_APPROVAL_WAIT, None if waited is None else float(waited)),
        (sc.GEN_AI_TOOL_NAME, tool_name),
        (sc.GEN_AI_TOOL_CALL_ID, tool_call_id),
    ):
        if value is not None:
            attributes[key] = value
    if on_the_call:
        span.set_attribute(sc.OTEL_PROV_APPROVAL_REQUIRED, True)
    span.add_event(sc.APPROVAL_EVENT, attributes, timestamp=at_ns)


def _has_operation(span: Span, operation: str) -> bool:
    attributes = getattr(span, "attributes", None) or {}
    return bool(attributes.get(sc.GEN_AI_OPERATION_NAME) == operation)


def _error_type(error: BaseException) -> str:
    cls = type(error)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


def record_error(span: Span, error: BaseException) -> None:
    """The exception that ended the span's work: ``error.type`` (its qualified class), an
    ``exception`` event and status ERROR.

    ``GeneratorExit`` (a consumer closed a stream early) is not a failure but the work was
    cut short: without a mark the span would read as work that completed, so it gets the
    status and type, and no exception event (there is no error to show).
    """
    if isinstance(error, GeneratorExit):
        record_failure(span, _error_type(error), _CLOSED)
        return
    message = str(error) or type(error).__name__
    texts = _withheld_for(span, error)
    if not texts:
        span.record_exception(error)
        record_failure(span, _error_type(error), message)
        return
    # Content capture is off and the span knows content its message may repeat: the
    # event's message and stack trace withhold it as the status does.
    stack = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    span.record_exception(
        error,
        attributes={
            "exception.message": without_content(message, texts),
            "exception.stacktrace": without_content(stack, texts),
        },
    )
    # An exception that takes no attribute: the spans it ends next withhold less.
    with contextlib.suppress(AttributeError, TypeError):
        setattr(error, _CARRIED, tuple(texts))
    record_failure(span, _error_type(error), message, texts)


def record_failure(
    span: Span, error_type: str, description: str, texts: Sequence[str] | None = None
) -> None:
    """A failure a framework reports without an exception (a tool's error message, an
    error record): ``error.type`` and status ERROR with ``description``, the content the
    span withheld (``texts``, by default what the content policy left off it) taken out."""
    withheld = _withheld_for(span) if texts is None else texts
    if withheld:
        description = without_content(description, withheld)
    span.set_attribute(sc.ERROR_TYPE, error_type)
    span.set_status(Status(StatusCode.ERROR, description))
