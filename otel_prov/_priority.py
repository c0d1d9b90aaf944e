"""Background threads that take only the CPU the agent leaves.

On a 2-vCPU machine, the embedded store loading beside a running agent preempted the
agent's own threads (LangGraph hands each step to a pool thread) about once every two
runs, and each preemption costs a time slice: the agent's mean run grew by a quarter
while its median hardly moved.  At ``SCHED_IDLE`` the same load preempted it a fifth as
often (``bench_frameworks``).  Such a thread still gets the CPU whenever the agent waits,
as agents mostly do (for their model), and what it leaves undone stays durable on disk.
"""

from __future__ import annotations

import logging
import os

__all__ = ["run_at_idle_priority"]

_logger = logging.getLogger(__name__)


def run_at_idle_priority() -> None:
    """Lower the calling thread (Linux: the policy is per thread, and lowering needs no
    privilege) to ``SCHED_IDLE``; elsewhere leave it as it is."""
    policy = getattr(os, "SCHED_IDLE", None)
    if policy is None:
        return
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))
    except OSError:  # a sandbox may forbid it: the thread only runs sooner
        _logger.debug("cannot lower a background thread to SCHED_IDLE", exc_info=True)
