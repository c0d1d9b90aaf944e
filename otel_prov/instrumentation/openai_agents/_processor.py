"""The SDK tracing processor: OpenAI Agents SDK spans in, otel-prov OTel spans out.

It works live: an OTel span starts when its SDK span starts (at the SDK's
``started_at``) and ends when it ends (at ``ended_at``), so a run that never finishes
still shows what it did.  Attributes known only later (the model's decision, the
answer) are set on the still-open parent spans before they end.  One span ends late,
with its SDK end time all the same: the session of an agent that handed off ends once
the next agent's session has started (see ``_release``).

The session's ``otel_prov.agent.tools`` come from the SDK's agent span
(``AgentSpanData.tools``: the names the runner gives the model, as its ``function`` spans
name them), which the runner fills in after the span has started: they are read when
each model call starts and when the session ends, and collected over the run (an agent's
tools may change between turns).  Declared are the tools whose calls the record can
show: function tools, MCP tools and the tools the runner executes itself (computer,
local shell, apply_patch).  Left out are the hosted tools OpenAI runs on its side (web and
file search, code interpreter, ...), which leave no span of their call, and handoffs:
``AgentSpanData.handoffs`` names the agents, not the ``transfer_to_<agent>`` tools the
model calls, and a handoff hands the conversation over instead of fetching data for the
answer, so it is no evidence that ``otel-prov verify``'s ``tool_use_verified`` gate asks
for.  An agent with only handoffs declares no tools and the gate does not apply to it.

An agent with an ``output_type`` answers with that type's JSON: when it has the fields
of the reasoning schema (``goals``, ``hypotheses``, ``evidence``, ``decision``:
``docs/decisions.md``), it is recorded as the last step's reasoning
(:func:`otel_prov.record_reasoning`); the model's text is never read for reasoning.

No ``agents`` import here: SDK objects are read by attribute (``Any`` at the boundary),
so importing otel-prov never imports the SDK.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from contextvars import Token
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, Tracer

from otel_prov import semconv as sc
from otel_prov.capture import (
    FINAL_ANSWER,
    SpanShape,
    declare_tools,
    describe_iteration,
    iteration_shape,
    model_call_shape,
    put_approval,
    put_content,
    put_usage,
    record_failure,
    record_reasoning,
    session_shape,
    tool_call_shape,
)

__all__ = ["OpenAIAgentsSpanConverter"]

_LOG = logging.getLogger(__name__)

_TRACE, _ALIAS, _SESSION, _ITERATION, _MODEL, _TOOL, _HANDOFF, _OTHER = (
    "trace",
    "alias",
    "session",
    "iteration",
    "model",
    "tool",
    "handoff",
    "other",
)
_MODEL_TYPES = frozenset({"generation", "response"})
_ATTR_SDK_TRACE_ID = "openai_agents.trace_id"
"""The SDK's own trace id (``trace_...``) on the root span, to find it in OpenAI's UI."""
_ATTR_HANDOFF_FROM = "openai_agents.handoff.from_agent"
"""On a handoff's ``execute_tool`` span: the agent that handed the conversation over.

The GenAI conventions have no handoff attributes, so the SDK's two fields keep the
SDK's namespace (as ``openai_agents.trace_id`` does)."""
_ATTR_HANDOFF_TO = "openai_agents.handoff.to_agent"
"""On a handoff's ``execute_tool`` span: the agent that took the conversation over."""
_HOSTED_TOOLS = frozenset(
    {
        "code_interpreter",
        "file_search",
        "hosted_mcp",
        "image_generation",
        "programmatic_tool_calling",
        "tool_search",
        "web_search",
    }
)
"""Names the SDK gives the hosted tools that OpenAI runs (``WebSearchTool.name`` and the
like): the runner opens no ``function`` span for their calls, so they are not declared.
A function tool of the same name is not declared either."""


_USER_KEYS = ("user.id", "user_id")
"""Keys of the SDK trace's metadata (``RunConfig.trace_metadata``) that name the user the
run acts on behalf of: the session spans get it as ``user.id``."""
_REMEMBERED = 1024
"""At most this many calls waiting for a decision, decisions not yet seen to take effect
and traces' users are kept (the oldest go first): a run never resumed costs nothing."""


