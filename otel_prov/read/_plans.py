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

from otel_prov.exporters._reading import QueryBackend
from otel_prov.prov._rdf import iri, is_true
from otel_prov.read._sparql import SPARQL_PREFIXES, values

__all__ = ["PlanStepView", "PlanView", "PostconditionView", "plans_and_postconditions"]


def parts_query(graph: str, session: str) -> str:
    """SELECT ``?act``: every activity and session part of ``session`` at any depth.

    The path asked alone, the run's plans and postconditions then found from the run and
    these by ``VALUES``: as ``?act oprov:partOf* session`` joined with the plan's
    patterns, Virtuoso gave 1 of the 6 steps of a plan and none of a sub-session's plans,
    and with ``partOf+`` spelled out beside the run's own step, the embedded store read
    every generation of the store (0.5 s a run over 2,000 runs).
    """
    return f"""{SPARQL_PREFIXES}
SELECT DISTINCT ?act WHERE {{ GRAPH {graph} {{ ?act oprov:partOf+ {iri(session)} }} }}"""


def plans_query(graph: str, acts: Sequence[str]) -> str:
    """SELECT each step of each plan ``acts`` (the run and its parts, IRIs) made, in the
    order the plans were made and their steps numbered, with what became of it."""
    return f"""{SPARQL_PREFIXES}
SELECT ?plan ?name ?made ?step ?n ?label ?outcome WHERE {{ GRAPH {graph} {{
  VALUES ?act {{ {values(acts)} }}
  ?plan prov:wasGeneratedBy ?act ; a prov:Plan .
  ?step p-plan:isStepOfPlan ?plan ; oprov:stepNumber ?n .
  OPTIONAL {{ ?plan rdfs:label ?name }}
  OPTIONAL {{ ?plan prov:generatedAtTime ?made }}
  OPTIONAL {{ ?step rdfs:label ?label }}
  OPTIONAL {{ ?step oprov:stepOutcome ?outcome }}
}} }} ORDER BY ?made ?plan ?n"""


def postconditions_query(graph: str, acts: Sequence[str]) -> str:
    """SELECT each postcondition ``acts`` (the run and its parts, IRIs) checked, oldest
    first, with the plan step it was checked for (unbound: checked outside any plan)."""
    return f"""{SPARQL_PREFIXES}
SELECT ?post ?name ?ok ?detail ?step ?at WHERE {{ GRAPH {graph} {{
  VALUES ?act {{ {values(acts)} }}
  ?post prov:wasGeneratedBy ?act ; a oprov:Postcondition ; rdfs:label ?name ;
        oprov:satisfied ?ok .
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
    outside any plan step (three queries: the run's parts, then what they made)."""
    parts = backend.query(parts_query(graph, session)).rows
    acts = [session, *(row["act"] or "" for row in parts)]
    for_step: dict[str, list[PostconditionView]] = {}
    unplanned: list[PostconditionView] = []
    for row in backend.query(postconditions_query(graph, acts)).rows:
        checked = PostconditionView(row["name"] or "", is_true(row["ok"]), row["detail"])
        if row["step"]:
            for_step.setdefault(row["step"], []).append(checked)
        else:
            unplanned.append(checked)
    plans = _plans(backend.query(plans_query(graph, acts)).rows, for_step)
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
