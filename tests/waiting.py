"""Waiting for a condition instead of sleeping a fixed time.

A fixed sleep is either too short on a loaded machine (CI shares two cores with the
servers it started) or wasted on an idle one; a condition polled to a generous deadline
is neither.  The deadline only bounds a failing test: a passing one returns as soon as
the condition holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["until"]

DEADLINE_S = 60.0
"""Generous on purpose: reached only when the condition will never hold."""


def until(condition: Callable[[], object], what: str, *, timeout: float = DEADLINE_S) -> None:
    """Return once ``condition()`` is true; fail the test with ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"after {timeout:g} s, still not: {what}")
        time.sleep(0.01)
