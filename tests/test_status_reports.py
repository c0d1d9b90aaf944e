"""``status-<pid>.json``: an exporter's report lives as long as its process.

A process killed outright (SIGKILL: no shutdown, nothing written at the end) leaves its
report behind; ``otel-prov status`` must not show it as a running exporter, and whoever
reads or writes the reports next removes it.  The reports' pid may name another process
by then (pids are reused), so the process's start is compared too."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.cli import run_cli

# An exporter whose store never answers, so that it keeps running and reporting.
_EXPORTER = textwrap.dedent("""
    import sys, time
    from otel_prov.exporters import SparqlUpdateExporter
    exporter = SparqlUpdateExporter("http://127.0.0.1:9/update", spool_dir=sys.argv[1])
    time.sleep(600)
""")


def _start_exporter(spool: Path) -> subprocess.Popen[bytes]:
    child = subprocess.Popen([sys.executable, "-c", _EXPORTER, str(spool)])
    report = spool / f"status-{child.pid}.json"
    deadline = time.monotonic() + 30
    while not report.exists():
        assert child.poll() is None and time.monotonic() < deadline, "no report written"
        time.sleep(0.05)
    return child


def _reported_pids(spool: Path) -> list[int]:
    status = run_cli("status", "--spool-dir", str(spool), "--format", "json")
    assert status.returncode == 0, status.stderr
    report: dict[str, Any] = json.loads(status.stdout)
    return [exporter["pid"] for exporter in report["exporters"]]


def _kill(child: subprocess.Popen[bytes]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    child.wait()


def test_a_killed_exporter_is_not_reported_and_its_report_goes(tmp_path: Path) -> None:
    child = _start_exporter(tmp_path)
    try:
        assert _reported_pids(tmp_path) == [child.pid]
    finally:
        _kill(child)
    assert (tmp_path / f"status-{child.pid}.json").exists()  # nothing removed it at death
    assert _reported_pids(tmp_path) == []
    assert not list(tmp_path.glob("status-*"))


def test_the_next_exporter_removes_the_report_of_one_killed(tmp_path: Path) -> None:
    killed = _start_exporter(tmp_path)
    _kill(killed)
    successor = _start_exporter(tmp_path)
    try:
        assert sorted(p.name for p in tmp_path.glob("status-*")) == [f"status-{successor.pid}.json"]
    finally:
        _kill(successor)


def test_a_report_whose_pid_now_names_another_process_goes(tmp_path: Path) -> None:
    """The killed exporter's report, its pid given to a process that runs (this one, as
    after a reuse of the pid): the start recorded is not that process's."""
    child = _start_exporter(tmp_path)
    _kill(child)
    report = json.loads((tmp_path / f"status-{child.pid}.json").read_text())
    report["pid"] = os.getpid()
    reused = tmp_path / f"status-{os.getpid()}.json"
    reused.write_text(json.dumps(report))
    (tmp_path / f"status-{child.pid}.json").unlink()
    assert _reported_pids(tmp_path) == []
    assert not reused.exists()
