"""How a duration reads, in the terminal and on the web pages alike."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov.view._labels import duration_label, run_took_label, took_label

# The unit's size in seconds, and the step a label in it is rounded to (milliseconds
# below 10 to the microsecond, as the docstring of duration_label states).
_UNITS = {"µs": (1e-6, 0.1), "s": (1.0, 0.01), "min": (60.0, 0.1)}
_LABEL = re.compile(r"(-?\d+(?:\.\d+)?) (µs|ms|s|min)")


@pytest.mark.parametrize(
    ("seconds", "label"),
    [
        (0.002, "2 ms"),
        (0.0015, "1.5 ms"),
        (0.00025, "250 µs"),
        (0.0000125, "12.5 µs"),
        (0.012, "12 ms"),
        (0.0123, "12.3 ms"),
        (0.05, "50 ms"),
        (1.0, "1 s"),
        (3.2, "3.2 s"),
        (1.45, "1.45 s"),
        (270.0, "4.5 min"),
        (0.0, "0 µs"),
        (0.0009999999, "1 ms"),
        (119.999, "2 min"),
    ],
)
def test_a_duration_reads_without_trailing_zeros(seconds: float, label: str) -> None:
    assert duration_label(seconds) == label


@given(st.floats(min_value=0, max_value=1e7, allow_nan=False, allow_infinity=False))
def test_a_duration_label_parses_back_within_its_rounding(seconds: float) -> None:
    label = duration_label(seconds)
    match = _LABEL.fullmatch(label)
    assert match, label
    number, unit = match.groups()
    size, step = (1e-3, 0.001 if float(number) < 10 else 0.1) if unit == "ms" else _UNITS[unit]
    assert abs(float(number) * size - seconds) <= (step / 2) * size * (1 + 1e-9) + 1e-15
    if "." in number:
        assert not number.endswith("0"), label
        assert len(number.split(".")[1]) <= len(f"{step:g}".split(".")[1])


START = "2025-11-30T09:15:00Z"


@pytest.mark.parametrize(
    ("end", "status", "now", "said", "cell"),
    [
        ("2025-11-30T09:15:03.2Z", "ok", "2025-11-30T10:00:00Z", "took 3.2 s", "3.2 s"),
        ("2025-11-30T09:17:06Z", "error", "2025-11-30T10:00:00Z", "took 2.1 min", "2.1 min"),
        (None, "running", "2025-11-30T09:17:06Z", "running for 2.1 min", "2.1 min so far"),
        # A clock behind the run's start (another machine's) says no time has passed.
        (None, "running", "2025-11-30T09:14:00Z", "running for 0 µs", "0 µs so far"),
        (None, "incomplete", "2025-11-30T10:00:00Z", "not recorded: cut off before it ended", ""),
        ("not a time", "ok", "2025-11-30T10:00:00Z", "took an unknown time", ""),
    ],
)
def test_a_run_says_how_long_it_took_or_has_been_running(
    end: str | None, status: str, now: str, said: str, cell: str
) -> None:
    assert took_label(START, end, status, now) == said
    assert run_took_label(START, end, status, now) == cell
