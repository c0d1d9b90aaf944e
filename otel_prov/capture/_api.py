"""Manual instrumentation: agent sessions, iterations, tool calls and model calls as spans.

Each of :func:`agent_session`, :func:`iteration`, :func:`tool_call` and
:func:`model_call` works as a context manager (``with`` / ``async with``, yielding the
OTel span) and as a decorator of sync or async functions and generators (the span lasts
as long as the iteration, and is the current span only while the generator runs)::

    with otel_prov.agent_session("researcher", question=question) as session:
        with otel_prov.iteration(1, thought="I need the weather", action="get_weather"):
            weather = get_weather(city="Paris")       # decorated with @tool_call(...)
        otel_prov.set_answer("It is 18 °C in Paris.")

The spans carry the official ``gen_ai.*`` attributes (operation, agent, tool, model,
usage) and the ``otel_prov.*`` ones (question, thought, action, arguments,
observation, answer).  Content goes on ``otel_prov.*`` unless capture is switched off,
and on the opt-in ``gen_ai.*`` content attributes only when the GenAI variable allows.

An exception inside records status ERROR, ``error.type`` and an ``exception`` event,
then propagates unchanged.  With content capture off, what the span was given as content
(arguments, question, thought, ...) is taken out of its error message (``[withheld]``),
and out of the messages of the spans the exception ends next, as the mapper does for
other instrumentations' spans.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Generator, Sequence
from contextvars import Token
from typing import Any, TypeVar, cast

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Link, Span, SpanContext, TracerProvider

from otel_prov import semconv as sc
from otel_prov._version import __version__
from otel_prov.capture._also_async import AlsoAsync
from otel_prov.capture._plan import PlanStep, active_step
from otel_prov.capture._shapes import (
    SpanShape,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    put_approval,
    put_content,
    put_evaluation,
    put_usage,
    record_error,
    session_shape,
    tool_call_shape,
)

__all__ = [
    "agent_session",
    "iteration",
    "model_call",
    "record_approval",
    "record_evaluation",
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


class _SpanScope(AlsoAsync[Span]):
    """One span's lifetime; reusable as a decorator, single-use as a context manager."""

    def __init__(
        self,
        shape: SpanShape,
        *,
        tracer_provider: TracerProvider | None = None,
        capture_call: bool = False,
        links: Sequence[Link] = (),
        step: PlanStep | None = None,
    ) -> None:
        self._shape = shape
        self._step = step
        self._step_token: Token[PlanStep | None] | None = None
        self._links = tuple(links)
        self._provider = tracer_provider
        self._capture_call = capture_call
        self._span: Span | None = None
        self._token: Token[otel_context.Context] | None = None

    def _copy(self, shape: SpanShape) -> _SpanScope:
        return _SpanScope(
            shape,
            tracer_provider=self._provider,
            capture_call=self._capture_call,
            links=self._links,
            step=self._step,
        )

    # --- context manager ---------------------------------------------------------
    def __enter__(self) -> Span:
        if self._span is not None:
            raise RuntimeError(
                f"span scope {self._shape.name!r} is already active; create a new one"
            )
        tracer = (
            _TRACER
            if self._provider is None
            else trace.get_tracer("otel_prov", __version__, tracer_provider=self._provider)
        )
        shape, step = self._shape, self._step or active_step().get()
        if step is not None:
            shape = shape.with_attributes(step.attributes)
            # The spans inside belong to this one, not to the step themselves.
            self._step_token = active_step().set(None)
        span = shape.start(tracer, links=self._links)
        self._span = span
        self._token = otel_context.attach(trace.set_span_in_context(span))
        return span

    def _suspend(self) -> None:
        """Stop being the current span while a generator it runs waits on its consumer
        (whose own work is not this span's)."""
        if self._token is not None:
            otel_context.detach(self._token)
            self._token = None

    def _resume(self) -> None:
        if self._span is not None and self._token is None:
            self._token = otel_context.attach(trace.set_span_in_context(self._span))

    def _yielding(self, inner: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
        """``yield from inner``, this span current only while ``inner`` runs."""
        sent: Any = None
        thrown: BaseException | None = None
        while True:
            try:
                item = inner.send(sent) if thrown is None else inner.throw(thrown)
            except StopIteration as stop:
                return stop.value
            sent, thrown = None, None
            self._suspend()
            try:
                sent = yield item
            except BaseException as exc:
                self._resume()
                if isinstance(exc, GeneratorExit):
                    inner.close()
                    raise
                thrown = exc
            else:
                self._resume()

    def _close(self, exc: BaseException | None) -> None:
        span, token = self._span, self._token
        self._span = self._token = None
        if self._step_token is not None:
            active_step().reset(self._step_token)
            self._step_token = None
        if span is None or token is None:
            return
        try:
            if exc is not None and not isinstance(exc, GeneratorExit):
                record_error(span, exc)
            span.end()
        finally:
            otel_context.detach(token)

    # --- decorator -----------------------------------------------------------------
    def __call__(self, function: F) -> F:
        signature = inspect.signature(function)

        def arguments_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | None:
            if not self._capture_call:
                return None
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError:
                return None  # the call itself will raise the real error
            bound.apply_defaults()
            return dict(bound.arguments)

        def scope_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> _SpanScope:
            shape = self._shape
            captured = arguments_of(args, kwargs)
            if captured is not None and sc.OTEL_PROV_ARGUMENTS not in shape.content:
                shape = shape.with_content(sc.OTEL_PROV_ARGUMENTS, captured)
            return self._copy(shape)

        def finish(span: Span, result: Any) -> Any:
            if self._capture_call:
                set_observation(result, span=span)
            return result

        if inspect.isgeneratorfunction(function):
            # The span lasts as long as the iteration: a generator's body (where a tool's
            # error is raised) runs only then.

            @functools.wraps(function)
            def generator_wrapper(*args: Any, **kwargs: Any) -> Any:
                scope = scope_of(args, kwargs)
                with scope as span:
                    returned = yield from scope._yielding(function(*args, **kwargs))
                    if returned is not None:
                        finish(span, returned)
                    return returned

            return cast(F, generator_wrapper)

        if inspect.isasyncgenfunction(function):

            @functools.wraps(function)
            async def async_generator_wrapper(*args: Any, **kwargs: Any) -> Any:
                # As _yielding: an async generator has no ``yield from``.
                scope = scope_of(args, kwargs)
                with scope:
                    inner = function(*args, **kwargs)
                    sent: Any = None
                    thrown: BaseException | None = None
                    while True:
                        try:
                            if thrown is None:
                                item = await inner.asend(sent)
                            else:
                                item = await inner.athrow(thrown)
                        except StopAsyncIteration:
                            return
                        sent, thrown = None, None
                        scope._suspend()
                        try:
                            sent = yield item
                        except BaseException as exc:
                            scope._resume()
                            if isinstance(exc, GeneratorExit):
                                await inner.aclose()
                                raise
                            thrown = exc
                        else:
                            scope._resume()

            return cast(F, async_generator_wrapper)

        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with scope_of(args, kwargs) as span:
                    return finish(span, await function(*args, **kwargs))

            return cast(F, async_wrapper)

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with scope_of(args, kwargs) as span:
                return finish(span, function(*args, **kwargs))

        return cast(F, wrapper)


def _current(span: Span | None) -> Span:
    return span if span is not None else trace.get_current_span()


def agent_session(
    name: str = "agent",
    *,
    question: str | None = None,
    conversation_id: str | None = None,
    agent_id: str | None = None,
    tools: Sequence[str] = (),
    follows: Sequence[SpanContext] = (),
    provider: str | None = None,
    user_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
) -> _SpanScope:
    """An agent session (``invoke_agent {name}``): one task from question to answer.

    ``tools``: names of the tools the agent was given; ``otel-prov verify`` flags a
    session that had tools and used none successfully (the ``tool_use_verified`` gate).
    ``provider``: its model's provider (``gen_ai.provider.name``: ``openai``,
    ``anthropic``...), which the GenAI conventions ask of an agent span.
    ``follows``: span contexts of earlier work this session builds on (the previous turn
    of the conversation, the job that queued it); they become span links, and
    ``prov:wasInformedBy`` in the provenance.  ``user_id``: the user who started the run
    (``user.id``); the agent ``prov:actedOnBehalfOf`` them.
    """
    return _SpanScope(
        session_shape(
            name,
            agent_id=agent_id,
            conversation_id=conversation_id,
            tools=tools,
            question=question,
            provider=provider,
            user_id=user_id,
        ),
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
    step: PlanStep | None = None,
) -> _SpanScope:
    """One reason-act step of a session, numbered from 1; ``step``: the plan step it runs
    (see :func:`otel_prov.plan`)."""
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        raise ValueError(f"iteration number must be an int >= 1, not {number!r}")
    return _SpanScope(
        iteration_shape(number, action=action, thought=thought, arguments=arguments),
        tracer_provider=tracer_provider,
        step=step,
    )


def tool_call(
    name: str,
    *,
    arguments: Any = None,
    call_id: str | None = None,
    tool_type: str = "function",
    tracer_provider: TracerProvider | None = None,
    step: PlanStep | None = None,
) -> _SpanScope:
    """A tool execution (``execute_tool {name}``).

    As a decorator it records the call's arguments (bound to the signature, as JSON)
    and its return value as the observation; as a context manager pass ``arguments=``
    and call :func:`set_observation`.  ``step``: the plan step it runs (see
    :func:`otel_prov.plan`); its outcome follows the call's unless the step is marked.
    """
    return _SpanScope(
        tool_call_shape(name, call_id=call_id, tool_type=tool_type, arguments=arguments),
        tracer_provider=tracer_provider,
        capture_call=True,
        step=step,
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
        model_call_shape(model, operation=operation, provider=provider),
        tracer_provider=tracer_provider,
    )


def set_question(text: str, *, span: Span | None = None) -> None:
    """The user's question, on the session span (default: the current span)."""
    put_content(_current(span), sc.OTEL_PROV_QUESTION, text)


def set_thought(text: str, *, span: Span | None = None) -> None:
    """The model's reasoning for this step, on the iteration span."""
    put_content(_current(span), sc.OTEL_PROV_THOUGHT, text)


def set_action(tool: str, *, span: Span | None = None) -> None:
    """The tool the step chose (or ``final_answer``).  Not content: always recorded."""
    describe_iteration(_current(span), action=tool)


def set_arguments(arguments: Any, *, span: Span | None = None) -> None:
    """The arguments chosen: a JSON string is kept byte for byte, anything else is dumped."""
    put_content(_current(span), sc.OTEL_PROV_ARGUMENTS, arguments)


def set_observation(result: Any, *, span: Span | None = None) -> None:
    """What the action returned, on the iteration or tool-call span."""
    put_content(_current(span), sc.OTEL_PROV_OBSERVATION, result)


def set_answer(text: str, *, span: Span | None = None) -> None:
    """The final answer, on the session span."""
    put_content(_current(span), sc.OTEL_PROV_ANSWER, text)


def record_evaluation(
    name: str,
    score: float | None = None,
    label: str | None = None,
    explanation: str | None = None,
    *,
    span: Span | None = None,
    evaluator: str | None = None,
    response_id: str | None = None,
) -> None:
    """An evaluation of the current span (or ``span``): a session's answer, a tool call's
    result, a model call's response (or the one ``response_id`` names).  Recorded as the
    GenAI ``gen_ai.evaluation.result`` event, so any OTLP backend sees it too, and stored
    as an ``oprov:Evaluation`` sealed with the run.  ``evaluator`` names who judged
    (default: the evaluation's name).  After the run, use ``otel-prov annotate``."""
    put_evaluation(
        _current(span),
        name,
        score=score,
        label=label,
        explanation=explanation,
        evaluator=evaluator,
        response_id=response_id,
    )


def record_approval(
    decision: str,
    approver: str,
    *,
    reason: str | None = None,
    span: Span | None = None,
    approver_name: str | None = None,
    waited: float | None = None,
    tool_name: str | None = None,
    tool_call_id: str | None = None,
) -> None:
    """A person's decision on a tool call: ``approved``, ``rejected`` or ``modified``
    (approved with changed arguments), by ``approver`` (their id), now.

    Recorded on the current span (or ``span``): inside the tool call it decides on, or
    naming that call by ``tool_call_id`` (and ``tool_name``), as for a rejected call,
    which never runs.  ``waited``: the seconds the run waited for the decision; by
    default, on a tool call, the time since the call started.  In the provenance the
    decision is an ``oprov:Approval`` activity associated with a ``prov:Person``, and the
    call it allowed ``prov:wasInformedBy`` it.  The approver's id and name, and the
    reason, are kept under the content policy.
    """
    if not isinstance(approver, str) or not approver:
        raise ValueError("an approval needs its approver (a person's id)")
    put_approval(
        _current(span),
        decision,
        approver,
        approver_name=approver_name,
        reason=reason,
        waited=waited,
        tool_name=tool_name,
        tool_call_id=tool_call_id,
    )


def set_usage(
    *,
    input_tokens: int | None = None,
    output_tokens: int | None = None,
    cache_read_tokens: int | None = None,
    cache_write_tokens: int | None = None,
    reasoning_tokens: int | None = None,
    cost: float | None = None,
    currency: str | None = None,
    span: Span | None = None,
) -> None:
    """Token usage of a model call, and its cost when the provider reported one (``cost``
    in ``currency``, an ISO 4217 code).  Without a cost, ``OTEL_PROV_PRICES`` may price it."""
    put_usage(
        _current(span),
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cache_read_tokens=cache_read_tokens,
        cache_write_tokens=cache_write_tokens,
        reasoning_tokens=reasoning_tokens,
        cost=cost,
        currency=currency,
        cost_source=None if cost is None else "provider",
    )
