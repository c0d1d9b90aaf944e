"""A run's plans as ``show`` gives them: ordered steps, what became of each, and the
postconditions checked.

A plan is recorded when it is made, before anything runs (``otel_prov.plan``), so a
reader can set what the agent meant to do beside what it did: each step's outcome
(``executed``, ``failed``, ``skipped``, ``rolled_back``; none when the step was neither
run nor marked) and the postconditions checked for it.  A postcondition checked outside
any plan step belongs to the run itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from otel_prov.prov._rdf import iri, is_true
from otel_prov.read._backend import QueryBackend
from otel_prov.read._sparql import SPARQL_PREFIXES

__all__ = ["PlanStepView", "PlanView", "PostconditionView", "plans_and_postconditions"]


def generated_in(subject: str, session: str) -> str:
    """A union binding ``subject`` (a variable) to what the run ``session`` (an IRI
    term) generated, itself or an activity at any depth below it.

    The run's own step spelled out beside ``partOf+``: as ``?act oprov:partOf*`` joined
    with the plan's or the postcondition's ``OPTIONAL`` parts, Virtuoso gave 1 of the 6
    steps of a plan and none of a sub-session's plans.
    """
    return (
        f"{{ {subject} prov:wasGeneratedBy {session} }}\n"
        f"  UNION {{ ?act oprov:partOf+ {session} . {subject} prov:wasGeneratedBy ?act }}"
    )


def plans_query(graph: str, session: str) -> str:
    """SELECT each step of each plan made in the run (sub-sessions included), in the
    order the plans were made and their steps numbered, with what became of it."""
    return f"""{SPARQL_PREFIXES}
SELECT ?plan ?name ?made ?step ?n ?label ?outcome WHERE {{ GRAPH {graph} {{
  {generated_in("?plan", iri(session))}
  ?plan a prov:Plan .
  ?step p-plan:isStepOfPlan ?plan ; oprov:stepNumber ?n .
  OPTIONAL {{ ?plan rdfs:label ?name }}
  OPTIONAL {{ ?plan prov:generatedAtTime ?made }}
  OPTIONAL {{ ?step rdfs:label ?label }}
  OPTIONAL {{ ?step oprov:stepOutcome ?outcome }}
}} }} ORDER BY ?made ?plan ?n"""


def postconditions_query(graph: str, session: str) -> str:
    """SELECT each postcondition checked in the run, oldest first, with the plan step
    it was checked for (unbound: checked outside any plan)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?post ?name ?ok ?detail ?step ?at WHERE {{ GRAPH {graph} {{
  {generated_in("?post", iri(session))}
  ?post a oprov:Postcondition ; rdfs:label ?name ; oprov:satisfied ?ok .
  OPTIONAL {{ ?post oprov:detail ?detail }}
  OPTIONAL {{ ?post oprov:planStep ?step }}
  OPTIONAL {{ ?post prov:generatedAtTime ?at }}
}} }} ORDER BY ?at ?post"""


@dataclass(frozen=True)
class PostconditionView:
    """A condition the agent checked after acting (``otel_prov.postcondition``)."""

    name: str
    satisfied: bool
    detail: str | None = None


@dataclass(frozen=True)
class PlanStepView:
    number: int
    label: str
    outcome: str | None
    """``executed``, ``failed``, ``skipped`` or ``rolled_back``; None: neither run nor
    marked, which leaves the plan unfollowed (verify's ``plan_followed``)."""
    postconditions: tuple[PostconditionView, ...] = ()
    """Checked for this step, oldest first."""


@dataclass(frozen=True)
class PlanView:
    id: str
    name: str | None
    made: str | None
    """``xsd:dateTime`` in UTC: when the plan was made, before its steps ran."""
    steps: tuple[PlanStepView, ...] = ()


def plans_and_postconditions(
    backend: QueryBackend, graph: str, session: str
) -> tuple[tuple[PlanView, ...], tuple[PostconditionView, ...]]:
    """The run's plans (oldest first, steps in order) and the postconditions it checked
    outside any plan step."""
    for_step: dict[str, list[PostconditionView]] = {}
    unplanned: list[PostconditionView] = []
    for row in backend.query(postconditions_query(graph, session)).rows:
        checked = PostconditionView(row["name"] or "", is_true(row["ok"]), row["detail"])
        if row["step"]:
            for_step.setdefault(row["step"], []).append(checked)
        else:
            unplanned.append(checked)
    plans = _plans(backend.query(plans_query(graph, session)).rows, for_step)
    return plans, tuple(unplanned)


def _plans(
    rows: Sequence[Mapping[str, str | None]], for_step: Mapping[str, Sequence[PostconditionView]]
) -> tuple[PlanView, ...]:
    plans: dict[str, PlanView] = {}
    for row in rows:
        plan_id, step = row["plan"] or "", row["step"] or ""
        plan = plans.get(plan_id) or PlanView(plan_id, row["name"], row["made"])
        if any(seen.number == int(row["n"] or 0) for seen in plan.steps):
            continue  # a second label or outcome of the same step: the first is shown
        shown = PlanStepView(
            int(row["n"] or 0), row["label"] or "", row["outcome"], tuple(for_step.get(step, ()))
        )
        plans[plan_id] = replace(plan, steps=(*plan.steps, shown))
    return tuple(plans.values())
