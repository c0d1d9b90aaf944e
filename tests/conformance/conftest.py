"""The conformance runs, shared by every module of the suite: each scenario runs once per
test session, however many modules read it (the fields, the readers)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.conformance.test_conformance import Scenario, Stores, run_scenario


@pytest.fixture(scope="session")
def stores_of(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Scenario], Stores]:
    """The stores of a scenario's run, made when a test first asks for them."""
    made: dict[str, Stores] = {}

    def stores(scenario: Scenario) -> Stores:
        if scenario.name not in made:
            made[scenario.name] = run_scenario(scenario, tmp_path_factory.mktemp(scenario.name))
        return made[scenario.name]

    return stores
