"""Two runs side by side, step by step: where did they part ways?

The typical question is the same task before and after a prompt or model change.  The
runs are compared on what they were asked and who ran them (question, agent, the run's
own status) first; then step by step, aligned by their place in the run (iteration 1
with iteration 1), on what each step did: its action, the tools it called, their
arguments, their status and what they returned; then the answers.  A thought is
compared too, but apart: two runs word it differently even when they do the same
thing, so a changed thought is listed and never the first divergence.  Arguments that
are JSON compare as JSON, so key order and spacing are no divergence.  Then, when the
runs recorded any, their hypotheses and their decisions, in the order formed
(``_decisions.reasoning_differences``: id, text, confidence, adopted hypotheses), before
the answers.  Runs are the same only when all of it agrees.

Pure: it compares two :class:`~otel_prov.read.SessionView` objects (and what
``_decisions.load_reasoning`` read of their reasoning).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from otel_prov.read._decisions import Reasoned, reasoning_differences
from otel_prov.read._views import IterationView, SessionView, ToolCallView

__all__ = [
    "COMPARED",
    "DIFF_FIELDS",
    "REASONING_FIELDS",
    "RUN_FIELDS",
    "CallChange",
    "CallRef",
    "Divergence",
    "SessionDiff",
    "diff_sessions",
]

RUN_FIELDS = ("question", "agent", "status")
"""What the runs themselves are compared on, before their steps."""
DIFF_FIELDS = ("action", "tool", "arguments", "status", "observation")
"""What each step is compared on, in this order; ``answer`` comes after the last step,
``iteration`` names a step one run has and the other has not."""
REASONING_FIELDS = ("hypothesis", "decision")
"""What the runs' reasoning is compared on, after the steps (``Divergence.field``)."""
COMPARED = (
    *RUN_FIELDS,
    *(f"step {name}" for name in (*DIFF_FIELDS, "thought")),
    "hypotheses",
    "decisions",
    "answer",
)
"""Everything :func:`diff_sessions` compares, in the order it does, as reports name it."""


@dataclass(frozen=True)
class Divergence:
    """A place the runs differ: step ``iteration`` and ``field`` one of
    :data:`DIFF_FIELDS`, ``thought`` or ``iteration``; ``field`` one of
    :data:`REASONING_FIELDS` (``iteration`` the step that formed it, when known); or,
    with ``iteration`` ``None``, ``field`` one of :data:`RUN_FIELDS` or ``answer``."""

    iteration: int | None
    field: str
    a: str | None
    b: str | None

    def as_json(self) -> dict[str, Any]:
        return {"iteration": self.iteration, "field": self.field, "a": self.a, "b": self.b}


@dataclass(frozen=True)
class CallRef:
    """A tool call one run made and the other did not make in the same step."""

    iteration: int
    tool: str
    call_id: str | None
    arguments: str | None
    status: str

    def as_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "tool": self.tool,
            "call_id": self.call_id,
            "arguments": self.arguments,
            "status": self.status,
        }


@dataclass(frozen=True)
class CallChange:
    """The same tool called in the same step of both runs, with ``field`` different;
    ``iteration`` and ``tool`` are ``None`` for the runs' own statuses."""

    iteration: int | None
    tool: str | None
    field: str
    a: str | None
    b: str | None

    def as_json(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "tool": self.tool,
            "field": self.field,
            "a": self.a,
            "b": self.b,
        }


@dataclass(frozen=True)
class SessionDiff:
    a: str
    b: str
    steps: tuple[int, int]
    """How many steps each run took."""
    first_divergence: Divergence | None
    differences: tuple[Divergence, ...]
    """Every run field, step field and the answer that differs, in that order."""
    calls_added: tuple[CallRef, ...]
    """Calls ``b`` made that ``a`` did not, step by step."""
    calls_missing: tuple[CallRef, ...]
    """Calls ``a`` made that ``b`` did not."""
    arguments_changed: tuple[CallChange, ...]
    status_changed: tuple[CallChange, ...]
    """Calls whose status differs, and the runs' own (``iteration`` ``None``)."""
    answer: tuple[str | None, str | None] | None
    """Both answers when they differ."""
    thoughts_changed: tuple[Divergence, ...] = ()
    """Steps of both runs whose thoughts differ (``field`` ``thought``)."""
    reasoning_changed: tuple[Divergence, ...] = ()
    """Where the runs' hypotheses or decisions part (also among :attr:`differences`)."""

    @property
    def compared(self) -> tuple[str, ...]:
        """What was compared (:data:`COMPARED`): what a report says it looked at."""
        return COMPARED

    @property
    def same(self) -> bool:
        """All of :attr:`compared` agrees, the thoughts included."""
        return self.first_divergence is None and not self.thoughts_changed

    def as_json(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "compared": list(self.compared),
            "same": self.same,
            "iterations": {"a": self.steps[0], "b": self.steps[1]},
            "first_divergence": (
                None if self.first_divergence is None else self.first_divergence.as_json()
            ),
            "differences": [d.as_json() for d in self.differences],
            "thoughts_changed": [d.as_json() for d in self.thoughts_changed],
            "reasoning_changed": [d.as_json() for d in self.reasoning_changed],
            "tool_calls": {
                "added": [c.as_json() for c in self.calls_added],
                "missing": [c.as_json() for c in self.calls_missing],
            },
            "arguments_changed": [c.as_json() for c in self.arguments_changed],
            "status_changed": [c.as_json() for c in self.status_changed],
            "answer_changed": (
                None if self.answer is None else {"a": self.answer[0], "b": self.answer[1]}
            ),
        }


