"""Manual instrumentation: agent sessions, iterations, tool calls and model calls as spans.

Each of :func:`agent_session`, :func:`iteration`, :func:`tool_call` and
:func:`model_call` works as a context manager (``with`` / ``async with``, yielding the
OTel span) and as a decorator of sync or async functions::

    with otel_prov.agent_session("researcher", question=question) as session:
        with otel_prov.iteration(1, thought="I need the weather", action="get_weather"):
            weather = get_weather(city="Paris")       # decorated with @tool_call(...)
        otel_prov.set_answer("It is 18 °C in Paris.")

The spans carry the official ``gen_ai.*`` attributes (operation, agent, tool, model,
usage) and the ``otel_prov.*`` ones (question, thought, action, arguments,
observation, answer).  Content goes on ``otel_prov.*`` unless capture is switched off,
and on the opt-in ``gen_ai.*`` content attributes only when the GenAI variable allows.

An exception inside records status ERROR, ``error.type`` and an ``exception`` event,
then propagates unchanged.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
from collections.abc import Callable, Mapping, Sequence
from contextvars import Token
from types import TracebackType
from typing import Any, TypeVar, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import (
    Link,
    Span,
    SpanContext,
    SpanKind,
    Status,
    StatusCode,
    TracerProvider,
)

from otel_prov import semconv as sc
from otel_prov._version import __version__
from otel_prov.capture._content import capture_genai_content, capture_prov_content, redact
from otel_prov.prov._span_record import attribute_length_limit

__all__ = [
    "agent_session",
    "iteration",
    "model_call",
    "set_action",
    "set_answer",
    "set_arguments",
    "set_observation",
    "set_question",
    "set_thought",
    "set_usage",
    "tool_call",
]

F = TypeVar("F", bound=Callable[..., Any])

_TRACER = trace.get_tracer("otel_prov", __version__)


def _as_text(value: Any) -> str:
    """Content as span text: strings unchanged (the exact JSON the model chose), else JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _error_type(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module == "builtins" else f"{module}.{cls.__qualname__}"


class _SpanScope:
    """One span's lifetime; reusable as a decorator, single-use as a context manager."""

    def __init__(
        self,
        name: str,
        attributes: Mapping[str, Any],
        content: Mapping[str, Any],
        *,
        kind: SpanKind = SpanKind.INTERNAL,
        tracer_provider: TracerProvider | None = None,
        capture_call: bool = False,
        links: Sequence[Link] = (),
    ) -> None:
        self._name = name
        self._links = tuple(links)
        self._attributes = {k: v for k, v in attributes.items() if v is not None}
        self._content = {k: v for k, v in content.items() if v is not None}
        self._kind = kind
        self._provider = tracer_provider
        self._capture_call = capture_call
        self._span: Span | None = None
        self._token: Token[otel_context.Context] | None = None

    def _copy(self) -> _SpanScope:
        return _SpanScope(
            self._name,
            self._attributes,
            self._content,
            kind=self._kind,
            tracer_provider=self._provider,
            capture_call=self._capture_call,
            links=self._links,
        )

    # --- context manager ---------------------------------------------------------
    def __enter__(self) -> Span:
        if self._span is not None:
            raise RuntimeError(f"span scope {self._name!r} is already active; create a new one")
        tracer = (
            _TRACER
            if self._provider is None
            else trace.get_tracer("otel_prov", __version__, tracer_provider=self._provider)
        )
        attributes = dict(self._attributes)
        for key, value in self._content.items():
            _put_content(attributes, key, value, tool=self._capture_call)
        span = tracer.start_span(
            self._name,
            kind=self._kind,
            attributes=attributes,
            links=self._links,
            record_exception=False,
            set_status_on_exception=False,
        )
        self._span = span
        self._token = otel_context.attach(trace.set_span_in_context(span))
        return span

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        span, token = self._span, self._token
        self._span = self._token = None
        if span is None or token is None:
            return
        try:
            if exc is not None and not isinstance(exc, GeneratorExit):
                span.set_attribute(sc.ERROR_TYPE, _error_type(exc))
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc) or type(exc).__name__))
            span.end()
        finally:
            otel_context.detach(token)

    async def __aenter__(self) -> Span:
        return self.__enter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.__exit__(exc_type, exc, tb)

    # --- decorator -----------------------------------------------------------------
    def __call__(self, function: F) -> F:
        signature = inspect.signature(function)

        def arguments_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
            if not self._capture_call:
                return None
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return None  # the call itself will raise the real error
            bound.apply_defaults()
            return _as_text(dict(bound.arguments))

        def start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[_SpanScope, Span]:
            scope = self._copy()
            captured = arguments_of(args, kwargs)
            if captured is not None and sc.OTEL_PROV_ARGUMENTS not in scope._content:
                scope._content[sc.OTEL_PROV_ARGUMENTS] = captured
            return scope, scope.__enter__()

        def finish(span: Span, result: Any) -> Any:
            if self._capture_call:
                set_observation(result, span=span)
            return result

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                scope, span = start(args, kwargs)
                try:
                    result = finish(span, await function(*args, **kwargs))
                except BaseException as exc:
                    scope.__exit__(type(exc), exc, exc.__traceback__)
                    raise
                scope.__exit__(None, None, None)
                return result

            return cast(F, async_wrapper)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            scope, span = start(args, kwargs)
            try:
                result = finish(span, function(*args, **kwargs))
            except BaseException as exc:
                scope.__exit__(type(exc), exc, exc.__traceback__)
                raise
            scope.__exit__(None, None, None)
            return result

        return cast(F, wrapper)


