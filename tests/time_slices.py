"""What the kernel says of a thread's time slice (``otel_prov._scheduling``)."""

from __future__ import annotations

import platform
import re
import sys
import threading
from pathlib import Path

from otel_prov._scheduling import _SCHED_SETATTR


def time_slice_ns(thread_id: int) -> int | None:
    """The thread's time slice as the kernel reports it (``None``: it does not)."""
    try:
        text = Path(f"/proc/self/task/{thread_id}/sched").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name.strip() == "se.slice":
            return int(value)
    return None


def kernel_grants_slices() -> bool:
    """Linux 6.12 and later take a thread's own time slice from ``sched_setattr``."""
    release = tuple(int(part) for part in re.findall(r"\d+", platform.release())[:2])
    return (
        sys.platform == "linux"
        and release >= (6, 12)
        and platform.machine() in _SCHED_SETATTR
        and time_slice_ns(threading.get_native_id()) is not None
    )
