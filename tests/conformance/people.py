"""What third-party telemetry records of the people in a run: the user it acts for, and
the approvals and interrupts a person answered (issue 30.4).

One declaration per convention, each checked by ``test_people.py`` against the pinned
packages (their attribute registries, and a real LangGraph human-in-the-loop run under
their LangChain instrumentation), and rendered into ``docs/support-matrix.md`` by
``scripts/support_matrix.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PEOPLE", "PeopleSupport"]


@dataclass(frozen=True)
class PeopleSupport:
    convention: str
    user: str
    """What it records of the user a run acts for, and whether otel-prov reads it."""
    approvals: str
    """What it records of a person's approval of a tool call, or of an interrupt."""


PEOPLE = (
    PeopleSupport(
        "OpenInference",
        "yes: `user.id` (its `using_user` context puts it on every span), read as the user "
        "the session's agent `prov:actedOnBehalfOf`",
        "absent: its conventions define no approval, decision or interrupt attribute; a "
        "LangGraph interrupt is an `exception` event of the node that raised it, and the "
        "resume's decisions are only in the resumed run's `input.value` (a `Command`), "
        "with no approver or wait; its OpenAI Agents instrumentation skips the SDK's "
        "approval items, and the SDK's trace has no span for a decision",
    ),
    PeopleSupport(
        "OpenLLMetry",
        "yes: the `user_id` association property "
        "(`traceloop.association.properties.user_id`); `gen_ai.user` names the end user of "
        "one model request, not the run, and is not read as such",
        "absent: no approval or interrupt attribute; a LangGraph interrupt is a task span "
        "with `error.type` `GraphInterrupt`, and the resume's decisions are only in the "
        "resumed workflow's `traceloop.entity.input`, with no approver or wait",
    ),
    PeopleSupport(
        "OpenTelemetry GenAI",
        "yes: `user.id` of the general registry on the session span",
        "absent: the GenAI conventions define no approval, human-in-the-loop or interrupt "
        "attribute, span or event",
    ),
)
"""Per convention: the user and the approvals.  For otel-prov's own instrumentors (the
OpenAI Agents SDK's tool approvals, LangGraph's interrupt and resume) see
docs/frameworks.md."""