@dataclass(frozen=True, slots=True)
class _Verdict:
    """A person's decision on a call (``RunContextWrapper.approve_tool`` / ``reject_tool``),
    kept until the resumed run shows its effect: the call running, or the model told."""

    decision: str
    at_ns: int
    tool_name: str | None
    arguments: str | None
    reason: str | None
    waited: float | None


def _remember(table: dict[str, Any], key: str, value: Any) -> None:
    table.pop(key, None)
    table[key] = value
    if len(table) > _REMEMBERED:
        del table[next(iter(table))]


@dataclass(eq=False)
class _Entry:
    kind: str
    span: Span | None
    trace_key: str
    alias_of: _Entry | None = None
    session: _Entry | None = None
    """For iterations: their session; for handoffs: the session that handed off."""
    iteration: _Entry | None = None
    """For model, tool and handoff spans: their iteration; for sessions: the inferred open one."""
    # sessions
    iterations: int = 0
    has_question: bool = False
    answer: str | None = None
    sdk_parent: str = ""
    """The SDK parent span id ("" at the top of the trace).  The run loop starts the
    agent a handoff hands over to under the same SDK parent as the agent that handed off."""
    held: bool = False
    """The SDK ended this session after it handed off; its OTel span waits for the next
    agent's span to start (see ``OpenAIAgentsSpanConverter._release``)."""
    held_end_ns: int | None = None
    agent: Any = None
    """The SDK's ``AgentSpanData``: the runner sets its ``tools`` after the span started."""
    tools: dict[str, None] = field(default_factory=dict)
    """Declared tool names, in the order first seen (a dict as an ordered set)."""
    # handoffs
    to_agent: str | None = None
    # iterations
    inferred: bool = False
    calls: list[tuple[str | None, str, str | None]] = field(default_factory=list)
    """(call id, tool name, arguments) the model chose in this iteration."""
    last_end_ns: int = 0
    # tools
    name: str = ""


def _ns(stamp: Any) -> int | None:
    """The SDK's ISO-8601 timestamps as epoch nanoseconds."""
    if not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return None
    seconds = int(moment.timestamp())
    return seconds * 1_000_000_000 + moment.microsecond * 1_000


def _dump(item: Any) -> Any:
    """Pydantic items (the SDK's Response objects) as plain dicts; dicts unchanged."""
    model_dump = getattr(item, "model_dump", None)
    if callable(model_dump):
        try:
            return model_dump()
        except Exception:  # noqa: BLE001 - unreadable item: treat as absent
            return None
    return item


