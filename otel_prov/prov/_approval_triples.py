"""People in the record: a person's decision on a tool call, and the user an agent acted
on behalf of.

* Each ``otel_prov.approval`` event is an ``oprov:Approval`` activity, from when the run
  started waiting (the event's time less ``otel_prov.approval.wait``) to the decision,
  ``prov:wasAssociatedWith`` the ``prov:Person`` who decided, ``oprov:partOf`` the
  activity of the span it was recorded on (so the run's seal covers it).  The tool call
  it allowed (approved or modified) ``prov:wasInformedBy`` it; ``oprov:callRan`` says
  whether the call ran, false for a rejected one, which has no tool call of its own:
  the decision names it (``oprov:toolName``, ``oprov:toolCallId``) and keeps the reason.
* The user of a session (``user.id``, or a third party's key: ``USER_KEYS``): its agent
  ``prov:actedOnBehalfOf`` that user, with a ``prov:Delegation`` naming the session
  (``prov:hadActivity``): the agent is shared by every run, the delegation is this run's.

A person's node is named by the SHA-256 of their id, so the same person is one node
whether their id was recorded as given or, with content off, as its ``sha256:`` pseudonym
(``otel_prov.capture.person_id``); the id itself is on it only when it was recorded.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable
from typing import Any

from otel_prov import semconv as sc
from otel_prov.prov._conventions import (
    TOOL_CALL_ID_KEYS,
    TOOL_NAME_KEYS,
    USER_KEYS,
    tool_name_from_span_name,
)
from otel_prov.prov._iris import activity_iri, entity_iri, span_hex, trace_hex
from otel_prov.prov._rdf import Triple, boolean, datetime_from_ns, double, literal
from otel_prov.prov._span_record import Role, SpanRecord
from otel_prov.prov._span_tree import SpanTree, first_text
from otel_prov.prov._span_triples import SpanTriples
from otel_prov.prov._vocab import RDF_TYPE, RDFS_LABEL, O, P

__all__ = [
    "awaits_approval",
    "map_approvals",
    "map_delegation",
    "person",
    "person_iri",
    "wait_text",
]

_PSEUDONYM = "sha256:"
_ALLOWED = frozenset({"approved", "modified"})


def person_iri(identifier: str) -> str:
    """The node of the person with this id (or its ``sha256:<hex>`` pseudonym)."""
    digest = identifier.removeprefix(_PSEUDONYM)
    if digest == identifier or len(digest) != 64:
        digest = hashlib.sha256(identifier.encode()).hexdigest()
    return f"<urn:otel-prov:person:{digest}>"


def person(
    identifier: str | None, name: Any, add: Callable[[Triple], None], *, unnamed: str = ""
) -> tuple[str, str | None]:
    """The ``prov:Person`` with this id (its triples given to ``add``), and how to name
    them (None: they cannot be); with no id (a framework that does not say who decided),
    the node ``unnamed``.  Also a reviewer's (``_review``)."""
    node = person_iri(identifier) if identifier is not None else unnamed
    add((node, RDF_TYPE, P.Person))
    add((node, RDF_TYPE, P.Agent))
    label = name if isinstance(name, str) and name else None
    if identifier is not None and not identifier.startswith(_PSEUDONYM):
        label = label or identifier
        add((node, O.personId, literal(identifier)))
    add((node, RDFS_LABEL, literal(label or "a person the record does not name")))
    if isinstance(name, str) and name:
        add((node, O.personName, literal(name)))
    return node, label


def map_delegation(span: SpanRecord, session: str, agent: str | None, out: SpanTriples) -> None:
    """The session's agent acted on behalf of the session's ``user.id``."""
    user = out.text(*USER_KEYS)
    if not user or agent is None:
        return
    person_node, _ = person(user, None, out.add)
    delegation = entity_iri(session, "delegation")
    add = out.add
    add((agent, P.actedOnBehalfOf, person_node))
    add((agent, P.qualifiedDelegation, delegation))
    add((delegation, RDF_TYPE, P.Delegation))
    add((delegation, P.agent, person_node))
    add((delegation, P.hadActivity, session))


def _decided_call(span: SpanRecord, call_id: Any, tree: SpanTree) -> SpanRecord | None:
    """The tool call an approval event decided on: the span's own, else the one of the
    trace with the event's call id."""
    if not isinstance(call_id, str) or not call_id:
        return span if span.role is Role.TOOL_CALL else None
    for candidate in tree.spans:
        if (
            candidate.role is Role.TOOL_CALL
            and first_text(candidate.attributes, TOOL_CALL_ID_KEYS) == call_id
        ):
            return candidate
    return None


