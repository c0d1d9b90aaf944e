"""The method wrappers that turn smolagents runs into otel-prov spans.

Imported only by :meth:`SmolagentsInstrumentor.instrument`.  smolagents objects are read
by attribute (``Any`` at the boundary).

Generators (``_run_stream``, ``_step_stream``, ``generate_stream``) are driven by hand:
our span is made current around each ``next()`` only, so a streaming caller never runs
inside it and nothing is left attached between two items.  Their span ends when the
generator is exhausted, raises or is closed; a consumer that stops early (``close()``,
or dropping the generator) gets ``error.type`` ``GeneratorExit``.  The iteration's state
(the tool calls the model chose, with their exact JSON arguments) travels in a
ContextVar, which smolagents copies into the threads of parallel tool calls
(``copy_context``).

The session's ``otel_prov.agent.tools`` are the agent's tools (``agent.tools``, keyed by
the names the model calls them by) but ``final_answer``: that tool is how every
smolagents agent ends its run, not a source of data, and it gets no ``execute_tool``
span.  Declared, it could never count as a tool that succeeded, yet ``otel-prov
verify``'s ``tool_use_verified`` gate would fail every run of an agent given no other
tool.  Managed agents, which the model also calls like tools, are not declared: their
runs are sub-sessions, not tool calls.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import json
import logging
import threading
from collections.abc import Callable, Generator, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, Tracer

from otel_prov import semconv as sc
from otel_prov.capture import (
    SpanShape,
    content_text,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    put_content,
    put_usage,
    record_error,
    session_shape,
    tool_call_shape,
)
from otel_prov.instrumentation import Patches

__all__ = ["install", "uninstall"]

_LOG = logging.getLogger(__name__)

_FINAL_ANSWER = "final_answer"
_MARK = "__otel_prov_original__"
"""Attribute of our wrappers holding the wrapped function."""


@dataclass(eq=False)
class _Call:
    call_id: str | None
    name: str
    arguments: str
    """The exact JSON text the model produced (dicts dumped)."""
    used: bool = False


@dataclass(eq=False)
class _Iteration:
    step: Any = None
    """The ``ActionStep`` this iteration is about."""
    calls: list[_Call] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


_ITERATION: ContextVar[_Iteration | None] = ContextVar(
    "otel_prov_smolagents_iteration", default=None
)
_ACTIVE: ContextVar[frozenset[tuple[int, str]]] = ContextVar(
    "otel_prov_smolagents_active", default=frozenset()
)
"""(id(object), kind) of the wrapped calls in progress: a subclass override calling
``super()`` is one call, not two spans."""

_lock = threading.RLock()
_tracer: Tracer | None = None
_patches = Patches()


# --- helpers -----------------------------------------------------------------------
def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _text(content: Any) -> str | None:
    """A message's content as text: a string, or the text parts of a list."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        ]
        return "".join(parts) if parts else None
    return str(content)


def _calls_of(message: Any) -> list[_Call]:
    calls = []
    for call in getattr(message, "tool_calls", None) or []:
        function = getattr(call, "function", None)
        name = getattr(function, "name", None)
        if isinstance(name, str):
            arguments = getattr(function, "arguments", None)
            calls.append(_Call(getattr(call, "id", None), name, content_text(arguments or {})))
    return calls


def _declared_tools(agent: Any) -> list[str]:
    """The names of the agent's tools, but ``final_answer`` (see the module docstring)."""
    tools = getattr(agent, "tools", None)
    if not isinstance(tools, dict):
        return []
    return [name for name in tools if isinstance(name, str) and name != _FINAL_ANSWER]


@contextlib.contextmanager
def _running(span: Span) -> Iterator[None]:
    """``span`` current while a wrapped call runs; its error recorded; ended after."""
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        yield
    except BaseException as exc:
        record_error(span, exc)
        raise
    finally:
        otel_context.detach(token)
        span.end()


def _start(shape: SpanShape) -> Span:
    assert _tracer is not None
    return shape.start(_tracer)


def _enter(obj: Any, kind: str) -> Any:
    """Mark ``obj`` as in a ``kind`` call; None when it already was (a ``super()`` call)."""
    key = (id(obj), kind)
    active = _ACTIVE.get()
    if key in active:
        return None
    return _ACTIVE.set(active | {key})


