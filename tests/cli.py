"""The ``otel-prov`` command as a user runs it: a separate process, output captured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["CLI", "run_cli", "show", "shown_view"]

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


def write_demo_store(directory: Path) -> Path:
    """An embedded store in ``directory`` holding the demo agent's run, as ``otel-prov
    demo`` writes it: what the readers' tests read."""
    store = directory / "store"
    result = run_cli("demo", "--store", str(store))
    assert result.returncode == 0, result.stderr
    return store


def show(store: Path, ident: str, fmt: str = "text") -> str:
    """``otel-prov show IDENT`` of the embedded store at ``store``; it must succeed."""
    result = run_cli("show", ident, "--store", str(store), "--format", fmt)
    assert result.returncode == 0, result.stderr
    return result.stdout


def shown_view(store: Path, ident: str) -> dict[str, Any]:
    """The one session ``show --format json`` prints for ``ident``."""
    (view,) = json.loads(show(store, ident, "json"))
    assert isinstance(view, dict)
    return view
