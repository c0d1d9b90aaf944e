"""The LangChain callback handler that turns agent runs into otel-prov spans.

Imported only by :meth:`LangChainInstrumentor.instrument` (it needs ``langchain_core``).

LangChain reports a run tree (``run_id`` / ``parent_run_id``); every span's parent is
chosen from that tree, never from the ambient OTel context (callbacks may run on other
threads or event-loop tasks), except the session span, whose parent is whatever span is
current when the agent is invoked (an HTTP request, say).  The graph of
``create_agent`` has a ``model`` node and a ``tools`` node: each run of the ``model``
node directly under the root opens an iteration, and the ``tools`` runs that follow
(one per tool call when they run in parallel) belong to it.  Runs that get no span of
their own (graph nodes, middleware, inner chains) pass their parent's span down.

Tool and model spans are also made *current* while the tool or model runs, so a span
that the tool's body (or the model client) starts -- an HTTP call traced by
``opentelemetry-instrumentation-requests``, a ``tracer.start_as_current_span`` -- is a
child of the ``execute_tool`` (or ``chat``) span.  The span is attached in the start
callback and detached in the matching end or error callback, which must run in the same
``contextvars.Context`` and in reverse order of the attaches made there:

* tool runs: LangChain's ``BaseTool.run`` / ``arun`` calls start, body and end in one
  frame (the body in a copy of that context); parallel tool calls each run in their own
  thread or task.  The handler has ``run_inline = True``, so the async callback manager
  calls it in the awaiting coroutine rather than in an executor, where an attach would
  be lost.
* model runs: only a synchronous call of one prompt.  A batch of prompts starts every
  run before the first ends (the attaches would not unwind), and an async model's end
  callback runs in a shielded task (a copy of the context), where its attach cannot be
  undone; such runs keep their span but do not make it current.

If an end callback nevertheless arrives in another context (a future LangChain change,
a stream closed elsewhere), the handler notices it before detaching and leaves that
context alone: no "Failed to detach context" error, and the run is still recorded.

The session's ``otel_prov.agent.tools`` are the names of the tools bound to the model
calls of its ``model`` node (``bind_tools`` leaves them in the call's
``invocation_params``), exactly as the model is given them: after any name override and
any tool a middleware adds or removes, collected over every model call of the run.  Two
kinds of tool the model sees are not declared, because the record can never show a call
of them and ``otel-prov verify`` would flag every run that used them: a provider's
built-in tools (``{"type": "web_search_preview"}``; they run on the provider's side), and
the tools of a structured answer (``response_format=ToolStrategy(Schema)``; the model
node answers those calls itself), which are dropped once the run has answered through
them.

A structured answer (``create_agent(..., response_format=Schema)``, with
``ToolStrategy`` or the provider's own structured output) whose schema has the fields of
the reasoning schema (``goals``, ``hypotheses``, ``evidence``, ``decision``:
``docs/decisions.md``) is recorded as that step's reasoning
(:func:`otel_prov.record_reasoning`), on the iteration of the ``model`` node that
produced it; one without those fields is left alone.

LangGraph's ``interrupt()`` for a person's approval, as LangChain's
``HumanInTheLoopMiddleware`` raises it (its request lists the tool calls it stops for),
and the resume (``Command(resume={"decisions": [...]})`` on the same ``thread_id``):
each decision goes on the record of the resumed run as an ``otel_prov.approval`` event
(``approve`` -> approved, ``edit`` -> modified, ``reject`` / ``respond`` -> rejected,
with its message as the reason), on the span of the call when it runs, or on the
session span for a call that does not, naming it.  The person is the user the resuming
run's metadata names (``user_id``, ``user.id`` or ``langgraph_auth_user_id``), who is
also the sessions' ``user.id``; the wait runs from the interrupt to the resume.  An
``interrupt()`` of another shape (a question, not tool calls) is not a decision on a
call and is not recorded as one.
"""

from __future__ import annotations

import asyncio
import enum
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.outputs import ChatGeneration, LLMResult
from langchain_core.tracers.context import register_configure_hook
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.instrumentation.utils import is_instrumentation_enabled
from opentelemetry.trace import Span, Tracer

