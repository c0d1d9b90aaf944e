"""Settings from the environment: bad values are logged and replaced by the default."""

from __future__ import annotations

import logging

import pytest

from otel_prov._settings import env_bool, env_float, env_int


@pytest.mark.parametrize(
    ("raw", "expected"), [("", 7), ("12", 12), ("0", 7), ("-3", 7), ("x", 7), ("1.5", 7)]
)
def test_env_int(monkeypatch: pytest.MonkeyPatch, raw: str, expected: int) -> None:
    monkeypatch.setenv("OTEL_PROV_TEST", raw)
    assert env_int("OTEL_PROV_TEST", 7) == expected


def test_bad_values_are_logged_with_the_variable(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    monkeypatch.setenv("OTEL_PROV_TEST", "soon")
    assert env_float("OTEL_PROV_TEST", 2.5) == 2.5
    assert env_bool("OTEL_PROV_TEST", True) is True
    messages = [r.getMessage() for r in caplog.records]
    assert messages == [
        "OTEL_PROV_TEST='soon' is not a positive number; using 2.5",
        "OTEL_PROV_TEST='soon' is not a boolean (true/false); using True",
    ]


@pytest.mark.parametrize(("raw", "expected"), [("TRUE", True), ("off", False), ("1", True)])
def test_env_bool(monkeypatch: pytest.MonkeyPatch, raw: str, expected: bool) -> None:
    monkeypatch.setenv("OTEL_PROV_TEST", raw)
    assert env_bool("OTEL_PROV_TEST", not expected) is expected
