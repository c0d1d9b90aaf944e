"""LangGraph's ``interrupt()`` and resume, read as people's decisions on tool calls.

LangChain's ``HumanInTheLoopMiddleware`` stops the graph with a ``GraphInterrupt`` whose
value lists the tool calls awaiting a decision (``action_requests``), and the caller
resumes the thread with ``Command(resume={"decisions": [...]})``, one per call, in order.
The handler hears the two in separate runs of the same thread: what the interrupt asked
is kept here by thread until the resume brings its decisions.  Pure but for that bounded
memory; the handler puts the decisions on spans.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from otel_prov.instrumentation.langchain._reading import json_text

__all__ = [
    "USER_KEYS",
    "Interrupted",
    "PendingInterrupts",
    "Verdict",
    "interrupted_calls",
    "is_interrupt",
    "verdicts",
]

USER_KEYS = ("user.id", "user_id", "langgraph_auth_user_id")
"""Run metadata that names the user who invoked the agent (LangSmith's ``user_id``,
LangGraph Platform's authenticated user)."""
_DECISIONS = {"approve": "approved", "edit": "modified", "reject": "rejected"}
"""``HumanInTheLoopMiddleware`` decision types -> ours; any other (``respond``: the
person answered instead of the tool) means the call did not run."""


def is_interrupt(error: BaseException) -> bool:
    """LangGraph's ``GraphInterrupt``: the graph stopped to wait (for a person)."""
    return any(cls.__name__ == "GraphInterrupt" for cls in type(error).__mro__)


@dataclass(frozen=True, slots=True)
class Interrupted:
    """A thread stopped for a person's decision on these calls (tool name, call id)."""

    at_ns: int
    calls: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True, slots=True)
class Verdict:
    decision: str
    approver: str | None
    reason: str | None
    waited: float
    at_ns: int


def interrupted_calls(
    error: BaseException, names: Mapping[str, str], arguments: Mapping[str, str]
) -> tuple[tuple[str, str | None], ...]:
    """(tool name, call id) of each call an approval interrupt stops for: the call id is
    the model's call of that tool with those arguments (``names`` and ``arguments`` by
    call id, as the session saw the model choose them), each claimed once."""
    interrupts = error.args[0] if error.args and isinstance(error.args[0], (list, tuple)) else ()
    unclaimed = dict(names)
    calls: list[tuple[str, str | None]] = []
    for interrupt in interrupts:
        value = getattr(interrupt, "value", None)
        requests = value.get("action_requests") if isinstance(value, dict) else None
        for request in requests if isinstance(requests, list) else []:
            if not isinstance(request, dict) or not isinstance(request.get("name"), str):
                continue
            name = request["name"]
            asked = json_text(request.get("args", {}))
            call_id = next(
                (i for i, n in unclaimed.items() if n == name and arguments.get(i) == asked),
                None,
            )
            unclaimed.pop(call_id or "", None)
            calls.append((name, call_id))
    return tuple(calls)


def verdicts(
    stopped: Interrupted, resume: Any, approver: str | None, now_ns: int
) -> list[tuple[str, str | None, Verdict]]:
    """(tool name, call id, verdict) of each decision ``resume`` brings for the calls the
    thread ``stopped`` for, in order; the wait is from the interrupt to ``now_ns``."""
    if isinstance(resume, dict) and "decisions" not in resume:
        # Several interrupts resumed at once: {interrupt id: {"decisions": [...]}}.
        resume = next((v for v in resume.values() if isinstance(v, dict)), {})
    decisions = resume.get("decisions") if isinstance(resume, dict) else None
    waited = max(0, now_ns - stopped.at_ns) / 1e9
    found: list[tuple[str, str | None, Verdict]] = []
    for (name, call_id), decision in zip(
        stopped.calls, decisions if isinstance(decisions, list) else [], strict=False
    ):
        kind = decision.get("type") if isinstance(decision, dict) else None
        if not isinstance(kind, str):
            continue
        message = decision.get("message")
        reason = message if isinstance(message, str) and message else None
        verdict = Verdict(_DECISIONS.get(kind, "rejected"), approver, reason, waited, now_ns)
        found.append((name, call_id, verdict))
    return found


class PendingInterrupts:
    """What each thread's last interrupt asked, until its resume; the oldest threads are
    forgotten past ``limit``.  Not thread-safe: the handler calls it under its lock."""

    def __init__(self, *, limit: int = 1024) -> None:
        self._by_thread: dict[str, Interrupted] = {}
        self._limit = limit

    def stopped(self, thread: str, interrupted: Interrupted) -> None:
        self._by_thread.pop(thread, None)
        self._by_thread[thread] = interrupted
        if len(self._by_thread) > self._limit:
            del self._by_thread[next(iter(self._by_thread))]

    def resumed(self, thread: str) -> Interrupted | None:
        return self._by_thread.pop(thread, None)