def _drive(
    span: Span,
    inner: Iterator[Any],
    observe: Callable[[Any], None],
    finish: Callable[[BaseException | None], None],
    iteration: _Iteration | None,
    *,
    last: str | None = None,
    busy: tuple[int, str] | None = None,
    primed: bool = False,
) -> Generator[Any, None, Any]:
    """Re-yield ``inner``'s items with ``span`` and ``iteration`` current around each step.

    ``finish`` gets the exception that ended ``inner``, or ``GeneratorExit`` when the
    consumer closed it early.  Closing right after an item of type ``last`` is not early:
    a consumer that stops at the ``FinalAnswerStep`` only skips the epilogue.

    A session passes ``iteration=None``: an agent run as a tool starts clean.  A model
    stream passes its ``_ACTIVE`` key as ``busy`` (an override's ``super()`` stream,
    opened inside, is the same model call) and ``primed=True``: its caller takes a first
    ``None`` at once, so that a stream closed or dropped unread still ends its span.
    """
    error: BaseException | None = None
    item: Any = None
    try:
        if primed:
            yield None
        while True:
            token = otel_context.attach(trace.set_span_in_context(span))
            state = _ITERATION.set(iteration)
            guard = None if busy is None else _ACTIVE.set(_ACTIVE.get() | {busy})
            try:
                item = next(inner)
            except StopIteration as stop:
                return stop.value
            finally:
                if guard is not None:
                    _ACTIVE.reset(guard)
                _ITERATION.reset(state)
                otel_context.detach(token)
            observe(item)
            yield item
    except GeneratorExit as exc:
        if last is None or type(item).__name__ != last:
            error = exc
        raise
    except BaseException as exc:
        error = exc
        raise
    finally:
        try:
            close = getattr(inner, "close", None)
            if callable(close):
                # May raise: smolagents' _run_stream, closed mid-step, yields in a
                # ``finally`` (``RuntimeError``, as uninstrumented); our span ends anyway.
                close()
        finally:
            try:
                finish(error)
            finally:
                span.end()