def diff_sessions(
    a: SessionView,
    b: SessionView,
    reasoning: tuple[Sequence[Reasoned], Sequence[Reasoned]] = ((), ()),
) -> SessionDiff:
    """Compare run ``a`` with run ``b`` step by step, then their ``reasoning`` (the
    hypotheses and decisions of each, see the module docstring)."""
    run_a, run_b = _run_fields(a), _run_fields(b)
    differences = [
        Divergence(None, name, run_a[name], run_b[name])
        for name in RUN_FIELDS
        if run_a[name] != run_b[name]
    ]
    thoughts: list[Divergence] = []
    added: list[CallRef] = []
    missing: list[CallRef] = []
    arguments: list[CallChange] = []
    statuses: list[CallChange] = []
    if a.status != b.status:
        statuses.append(CallChange(None, None, "status", a.status, b.status))
    for index in range(max(len(a.iterations), len(b.iterations))):
        step_a = a.iterations[index] if index < len(a.iterations) else None
        step_b = b.iterations[index] if index < len(b.iterations) else None
        number = _number(step_a, step_b, index)
        if step_a is None or step_b is None:
            differences.append(Divergence(number, "iteration", _present(step_a), _present(step_b)))
            missing.extend(_refs(number, step_a))
            added.extend(_refs(number, step_b))
            continue
        fields_a, fields_b = _fields(step_a), _fields(step_b)
        differences.extend(
            Divergence(number, name, fields_a[name], fields_b[name])
            for name in DIFF_FIELDS
            if not _same(name, fields_a[name], fields_b[name])
        )
        if step_a.thought != step_b.thought:
            thoughts.append(Divergence(number, "thought", step_a.thought, step_b.thought))
        pairs, only_a, only_b = _match_calls(step_a.tool_calls, step_b.tool_calls)
        missing.extend(_ref(number, call) for call in only_a)
        added.extend(_ref(number, call) for call in only_b)
        for call_a, call_b in pairs:
            if not _same("arguments", call_a.arguments, call_b.arguments):
                arguments.append(
                    CallChange(number, call_a.name, "arguments", call_a.arguments, call_b.arguments)
                )
            if call_a.status != call_b.status:
                statuses.append(
                    CallChange(number, call_a.name, "status", call_a.status, call_b.status)
                )
    parted = [Divergence(*found) for found in reasoning_differences(*reasoning)]
    differences.extend(parted)
    answer = None
    if a.answer != b.answer:
        answer = (a.answer, b.answer)
        differences.append(Divergence(None, "answer", a.answer, b.answer))
    return SessionDiff(
        a=a.id,
        b=b.id,
        steps=(len(a.iterations), len(b.iterations)),
        first_divergence=differences[0] if differences else None,
        differences=tuple(differences),
        calls_added=tuple(added),
        calls_missing=tuple(missing),
        arguments_changed=tuple(arguments),
        status_changed=tuple(statuses),
        answer=answer,
        thoughts_changed=tuple(thoughts),
        reasoning_changed=tuple(parted),
    )


def _run_fields(run: SessionView) -> dict[str, str | None]:
    return {"question": run.question, "agent": run.agent, "status": run.status}


def _number(a: IterationView | None, b: IterationView | None, index: int) -> int:
    for step in (a, b):
        if step is not None and step.number is not None:
            return step.number
    return index + 1


def _present(step: IterationView | None) -> str | None:
    return None if step is None else (step.action or "(a step)")


def _joined(values: Sequence[str | None]) -> str | None:
    present = [value for value in values if value is not None]
    return "\n".join(present) if present else None


def _fields(step: IterationView) -> dict[str, str | None]:
    """What a step did, each as one text (parallel calls one line each)."""
    calls = step.tool_calls
    return {
        "action": step.action,
        "tool": _joined([call.name for call in calls]),
        "arguments": step.arguments
        if step.arguments is not None or not calls
        else _joined([call.arguments for call in calls]),
        "status": _joined([call.status for call in calls]) if calls else step.status,
        "observation": _joined([call.observation for call in calls])
        if calls and step.observation is None
        else step.observation,
    }


def _same(field: str, a: str | None, b: str | None) -> bool:
    if field != "arguments" or a is None or b is None:
        return a == b
    return bool(_as_json(a) == _as_json(b))


def _as_json(text: str) -> Any:
    """Parallel calls' arguments come one per line: each line is JSON, or none is."""
    try:
        return [json.loads(line) for line in text.splitlines()] or text
    except ValueError:
        return text


def _match_calls(
    a: Sequence[ToolCallView], b: Sequence[ToolCallView]
) -> tuple[list[tuple[ToolCallView, ToolCallView]], list[ToolCallView], list[ToolCallView]]:
    """Calls of one step paired by tool name, in order; the rest of each side apart."""
    left = list(b)
    pairs, only_a = [], []
    for call in a:
        match = next((other for other in left if other.name == call.name), None)
        if match is None:
            only_a.append(call)
        else:
            left.remove(match)
            pairs.append((call, match))
    return pairs, only_a, left


def _ref(number: int, call: ToolCallView) -> CallRef:
    return CallRef(number, call.name, call.call_id, call.arguments, call.status)


def _refs(number: int, step: IterationView | None) -> list[CallRef]:
    return [] if step is None else [_ref(number, call) for call in step.tool_calls]
