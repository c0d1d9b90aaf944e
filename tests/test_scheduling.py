"""Short time slices for a background thread: its policy and nice value stay its own."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

import pytest

from otel_prov._scheduling import SHORT_SLICE_NS, set_time_slice
from tests.time_slices import kernel_grants_slices, time_slice_ns

_slices = pytest.mark.skipif(
    not kernel_grants_slices(), reason="per-thread time slices: Linux 6.12+"
)


def _in_a_thread(setup: Callable[[], None]) -> tuple[int, int, int | None]:
    """Policy, nice value and slice of a fresh thread after ``setup`` and the call."""
    found: list[tuple[int, int, int | None]] = []

    def run() -> None:
        setup()
        set_time_slice()
        found.append(
            (
                os.sched_getscheduler(0),
                os.getpriority(os.PRIO_PROCESS, 0),
                time_slice_ns(threading.get_native_id()),
            )
        )

    thread = threading.Thread(target=run)
    thread.start()
    thread.join(10)
    (result,) = found
    return result


@_slices
def test_a_niced_thread_keeps_its_nice_value() -> None:
    policy, nice, slice_ns = _in_a_thread(lambda: os.setpriority(os.PRIO_PROCESS, 0, 5))
    assert (policy, nice, slice_ns) == (os.SCHED_OTHER, 5, SHORT_SLICE_NS)


@_slices
def test_a_batch_thread_stays_batch() -> None:
    def batch() -> None:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))

    policy, _, slice_ns = _in_a_thread(batch)
    assert (policy, slice_ns) == (os.SCHED_BATCH, SHORT_SLICE_NS)


@_slices
def test_an_idle_thread_is_left_as_it_is() -> None:
    def idle() -> None:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))

    policy, _, slice_ns = _in_a_thread(idle)
    assert policy == os.SCHED_IDLE
    assert slice_ns != SHORT_SLICE_NS


@_slices
def test_another_threads_slice_is_set_and_given_back_to_the_kernel() -> None:
    ready, done = threading.Event(), threading.Event()
    thread = threading.Thread(target=lambda: (ready.set(), done.wait(10)))
    thread.start()
    ready.wait(10)
    assert thread.native_id is not None
    default = time_slice_ns(thread.native_id)
    set_time_slice(thread_id=thread.native_id)
    assert time_slice_ns(thread.native_id) == SHORT_SLICE_NS
    set_time_slice(0, thread_id=thread.native_id)
    assert time_slice_ns(thread.native_id) == default != SHORT_SLICE_NS
    done.set()
    thread.join(10)