def awaits_approval(span: SpanRecord) -> bool:
    """Whether the tool call stopped to wait for a decision (and so did not run)."""
    return span.attributes.get(sc.OTEL_PROV_APPROVAL_PENDING) is True


def _seconds(value: Any) -> float | None:
    """A wait in seconds: a finite number >= 0, else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _told(decision: str, who: str | None, wait: float | None, reason: Any) -> str:
    """The decision in words, as readers show it: ``approved by Alice after 42 s``."""
    text = decision + (f" by {who}" if who else "")
    if wait is not None:
        text += f" after {wait_text(wait)}"
    return text + (f": {reason}" if isinstance(reason, str) and reason else "")


def wait_text(seconds: float) -> str:
    """A wait as people say it: ``350 ms``, ``3.5 s``, ``42 s``, ``2 min 5 s``, ``3 h 1 min``."""
    if seconds < 1:
        return f"{round(seconds * 1000)} ms"
    if seconds < 10:
        return f"{round(seconds, 1):g} s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole} s"
    minutes, rest = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def map_approvals(span: SpanRecord, activity: str, tree: SpanTree, out: SpanTriples) -> None:
    """Each ``otel_prov.approval`` event of the span, as an ``oprov:Approval``."""
    add = out.add
    events = [e for e in span.events if e.name == sc.APPROVAL_EVENT]
    if span.role is Role.TOOL_CALL and span.attributes.get(sc.OTEL_PROV_APPROVAL_REQUIRED) is True:
        add((activity, O.approvalRequired, boolean(True)))
    if span.role is Role.TOOL_CALL and awaits_approval(span):
        add((activity, O.awaitingApproval, boolean(True)))
    for index, event in enumerate(events, start=1):
        attributes = event.attributes
        decision = attributes.get(sc.OTEL_PROV_APPROVAL_DECISION)
        approver = attributes.get(sc.OTEL_PROV_APPROVAL_APPROVER_ID)
        if decision not in sc.APPROVAL_DECISIONS:
            out.report(f"approval event {index}: decision {decision!r} is not known; left out")
            continue
        approval = entity_iri(activity, f"approval-{index}")
        recorded = attributes.get(sc.OTEL_PROV_APPROVAL_WAIT)
        wait = _seconds(recorded)
        if wait is None and recorded is not None:
            out.report(f"approval event {index}: wait {recorded!r} is no seconds; left out")
        decided_ns = event.time_ns
        add((approval, RDF_TYPE, O.Approval))
        add((approval, RDF_TYPE, P.Activity))
        add((approval, O.traceId, literal(trace_hex(span.trace_id))))
        add((approval, O.spanId, literal(span_hex(span.span_id))))
        add((approval, O.partOf, activity))
        add((approval, O.status, literal("ok")))
        add((approval, O.decision, literal(str(decision))))
        started_ns = decided_ns if wait is None else decided_ns - round(wait * 1e9)
        add((approval, P.startedAtTime, datetime_from_ns(started_ns)))
        add((approval, P.endedAtTime, datetime_from_ns(decided_ns)))
        if wait is not None:
            add((approval, O.waitSeconds, double(wait)))
        reason = attributes.get(sc.OTEL_PROV_APPROVAL_REASON)
        if isinstance(reason, str) and reason:
            add((approval, O.reason, literal(reason)))
        approver_node, who = person(
            approver if isinstance(approver, str) and approver else None,
            attributes.get(sc.OTEL_PROV_APPROVAL_APPROVER_NAME),
            out.add,
            unnamed=entity_iri(approval, "approver"),
        )
        add((approval, P.wasAssociatedWith, approver_node))
        call = _decided_call(span, attributes.get(sc.GEN_AI_TOOL_CALL_ID), tree)
        name = first_text(attributes, TOOL_NAME_KEYS)
        if name is None and call is not None:
            name = first_text(call.attributes, TOOL_NAME_KEYS)
            name = name or tool_name_from_span_name(call.name)
        call_id = attributes.get(sc.GEN_AI_TOOL_CALL_ID)
        if not isinstance(call_id, str) and call is not None:
            call_id = first_text(call.attributes, TOOL_CALL_ID_KEYS)
        if name:
            add((approval, O.toolName, literal(name)))
        if isinstance(call_id, str) and call_id:
            add((approval, O.toolCallId, literal(call_id)))
        add((approval, RDFS_LABEL, literal(_told(str(decision), who, wait, reason))))
        if decision in _ALLOWED:
            if call is not None:
                add((activity_iri(call.trace_id, call.span_id), P.wasInformedBy, approval))
                add((approval, O.callRan, boolean(True)))
        else:
            add((approval, O.callRan, boolean(False)))
