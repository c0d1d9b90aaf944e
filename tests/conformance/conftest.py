"""The conformance runs, shared by every module of the suite: each scenario runs once per
test session, however many modules read it (the fields, the readers), and each of its
stores is read into fields once."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from tests.conformance import fields
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


@pytest.fixture(scope="session")
def observed_of() -> Callable[[Path], Mapping[str, object]]:
    """``fields.observed`` of a store, read when a test first asks: a scenario's stores are
    written by its run only, so every later reading would give the same fields (each
    reading takes a fraction of a second, and 15 fields of 40 scenarios ask for two)."""
    read: dict[Path, Mapping[str, object]] = {}

    def observed(store: Path) -> Mapping[str, object]:
        if store not in read:
            read[store] = fields.observed(store)
        return read[store]

    return observed