from otel_prov import semconv as sc
from otel_prov.capture import (
    FINAL_ANSWER,
    declare_tools,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    name_provider,
    put_approval,
    put_content,
    put_document,
    put_usage,
    record_error,
    record_failure,
    record_reasoning,
    retrieval_shape,
    session_shape,
    tool_call_shape,
)
from otel_prov.instrumentation.langchain._interrupts import (
    USER_KEYS,
    Interrupted,
    PendingInterrupts,
    Verdict,
    interrupted_calls,
    is_interrupt,
    verdicts,
)
from otel_prov.instrumentation.langchain._reading import (
    bound_tools,
    content_text,
    first_question,
    json_text,
    last_message_text,
    model_name,
    reasoning,
    structured_answer_tools,
    structured_response,
)

__all__ = ["ProvCallbackHandler", "active_handler", "install", "uninstall"]

_CREATE_AGENT = "langchain_create_agent"
"""``ls_integration`` metadata ``create_agent`` puts on its graph's root run."""
_MODEL_NODE = "model"
_TOOLS_NODE = "tools"
_SCORE_KEYS = ("score", "relevance_score", "similarity_score")
"""Metadata keys under which retrievers and rerankers leave a document's score
(LangChain's ``Document`` has no score of its own)."""
_LOG = logging.getLogger(__name__)

_ATTACHED: ContextVar[UUID | None] = ContextVar("otel_prov_langchain_attached", default=None)
"""Set beside every attach, as a probe: only the ``Context`` that set it can reset its token,
so resetting it first tells whether OTel's own detach would fail (and log) here."""


class _Kind(enum.Enum):
    SESSION = "session"
    MODEL_NODE = "model_node"
    TOOLS_NODE = "tools_node"
    OTHER = "other"
    MODEL = "model"
    TOOL = "tool"
    RETRIEVER = "retriever"


@dataclass(eq=False)
class _Iteration:
    span: Span
    expected_tools: int | None = None
    """Tool calls the model chose (None until it answered)."""
    finished_tools: int = 0
    open_tool_nodes: int = 0
    ended: bool = False


@dataclass(eq=False)
class _Session:
    span: Span
    number: int = 0
    current: _Iteration | None = None
    arguments: dict[str, str] = field(default_factory=dict)
    """Exact JSON arguments the model chose, by tool call id."""
    tools: dict[str, None] = field(default_factory=dict)
    """Declared tool names in the order first bound (a dict as an ordered set)."""
    ran: set[str] = field(default_factory=set)
    """Names of the tools that ran in this session."""
    names: dict[str, str] = field(default_factory=dict)
    """Tool names the model chose, by tool call id."""
    thread: str | None = None
    user: str | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    """Decisions of the resume on calls that run in this session, by tool call id."""


@dataclass(frozen=True, slots=True)
class _Scope:
    """A run's span made current: the tokens that undo that, valid only in their ``Context``."""

    otel: Token[otel_context.Context]
    probe: Token[UUID | None]


@dataclass(eq=False, slots=True)
class _Run:
    kind: _Kind
    session: _Session
    anchor: Span
    """The span this run's children are parented to: its own, or the one it inherited."""
    iteration: _Iteration | None = None
    in_model_node: bool = False


def _is_control_flow(error: BaseException) -> bool:
    """LangGraph's interrupts and bubble-ups are not failures of the agent."""
    return any(cls.__name__ == "GraphBubbleUp" for cls in type(error).__mro__)


def _can_scope_model_run(kwargs: Mapping[str, Any]) -> bool:
    """Whether a model run's end callback will come in the context its start came in.

    True for a synchronous call of one prompt.  ``batch_size`` is the number of prompts the
    call started runs for (absent before LangChain passed it: one).  A running event loop
    means the async callback manager, whose ``on_llm_end`` is shielded into another task.
    """
    if kwargs.get("batch_size", 1) != 1:
        return False
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return True
    return False


