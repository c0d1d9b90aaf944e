"""A background thread that hands the CPU back quickly to the agent's threads.

Linux's scheduler (EEVDF) lets a running thread finish its time slice (1.4 ms on a 2-vCPU
machine) before a thread that wakes up gets the CPU.  An agent wakes threads all the time
(LangGraph runs each step in a pool thread), so beside the embedded store's loader its
runs stalled by about a slice every few loads.  Asked for 0.1 ms slices (Linux 6.12 and
later), the loader keeps its fair share of the CPU while a waking thread waits at most
that long (``benchmarks/bench_loader.py`` compares the two beside one agent: a gain
where the agent is built for each run, none measured where it is built once).

Idle priority (``SCHED_IDLE``) did a little more, and was reverted: on a machine whose
every CPU is busy it starved the loader, and whoever waited for the loader (a reader, the
exit) waited as long.  Short slices change when the thread runs, not how much.
"""

from __future__ import annotations

import ctypes
import logging
import os
import platform
import sys

__all__ = ["SHORT_SLICE_NS", "set_time_slice"]

_logger = logging.getLogger(__name__)

SHORT_SLICE_NS = 100_000
"""The shortest slice the kernel grants a thread of the fair class."""

_SCHED_SETATTR = {"x86_64": 314, "aarch64": 274, "riscv64": 274}
"""The ``sched_setattr`` system call's number by machine (no C library wraps it)."""


class _SchedAttr(ctypes.Structure):
    """``struct sched_attr``, as the kernel's ``sched_setattr(2)`` reads it."""

    _fields_ = (
        ("size", ctypes.c_uint32),
        ("sched_policy", ctypes.c_uint32),
        ("sched_flags", ctypes.c_uint64),
        ("sched_nice", ctypes.c_int32),
        ("sched_priority", ctypes.c_uint32),
        ("sched_runtime", ctypes.c_uint64),
        ("sched_deadline", ctypes.c_uint64),
        ("sched_period", ctypes.c_uint64),
        ("sched_util_min", ctypes.c_uint32),
        ("sched_util_max", ctypes.c_uint32),
    )


def set_time_slice(slice_ns: int = SHORT_SLICE_NS, *, thread_id: int = 0) -> None:
    """Ask the kernel to run a thread of this process (``thread_id``, 0 for the calling
    one) in slices of ``slice_ns`` (0: the kernel's default), keeping its policy and nice
    value.  Where it cannot (not Linux, an unknown machine, a sandbox that refuses; a
    kernel before 6.12 ignores the request), the thread runs as before."""
    number = _SCHED_SETATTR.get(platform.machine()) if sys.platform == "linux" else None
    if number is None:
        return
    try:
        policy = os.sched_getscheduler(thread_id)
        if policy not in (os.SCHED_OTHER, os.SCHED_BATCH):  # a policy the user chose stays
            return
        attr = _SchedAttr(
            size=ctypes.sizeof(_SchedAttr),
            sched_policy=policy,
            sched_nice=os.getpriority(os.PRIO_PROCESS, thread_id),  # Linux: the thread's
            sched_runtime=slice_ns,
        )
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.syscall(number, thread_id, ctypes.byref(attr), 0) != 0:
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    except (OSError, AttributeError) as exc:  # a sandbox (seccomp) refuses, a libc lacks syscall
        _logger.debug("the kernel keeps the thread's time slice: %s", exc)