# Content attributes and the opt-in gen_ai twin each one also goes to.
_GENAI_TWIN = {
    sc.OTEL_PROV_ARGUMENTS: sc.GEN_AI_TOOL_CALL_ARGUMENTS,
    sc.OTEL_PROV_OBSERVATION: sc.GEN_AI_TOOL_CALL_RESULT,
}


def _put_content(target: dict[str, Any] | Span, key: str, value: Any, *, tool: bool) -> None:
    """Set a content attribute on a span (or start attributes) as the capture switches allow.

    When the content is left off, its size and hash are recorded instead, so provenance
    keeps a fingerprint of what it may not show.  When an attribute length limit is about
    to cut the value (the SDK does so silently), they are recorded beside it, so the
    graph can say the value is truncated and what the whole of it was.
    """
    text = redact(_as_text(value))
    setter = target.__setitem__ if isinstance(target, dict) else target.set_attribute
    keep = capture_prov_content()
    if keep:
        setter(key, text)
    twin = _GENAI_TWIN.get(key)
    if twin is not None and tool and capture_genai_content():
        setter(twin, text)
        keep = True
    limit = _length_limit(target)
    if not keep or (limit is not None and len(text) > limit):
        size_key, hash_key = sc.CONTENT_DIGEST_KEYS[key]
        data = text.encode()
        setter(size_key, len(data))
        setter(hash_key, "sha256:" + hashlib.sha256(data).hexdigest())


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


def _current(span: Span | None) -> Span:
    return span if span is not None else trace.get_current_span()


def _is_tool_span(span: Span) -> bool:
    attributes = getattr(span, "attributes", None) or {}
    return attributes.get(sc.GEN_AI_OPERATION_NAME) == "execute_tool"


def agent_session(
    name: str = "agent",
    *,
    question: str | None = None,
    conversation_id: str | None = None,
    agent_id: str | None = None,
    tools: Sequence[str] = (),
    follows: Sequence[SpanContext] = (),
    tracer_provider: TracerProvider | None = None,
) -> _SpanScope:
    """An agent session (``invoke_agent {name}``): one task from question to answer.

    ``tools``: names of the tools the agent was given; ``otel-prov verify`` flags a
    session that had tools and used none successfully (the ``tool_use_verified`` gate).
    ``follows``: span contexts of earlier work this session builds on (the previous turn
    of the conversation, the job that queued it); they become span links, and
    ``prov:wasInformedBy`` in the provenance.
    """
    return _SpanScope(
        f"invoke_agent {name}",
        {
            sc.GEN_AI_OPERATION_NAME: "invoke_agent",
            sc.GEN_AI_AGENT_NAME: name,
            sc.GEN_AI_AGENT_ID: agent_id,
            sc.GEN_AI_CONVERSATION_ID: conversation_id,
            sc.OTEL_PROV_AGENT_TOOLS: list(tools) or None,
        },
        {sc.OTEL_PROV_QUESTION: question},
        tracer_provider=tracer_provider,
        links=[Link(context) for context in follows],
    )


