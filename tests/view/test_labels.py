"""How a duration reads, in the terminal and on the web pages alike."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from otel_prov.view._labels import duration_label

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