def _text_of(content: Any) -> str | None:
    """Text of a message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


@dataclass
class _Decision:
    """What one model call produced: its reasoning, tool calls and message text."""

    thoughts: list[str] = field(default_factory=list)
    calls: list[tuple[str | None, str, str | None]] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)


def _output_items(data: Any) -> list[Any]:
    """A generation's or response's output as a flat list of dict items."""
    response = getattr(data, "response", None)
    raw = getattr(response, "output", None) if response is not None else None
    if raw is None:
        raw = getattr(data, "output", None)
    items: list[Any] = []
    for item in raw if isinstance(raw, list) else []:
        item = _dump(item)
        if isinstance(item, dict) and isinstance(item.get("output"), list) and "type" not in item:
            items.extend(_dump(inner) for inner in item["output"])  # a dumped Response
        else:
            items.append(item)
    return [item for item in items if isinstance(item, dict)]


def _decision(data: Any) -> _Decision:
    found = _Decision()
    for item in _output_items(data):
        kind = item.get("type")
        if kind == "reasoning":
            for part in (item.get("summary") or []) + (item.get("content") or []):
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    found.thoughts.append(part["text"])
        elif kind == "function_call" and isinstance(item.get("name"), str):
            arguments = item.get("arguments")
            found.calls.append(
                (
                    item.get("call_id") or item.get("id"),
                    item["name"],
                    arguments if isinstance(arguments, str) else None,
                )
            )
        elif kind == "message" or (kind is None and item.get("role") == "assistant"):
            # Responses message items, or a Chat Completions assistant message.
            text = _text_of(item.get("content"))
            if text:
                found.messages.append(text)
            for reasoning_key in ("reasoning_content", "reasoning"):
                if isinstance(item.get(reasoning_key), str) and item[reasoning_key]:
                    found.thoughts.append(item[reasoning_key])
            for call in item.get("tool_calls") or []:
                function = call.get("function") if isinstance(call, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    arguments = function.get("arguments")
                    found.calls.append(
                        (
                            call.get("id"),
                            function["name"],
                            arguments if isinstance(arguments, str) else None,
                        )
                    )
    return found


def _structured(agent: Any) -> bool:
    """Whether the agent answers with an ``output_type`` (its final message is the JSON
    of that type, which may hold reasoning), not plain text."""
    output_type = getattr(agent, "output_type", None)
    return isinstance(output_type, str) and output_type not in ("", "str")


def _question(data: Any) -> str | None:
    """The user's latest message in a model call's input (the run input on the first call)."""
    value = getattr(data, "input", None)
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        return None
    for item in reversed(value):
        item = _dump(item)
        if isinstance(item, dict) and item.get("role") == "user":
            return _text_of(item.get("content"))
    return None


def _usage(data: Any) -> tuple[int | None, int | None]:
    usage = getattr(data, "usage", None)
    if usage is None:
        usage = getattr(getattr(data, "response", None), "usage", None)
    usage = _dump(usage)
    if not isinstance(usage, dict):
        return None, None
    found = []
    for key in ("input_tokens", "output_tokens"):
        value = usage.get(key)
        found.append(value if isinstance(value, int) and not isinstance(value, bool) else None)
    return found[0], found[1]


def _model_name(data: Any) -> str | None:
    model = getattr(data, "model", None)
    if model is None:
        model = getattr(getattr(data, "response", None), "model", None)
    return str(model) if model else None


class OpenAIAgentsSpanConverter:
    """An ``agents`` ``TracingProcessor`` that re-emits the SDK's spans as OTel spans.

    Thread-safe (one lock around the span table); every callback swallows its own
    errors, as the SDK asks of processors.  :meth:`disable` makes it inert for traces
    and spans that start afterwards, while spans already open still end cleanly.
    """

    def __init__(self, tracer: Tracer) -> None:
        self._tracer = tracer
        self._lock = threading.Lock()
        self._entries: dict[str, _Entry] = {}
        self._handoffs: dict[tuple[str, str], _Entry] = {}
        """Ended handoffs whose target agent has not started yet, by (SDK trace id, SDK
        parent of the session that handed off)."""
        self._unsettled: dict[str, tuple[Span, int, str]] = {}
        """Call id -> (span, SDK end, SDK trace id) of a call whose function span ended
        without output and no error: it may be waiting for a decision (the SDK says so
        when it interrupts the turn, :meth:`interrupted`), so its span ends then, or
        when the turn, the session or the trace ends."""
        self._waiting: dict[str, int] = {}
        """Call id -> when the call stopped to wait for a person (its function span ended
        without output: the SDK's interruption)."""
        self._verdicts: dict[str, _Verdict] = {}
        """Call id -> the decision on it, until the resumed run shows its effect."""
        self._users: dict[str, str] = {}
        """SDK trace id -> the user its metadata names; kept past the trace's end, since a
        run resumed from its state continues the same SDK trace."""
        self._current: dict[str, tuple[Span, Token[Context]]] = {}
        """SDK span id -> (the OTel span of a tool call, the token of the context that
        made it current) while the SDK runs the tool: see :meth:`_enter`."""
        self._enabled = True

    def disable(self) -> None:
        self._enabled = False

    # --- the SDK's TracingProcessor interface ------------------------------------
    def on_trace_start(self, sdk_trace: Any) -> None:
        if not self._enabled:
            return
        try:
            trace_id = str(sdk_trace.trace_id)
            name = str(getattr(sdk_trace, "name", None) or "Agent workflow")
            span = self._tracer.start_span(name, attributes={_ATTR_SDK_TRACE_ID: trace_id})
            metadata = getattr(sdk_trace, "metadata", None)
            user = next(
                (metadata[k] for k in _USER_KEYS if isinstance(metadata, dict) and metadata.get(k)),
                None,
            )
            with self._lock:
                self._entries[trace_id] = _Entry(_TRACE, span, trace_id)
                if user is not None:
                    _remember(self._users, trace_id, str(user))
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents span conversion failed", exc_info=True)

    def on_trace_end(self, sdk_trace: Any) -> None:
        try:
            trace_id = str(sdk_trace.trace_id)
            with self._lock:
                entry = self._entries.pop(trace_id, None)
                leftovers = [
                    (key, e) for key, e in self._entries.items() if e.trace_key == trace_id
                ]
                for key, _ in leftovers:
                    del self._entries[key]
                self._settle(trace_id)
                # Handoffs whose target never started (the run failed in between).
                for pending in [k for k in self._handoffs if k[0] == trace_id]:
                    self._release(self._handoffs.pop(pending))
            now = time.time_ns()
            for _, leftover in leftovers:  # spans the SDK never ended
                if leftover.span is not None:
                    leftover.span.end(end_time=now)
            if entry is not None and entry.span is not None:
                entry.span.end(end_time=now)
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents span conversion failed", exc_info=True)

    def on_span_start(self, sdk_span: Any) -> None:
        if not self._enabled:
            return
        try:
            self._start(sdk_span)
            self._enter(sdk_span)
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents span conversion failed", exc_info=True)

    def on_span_end(self, sdk_span: Any) -> None:
        try:
            self._leave(sdk_span)
            self._end(sdk_span)
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents span conversion failed", exc_info=True)

    def record_decision(self, item: Any, *, approved: bool, reason: str | None = None) -> None:
        """A person approved or rejected the call of the SDK's ``ToolApprovalItem`` ``item``.

        The SDK says nothing of who decided.  The decision takes effect in the run resumed
        from the state: an approved call runs there (its span gets the decision), a
        rejected one does not, and the model is told (its session span gets it then)."""
        try:
            raw = _dump(getattr(item, "raw_item", None))
            call_id = raw.get("call_id") if isinstance(raw, dict) else None
            if not isinstance(call_id, str) or not call_id:
                return
            arguments = raw.get("arguments") if isinstance(raw, dict) else None
            name = getattr(item, "tool_name", None)
            now = time.time_ns()
            with self._lock:
                since = self._waiting.pop(call_id, None)
                verdict = _Verdict(
                    "approved" if approved else "rejected",
                    now,
                    name if isinstance(name, str) else None,
                    arguments if isinstance(arguments, str) else None,
                    reason,
                    None if since is None else max(0, now - since) / 1e9,
                )
                _remember(self._verdicts, call_id, verdict)
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents approval not recorded", exc_info=True)

    def interrupted(self, items: Any) -> None:
        """The SDK stopped the turn for a person's decision on these ``ToolApprovalItem``
        calls: their calls did not run in this run (``otel_prov.approval.pending``)."""
        try:
            with self._lock:
                for item in items if isinstance(items, list) else []:
                    raw = _dump(getattr(item, "raw_item", None))
                    call_id = raw.get("call_id") if isinstance(raw, dict) else None
                    found = self._unsettled.pop(call_id, None) if isinstance(call_id, str) else None
                    if found is None or call_id is None:
                        continue
                    span, end, _ = found
                    span.set_attribute(sc.OTEL_PROV_APPROVAL_REQUIRED, True)
                    span.set_attribute(sc.OTEL_PROV_APPROVAL_PENDING, True)
                    span.end(end_time=end)
                    _remember(self._waiting, call_id, end)
        except Exception:  # noqa: BLE001 - never break the agent run
            _LOG.debug("OpenAI Agents interruption not recorded", exc_info=True)

    def _settle(self, trace_key: str) -> None:
        """End the spans of the trace's calls that ended without output, no interruption
        having claimed them: calls that ran and returned nothing (called under the lock)."""
        for call_id in [k for k, (_, _, key) in self._unsettled.items() if key == trace_key]:
            span, end, _ = self._unsettled.pop(call_id)
            span.end(end_time=end)

    def shutdown(self) -> None:
        self.disable()

    def force_flush(self) -> None:
        """Nothing is buffered here; the OTel span processors do their own flushing."""

    # --- start ---------------------------------------------------------------------
    def _parent(self, sdk_span: Any) -> _Entry | None:
        parent_id = getattr(sdk_span, "parent_id", None)
        entry = self._entries.get(str(parent_id)) if parent_id else None
        if entry is None:
            entry = self._entries.get(str(getattr(sdk_span, "trace_id", "")))
        while entry is not None and entry.alias_of is not None:
            entry = entry.alias_of
        return entry

    def _open(
        self,
        shape: SpanShape,
        parent: _Entry | None,
        start_ns: int | None,
        links: Sequence[Link] = (),
    ) -> Span:
        return shape.start(
            self._tracer,
            parent=parent.span if parent is not None else None,
            start_time=start_ns,
            links=links,
        )

    def _new_iteration(
        self, session: _Entry, start_ns: int | None, *, inferred: bool, trace_key: str
    ) -> _Entry:
        session.iterations += 1
        number = session.iterations
        span = self._open(iteration_shape(number), session, start_ns)
        return _Entry(_ITERATION, span, trace_key, session=session, inferred=inferred)

    def _close_inferred(self, session: _Entry, fallback_ns: int | None) -> None:
        current, session.iteration = session.iteration, None
        if current is not None and current.span is not None:
            end = current.last_end_ns or fallback_ns
            current.span.end(end_time=end)

    def _start(self, sdk_span: Any) -> None:
        data = sdk_span.span_data
        kind = str(getattr(data, "type", "") or "")
        span_id = str(sdk_span.span_id)
        trace_key = str(sdk_span.trace_id)
        start = _ns(getattr(sdk_span, "started_at", None))
        with self._lock:
            parent = self._parent(sdk_span)
            entry: _Entry
            if kind == "task" and parent is not None:
                entry = _Entry(_ALIAS, None, trace_key, alias_of=parent)
            elif kind == "agent":
                entry = self._start_session(sdk_span, data, parent, start, trace_key)
            elif kind == "turn" and parent is not None and parent.kind == _SESSION:
                self._close_inferred(parent, start)
                entry = self._new_iteration(parent, start, inferred=False, trace_key=trace_key)
            elif kind in _MODEL_TYPES or kind == "function":
                iteration = self._iteration_for(parent, start, trace_key, new=kind != "function")
                if kind != "function" and iteration is not None and iteration.session is not None:
                    self._declare_tools(iteration.session)
                owner = iteration if iteration is not None else parent
                if kind == "function":
                    name = str(getattr(data, "name", None) or "tool")
                    span = self._open(tool_call_shape(name), owner, start)
                    entry = _Entry(_TOOL, span, trace_key, iteration=iteration, name=name)
                else:
                    provider = "openai" if kind == "response" else None
                    shape = model_call_shape(_model_name(data), provider=provider)
                    span = self._open(shape, owner, start)
                    entry = _Entry(_MODEL, span, trace_key, iteration=iteration)
            elif kind == "handoff":
                iteration = self._iteration_for(parent, start, trace_key, new=False)
                entry = self._start_handoff(data, parent, iteration, start, trace_key)
            else:
                if parent is not None and parent.kind == _SESSION and parent.iteration:
                    parent = parent.iteration
                other = getattr(data, "name", None)
                label = f"{kind} {other}" if isinstance(other, str) and other else kind or "span"
                entry = _Entry(_OTHER, self._open(SpanShape(label, {}), parent, start), trace_key)
            self._entries[span_id] = entry

    def _start_session(
        self, sdk_span: Any, data: Any, parent: _Entry | None, start: int | None, trace_key: str
    ) -> _Entry:
        """An agent session; the one a handoff hands over to is nested under that handoff.

        The SDK starts the new agent beside the old one (both under the run's task span),
        after the old one has ended.  Nesting it under the handoff makes it a sub-session
        of the session that handed off: one outermost session per run, and in PROV
        ``prov:qualifiedStart`` by the handoff.  The span link to the same handoff adds
        ``prov:wasInformedBy``, which holds even when the two sessions are mapped apart.
        """
        name = str(getattr(data, "name", None) or "agent")
        sdk_parent = str(getattr(sdk_span, "parent_id", None) or "")
        handoff = self._handoffs.pop((trace_key, sdk_parent), None)
        links: list[Link] = []
        if handoff is not None and handoff.to_agent == name and handoff.span is not None:
            parent = handoff
            links.append(Link(handoff.span.get_span_context()))
        # The SDK's models are OpenAI's, and so its spans say (as OpenAI's own
        # instrumentation of the SDK does): the provider the GenAI conventions ask for.
        shape = session_shape(name, provider="openai", user_id=self._users.get(trace_key))
        span = self._open(shape, parent, start, links=links)
        if handoff is not None:
            self._release(handoff)
        return _Entry(_SESSION, span, trace_key, sdk_parent=sdk_parent, agent=data)

    @staticmethod
    def _declare_tools(session: _Entry) -> None:
        """Add the agent's current tools (but hosted ones) to the session's declared tools."""
        names = getattr(session.agent, "tools", None)
        if session.span is None or not isinstance(names, list):
            return
        found = [n for n in names if isinstance(n, str) and n and n not in _HOSTED_TOOLS]
        if all(name in session.tools for name in found):
            return
        session.tools.update(dict.fromkeys(found))
        declare_tools(session.span, list(session.tools))

    def _start_handoff(
        self,
        data: Any,
        parent: _Entry | None,
        iteration: _Entry | None,
        start: int | None,
        trace_key: str,
    ) -> _Entry:
        """A handoff as the ``execute_tool`` span of the handoff tool the model called.

        To the model a handoff is a function tool (``transfer_to_<agent>``) that the
        runner executes, so it is recorded as one, with the call id and the exact
        arguments of the model's call, which the SDK's handoff span lacks.  The SDK runs
        an iteration's function tools before its handoff, and they have taken their
        calls by then: the model's first remaining call is the handoff the SDK executes.
        """
        calls = iteration.calls if iteration is not None else []
        call_id, name, arguments = calls.pop(0) if calls else (None, "handoff", None)
        from_agent = getattr(data, "from_agent", None)
        shape = tool_call_shape(name, call_id=call_id or None, arguments=arguments)
        if isinstance(from_agent, str) and from_agent:
            shape = shape.with_attributes({_ATTR_HANDOFF_FROM: from_agent})
        span = self._open(shape, iteration if iteration is not None else parent, start)
        session = iteration.session if iteration is not None else None
        return _Entry(_HANDOFF, span, trace_key, session=session, iteration=iteration, name=name)

    def _release(self, handoff: _Entry) -> None:
        """End the span of the session that handed off, at the SDK's end time for it.

        Its end is held until the next agent's span has started: a provenance processor
        releases an outermost session once it and everything open under it have ended,
        and would otherwise map the session that handed off without the one it started.
        """
        source = handoff.session
        if source is not None and source.held and source.span is not None:
            source.held = False
            source.span.end(end_time=source.held_end_ns)

    def _iteration_for(
        self, parent: _Entry | None, start: int | None, trace_key: str, *, new: bool
    ) -> _Entry | None:
        """The iteration a model or tool span belongs to, opening an inferred one if needed."""
        if parent is None:
            return None
        if parent.kind == _ITERATION:
            return parent
        if parent.kind != _SESSION:
            return None
        # No turn spans: a model call starts a new iteration; tools join the open one.
        if new or parent.iteration is None:
            self._close_inferred(parent, start)
            parent.iteration = self._new_iteration(
                parent, start, inferred=True, trace_key=trace_key
            )
        return parent.iteration

    def _enter(self, sdk_span: Any) -> None:
        """Make a tool call's OTel span the current one while the SDK runs the tool, so
        that what the tool does (an HTTP request, an MCP call: spans of other
        instrumentations) is traced under the call, in the run's trace.  The SDK makes
        its own span current the same way (a context variable set at the span's start,
        reset at its end, in the task that runs the tool)."""
        span_id = str(sdk_span.span_id)
        with self._lock:
            entry = self._entries.get(span_id)
        if entry is None or entry.kind != _TOOL or entry.span is None:
            return
        token = otel_context.attach(trace.set_span_in_context(entry.span))
        with self._lock:
            self._current[span_id] = (entry.span, token)

    def _leave(self, sdk_span: Any) -> None:
        """Undo :meth:`_enter` as the tool's SDK span ends: in the context it was made in
        (the call's span still current there); elsewhere there is nothing of ours to undo."""
        with self._lock:
            made = self._current.pop(str(sdk_span.span_id), None)
        if made is not None and trace.get_current_span() is made[0]:
            otel_context.detach(made[1])

    # --- end -----------------------------------------------------------------------
    def _end(self, sdk_span: Any) -> None:
        with self._lock:
            entry = self._entries.pop(str(sdk_span.span_id), None)
            if entry is None or entry.span is None:
                return
            end = _ns(getattr(sdk_span, "ended_at", None))
            data = sdk_span.span_data
            span = entry.span
            if entry.kind == _SESSION:
                self._declare_tools(entry)
                self._close_inferred(entry, end)
                if entry.answer is not None:
                    put_content(span, sc.OTEL_PROV_ANSWER, entry.answer)
                handoff = self._handoffs.get((entry.trace_key, entry.sdk_parent))
                entry.held = handoff is not None and handoff.session is entry
                entry.held_end_ns = end
            elif entry.kind == _MODEL:
                self._end_model(entry, data)
            elif entry.kind == _TOOL:
                failed = isinstance(getattr(sdk_span, "error", None), dict)
                if self._end_tool(entry, data, end, failed=failed):
                    return  # its span ends once the SDK says whether it waits
            if entry.kind in (_ITERATION, _SESSION):
                self._settle(entry.trace_key)
            elif entry.kind == _HANDOFF:
                self._end_handoff(entry, span, data)
            error = getattr(sdk_span, "error", None)
            if isinstance(error, dict):
                self._set_error(span, error)
            if not entry.held:
                span.end(end_time=end)
            if entry.iteration is not None and end is not None:
                entry.iteration.last_end_ns = max(entry.iteration.last_end_ns, end)

    def _end_model(self, entry: _Entry, data: Any) -> None:
        span = entry.span
        assert span is not None
        model = _model_name(data)
        if model:
            shape = model_call_shape(model)  # the SDK may name the model only now
            span.update_name(shape.name)
            span.set_attributes(shape.attributes)
        input_tokens, output_tokens = _usage(data)
        put_usage(span, input_tokens=input_tokens, output_tokens=output_tokens)
        iteration = entry.iteration
        session = iteration.session if iteration is not None else None
        if session is not None and self._verdicts:
            self._settle_rejections(session, data)
        if session is not None and session.span is not None and not session.has_question:
            question = _question(data)
            if question is not None:
                session.has_question = True
                put_content(session.span, sc.OTEL_PROV_QUESTION, question)
        if iteration is None or iteration.span is None:
            return
        decision = _decision(data)
        target = iteration.span
        thoughts = list(decision.thoughts)
        if not thoughts and decision.calls:
            thoughts = decision.messages  # text before a tool call is the model's reasoning
        thought = "\n".join(thoughts) if thoughts else None
        if decision.calls:
            iteration.calls.extend(decision.calls)
            describe_iteration(
                target,
                thought=thought,
                action=", ".join(name for _, name, _ in decision.calls),
                arguments=decision.calls[0][2] if len(decision.calls) == 1 else None,
            )
        elif decision.messages:
            answer = "\n".join(decision.messages)
            describe_iteration(
                target, thought=thought, action=FINAL_ANSWER, arguments={"answer": answer}
            )
            if session is not None:
                session.answer = answer
                if _structured(session.agent):
                    record_reasoning(answer, span=target)  # if it has the fields
        else:
            describe_iteration(target, thought=thought)

    def _end_tool(self, entry: _Entry, data: Any, end: int | None, *, failed: bool) -> bool:
        """Put the call's result on its span; True when the span is left open, unsettled:
        the call gave no output and no error, so it may be waiting for a decision."""
        span = entry.span
        assert span is not None
        arguments = getattr(data, "input", None)
        if arguments is not None:
            put_content(span, sc.OTEL_PROV_ARGUMENTS, arguments)
        output = getattr(data, "output", None)
        if output is not None:
            put_content(span, sc.OTEL_PROV_OBSERVATION, output)
        chosen = arguments if isinstance(arguments, str) else None
        call_id = self._match_call(entry, chosen) or self._decided_call(entry.name, chosen)
        if call_id:
            span.set_attribute(sc.GEN_AI_TOOL_CALL_ID, call_id)
        verdict = self._verdicts.pop(call_id, None) if call_id else None
        if verdict is not None:
            put_approval(
                span,
                verdict.decision,
                None,
                reason=verdict.reason,
                waited=verdict.waited,
                at_ns=verdict.at_ns,
            )
        elif call_id and output is None and not failed and end is not None:
            self._unsettled[call_id] = (span, end, entry.trace_key)
            return True
        return False

    def _decided_call(self, name: str, arguments: str | None) -> str | None:
        """The call id of a decided call of this tool with these arguments: a resumed run
        runs the approved calls before any model call that could name them."""
        for exact in (True, False):
            for call_id, verdict in self._verdicts.items():
                if verdict.tool_name == name and (not exact or verdict.arguments == arguments):
                    return call_id
        return None

    def _settle_rejections(self, session: _Entry, data: Any) -> None:
        """Rejected calls whose outcome the model is now told (a ``function_call_output``
        of its input): the decision goes on the session span, naming the call."""
        value = getattr(data, "input", None)
        if session.span is None or not isinstance(value, list):
            return
        for item in value:
            item = _dump(item)
            call_id = item.get("call_id") if isinstance(item, dict) else None
            verdict = self._verdicts.get(call_id) if isinstance(call_id, str) else None
            if verdict is None or verdict.decision != "rejected" or call_id is None:
                continue
            del self._verdicts[call_id]
            put_approval(
                session.span,
                verdict.decision,
                None,
                reason=verdict.reason,
                waited=verdict.waited,
                tool_name=verdict.tool_name,
                tool_call_id=call_id,
                at_ns=verdict.at_ns,
            )

    def _end_handoff(self, entry: _Entry, span: Span, data: Any) -> None:
        """Record the target agent, and wait for its session to start (``_start_session``).

        The observation is the agent the handoff returned to the runner (``to_agent``);
        the SDK also tells the model so, in a transfer message the span does not carry.
        """
        to_agent = getattr(data, "to_agent", None)
        if not isinstance(to_agent, str) or not to_agent:
            return
        entry.to_agent = to_agent
        span.set_attribute(_ATTR_HANDOFF_TO, to_agent)
        put_content(span, sc.OTEL_PROV_OBSERVATION, to_agent)
        if entry.session is not None:
            self._handoffs[(entry.trace_key, entry.session.sdk_parent)] = entry

    @staticmethod
    def _match_call(entry: _Entry, arguments: str | None) -> str | None:
        """The model's call id for this tool run: same name and arguments, else same name."""
        iteration = entry.iteration
        if iteration is None:
            return None
        calls = iteration.calls
        for exact in (True, False):
            for index, (call_id, name, chosen) in enumerate(calls):
                if name == entry.name and (not exact or chosen == arguments):
                    del calls[index]
                    return call_id
        return None

    @staticmethod
    def _set_error(span: Span, error: dict[str, Any]) -> None:
        message = str(error.get("message") or "error")
        data = error.get("data")
        detail = data.get("error") if isinstance(data, dict) else None
        description = f"{message}: {detail}" if detail else message
        # The SDK reports no exception class; "_OTHER" is OTel's value for that case.
        record_failure(span, "_OTHER", description)
