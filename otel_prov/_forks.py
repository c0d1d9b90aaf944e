"""After ``os.fork()``, the child starts clean: the one rule every worker of ours follows.

A forked child has the parent's memory and none of its other threads: a worker it
inherited is gone, a lock may be held by a thread that does not exist, a file or database
handle is shared with the parent.  As the SDK's ``BatchSpanProcessor`` does, nothing is
done before the fork or in the parent; the child drops what it inherited without using
it (never closing what the parent still writes through) and builds its own state and
worker.  One ``after_in_child`` hook runs every registered reset, oldest first, so an
exporter is ready before the processor built on it starts its worker.
"""

from __future__ import annotations

import logging
import os
import weakref
from collections.abc import Callable

__all__ = ["reset_in_child"]

_logger = logging.getLogger(__name__)

_resets: list[weakref.WeakMethod[Callable[[], None]]] = []


def _reset_all() -> None:
    alive = [method for method in _resets if method() is not None]
    _resets[:] = alive
    for method in alive:
        reset = method()
        try:
            if reset is not None:
                reset()
        except Exception:  # one failed reset leaves the others to run
            _logger.exception("cannot reset %r in the forked process", reset)


def reset_in_child(reset: Callable[[], None]) -> None:
    """Run ``reset`` (a bound method, held weakly: the object may go away) in every child
    this process forks from now on, after the resets registered before it."""
    _resets[:] = [method for method in _resets if method() is not None]
    _resets.append(weakref.WeakMethod(reset))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_all)