class ProvCallbackHandler(BaseCallbackHandler):
    """Sees every LangChain run (through the configure hook) and records agent runs as spans."""

    run_inline = True
    """Called in the awaiting coroutine by the async callback manager, not in an executor
    thread: cheaper, and the only way an attach in ``on_tool_start`` reaches the tool."""

    def __init__(self, tracer: Tracer) -> None:
        super().__init__()
        self._tracer = tracer
        self._enabled = True
        self._lock = threading.Lock()
        self._runs: dict[UUID, _Run] = {}
        self._interrupted = PendingInterrupts()
        """Threads stopped by an interrupt for approval, until resumed."""
        self._scopes: dict[UUID, _Scope] = {}
        """Attached contexts by run, kept apart from ``_runs`` so that :meth:`disable` does
        not forget them: a run in flight still detaches when it ends."""

    # --- lifecycle ---------------------------------------------------------------------
    def enable(self, tracer: Tracer) -> None:
        with self._lock:
            self._tracer = tracer
            self._enabled = True

    def disable(self) -> None:
        """Record nothing from now on; runs in flight are forgotten (their spans never end),
        but the spans they made current are still detached when they end."""
        with self._lock:
            self._enabled = False
            self._runs.clear()

    # --- helpers -----------------------------------------------------------------------
    def _parent(self, parent_run_id: UUID | None) -> _Run | None:
        if parent_run_id is None:
            return None
        with self._lock:
            return self._runs.get(parent_run_id) if self._enabled else None

    def _add(self, run_id: UUID, run: _Run) -> None:
        with self._lock:
            if self._enabled:
                self._runs[run_id] = run

    def _pop(self, run_id: UUID) -> _Run | None:
        with self._lock:
            return self._runs.pop(run_id, None)

    def _enter(self, run_id: UUID, span: Span) -> None:
        """Make ``span`` current for the run's body, until :meth:`_end` in its end callback."""
        otel_token = otel_context.attach(trace.set_span_in_context(span))
        scope = _Scope(otel_token, _ATTACHED.set(run_id))
        with self._lock:
            self._scopes[run_id] = scope

    def _exit(self, run_id: UUID) -> None:
        """Undo the run's attach, if it made one and this is the context it made it in."""
        with self._lock:
            scope = self._scopes.pop(run_id, None)
        if scope is None:
            return
        try:
            _ATTACHED.reset(scope.probe)
        except ValueError:
            # Another Context (a copy made by a task or thread): the attach cannot be undone
            # from here, and OTel's detach would log an error.  The run is still recorded.
            _LOG.debug("LangChain run %s ended outside the context it started in", run_id)
            return
        otel_context.detach(scope.otel)

    def _end(self, run_id: UUID, describe: Callable[[_Run], None]) -> _Run | None:
        """The end of a model, tool or retriever run: detach its context first, forget the
        run, let ``describe`` put its result (or error) on its span, and end the span; the
        run, if it was ours."""
        self._exit(run_id)
        run = self._pop(run_id)
        if run is not None:
            describe(run)
            run.anchor.end()
        return run

    def _end_failed(self, run_id: UUID, error: BaseException) -> _Run | None:
        """End a model, tool or retriever run's span as failed; the run, if it was ours."""
        return self._end(run_id, lambda run: record_error(run.anchor, error))

    def _close_iteration(self, iteration: _Iteration | None, error: BaseException | None) -> None:
        """End an iteration once (callers hold no lock; the flag is flipped under it)."""
        if iteration is None:
            return
        with self._lock:
            if iteration.ended:
                return
            iteration.ended = True
        if error is not None:
            record_error(iteration.span, error)
        iteration.span.end()

    def _declare(self, session: _Session, names: Sequence[str]) -> None:
        """Add ``names`` to the session's declared tools (set under the lock: the last
        write is the whole set, whichever thread makes it)."""
        with self._lock:
            if all(name in session.tools for name in names):
                return
            session.tools.update(dict.fromkeys(names))
            declare_tools(session.span, list(session.tools))

    def _undeclare_answer_tools(self, session: _Session, outputs: Any) -> None:
        """Drop the tools of a structured answer: calls the model node answered, never a
        tool run.  A name that also ran as a tool stays declared."""
        answered = structured_answer_tools(outputs)
        with self._lock:
            dropped = [
                name for name in answered if name in session.tools and name not in session.ran
            ]
            if not dropped:
                return
            for name in dropped:
                del session.tools[name]
            declare_tools(session.span, list(session.tools))

    def _maybe_finish_step(self, iteration: _Iteration | None) -> None:
        """End the iteration once all the tool calls the model chose have run."""
        if iteration is None:
            return
        with self._lock:
            done = (
                iteration.expected_tools is not None
                and iteration.open_tool_nodes == 0
                and iteration.finished_tools >= iteration.expected_tools
            )
        if done:
            self._close_iteration(iteration, None)

    # --- chains: the agent graph, its nodes, anything else -------------------------------
    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if not self._enabled:
            return
        metadata = metadata or {}
        if parent_run_id is None:
            self._start_session(inputs, run_id, metadata, kwargs.get("name"))
            return
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        session = parent.session
        node = metadata.get("langgraph_node") if parent.kind is _Kind.SESSION else None
        if node == _MODEL_NODE:
            with self._lock:
                previous = session.current
                session.number += 1
                number = session.number
            self._close_iteration(previous, None)
            span = iteration_shape(number).start(self._tracer, parent=session.span)
            iteration = _Iteration(span)
            with self._lock:
                session.current = iteration
            run = _Run(_Kind.MODEL_NODE, session, span, iteration, in_model_node=True)
        elif node == _TOOLS_NODE:
            with self._lock:
                current = session.current
                if current is not None:
                    current.open_tool_nodes += 1
            anchor = current.span if current is not None else session.span
            run = _Run(_Kind.TOOLS_NODE, session, anchor, current)
        else:
            run = _Run(_Kind.OTHER, session, parent.anchor, parent.iteration, parent.in_model_node)
        self._add(run_id, run)

    def _start_session(
        self, inputs: Any, run_id: UUID, metadata: Mapping[str, Any], name: Any
    ) -> None:
        if metadata.get("ls_integration") != _CREATE_AGENT or not is_instrumentation_enabled():
            return
        agent = name if isinstance(name, str) and name else metadata.get("lc_agent_name")
        agent = agent if isinstance(agent, str) and agent else "agent"
        thread_id = metadata.get("thread_id")
        thread = None if thread_id is None else str(thread_id)
        user = next((str(metadata[k]) for k in USER_KEYS if metadata.get(k)), None)
        shape = session_shape(
            agent, conversation_id=thread, question=first_question(inputs), user_id=user
        )
        # The session's parent is the ambient context (an HTTP request span, say).
        span = shape.start(self._tracer)
        session = _Session(span, thread=thread, user=user)
        self._resume(session, getattr(inputs, "resume", None))
        self._add(run_id, _Run(_Kind.SESSION, session, span))

    def _note_interrupt(self, session: _Session, error: BaseException) -> None:
        """The tool calls an approval interrupt stops the thread for."""
        if session.thread is None:
            return
        with self._lock:
            calls = interrupted_calls(error, session.names, session.arguments)
            if calls:
                self._interrupted.stopped(session.thread, Interrupted(time.time_ns(), calls))

    def _resume(self, session: _Session, resume: Any) -> None:
        """The decisions a resume brings for the calls its thread stopped for: on the
        session span for a call that will not run, kept for the call's span otherwise."""
        if session.thread is None or resume is None:
            return
        with self._lock:
            stopped = self._interrupted.resumed(session.thread)
        if stopped is None:
            return
        for name, call_id, verdict in verdicts(stopped, resume, session.user, time.time_ns()):
            if verdict.decision != "rejected" and call_id is not None:
                session.verdicts[call_id] = verdict
                continue
            put_approval(
                session.span,
                verdict.decision,
                verdict.approver,
                reason=verdict.reason,
                waited=verdict.waited,
                tool_name=name,
                tool_call_id=call_id,
                at_ns=verdict.at_ns,
            )

    def on_chain_end(
        self,
        outputs: dict[str, Any] | Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._pop(run_id)
        if run is None:
            return
        if run.kind is _Kind.SESSION:
            self._undeclare_answer_tools(run.session, outputs)
            answer = last_message_text(outputs)
            if answer is not None:
                put_content(run.session.span, sc.OTEL_PROV_ANSWER, answer)
            self._close_iteration(run.session.current, None)
            run.session.span.end()
        elif run.kind is _Kind.MODEL_NODE:
            answered = structured_response(outputs)
            if answered is not None and run.iteration is not None:
                record_reasoning(answered, span=run.iteration.span)  # if it has the fields
            if run.iteration is not None and run.iteration.expected_tools == 0:
                self._close_iteration(run.iteration, None)  # the model answered
        elif run.kind is _Kind.TOOLS_NODE:
            self._tools_node_done(run)

    def _tools_node_done(self, run: _Run) -> None:
        if run.iteration is None:
            return
        with self._lock:
            run.iteration.open_tool_nodes -= 1
        self._maybe_finish_step(run.iteration)

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        run = self._pop(run_id)
        if run is None:
            return
        if run.kind is not _Kind.SESSION and is_interrupt(error):
            self._note_interrupt(run.session, error)
        if run.kind is _Kind.SESSION:
            failure = None if _is_control_flow(error) else error
            self._close_iteration(run.session.current, failure)
            if failure is not None:
                record_error(run.session.span, failure)
            run.session.span.end()
        elif run.kind is _Kind.TOOLS_NODE:
            self._tools_node_done(run)

    # --- model calls -----------------------------------------------------------------------
    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        self._start_model("chat", serialized, run_id, parent_run_id, metadata, kwargs)

    def on_llm_start(
        self,
        serialized: dict[str, Any],
        prompts: list[str],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        self._start_model("text_completion", serialized, run_id, parent_run_id, metadata, kwargs)

    def _start_model(
        self,
        operation: str,
        serialized: Mapping[str, Any] | None,
        run_id: UUID,
        parent_run_id: UUID | None,
        metadata: Mapping[str, Any] | None,
        kwargs: Mapping[str, Any],
    ) -> None:
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        params = kwargs.get("invocation_params")
        params = params if isinstance(params, Mapping) else None
        model = model_name(serialized, params, metadata)
        if parent.in_model_node:  # not the model of an agent that a tool runs
            self._declare(parent.session, bound_tools(params))
        named = (metadata or {}).get("ls_provider")
        provider = named if isinstance(named, str) and named else None
        if parent.in_model_node:  # the session's own model names its provider
            name_provider(parent.session.span, provider)
        shape = model_call_shape(model, operation=operation, provider=provider)
        span = shape.start(self._tracer, parent=parent.anchor)
        run = _Run(_Kind.MODEL, parent.session, span, parent.iteration, parent.in_model_node)
        self._add(run_id, run)
        if _can_scope_model_run(kwargs):
            self._enter(run_id, span)

    def on_llm_end(
        self,
        response: LLMResult,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._end(run_id, lambda run: self._put_model_result(run, response))

    def _put_model_result(self, run: _Run, response: LLMResult) -> None:
        """The model's token usage and response model, and the step it decided, if any."""
        span = run.anchor
        generations = response.generations
        generation = generations[0][0] if generations and generations[0] else None
        message = generation.message if isinstance(generation, ChatGeneration) else None
        usage = getattr(message, "usage_metadata", None) if message is not None else None
        if usage:
            inputs = usage.get("input_token_details") or {}
            outputs = usage.get("output_token_details") or {}
            put_usage(
                span,
                input_tokens=int(usage.get("input_tokens", 0)),
                output_tokens=int(usage.get("output_tokens", 0)),
                cache_read_tokens=_count(inputs.get("cache_read")),
                cache_write_tokens=_count(inputs.get("cache_creation")),
                reasoning_tokens=_count(outputs.get("reasoning")),
            )
        if message is not None:
            metadata = message.response_metadata or {}
            response_model = metadata.get("model_name") or metadata.get("model")
            if isinstance(response_model, str) and response_model:
                span.set_attribute(sc.GEN_AI_RESPONSE_MODEL, response_model)
            if run.in_model_node and run.iteration is not None:
                self._decide(run.session, run.iteration, message)

    def _decide(self, session: _Session, iteration: _Iteration, message: Any) -> None:
        """The step's thought, action and arguments, from the model's answer."""
        span = iteration.span
        thought = content_text(message.content) or reasoning(message) or None
        calls = [call for call in getattr(message, "tool_calls", None) or [] if call]
        arguments = [json_text(call.get("args", {})) for call in calls]
        with self._lock:
            iteration.expected_tools = len(calls)
            for call, text in zip(calls, arguments, strict=True):
                call_id = call.get("id")
                if call_id:
                    session.arguments[call_id] = text
                    session.names[call_id] = str(call.get("name", ""))
        if not calls:
            describe_iteration(span, thought=thought, action=FINAL_ANSWER)
            return
        names = list(dict.fromkeys(str(call.get("name", "")) for call in calls))
        describe_iteration(
            span,
            thought=thought,
            action=",".join(names),
            arguments=(
                arguments[0] if len(calls) == 1 else json_text([c.get("args", {}) for c in calls])
            ),
        )

    def on_llm_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._end_failed(run_id, error)

    # --- tool calls ------------------------------------------------------------------------
    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        inputs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        name = str((serialized or {}).get("name") or kwargs.get("name") or "tool")
        call_id = kwargs.get("tool_call_id")
        call_id = call_id if isinstance(call_id, str) and call_id else None
        arguments: str | None = None
        with self._lock:
            parent.session.ran.add(name)
            if call_id is not None:
                arguments = parent.session.arguments.get(call_id)
        if arguments is None:
            arguments = json_text(inputs) if inputs is not None else input_str
        shape = tool_call_shape(name, call_id=call_id, arguments=arguments)
        span = shape.start(self._tracer, parent=parent.anchor)
        with self._lock:
            verdict = parent.session.verdicts.pop(call_id, None) if call_id else None
        if verdict is not None:
            put_approval(
                span,
                verdict.decision,
                verdict.approver,
                reason=verdict.reason,
                waited=verdict.waited,
                at_ns=verdict.at_ns,
            )
        self._add(run_id, _Run(_Kind.TOOL, parent.session, span, parent.iteration))
        self._enter(run_id, span)

    def on_tool_end(
        self,
        output: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._tool_done(self._end(run_id, lambda run: _put_observation(run.anchor, output)))

    def on_tool_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._tool_done(self._end_failed(run_id, error))

    def _tool_done(self, run: _Run | None) -> None:
        """Count an ended tool run (``None``: not ours) towards its iteration's tool calls."""
        if run is not None and run.iteration is not None:
            with self._lock:
                run.iteration.finished_tools += 1

    # --- retrievers -----------------------------------------------------------------------
    def on_retriever_start(
        self,
        serialized: dict[str, Any],
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Any:
        parent = self._parent(parent_run_id)
        if parent is None:
            return
        name = kwargs.get("name") or (serialized or {}).get("name") or "retriever"
        shape = retrieval_shape(data_source=str(name), query=query)
        span = shape.start(self._tracer, parent=parent.anchor)
        self._add(run_id, _Run(_Kind.RETRIEVER, parent.session, span, parent.iteration))
        self._enter(run_id, span)

    def on_retriever_end(
        self,
        documents: Sequence[Any],
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._end(run_id, lambda run: _put_documents(run.anchor, documents))

    def on_retriever_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> Any:
        self._end_failed(run_id, error)


def _put_observation(span: Span, output: Any) -> None:
    """What a tool returned, as its observation; a tool (or its error handler) that
    reports failure as a message still failed."""
    content = getattr(output, "content", output)
    observation = content if isinstance(content, str) else content_text(content)
    put_content(span, sc.OTEL_PROV_OBSERVATION, observation)
    if getattr(output, "status", None) == "error":
        record_failure(span, "tool_error", observation or "tool error")


def _put_documents(span: Span, documents: Sequence[Any]) -> None:
    """The documents a retriever returned, with their ids, scores and metadata."""
    for index, document in enumerate(documents):
        metadata = getattr(document, "metadata", None)
        metadata = metadata if isinstance(metadata, Mapping) else {}
        identifier = getattr(document, "id", None)
        put_document(
            span,
            index,
            document_id=identifier if isinstance(identifier, (str, int)) else None,
            content=getattr(document, "page_content", None),
            score=_score(metadata),
            metadata=metadata,
        )


def _score(metadata: Mapping[str, Any]) -> float | None:
    for key in _SCORE_KEYS:
        value = metadata.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


# --- the configure hook: registered once per process, switched on and off ---------------
_HANDLER: ProvCallbackHandler | None = None
_HOOK: ContextVar[ProvCallbackHandler | None] | None = None
_INSTALL_LOCK = threading.Lock()


def install(tracer: Tracer) -> ProvCallbackHandler:
    """Make every LangChain run (in every thread and task) report to the handler."""
    global _HANDLER, _HOOK
    with _INSTALL_LOCK:
        if _HANDLER is None or _HOOK is None:
            _HANDLER = ProvCallbackHandler(tracer)
            # The default value reaches threads and tasks created before and after this call.
            _HOOK = ContextVar("otel_prov_langchain_handler", default=_HANDLER)
            register_configure_hook(_HOOK, inheritable=True)
        else:
            _HANDLER.enable(tracer)
            _HOOK.set(_HANDLER)
        return _HANDLER


def uninstall() -> None:
    """The hook cannot be unregistered: clear it here and make the handler inert everywhere."""
    with _INSTALL_LOCK:
        if _HANDLER is not None and _HOOK is not None:
            _HOOK.set(None)
            _HANDLER.disable()


def active_handler() -> ProvCallbackHandler | None:
    with _INSTALL_LOCK:
        return _HANDLER if _HANDLER is not None and _HANDLER._enabled else None


def _count(value: Any) -> int | None:
    """A token count LangChain's usage details may hold (absent: not reported)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None
