"""The exporters' reports in their spool directory (``status-<pid>.json``), which
``otel-prov status`` reads: kept only as long as the process that writes one runs.

A process killed outright (SIGKILL, the OOM killer, a power cut) writes nothing at the
end, so whoever reads or writes the reports next removes those of processes that are
gone.  A pid alone cannot say so: pids are reused, so a report records its process's
start as well (Linux: the boot, the pid namespace and the start time in clock ticks,
from ``/proc``), and a pid that now names a process started at another time is gone too.
A report written in another pid namespace (a container sharing the spool on a volume)
names a pid this process cannot see, and is left to its own namespace's readers.  Where
there is no ``/proc`` the pid alone is asked after.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["live_reports", "write_report"]

_logger = logging.getLogger(__name__)

_PREFIX = "status-"
_STARTED = "process_started"


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None


def _start_ticks(pid: int) -> str | None:
    """Field 22 of ``/proc/<pid>/stat``: when the process started, in clock ticks since
    boot.  The fields after the command name (in parentheses, which may hold anything)."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None


def _where() -> tuple[str, str] | None:
    """This boot and pid namespace; None where ``/proc`` does not say."""
    boot = _read("/proc/sys/kernel/random/boot_id")
    try:
        namespace = str(Path("/proc/self/ns/pid").readlink())
    except OSError:
        return None
    return (boot, namespace) if boot else None


def _process_started(pid: int) -> str | None:
    where, ticks = _where(), _start_ticks(pid)
    return f"{where[0]}/{where[1]}/{ticks}" if where and ticks else None


def _pid_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's
    return True


def _gone(pid: int, started: object) -> bool:
    """Whether the process that wrote a report, with ``pid`` and ``started`` (what
    :func:`_process_started` said then), surely no longer runs."""
    here = _where()
    if not isinstance(started, str) or here is None:
        return not _pid_exists(pid)
    boot, namespace, _ = [*started.split("/", 2), "", ""][:3]
    if boot != here[0]:
        return True  # written before the machine restarted
    if namespace != here[1]:
        return False  # another pid namespace: its pids are not ours to look up
    return _process_started(pid) != started  # None once the pid is free


def write_report(directory: Path, report: dict[str, Any]) -> None:
    """Write this process's report (atomically: a reader never sees half of one), with
    what tells this process from a later one given its pid."""
    pid = os.getpid()
    path = directory / f"{_PREFIX}{pid}.json"
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps({**report, _STARTED: _process_started(pid)}, indent=2))
    temporary.replace(path)


def live_reports(directory: Path) -> list[dict[str, Any]]:
    """The reports of exporters whose process still runs, by file name; those of
    processes gone are removed, with the temporary file a write cut short left (an
    exporter calls this before its first report, for the spool it takes over may hold
    reports of processes killed before it).  A file that cannot be read is skipped (one
    being replaced may vanish under us), one with no pid left alone: no report of ours."""
    live = []
    for path in sorted(directory.glob(f"{_PREFIX}*.json")):
        try:
            report = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        pid = report.get("pid") if isinstance(report, dict) else None
        if type(pid) is not int or pid <= 0:
            continue
        if not _gone(pid, report.get(_STARTED)):
            live.append(report)
            continue
        try:
            path.unlink(missing_ok=True)
            path.with_suffix(".tmp").unlink(missing_ok=True)
        except OSError:
            _logger.debug("cannot remove %s, the report of a process gone", path, exc_info=True)
    return live
