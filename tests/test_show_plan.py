"""``show`` gives a run's plan: its steps in order, what became of each, and the
postconditions checked, in text (golden: ``tests/golden/planned_session_show.txt``; set
``OTEL_PROV_UPDATE_GOLDEN=1`` to rewrite it after an intended change) and in JSON."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from otel_prov.read import PlanStepView, PostconditionView, open_store
from tests.builders import store_runs
from tests.cli import show, shown_view
from tests.planned_session import planned_session
from tests.session_tree import known_session

GOLDEN = Path(__file__).parent / "golden" / "planned_session_show.txt"


@pytest.fixture(scope="module")
def planned_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield store_runs(tmp_path_factory.mktemp("plan") / "store", planned_session())


def test_the_plan_shows_as_its_golden_text(planned_store: Path) -> None:
    shown = show(planned_store, "planned")
    if os.environ.get("OTEL_PROV_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(shown, encoding="utf-8")
    assert shown == GOLDEN.read_text(encoding="utf-8")


def test_steps_come_in_order_with_every_outcome_label(planned_store: Path) -> None:
    reader = open_store(planned_store)
    (run,) = reader.find("planned")
    (plan,) = reader.session(run).plans
    assert [(step.number, step.label, step.outcome) for step in plan.steps] == [
        (1, "search", "executed"),
        (2, "book", "executed"),
        (3, "email", "failed"),
        (4, "hold seat", "rolled_back"),
        (5, "celebrate", "skipped"),
        (6, "pay", None),
    ]
    assert plan.steps[1] == PlanStepView(
        2, "book", "executed", (PostconditionView("seat held", True, "12A"),)
    )


def test_the_json_has_the_plan_and_the_runs_own_postconditions(planned_store: Path) -> None:
    view = shown_view(planned_store, "planned")
    (plan,) = view["plans"]
    assert plan["name"] == "plan" and plan["made"] is not None
    assert [step["outcome"] for step in plan["steps"]][-2:] == ["skipped", None]
    assert view["postconditions"] == [
        {"name": "budget kept", "satisfied": False, "detail": "spent 120 of 100"}
    ]


def test_a_run_without_a_plan_shows_none(tmp_path: Path) -> None:
    path = store_runs(tmp_path / "store", known_session())
    assert "Plan " not in show(path, "conv-1")
    assert shown_view(path, "conv-1")["plans"] == []