def iteration(
    number: int,
    *,
    thought: str | None = None,
    action: str | None = None,
    arguments: Any = None,
    tracer_provider: TracerProvider | None = None,
) -> _SpanScope:
    """One reason-act step of a session, numbered from 1."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"iteration number must be an int >= 1, not {number!r}")
    return _SpanScope(
        f"iteration {number}",
        {sc.OTEL_PROV_ITERATION_NUMBER: number, sc.OTEL_PROV_ACTION: action},
        {sc.OTEL_PROV_THOUGHT: thought, sc.OTEL_PROV_ARGUMENTS: arguments},
        tracer_provider=tracer_provider,
    )


def tool_call(
    name: str,
    *,
    arguments: Any = None,
    call_id: str | None = None,
    tool_type: str = "function",
    tracer_provider: TracerProvider | None = None,
) -> _SpanScope:
    """A tool execution (``execute_tool {name}``).

    As a decorator it records the call's arguments (bound to the signature, as JSON)
    and its return value as the observation; as a context manager pass ``arguments=``
    and call :func:`set_observation`.
    """
    return _SpanScope(
        f"execute_tool {name}",
        {
            sc.GEN_AI_OPERATION_NAME: "execute_tool",
            sc.GEN_AI_TOOL_NAME: name,
            sc.GEN_AI_TOOL_CALL_ID: call_id,
            sc.GEN_AI_TOOL_TYPE: tool_type,
        },
        {sc.OTEL_PROV_ARGUMENTS: arguments},
        tracer_provider=tracer_provider,
        capture_call=True,
    )


def model_call(
    model: str,
    *,
    provider: str | None = None,
    operation: str = "chat",
    tracer_provider: TracerProvider | None = None,
) -> _SpanScope:
    """A call to a language model (``chat {model}``), a CLIENT span as GenAI says."""
    return _SpanScope(
        f"{operation} {model}",
        {
            sc.GEN_AI_OPERATION_NAME: operation,
            sc.GEN_AI_REQUEST_MODEL: model,
            sc.GEN_AI_PROVIDER_NAME: provider,
        },
        {},
        kind=SpanKind.CLIENT,
        tracer_provider=tracer_provider,
    )


def set_question(text: str, *, span: Span | None = None) -> None:
    """The user's question, on the session span (default: the current span)."""
    _put_content(_current(span), sc.OTEL_PROV_QUESTION, text, tool=False)


def set_thought(text: str, *, span: Span | None = None) -> None:
    """The model's reasoning for this step, on the iteration span."""
    _put_content(_current(span), sc.OTEL_PROV_THOUGHT, text, tool=False)


def set_action(tool: str, *, span: Span | None = None) -> None:
    """The tool the step chose (or ``final_answer``).  Not content: always recorded."""
    _current(span).set_attribute(sc.OTEL_PROV_ACTION, tool)


def set_arguments(arguments: Any, *, span: Span | None = None) -> None:
    """The arguments chosen: a JSON string is kept byte for byte, anything else is dumped."""
    target = _current(span)
    _put_content(target, sc.OTEL_PROV_ARGUMENTS, arguments, tool=_is_tool_span(target))


def set_observation(result: Any, *, span: Span | None = None) -> None:
    """What the action returned, on the iteration or tool-call span."""
    target = _current(span)
    _put_content(target, sc.OTEL_PROV_OBSERVATION, result, tool=_is_tool_span(target))


def set_answer(text: str, *, span: Span | None = None) -> None:
    """The final answer, on the session span."""
    _put_content(_current(span), sc.OTEL_PROV_ANSWER, text, tool=False)


def set_usage(
    *, input_tokens: int | None = None, output_tokens: int | None = None, span: Span | None = None
) -> None:
    """Token usage of a model call."""
    target = _current(span)
    if input_tokens is not None:
        target.set_attribute(sc.GEN_AI_USAGE_INPUT_TOKENS, input_tokens)
    if output_tokens is not None:
        target.set_attribute(sc.GEN_AI_USAGE_OUTPUT_TOKENS, output_tokens)
