"""``otel-prov diff`` output: a report for people, or the comparison as JSON."""

from __future__ import annotations

import json

from otel_prov.cli._terminal import printable
from otel_prov.read._diff import CallRef, Divergence, SessionDiff

__all__ = ["render_diff"]


def _value(text: str | None) -> str:
    return "(none)" if text is None else json.dumps(text, ensure_ascii=False)


def _where(change: Divergence) -> str:
    """``question``, ``agent``, ``status`` (the run's), ``answer``, or a step's field."""
    return (
        change.field if change.iteration is None else f"iteration {change.iteration} {change.field}"
    )


def _changes(title: str, changes: tuple[Divergence, ...]) -> list[str]:
    if not changes:
        return []
    return [
        f"{title}:",
        *(f"  {_where(c)}: {_value(c.a)} -> {_value(c.b)}" for c in changes),
    ]


def _call(call: CallRef) -> str:
    ident = f" [{call.call_id}]" if call.call_id else ""
    return f"iteration {call.iteration}: {call.tool}{ident} {call.status} {_value(call.arguments)}"


def _text(diff: SessionDiff) -> str:
    lines = [
        f"a  {diff.a}  ({diff.steps[0]} iterations)",
        f"b  {diff.b}  ({diff.steps[1]} iterations)",
        f"compared: {', '.join(diff.compared)}",
    ]
    first = diff.first_divergence
    if diff.same:
        lines.append("no divergence: all of it agrees")
        return "\n".join(lines)
    if first is None:
        lines.append("what the runs did agrees; only their thoughts are worded differently")
    else:
        lines.append(f"first divergence: {_where(first)}")
        lines.append(f"  a: {_value(first.a)}")
        lines.append(f"  b: {_value(first.b)}")
    if len(diff.differences) > 1:
        lines.extend(_changes("differences", diff.differences))
    lines.extend(_changes("thoughts changed", diff.thoughts_changed))
    for title, calls in (
        ("tool calls added in b", diff.calls_added),
        ("tool calls missing in b", diff.calls_missing),
    ):
        if calls:
            lines.append(f"{title}:")
            lines.extend(f"  {_call(call)}" for call in calls)
    for title, changes in (
        ("arguments changed", diff.arguments_changed),
        ("status changed", diff.status_changed),
    ):
        if changes:
            lines.append(f"{title}:")
            lines.extend(
                f"  {'run' if c.iteration is None else f'iteration {c.iteration}: {c.tool}'}: "
                f"{_value(c.a)} -> {_value(c.b)}"
                for c in changes
            )
    if diff.answer is not None:
        lines.append(f"answer changed: {_value(diff.answer[0])} -> {_value(diff.answer[1])}")
    return "\n".join(lines)


def render_diff(diff: SessionDiff, fmt: str) -> str:
    """``diff`` output as ``text`` or ``json``; text values are quoted as JSON strings, so
    that a newline or a trailing space in them shows."""
    if fmt == "json":
        return json.dumps(diff.as_json(), ensure_ascii=False, indent=2) + "\n"
    return printable(_text(diff)) + "\n"
