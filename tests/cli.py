"""The ``otel-prov`` command as a user runs it: a separate process, output captured."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["CLI", "run_cli"]

CLI = [sys.executable, "-m", "otel_prov"]


def run_cli(
    *args: str, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``otel-prov ARGS``; the exit code is the caller's to check."""
    return subprocess.run(
        [*CLI, *args],
        capture_output=True,
        text=True,
        input=stdin,
        cwd=cwd,
        timeout=120,
        check=False,
    )