# --- wrappers ----------------------------------------------------------------------
def _wrap_run_stream(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _run_stream(self: Any, *args: Any, **kwargs: Any) -> Any:
        if _tracer is None:
            return original(self, *args, **kwargs)
        return _session(self, original, args, kwargs)

    return _run_stream


def _session(
    agent: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Generator[Any, None, Any]:
    _ensure_agent(agent)
    name = str(getattr(agent, "name", None) or type(agent).__name__)
    task = kwargs.get("task", args[0] if args else None)
    question = None if task is None else _text(task) or ""
    shape = session_shape(
        name,
        tools=_declared_tools(agent),
        question=question,
        provider=_provider(getattr(agent, "model", None)),
    )
    span = _start(shape)
    answer: list[Any] = []

    def observe(item: Any) -> None:
        if type(item).__name__ == "FinalAnswerStep":
            answer[:] = [getattr(item, "output", None)]

    def finish(error: BaseException | None) -> None:
        if answer and answer[0] is not None:
            put_content(span, sc.OTEL_PROV_ANSWER, answer[0])
        if error is not None:
            record_error(span, error)

    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        inner = original(agent, *args, **kwargs)
    finally:
        otel_context.detach(token)
    return (yield from _drive(span, inner, observe, finish, None, last="FinalAnswerStep"))


def _wrap_step_stream(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def _step_stream(self: Any, memory_step: Any, *args: Any, **kwargs: Any) -> Any:
        current = _ITERATION.get()
        if _tracer is None or (current is not None and current.step is memory_step):
            return original(self, memory_step, *args, **kwargs)  # an override's super() call
        return _step(self, original, memory_step, args, kwargs)

    return _step_stream


def _step(
    agent: Any,
    original: Callable[..., Any],
    memory_step: Any,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Generator[Any, None, Any]:
    number = getattr(memory_step, "step_number", None)
    if isinstance(number, bool) or not isinstance(number, int) or number < 1:
        number = 1
    span = _start(iteration_shape(number))
    iteration = _Iteration(step=memory_step)

    def finish(error: BaseException | None) -> None:
        _describe_step(span, memory_step, iteration)
        if error is not None:
            record_error(span, error)

    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        inner = original(agent, memory_step, *args, **kwargs)
    finally:
        otel_context.detach(token)
    return (
        yield from _drive(span, inner, lambda item: None, finish, iteration, last="ActionOutput")
    )


def _describe_step(span: Span, memory_step: Any, iteration: _Iteration) -> None:
    thought = _text(getattr(memory_step, "model_output", None)) or None
    with iteration.lock:
        calls = list(iteration.calls)
    if not calls:  # a model that is no ``smolagents.Model``, or tool calls parsed from text
        calls = _calls_of(getattr(memory_step, "model_output_message", None))
    if not calls:
        calls = [
            _Call(getattr(c, "id", None), str(c.name), content_text(c.arguments or {}))
            for c in getattr(memory_step, "tool_calls", None) or []
        ]
    action = arguments = None
    if calls:
        action = ",".join(dict.fromkeys(call.name for call in calls))
        if len(calls) == 1:
            arguments = calls[0].arguments
        else:
            arguments = _json([_parsed(call.arguments) for call in calls])
    observations = getattr(memory_step, "observations", None) or None
    describe_iteration(
        span, thought=thought, action=action, arguments=arguments, observation=observations
    )


_ModelCall = Callable[[Any, Callable[..., Any], tuple[Any, ...], dict[str, Any]], Any]


def _wrap_model(call: _ModelCall) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A wrapper factory for a model method: one span per call on a model object."""

    def factory(original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if _tracer is None:
                return original(self, *args, **kwargs)
            guard = _enter(self, "model")
            if guard is None:
                return original(self, *args, **kwargs)
            try:
                return call(self, original, args, kwargs)
            finally:
                _ACTIVE.reset(guard)

        return wrapper

    return factory


_PROVIDERS = {
    "AzureOpenAIModel": "azure.ai.openai",
    "AzureOpenAIServerModel": "azure.ai.openai",
    "OpenAIModel": "openai",
    "OpenAIServerModel": "openai",
    "AmazonBedrockModel": "aws.bedrock",
    "AmazonBedrockServerModel": "aws.bedrock",
}
"""smolagents' model classes whose provider is fixed -> its GenAI name
(``gen_ai.provider.name``).  Others (LiteLLM, Hugging Face inference, local models)
reach a provider only their settings say: none is named."""


def _provider(model: Any) -> str | None:
    """The provider of a smolagents model, by its class (a subclass counts)."""
    for cls in type(model).__mro__:
        if cls.__module__.startswith("smolagents") and cls.__name__ in _PROVIDERS:
            return _PROVIDERS[cls.__name__]
    return None


def _model_span(model: Any) -> Span:
    model_id = str(getattr(model, "model_id", None) or type(model).__name__)
    return _start(model_call_shape(model_id, provider=_provider(model)))


def _record_output(span: Span, message: Any, iteration: _Iteration | None) -> None:
    """The usage of the model's ``ChatMessage`` on ``span``, its tool calls for ``iteration``."""
    usage = getattr(message, "token_usage", None)
    put_usage(
        span,
        input_tokens=_count(getattr(usage, "input_tokens", None)),
        output_tokens=_count(getattr(usage, "output_tokens", None)),
    )
    if iteration is not None:
        # Snapshot now: the agent replaces string arguments by parsed dicts in place.
        calls = _calls_of(message)
        with iteration.lock:
            iteration.calls = calls


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _model_call(
    model: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Any:
    span = _model_span(model)
    with _running(span):
        message = original(model, *args, **kwargs)
        _record_output(span, message, _ITERATION.get())
    return message


def _model_stream(
    model: Any, original: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> Iterator[Any]:
    """``generate_stream``: the span runs from the request until the stream ends."""
    span = _model_span(model)
    iteration = _ITERATION.get()
    token = otel_context.attach(trace.set_span_in_context(span))
    try:
        inner = iter(original(model, *args, **kwargs))
    except BaseException as exc:
        record_error(span, exc)
        span.end()
        raise
    finally:
        otel_context.detach(token)
    deltas: list[Any] = []

    def finish(error: BaseException | None) -> None:
        if error is not None:
            record_error(span, error)
            return
        try:
            message = _agglomerated(deltas)
        except Exception:  # noqa: BLE001 - the agent's own agglomeration reports a bad stream
            _LOG.debug("smolagents stream deltas could not be agglomerated", exc_info=True)
            return
        _record_output(span, message, iteration)

    stream = _drive(
        span, inner, deltas.append, finish, iteration, busy=(id(model), "model"), primed=True
    )
    next(stream)
    return stream


def _agglomerated(deltas: list[Any]) -> Any:
    """The ``ChatMessage`` the agent builds of the stream (with smolagents' own function).

    Its usage sums the deltas' ``token_usage``; when no delta carried any, it is unknown,
    not zero.
    """
    models = importlib.import_module("smolagents.models")
    message = models.agglomerate_stream_deltas(deltas)
    if not any(getattr(delta, "token_usage", None) for delta in deltas):
        message.token_usage = None
    return message


_wrap_generate = _wrap_model(_model_call)
_wrap_generate_stream = _wrap_model(_model_stream)


def _wrap_tool_call(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(self, "name", None)
        if _tracer is None or not isinstance(name, str) or name == _FINAL_ANSWER:
            return original(self, *args, **kwargs)
        guard = _enter(self, "tool")
        if guard is None:
            return original(self, *args, **kwargs)
        try:
            return _tool_call(self, name, original, args, kwargs)
        finally:
            _ACTIVE.reset(guard)

    return __call__


def _match(name: str, arguments: Any) -> _Call | None:
    """The model's call for this tool run: same name and arguments, else same name."""
    iteration = _ITERATION.get()
    if iteration is None:
        return None
    with iteration.lock:
        for exact in (True, False):
            for call in iteration.calls:
                if call.used or call.name != name:
                    continue
                if not exact or _parsed(call.arguments) == arguments:
                    call.used = True
                    return call
    return None


def _tool_call(
    tool: Any,
    name: str,
    original: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> Any:
    given = {k: v for k, v in kwargs.items() if k != "sanitize_inputs_outputs"}
    arguments: Any = args[0] if len(args) == 1 and not given else given
    call = _match(name, arguments)
    call_id = call.call_id or None if call is not None else None
    text = call.arguments if call is not None else content_text(arguments)
    span = _start(tool_call_shape(name, call_id=call_id, arguments=text))
    with _running(span):
        result = original(tool, *args, **kwargs)
        put_content(span, sc.OTEL_PROV_OBSERVATION, result)
    return result


# --- patching ------------------------------------------------------------------------
def _wrap(cls: type, attribute: str, factory: Callable[[Any], Any]) -> None:
    """Wrap ``cls.attribute`` if ``cls`` defines it itself and it is not wrapped yet."""
    original = cls.__dict__.get(attribute)
    if not callable(original) or hasattr(original, _MARK):
        return
    setattr(_patches.replace(cls, attribute, factory), _MARK, original)


def _wrap_defining(cls: type, attribute: str, factory: Callable[[Any], Any]) -> None:
    """Wrap the class in ``cls``'s MRO that defines ``attribute``."""
    for klass in cls.__mro__:
        if attribute in klass.__dict__:
            _wrap(klass, attribute, factory)
            return


def _subclasses(root: type) -> list[type]:
    found: list[type] = [root]
    todo: list[type] = [root]
    while todo:
        subclasses: list[type] = todo.pop().__subclasses__()
        for sub in subclasses:
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


_TARGETS: tuple[tuple[str, str, Callable[[Any], Any]], ...] = (
    ("agent", "_step_stream", _wrap_step_stream),
    ("model", "generate", _wrap_generate),
    ("model", "generate_stream", _wrap_generate_stream),
    ("tool", "__call__", _wrap_tool_call),
)


def _ensure_agent(agent: Any) -> None:
    """Wrap the classes of an agent, its model and tools defined after ``install``."""
    with _lock:
        if _tracer is None:
            return
        _wrap_defining(type(agent), "_step_stream", _wrap_step_stream)
        model = getattr(agent, "model", None)
        if model is not None:
            _wrap_defining(type(model), "generate", _wrap_generate)
            _wrap_defining(type(model), "generate_stream", _wrap_generate_stream)
        tools = getattr(agent, "tools", None)
        for tool in tools.values() if isinstance(tools, dict) else []:
            _wrap_defining(type(tool), "__call__", _wrap_tool_call)


def install(tracer: Tracer) -> None:
    """Wrap smolagents' agent, model and tool classes (idempotent: re-install swaps tracer)."""
    global _tracer
    # By name: smolagents ships no type information (no py.typed).
    smolagents = importlib.import_module("smolagents")
    multi_step_agent: type = smolagents.MultiStepAgent
    roots = {"agent": multi_step_agent, "model": smolagents.Model, "tool": smolagents.Tool}
    with _lock:
        _tracer = tracer
        _wrap(multi_step_agent, "_run_stream", _wrap_run_stream)
        for root, attribute, factory in _TARGETS:
            for cls in _subclasses(roots[root]):
                _wrap(cls, attribute, factory)


def uninstall() -> None:
    """Put every wrapped method back."""
    global _tracer
    with _lock:
        _tracer = None
        _patches.restore()
